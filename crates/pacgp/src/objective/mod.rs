//! Methods trained on their PAC-Bayes bound (seed 004): full PAC-GP and sparse PAC-SGP (in
//! process, over shards, with per-point noise), classifiers trained by their bound (PAC-GPC),
//! and the data-dependent split priors for regression and classification. Each minimises
//! its bound through the one skeleton, [`bound`].

pub mod bound;
/// Data-dependent GP prior for regression from a random part of the sample (docs/math.md §9.3).
pub mod gp_split;
pub mod gpc_split;
pub mod pac_gp;
pub mod pac_gp_hetero;
pub mod pac_gpc;
pub mod pac_sgp;
pub mod pac_sgp_hetero;
pub mod pac_sgp_sharded;
/// Sparse (inducing-point) form of the regression split prior (docs/math.md §9.3.2).
pub mod sgp_split;
#[cfg(test)]
mod toy;

use faer::MatRef;

use crate::error::Result;
use crate::kernel::Kernel;

/// An ε-band loss a regression bound objective can be built on: ε > 0.
pub(crate) fn check_band(loss: &crate::loss::RegressionLoss) -> Result<()> {
    if loss.epsilon() > 0.0 {
        return Ok(());
    }
    Err(crate::error::Error::InvalidParameter {
        name: "epsilon",
        value: loss.epsilon(),
        reason: "must be positive",
    })
}

/// What every full-GP bound objective checks of its sample before it is built: finite
/// inputs and targets of matching shapes, and the kernel's input dimension.
pub(crate) fn check_full_gp_sample(kernel: &Kernel, x: MatRef<'_, f64>, y: &[f64]) -> Result<()> {
    crate::regression::exact::check_regression_inputs(x, y)?;
    kernel.check_input_dim(x.ncols())
}
