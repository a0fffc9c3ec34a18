//! Training objectives built on PAC-Bayes bounds (seed 004): full PAC-GP and sparse PAC-SGP;
//! classifiers trained by their bound (PAC-GPC) and certified with a split prior.

pub mod gpc_split;
pub mod pac_gp;
pub mod pac_gp_hetero;
pub mod pac_gpc;
pub mod pac_sgp;
pub mod pac_sgp_hetero;
pub mod pac_sgp_sharded;

use faer::MatRef;

use crate::bounds::{BoundKind, BoundTarget, ConfidenceTerm};
use crate::error::Result;
use crate::kernel::Kernel;

/// What every full-GP bound objective checks before it is built: the sample (finite, shapes),
/// the kernel's input dimension; and the bound it minimises (δ, the penalty), Maurer's
/// constant until the objective is given another.
pub(crate) fn check_bound_setup(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    delta: f64,
    penalty: f64,
    kind: BoundKind,
) -> Result<BoundTarget> {
    crate::regression::exact::check_regression_inputs(x, y)?;
    kernel.check_input_dim(x.ncols())?;
    BoundTarget::new(delta, ConfidenceTerm::Maurer, kind, penalty)
}
