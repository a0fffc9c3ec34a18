//! One structured error type for the whole library.
//!
//! Variants carry the facts a caller needs to act (which row, which column, which
//! matrix failed at which pivot after how much jitter); they are `#[non_exhaustive]`
//! so new failure modes can be added without breaking `match` arms downstream.

mod memory;
mod table;
pub use crate::vocabulary::TableOption;
pub use memory::{shown_bytes, LimitSource};
pub(crate) use table::thousands_separated;
pub use table::TableError;

use thiserror::Error;

/// Convenient alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in pacgp, as matchable data.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path that failed.
        path: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The path that failed.
        path: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A CSV file is malformed (ragged row, unparsable number, no header ...).
    #[error("{path}: line {line}: {message}")]
    Csv {
        /// The file.
        path: String,
        /// 1-based line number in the file (the header is line 1).
        line: u64,
        /// What is wrong there.
        message: String,
    },
    /// A table (a CSV file or Python's cells) that cannot be read as asked, or a reading
    /// option that is wrong; front ends word the option ([`TableError::message`]).
    #[error("{0}")]
    Table(#[from] TableError),
    /// A NaN or infinite number in an input array.
    #[error("non-finite value in {what} at row {row}, column {col}")]
    NonFinite {
        /// Which array.
        what: &'static str,
        /// Row index (0-based).
        row: usize,
        /// Column index (0-based).
        col: usize,
    },
    /// Arrays whose shapes do not agree.
    #[error("shape mismatch in {what}: expected {expected}, found {found}")]
    ShapeMismatch {
        /// Which quantity.
        what: &'static str,
        /// What was expected, e.g. "3 columns".
        expected: String,
        /// What was given.
        found: String,
    },
    /// No data where some is needed.
    #[error("{what} is empty")]
    Empty {
        /// Which quantity.
        what: &'static str,
    },
    /// A named target or column does not exist.
    #[error("no column named '{name}' (columns: {available})")]
    ColumnNotFound {
        /// The requested name.
        name: String,
        /// The header, comma separated.
        available: String,
    },
    /// Classification labels that are not exactly two distinct values.
    #[error(
        "binary classification needs exactly two distinct labels, found {n_classes}: {examples}"
    )]
    NotBinary {
        /// Number of distinct labels seen.
        n_classes: usize,
        /// Up to five of them, comma separated.
        examples: String,
    },
    /// A column with zero variance cannot be standardised. (The data layer no longer
    /// raises it: constant inputs are kept unscaled, a constant target is
    /// [`Error::ConstantTarget`].)
    #[error("column '{column}' is constant in the training data and cannot be standardised")]
    ConstantColumn {
        /// Column name or index.
        column: String,
    },
    /// A header naming the same column twice: reading by name would silently use the first.
    #[error("{path}: column name '{name}' appears twice in the header (columns {first} and {second}); rename one")]
    DuplicateColumn {
        /// The file.
        path: String,
        /// The repeated name.
        name: String,
        /// 1-based position of its first occurrence.
        first: usize,
        /// 1-based position of its second occurrence.
        second: usize,
    },
    /// A data file with no data rows to learn from.
    #[error("{path}: no data rows: {reason}")]
    NoDataRows {
        /// The file.
        path: String,
        /// Why, e.g. "the file has only a header line".
        reason: &'static str,
    },
    /// A regression target with one value: there is nothing to learn or standardise.
    #[error("the target column '{column}' is constant ({}) in the training data: there is nothing to learn", short_number(*.value))]
    ConstantTarget {
        /// The target's column name.
        column: String,
        /// Its only value.
        value: f64,
    },
    /// A number that cannot be represented in f64 once standardised (or unscaled back).
    #[error("{what} = {value:e} cannot be represented after standardisation: {reason}")]
    Unrepresentable {
        /// Which value, e.g. "column 'a', row 3".
        what: String,
        /// The value in the file's units.
        value: f64,
        /// Why, and what to do.
        reason: String,
    },
    /// A matrix that must be symmetric positive definite is not, even after jitter.
    #[error(
        "{what} is not positive definite (pivot {pivot}) even after adding jitter {jitter_tried:e}"
    )]
    NotPositiveDefinite {
        /// Which matrix, e.g. "K + σ²I".
        what: &'static str,
        /// The pivot where the factorisation failed.
        pivot: usize,
        /// The largest diagonal jitter tried.
        jitter_tried: f64,
    },
    /// A parameter outside its valid range (ε, δ, κ, M, a kernel value ...).
    #[error("invalid {name} = {}: {reason}", short_number(*.value))]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// Why it is rejected, e.g. "must lie in (0, 1)".
        reason: &'static str,
    },
    /// A kernel, likelihood or method specification that cannot be parsed.
    #[error("invalid specification '{spec}': {reason}")]
    InvalidSpec {
        /// The text given.
        spec: String,
        /// What is wrong.
        reason: String,
    },
    /// A model file that cannot be read back.
    #[error("model file {path}: {message}")]
    ModelFile {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An objective or inference routine produced a non-finite value.
    #[error("numerical failure in {what}: {message}")]
    Numerical {
        /// Which computation.
        what: &'static str,
        /// Details.
        message: String,
    },
    /// A method whose computation broke down on these inputs (a non-finite value from finite
    /// data) where the user can do something about it: which computation, the values that
    /// broke (in short scientific form), and what to try. Unlike [`Error::Numerical`] it is
    /// the user's to act on (the command line's exit status 2).
    #[error("numerical failure in {what}: {message}; {advice}")]
    NumericalBreakdown {
        /// Which computation.
        what: &'static str,
        /// The values that broke, each as `{:.4e}`.
        message: String,
        /// What to try instead.
        advice: &'static str,
    },
    /// A fit that needs more memory than it may use, refused before it allocates
    /// (`cost::check_fits`): what it needs, what there is, and what a sparse method needs.
    #[error(
        "{method} on {n} rows needs about {} ({held}); {}: {lighter}",
        shown_bytes(*.needed),
        limit_text(*.limit, *.limit_source)
    )]
    NotEnoughMemory {
        /// The method.
        method: String,
        /// Training rows.
        n: usize,
        /// Estimated peak bytes.
        needed: u64,
        /// The largest arrays it holds at once, e.g. "5 matrices of 43152 × 43152, 14.9 GB each".
        held: String,
        /// Bytes it may use.
        limit: u64,
        /// Where that limit comes from.
        limit_source: LimitSource,
        /// What fits instead, as a clause.
        lighter: String,
    },
    /// An option of a fit that is wrong (which option, what is wrong); front ends word it in
    /// their own terms ([`crate::vocabulary::SpecError::message`]).
    #[error("{0}")]
    Spec(#[from] crate::vocabulary::SpecError),
    /// A model file whose stored parts are not what its fit spec allows (a price edited, θ off
    /// the spec's grid, a split record that does not match): it is not certified.
    #[error("the model file does not match its fit spec ({part}): {reason}")]
    ModelMismatch {
        /// The part of the file.
        part: String,
        /// What does not match.
        reason: String,
    },
    /// An operation the model does not support (e.g. regression metrics on a classifier).
    #[error("{0}")]
    Unsupported(String),
    /// A leave-one-out estimate was asked of a model that has none (each front end adds how
    /// to certify without one).
    #[error("{model} has no leave-one-out estimate{why}; certify it without one")]
    NoLeaveOneOut {
        /// The model.
        model: &'static str,
        /// Why, as a clause (may be empty).
        why: &'static str,
    },
    /// Catoni's λ asked of `certify` that the fit did not fix: a λ picked after the bound is
    /// seen is a choice made from the data that nothing charges for (docs/math.md §9.1), so
    /// `certify` takes only the λ the fit recorded (a classifier split prior's, fixed on part A).
    #[error("{}", catoni_text(*.lambda, *.trained, "bound catoni with prior split"))]
    CatoniNotFromFit {
        /// The λ asked for.
        lambda: f64,
        /// The λ the fit fixed, if it fixed one.
        trained: Option<f64>,
    },
    /// A certificate was asked for on data that is not the model's training sample.
    #[error(
        "this data is not the model's training sample ({reason}): a PAC-Bayes certificate holds only on the sample the model was fitted on"
    )]
    NotTrainingSample {
        /// What differs.
        reason: String,
    },
    /// A data-sized buffer the allocator cannot give (or whose byte count overflows, or is
    /// above the memory available now): refused as an error where the allocator would abort
    /// ([`crate::memory::try_zeros`]).
    #[error(
        "cannot allocate {what} ({rows} × {cols} f64, {}): not enough memory; a sparse method or fewer rows (of test points: fewer at a time) needs less",
        bytes.map_or_else(|| "more than 2⁶⁴ bytes".to_string(), shown_bytes)
    )]
    OutOfMemory {
        /// What the buffer is for.
        what: &'static str,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// Its bytes (`None`: more than 64 bits count).
        bytes: Option<u64>,
    },
    /// A worker-thread count that cannot be honoured ([`crate::threads::resolve`]).
    #[error("cannot run {requested} worker threads on {cores} available cores: {reason}")]
    Threads {
        /// The count asked for (negative: all cores but `|requested| − 1`).
        requested: i64,
        /// Cores this process may use.
        cores: usize,
        /// Why it is refused.
        reason: String,
    },
}

