//! Exact GP regression (Rasmussen & Williams, GPML ch. 2 and 5): posterior, log marginal
//! likelihood and its gradient, and ML-II hyperparameter fitting.
//!
//! Parameters are `[θ_kernel…, ln σ²]` throughout (θ = ln value; without `ln σ²` where σ² is
//! kept fixed). The noise on row i is `λᵢ = σ² + aᵢ`, with `aᵢ` known variances (scikit-learn's
//! `alpha`; none by default). Cost: one Cholesky of `C = K + Λ` (N³/3 flops) per fit; the
//! gradient adds `C⁻¹` (≈ N³ flops).

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bounds::HyperGrid;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::scratch::Pool;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, Objective, OptimReport, Restarts};
use crate::posterior::{GaussianPosterior, Marginals};

mod ml2;
pub use ml2::{
    fit_ml2, fit_ml2_shared, param_bounds, MlConfig, MlFit, NegLogMarginalLikelihood, RowNoise,
};

/// An exact GP regressor at fixed hyperparameters.
#[derive(Clone, Debug)]
pub struct ExactGp {
    /// Covariance function.
    pub kernel: Kernel,
    /// Gaussian noise variance σ² shared by every row (new observations have it too).
    pub noise_variance: f64,
    /// Known noise variances `aᵢ` added to σ² on row i (empty: none).
    known_noise: Vec<f64>,
    x: Mat<f64>,
    y: Vec<f64>,
    chol: Cholesky,
    alpha: Vec<f64>,
}

/// Predictive distribution at test inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Predictive {
    /// Posterior mean.
    pub mean: Vec<f64>,
    /// Latent (noise-free) variance.
    pub latent_var: Vec<f64>,
    /// Variance of a new observation (latent + σ²).
    pub noisy_var: Vec<f64>,
}

/// Validate a regression problem: shapes, emptiness, finiteness.
pub fn check_regression_inputs(x: MatRef<'_, f64>, y: &[f64]) -> Result<()> {
    if x.nrows() == 0 {
        return Err(Error::Empty {
            what: "training inputs",
        });
    }
    if x.nrows() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "inputs vs targets",
            expected: format!("{} targets", x.nrows()),
            found: format!("{}", y.len()),
        });
    }
    crate::data::check_finite(x, "training inputs")?;
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: "targets",
            row: i,
            col: 0,
        });
    }
    Ok(())
}

fn check_noise(noise_variance: f64) -> Result<()> {
    if !(noise_variance > 0.0 && noise_variance.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "noise_variance",
            value: noise_variance,
            reason: "must be positive and finite",
        });
    }
    Ok(())
}

/// Every row's noise `λᵢ = σ² + aᵢ` must be positive and finite, with `σ², aᵢ ≥ 0` and `a`
/// empty or one per row.
fn check_row_noise(noise_variance: f64, known: &[f64], n: usize) -> Result<()> {
    if known.is_empty() {
        return check_noise(noise_variance);
    }
    if known.len() != n {
        return Err(Error::ShapeMismatch {
            what: "known noise variances (alpha) vs targets",
            expected: format!("{n} values"),
            found: format!("{}", known.len()),
        });
    }
    let bad = |name, value| Error::InvalidParameter {
        name,
        value,
        reason: "every row's noise variance σ² + αᵢ must be positive and finite, with σ², αᵢ ≥ 0",
    };
    if !(noise_variance >= 0.0 && noise_variance.is_finite()) {
        return Err(bad("noise_variance", noise_variance));
    }
    match known
        .iter()
        .find(|a| !(**a >= 0.0 && (noise_variance + **a) > 0.0 && a.is_finite()))
    {
        Some(&a) => Err(bad("alpha", a)),
        None => Ok(()),
    }
}

impl ExactGp {
    /// Condition the GP prior on `(x, y)` with noise σ² (GPML Alg. 2.1 lines 2–3).
    pub fn fit(
        kernel: Kernel,
        noise_variance: f64,
        x: Mat<f64>,
        y: Vec<f64>,
        jitter: &JitterPolicy,
    ) -> Result<Self> {
        Self::fit_with_known_noise(kernel, noise_variance, Vec::new(), x, y, jitter)
    }

    /// [`ExactGp::fit`] with known noise variances `known` added on the diagonal,
    /// `C = K + σ²I + diag(a)` (scikit-learn's `alpha`; empty: none).
    pub fn fit_with_known_noise(
        kernel: Kernel,
        noise_variance: f64,
        known: Vec<f64>,
        x: Mat<f64>,
        y: Vec<f64>,
        jitter: &JitterPolicy,
    ) -> Result<Self> {
        let pool = Pool::default();
        Ok(Self::fit_keeping_gram(kernel, (noise_variance, known), x, y, jitter, &pool)?.0)
    }

