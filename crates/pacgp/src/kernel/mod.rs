//! Covariance functions with hyperparameters held as θ = ln(value) in one flat vector.
//!
//! A [`Kernel`] is a plain serialisable tree (base kernels, `Scale`, `Sum`, `Product`).
//! Every kernel gives `gram(X)`, `cross(X, Z)`, `diag(X)` and the derivatives the
//! objectives need, as *contractions* `Σ_ij G_ij ∂K_ij/∂θ_k` so that no N×N derivative
//! matrix is ever stored per hyperparameter.
//!
//! Inputs are faer matrices with one point per row (N×D).

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod composite;
mod dot_product;
mod inducing;
mod spec;
pub mod stationary;

pub use stationary::Profile;

/// A covariance function. Parameters are stored in log space (`ln_*` fields).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kernel {
    /// Stationary kernel `k(r)` of the scaled distance `r² = Σ_t (x_t − x'_t)²/l_t²` with
    /// unit variance (squared exponential or Matérn); one lengthscale (isotropic) or one per
    /// input (ARD).
    Stationary {
        /// Which `k(r)`.
        profile: Profile,
        /// ln of the lengthscale(s).
        ln_lengthscale: Vec<f64>,
    },
    /// Linear `Σ_t v_t x_t x'_t` (one shared variance, or one per input).
    Linear {
        /// ln of the variance(s) `v_t`.
        ln_variance: Vec<f64>,
    },
    /// Polynomial `(x·x'/l² + c)^p` with a fixed integer degree.
    Polynomial {
        /// Degree p ≥ 1.
        degree: u32,
        /// ln c (offset).
        ln_offset: f64,
        /// ln l (input scale).
        ln_lengthscale: f64,
    },
    /// Constant `σ²`.
    Constant {
        /// ln σ².
        ln_variance: f64,
    },
    /// `σ² · k(x, x')`.
    Scale {
        /// ln σ².
        ln_variance: f64,
        /// The scaled kernel.
        inner: Box<Kernel>,
    },
    /// `k₁ + k₂`.
    Sum {
        /// First term.
        left: Box<Kernel>,
        /// Second term.
        right: Box<Kernel>,
    },
    /// `k₁ · k₂`.
    Product {
        /// First factor.
        left: Box<Kernel>,
        /// Second factor.
        right: Box<Kernel>,
    },
}

impl Kernel {
    /// `σ_f² · SE-ARD` with the given lengthscales and signal variance (values, not logs).
    pub fn se_ard(lengthscales: &[f64], signal_variance: f64) -> Self {
        Kernel::Scale {
            ln_variance: signal_variance.ln(),
            inner: Box::new(Kernel::Stationary {
                profile: Profile::SquaredExponential,
                ln_lengthscale: lengthscales.iter().map(|l| l.ln()).collect(),
            }),
        }
    }

    /// `σ_f² · SE` with one isotropic lengthscale.
    pub fn se_iso(lengthscale: f64, signal_variance: f64) -> Self {
        Self::se_ard(&[lengthscale], signal_variance)
    }

    /// `σ² · k` for a stationary profile with the given lengthscales and variance.
    pub fn stationary(profile: Profile, lengthscales: &[f64], signal_variance: f64) -> Self {
        Kernel::Scale {
            ln_variance: signal_variance.ln(),
            inner: Box::new(Kernel::Stationary {
                profile,
                ln_lengthscale: lengthscales.iter().map(|l| l.ln()).collect(),
            }),
        }
    }

