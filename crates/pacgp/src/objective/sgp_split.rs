//! Sparse (inducing-point) form of the data-dependent prior (docs/math.md §9.3.2), for
//! kin40k / pol scale. On part A: scalers, θ_A, σ_A² and M inducing inputs Z by VFE (sparse
//! ML-II); the prior is `P_A = ∫ p(f|u) N(u; a_A, Σ_A) du` with VFE's `q(u)` on A. The
//! posterior shares `p(f|u)` and Z ("P_A updated with S_B", docs/math.md §9.3.2):
//!
//! `Λ = diag(σ² + α_s [K_BB − Q_BB]_ii)`, `Φ = K_uu⁻¹ K_uB`,
//! `Σ⁻¹ = Σ_A⁻¹ + Φ Λ⁻¹ Φᵀ`, `a = Σ(Σ_A⁻¹ a_A + Φ Λ⁻¹ y_B)`,
//!
//! so `KL(Q‖P_A) = KL(N(a, Σ) ‖ N(a_A, Σ_A))` on u, and Q's marginals are
//! `μ(x) = k_u(x)ᵀK_uu⁻¹a`, `v(x) = k(x,x) − k_u(x)ᵀK_uu⁻¹(K_uu − Σ)K_uu⁻¹k_u(x)`.
//! P_A and Q are both shared posteriors of the GP prior on the basis Z (dense form, the same
//! jittered `K_uu`), so the certificate charges `Q.kl_to(P_A)`
//! ([`crate::posterior::GaussianPosterior::kl_to`]: siblings' KL on u); the minimiser
//! evaluates the bound through the same shared posterior
//! ([`crate::objective::sgp_split::SparseSplitPrior::update`]).
//! σ² and α_s ∈ {0, 1} are Q's free parameters (not charged), chosen by the bound on B, the
//! one [`MinimisedBound`](crate::objective::bound::MinimisedBound) of every bound-trained
//! method (a grid in ln σ² refined by golden section: one scalar, no gradient needed, so no
//! latent family). Cost
//! O(N_B M² + M³) per evaluation.

use faer::{Mat, MatRef};