/// Why `certify` refuses Catoni's λ = `lambda` (`fit_options`: how a fit fixes one, worded by
/// the front end).
fn catoni_text(lambda: f64, trained: Option<f64>, fit_options: &str) -> String {
    let fitted = match trained {
        Some(t) => format!("the fit fixed λ = {t}, which certify uses when no confidence term is given"),
        None => format!("this model's fit fixed no λ; a classifier fitted with {fit_options} fixes one on part A of the sample"),
    };
    format!("Catoni's λ = {lambda} was not fixed by the fit: a λ chosen after the bound is seen is a choice made from the data that the certificate does not pay for, so the bound would not hold; {fitted}")
}

/// A number as the user would write it when that is short (`-1`, `0.05`, `1e-12` as
/// `0.000000000001` is not: at most 12 characters), else in short scientific form (`1.0000e300`,
/// not 301 digits): an error message never carries a number hundreds of digits long.
pub(crate) fn short_number(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 12 {
        plain
    } else {
        format!("{v:.4e}")
    }
}

/// "this machine has 22.5 GB available" or "the memory limit is 1.05 MB".
fn limit_text(limit: u64, source: LimitSource) -> String {
    let bytes = shown_bytes(limit);
    match source {
        LimitSource::Available => format!("this machine has {bytes} available"),
        LimitSource::Given => format!("the memory limit is {bytes}"),
    }
}

