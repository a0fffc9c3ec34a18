//! Hyperparameters by the linear-response leave-one-out error (seed 001 §17.7: "chosen as to
//! minimize the leave-one-out error for one of the 10 training sets by scanning through a
//! number of parameter values"): a grid over the RBF lengthscale and the slack (v or C),
//! evaluated in parallel over grid points. Ties go to the first point in grid order, so the
//! choice is deterministic.

use faer::MatRef;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::loo::svm_loo;
use super::{svm, Slack, SvmConfig};
use crate::error::{Error, Result};
use crate::kernel::Kernel;

/// The grid: every lengthscale with every slack (kernel `exp(−‖x − x'‖²/(2l²))`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvmGrid {
    /// RBF lengthscales l.
    pub lengthscales: Vec<f64>,
    /// Slack penalties (v values, C values, or both kinds).
    pub slacks: Vec<Slack>,
}

impl SvmGrid {
    /// Number of grid points (the union-bound size if a certificate pays for the choice).
    pub fn len(&self) -> usize {
        self.lengthscales.len() * self.slacks.len()
    }

    /// True if the grid has no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The grid points in order (lengthscale outer, slack inner).
    pub fn points(&self) -> Vec<(f64, Slack)> {
        self.lengthscales
            .iter()
            .flat_map(|&l| self.slacks.iter().map(move |&s| (l, s)))
            .collect()
    }
}

/// One evaluated grid point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvmGridPoint {
    /// RBF lengthscale.
    pub lengthscale: f64,
    /// Slack penalty.
    pub slack: Slack,
    /// Linear-response LOO errors.
    pub loo_errors: usize,
    /// LOO error rate.
    pub loo_rate: f64,
    /// Support vectors (margin + bound).
    pub n_sv: usize,
    /// Solver iterations.
    pub iterations: usize,
}

/// The scan and its minimiser.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvmSelection {
    /// The grid point with the fewest LOO errors (first in grid order on ties).
    pub best: SvmGridPoint,
    /// Every grid point, in grid order.
    pub points: Vec<SvmGridPoint>,
}

/// Scan `grid` (parallel over points) with the solver settings of `base` (its slack is
/// replaced by each grid slack) and pick the lengthscale and slack of least LR-LOO error.
pub fn select_by_loo(
    x: MatRef<'_, f64>,
    y: &[f64],
    grid: &SvmGrid,
    base: &SvmConfig,
) -> Result<SvmSelection> {
    if grid.is_empty() {
        return Err(Error::Empty {
            what: "SVM hyperparameter grid",
        });
    }
    if let Some(&l) = grid
        .lengthscales
        .iter()
        .find(|l| !(**l > 0.0 && l.is_finite()))
    {
        return Err(Error::InvalidParameter {
            name: "SVM grid lengthscale",
            value: l,
            reason: "must be positive and finite",
        });
    }
    let points: Vec<Result<SvmGridPoint>> = grid
        .points()
        .into_par_iter()
        .map(|(l, slack)| {
            let k = Kernel::se_iso(l, 1.0);
            let cfg = SvmConfig { slack, ..*base };
            let fit = svm(&k, x, y, &cfg)?;
            let loo = svm_loo(&fit, &k, x, y)?;
            Ok(SvmGridPoint {
                lengthscale: l,
                slack,
                loo_errors: loo.errors,
                loo_rate: loo.rate,
                n_sv: fit.sets.margin_sv.len() + fit.sets.bound_sv.len(),
                iterations: fit.report.iterations,
            })
        })
        .collect();
    let points: Vec<SvmGridPoint> = points.into_iter().collect::<Result<_>>()?;
    let best = points
        .iter()
        .enumerate()
        .min_by_key(|(i, p)| (p.loo_errors, *i))
        .map(|(_, p)| p.clone())
        .ok_or(Error::Empty {
            what: "SVM hyperparameter grid",
        })?;
    Ok(SvmSelection { best, points })
}
