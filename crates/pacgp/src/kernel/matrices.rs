//! A kernel's matrices on point sets (`gram`, `cross`, `diag`) and their derivatives as
//! contractions `Σ_ij G_ij ∂K_ij/∂θ_k` (in θ and in the inducing inputs Z).

use super::*;

/// What a Gram matrix is called in [`Error::OutOfMemory`].
pub(super) const GRAM: &str = "a kernel matrix K(X, X)";

/// What a cross-covariance is called in [`Error::OutOfMemory`].
pub(super) const CROSS: &str = "a cross-covariance K(X, Z)";

impl Kernel {
    /// The N×N Gram matrix `K(X, X)` (one triangle computed, in parallel), or
    /// [`Error::OutOfMemory`] where N×N f64 cannot be had.
    pub fn gram(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.gram_in(x, None)
    }

    /// Whether [`Kernel::gram_in`] writes into the storage it is given (a stationary kernel's
    /// fast path) rather than dropping it.
    pub(crate) fn gram_uses_storage(&self) -> bool {
        self.stationary_parts().is_some()
    }

    /// [`Kernel::gram`] written into `storage` where it is N×N and the kernel stationary (an
    /// objective's buffer from its last evaluation).
    pub fn gram_in(&self, x: MatRef<'_, f64>, storage: Option<Mat<f64>>) -> Result<Mat<f64>> {
        if let Some(p) = self.stationary_parts() {
            let (xt, u) = (p.cols(x), p.rows(x));
            return stationary::cross(p.profile, p.variance, &xt, &u, x.ncols(), true, storage);
        }
        if let Some(m) = self.composite_matrix((x.nrows(), x.nrows()), |k| k.gram(x)) {
            return m;
        }
        let rows = rows_of(x);
        let n = rows.len();
        let mut out = crate::memory::try_zeros(n, n, GRAM)?;
        out.par_col_iter_mut().enumerate().for_each(|(j, mut c)| {
            for i in j..n {
                c[i] = self.eval(&rows[i], &rows[j]);
            }
        });
        crate::linalg::symmetrise_from_lower(&mut out);
        Ok(out)
    }

    /// The N×M cross-covariance `K(X, Z)`, or [`Error::OutOfMemory`] where N×M f64 cannot be
    /// had.
    pub fn cross(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if let Some(p) = self.stationary_parts() {
            let (xt, uz) = (p.cols(x), p.rows(z));
            return stationary::cross(p.profile, p.variance, &xt, &uz, x.ncols(), false, None);
        }
        if let Some(m) = self.composite_matrix((x.nrows(), z.nrows()), |k| k.cross(x, z)) {
            return m;
        }
        let (rx, rz) = (rows_of(x), rows_of(z));
        let mut out = crate::memory::try_zeros(rx.len(), rz.len(), CROSS)?;
        out.par_col_iter_mut().enumerate().for_each(|(j, mut c)| {
            for (i, a) in rx.iter().enumerate() {
                c[i] = self.eval(a, &rz[j]);
            }
        });
        Ok(out)
    }

    /// The diagonal `k(x_i, x_i)`.
    pub fn diag(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        if let Some(p) = self.stationary_parts() {
            return vec![p.variance; x.nrows()]; // k(0) = 1 for every profile
        }
        rows_of(x).iter().map(|r| self.eval(r, r)).collect()
    }

    /// `∂K/∂θ_k` as explicit matrices (tests and small problems only).
    pub fn gram_grad(&self, x: MatRef<'_, f64>) -> Vec<Mat<f64>> {
        let rows = rows_of(x);
        let n = rows.len();
        let p = self.n_params();
        let mut out: Vec<Mat<f64>> = (0..p).map(|_| crate::memory::zeros(n, n)).collect();
        let mut g = Vec::with_capacity(p);
        for j in 0..n {
            for i in j..n {
                g.clear();
                self.eval_grad(&rows[i], &rows[j], &mut g);
                for k in 0..p {
                    out[k][(i, j)] = g[k];
                    out[k][(j, i)] = g[k];
                }
            }
        }
        out
    }

