//! Approximate inference for GP classification. Every method returns the shared
//! [`crate::posterior::GaussianPosterior`] plus a [`ConvergenceReport`].

use serde::{Deserialize, Serialize};

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
    /// Iterations (Newton steps, EP sweeps, mean-field sweeps, ...).
    pub iterations: usize,
    /// Final value of the quantity the stopping rule tests.
    pub final_change: f64,
    /// Largest Cholesky jitter that had to be added (0 if none).
    pub jitter_used: f64,
    /// Free-text notes on numerical events (e.g. negative site precisions clipped).
    pub notes: Vec<String>,
}
