//! One structured error type for the whole library.
//!
//! Variants carry the facts a caller needs to act (which row, which column, which
//! matrix failed at which pivot after how much jitter); they are `#[non_exhaustive]`
//! so new failure modes can be added without breaking `match` arms downstream.

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
    /// A missing value (`?`, empty, `NA`) where none is allowed.
    #[error(
        "missing value at line {line}, column '{column}' (choose what missing cells mean when fitting: --missing drop, zero or mean)"
    )]
    MissingValue {
        /// 1-based line number in the file.
        line: u64,
        /// Column name.
        column: String,
    },
    /// A missing target, which no policy fills in.
    #[error(
        "missing target at line {line}, column '{column}': a target cannot be filled in (leave such rows out with --missing drop)"
    )]
    MissingTarget {
        /// 1-based line number in the file.
        line: u64,
        /// Column name.
        column: String,
    },
    /// Input columns holding text where numbers were expected.
    #[error(
        "{path}: text in {found}: encode text columns as categories with --categorical auto, or leave them out with --drop {names}"
    )]
    TextColumns {
        /// The file.
        path: String,
        /// Each column with its first text cell and line.
        found: String,
        /// The columns' names, comma separated.
        names: String,
    },
    /// A category the training data did not have.
    #[error(
        "{path}: line {line}: column '{column}' has the category '{value}', which the training data did not have (known: {known}); --unknown-category ignore codes it as all zeros"
    )]
    UnknownCategory {
        /// The file.
        path: String,
        /// 1-based line number in the file.
        line: u64,
        /// Column name.
        column: String,
        /// The unseen value.
        value: String,
        /// The training categories, comma separated.
        known: String,
    },
    /// A first line of numbers where column names were expected.
    #[error(
        "{path}: the first line ({first}) is all numbers, so it looks like data, not column names: read the file with --no-header (columns x1…xD and y, the last), or add a header line"
    )]
    HeaderLooksLikeData {
        /// The file.
        path: String,
        /// The first line, shortened.
        first: String,
    },
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
    /// A column asked to be both the target and ignored.
    #[error("column '{column}' is the target and cannot also be dropped (choose another target with --target, or leave it out of --drop)")]
    DroppedTarget {
        /// The column name.
        column: String,
    },
    /// A regression target with one value: there is nothing to learn or standardise.
    #[error("the target column '{column}' is constant ({value}) in the training data: there is nothing to learn")]
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
    #[error("invalid {name} = {value}: {reason}")]
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
    /// An option of a fit that is wrong (which option, what is wrong); front ends word it in
    /// their own terms ([`crate::spec::SpecError::message`]).
    #[error("{0}")]
    Spec(#[from] crate::spec::SpecError),
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
    /// A certificate was asked for on data that is not the model's training sample.
    #[error(
        "this data is not the model's training sample ({reason}): a PAC-Bayes certificate holds only on the sample the model was fitted on"
    )]
    NotTrainingSample {
        /// What differs.
        reason: String,
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
