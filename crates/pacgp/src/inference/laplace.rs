//! Laplace approximation for GP classification (GPML Alg. 3.1 and 3.2), Newton's method in
//! the stable `B = I + W½KW½` form with step halving; any log-concave likelihood.
//!
//! [`laplace_warm`] starts Newton from a previous mode's `a = K⁻¹f̂` (ML-II evaluations at
//! nearby θ then take a few steps instead of a full solve); the evidence gradient lives in
//! [`super::evidence`].

use faer::{Mat, MatRef};

use super::{check_classification, ClassifierFit, ConvergenceReport, ConvergenceStatus};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::{Likelihood, LogLikDerivs};
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::{Covariance, GaussianPosterior};

/// Settings of [`laplace`].
#[derive(Clone, Copy, Debug)]
pub struct LaplaceConfig {
    /// Maximum Newton steps.
    pub max_iter: usize,
    /// Stop when the objective Ψ(f) changes by less than this.
    pub tol: f64,
}

impl Default for LaplaceConfig {
    fn default() -> Self {
        Self {
            max_iter: 100,
            tol: 1e-10,
        }
    }
}

/// Ψ(f) = −½ aᵀf + Σ ln p(y_i|f_i) with f = K a (GPML eq. 3.12).
fn psi(lik: &Likelihood, y: &[f64], a: &[f64], f: &[f64]) -> f64 {
    -0.5 * linalg::dot(a, f)
        + y.iter()
            .zip(f)
            .map(|(y, f)| lik.ln_p_derivs(*y, *f).ln_p)
            .sum::<f64>()
}

/// Everything at the Laplace mode that the posterior and the evidence gradient need.
pub(crate) struct LaplaceMode {
    /// Prior covariance `K` of the training inputs.
    pub k: Mat<f64>,
    /// `a = K⁻¹f̂ = ∇ln p(y|f̂)` at the mode.
    pub a: Vec<f64>,
    /// The mode `f̂`.
    pub f: Vec<f64>,
    /// `ln p(y_i|f̂_i)` and its derivatives.
    pub derivs: Vec<LogLikDerivs>,
    /// `√W`, `W = −∇∇ln p(y|f̂)`.
    pub sw: Vec<f64>,
    /// Cholesky of `B = I + W½KW½` at the mode.
    pub chol: Cholesky,
    /// `ln q(y|X,θ) = Ψ(f̂) − ½ ln|B|` (GPML eq. 3.32).
    pub ln_evidence: f64,
    /// How Newton went.
    pub report: ConvergenceReport,
}

/// `K v` as a vector.
pub(crate) fn mat_vec(k: &Mat<f64>, v: &[f64]) -> Vec<f64> {
    linalg::col_to_vec((k * linalg::col_from_slice(v)).as_ref())
}

/// `B = I + diag(s) K diag(s)` and its Cholesky.
pub(crate) fn chol_b(k: &Mat<f64>, s: &[f64], what: &'static str) -> Result<Cholesky> {
    let n = s.len();
    let b = Mat::from_fn(n, n, |i, j| {
        s[i] * k[(i, j)] * s[j] + if i == j { 1.0 } else { 0.0 }
    });
    Cholesky::factor(b.as_ref(), &JitterPolicy::default(), what)
}

fn sqrt_w(d: &[LogLikDerivs]) -> Vec<f64> {
    d.iter().map(|d| (-d.d2).max(0.0).sqrt()).collect()
}

