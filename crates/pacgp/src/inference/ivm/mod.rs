//! Assumed density filtering (ADF) and the informative vector machine (IVM) for GP
//! classification (seed 003 §3, §3.1, §3.3.1; Lawrence, Seeger & Herbrich 2002).
//!
//! ADF includes one point at a time: the current Gaussian marginal `N(μ_j, ζ_j)` of the
//! latent `f_j` is multiplied by the likelihood and projected back onto a Gaussian by
//! matching moments. With `g = ∂ln Z_j/∂μ_j` and `ν = −∂²ln Z_j/∂μ_j²` (the tilted moments of
//! [`Likelihood::tilted_moments`]; seed 003 eq. 4) the posterior over all training latents
//! changes by a rank one (seed 003 eq. 5, sign as corrected in docs/math.md §7.4):
//!
//! `μ ← μ + g s`,  `Σ ← Σ − ν s sᵀ`,  `s = Σ e_j`.
//!
//! Σ is never formed: `Σ = K − M Mᵀ` with one column `√ν s` of the n×d matrix `M` per
//! included point, so including the r-th point costs O(n r) plus one kernel column, and d
//! points cost O(n d²) time and O(n d) memory.
//!
//! Each inclusion is the same as multiplying the prior by a Gaussian site
//! `C_j exp(−½ π_j f_j² + ν̃_j f_j)` with (docs/math.md §7.4)
//! `π_j = ν/(1 − ν ζ_j)`, `ν̃_j = π_j m̃_j = (ν μ_j + g)/(1 − ν ζ_j)`,
//! so the final posterior is the site form over the included points I: with
//! `B = I + Π½ K_I Π½`, `β = (K_I + Π⁻¹)⁻¹ m̃ = ν̃ − Π½ B⁻¹ Π½ K_I ν̃` and
//! `μ(x) = k_I(x)ᵀ β`, `v(x) = k(x,x) − ‖L_B⁻¹ Π½ k_I(x)‖²`.
//!
//! IVM chooses the next point greedily by the largest drop of the posterior's differential
//! entropy, `−½ ln(1 − ν_i ζ_i)` (seed 003 §3.3.1), among the points not yet included;
//! ties go to the lowest index.
//!
//! `ln_evidence` is ADF's own estimate of the log marginal likelihood of the included labels,
//! `Σ_j ln Z_j` (the product of the step normalisers). It equals the "site normalisers plus
//! Gaussian part" form `Σ_j ln C_j − ½ ln det B + ½ ν̃ᵀ K_I β` with the sites held fixed
//! (see [`ml2::IvmPseudoLikelihood`]), and is exact for a Gaussian likelihood.
//!
//! Hyperparameter learning (seed 003 §4.3) lives in [`ml2`].

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::{check_classification, ClassifierFit, ConvergenceReport, ConvergenceStatus};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::GaussianPosterior;

mod method;
pub use method::IvmSpec;
pub mod ml2;

/// Settings of [`adf`].
#[derive(Clone, Copy, Debug, Default)]
pub struct AdfConfig {
    /// Jitter policy for the Cholesky of `B = I + Π½ K_I Π½` at the end.
    pub jitter: JitterPolicy,
}

/// Settings of [`ivm`].
#[derive(Clone, Copy, Debug)]
pub struct IvmConfig {
    /// Size d of the active set I (1 ≤ d ≤ n).
    pub active_set: usize,
    /// Jitter policy for the Cholesky of `B = I + Π½ K_I Π½` at the end.
    pub jitter: JitterPolicy,
}

impl IvmConfig {
    /// An active set of `d` points with the default jitter policy.
    pub fn new(active_set: usize) -> Self {
        Self {
            active_set,
            jitter: JitterPolicy::default(),
        }
    }
}

/// One ADF/IVM site, recorded when its point was included (seed 003 §3.1, docs/math.md §7.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Site {
    /// Training row of the point.
    pub index: usize,
    /// Site precision `π_j = ν/(1 − ν ζ_j)` (≥ 0).
    pub precision: f64,
    /// Natural site mean `ν̃_j = π_j m̃_j = (ν μ_j + g)/(1 − ν ζ_j)`.
    pub natural_mean: f64,
    /// Latent mean `μ_{j−1,j}` of the point just before its inclusion (its cavity).
    pub inclusion_mean: f64,
    /// Latent variance `ζ_{j−1,j}` of the point just before its inclusion.
    pub inclusion_var: f64,
    /// `ln Z_j = ln ∫ N(f; μ_{j−1,j}, ζ_{j−1,j}) p(y_j|f) df` (seed 003 eq. 4).
    pub ln_z: f64,
    /// `ln C_j`: the scale of the unnormalised site `C_j exp(−½ π_j f² + ν̃_j f)` that
    /// reproduces `Z_j` against the cavity (a constant in the pseudo-likelihood).
    pub ln_scale: f64,
    /// Differential-entropy reduction `−½ ln(1 − ν ζ_j)` of this inclusion (seed 003 §3.3.1).
    pub entropy_reduction: f64,
}

