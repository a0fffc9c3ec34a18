//! Closed-form leave-one-out of exact GP regression (Rasmussen & Williams §5.4.2,
//! eqs. 5.10–5.13): with `C = K + σ²I`, `α = C⁻¹y`,
//! `μ_{−i} = y_i − α_i/[C⁻¹]_ii`, `σ²_{−i} = 1/[C⁻¹]_ii`; its gradient and the LOO-CV
//! objective. (The same means and latent variances come out of the site-form cavities of
//! [`super::cavity`]; this module keeps the regression-specific form and its gradient.)

use faer::MatRef;

use super::LooResult;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg::JitterPolicy;
use crate::optim::Objective;
use crate::regression::exact::ExactGp;

/// Closed-form LOO of an exact GP (GPML eq. 5.12); [`crate::Error::OutOfMemory`] where the
/// N × N inverse of its factor cannot be had.
pub fn exact_gp_loo(gp: &ExactGp) -> Result<LooResult> {
    let cinv_diag = gp.cholesky().inverse_diag()?;
    let (y, a) = (gp.y(), gp.alpha());
    let mean: Vec<f64> = (0..y.len()).map(|i| y[i] - a[i] / cinv_diag[i]).collect();
    let var: Vec<f64> = cinv_diag.iter().map(|c| 1.0 / c).collect();
    Ok(LooResult::from_predictive(mean, var, y))
}

/// Gradient of the LOO log predictive probability in `[θ…, ln σ²]` (GPML eq. 5.13).
///
/// With `c_i = [C⁻¹]_ii`, `a_i = α_i/c_i`, `b_i = −½(1 + α_i²/c_i)/c_i`, the derivative is
/// `tr(G ∂C/∂θ_j)` with `G = (C⁻¹a) αᵀ + C⁻¹ diag(b) C⁻¹`.
/// [`crate::Error::OutOfMemory`] where its N × N weights cannot be had.
pub fn exact_gp_loo_gradient(gp: &ExactGp) -> Result<Vec<f64>> {
    let cinv = gp.cholesky().inverse()?;
    let n = cinv.nrows();
    let alpha = gp.alpha();
    let c: Vec<f64> = (0..n).map(|i| cinv[(i, i)]).collect();
    let a: Vec<f64> = (0..n).map(|i| alpha[i] / c[i]).collect();
    let b: Vec<f64> = (0..n)
        .map(|i| -0.5 * (1.0 + alpha[i] * alpha[i] / c[i]) / c[i])
        .collect();
    let cinv_a = gp.cholesky().solve_vec(&a);
    // C⁻¹ diag(b) C⁻¹
    let scaled = crate::memory::try_from_fn(n, n, "C⁻¹ diag(b)", |i, j| cinv[(i, j)] * b[i])?;
    let mut g =
        crate::linalg::try_product(cinv.as_ref(), scaled.as_ref(), "the LOO gradient's weights")?;
    for j in 0..n {
        for i in 0..n {
            g[(i, j)] += cinv_a[i] * alpha[j];
        }
    }
    Ok(gp.contract(g.as_ref()))
}

/// Negative LOO log predictive probability over `[θ…, ln σ²]`: LOO-CV hyperparameter
/// training (GPML §5.4.2).
pub struct NegLooLogPredictive<'a> {
    inner: crate::regression::exact::NegLogMarginalLikelihood<'a>,
    n_params: usize,
}

impl<'a> NegLooLogPredictive<'a> {
    /// The objective for `kernel`'s structure on data `(x, y)`.
    pub fn new(kernel: &Kernel, x: MatRef<'a, f64>, y: &'a [f64], jitter: JitterPolicy) -> Self {
        Self {
            inner: crate::regression::exact::NegLogMarginalLikelihood::new(kernel, x, y, jitter),
            n_params: kernel.n_params() + 1,
        }
    }
}

impl Objective for NegLooLogPredictive<'_> {
    fn dim(&self) -> usize {
        self.n_params
    }
    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let m = self.inner.model_at(p)?;
        let v = -exact_gp_loo(&m)?.log_predictive;
        let g = exact_gp_loo_gradient(&m)?.into_iter().map(|g| -g).collect();
        Ok((v, g))
    }
}
