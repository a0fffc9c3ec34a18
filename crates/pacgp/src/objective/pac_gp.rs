//! PAC-GP for the full GP (seed 004; docs/math.md §2–§3.1, §5): learn kernel θ and the posterior
//! noise σ² by minimising the PAC-Bayes bound on the ε-band Gibbs risk, then snap θ onto the
//! grid and report the bound that actually holds.
//!
//! Q is the exact GP posterior (paper eq. 6) with training marginals
//! `μ_i = y_i − σ²α_i`, `v_i = σ² − σ⁴[C⁻¹]_ii` and `KL(Q‖P_θ)` of eq. (8). The gradient is
//! the closed form of docs/math.md §3.1 combined by eq. (14). Cost per evaluation: a Cholesky,
//! `C⁻¹` and one N×N product (`C⁻²`), i.e. O(N³).

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, BoundValue, ConfidenceTerm, HyperGrid, DEFAULT_DELTA};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg::{self, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, OptimReport, Restarts};
use crate::posterior::GaussianKlTerms;
use crate::prior::{BoundLevers, HyperPrior};
use crate::regression::exact::ExactGp;

use super::bound::{BoundObjective, LatentFamily, MinimisedBound, RiskAndKl};

/// PAC-GP's latent family: the exact GP posterior with a free noise σ² (paper eq. 6) over
/// `[θ_kernel…, ln σ²]` on standardised data, and the ε-band loss.
pub struct PacGpFamily<'a> {
    kernel: Kernel,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    loss: RegressionLoss,
    jitter: JitterPolicy,
}

/// The PAC-GP objective: the bound over [`PacGpFamily`].
pub type PacGpObjective<'a> = BoundObjective<PacGpFamily<'a>>;

impl<'a> BoundObjective<PacGpFamily<'a>> {
    /// The bound for `kernel`'s structure on `(x, y)` with the given loss.
    pub fn new(
        kernel: &Kernel,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        loss: RegressionLoss,
        bound: MinimisedBound,
    ) -> Result<Self> {
        super::check_full_gp_sample(kernel, x, y)?;
        super::check_band(&loss)?;
        let family = PacGpFamily {
            kernel: kernel.clone(),
            x,
            y,
            loss,
            jitter: JitterPolicy::default(),
        };
        Ok(Self::over(family, bound))
    }
}

impl PacGpFamily<'_> {
    fn gp_at(&self, p: &[f64]) -> Result<ExactGp> {
        let mut k = self.kernel.clone();
        let nk = k.n_params();
        k.set_params(&p[..nk])?;
        ExactGp::fit(
            k,
            p[nk].exp(),
            self.x.to_owned(),
            self.y.to_vec(),
            &self.jitter,
        )
    }
}

/// Shared intermediate quantities of one evaluation of [`PacGpFamily`] (docs/math.md §3.1
/// notation).
pub struct Evaluation {
    gp: ExactGp,
    s2: f64,
    ci: Mat<f64>,
    alpha: Vec<f64>,
    risk: f64,
    kl: f64,
    g_mu: Vec<f64>,
    g_v: Vec<f64>,
}

impl Evaluation {
    fn new(gp: ExactGp, y: &[f64], loss: &RegressionLoss) -> Result<Self> {
        let n = y.len();
        // Jitter on C acts as extra noise, consistently in μ, v and the KL.
        let s2 = gp.noise_variance + gp.jitter_used();
        let ci = gp.cholesky().inverse()?;
        let alpha = gp.alpha().to_vec();
        let (mut risk, mut g_mu, mut g_v) = (0.0, vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            let mu = y[i] - s2 * alpha[i];
            let v = (s2 - s2 * s2 * ci[(i, i)]).max(1e-300);
            let r = loss.point_risk(y[i], mu, v);
            risk += r.risk / n as f64;
            g_mu[i] = r.d_mean;
            g_v[i] = r.d_var;
        }
        let tr_ci: f64 = (0..n).map(|i| ci[(i, i)]).sum();
        let ln_l: f64 = 0.5 * gp.cholesky().ln_det();
        // Paper eq. (8), stable form of docs/math.md §3.1: Σ = K − K C⁻¹ K, so K⁻¹Σ = σ²C⁻¹
        // and the mean K C⁻¹ y gives yᵀα − σ²αᵀα.
        let nf = n as f64;
        let kl = GaussianKlTerms {
            trace: s2 * tr_ci,
            mahalanobis: linalg::dot(y, &alpha) - s2 * linalg::dot(&alpha, &alpha),
            dim: nf,
            ln_det_ratio: nf * s2.ln() - 2.0 * ln_l,
        }
        .kl();
        Ok(Self {
            gp,
            s2,
            ci,
            alpha,
            risk,
            kl,
            g_mu,
            g_v,
        })
    }
}