    /// Number of hyperparameters in θ.
    pub fn n_params(&self) -> usize {
        match self {
            Kernel::Stationary { ln_lengthscale, .. } => ln_lengthscale.len(),
            Kernel::Linear { ln_variance } => ln_variance.len(),
            Kernel::Polynomial { .. } => 2,
            Kernel::Constant { .. } => 1,
            Kernel::Scale { inner, .. } => 1 + inner.n_params(),
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.n_params() + right.n_params()
            }
        }
    }

    /// θ, the ln-space hyperparameters, in a fixed depth-first order.
    pub fn params(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.n_params());
        self.push_params(&mut out);
        out
    }

    fn push_params(&self, out: &mut Vec<f64>) {
        match self {
            Kernel::Stationary { ln_lengthscale, .. } => out.extend_from_slice(ln_lengthscale),
            Kernel::Linear { ln_variance } => out.extend_from_slice(ln_variance),
            Kernel::Polynomial {
                ln_offset,
                ln_lengthscale,
                ..
            } => {
                out.push(*ln_offset);
                out.push(*ln_lengthscale);
            }
            Kernel::Constant { ln_variance } => out.push(*ln_variance),
            Kernel::Scale { ln_variance, inner } => {
                out.push(*ln_variance);
                inner.push_params(out);
            }
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.push_params(out);
                right.push_params(out);
            }
        }
    }

    /// Set θ (same order as [`Kernel::params`]).
    pub fn set_params(&mut self, theta: &[f64]) -> Result<()> {
        if theta.len() != self.n_params() {
            return Err(Error::ShapeMismatch {
                what: "kernel hyperparameters",
                expected: format!("{}", self.n_params()),
                found: format!("{}", theta.len()),
            });
        }
        if let Some(bad) = theta.iter().find(|t| !t.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "kernel hyperparameter (ln space)",
                value: *bad,
                reason: "must be finite",
            });
        }
        self.take_params(theta);
        Ok(())
    }

    fn take_params(&mut self, theta: &[f64]) -> usize {
        match self {
            Kernel::Stationary {
                ln_lengthscale: v, ..
            }
            | Kernel::Linear { ln_variance: v } => {
                let n = v.len();
                v.copy_from_slice(&theta[..n]);
                n
            }
            Kernel::Polynomial {
                ln_offset,
                ln_lengthscale,
                ..
            } => {
                *ln_offset = theta[0];
                *ln_lengthscale = theta[1];
                2
            }
            Kernel::Constant { ln_variance } => {
                *ln_variance = theta[0];
                1
            }
            Kernel::Scale { ln_variance, inner } => {
                *ln_variance = theta[0];
                1 + inner.take_params(&theta[1..])
            }
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                let a = left.take_params(theta);
                a + right.take_params(&theta[a..])
            }
        }
    }

    /// Names of the hyperparameters, e.g. `ln_signal_variance`, `ln_lengthscale[2]`.
    pub fn param_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.push_names("", &mut out);
        out
    }

    fn push_names(&self, prefix: &str, out: &mut Vec<String>) {
        match self {
            Kernel::Stationary {
                ln_lengthscale: v, ..
            }
            | Kernel::Linear { ln_variance: v } => {
                let base = if matches!(self, Kernel::Linear { .. }) {
                    "ln_variance"
                } else {
                    "ln_lengthscale"
                };
                if v.len() == 1 {
                    out.push(format!("{prefix}{base}"));
                } else {
                    for i in 0..v.len() {
                        out.push(format!("{prefix}{base}[{i}]"));
                    }
                }
            }
            Kernel::Polynomial { .. } => {
                out.push(format!("{prefix}ln_offset"));
                out.push(format!("{prefix}ln_lengthscale"));
            }
            Kernel::Constant { .. } => out.push(format!("{prefix}ln_variance")),
            Kernel::Scale { inner, .. } => {
                out.push(format!("{prefix}ln_signal_variance"));
                inner.push_names(prefix, out);
            }
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.push_names(&format!("{prefix}0."), out);
                right.push_names(&format!("{prefix}1."), out);
            }
        }
    }

    /// Check that the kernel accepts inputs with `d` columns.
    pub fn check_input_dim(&self, d: usize) -> Result<()> {
        match self {
            Kernel::Stationary {
                ln_lengthscale: v, ..
            }
            | Kernel::Linear { ln_variance: v } => {
                if v.len() != 1 && v.len() != d {
                    return Err(Error::ShapeMismatch {
                        what: "ARD parameters vs input columns",
                        expected: format!("1 or {d}"),
                        found: format!("{}", v.len()),
                    });
                }
                Ok(())
            }
            Kernel::Polynomial { degree, .. } => {
                if *degree == 0 {
                    return Err(Error::InvalidParameter {
                        name: "polynomial degree",
                        value: 0.0,
                        reason: "must be at least 1",
                    });
                }
                Ok(())
            }
            Kernel::Constant { .. } => Ok(()),
            Kernel::Scale { inner, .. } => inner.check_input_dim(d),
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.check_input_dim(d)?;
                right.check_input_dim(d)
            }
        }
    }

    /// `k(x, z)` for two points.
    pub fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        match self {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
            } => {
                profile
                    .value_and_slope(scaled_sqdist(ln_lengthscale, x, z))
                    .0
            }
            Kernel::Linear { ln_variance } => dot_product::linear(ln_variance, x, z),
            Kernel::Polynomial {
                degree,
                ln_offset,
                ln_lengthscale,
            } => dot_product::polynomial(*degree, *ln_offset, *ln_lengthscale, x, z).0,
            Kernel::Constant { ln_variance } => ln_variance.exp(),
            Kernel::Scale { ln_variance, inner } => ln_variance.exp() * inner.eval(x, z),
            Kernel::Sum { left, right } => left.eval(x, z) + right.eval(x, z),
            Kernel::Product { left, right } => left.eval(x, z) * right.eval(x, z),
        }
    }

    /// `∂k(x,z)/∂θ_k` for every k, appended to `out`.
    pub fn eval_grad(&self, x: &[f64], z: &[f64], out: &mut Vec<f64>) {
        match self {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
            } => {
                // ∂k/∂ln l_t = k'(r²) · (−2 (x_t − z_t)²/l_t²)
                let r2 = scaled_sqdist(ln_lengthscale, x, z);
                let slope = profile.value_and_slope(r2).1;
                if ln_lengthscale.len() == 1 {
                    out.push(-2.0 * slope * r2);
                } else {
                    for t in 0..x.len() {
                        let l2 = (2.0 * ln_lengthscale[t]).exp();
                        let d = x[t] - z[t];
                        out.push(-2.0 * slope * d * d / l2);
                    }
                }
            }
            Kernel::Linear { ln_variance } => dot_product::linear_grad(ln_variance, x, z, out),
            Kernel::Polynomial {
                degree,
                ln_offset,
                ln_lengthscale,
            } => {
                let (_, dc, dl) =
                    dot_product::polynomial(*degree, *ln_offset, *ln_lengthscale, x, z);
                out.push(dc);
                out.push(dl);
            }
            Kernel::Constant { ln_variance } => out.push(ln_variance.exp()),
            Kernel::Scale { ln_variance, inner } => {
                let s = ln_variance.exp();
                out.push(s * inner.eval(x, z));
                let start = out.len();
                inner.eval_grad(x, z, out);
                for g in &mut out[start..] {
                    *g *= s;
                }
            }
            Kernel::Sum { left, right } => {
                left.eval_grad(x, z, out);
                right.eval_grad(x, z, out);
            }
            Kernel::Product { left, right } => {
                let (kl, kr) = (left.eval(x, z), right.eval(x, z));
                let start = out.len();
                left.eval_grad(x, z, out);
                for g in &mut out[start..] {
                    *g *= kr;
                }
                let mid = out.len();
                right.eval_grad(x, z, out);
                for g in &mut out[mid..] {
                    *g *= kl;
                }
            }
        }
    }

    /// `∂k(x,z)/∂x_t` for every input dimension t, written into `out` (length D).
    pub fn eval_grad_x(&self, x: &[f64], z: &[f64], out: &mut [f64]) {
        match self {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
            } => {
                let slope = profile
                    .value_and_slope(scaled_sqdist(ln_lengthscale, x, z))
                    .1;
                for t in 0..x.len() {
                    let l2 =
                        (2.0 * ln_lengthscale[if ln_lengthscale.len() == 1 { 0 } else { t }]).exp();
                    out[t] = 2.0 * slope * (x[t] - z[t]) / l2;
                }
            }
            Kernel::Linear { ln_variance } => {
                for t in 0..x.len() {
                    out[t] = ln_variance[if ln_variance.len() == 1 { 0 } else { t }].exp() * z[t];
                }
            }
            Kernel::Polynomial {
                degree,
                ln_offset,
                ln_lengthscale,
            } => dot_product::polynomial_grad_x(*degree, *ln_offset, *ln_lengthscale, x, z, out),
            Kernel::Constant { .. } => out.iter_mut().for_each(|o| *o = 0.0),
            Kernel::Scale { ln_variance, inner } => {
                inner.eval_grad_x(x, z, out);
                let s = ln_variance.exp();
                out.iter_mut().for_each(|g| *g *= s);
            }
            Kernel::Sum { left, right } => {
                let mut tmp = vec![0.0; out.len()];
                left.eval_grad_x(x, z, out);
                right.eval_grad_x(x, z, &mut tmp);
                out.iter_mut().zip(&tmp).for_each(|(o, t)| *o += t);
            }
            Kernel::Product { left, right } => {
                let (kl, kr) = (left.eval(x, z), right.eval(x, z));
                let mut tmp = vec![0.0; out.len()];
                left.eval_grad_x(x, z, out);
                right.eval_grad_x(x, z, &mut tmp);
                out.iter_mut()
                    .zip(&tmp)
                    .for_each(|(o, t)| *o = *o * kr + kl * t);
            }
        }
    }

    /// `(variance, profile, ln l)` if this is `σ²·k(r)` or a bare stationary kernel: these
    /// take the fast parallel paths of [`stationary`].
    fn stationary_parts(&self) -> Option<(f64, bool, Profile, &[f64])> {
        match self {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
            } => Some((1.0, false, *profile, ln_lengthscale)),
            Kernel::Scale { ln_variance, inner } => match inner.as_ref() {
                Kernel::Stationary {
                    profile,
                    ln_lengthscale,
                } => Some((ln_variance.exp(), true, *profile, ln_lengthscale)),
                _ => None,
            },
            _ => None,
        }
    }

    /// The N×N Gram matrix `K(X, X)` (one triangle computed, in parallel).
    pub fn gram(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        if let Some((var, _, profile, ln_l)) = self.stationary_parts() {
            let (xt, u) = (
                stationary::scaled_cols(x, ln_l),
                stationary::scaled_rows(x, ln_l),
            );
            return stationary::cross(profile, var, &xt, &u, x.ncols(), true);
        }
        if let Some(m) = self.composite_matrix((x.nrows(), x.nrows()), |k| k.gram(x)) {
            return m;
        }
        let rows = rows_of(x);
        let n = rows.len();
        let lower: Vec<Vec<f64>> = (0..n)
            .into_par_iter()
            .map(|i| (0..=i).map(|j| self.eval(&rows[i], &rows[j])).collect())
            .collect();
        Mat::from_fn(n, n, |i, j| if j <= i { lower[i][j] } else { lower[j][i] })
    }

    /// The N×M cross-covariance `K(X, Z)`.
    pub fn cross(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Mat<f64> {
        if let Some((var, _, profile, ln_l)) = self.stationary_parts() {
            let (xt, uz) = (
                stationary::scaled_cols(x, ln_l),
                stationary::scaled_rows(z, ln_l),
            );
            return stationary::cross(profile, var, &xt, &uz, x.ncols(), false);
        }
        if let Some(m) = self.composite_matrix((x.nrows(), z.nrows()), |k| k.cross(x, z)) {
            return m;
        }
        let (rx, rz) = (rows_of(x), rows_of(z));
        let rows: Vec<Vec<f64>> = rx
            .par_iter()
            .map(|a| rz.iter().map(|b| self.eval(a, b)).collect())
            .collect();
        Mat::from_fn(rx.len(), rz.len(), |i, j| rows[i][j])
    }

    /// The diagonal `k(x_i, x_i)`.
    pub fn diag(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        if let Some((var, _, _, _)) = self.stationary_parts() {
            return vec![var; x.nrows()]; // k(0) = 1 for every profile
        }
        rows_of(x).iter().map(|r| self.eval(r, r)).collect()
    }

    /// `∂K/∂θ_k` as explicit matrices (tests and small problems only).
    pub fn gram_grad(&self, x: MatRef<'_, f64>) -> Vec<Mat<f64>> {
        let rows = rows_of(x);
        let n = rows.len();
        let p = self.n_params();
        let mut out = vec![Mat::<f64>::zeros(n, n); p];
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
        if let Some((var, scaled, profile, ln_l)) = self.stationary_parts() {
            let u = stationary::scaled_rows(x, ln_l);
            return stationary::grad_contract(
                profile,
                var,
                ln_l,
                &u,
                &u,
                x.ncols(),
                g,
                scaled,
                true,
                gram,
            );
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
        if let Some((var, scaled, profile, ln_l)) = self.stationary_parts() {
            let (ux, uz) = (
                stationary::scaled_rows(x, ln_l),
                stationary::scaled_rows(z, ln_l),
            );
            return stationary::grad_contract(
                profile,
                var,
                ln_l,
                &ux,
                &uz,
                x.ncols(),
                g,
                scaled,
                false,
                None,
            );
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
        if let Some((var, scaled, _, ln_l)) = self.stationary_parts() {
            // k(x, x) = σ²: only the variance moves it.
            let mut out = vec![0.0; self.n_params()];
            if scaled {
                out[0] = var * g.iter().sum::<f64>();
            }
            debug_assert_eq!(out.len(), ln_l.len() + usize::from(scaled));
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
        if let Some((var, scaled, profile, ln_l)) = self.stationary_parts() {
            let (uz, ux) = (
                stationary::scaled_rows(z, ln_l),
                stationary::scaled_rows(x, ln_l),
            );
            let zt = stationary::scaled_cols(z, ln_l);
            return stationary::cross_adjoint(
                profile,
                var,
                ln_l,
                &uz,
                &zt,
                &ux,
                x.ncols(),
                k_zx,
                g,
                scaled,
            );
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
        if let Some((var, _, profile, ln_l)) = self.stationary_parts() {
            let (ux, uz) = (
                stationary::scaled_rows(x, ln_l),
                stationary::scaled_rows(z, ln_l),
            );
            return stationary::grad_z(profile, var, ln_l, &ux, &uz, x.ncols(), g, None);
        }
        let (rx, rz) = (rows_of(x), rows_of(z));
        let d = z.ncols();
        let mut out = Mat::<f64>::zeros(rz.len(), d);
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

/// `Σ_t (x_t − z_t)² / l_t²` with `l = exp(ln_l)` (one shared or one per dimension).
fn scaled_sqdist(ln_l: &[f64], x: &[f64], z: &[f64]) -> f64 {
    if ln_l.len() == 1 {
        let inv = (-2.0 * ln_l[0]).exp();
        x.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() * inv
    } else {
        x.iter()
            .zip(z)
            .zip(ln_l)
            .map(|((a, b), l)| (a - b) * (a - b) * (-2.0 * l).exp())
            .sum()
    }
}

/// `x` with each column's mean subtracted.
fn centred_columns(x: MatRef<'_, f64>) -> Mat<f64> {
    let n = x.nrows().max(1) as f64;
    let means: Vec<f64> = (0..x.ncols())
        .map(|t| (0..x.nrows()).map(|i| x[(i, t)]).sum::<f64>() / n)
        .collect();
    Mat::from_fn(x.nrows(), x.ncols(), |i, t| x[(i, t)] - means[t])
}

/// Rows of a matrix as contiguous vectors (faer is column-major).
pub fn rows_of(x: MatRef<'_, f64>) -> Vec<Vec<f64>> {
    (0..x.nrows())
        .map(|i| (0..x.ncols()).map(|j| x[(i, j)]).collect())
        .collect()
}