use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, BoundTarget, ConfidenceTerm};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm, PosteriorAgainst};
use crate::data::{Dataset, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::{start, Kernel};
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::optim::scalar::grid_then_golden;
use crate::posterior::{Covariance, GaussianPosterior, Prior};
use crate::regression::sparse::{train_sparse, SparseConfig, SparseMethod, KUU_JITTER};
use crate::select::Menu;

use super::bound::MinimisedBound;
use super::gp_split::{RegressionParts, SplitConfig};

/// The sparse prior P_A: kernel θ_A, inducing inputs Z and `q(u) = N(a_A, Σ_A)` from part A.
#[derive(Clone, Debug)]
pub struct SparseSplitPrior {
    /// Kernel with θ_A.
    pub kernel: Kernel,
    /// Inducing inputs Z (M×D, standardised).
    pub z: Mat<f64>,
    /// Prior noise σ_A² of part A (VFE's).
    pub noise_a: f64,
    /// Mean of u under P_A.
    pub a_a: Vec<f64>,
    /// Covariance of u under P_A.
    pub sigma_a: Mat<f64>,
    chol_kuu: Cholesky,
    chol_sigma_a: Cholesky,
    sigma_a_inv: Mat<f64>,
    /// Where VFE on part A started, when the wide start moved it ([`SparseSplitPrior::fit_vfe`]).
    pub start_note: Option<String>,
}

impl SparseSplitPrior {
    /// P_A from its parts (`K_uu` gets the sparse models' jitter).
    pub fn new(
        kernel: Kernel,
        z: Mat<f64>,
        noise_a: f64,
        a_a: Vec<f64>,
        sigma_a: Mat<f64>,
    ) -> Result<Self> {
        let mut kuu = kernel.gram(z.as_ref())?;
        for i in 0..kuu.nrows() {
            kuu[(i, i)] += KUU_JITTER;
        }
        let chol_kuu = Cholesky::factor(kuu.as_ref(), &JitterPolicy::default(), "K_uu")?;
        let chol_sigma_a = Cholesky::factor(sigma_a.as_ref(), &JitterPolicy::default(), "Σ_A")?;
        let sigma_a_inv = chol_sigma_a.inverse()?;
        Ok(Self {
            kernel,
            z,
            noise_a,
            a_a,
            sigma_a,
            chol_kuu,
            chol_sigma_a,
            sigma_a_inv,
            start_note: None,
        })
    }

    /// P_A as the prior a certificate charges Q against: conditioned on the shared posterior
    /// of the GP prior on Z in the dense form, `α_A = K_uu⁻¹a_A`, covariance Σ_A of u.
    pub fn prior(&self) -> Prior {
        Prior::conditioned(self.dense_posterior(self.a_a.clone(), self.chol_sigma_a.clone()))
    }

    /// The shared posterior on Z with mean `a` and covariance `L Lᵀ` of u (P_A and every Q).
    fn dense_posterior(&self, a: Vec<f64>, chol_sigma: Cholesky) -> GaussianPosterior {
        let alpha = self.chol_kuu.solve_vec(&a);
        GaussianPosterior::dense(
            self.kernel.clone(),
            self.z.clone(),
            alpha,
            self.chol_kuu.clone(),
            chol_sigma,
        )
    }

    /// VFE on part A (θ, σ_A², Z by the sparse ML-II driver from k-means), then its q(u):
    /// `a_A = K_uu α`, `Σ_A = L_uu B⁻¹ L_uuᵀ` (whitened form of the shared posterior). On
    /// more than [`start::WIDE_INPUTS`] inputs θ starts at the median distance of part A's rows
    /// (drawn with `seed`) and the search stops by the stall rule, as the vfe fit's does.
    pub fn fit_vfe(
        kernel_init: &Kernel,
        x_a: MatRef<'_, f64>,
        y_a: &[f64],
        m: usize,
        seed: u64,
    ) -> Result<Self> {
        let mut cfg = SparseConfig {
            seed,
            ..Default::default()
        };
        cfg.lbfgs.stall = start::wide_stall(x_a.ncols());
        let (kernel, start_note) =
            start::wide_start_noted(kernel_init.clone(), x_a, seed, "leaves the evidence flat");
        let (gp, _, _) = train_sparse(&kernel, 0.1, x_a, y_a, m, SparseMethod::Vfe, &cfg)?;
        let post = gp.posterior(x_a, y_a)?;
        let Covariance::WhitenedPrecision { chol_kuu, chol_b } = &post.cov else {
            return Err(Error::Unsupported(
                "VFE's posterior is expected in whitened form".into(),
            ));
        };
        let l = chol_kuu.l().to_owned();
        let lt_alpha = linalg::mat_t_vec(&l, &post.alpha);
        let a_a = linalg::mat_vec(&l, &lt_alpha);
        let sigma_a = &l * chol_b.inverse()? * l.transpose();
        let sym = Mat::from_fn(m, m, |i, j| 0.5 * (sigma_a[(i, j)] + sigma_a[(j, i)]));
        let prior = Self::new(gp.kernel, gp.z, gp.noise_variance, a_a, sym)?;
        Ok(Self {
            start_note,
            ..prior
        })
    }

    /// Number of inducing inputs M.
    pub fn m(&self) -> usize {
        self.z.nrows()
    }
}

/// Q's free parameters: posterior noise σ² and the FITC/VFE interpolation α_s, optionally a
/// separate noise σ_m² for Q's mean (docs/math.md §9.4.1's decoupled σ_m², σ_v² in the sparse form,
/// §9.3.2).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SparseSplitParams {
    /// σ² (of Q's covariance, and of its mean unless `noise_mean` is set).
    pub noise: f64,
    /// α_s ∈ [0, 1].
    pub alpha_s: f64,
    /// σ_m² of Q's mean `a = (Σ_A⁻¹ + ΦΛ_m⁻¹Φᵀ)⁻¹(Σ_A⁻¹a_A + ΦΛ_m⁻¹y_B)`; `None` = σ².
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_mean: Option<f64>,
}

