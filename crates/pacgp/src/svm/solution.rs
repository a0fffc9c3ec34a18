//! An SVM's dual solution kept in memory beside the model it was fitted for, with what it was
//! found for, so that `certify` on the same sample can reuse it instead of solving again.

use faer::MatRef;
use sha2::{Digest, Sha256};

use super::{SvmConfig, SvmFit};
use crate::kernel::Kernel;

/// The solution, the prior kernel and solver settings it was found with, and a digest of the
/// standardised sample in its row order (the solution's indices are rows of that order).
#[derive(Clone, Debug)]
pub struct SvmSolution {
    fit: SvmFit,
    kernel: Kernel,
    config: SvmConfig,
    sample: [u8; 32],
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
        let same =
            self.kernel == *kernel && self.config == *config && self.sample == ordered_digest(x, y);
        same.then_some(&self.fit)
    }
}

/// SHA-256 of `(x, y)` in row order: the shape, then each row's inputs and label as f64 bits.
fn ordered_digest(x: MatRef<'_, f64>, y: &[f64]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((x.nrows() as u64).to_le_bytes());
    h.update((x.ncols() as u64).to_le_bytes());
    for i in 0..x.nrows() {
        for j in 0..x.ncols() {
            h.update(x[(i, j)].to_bits().to_le_bytes());
        }
        h.update(
            y.get(i)
                .copied()
                .unwrap_or(f64::NAN)
                .to_bits()
                .to_le_bytes(),
        );
    }
    h.update((y.len() as u64).to_le_bytes());
    h.finalize().into()
}