impl LatentFamily for PacGpFamily<'_> {
    type Evaluation = Evaluation;

    fn dim(&self) -> usize {
        self.kernel.n_params() + 1
    }

    fn sample_size(&self) -> usize {
        self.y.len()
    }

    fn n_theta(&self) -> usize {
        self.kernel.n_params()
    }

    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, Self::Evaluation)> {
        let gp = self.gp_at(p)?;
        let e = Evaluation::new(gp, self.y, &self.loss)?;
        Ok((RiskAndKl::new(e.risk, e.kl), e))
    }

    fn pull_back(&self, _p: &[f64], e: Self::Evaluation, b: &BoundValue) -> Result<Vec<f64>> {
        let n = self.y.len();
        let nf = n as f64;
        let (d_q, d_c) = (b.d_risk, b.d_complexity);
        let (gp, s2, ci, alpha) = (&e.gp, e.s2, &e.ci, &e.alpha);
        let beta = linalg::mat_vec(ci, alpha);
        let h = linalg::mat_vec(ci, &e.g_mu);
        // G = d_q·U/N + d_c·W/(2N), with (docs/math.md §3.1)
        // W = C⁻¹ − σ²C⁻² − ααᵀ + σ²(βαᵀ + αβᵀ),  U = (σ²/2)(αhᵀ + hαᵀ) + σ⁴ C⁻¹ diag(g_v) C⁻¹.
        // Both N×N products are one: −w_c σ²C⁻² + w_q σ⁴C⁻¹diag(g_v)C⁻¹ = C⁻¹ diag(d) C⁻¹.
        let (wq, wc) = (d_q / nf, d_c / (2.0 * nf));
        let d: Vec<f64> = e
            .g_v
            .iter()
            .map(|gv| -wc * s2 + wq * s2 * s2 * gv)
            .collect();
        let mut g = linalg::weighted_gram(ci, &d)?;
        g.par_col_iter_mut().enumerate().for_each(|(j, c)| {
            let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
            let cij = ci.col_as_slice(j);
            for i in 0..n {
                let w =
                    cij[i] - alpha[i] * alpha[j] + s2 * (beta[i] * alpha[j] + alpha[i] * beta[j]);
                let u = 0.5 * s2 * (alpha[i] * h[j] + h[i] * alpha[j]);
                c[i] += wq * u + wc * w;
            }
        });
        let mut grad = gp
            .kernel
            .gram_grad_contract_symmetric(self.x, g.as_ref(), None);
        // Noise: ∂KL/∂σ² and ∂R_S/∂σ² (docs/math.md §3.1), times σ² for ln σ²;
        // [C⁻²]_ii = ‖C⁻¹_{:,i}‖² (C⁻¹ symmetric).
        let ci2_diag = linalg::col_sq_norms(ci);
        let tr_ci: f64 = (0..n).map(|i| ci[(i, i)]).sum();
        let tr_ci2: f64 = ci2_diag.iter().sum();
        let dkl = tr_ci - 0.5 * s2 * tr_ci2 - nf / (2.0 * s2) - linalg::dot(alpha, alpha)
            + s2 * linalg::dot(alpha, &beta);
        let drs = (0..n)
            .map(|i| {
                e.g_mu[i] * (-alpha[i] + s2 * beta[i])
                    + e.g_v[i] * (1.0 - 2.0 * s2 * ci[(i, i)] + s2 * s2 * ci2_diag[i])
            })
            .sum::<f64>()
            / nf;
        grad.push(gp.noise_variance * (d_q * drs + d_c * dkl / nf));
        Ok(grad)
    }
}

