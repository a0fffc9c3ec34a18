//! Leave-one-out estimates.
//!
//! Exact GP regression has LOO in closed form (Rasmussen & Williams §5.4.2, eqs. 5.10–5.13):
//! with `C = K + σ²I`, `α = C⁻¹y`,
//! `μ_{−i} = y_i − α_i/[C⁻¹]_ii`, `σ²_{−i} = 1/[C⁻¹]_ii`.
//! [`exact_loo_by_refit`] is the brute-force reference for any model.

use faer::MatRef;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg::JitterPolicy;
use crate::optim::Objective;
use crate::regression::exact::ExactGp;

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Leave-one-out predictive marginals and their summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LooResult {
    /// `μ_{−i}`: prediction at `x_i` from the other N−1 points.
    pub mean: Vec<f64>,
    /// `σ²_{−i}`: predictive variance of `y_i` (noise included).
    pub var: Vec<f64>,
    /// `Σ_i ln p(y_i | X_{−i}, y_{−i})` (GPML eq. 5.11).
    pub log_predictive: f64,
}

impl LooResult {
    /// Mean squared LOO error.
    pub fn mse(&self, y: &[f64]) -> f64 {
        self.mean
            .iter()
            .zip(y)
            .map(|(m, y)| (m - y).powi(2))
            .sum::<f64>()
            / y.len() as f64
    }
}

/// Closed-form LOO of an exact GP (GPML eq. 5.12).
pub fn exact_gp_loo(gp: &ExactGp) -> LooResult {
    let cinv_diag = gp.cholesky().inverse_diag();
    let (y, a) = (gp.y(), gp.alpha());
    let mean: Vec<f64> = (0..y.len()).map(|i| y[i] - a[i] / cinv_diag[i]).collect();
    let var: Vec<f64> = cinv_diag.iter().map(|c| 1.0 / c).collect();
    let log_predictive = (0..y.len())
        .map(|i| -0.5 * var[i].ln() - (y[i] - mean[i]).powi(2) / (2.0 * var[i]) - 0.5 * LN_2PI)
        .sum();
    LooResult {
        mean,
        var,
        log_predictive,
    }
}

/// Gradient of the LOO log predictive probability in `[θ…, ln σ²]` (GPML eq. 5.13).
///
/// With `c_i = [C⁻¹]_ii`, `a_i = α_i/c_i`, `b_i = −½(1 + α_i²/c_i)/c_i`, the derivative is
/// `tr(G ∂C/∂θ_j)` with `G = (C⁻¹a) αᵀ + C⁻¹ diag(b) C⁻¹`.
pub fn exact_gp_loo_gradient(gp: &ExactGp) -> Vec<f64> {
    let cinv = gp.cholesky().inverse();
    let n = cinv.nrows();
    let alpha = gp.alpha();
    let c: Vec<f64> = (0..n).map(|i| cinv[(i, i)]).collect();
    let a: Vec<f64> = (0..n).map(|i| alpha[i] / c[i]).collect();
    let b: Vec<f64> = (0..n)
        .map(|i| -0.5 * (1.0 + alpha[i] * alpha[i] / c[i]) / c[i])
        .collect();
    let cinv_a = gp.cholesky().solve_vec(&a);
    // C⁻¹ diag(b) C⁻¹
    let scaled = faer::Mat::from_fn(n, n, |i, j| cinv[(i, j)] * b[i]);
    let mut g = &cinv * &scaled;
    for j in 0..n {
        for i in 0..n {
            g[(i, j)] += cinv_a[i] * alpha[j];
        }
    }
    gp.contract(g.as_ref())
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
        let v = -exact_gp_loo(&m).log_predictive;
        let g = exact_gp_loo_gradient(&m).into_iter().map(|g| -g).collect();
        Ok((v, g))
    }
}

/// Brute-force LOO: `fit_predict(train_idx, i)` refits on all points but `i` and returns the
/// predictive `(mean, variance)` at point `i`. Used to check fast formulas.
pub fn exact_loo_by_refit<F>(n: usize, mut fit_predict: F) -> Result<Vec<(f64, f64)>>
where
    F: FnMut(&[usize], usize) -> Result<(f64, f64)>,
{
    (0..n)
        .map(|i| {
            let train: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            fit_predict(&train, i)
        })
        .collect()
}
