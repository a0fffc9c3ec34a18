//! Covariances with the inducing inputs Z, as the sparse objectives stream them: `K(Z, X)`
//! blocks filled with the vectorised exponential, and the adjoint of `K(Z, Z)` read from the
//! matrix itself (no exponential recomputed).

use faer::{Mat, MatMut, MatRef};

use super::{stationary, Kernel};
use crate::error::Result;

impl Kernel {
    /// `K(Z, X)` (M×N, the transpose of [`Kernel::cross`]`(X, Z)`). Stationary kernels use
    /// `crate::vector_math::exp` (within one ulp of libm's, vectorised, no AVX → SSE
    /// transition), as [`Kernel::cross`] and [`Kernel::gram`] do. Other kernels:
    /// [`Kernel::cross`].
    /// [`crate::error::Error::OutOfMemory`] where M×N f64 cannot be had.
    pub fn inducing_cross(&self, z: MatRef<'_, f64>, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut out = crate::memory::try_zeros(z.nrows(), x.nrows(), super::matrices::CROSS)?;
        self.inducing_cross_into(z, x, out.as_mut())?;
        Ok(out)
    }

    /// [`Kernel::inducing_cross`] written into `out` (M×N; every entry overwritten).
    pub fn inducing_cross_into(
        &self,
        z: MatRef<'_, f64>,
        x: MatRef<'_, f64>,
        mut out: MatMut<'_, f64>,
    ) -> Result<()> {
        if let Some(p) = self.stationary_parts() {
            let (zt, ux) = (p.cols(z), p.rows(x));
            stationary::cross_vectorised(p.profile, p.variance, &zt, &ux, x.ncols(), out);
            return Ok(());
        }
        out.copy_from(self.cross(z, x)?);
        Ok(())
    }

    /// For a symmetric `G` (M×M) and `kzz = K(Z, Z)` (without jitter, e.g. from
    /// [`Kernel::inducing_cross`]): `(Σ_ij G_ij ∂K_ij/∂θ_k for every k, ∂/∂Z Σ_ij G_ij K_ij)`.
    /// Stationary kernels visit each pair once and take `k'` from `kzz`; the Z part is twice the
    /// first-argument derivative, as G and K are symmetric.
    pub fn inducing_gram_adjoint(
        &self,
        z: MatRef<'_, f64>,
        kzz: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
    ) -> (Vec<f64>, Mat<f64>) {
        if let Some(p) = self.stationary_parts() {
            let theta = self.gram_grad_contract_symmetric(z, g, Some(kzz));
            let u = p.rows(z);
            let half = stationary::grad_z(&p, &u, &u, z.ncols(), g, Some(kzz));
            return (
                theta,
                Mat::from_fn(half.nrows(), half.ncols(), |a, t| 2.0 * half[(a, t)]),
            );
        }
        (self.gram_grad_contract(z, g), self.gram_grad_z(z, g))
    }
}
