//! Expectation propagation for GP classification with the probit likelihood (GPML Alg. 3.5),
//! with optional damping and two schedules:
//! - [`EpSchedule::Sequential`]: one site at a time; `Σ` and `μ` follow each site by a
//!   rank-one correction (`O(N²)` per site), recomputed stably from the sites after every
//!   sweep;
//! - [`EpSchedule::Parallel`] (default): every site updated from the current marginals, then
//!   one Cholesky of `B = I + S̃½KS̃½` and `L⁻¹` for `diag Σ` per sweep (`≈ 2N³/3` flops). A
//!   plain sweep that moves the sites more than the one before halves the damping (the map
//!   overshoots). Near the fixed point the sweeps are Anderson-accelerated
//!   ([`crate::optim::Anderson`]), falling back to the plain update when the mixed sites do
//!   not give a positive definite `B`. They stop when the proposed sites differ from the
//!   current ones by less than the tolerance, keeping the current sites and the marginals
//!   already factorised for them (one factorisation fewer than applying the last update).
//!
//! Both stop at the same fixed point (moment matching at every site). The EP approximation
//! of the log marginal likelihood (GPML eq. 3.65, in a form stable for `τ̃ → 0`) is returned
//! as [`ClassifierFit::ln_evidence`]; its gradients live in [`super::evidence`].
//!
//! Policy for negative site precisions: a site whose cavity precision would be ≤ 0 is left
//! unchanged for that step, and a site precision that would turn negative is clipped to 0;
//! both are counted in the report's notes.

use faer::{Mat, MatRef};

use super::{check_classification, ClassifierFit, ConvergenceReport, ConvergenceStatus, Problem};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{self, Cholesky};
use crate::optim::Anderson;
use crate::posterior::GaussianPosterior;

mod method;
pub use method::EpSpec;
mod parallel;
use parallel::{parallel_marginals, parallel_sweep};

/// Order in which EP updates its sites.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EpSchedule {
    /// One site at a time with rank-one updates of the posterior (GPML Alg. 3.5).
    Sequential,
    /// All sites from the same marginals, one refactorisation per sweep (damping halved
    /// when a sweep overshoots), Anderson-accelerated near the fixed point.
    #[default]
    Parallel,
}

/// Settings of [`ep`].
#[derive(Clone, Copy, Debug)]
pub struct EpConfig {
    /// Maximum sweeps over the data.
    pub max_sweeps: usize,
    /// Stop when no site parameter changes by more than this in a sweep (parallel: would
    /// change; that last proposal is then not applied).
    pub tol: f64,
    /// Damping in (0, 1]: new site = damping·proposal + (1 − damping)·old (the parallel
    /// schedule's starting value).
    pub damping: f64,
    /// Sequential or parallel site updates.
    pub schedule: EpSchedule,
}

impl Default for EpConfig {
    /// Parallel sweeps, undamped until a sweep overshoots, Anderson-accelerated: at N = 2000
    /// a sweep costs two `N³/3` factorisations where a sequential sweep moves `N³` memory.
    fn default() -> Self {
        Self {
            max_sweeps: 200,
            tol: 1e-6,
            damping: 1.0,
            schedule: EpSchedule::Parallel,
        }
    }
}

/// EP site parameters: precisions `τ̃` and precision-adjusted means `ν̃ = τ̃ μ̃`.
#[derive(Clone, Debug, PartialEq)]
pub struct EpSites {
    /// Site precisions `τ̃_i ≥ 0`.
    pub tau: Vec<f64>,
    /// `ν̃_i`.
    pub nu: Vec<f64>,
}

impl EpSites {
    /// All sites flat (`τ̃ = ν̃ = 0`): the posterior equals the prior.
    pub fn flat(n: usize) -> Self {
        Self {
            tau: vec![0.0; n],
            nu: vec![0.0; n],
        }
    }

    /// `[τ̃; ν̃]` as one vector (the state of the parallel fixed-point map).
    fn stacked(&self) -> Vec<f64> {
        self.tau.iter().chain(&self.nu).copied().collect()
    }

