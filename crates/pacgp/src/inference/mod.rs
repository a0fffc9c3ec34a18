//! Approximate inference for binary GP classification. Every method returns the shared
//! [`crate::posterior::GaussianPosterior`] (site form over the training inputs) plus a
//! [`ConvergenceReport`], so prediction, `KL(Q‖P)`, Gibbs error and the PAC-Bayes certificate
//! come for free. [`softmax`] is the multi-class Laplace approximation, whose posterior
//! couples the classes.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::posterior::GaussianPosterior;

pub mod ep;
pub mod evidence;
pub mod ivm;
pub mod laplace;
pub mod mean_field;
pub mod softmax;
pub mod sogp;

/// How an iterative inference method ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConvergenceStatus {
    /// The stopping tolerance was met.
    Converged,
    /// The iteration budget ran out first.
    MaxIterations,
}

/// Convergence and numerical events of one inference run, returned as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConvergenceReport {
    /// How it ended.
    pub status: ConvergenceStatus,
    /// Iterations (Newton steps or EP sweeps).
    pub iterations: usize,
    /// Final change of the quantity the stopping rule tests.
    pub final_change: f64,
    /// Largest Cholesky jitter that had to be added (0 if none).
    pub jitter_used: f64,
    /// Numerical events, e.g. site precisions that were clipped.
    pub notes: Vec<String>,
}

/// A fitted GP classifier.
#[derive(Clone, Debug)]
pub struct ClassifierFit {
    /// The Gaussian posterior over the latent function.
    pub posterior: GaussianPosterior,
    /// Approximate log marginal likelihood, where the method defines one.
    pub ln_evidence: Option<f64>,
    /// Training-row indices of the posterior's basis, in basis order, when the basis is a
    /// subset of the training inputs (IVM active set, SOGP basis vectors); `None` = all rows.
    pub basis_indices: Option<Vec<usize>>,
    /// How inference went.
    pub report: ConvergenceReport,
}

/// Labels must be ±1 with both classes present (any finite y for the Gaussian likelihood of
/// the equivalence tests); shapes must agree.
pub fn check_classification(
    x: faer::MatRef<'_, f64>,
    y: &[f64],
    lik: &crate::likelihood::Likelihood,
) -> Result<()> {
    crate::regression::exact::check_regression_inputs(x, y)?;
    if !matches!(lik, crate::likelihood::Likelihood::Gaussian { .. }) {
        crate::data::check_binary_labels(y)?;
    }
    if x.nrows() < 2 {
        return Err(Error::Empty {
            what: "training set (needs at least two points)",
        });
    }
    Ok(())
}

/// An approximate-inference method with its settings: the one switch that model files,
/// experiments and the CLI go through, so a new method is added in one place.
#[derive(Clone, Debug)]
pub enum InferenceMethod {
    /// Laplace approximation (GPML Alg. 3.1/3.2).
    Laplace(laplace::LaplaceConfig),
    /// Expectation propagation (GPML Alg. 3.5).
    Ep(ep::EpConfig),
    /// Naive mean field (seed 001 Alg. 17.1) with the Gaussian Q of its cavities; flip-noise
    /// likelihood.
    MeanField(mean_field::MeanFieldConfig),
    /// Informative vector machine: ADF on a greedily selected active set (seed 003 §3.1).
    Ivm(ivm::IvmConfig),
    /// Sparse online GP (Csató–Opper; seed 003 §3.2), visiting the points in `order`.
    Sogp {
        /// Memory limit, novelty tolerance, sweeps.
        config: sogp::SogpConfig,
        /// Visiting order of every sweep.
        order: sogp::SweepOrder,
    },
}

impl InferenceMethod {
    /// Command-line name of the method.
    pub fn name(&self) -> &'static str {
        match self {
            InferenceMethod::Laplace(_) => "laplace",
            InferenceMethod::Ep(_) => "ep",
            InferenceMethod::MeanField(_) => "mean-field",
            InferenceMethod::Ivm(_) => "ivm",
            InferenceMethod::Sogp { .. } => "sogp",
        }
    }

    /// Run inference for fixed kernel and likelihood.
    pub fn fit(
        &self,
        kernel: &crate::kernel::Kernel,
        lik: &crate::likelihood::Likelihood,
        x: faer::MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<ClassifierFit> {
        match self {
            InferenceMethod::Laplace(cfg) => laplace::laplace(kernel, lik, x, y, cfg),
            InferenceMethod::Ep(cfg) => ep::ep(kernel, lik, x, y, cfg),
            InferenceMethod::MeanField(cfg) => {
                mean_field::mean_field(kernel, lik, x, y, cfg).map(|m| m.fit)
            }
            InferenceMethod::Ivm(cfg) => ivm::ivm(kernel, lik, x, y, cfg),
            InferenceMethod::Sogp { config, order } => sogp::sogp(kernel, lik, x, y, config, order),
        }
    }
}