impl SparseSplitParams {
    /// One σ² for Q's mean and covariance.
    pub fn tied(noise: f64, alpha_s: f64) -> Self {
        Self {
            noise,
            alpha_s,
            noise_mean: None,
        }
    }
}

/// Which of Q's parameters the bound on B is minimised over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SparseSplitFamily {
    /// σ² and α_s ∈ {0, 1} (docs/math.md §9.3.2).
    Tied,
    /// Also a separate σ_m² for Q's mean (coordinate-wise after the tied optimum).
    DecoupledMean,
}

impl SparseSplitPrior {
    /// Q on part B (standardised) at the free parameters: P_A's `q(u)` updated with the
    /// B-likelihood `N(y_B; Φᵀu, Λ)` (docs/math.md §9.3.2), as the shared posterior over the GP
    /// prior (dense form over Z, `α = K_uu⁻¹a`, covariance Σ of u). Written over the GP prior,
    /// not over `P_A` as a conditioned prior: `P_A` and Q are distributions of
    /// `u = f(Z) + jitter`, not of `f(Z)`, so an update of `P_A` at `f(Z)` would be off by the
    /// `K_uu` jitter. Q is `P_A`'s sibling on Z, which [`GaussianPosterior::kl_to`] charges on u.
    pub fn update(
        &self,
        x_b: MatRef<'_, f64>,
        y_b: &[f64],
        params: SparseSplitParams,
    ) -> Result<GaussianPosterior> {
        crate::regression::exact::check_regression_inputs(x_b, y_b)?;
        let mean_ok = params.noise_mean.is_none_or(|s| s > 0.0);
        if !(params.noise > 0.0 && mean_ok && (0.0..=1.0).contains(&params.alpha_s)) {
            return Err(Error::InvalidParameter {
                name: "sparse split posterior σ²",
                value: params.noise,
                reason: "σ² must be positive and α_s in [0, 1]",
            });
        }
        let nb = y_b.len();
        // Φ = K_uu⁻¹ K_uB; q_ii = ‖L⁻¹K_uB_i‖².
        let mut w = self.kernel.cross(self.z.as_ref(), x_b)?;
        self.chol_kuu.solve_lower_in_place(w.as_mut());
        let q = linalg::col_sq_norms(&w);
        let mut phi = w;
        self.chol_kuu.solve_upper_in_place(phi.as_mut());
        let kd = self.kernel.diag(x_b);
        let inv_lam = |s2: f64| -> Vec<f64> {
            (0..nb)
                .map(|i| 1.0 / (s2 + params.alpha_s * (kd[i] - q[i]).max(0.0)))
                .collect()
        };
        // Σ⁻¹ = Σ_A⁻¹ + ΦΛ⁻¹Φᵀ; a = (Σ_A⁻¹ + ΦΛ_m⁻¹Φᵀ)⁻¹(Σ_A⁻¹a_A + ΦΛ_m⁻¹y_B), Λ_m = Λ if tied.
        let factor = |il: &[f64]| {
            let prec = &self.sigma_a_inv + linalg::weighted_gram(&phi, il)?;
            Cholesky::factor(prec.as_ref(), &JitterPolicy::default(), "Σ⁻¹ of Q")
        };
        let mean_of = |chol: &Cholesky, il: &[f64]| {
            let yl: Vec<f64> = (0..nb).map(|i| y_b[i] * il[i]).collect();
            let rhs: Vec<f64> = linalg::mat_vec(&self.sigma_a_inv, &self.a_a)
                .iter()
                .zip(linalg::mat_vec(&phi, &yl))
                .map(|(a, b)| a + b)
                .collect();
            chol.solve_vec(&rhs)
        };
        let il_v = inv_lam(params.noise);
        let chol_prec = factor(&il_v)?;
        let sigma = chol_prec.inverse()?;
        let a = match params.noise_mean {
            None => mean_of(&chol_prec, &il_v),
            Some(s2m) => {
                let il_m = inv_lam(s2m);
                mean_of(&factor(&il_m)?, &il_m)
            }
        };
        let chol_sigma = Cholesky::factor(sigma.as_ref(), &JitterPolicy::default(), "Σ")?;
        Ok(self.dense_posterior(a, chol_sigma))
    }
}

