//! Laplace approximation for GP classification (GPML Alg. 3.1 and 3.2), Newton's method in
//! the stable `B = I + W½KW½` form with step halving; any log-concave likelihood.
//!
//! [`laplace_warm`] starts Newton from a previous mode `f̂` (ML-II evaluations at nearby θ
//! then take a few steps instead of a full solve); the evidence gradient lives in
//! [`super::evidence`].

use faer::{Mat, MatRef};

use super::{check_classification, ClassifierFit, ConvergenceReport, ConvergenceStatus, Problem};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::{Likelihood, LogLikDerivs};
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::GaussianPosterior;

mod method;
pub use method::LaplaceSpec;
pub(crate) use method::NEWTON_STEPS;

/// Settings of [`laplace`].
#[derive(Clone, Copy, Debug)]
pub struct LaplaceConfig {
    /// Maximum Newton steps.
    pub max_iter: usize,
    /// Stop after a full Newton step that changed the objective Ψ(f) by less than this.
    /// Newton converges quadratically near the mode: after a full step that gained `c` the
    /// remaining gap is `≈ C c²` (C ≈ 0.01–0.03 on the n = 2000 benchmark, ~100 on a small
    /// test problem), so the default 1e-6 leaves a gap below 1e-10.
    pub tol: f64,
}

impl Default for LaplaceConfig {
    fn default() -> Self {
        Self {
            max_iter: 100,
            tol: 1e-6,
        }
    }
}

/// The latent value `m₀_i + f_i` of offset `f` under a prior mean `m₀` (none: 0).
fn latent(m0: Option<&[f64]>, i: usize, f: f64) -> f64 {
    m0.map_or(f, |m| m[i] + f)
}

/// Ψ(f) = −½ aᵀf + Σ ln p(y_i|m₀_i + f_i) with f = K a (GPML eq. 3.12; with a prior mean m₀,
/// f is the offset from it).
fn psi(lik: &Likelihood, y: &[f64], m0: Option<&[f64]>, a: &[f64], f: &[f64]) -> f64 {
    -0.5 * linalg::dot(a, f)
        + y.iter()
            .zip(f)
            .enumerate()
            .map(|(i, (y, f))| lik.ln_p_derivs(*y, latent(m0, i, *f)).ln_p)
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
    linalg::mat_vec(k, v)
}

/// `B = I + diag(s) K diag(s)` and its Cholesky, built in `storage` when given (a previous
/// factor's, see [`Cholesky::into_storage`]), the columns of `B` filled in parallel.
pub(crate) fn chol_b_in(
    k: &Mat<f64>,
    s: &[f64],
    storage: Option<Mat<f64>>,
    what: &'static str,
) -> Result<Cholesky> {
    Cholesky::factor_filled(
        s.len(),
        linalg::fill_site_b(k, s, 0.0),
        storage,
        &JitterPolicy::default(),
        what,
    )
}

fn sqrt_w(d: &[LogLikDerivs]) -> Vec<f64> {
    d.iter().map(|d| (-d.d2).max(0.0).sqrt()).collect()
}

/// The state of Newton's method at one `f`: likelihood derivatives, `√W` and `chol(B)`.
struct NewtonPoint {
    derivs: Vec<LogLikDerivs>,
    sw: Vec<f64>,
    chol: Cholesky,
}

impl NewtonPoint {
    /// Derivatives and `chol(B)` at offset `f` from the prior mean `m0` (in `storage` when
    /// given).
    fn at(
        k: &Mat<f64>,
        lik: &Likelihood,
        (y, m0): (&[f64], Option<&[f64]>),
        f: &[f64],
        storage: Option<Mat<f64>>,
    ) -> Result<Self> {
        let derivs: Vec<_> = y
            .iter()
            .zip(f)
            .enumerate()
            .map(|(i, (y, f))| lik.ln_p_derivs(*y, latent(m0, i, *f)))
            .collect();
        let sw = sqrt_w(&derivs);
        let chol = chol_b_in(k, &sw, storage, "I + W½KW½")?;
        Ok(Self { derivs, sw, chol })
    }

    /// The full Newton step's `a` (GPML Alg. 3.1 l. 6–8): `b = Wf + ∇ln p`,
    /// `a = b − W½ B⁻¹ W½ K b`. It depends on `f` only, not on the `a` that produced it.
    fn newton_a(&self, k: &Mat<f64>, f: &[f64]) -> Vec<f64> {
        let sw = &self.sw;
        let b: Vec<f64> = (0..f.len())
            .map(|i| sw[i] * sw[i] * f[i] + self.derivs[i].d1)
            .collect();
        let kb = mat_vec(k, &b);
        let swkb: Vec<f64> = sw.iter().zip(&kb).map(|(s, v)| s * v).collect();
        let sol = self.chol.solve_vec(&swkb);
        (0..f.len()).map(|i| b[i] - sw[i] * sol[i]).collect()
    }
}

