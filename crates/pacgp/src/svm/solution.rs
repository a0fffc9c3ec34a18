//! An SVM's dual solution kept in memory beside the model it was fitted for, with what it was
//! found for, so that `certify` on the same sample can reuse it instead of solving again.

use faer::MatRef;

use super::{SvmConfig, SvmFit};
use crate::data::ordered_digest;
use crate::kernel::Kernel;

/// The solution, the prior kernel and solver settings it was found with, and a digest of the
/// standardised sample in its row order (the solution's indices are rows of that order).
#[derive(Clone, Debug)]
pub struct SvmSolution {
    fit: SvmFit,
    kernel: Kernel,
    config: SvmConfig,
    sample: Option<[u8; 32]>,
}

impl SvmSolution {
    /// The solution `fit` of the SVM with `kernel` and `config` on `(x, y)`.
    pub fn new(
        fit: SvmFit,
        kernel: Kernel,
        config: SvmConfig,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Self {
        Self {
            fit,
            kernel,
            config,
            sample: ordered_digest(x, y),
        }
    }

    /// The solution if it was found for exactly this kernel, these settings and this sample in
    /// this row order; `None` otherwise (the caller solves again).
    pub fn for_problem(
        &self,
        kernel: &Kernel,
        config: &SvmConfig,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Option<&SvmFit> {
        let same = self.sample.is_some()
            && self.kernel == *kernel
            && self.config == *config
            && self.sample == ordered_digest(x, y);
        same.then_some(&self.fit)
    }
}