    /// Sites from `[τ̃; ν̃]`, precisions clipped at 0 (the sites' constraint).
    fn from_stacked(v: &[f64]) -> Self {
        let n = v.len() / 2;
        Self {
            tau: v[..n].iter().map(|t| t.max(0.0)).collect(),
            nu: v[n..].to_vec(),
        }
    }
}

/// Floor of the parallel schedule's damping when growing site changes halve it.
const MIN_DAMPING: f64 = 0.05;

/// Differences mixed by the Anderson acceleration of parallel sweeps.
const ANDERSON_MEMORY: usize = 5;
/// Parallel sweeps are accelerated once no site moves by more than this (far from the fixed
/// point the mixing slows EP down), with the history forgotten whenever a sweep moves the
/// sites more than the one before.
const ANDERSON_START: f64 = 0.1;

/// Posterior marginals at the training inputs implied by a set of sites.
pub(crate) struct SiteMarginals {
    /// `μ = Σν̃ = Kα`.
    pub mu: Vec<f64>,
    /// `diag Σ`.
    pub var: Vec<f64>,
    /// The full `Σ`, when asked for.
    pub sigma: Option<Mat<f64>>,
    /// `chol(I + S̃½KS̃½)`.
    pub chol: Cholesky,
    /// `α = ν̃ − S̃½B⁻¹S̃½Kν̃` (GPML Alg. 3.6 l. 4 / eq. 5.27's b).
    pub alpha: Vec<f64>,
    /// `L⁻¹`, when the diagonal of `Σ` was computed from it (parallel sweeps).
    pub l_inv: Option<Mat<f64>>,
}

/// Stable posterior from sites (GPML Alg. 3.5 l. 14–16): `L = chol(I + S̃½KS̃½)` (built in
/// the spent `buffers`), `μ = Kα`, and either the full `Σ = K − VᵀV`, `V = L⁻¹S̃½K`
/// (`full_sigma`, for sequential sweeps) or only its diagonal (parallel sweeps, see
/// [`sigma_diag_from_sites`]).
pub(crate) fn site_marginals(
    k: &Mat<f64>,
    sites: &EpSites,
    full_sigma: bool,
    buffers: MarginalBuffers,
) -> Result<SiteMarginals> {
    let n = sites.tau.len();
    let sw: Vec<f64> = sites.tau.iter().map(|t| t.max(0.0).sqrt()).collect();
    let chol = super::laplace::chol_b_in(k, &sw, buffers.chol, "I + S̃½KS̃½")?;
    let (var, sigma, l_inv) = if full_sigma {
        let mut v = crate::memory::try_from_fn(n, n, "S̃½K", |i, j| sw[i] * k[(i, j)])?;
        chol.solve_lower_in_place(v.as_mut());
        let var = (0..n)
            .map(|j| k[(j, j)] - v.col_as_slice(j).iter().map(|x| x * x).sum::<f64>())
            .collect();
        let mut sigma = crate::linalg::try_product(v.transpose(), v.as_ref(), "Σ = K − VᵀV")?;
        crate::linalg::subtract_from(k.as_ref(), &mut sigma);
        (var, Some(sigma), None)
    } else {
        let l_inv = chol.l_inverse_in(buffers.l_inv)?;
        (
            sigma_diag_from_sites(k, &sw, &chol, &l_inv)?,
            None,
            Some(l_inv),
        )
    };
    let knu = super::laplace::mat_vec(k, &sites.nu);
    let sol = chol.solve_vec(&(0..n).map(|i| sw[i] * knu[i]).collect::<Vec<_>>());
    let alpha: Vec<f64> = (0..n).map(|i| sites.nu[i] - sw[i] * sol[i]).collect();
    let mu = super::laplace::mat_vec(k, &alpha);
    Ok(SiteMarginals {
        mu,
        var,
        sigma,
        chol,
        alpha,
        l_inv,
    })
}

