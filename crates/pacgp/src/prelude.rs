//! The types and functions a user needs to fit, predict and certify from Rust, in one import:
//!
//! ```
//! use pacgp::prelude::*;
//! ```
//!
//! The path from a table to a certificate: a [`Dataset`] (built in code with
//! [`Dataset::new`], or read with [`load_csv`] / [`load_csv_classification`]), a
//! [`CheckedFitSpec`] from [`FitOptions::check`] with a [`MethodName`], [`fit()`] to a
//! [`FittedModel`], then [`FittedModel::predict_regression`] /
//! [`FittedModel::predict_classification`], [`FittedModel::evaluate`] and
//! [`FittedModel::certify`] (a [`CertificateReport`] around each [`Certificate`]). The crate
//! docs ([`crate`]) walk through it; everything else stays under its module
//! ([`crate::kernel`], [`crate::bounds`], ...).

// Inputs: matrices and data sets.

/// A dense f64 matrix (faer's), one point per row: the inputs of a [`Dataset`].
pub use faer::Mat;
/// A borrowed view of a [`Mat`] (`mat.as_ref()`): what the predict methods take.
pub use faer::MatRef;

/// Read a numeric CSV (`.csv.gz` too) for regression.
pub use crate::data::load_csv;
/// Read a CSV for binary classification: any two labels become −1 / +1.
pub use crate::data::load_csv_classification;
/// A seeded train/test split of row indices.
pub use crate::data::train_test_split;
/// The K classes of a multi-class classifier and their codes `0..K`.
pub use crate::data::ClassLabels;
/// How a CSV file is read (target column, dropped columns, missing values, categories).
pub use crate::data::CsvOptions;
/// Inputs and targets, validated once (shapes, finite values).
pub use crate::data::Dataset;
/// The two labels of a binary classifier and their ±1 codes.
pub use crate::data::LabelMap;
/// The labels a training sample comes with: [`fit()`]'s third argument (`None` converts).
pub use crate::data::TrainingLabels;

// What a fit is.

/// A kernel (covariance function), θ = ln(value); [`Kernel::from_spec`] reads `se-ard`,
/// `matern52+linear`, ...
pub use crate::kernel::Kernel;
/// A fit spec that passed its checks: the only kind [`fit()`] takes.
pub use crate::spec::CheckedFitSpec;
/// The options of a fit as a user gives them; [`FitOptions::check`] makes the spec.
pub use crate::spec::FitOptions;
/// The methods by name (`gpr`, `pac-gp`, `laplace`, ...; `"pac-gp".parse()`).
pub use crate::spec::MethodName;
/// What is wrong with an option: which one, for which method, and the allowed values.
pub use crate::spec::SpecError;

// Fitting and using a model.

/// Fit a checked spec on a data set: the one entry point.
pub use crate::fit::fit;
/// A certificate with its leave-one-out estimates ([`FittedModel::certify`]).
pub use crate::model::CertificateReport;
/// Settings of [`FittedModel::certify`] (ε, δ, Gibbs predictor, leave-one-out).
pub use crate::model::CertifyOptions;
/// Test-set metrics ([`FittedModel::evaluate`]).
pub use crate::model::Evaluation;
/// A fitted model: predict, evaluate, certify, save and load.
pub use crate::model::FittedModel;
/// A regressor's predictive means and variances in target units.
pub use crate::model::RegressionPrediction;
/// The shared Gaussian posterior every model ends as.
pub use crate::posterior::GaussianPosterior;
/// Posterior means and latent variances at a set of inputs.
pub use crate::posterior::Marginals;

// Certificates.

/// The confidence term of a bound (Maurer's, Seeger's, the sharp one, Catoni's).
pub use crate::bounds::ConfidenceTerm;
/// A PAC-Bayes certificate: the bound, the empirical risk, KL, penalty, δ and N.
pub use crate::certificate::Certificate;
/// Which stochastic classifier a certificate bounds (latent or noisy).
pub use crate::certificate::GibbsPredictor;
/// The upper kl-inverse `kl⁻¹(q, c)`: the bound on a risk from its empirical value and
/// complexity.
pub use crate::special::kl_inverse;

// Errors.

/// The library's one error type, structured and matchable.
pub use crate::error::Error;
/// `Result<T, Error>`.
pub use crate::error::Result;