/// `Ok` when `value` lies strictly inside (0, 1), as a confidence δ, a level or a fraction
/// must; otherwise the [`Error::InvalidParameter`] that names it (NaN is outside too).
pub(crate) fn check_open_unit(name: &'static str, value: f64) -> Result<()> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            name,
            value,
            reason: "must lie in (0, 1)",
        })
    }
}

impl Error {
    /// The message in a front end's words: an option of the fit spec or of reading a table is
    /// named as its users type it (`--missing` on the command line, `missing` in Python).
    pub fn message(&self, w: &dyn crate::vocabulary::Wording) -> String {
        match self {
            Error::Spec(e) => e.message(w),
            Error::Table(e) => e.message(w),
            Error::NoLeaveOneOut { .. } => format!("{self} ({})", w.without_loo()),
            Error::CatoniNotFromFit { lambda, trained } => {
                use crate::vocabulary::{MethodName, SpecOption};
                let how = format!(
                    "{} catoni {} split ({} or {})",
                    w.option(SpecOption::Bound),
                    w.option(SpecOption::Prior),
                    w.method(MethodName::Laplace),
                    w.method(MethodName::PacGpc)
                );
                catoni_text(*lambda, *trained, &how)
            }
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Short values read as typed; a huge or tiny one is in short scientific form, so no
    /// message of a parameter error is hundreds of digits long.
    #[test]
    fn numbers_in_messages_stay_short() {
        assert_eq!(short_number(-1.0), "-1");
        assert_eq!(short_number(0.05), "0.05");
        assert_eq!(short_number(1e300), "1.0000e300");
        assert_eq!(short_number(-3.0066488020142674e219), "-3.0066e219");
        assert_eq!(short_number(1e-12), "1.0000e-12");
        assert_eq!(short_number(f64::NAN), "NaN");
        let e = Error::InvalidParameter {
            name: "delta",
            value: 2.5e250,
            reason: "must lie in (0, 1)",
        };
        assert_eq!(
            e.to_string(),
            "invalid delta = 2.5000e250: must lie in (0, 1)"
        );
    }
}