/// Tilted-moment derivatives of one candidate inclusion.
#[derive(Clone, Copy, Debug)]
struct Step {
    ln_z: f64,
    /// `g = ∂ ln Z/∂μ`.
    g: f64,
    /// `ν = −∂² ln Z/∂μ²` (seed 003's ν, ≥ 0 for log-concave likelihoods).
    nu: f64,
}

impl Step {
    /// Tilted moments at the marginal `N(mean, var)`; `None` if they are unusable
    /// (non-finite, `ν < 0`, or `ν ζ ≥ 1`).
    fn at(lik: &Likelihood, y: f64, mean: f64, var: f64) -> Result<Option<Self>> {
        let t = lik.tilted_moments(y, mean, var)?;
        let s = Step {
            ln_z: t.ln_z,
            g: t.d1,
            nu: -t.d2,
        };
        let ok = s.ln_z.is_finite() && s.g.is_finite() && s.nu >= 0.0 && s.nu * var < 1.0;
        Ok(ok.then_some(s))
    }

    /// `ν ζ`, the quantity the entropy score is monotone in.
    fn nu_zeta(&self, var: f64) -> f64 {
        self.nu * var
    }
}

/// ADF state over all n training latents, `Σ = K − M Mᵀ` held through the columns of `M`.
struct AdfState<'a> {
    kernel: &'a Kernel,
    lik: &'a Likelihood,
    /// Training inputs as contiguous rows (one kernel column costs O(n D), no copy of X).
    rows: Vec<Vec<f64>>,
    y: &'a [f64],
    /// Current marginal means `μ_i`.
    mean: Vec<f64>,
    /// Current marginal variances `ζ_i = Σ_ii`.
    var: Vec<f64>,
    /// Columns `√ν_r s_r` of `M` (each of length n).
    m: Vec<Vec<f64>>,
    included: Vec<bool>,
    sites: Vec<Site>,
}

/// Rows per rayon task when updating n-vectors.
const CHUNK: usize = 512;

impl<'a> AdfState<'a> {
    fn new(
        kernel: &'a Kernel,
        lik: &'a Likelihood,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        capacity: usize,
    ) -> Self {
        let n = y.len();
        Self {
            kernel,
            lik,
            rows: crate::kernel::rows_of(x),
            y,
            mean: vec![0.0; n],
            var: kernel.diag(x),
            m: Vec::with_capacity(capacity),
            included: vec![false; n],
            sites: Vec::with_capacity(capacity),
        }
    }

    /// The step for including point `j` now.
    fn step(&self, j: usize) -> Result<Option<Step>> {
        Step::at(self.lik, self.y[j], self.mean[j], self.var[j].max(0.0))
    }

    /// `s = Σ e_j = k(X, x_j) − M Mᵀ e_j`, O(n r).
    fn covariance_column(&self, j: usize) -> Vec<f64> {
        let xj = &self.rows[j];
        let mut s: Vec<f64> = self
            .rows
            .par_iter()
            .map(|r| self.kernel.eval(r, xj))
            .collect();
        let coefs: Vec<f64> = self.m.iter().map(|col| col[j]).collect();
        let m = &self.m;
        s.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
            let (off, len) = (c * CHUNK, chunk.len());
            for (col, &a) in m.iter().zip(&coefs) {
                for (si, mi) in chunk.iter_mut().zip(&col[off..off + len]) {
                    *si -= a * mi;
                }
            }
        });
        s
    }

    /// Include point `j` with its step (seed 003 eq. 5, sign per docs/math.md §7.4).
    fn include(&mut self, j: usize, st: Step) {
        let (mu_j, zeta_j) = (self.mean[j], self.var[j].max(0.0));
        let s = self.covariance_column(j);
        let root_nu = st.nu.sqrt();
        let g = st.g;
        let (mean, var) = (&mut self.mean, &mut self.var);
        mean.par_chunks_mut(CHUNK)
            .zip(var.par_chunks_mut(CHUNK))
            .zip(s.par_chunks(CHUNK))
            .for_each(|((mc, vc), sc)| {
                for ((m, v), s) in mc.iter_mut().zip(vc.iter_mut()).zip(sc) {
                    *m += g * s; // μ ← μ + g Σe_j
                    *v -= st.nu * s * s; // diag(Σ − ν Σe_j e_jᵀΣ)
                }
            });
        self.m.push(s.iter().map(|s| root_nu * s).collect());
        self.included[j] = true;
        self.sites.push(site_from_step(j, mu_j, zeta_j, st));
    }
}

