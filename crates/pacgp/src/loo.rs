//! Leave-one-out estimates.
//!
//! Exact GP regression has LOO in closed form (Rasmussen & Williams §5.4.2, eqs. 5.10–5.13):
//! with `C = K + σ²I`, `α = C⁻¹y`,
//! `μ_{−i} = y_i − α_i/[C⁻¹]_ii`, `σ²_{−i} = 1/[C⁻¹]_ii`.
//! [`exact_loo_by_refit`] is the brute-force reference for any model.
//!
//! Naive mean field has the linear-response LOO of seed 001 eqs. 17.41–17.42
//! ([`mean_field_loo`]), checked against refits ([`mean_field_exact_loo`]).

use faer::MatRef;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::inference::mean_field::{
    cavity_moments, mean_field, noisy_gram, MeanFieldConfig, MeanFieldFit,
};
use crate::inference::ConvergenceStatus;
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
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

/// Leave-one-out decisions of a classifier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LooClassification {
    /// Examples whose LOO margin is ≤ 0 (ties count as errors).
    pub errors: usize,
    /// `errors / N`.
    pub rate: f64,
    /// LOO margins `y_i f_i^{\i}`, one per training example.
    pub loo_margins: Vec<f64>,
    /// Refits that stopped at their iteration budget (0 for closed-form estimates).
    pub not_converged: usize,
}

impl LooClassification {
    /// Count errors (margin ≤ 0) from the margins.
    pub fn from_margins(loo_margins: Vec<f64>, not_converged: usize) -> Self {
        let errors = loo_margins.iter().filter(|m| !(**m > 0.0)).count();
        Self {
            errors,
            rate: errors as f64 / loo_margins.len().max(1) as f64,
            loo_margins,
            not_converged,
        }
    }
}

/// The diagonal matrix Ω of seed 001 eq. 17.42, in its general-κ form
/// `Ω_i = −k_ii − √k_ii / α_i'(z_i) = k_ii (1 − c_i)/c_i` with `c_i = −k_ii ∂²ln Z_i/∂m²`
/// (the response of the embedding function, eq. 17.40, to its cavity field). For κ = 0,
/// `c_i = y_i α_i ⟨f_i⟩` and this is eq. 17.42 as printed. Returned as `λ_i = 1/Ω_i` (finite
/// where Ω_i is infinite, i.e. where α_i does not respond), with `k = K + vI`.
pub fn mean_field_response(mf: &MeanFieldFit, y: &[f64]) -> Result<Vec<f64>> {
    check_len(mf, y)?;
    let kn = noisy_gram(
        &mf.fit.posterior.kernel,
        mf.fit.posterior.basis.as_ref(),
        mf.input_noise,
    );
    response(mf, &kn, y)
}

fn check_len(mf: &MeanFieldFit, y: &[f64]) -> Result<()> {
    if y.len() != mf.alpha_mf.len() {
        return Err(Error::ShapeMismatch {
            what: "labels for the mean-field LOO",
            expected: format!("{} labels", mf.alpha_mf.len()),
            found: format!("{}", y.len()),
        });
    }
    Ok(())
}

fn response(mf: &MeanFieldFit, kn: &faer::Mat<f64>, y: &[f64]) -> Result<Vec<f64>> {
    let lik = Likelihood::flip_noise(mf.kappa)?;
    (0..y.len())
        .map(|i| {
            let k = kn[(i, i)];
            let t = cavity_moments(&lik, y[i], mf.mean_activation[i], k, mf.alpha_mf[i])?;
            let c = -k * t.d2;
            if !(c < 1.0 && c.is_finite()) {
                return Err(Error::Numerical {
                    what: "mean-field linear response",
                    message: format!("response c = {c} at example {i} (needs c < 1)"),
                });
            }
            Ok(c / (k * (1.0 - c))) // 1/Ω_i, seed 001 eq. 17.42
        })
        .collect()
}

/// Linear-response leave-one-out estimate for naive mean field (seed 001 eqs. 17.41–17.42):
///
/// `y_i f_i^{\i} = y_i⟨f_i⟩ − {1/[(Ω + K)⁻¹]_ii − Ω_i} α_i`,
///
/// evaluated without dividing by Ω (which is infinite where α_i does not respond) through the
/// Woodbury identity `1/[(Ω + K)⁻¹]_ii − Ω_i = s_i/(1 − λ_i s_i)` with `Λ = Ω⁻¹` and
/// `s_i = [(K⁻¹ + Λ)⁻¹]_ii = [(I + KΛ)⁻¹K]_ii` (one LU solve, `O(N³)`; `K` here is `K + vI`).
/// `y` must be the labels the fit was trained on.
pub fn mean_field_loo(mf: &MeanFieldFit, y: &[f64]) -> Result<LooClassification> {
    use faer::linalg::solvers::Solve;
    check_len(mf, y)?;
    let kn = noisy_gram(
        &mf.fit.posterior.kernel,
        mf.fit.posterior.basis.as_ref(),
        mf.input_noise,
    );
    let lambda = response(mf, &kn, y)?;
    let n = y.len();
    let m = faer::Mat::from_fn(n, n, |i, j| {
        kn[(i, j)] * lambda[j] + if i == j { 1.0 } else { 0.0 }
    });
    let s_mat = m.partial_piv_lu().solve(&kn);
    let margins: Vec<f64> = (0..n)
        .map(|i| {
            let s = s_mat[(i, i)];
            // seed 001 eq. 17.41
            y[i] * mf.mean_activation[i] - mf.alpha_mf[i] * s / (1.0 - lambda[i] * s)
        })
        .collect();
    if let Some(i) = margins.iter().position(|m| !m.is_finite()) {
        return Err(Error::Numerical {
            what: "mean-field linear-response LOO",
            message: format!("non-finite LOO margin at example {i} (singular Ω + K)"),
        });
    }
    Ok(LooClassification::from_margins(margins, 0))
}

/// Exact leave-one-out for naive mean field: N refits on N − 1 examples (from α = 0, as
/// Algorithm 17.1 starts), each predicting `f^{\i}(x_i) = Σ_{j≠i} k(x_i, x_j) y_j α_j^{\i}`
/// (eq. 17.24; the input noise is per example, so it does not enter `j ≠ i`). Refits that hit
/// the iteration budget are counted in `not_converged`.
pub fn mean_field_exact_loo(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &MeanFieldConfig,
) -> Result<LooClassification> {
    crate::inference::check_classification(x, y, lik)?;
    let mut not_converged = 0;
    let preds = exact_loo_by_refit(y.len(), |train, i| {
        let xt = faer::Mat::from_fn(train.len(), x.ncols(), |r, c| x[(train[r], c)]);
        let yt: Vec<f64> = train.iter().map(|&j| y[j]).collect();
        let fit = mean_field(kernel, lik, xt.as_ref(), &yt, cfg)?;
        if fit.fit.report.status == ConvergenceStatus::MaxIterations {
            not_converged += 1;
        }
        let m = fit.fit.posterior.predict(x.subrows(i, 1))?;
        Ok((m.mean[0], m.var[0]))
    })?;
    let margins = preds.iter().zip(y).map(|((m, _), y)| y * m).collect();
    Ok(LooClassification::from_margins(margins, not_converged))
}