/// Newton's method for the mode (GPML Alg. 3.1), from `a0` when it is given and better
/// than `a = 0`.
pub(crate) fn find_mode(
    k: Mat<f64>,
    lik: &Likelihood,
    y: &[f64],
    cfg: &LaplaceConfig,
    a0: Option<&[f64]>,
) -> Result<LaplaceMode> {
    let n = y.len();
    let (mut a, mut f) = (vec![0.0; n], vec![0.0; n]);
    let mut obj = psi(lik, y, &a, &f);
    if let Some(a0) = a0 {
        if a0.len() != n {
            return Err(Error::ShapeMismatch {
                what: "Laplace warm start a0",
                expected: format!("{n} entries"),
                found: format!("{}", a0.len()),
            });
        }
        let f0 = mat_vec(&k, a0);
        let obj0 = psi(lik, y, a0, &f0);
        if obj0 > obj {
            (a, f, obj) = (a0.to_vec(), f0, obj0);
        }
    }
    let (mut status, mut iterations, mut change, mut jitter) =
        (ConvergenceStatus::MaxIterations, 0, f64::INFINITY, 0.0f64);
    for it in 0..cfg.max_iter {
        iterations = it + 1;
        // GPML Alg. 3.1 l. 4–8: Newton direction in the a = K⁻¹f parametrisation.
        let d: Vec<_> = (0..n).map(|i| lik.ln_p_derivs(y[i], f[i])).collect();
        let sw = sqrt_w(&d);
        let l = chol_b(&k, &sw, "I + W½KW½")?;
        jitter = jitter.max(l.jitter());
        let b: Vec<f64> = (0..n).map(|i| sw[i] * sw[i] * f[i] + d[i].d1).collect();
        let kb = mat_vec(&k, &b);
        let swkb: Vec<f64> = (0..n).map(|i| sw[i] * kb[i]).collect();
        let sol = l.solve_vec(&swkb);
        let a_new: Vec<f64> = (0..n).map(|i| b[i] - sw[i] * sol[i]).collect();
        // Step halving on Ψ along a_new − a (the full step can overshoot far from the mode).
        // f = K a is linear in a, so f along the step is interpolated, not recomputed.
        let f_new = mat_vec(&k, &a_new);
        let mut step = 1.0;
        let (mut a_try, mut f_try, mut obj_try);
        loop {
            a_try = lerp(&a, &a_new, step);
            f_try = lerp(&f, &f_new, step);
            obj_try = psi(lik, y, &a_try, &f_try);
            if obj_try >= obj - 1e-12 * obj.abs() || step < 1e-6 {
                break;
            }
            step *= 0.5;
        }
        change = (obj_try - obj).abs();
        a = a_try;
        f = f_try;
        obj = obj_try;
        if change < cfg.tol {
            status = ConvergenceStatus::Converged;
            break;
        }
    }
    // Posterior at the mode (GPML Alg. 3.2): sites √W and L of B.
    let derivs: Vec<_> = (0..n).map(|i| lik.ln_p_derivs(y[i], f[i])).collect();
    let sw = sqrt_w(&derivs);
    let chol = chol_b(&k, &sw, "I + W½KW½")?;
    jitter = jitter.max(chol.jitter());
    // GPML Alg. 3.2 l. 10 / eq. 3.32: ln q = Ψ(f̂) − Σ ln L_ii.
    let ln_evidence = psi(lik, y, &a, &f) - 0.5 * chol.ln_det();
    if !ln_evidence.is_finite() {
        return Err(Error::Numerical {
            what: "Laplace log evidence",
            message: format!("non-finite value {ln_evidence}"),
        });
    }
    Ok(LaplaceMode {
        k,
        a,
        f,
        derivs,
        sw,
        chol,
        ln_evidence,
        report: ConvergenceReport {
            status,
            iterations,
            final_change: change,
            jitter_used: jitter,
            notes: vec![],
        },
    })
}

/// `x + t (z − x)`.
fn lerp(x: &[f64], z: &[f64], t: f64) -> Vec<f64> {
    x.iter().zip(z).map(|(x, z)| x + t * (z - x)).collect()
}

impl LaplaceMode {
    /// The fitted classifier: sites `π = W`, mean weights `α = ∇ln p(f̂)`.
    pub(crate) fn into_fit(self, kernel: &Kernel, x: MatRef<'_, f64>) -> ClassifierFit {
        let alpha: Vec<f64> = self.derivs.iter().map(|d| d.d1).collect();
        ClassifierFit {
            posterior: GaussianPosterior {
                kernel: kernel.clone(),
                basis: x.to_owned(),
                alpha,
                cov: Covariance::Sites {
                    sqrt_pi: self.sw,
                    chol_b: self.chol,
                },
            },
            ln_evidence: Some(self.ln_evidence),
            basis_indices: None,
            report: self.report,
        }
    }
}

/// Validate the problem and find the mode.
pub(crate) fn mode(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &LaplaceConfig,
    a0: Option<&[f64]>,
) -> Result<LaplaceMode> {
    lik.require_derivatives("Laplace")?;
    check_classification(x, y, lik)?;
    kernel.check_input_dim(x.ncols())?;
    find_mode(kernel.gram(x), lik, y, cfg, a0)
}

/// Find the posterior mode and return the Laplace posterior (sites `π = W`, `α = ∇ln p(f̂)`).
pub fn laplace(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &LaplaceConfig,
) -> Result<ClassifierFit> {
    Ok(mode(kernel, lik, x, y, cfg, None)?.into_fit(kernel, x))
}

/// [`laplace`] with Newton started from `a0` (e.g. the `posterior.alpha` of a fit at nearby
/// hyperparameters: at the mode `α = a = K⁻¹f̂`); falls back to `a = 0` when that start has
/// a lower Ψ. `a0` must have one entry per training point.
pub fn laplace_warm(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &LaplaceConfig,
    a0: &[f64],
) -> Result<ClassifierFit> {
    Ok(mode(kernel, lik, x, y, cfg, Some(a0))?.into_fit(kernel, x))
}