/// Site parameters of an inclusion (docs/math.md §7.4) and the scale `ln C_j`.
fn site_from_step(index: usize, mu: f64, zeta: f64, st: Step) -> Site {
    let denom = 1.0 - st.nu * zeta; // = 1/(1 + π ζ)
    let pi = st.nu / denom;
    let nu_t = (st.nu * mu + st.g) / denom;
    // ∫ N(f; μ, ζ) C exp(−½πf² + ν̃f) df = Z fixes
    // ln C = ln Z + ½ ln(1 + πζ) − ½ (ν̃²ζ + 2ν̃μ − πμ²)/(1 + πζ).
    let ln_scale = st.ln_z
        - 0.5 * denom.ln()
        - 0.5 * denom * (nu_t * nu_t * zeta + 2.0 * nu_t * mu - pi * mu * mu);
    Site {
        index,
        precision: pi,
        natural_mean: nu_t,
        inclusion_mean: mu,
        inclusion_var: zeta,
        ln_z: st.ln_z,
        ln_scale,
        entropy_reduction: -0.5 * (-st.nu * zeta).ln_1p(),
    }
}

/// Rows `idx` of `x`.
pub(crate) fn select_rows(x: MatRef<'_, f64>, idx: &[usize]) -> Mat<f64> {
    Mat::from_fn(idx.len(), x.ncols(), |r, c| x[(idx[r], c)])
}

/// The site-form posterior over the sites' points: `B = I + Π½ K_I Π½`,
/// `β = ν̃ − Π½ B⁻¹ Π½ K_I ν̃` (docs/math.md §7.4; the same algebra as GPML Alg. 3.5's α).
pub(crate) fn site_posterior(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    sites: &[Site],
    jitter: &JitterPolicy,
) -> Result<(GaussianPosterior, Mat<f64>)> {
    let idx: Vec<usize> = sites.iter().map(|s| s.index).collect();
    let xb = select_rows(x, &idx);
    let kb = kernel.gram(xb.as_ref())?;
    let d = idx.len();
    let sw: Vec<f64> = sites.iter().map(|s| s.precision.max(0.0).sqrt()).collect();
    let b = crate::memory::try_from_fn(d, d, "I + Π½K_IΠ½", |i, j| {
        sw[i] * kb[(i, j)] * sw[j] + if i == j { 1.0 } else { 0.0 }
    })?;
    let chol = Cholesky::factor(b.as_ref(), jitter, "I + Π½K_IΠ½")?;
    let nu_t: Vec<f64> = sites.iter().map(|s| s.natural_mean).collect();
    let knu = linalg::mat_vec(&kb, &nu_t);
    let t = chol.solve_vec(&(0..d).map(|i| sw[i] * knu[i]).collect::<Vec<_>>());
    let beta: Vec<f64> = (0..d).map(|i| nu_t[i] - sw[i] * t[i]).collect();
    let post = GaussianPosterior::sites(kernel.clone(), xb, beta, sw, chol);
    Ok((post, kb))
}

/// Assemble the fit from the sites of an ADF/IVM run.
fn finish(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    sites: &[Site],
    jitter: &JitterPolicy,
    identity_order: bool,
) -> Result<ClassifierFit> {
    let (posterior, _) = site_posterior(kernel, x, sites, jitter)?;
    let zero = sites.iter().filter(|s| s.precision == 0.0).count();
    let mut notes = Vec::new();
    if zero > 0 {
        notes.push(format!(
            "{zero} included sites have precision 0 (ν underflowed: the point carried no information)"
        ));
    }
    let jitter_used = posterior.cov.jitter();
    if jitter_used > 0.0 {
        notes.push(format!("jitter {jitter_used:e} added to I + Π½K_IΠ½"));
    }
    Ok(ClassifierFit {
        posterior,
        ln_evidence: Some(sites.iter().map(|s| s.ln_z).sum()),
        basis_indices: (!identity_order).then(|| sites.iter().map(|s| s.index).collect()),
        report: ConvergenceReport {
            status: ConvergenceStatus::Converged,
            iterations: sites.len(),
            final_change: sites.last().map_or(0.0, |s| s.entropy_reduction),
            jitter_used,
            notes,
        },
    })
}

fn check_inputs(kernel: &Kernel, lik: &Likelihood, x: MatRef<'_, f64>, y: &[f64]) -> Result<()> {
    check_classification(x, y, lik)?;
    kernel.check_input_dim(x.ncols())?;
    lik.tilted_moments(1.0, 0.0, 1.0)?; // rejects likelihoods without closed-form moments
    Ok(())
}