    /// `Σ_ij G_ij ∂K(X,X)_ij/∂θ_k` for every k (G need not be symmetric).
    pub fn gram_grad_contract(&self, x: MatRef<'_, f64>, g: MatRef<'_, f64>) -> Vec<f64> {
        self.cross_grad_contract(x, x, g)
    }

    /// [`Kernel::gram_grad_contract`] for a symmetric `G`, of which only the lower triangle
    /// is read: stationary kernels then visit each pair once (half the work), and with
    /// `gram` (this kernel's `K(X, X)`, e.g. kept from the fit) recompute no exponential.
    pub fn gram_grad_contract_symmetric(
        &self,
        x: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
        gram: Option<MatRef<'_, f64>>,
    ) -> Vec<f64> {
        if let Some(p) = self.stationary_parts() {
            let u = p.rows(x);
            return p.fold(stationary::grad_contract(
                &p,
                &u,
                &u,
                x.ncols(),
                g,
                true,
                gram,
            ));
        }
        self.cross_grad_contract(x, x, g)
    }

    /// [`Kernel::gram_grad_contract_symmetric`] for a symmetric `G` given whole, with this
    /// kernel's `K(X, X)` overwritten as scratch: stationary kernels take `k'` from K in one
    /// vectorised pass and the lengthscale sums from one N×N×(D+1) product
    /// ([`Kernel::cross_adjoint_in`] with Z = X) instead of a scalar loop over the pairs.
    pub(crate) fn gram_adjoint_in(
        &self,
        x: MatRef<'_, f64>,
        gram: &mut Mat<f64>,
        g: &Mat<f64>,
    ) -> Vec<f64> {
        if self.stationary_parts().is_some() {
            // A stationary kernel does not see a shift of the inputs; centred, the product's
            // expansion Σ H_ij (u_i − u_j)² = 2Σ u_i² (H1)_i − 2Σ u_i (HU)_i does not cancel
            // digits for inputs far from the origin.
            let xc = centred_columns(x);
            return self.cross_adjoint_in(xc.as_ref(), xc.as_ref(), gram, g).0;
        }
        self.gram_grad_contract_symmetric(x, g.as_ref(), Some(gram.as_ref()))
    }

    /// `Σ_ij G_ij ∂K(X,Z)_ij/∂θ_k` for every k.
    pub fn cross_grad_contract(
        &self,
        x: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
    ) -> Vec<f64> {
        if let Some(p) = self.stationary_parts() {
            let (ux, uz) = (p.rows(x), p.rows(z));
            return p.fold(stationary::grad_contract(
                &p,
                &ux,
                &uz,
                x.ncols(),
                g,
                false,
                None,
            ));
        }
        let (rx, rz) = (rows_of(x), rows_of(z));
        let p = self.n_params();
        // Fixed chunks of rows summed in order: the same bits on any thread count.
        crate::linalg::ordered_par_sum(rx.len(), p, |i, acc| {
            let mut buf = Vec::with_capacity(p);
            for j in 0..rz.len() {
                let gij = g[(i, j)];
                if gij == 0.0 {
                    continue;
                }
                buf.clear();
                self.eval_grad(&rx[i], &rz[j], &mut buf);
                for k in 0..p {
                    acc[k] += gij * buf[k];
                }
            }
        })
    }

    /// `Σ_i g_i ∂k(x_i,x_i)/∂θ_k` for every k.
    pub fn diag_grad_contract(&self, x: MatRef<'_, f64>, g: &[f64]) -> Vec<f64> {
        if let Some(p) = self.stationary_parts() {
            // k(x, x) = σ²: only the variance moves it.
            let mut out = vec![0.0; self.n_params()];
            if p.scaled {
                out[0] = p.variance * g.iter().sum::<f64>();
            }
            return out;
        }
        let p = self.n_params();
        let mut acc = vec![0.0; p];
        let mut buf = Vec::with_capacity(p);
        for (i, r) in rows_of(x).iter().enumerate() {
            buf.clear();
            self.eval_grad(r, r, &mut buf);
            for k in 0..p {
                acc[k] += g[i] * buf[k];
            }
        }
        acc
    }