    /// [`ExactGp::fit`], and the noise-free Gram matrix `K` it factored (the gradient reads
    /// `k'` from it instead of computing every exponential again).
    ///
    /// Its `N × N` matrices are taken from `pool` (an objective's buffers from its last
    /// evaluation).
    fn fit_keeping_gram(
        kernel: Kernel,
        (noise_variance, known_noise): (f64, Vec<f64>),
        x: Mat<f64>,
        y: Vec<f64>,
        jitter: &JitterPolicy,
        pool: &Pool,
    ) -> Result<(Self, Mat<f64>)> {
        check_regression_inputs(x.as_ref(), &y)?;
        check_row_noise(noise_variance, &known_noise, y.len())?;
        kernel.check_input_dim(x.ncols())?;
        let n = x.nrows();
        let storage = match kernel.gram_uses_storage() {
            true => Some(pool.take(n, n, "a kernel matrix K(X, X)")?),
            false => None,
        };
        let gram = kernel.gram_in(x.as_ref(), storage)?;
        let row_noise = |i: usize| noise_variance + known_noise.get(i).copied().unwrap_or(0.0);
        let chol = Cholesky::factor_plus_diag_in(
            gram.as_ref(),
            row_noise,
            Some(pool.take(n, n, "K + σ²I")?),
            jitter,
            "K + σ²I",
        )?;
        let alpha = chol.solve_vec(&y);
        let gp = Self {
            kernel,
            noise_variance,
            known_noise,
            x,
            y,
            chol,
            alpha,
        };
        Ok((gp, gram))
    }

    /// Training inputs.
    pub fn x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// Training targets.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// `α = C⁻¹ y`.
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// The Cholesky factor of `C = K + σ²I` (with its jitter).
    pub fn cholesky(&self) -> &Cholesky {
        &self.chol
    }

    /// Row i's noise variance `λᵢ = σ² + aᵢ`.
    pub fn row_noise(&self, i: usize) -> f64 {
        self.noise_variance + self.known_noise.get(i).copied().unwrap_or(0.0)
    }

    /// Jitter that was added to `C` (0 if none).
    pub fn jitter_used(&self) -> f64 {
        self.chol.jitter()
    }

    /// Parameters `[θ_kernel…, ln σ²]`.
    pub fn params(&self) -> Vec<f64> {
        let mut p = self.kernel.params();
        p.push(self.noise_variance.ln());
        p
    }

    /// `ln p(y | X, θ) = −½ yᵀα − Σ ln L_ii − (N/2) ln 2π` (GPML eq. 2.30, Alg. 2.1 l. 8).
    pub fn log_marginal_likelihood(&self) -> f64 {
        self.lml_of(&self.y, &self.alpha)
    }

    /// GPML eq. 2.30 for targets `y` with `α = C⁻¹y` at this model's `C`.
    fn lml_of(&self, y: &[f64], alpha: &[f64]) -> f64 {
        let n = y.len() as f64;
        -0.5 * linalg::dot(y, alpha)
            - 0.5 * self.chol.ln_det()
            - 0.5 * n * (2.0 * std::f64::consts::PI).ln()
    }

    /// The same GP (kernel, noise, inputs and factor of `C`) conditioned on other targets
    /// `y` at the same inputs: one output of a multi-output fit that shares θ and σ².
    pub fn with_targets(&self, y: Vec<f64>) -> Result<Self> {
        check_regression_inputs(self.x.as_ref(), &y)?;
        let alpha = self.chol.solve_vec(&y);
        Ok(Self {
            kernel: self.kernel.clone(),
            noise_variance: self.noise_variance,
            known_noise: self.known_noise.clone(),
            x: self.x.clone(),
            y,
            chol: self.chol.try_clone()?,
            alpha,
        })
    }

    /// Gradient of the log marginal likelihood in `[θ_kernel…, ln σ²]` (GPML eq. 5.9):
    /// `½ tr((ααᵀ − C⁻¹) ∂C/∂θ_j)`; [`crate::Error::OutOfMemory`] where `C⁻¹` (N × N) cannot
    /// be had.
    pub fn lml_gradient(&self) -> Result<Vec<f64>> {
        self.lml_gradient_on(None, &Pool::default(), &[])
    }