/// The `N × N` buffers of spent marginals (factor and `L⁻¹`), for the next ones.
#[derive(Default)]
pub(crate) struct MarginalBuffers {
    chol: Option<Mat<f64>>,
    l_inv: Option<Mat<f64>>,
}

impl SiteMarginals {
    /// Give up the marginals, keeping their buffers.
    fn into_buffers(self) -> MarginalBuffers {
        MarginalBuffers {
            chol: Some(self.chol.into_storage()),
            l_inv: self.l_inv,
        }
    }
}

/// `diag Σ`, `Σ = (K⁻¹ + S̃)⁻¹`, from `L⁻¹` (`n³/3` flops to get it, against
/// `n³` for `V = L⁻¹S̃½K`): `Σ_ii = (1 − [B⁻¹]_ii)/τ̃_i` with `[B⁻¹]_ii = ‖(L⁻¹)_{:,i}‖²`
/// (`Σ = S̃^{−½}(I − B⁻¹)S̃^{−½}`) where `τ̃_i K_ii` exceeds [`cancellation_floor`], and
/// `K_ii − ‖L⁻¹S̃½k_i‖²` (`n²` flops each) for the other columns.
/// (The Laplace gradient, which has `B⁻¹`, uses the same identity in `evidence::sigma_diag`.)
pub(crate) fn sigma_diag_from_sites(
    k: &Mat<f64>,
    sw: &[f64],
    chol: &Cholesky,
    linv: &Mat<f64>,
) -> Result<Vec<f64>> {
    use rayon::prelude::*;
    let n = sw.len();
    let floor = cancellation_floor(n);
    let stable = |i: usize| sw[i] * sw[i] * k[(i, i)] > floor;
    let mut var: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| {
            if stable(i) {
                let binv_ii: f64 = linv.col_as_slice(i)[i..].iter().map(|x| x * x).sum();
                (1.0 - binv_ii) / (sw[i] * sw[i])
            } else {
                0.0
            }
        })
        .collect();
    let rest: Vec<usize> = (0..n).filter(|&i| !stable(i)).collect();
    if !rest.is_empty() {
        let mut v =
            crate::memory::try_from_fn(n, rest.len(), "S̃½K's unstable columns", |r, c| {
                sw[r] * k[(r, rest[c])]
            })?;
        chol.solve_lower_in_place(v.as_mut());
        for (c, &i) in rest.iter().enumerate() {
            var[i] = k[(i, i)] - v.col_as_slice(c).iter().map(|x| x * x).sum::<f64>();
        }
    }
    Ok(var)
}

/// Smallest `τ̃_i K_ii` at which `(1 − [B⁻¹]_ii)/τ̃_i` keeps a relative error below 1e-7.
/// `[B⁻¹]_ii ≈ 1` comes out of `L⁻¹` with an absolute error of about `n·ε` (measured 4e-13 at
/// n = 2000, SE-ARD, σ² = 260), which the division by `τ̃_i Σ_ii ≈ τ̃_i K_ii` magnifies.
/// At n = 2000 a third of the sites lie below 1e-3 (the floor used before), so the exact
/// `n²`-per-column formula cost as much as the Cholesky; below 4.4e-6 it is about a tenth.
fn cancellation_floor(n: usize) -> f64 {
    (1e7 * n as f64 * f64::EPSILON).min(1e-3)
}

/// The outcome of one EP run.
pub(crate) struct EpRun {
    /// The prior covariance `K` of the training inputs (for the evidence gradient).
    pub k: Mat<f64>,
    /// Final sites.
    pub sites: EpSites,
    /// Marginals from the final sites.
    pub post: SiteMarginals,
    /// `ln Z_EP`, `None` when some cavity precision is not positive.
    pub ln_evidence: Option<f64>,
    /// How it went.
    pub report: ConvergenceReport,
}

/// Counters of the site-precision policy.
#[derive(Default)]
struct Events {
    skipped: usize,
    clipped: usize,
    damped_down: usize,
}

