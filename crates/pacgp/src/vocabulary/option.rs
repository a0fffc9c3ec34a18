//! The options by their library names: those of a fit ([`SpecOption`]) and those of reading a
//! table ([`TableOption`]); front ends map them to their flags or keyword names.

use serde::{Deserialize, Serialize};

/// The options, by their library names (front ends map them to flags or keyword names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum SpecOption {
    Method,
    Kernel,
    Epsilon,
    Delta,
    Seed,
    NoiseInit,
    Restarts,
    Snap,
    Inducing,
    InducingInit,
    Pretrain,
    MaxIter,
    BatchSize,
    Likelihood,
    Select,
    ActiveSet,
    Kappa,
    InputNoise,
    Slack,
    C,
    Lengthscale,
    Bias,
    Solver,
    Prior,
    HyperPrior,
    Xi,
    Bound,
    PriorScale,
    PriorKernel,
    BothDirections,
    Predictor,
    Intervals,
    IntervalScore,
    MultiClass,
    CertifyHoldout,
    Noise,
    Alpha,
    KernelParams,
    NormalizeY,
    SharedKernel,
}

impl SpecOption {
    /// Every option, for front ends' name tables and their tests.
    pub const ALL: [SpecOption; 40] = [
        SpecOption::Method,
        SpecOption::Kernel,
        SpecOption::Epsilon,
        SpecOption::Delta,
        SpecOption::Seed,
        SpecOption::NoiseInit,
        SpecOption::Restarts,
        SpecOption::Snap,
        SpecOption::Inducing,
        SpecOption::InducingInit,
        SpecOption::Pretrain,
        SpecOption::MaxIter,
        SpecOption::BatchSize,
        SpecOption::Likelihood,
        SpecOption::Select,
        SpecOption::ActiveSet,
        SpecOption::Kappa,
        SpecOption::InputNoise,
        SpecOption::Slack,
        SpecOption::C,
        SpecOption::Lengthscale,
        SpecOption::Bias,
        SpecOption::Solver,
        SpecOption::Prior,
        SpecOption::HyperPrior,
        SpecOption::Xi,
        SpecOption::Bound,
        SpecOption::PriorScale,
        SpecOption::PriorKernel,
        SpecOption::BothDirections,
        SpecOption::Predictor,
        SpecOption::Intervals,
        SpecOption::IntervalScore,
        SpecOption::MultiClass,
        SpecOption::CertifyHoldout,
        SpecOption::Noise,
        SpecOption::Alpha,
        SpecOption::KernelParams,
        SpecOption::NormalizeY,
        SpecOption::SharedKernel,
    ];

    /// The library's name of the option (snake case), used where no front end words it.
    pub fn name(self) -> &'static str {
        use SpecOption as O;
        match self {
            O::Method => "method",
            O::Kernel => "kernel",
            O::Epsilon => "epsilon",
            O::Delta => "delta",
            O::Seed => "seed",
            O::NoiseInit => "noise_init",
            O::Restarts => "restarts",
            O::Snap => "snap",
            O::Inducing => "inducing",
            O::InducingInit => "inducing_init",
            O::Pretrain => "pretrain",
            O::MaxIter => "max_iter",
            O::BatchSize => "batch_size",
            O::Likelihood => "likelihood",
            O::Select => "select",
            O::ActiveSet => "active_set",
            O::Kappa => "kappa",
            O::InputNoise => "input_noise",
            O::Slack => "slack",
            O::C => "c",
            O::Lengthscale => "lengthscale",
            O::Bias => "bias",
            O::Solver => "solver",
            O::Prior => "prior",
            O::HyperPrior => "hyper_prior",
            O::Xi => "xi",
            O::Bound => "bound",
            O::PriorScale => "prior_scale",
            O::PriorKernel => "prior_kernel",
            O::BothDirections => "both_directions",
            O::Predictor => "predictor",
            O::Intervals => "intervals",
            O::IntervalScore => "interval_score",
            O::MultiClass => "multiclass",
            O::CertifyHoldout => "certify_holdout",
            O::Noise => "noise",
            O::Alpha => "alpha",
            O::KernelParams => "kernel_params",
            O::NormalizeY => "normalize_y",
            O::SharedKernel => "shared_kernel",
        }
    }
}

