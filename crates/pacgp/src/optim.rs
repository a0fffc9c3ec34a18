//! Objectives over ln-space parameters and the optimiser that minimises them.
//!
//! Every training criterion (negative log evidence, LOO, a PAC-Bayes bound) implements
//! [`Objective`]; [`minimize`] runs L-BFGS on it and reports why it stopped.

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// A differentiable function of a flat parameter vector (θ in ln space and friends).
pub trait Objective {
    /// Number of parameters.
    fn dim(&self) -> usize;
    /// Value and gradient at `params`. An error (e.g. a failed Cholesky) is reported to the
    /// optimiser as an infinitely bad point.
    fn value_and_gradient(&self, params: &[f64]) -> Result<(f64, Vec<f64>)>;
    /// Value only; defaults to the value of [`Objective::value_and_gradient`].
    fn value(&self, params: &[f64]) -> Result<f64> {
        self.value_and_gradient(params).map(|(v, _)| v)
    }
}

/// Why an optimisation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// Gradient norm below tolerance.
    GradientTolerance,
    /// Relative change of the objective below tolerance.
    CostTolerance,
    /// Iteration budget exhausted.
    MaxIterations,
    /// Line search could not make progress.
    LineSearchFailed,
    /// Something else (text in the report).
    Other,
}

/// Result of one optimisation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OptimReport {
    /// Best parameters found.
    pub params: Vec<f64>,
    /// Objective value there.
    pub value: f64,
    /// Iterations taken.
    pub iterations: u64,
    /// Objective evaluations.
    pub evaluations: u64,
    /// Why it stopped.
    pub termination: Termination,
    /// Human-readable detail of the stop reason.
    pub message: String,
}