/// ADF over the points `order` (distinct training rows, processed in that sequence), with
/// the sites it produced. O(n r²) time and O(n r) memory for r = `order.len()`.
pub fn adf_sites(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    order: &[usize],
    cfg: &AdfConfig,
) -> Result<(ClassifierFit, Vec<Site>)> {
    check_inputs(kernel, lik, x, y)?;
    let n = y.len();
    if order.is_empty() {
        return Err(Error::Empty { what: "ADF order" });
    }
    let mut seen = vec![false; n];
    for &j in order {
        if j >= n {
            return Err(Error::InvalidParameter {
                name: "ADF order index",
                value: j as f64,
                reason: "must be a training row (< n)",
            });
        }
        if std::mem::replace(&mut seen[j], true) {
            return Err(Error::InvalidParameter {
                name: "ADF order index",
                value: j as f64,
                reason: "appears twice: every point is included at most once",
            });
        }
    }
    let mut state = AdfState::new(kernel, lik, x, y, order.len());
    for &j in order {
        let Some(st) = state.step(j)? else {
            return Err(Error::NumericalBreakdown {
                what: "ADF site update",
                message: format!(
                    "point {j}: unusable tilted moments at mean {:.4e}, variance {:.4e}",
                    state.mean[j], state.var[j]
                ),
                advice: BREAKDOWN_ADVICE,
            });
        };
        state.include(j, st);
    }
    let identity = order.len() == n && order.iter().enumerate().all(|(i, &j)| i == j);
    let fit = finish(kernel, x, &state.sites, &cfg.jitter, identity)?;
    Ok((fit, state.sites))
}

/// ADF (assumed density filtering) over the points `order` in that sequence (seed 003 §3):
/// one moment-matching inclusion per point, ending in the site-form posterior over them.
/// With `order = 0..n` and the probit it equals EP's first sweep (GPML Alg. 3.5).
pub fn adf(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    order: &[usize],
    cfg: &AdfConfig,
) -> Result<ClassifierFit> {
    adf_sites(kernel, lik, x, y, order, cfg).map(|(f, _)| f)
}

/// The IVM with the sites of its active set, in selection order.
pub fn ivm_sites(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &IvmConfig,
) -> Result<(ClassifierFit, Vec<Site>)> {
    check_inputs(kernel, lik, x, y)?;
    let n = y.len();
    let d = cfg.active_set;
    if d == 0 || d > n {
        return Err(Error::InvalidParameter {
            name: "IVM active-set size d",
            value: d as f64,
            reason: "must satisfy 1 ≤ d ≤ n",
        });
    }
    let mut state = AdfState::new(kernel, lik, x, y, d);
    for _ in 0..d {
        let (j, st) = select(&state)?;
        state.include(j, st);
    }
    let fit = finish(kernel, x, &state.sites, &cfg.jitter, false)?;
    Ok((fit, state.sites))
}

/// Seed 003 §3.3.1: the not-yet-included point with the largest entropy reduction
/// `−½ ln(1 − ν_i ζ_i)` (equivalently the largest `ν_i ζ_i`); lowest index on ties.
fn select(state: &AdfState<'_>) -> Result<(usize, Step)> {
    let n = state.y.len();
    let steps: Vec<Option<Step>> = (0..n)
        .into_par_iter()
        .map(|i| {
            if state.included[i] {
                Ok(None)
            } else {
                state.step(i)
            }
        })
        .collect::<Result<_>>()?;
    let mut best: Option<(usize, Step, f64)> = None;
    for (i, st) in steps.into_iter().enumerate() {
        if let Some(st) = st {
            let score = st.nu_zeta(state.var[i].max(0.0));
            if best.is_none_or(|(_, _, b)| score > b) {
                best = Some((i, st, score));
            }
        }
    }
    best.map(|(i, st, _)| (i, st))
        .ok_or_else(|| Error::NumericalBreakdown {
            what: "IVM selection",
            message: "no remaining point has usable tilted moments".into(),
            advice: BREAKDOWN_ADVICE,
        })
}

/// What to try when the ADF updates break down on a data set (a typed error the user acts on).
const BREAKDOWN_ADVICE: &str = "the assumed-density updates broke down on these inputs; look for extreme values or outliers in the input columns, or use a batch classifier (laplace, ep)";

/// IVM (informative vector machine; seed 003 §3.1, §3.3.1): greedily include the d points
/// of largest differential-entropy reduction by ADF, in O(n d²) time and O(n d) memory, and
/// return the site-form posterior over the active set I (`basis_indices` = I in selection
/// order).
pub fn ivm(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &IvmConfig,
) -> Result<ClassifierFit> {
    ivm_sites(kernel, lik, x, y, cfg).map(|(f, _)| f)
}