/// Settings of [`fit_pac_gp`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PacGpConfig {
    /// Loss (ε on the standardised scale).
    pub loss: RegressionLoss,
    /// Confidence δ.
    pub delta: f64,
    /// kl (kl-PAC-GP) or sqrt (sqrt-PAC-GP).
    pub kind: BoundKind,
    /// Hyperparameter grid (penalty and rounding).
    pub grid: HyperGrid,
    /// Optimiser settings (box: θ within the grid's range, as the reference code).
    pub lbfgs: LbfgsConfig,
    /// Box for ln σ² (σ² is a free posterior parameter; the floor keeps v > 0).
    pub ln_noise_bounds: (f64, f64),
    /// Confidence constant (Maurer's `ln(2√N/δ)` for reproducing seed 004, or the sharp ξ(N)).
    #[serde(default = "maurer")]
    pub term: ConfidenceTerm,
    /// Coarse hyperparameter prior (docs/math.md §9.2) instead of the paper's uniform 0.01 grid.
    #[serde(default)]
    pub hyper_prior: Option<HyperPrior>,
}

/// Serde default of [`PacGpConfig::term`]: the paper's constant.
fn maurer() -> ConfidenceTerm {
    ConfidenceTerm::Maurer
}

impl PacGpConfig {
    /// The paper's settings for a given ε (standardised units) and bound kind (δ =
    /// [`DEFAULT_DELTA`], grid step 0.01 on [−6, 6]).
    pub fn new(epsilon: f64, kind: BoundKind) -> Result<Self> {
        Ok(Self::with_loss(
            RegressionLoss::new_epsilon_band(epsilon)?,
            kind,
        ))
    }

    /// The paper's settings for a given loss and bound kind (see [`PacGpConfig::new`]).
    pub fn with_loss(loss: RegressionLoss, kind: BoundKind) -> Self {
        Self {
            loss,
            delta: DEFAULT_DELTA,
            kind,
            grid: HyperGrid::default(),
            lbfgs: LbfgsConfig {
                max_iter: 1000,
                ..Default::default()
            },
            ln_noise_bounds: boxes::LN_NOISE,
            term: ConfidenceTerm::Maurer,
            hyper_prior: None,
        }
    }
}

/// A trained PAC-GP: the model at the snapped θ and its certificate.
#[derive(Clone, Debug)]
pub struct PacGpFit {
    /// Exact GP at the grid-snapped θ and the optimised σ².
    pub gp: ExactGp,
    /// The certificate at the snapped θ, through the shared posterior (both bound forms,
    /// whatever the training objective was).
    pub certificate: Certificate,
    /// Optimiser report (before snapping).
    pub report: OptimReport,
}

/// Train a full GP by minimising the PAC-Bayes bound (seed 004, kl-PAC-GP / sqrt-PAC-GP).
pub fn fit_pac_gp(
    kernel_init: &Kernel,
    noise_init: f64,
    x: Mat<f64>,
    y: Vec<f64>,
    cfg: &PacGpConfig,
) -> Result<PacGpFit> {
    let nk = kernel_init.n_params();
    let levers = BoundLevers {
        term: cfg.term,
        hyper_prior: cfg.hyper_prior,
    };
    let bound = MinimisedBound::on_grid(cfg.delta, cfg.kind, &levers, kernel_init, &cfg.grid)?;
    let obj = PacGpObjective::new(kernel_init, x.as_ref(), &y, cfg.loss, bound)?;
    let mut x0 = kernel_init.params();
    x0.push(noise_init.ln());
    let (lo, hi) = match cfg.hyper_prior {
        None => (cfg.grid.min_log, cfg.grid.max_log),
        Some(p) => (p.min_log, p.max_log),
    };
    let mut bounds = vec![(boxes::LN_THETA.0.max(lo), boxes::LN_THETA.1.min(hi)); nk];
    bounds.push(cfg.ln_noise_bounds);
    let snap = match cfg.hyper_prior {
        None => GridSnap::decimal(cfg.grid, nk),
        Some(prior) => GridSnap::coarse(prior.snap_grid(), nk),
    };
    let min = optim::drive(
        &obj,
        &x0,
        bounds,
        &cfg.lbfgs,
        &Restarts::default(),
        Some(&snap),
    )?;
    let (params, report) = (min.params, min.report);
    let choice = match cfg.hyper_prior {
        None => PenaltyTerm::grid(&cfg.grid, nk),
        Some(prior) => {
            let mut k = kernel_init.clone();
            k.set_params(&params[..nk])?;
            prior.penalty_term(&k)?
        }
    };
    let gp = obj.family().gp_at(&params)?;
    let spec = CertificateSpec::new(cfg.delta, cfg.term, vec![choice]);
    let certificate = Certificate::of_posterior(
        &gp.posterior()?,
        x.as_ref(),
        &y,
        &GibbsLoss::Regression(cfg.loss),
        &spec,
    )?;
    Ok(PacGpFit {
        gp,
        certificate,
        report,
    })
}