    /// The adjoint of the cross-covariance `K(Z, X)` (M×N) against `G` (M×N) in one pass:
    /// `(Σ_ji G_ji ∂K_ji/∂θ_k for every k, ∂/∂Z Σ_ji G_ji K_ji as an M×D matrix)`.
    ///
    /// `k_zx` must be `self.cross(z, x)`; it is consumed as scratch. For `σ²·k(r)` kernels
    /// this reuses it (no exponential recomputed for the squared exponential) and reduces
    /// the lengthscale and Z parts to one M×N by N×(D+1) product; other kernels fall back
    /// to [`Kernel::cross_grad_contract`] and [`Kernel::cross_grad_z`].
    pub fn cross_adjoint(
        &self,
        z: MatRef<'_, f64>,
        x: MatRef<'_, f64>,
        mut k_zx: Mat<f64>,
        g: &Mat<f64>,
    ) -> (Vec<f64>, Mat<f64>) {
        self.cross_adjoint_in(z, x, &mut k_zx, g)
    }

    /// [`Kernel::cross_adjoint`] with `k_zx` overwritten as scratch instead of consumed (so that
    /// the caller can reuse its memory).
    pub(crate) fn cross_adjoint_in(
        &self,
        z: MatRef<'_, f64>,
        x: MatRef<'_, f64>,
        k_zx: &mut Mat<f64>,
        g: &Mat<f64>,
    ) -> (Vec<f64>, Mat<f64>) {
        debug_assert_eq!((k_zx.nrows(), k_zx.ncols()), (z.nrows(), x.nrows()));
        debug_assert_eq!((g.nrows(), g.ncols()), (z.nrows(), x.nrows()));
        if let Some(p) = self.stationary_parts() {
            let (uz, ux, zt) = (p.rows(z), p.rows(x), p.cols(z));
            let (theta, dz) = stationary::cross_adjoint(
                p.profile,
                p.variance,
                &p.ln_l,
                &uz,
                &zt,
                &ux,
                x.ncols(),
                k_zx,
                g,
                p.scaled,
            );
            return (p.fold(theta), dz);
        }
        // Kernels are symmetric: K(Z, X) = K(X, Z)ᵀ.
        let theta = self.cross_grad_contract(z, x, g.as_ref());
        let dz = self.cross_grad_z(x, z, g.transpose().to_owned().as_ref());
        (theta, dz)
    }

    /// `∂/∂Z Σ_ij G_ij k(x_i, z_j)`, an M×D matrix (gradient for inducing inputs).
    pub fn cross_grad_z(
        &self,
        x: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        g: MatRef<'_, f64>,
    ) -> Mat<f64> {
        if let Some(p) = self.stationary_parts() {
            let (ux, uz) = (p.rows(x), p.rows(z));
            return stationary::grad_z(&p, &ux, &uz, x.ncols(), g, None);
        }
        let (rx, rz) = (rows_of(x), rows_of(z));
        let d = z.ncols();
        let mut out = crate::memory::zeros(rz.len(), d);
        let mut buf = vec![0.0; d];
        for j in 0..rz.len() {
            for i in 0..rx.len() {
                let gij = g[(i, j)];
                if gij == 0.0 {
                    continue;
                }
                self.eval_grad_x(&rz[j], &rx[i], &mut buf);
                for t in 0..d {
                    out[(j, t)] += gij * buf[t];
                }
            }
        }
        out
    }

    /// `∂/∂Z Σ_ij G_ij k(z_i, z_j)`, an M×D matrix (both arguments move).
    pub fn gram_grad_z(&self, z: MatRef<'_, f64>, g: MatRef<'_, f64>) -> Mat<f64> {
        let gt = g.transpose().to_owned();
        let a = self.cross_grad_z(z, z, g);
        let b = self.cross_grad_z(z, z, gt.as_ref());
        &a + &b
    }
}