/// The cells read as a missing value, as R, pandas and UCI files write one: empty, `?`, `NA`,
/// `N/A`, `na`, `NaN`, `nan`.
pub const MISSING_CELLS: [&str; 7] = ["", "?", "NA", "N/A", "na", "NaN", "nan"];

/// The cells read as a missing value: [`MISSING_CELLS`]
/// (empty, `?`, `NA`, `N/A`, `na`, `NaN`, `nan`) unless the `na_values` reading option names
/// others — e.g. only the empty cell, where `NA` is a value (a class, a country code).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MissingCells(Vec<String>);

impl Default for MissingCells {
    fn default() -> Self {
        Self(MISSING_CELLS.iter().map(|c| c.to_string()).collect())
    }
}

impl MissingCells {
    /// These cells (as written, compared exactly) and no others.
    pub fn new(cells: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let mut out: Vec<String> = Vec::new();
        for c in cells.into_iter().map(Into::into) {
            if !out.contains(&c) {
                out.push(c);
            }
        }
        Self(out)
    }

    /// Whether `cell` is read as a missing value.
    pub fn contains(&self, cell: &str) -> bool {
        self.0.iter().any(|c| c == cell)
    }

    /// Whether these are the default cells (then a model file does not store them).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The cells as a message lists them: `empty, ?, NA`, or `none`.
    pub fn shown(&self) -> String {
        if self.0.is_empty() {
            return "none".into();
        }
        let cells: Vec<&str> = self
            .0
            .iter()
            .map(|c| if c.is_empty() { "empty" } else { c.as_str() })
            .collect();
        cells.join(", ")
    }

    /// The cells without `cell`, comma separated as the `na_values` option takes them.
    pub fn written_without(&self, cell: &str) -> String {
        let rest: Vec<&str> = self
            .0
            .iter()
            .filter(|c| *c != cell)
            .map(String::as_str)
            .collect();
        rest.join(",")
    }
}

/// [`MISSING_CELLS`] as a message lists them: `empty, ?, NA, N/A, na, NaN, nan`.
pub fn shown_missing_cells() -> String {
    MISSING_CELLS
        .iter()
        .map(|c| if c.is_empty() { "empty" } else { c })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The options of reading a table (a CSV file, or the cells Python hands over), by the
/// library's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableOption {
    /// Which column is the target.
    Target,
    /// Columns to ignore.
    Drop,
    /// What a missing cell means ([`MissingPolicy`](crate::data::MissingPolicy)).
    Missing,
    /// `y`/`n` read as ±1 in numeric columns.
    YesNo,
    /// Which input columns are categorical ([`Categorical`](crate::data::Categorical)).
    Categorical,
    /// What a category unseen in training becomes ([`UnknownCategory`](crate::data::UnknownCategory)).
    UnknownCategory,
    /// The file has no header line.
    NoHeader,
    /// The label coded +1.
    Positive,
    /// The most distinct values a categorical column may have to be one-hot coded.
    MaxCategories,
    /// The cells read as a missing value ([`MissingCells`](crate::data::MissingCells)).
    NaValues,
}

impl TableOption {
    /// Every option, for front ends' name tables and their tests.
    pub const ALL: [TableOption; 10] = [
        TableOption::Target,
        TableOption::Drop,
        TableOption::Missing,
        TableOption::YesNo,
        TableOption::Categorical,
        TableOption::UnknownCategory,
        TableOption::NoHeader,
        TableOption::Positive,
        TableOption::MaxCategories,
        TableOption::NaValues,
    ];

    /// The library's name of the option (snake case).
    pub fn name(self) -> &'static str {
        match self {
            TableOption::Target => "target",
            TableOption::Drop => "drop",
            TableOption::Missing => "missing",
            TableOption::YesNo => "yes_no",
            TableOption::Categorical => "categorical",
            TableOption::UnknownCategory => "unknown_category",
            TableOption::NoHeader => "no_header",
            TableOption::Positive => "positive",
            TableOption::MaxCategories => "max_categories",
            TableOption::NaValues => "na_values",
        }
    }
}