    /// [`ExactGp::lml_gradient`], with this model's noise-free Gram matrix `gram` where given
    /// (used up as scratch): `k'` is then read from it, no exponential computed again. Its
    /// `N × N` work matrices come from `pool` and go back to it, with `gram`.
    ///
    /// With `shared`, the weights `α_kα_kᵀ − C⁻¹` of more targets at the same `C` are added:
    /// the gradient of the summed evidence of targets that share θ and σ².
    fn lml_gradient_on(
        &self,
        gram: Option<Mat<f64>>,
        pool: &Pool,
        shared: &[Vec<f64>],
    ) -> Result<Vec<f64>> {
        let n = self.alpha.len();
        let (mut g, l_inv) = self
            .chol
            .inverse_lower_in(pool.kept(n, n), pool.kept(n, n))?;
        pool.give(l_inv);
        let alphas: Vec<&[f64]> = std::iter::once(self.alpha.as_slice())
            .chain(shared.iter().map(Vec::as_slice))
            .collect();
        let targets = alphas.len() as f64;
        g.par_col_iter_mut().enumerate().for_each(|(j, col)| {
            let col = col
                .try_as_col_major_mut()
                .expect("an owned matrix has contiguous columns")
                .as_slice_mut();
            for i in j..n {
                let outer: f64 = alphas.iter().map(|a| a[i] * a[j]).sum();
                col[i] = 0.5 * (outer - targets * col[i]);
            }
        });
        // Whole: a kernel without a symmetric fast path reads both triangles.
        linalg::symmetrise_from_lower(&mut g);
        let out = match gram {
            Some(mut k) => {
                let out = self.kernel.gram_adjoint_in(self.x.as_ref(), &mut k, &g);
                pool.give(k);
                out
            }
            None => self
                .kernel
                .gram_grad_contract_symmetric(self.x.as_ref(), g.as_ref(), None),
        };
        let out = self.with_noise_term(out, g.as_ref());
        pool.give(g);
        Ok(out)
    }

    /// `Σ_ij G_ij ∂C_ij/∂p` for every parameter p = `[θ…, ln σ²]` (`∂C/∂ln σ² = σ² I`).
    pub(crate) fn contract(&self, g: MatRef<'_, f64>) -> Vec<f64> {
        let out = self.kernel.gram_grad_contract(self.x.as_ref(), g);
        self.with_noise_term(out, g)
    }

    /// Appends `σ² tr G`, the noise parameter's entry.
    fn with_noise_term(&self, mut out: Vec<f64>, g: MatRef<'_, f64>) -> Vec<f64> {
        let tr: f64 = (0..g.nrows()).map(|i| g[(i, i)]).sum();
        out.push(self.noise_variance * tr);
        out
    }

    /// The posterior as the shared type: site form with `πᵢ = 1/√λᵢ` (`λᵢ = σ² + aᵢ`),
    /// `α = C⁻¹y`.
    ///
    /// `B = I + ΠKΠ = ΠCΠ`, so its Cholesky is `ΠL`, row i of `L` scaled by `πᵢ` (any jitter
    /// j on `C` acts as extra noise; recorded as `j/min λᵢ`, the most it adds to a row of
    /// `B`); [`crate::Error::OutOfMemory`] where that N×N copy cannot be had.
    pub fn posterior(&self) -> Result<GaussianPosterior> {
        let n = self.y.len();
        let pi: Vec<f64> = (0..n).map(|i| 1.0 / self.row_noise(i).sqrt()).collect();
        let l = self.chol.l();
        let lb = crate::memory::try_from_fn(n, n, "the posterior's factor ΠL", |i, j| {
            if i >= j {
                l[(i, j)] * pi[i]
            } else {
                0.0
            }
        })?;
        let least_noise = (0..n)
            .map(|i| self.row_noise(i))
            .fold(f64::INFINITY, f64::min);
        Ok(GaussianPosterior::sites(
            self.kernel.clone(),
            self.x.clone(),
            self.alpha.clone(),
            pi,
            Cholesky::from_lower(lb, self.chol.jitter() / least_noise),
        ))
    }

    /// Predictive mean, latent variance and observation variance at `xs`.
    pub fn predict(&self, xs: MatRef<'_, f64>) -> Result<Predictive> {
        let Marginals { mean, var } = self.posterior()?.predict(xs)?;
        let noisy_var = var.iter().map(|v| v + self.noise_variance).collect();
        Ok(Predictive {
            mean,
            latent_var: var,
            noisy_var,
        })
    }
}