/// Q's certificate on part B for each loss: the shared posterior's marginals on B and its
/// `KL(Q‖P_A)`.
fn certificates(
    q: &GaussianPosterior,
    p_a: &SparseSplitPrior,
    x_b: MatRef<'_, f64>,
    y_b: &[f64],
    losses: &[GibbsLoss],
    spec: &CertificateSpec,
) -> Result<Vec<Certificate>> {
    let prior = p_a.prior();
    let charged = PosteriorAgainst::new(q, &prior)?;
    Certificate::for_losses(&charged, &q.predict(x_b)?, y_b, losses, spec)
}

/// A model trained with the sparse data-dependent prior, its split and certificate on B.
#[derive(Clone, Debug)]
pub struct SparseSplitFit {
    /// Fraction F of part A.
    pub fraction: f64,
    /// Seed of the split's permutation.
    pub seed: u64,
    /// Number of fractions the bound chose among (its `ln` is charged).
    pub menu: usize,
    /// Rows of part B.
    pub b: Vec<usize>,
    /// Input scaler fitted on A.
    pub x_scaler: Standardizer,
    /// Target scaler fitted on A.
    pub y_scaler: TargetScaler,
    /// The prior P_A.
    pub prior: SparseSplitPrior,
    /// Q's free parameters.
    pub params: SparseSplitParams,
    /// Q, the shared posterior (P_A's sibling on Z).
    pub posterior: GaussianPosterior,
    /// The certificate on part B.
    pub certificate: Certificate,
}

/// The penalty terms of a sparse split-prior certificate: the prior's description (free) and
/// the menu's `ln k`.
fn sparse_split_choices(
    m: usize,
    fraction: f64,
    seed: u64,
    fractions: &Menu<f64>,
    n_a: usize,
    n: usize,
) -> Vec<PenaltyTerm> {
    let mut choices = vec![PenaltyTerm {
        what: format!(
            "prior: VFE posterior (M = {m}) of part A ({n_a} of {n} points, F = {fraction}, seed {seed}), θ, σ_A², Z on A; bound on part B"
        ),
        nats: 0.0,
    }];
    if fractions.len() > 1 {
        choices.push(fractions.price());
    }
    choices
}

/// What a model file keeps to reproduce a sparse split-prior certificate from the training
/// sample: the split (fraction, menu size, seed), P_A (θ_A, Z, σ_A², `q(u) = N(a_A, Σ_A)` as
/// fitted by VFE on A), Q's free parameters and the confidence term. The scalers are the
/// model's own (fitted on A).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SparseSplitRecord {
    /// Fraction F of part A.
    pub fraction: f64,
    /// Number of fractions the bound chose among (1 = fixed; its `ln` is charged).
    pub menu: usize,
    /// Seed of the permutation (applied to the rows' canonical order).
    pub seed: u64,
    /// The prior's kernel with θ_A.
    pub kernel_a: Kernel,
    /// Inducing inputs Z (standardised).
    #[serde(with = "linalg::serde_mat")]
    pub z: Mat<f64>,
    /// σ_A² of VFE on part A.
    pub noise_a: f64,
    /// Mean of u under P_A.
    pub a_a: Vec<f64>,
    /// Covariance of u under P_A.
    #[serde(with = "linalg::serde_mat")]
    pub sigma_a: Mat<f64>,
    /// Q's free parameters.
    pub params: SparseSplitParams,
    /// Confidence constant the certificate uses.
    pub term: ConfidenceTerm,
}