/// Newton's method for the mode (GPML Alg. 3.1). With `f0` (the mode at nearby
/// hyperparameters) the first step is taken from `f0` (the Newton step needs `f` only) and
/// kept when it beats `a = 0`; `a = K⁻¹f0` itself is never formed. With a prior mean `m0`
/// (the split prior's `P_A`), Newton runs on the offset `f = f_latent − m0` (GPML Alg. 3.1
/// in the prior `N(m0, K)`), and the mode's `f` is that offset. Every factorisation reuses
/// the storage of the previous one.
pub(crate) fn find_mode(
    k: Mat<f64>,
    lik: &Likelihood,
    y: &[f64],
    cfg: &LaplaceConfig,
    f0: Option<&[f64]>,
    m0: Option<&[f64]>,
) -> Result<LaplaceMode> {
    if let Some(m) = m0.filter(|m| m.len() != y.len()) {
        return Err(Error::ShapeMismatch {
            what: "Laplace prior mean",
            expected: format!("{} entries", y.len()),
            found: format!("{}", m.len()),
        });
    }
    let n = y.len();
    let (mut a, mut f) = (vec![0.0; n], vec![0.0; n]);
    let mut obj = psi(lik, y, m0, &a, &f);
    let mut storage = None;
    let mut jitter = 0.0f64;
    // Newton steps taken before the loop (the one from f0), counted in the report.
    let warm_steps = usize::from(f0.is_some());
    if let Some(f0) = f0 {
        if f0.len() != n {
            return Err(Error::ShapeMismatch {
                what: "Laplace warm start f0",
                expected: format!("{n} entries"),
                found: format!("{}", f0.len()),
            });
        }
        if let Some(i) = f0.iter().position(|v| !v.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "Laplace warm start f0",
                value: f0[i],
                reason: "must be finite",
            });
        }
        let p = NewtonPoint::at(&k, lik, (y, m0), f0, None)?;
        jitter = p.chol.jitter();
        let a1 = p.newton_a(&k, f0);
        let f1 = mat_vec(&k, &a1);
        let obj1 = psi(lik, y, m0, &a1, &f1);
        if obj1 > obj {
            (a, f, obj) = (a1, f1, obj1);
        }
        storage = Some(p.chol.into_storage());
    }
    let (mut status, mut iterations, mut change) =
        (ConvergenceStatus::MaxIterations, 0, f64::INFINITY);
    for it in 0..cfg.max_iter {
        iterations = warm_steps + it + 1;
        let p = NewtonPoint::at(&k, lik, (y, m0), &f, storage.take())?;
        jitter = jitter.max(p.chol.jitter());
        let a_new = p.newton_a(&k, &f);
        // Step halving on Ψ along a_new − a (the full step can overshoot far from the mode).
        // f = K a is linear in a, so f along the step is interpolated, not recomputed.
        let f_new = mat_vec(&k, &a_new);
        let mut step = 1.0;
        let (mut a_try, mut f_try, mut obj_try);
        loop {
            a_try = lerp(&a, &a_new, step);
            f_try = lerp(&f, &f_new, step);
            obj_try = psi(lik, y, m0, &a_try, &f_try);
            if obj_try >= obj - 1e-12 * obj.abs() || step < 1e-6 {
                break;
            }
            step *= 0.5;
        }
        change = (obj_try - obj).abs();
        (a, f, obj) = (a_try, f_try, obj_try);
        storage = Some(p.chol.into_storage());
        if change < cfg.tol && step == 1.0 {
            status = ConvergenceStatus::Converged;
            break;
        }
    }
    // Posterior at the mode (GPML Alg. 3.2): W and chol(B) at f̂ itself (ln|B| is not
    // stationary in f, so the factor of the last Newton point would be off to first order).
    let point = NewtonPoint::at(&k, lik, (y, m0), &f, storage.take())?;
    jitter = jitter.max(point.chol.jitter());
    // GPML Alg. 3.2 l. 10 / eq. 3.32: ln q = Ψ(f̂) − Σ ln L_ii.
    let ln_evidence = obj - 0.5 * point.chol.ln_det();
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
        derivs: point.derivs,
        sw: point.sw,
        chol: point.chol,
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
            posterior: GaussianPosterior::sites(
                kernel.clone(),
                x.to_owned(),
                alpha,
                self.sw,
                self.chol,
            ),
            ln_evidence: Some(self.ln_evidence),
            basis_indices: None,
            report: self.report,
        }
    }
}

/// Validate the problem and find the mode.
pub(crate) fn mode(p: Problem<'_>, cfg: &LaplaceConfig, f0: Option<&[f64]>) -> Result<LaplaceMode> {
    let Problem { kernel, lik, x, y } = p;
    lik.require_derivatives("Laplace")?;
    check_classification(x, y, lik)?;
    kernel.check_input_dim(x.ncols())?;
    find_mode(kernel.gram(x)?, lik, y, cfg, f0, None)
}

/// Find the posterior mode and return the Laplace posterior (sites `π = W`, `α = ∇ln p(f̂)`).
pub fn laplace(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &LaplaceConfig,
) -> Result<ClassifierFit> {
    Ok(mode(Problem { kernel, lik, x, y }, cfg, None)?.into_fit(kernel, x))
}

/// [`laplace`] with Newton started from `f0`, the mode `f̂` of a fit at nearby
/// hyperparameters (its posterior mean at the training inputs); falls back to `f = 0` when
/// the first Newton step from `f0` ends at a lower Ψ. `f0` must have one finite entry per
/// training point.
pub fn laplace_warm(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &LaplaceConfig,
    f0: &[f64],
) -> Result<ClassifierFit> {
    Ok(mode(Problem { kernel, lik, x, y }, cfg, Some(f0))?.into_fit(kernel, x))
}