/// Moment-matched (undamped) site for one cavity `N(m, v)` (GPML Alg. 3.5 l. 8–10).
fn site_proposal(
    lik: &Likelihood,
    y: f64,
    tau_cav: f64,
    nu_cav: f64,
    ev: &mut Events,
) -> Result<(f64, f64)> {
    let (m_cav, v_cav) = (nu_cav / tau_cav, 1.0 / tau_cav);
    let t = lik.tilted_moments(y, m_cav, v_cav)?;
    let mu_hat = m_cav + v_cav * t.d1;
    let s2_hat = v_cav + v_cav * v_cav * t.d2;
    let mut tau_new = 1.0 / s2_hat - tau_cav;
    if !(tau_new >= 0.0) {
        ev.clipped += 1;
        tau_new = 0.0;
    }
    let nu_new = if tau_new > 0.0 {
        mu_hat / s2_hat - nu_cav
    } else {
        0.0
    };
    Ok((tau_new, nu_new))
}

/// One sequential sweep (GPML Alg. 3.5 l. 5–13); returns the largest site change.
fn sequential_sweep(
    lik: &Likelihood,
    y: &[f64],
    cfg: &EpConfig,
    sites: &mut EpSites,
    sigma: &mut Mat<f64>,
    mu: &mut [f64],
    ev: &mut Events,
) -> Result<f64> {
    let n = y.len();
    let mut change = 0.0f64;
    let mut s = vec![0.0; n];
    for i in 0..n {
        let s_ii = sigma[(i, i)];
        // l. 6–7: cavity.
        let tau_cav = 1.0 / s_ii - sites.tau[i];
        if !(tau_cav > 0.0) {
            ev.skipped += 1;
            continue;
        }
        let nu_cav = mu[i] / s_ii - sites.nu[i];
        let (tau_p, nu_p) = site_proposal(lik, y[i], tau_cav, nu_cav, ev)?;
        let tau_new = cfg.damping * tau_p + (1.0 - cfg.damping) * sites.tau[i];
        let nu_new = cfg.damping * nu_p + (1.0 - cfg.damping) * sites.nu[i];
        let (d_tau, d_nu) = (tau_new - sites.tau[i], nu_new - sites.nu[i]);
        change = change.max(d_tau.abs()).max(d_nu.abs());
        sites.tau[i] = tau_new;
        sites.nu[i] = nu_new;
        // l. 11–12: Σ ← Σ − c s sᵀ with s = Σ e_i; the same correction gives
        // μ = Σν̃ ← μ + (Δν − c(μ_i + Δν Σ_ii)) s without the O(N²) product Σν̃.
        let c = d_tau / (1.0 + d_tau * s_ii);
        s.copy_from_slice(sigma.col_as_slice(i));
        let g = d_nu - c * (mu[i] + d_nu * s_ii);
        for (m, sj) in mu.iter_mut().zip(&s) {
            *m += g * sj;
        }
        if c != 0.0 {
            for (j, sj) in s.iter().enumerate() {
                let f = c * sj;
                for (x, si) in sigma.col_as_slice_mut(j).iter_mut().zip(&s) {
                    *x -= f * si;
                }
            }
        }
    }
    Ok(change)
}

fn check_config(cfg: &EpConfig) -> Result<()> {
    if !(cfg.damping > 0.0 && cfg.damping <= 1.0) {
        return Err(Error::InvalidParameter {
            name: "EP damping",
            value: cfg.damping,
            reason: "must lie in (0, 1]",
        });
    }
    Ok(())
}

fn check_sites(sites: &EpSites, n: usize) -> Result<()> {
    if sites.tau.len() != n || sites.nu.len() != n {
        return Err(Error::ShapeMismatch {
            what: "EP warm-start sites",
            expected: format!("{n} precisions and {n} means"),
            found: format!("{} and {}", sites.tau.len(), sites.nu.len()),
        });
    }
    if let Some(&t) = sites.tau.iter().chain(&sites.nu).find(|t| !t.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "EP warm-start site",
            value: t,
            reason: "must be finite",
        });
    }
    if let Some(&t) = sites.tau.iter().find(|t| **t < 0.0) {
        return Err(Error::InvalidParameter {
            name: "EP warm-start site precision",
            value: t,
            reason: "must be non-negative",
        });
    }
    Ok(())
}