impl SparseSplitRecord {
    /// The record of a fit certified with confidence term `term`.
    pub fn of(fit: &SparseSplitFit, term: ConfidenceTerm) -> Self {
        let p = &fit.prior;
        Self {
            fraction: fit.fraction,
            menu: fit.menu,
            seed: fit.seed,
            kernel_a: p.kernel.clone(),
            z: p.z.clone(),
            noise_a: p.noise_a,
            a_a: p.a_a.clone(),
            sigma_a: p.sigma_a.clone(),
            params: fit.params,
            term,
        }
    }

    /// The penalty terms of the certificate: the prior's description and the price of the
    /// spec's menu of `fractions` when it has more than one.
    pub fn choices(&self, fractions: &Menu<f64>, n_a: usize, n: usize) -> Vec<PenaltyTerm> {
        sparse_split_choices(self.z.nrows(), self.fraction, self.seed, fractions, n_a, n)
    }

    /// P_A as the record stores it.
    pub fn prior(&self) -> Result<SparseSplitPrior> {
        SparseSplitPrior::new(
            self.kernel_a.clone(),
            self.z.clone(),
            self.noise_a,
            self.a_a.clone(),
            self.sigma_a.clone(),
        )
    }

    /// Q from P_A (refitted on part A by the caller and checked against the record) and the
    /// record's free parameters on part B of `parts`.
    pub fn posterior_on(
        &self,
        prior: &SparseSplitPrior,
        parts: &RegressionParts,
    ) -> Result<GaussianPosterior> {
        prior.update(parts.x_b.as_ref(), &parts.y_b, self.params)
    }
}

/// The B-bound of Q at `(σ², α_s)` (the kl bound minimised, θ fixed): the shared
/// posterior's `KL(Q‖P_A)` and marginals on B, as the certificate charges them.
fn bound_at(
    p_a: (&SparseSplitPrior, &Prior),
    x_b: MatRef<'_, f64>,
    y_b: &[f64],
    params: SparseSplitParams,
    loss: &GibbsLoss,
    bound: &MinimisedBound,
) -> Result<f64> {
    let q = p_a.0.update(x_b, y_b, params)?;
    let kl = q.kl_to(p_a.1)?;
    if !kl.is_finite() {
        return Err(Error::Numerical {
            what: "KL(Q‖P_A) of the sparse split prior",
            message: format!("KL = {kl:.4e} at σ² = {:.4e}", params.noise),
        });
    }
    let risk = loss.empirical_risk(y_b, &q.predict(x_b)?)?;
    Ok(bound.terms(&[], risk, kl, y_b.len()).bound)
}

/// The range of ln σ² (and ln σ_m²) searched on part B: a grid of step 0.5, then golden section.
const LN_NOISE_RANGE: (f64, f64, f64) = (-8.0, 4.0, 0.5);

