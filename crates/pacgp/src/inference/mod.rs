//! Approximate inference for binary GP classification. Every method returns the shared
//! [`crate::posterior::GaussianPosterior`] (site form over the training inputs) plus a
//! [`ConvergenceReport`], so prediction, `KL(Q‖P)`, Gibbs error and the PAC-Bayes certificate
//! come for free.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::posterior::GaussianPosterior;

pub mod ep;
pub mod evidence;
pub mod laplace;

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