/// Cavity means and variances `(m_{−i}, v_{−i})` from marginals and sites (GPML eq. 3.56);
/// `None` where the cavity precision is not positive.
pub(crate) fn cavities(sites: &EpSites, mu: &[f64], var: &[f64]) -> Vec<Option<(f64, f64)>> {
    (0..mu.len())
        .map(|i| {
            let tau_cav = 1.0 / var[i] - sites.tau[i];
            let nu_cav = mu[i] / var[i] - sites.nu[i];
            (tau_cav > 0.0).then(|| (nu_cav / tau_cav, 1.0 / tau_cav))
        })
        .collect()
}

/// `ln Z_EP` (GPML eq. 3.65) in a form without `1/τ̃`: with cavities `(m_i, τ_{−i})` and
/// marginals `(μ, v)`,
/// `Σ ln Ẑ_i − ½ ln|B| + ½ Σ ln(1 + τ̃_i/τ_{−i}) + ½ ν̃ᵀμ
///  + ½ Σ v_i (τ_{−i}τ̃_i m_i² − 2τ_{−i} m_i ν̃_i − ν̃_i²)`.
/// (Derivation: `−½ μ̃ᵀ(K + S̃⁻¹)⁻¹μ̃ = −½ Σ ν̃²/τ̃ + ½ ν̃ᵀΣν̃`, whose `ν̃²/τ̃` cancels
/// against the same part of eq. 3.65's last sum; `½ ln|K + S̃⁻¹| = ½ ln|B| − ½ Σ ln τ̃`
/// cancels the `ln τ̃` of its fourth term.)
fn ln_z_ep(
    lik: &Likelihood,
    y: &[f64],
    sites: &EpSites,
    post: &SiteMarginals,
) -> Result<Option<f64>> {
    let cav = cavities(sites, &post.mu, &post.var);
    let mut total = -0.5 * post.chol.ln_det() + 0.5 * linalg::dot(&sites.nu, &post.mu);
    for (i, c) in cav.iter().enumerate() {
        let Some((m, v_cav)) = *c else {
            return Ok(None);
        };
        let (tau_cav, tau, nu) = (1.0 / v_cav, sites.tau[i], sites.nu[i]);
        total += lik.tilted_moments(y[i], m, v_cav)?.ln_z;
        total += 0.5 * (tau / tau_cav).ln_1p();
        total += 0.5 * post.var[i] * (tau_cav * tau * m * m - 2.0 * tau_cav * m * nu - nu * nu);
    }
    Ok(total.is_finite().then_some(total))
}