/// Minimise the B-bound over ln σ² (grid on [−8, 4] then golden section) for α_s ∈ {0, 1};
/// with [`SparseSplitFamily::DecoupledMean`] then over ln σ_m² and again ln σ² (one
/// coordinate sweep from the tied optimum, which it never makes worse).
fn minimise(
    prior: &SparseSplitPrior,
    x_b: MatRef<'_, f64>,
    y_b: &[f64],
    loss: &GibbsLoss,
    bound: &MinimisedBound,
    family: SparseSplitFamily,
) -> Result<SparseSplitParams> {
    let p_a = prior.prior();
    let value = |p: SparseSplitParams| bound_at((prior, &p_a), x_b, y_b, p, loss, bound);
    let mut best: Option<(f64, SparseSplitParams)> = None;
    for alpha_s in [0.0, 1.0] {
        let t = grid_then_golden(LN_NOISE_RANGE, |t| {
            value(SparseSplitParams::tied(t.exp(), alpha_s))
        })?;
        let mut p = SparseSplitParams::tied(t.exp(), alpha_s);
        if family == SparseSplitFamily::DecoupledMean {
            let tm = grid_then_golden(LN_NOISE_RANGE, |u| {
                value(SparseSplitParams {
                    noise_mean: Some(u.exp()),
                    ..p
                })
            })?;
            let pm = SparseSplitParams {
                noise_mean: Some(tm.exp()),
                ..p
            };
            let tv = grid_then_golden(LN_NOISE_RANGE, |u| {
                value(SparseSplitParams {
                    noise: u.exp(),
                    ..pm
                })
            })?;
            let pv = SparseSplitParams {
                noise: tv.exp(),
                ..pm
            };
            for cand in [pm, pv] {
                if value(cand)? < value(p)? {
                    p = cand;
                }
            }
        }
        let v = value(p)?;
        if best.as_ref().is_none_or(|(b, _)| v < *b) {
            best = Some((v, p));
        }
    }
    let (_, p) = best.expect("two α_s were tried");
    Ok(p)
}

/// Train with the sparse data-dependent prior (docs/math.md §9.3.2): for each candidate fraction,
/// split (the rows' canonical order, seeded), fit scalers and VFE with `m` inducing inputs on A,
/// minimise the kl bound on B over σ² and α_s; keep the lowest bound (the menu's `ln k` in
/// every candidate's certificate).
pub fn fit_sparse_split_prior(
    train: &Dataset,
    kernel_init: &Kernel,
    m: usize,
    cfg: &SplitConfig,
) -> Result<SparseSplitFit> {
    fit_sparse_split_prior_with(train, kernel_init, m, cfg, SparseSplitFamily::Tied)
}

/// [`fit_sparse_split_prior`] with Q's free parameters chosen from `family`.
pub fn fit_sparse_split_prior_with(
    train: &Dataset,
    kernel_init: &Kernel,
    m: usize,
    cfg: &SplitConfig,
    family: SparseSplitFamily,
) -> Result<SparseSplitFit> {
    BoundTarget::check_confidence(cfg.delta, cfg.term)?;
    let fractions = cfg.fraction.menu()?;
    let chosen = fractions.by_bound(|&fraction, _| {
        let parts = RegressionParts::of(train, fraction, cfg.seed)?;
        let loss = GibbsLoss::Regression(RegressionLoss::band_in_standard_units(
            cfg.epsilon,
            parts.y_scaler.sd,
        )?);
        let na = parts.a.len();
        let prior = SparseSplitPrior::fit_vfe(
            kernel_init,
            parts.x_a.as_ref(),
            &parts.y_a,
            m.min(na),
            cfg.seed,
        )?;
        let choices =
            sparse_split_choices(prior.m(), fraction, cfg.seed, &fractions, na, train.n());
        let (x_b, y_b) = (parts.x_b.as_ref(), parts.y_b.as_slice());
        let spec = CertificateSpec::new(cfg.delta, cfg.term, choices);
        let bound = MinimisedBound::new(spec.delta, spec.term, BoundKind::Kl, spec.penalty())?;
        let params = minimise(&prior, x_b, y_b, &loss, &bound, family)?;
        let posterior = prior.update(x_b, y_b, params)?;
        let certificate = certificates(
            &posterior,
            &prior,
            x_b,
            y_b,
            std::slice::from_ref(&loss),
            &spec,
        )?
        .remove(0);
        let fit = SparseSplitFit {
            fraction,
            seed: cfg.seed,
            menu: fractions.len(),
            b: parts.b,
            x_scaler: parts.x_scaler,
            y_scaler: parts.y_scaler,
            prior,
            params,
            posterior,
            certificate,
        };
        let bound = fit.certificate.bound;
        Ok((fit, bound))
    })?;
    Ok(chosen.value)
}