/// Run EP from `init` (flat sites if `None`) to convergence.
pub(crate) fn run(p: Problem<'_>, cfg: &EpConfig, init: Option<&EpSites>) -> Result<EpRun> {
    let Problem { kernel, lik, x, y } = p;
    check_classification(x, y, lik)?;
    kernel.check_input_dim(x.ncols())?;
    check_config(cfg)?;
    lik.tilted_moments(1.0, 0.0, 1.0)?; // rejects likelihoods without closed-form moments
    let n = y.len();
    let mut sites = match init {
        Some(s) => {
            check_sites(s, n)?;
            s.clone()
        }
        None => EpSites::flat(n),
    };
    let k = kernel.gram(x)?;
    let sequential = cfg.schedule == EpSchedule::Sequential;
    let mut post = site_marginals(&k, &sites, sequential, MarginalBuffers::default())?;
    let mut jitter = post.chol.jitter();
    let mut ev = Events::default();
    let (mut status, mut sweeps, mut change) = (ConvergenceStatus::MaxIterations, 0, f64::INFINITY);
    let mut anderson = Anderson::new(ANDERSON_MEMORY);
    let mut last_change = f64::INFINITY;
    let mut damping = cfg.damping;
    for sweep in 0..cfg.max_sweeps {
        sweeps = sweep + 1;
        if sequential {
            let mut sigma = post.sigma.take().expect("sequential EP keeps Σ");
            let mut mu = std::mem::take(&mut post.mu);
            change = sequential_sweep(lik, y, cfg, &mut sites, &mut sigma, &mut mu, &mut ev)?;
            // l. 14–16: recompute from the sites (no round-off accumulates across sweeps),
            // in the storage of the previous factor.
            post = site_marginals(&k, &sites, true, post.into_buffers())?;
        } else {
            let mut plain = sites.clone();
            change = parallel_sweep(lik, y, damping, &mut plain, &post.mu, &post.var, &mut ev)?;
            if change < cfg.tol {
                // The current sites reproduce themselves to within `tol`: keep them and the
                // marginals already factorised for them.
                status = ConvergenceStatus::Converged;
                break;
            }
            if change > last_change && last_change >= ANDERSON_START && damping > MIN_DAMPING {
                // A plain (not Anderson-mixed) step that grew the site changes: the parallel
                // map overshoots; damp it harder. (Mixed steps may grow them: those reset
                // the mixing instead.)
                damping = (0.5 * damping).max(MIN_DAMPING);
                ev.damped_down += 1;
            }
            post = parallel_marginals(
                &k,
                &mut sites,
                plain,
                change,
                last_change,
                &mut anderson,
                post,
            )?;
        }
        jitter = jitter.max(post.chol.jitter());
        last_change = change;
        if sequential && change < cfg.tol {
            status = ConvergenceStatus::Converged;
            break;
        }
    }
    let ln_evidence = ln_z_ep(lik, y, &sites, &post)?;
    let mut notes = Vec::new();
    if ev.skipped > 0 {
        notes.push(format!(
            "{} site updates skipped for a non-positive cavity precision",
            ev.skipped
        ));
    }
    if ev.clipped > 0 {
        notes.push(format!("{} site precisions clipped to 0", ev.clipped));
    }
    if ev.damped_down > 0 {
        notes.push(format!(
            "damping halved {} times (to {damping}) after growing site changes",
            ev.damped_down
        ));
    }
    if ln_evidence.is_none() {
        notes.push("ln Z_EP undefined: a final cavity precision is not positive".into());
    }
    Ok(EpRun {
        k,
        sites,
        post,
        ln_evidence,
        report: ConvergenceReport {
            status,
            iterations: sweeps,
            final_change: change,
            jitter_used: jitter,
            notes,
        },
    })
}

impl EpRun {
    /// The site-form posterior (`π = τ̃`, `α = ν̃ − S̃½B⁻¹S̃½Kν̃`).
    pub(crate) fn into_fit(self, kernel: &Kernel, x: MatRef<'_, f64>) -> (ClassifierFit, EpSites) {
        let sw: Vec<f64> = self.sites.tau.iter().map(|t| t.max(0.0).sqrt()).collect();
        let fit = ClassifierFit {
            posterior: GaussianPosterior::sites(
                kernel.clone(),
                x.to_owned(),
                self.post.alpha,
                sw,
                self.post.chol,
            ),
            ln_evidence: self.ln_evidence,
            basis_indices: None,
            report: self.report,
        };
        (fit, self.sites)
    }
}

/// Run EP to convergence and return the site-form posterior (`π = τ̃`,
/// `α = (K + S̃⁻¹)⁻¹ S̃⁻¹ν̃ = ν̃ − S̃½ L⁻ᵀL⁻¹ S̃½ K ν̃`) with `ln Z_EP` as `ln_evidence`.
pub fn ep(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &EpConfig,
) -> Result<ClassifierFit> {
    Ok(run(Problem { kernel, lik, x, y }, cfg, None)?
        .into_fit(kernel, x)
        .0)
}

/// [`ep`] started from the sites `init` (e.g. those of a fit at nearby hyperparameters);
/// returns the fit and its final sites.
pub fn ep_warm(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &EpConfig,
    init: &EpSites,
) -> Result<(ClassifierFit, EpSites)> {
    Ok(run(Problem { kernel, lik, x, y }, cfg, Some(init))?.into_fit(kernel, x))
}
