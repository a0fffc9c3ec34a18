//! A data-dependent prior for GP classifiers (issue 15 item 1; tighter-bounds spec §5 item 3,
//! §3.1): split the sample by a seeded permutation into a part A (fraction F) and a part B.
//! On A alone: the input scaler, θ by ML-II (Laplace evidence) and the Laplace posterior
//! `P_A`, a GP with mean `μ_A(x)` and covariance `k_A(x, x')`. The bound is then about B only:
//!
//! `R(Q) ≤ kl⁻¹(R_{S_B}(Q), (KL(Q‖P_A) + ln|F| + conf(N_B))/N_B)`,
//!
//! where Q is `P_A` updated by Gaussian sites on B: on `f_B`, `q = N(μ_A(X_B) + K_Aα, (K_A⁻¹ + Π)⁻¹)`
//! with `K_A = k_A(X_B, X_B)`; elsewhere Q shares `P_A`'s conditional given `f_B`, so
//! `KL(Q‖P_A) = KL(q ‖ N(μ_A(X_B), K_A))` (generic Gaussian KL on `f_B`, closed form in
//! [`crate::objective::pac_gpc`]). The sites start at the Laplace posterior of B under that prior
//! (Newton with a non-zero prior mean) and are optimised for the bound (PAC-GPC against `P_A`).
//! θ is free (chosen on A); a fraction fixed in advance costs nothing, the best of the menu
//! {0.3, 0.5, 0.7} costs `ln 3`. With [`SplitPriorConfig::catoni`] the inequality is Catoni's
//! (tighter-bounds spec §1.2) at a λ fixed without B: given, the best of a grid fixed in advance
//! (`ln 5`), or estimated on A alone (a nested split of A: `P_{A₁}` with θ_A, the sites of A₂
//! optimised against it, λ optimal for A₂'s Gibbs error and `(KL + penalty + ln(1/δ))/N_B`).
//! The same nested split of A picks, at no charge, the prior's covariance scale t and mean
//! scale s (`GP(s·μ_A, t·k_A)`) and its kernel structure among several (e.g. SE-ARD and SE
//! iso, θ of each by ML-II on A); `P_A` may be the EP posterior instead of Laplace's. With
//! [`SplitPriorConfig::both_directions`] the parts' roles are also swapped and the lower of
//! the two certificates kept, a union bound over both directions (`ln 2` more).
//!
//! Q is returned as the shared [`GaussianPosterior`] with basis `A ∪ B`: the prior GP times the
//! Laplace sites of A and the sites of B, whose marginals on B are those of q.

use faer::{Mat, MatRef};

use crate::bounds::{
    catoni_optimal_lambda, BoundKind, BoundTarget, CatoniLambda, ConfidenceTerm, CATONI_GRID,
};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::data::{permutation, Dataset, Standardizer};
use crate::error::{Error, Result};
use crate::inference::ep::ep;
use crate::inference::evidence::{fit_ep_ml2, fit_laplace_ml2, ClassifierMlConfig};
use crate::inference::laplace::{laplace, LaplaceConfig};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::{Covariance, GaussianPosterior, Prior};

use crate::select::Menu;

use super::pac_gpc::{optimise_sites, LatentPrior, PacGpcConfig, SiteEvaluation, SiteParams};

pub use crate::prior::split::{SplitFraction, SPLIT_FRACTIONS as FRACTION_MENU};

/// Settings of [`fit_split_prior`].
#[derive(Clone, Debug)]
pub struct SplitPriorConfig {
    /// The fraction of part A.
    pub fraction: SplitFraction,
    /// Seed of the permutation that makes the split.
    pub seed: u64,
    /// Optimise the sites of B for the bound (else: the Laplace posterior of B under `P_A`).
    pub optimise_sites: bool,
    /// δ, confidence term, bound form, optimiser and Laplace settings (the grid is unused).
    pub bound: PacGpcConfig,
    /// ML-II on A.
    pub ml: ClassifierMlConfig,
    /// Catoni's bound with λ fixed without B instead of the kl bound of `bound.term`.
    pub catoni: Option<CatoniLambda>,
    /// Scales t of the prior's covariance (`P_A = GP(μ_A, t·k_A)`, any t is a prior fixed
    /// by A); with more than one, the nested split of A picks the one whose estimated
    /// certificate is lowest (no charge). Default `[1.0]`.
    pub prior_scales: Vec<f64>,
    /// Other kernel structures for ML-II on A besides the given one (e.g. SE iso beside
    /// SE-ARD); the nested split of A picks the kernel (no charge). Default none.
    pub alt_kernels: Vec<Kernel>,
    /// Scales s of the prior's mean (`P_A = GP(s·μ_A, t·k_A)`), picked with t by the nested
    /// split of A (no charge). Default `[1.0]`.
    pub mean_scales: Vec<f64>,
    /// EP instead of Laplace for `P_A` (and for `P_{A₁}` of the nested split).
    pub ep_prior: bool,
    /// Also certify with the parts' roles swapped (B's prior from the other part) and keep
    /// the lower certificate: a union bound over the two directions, `ln 2` more.
    pub both_directions: bool,
}

/// The prior-scale menu of the `split-prior+catoni+scale` row: t ∈ {1, ½, ¼, ⅛, 1/16}.
pub const PRIOR_SCALES: [f64; 5] = [1.0, 0.5, 0.25, 0.125, 0.0625];

impl SplitPriorConfig {
    /// The menu of fractions, seed 0, sites optimised, the PAC-GPC defaults (δ = 0.01).
    pub fn new(fraction: SplitFraction, seed: u64) -> Self {
        Self {
            fraction,
            seed,
            optimise_sites: true,
            bound: PacGpcConfig::default(),
            ml: ClassifierMlConfig::default(),
            catoni: None,
            prior_scales: vec![1.0],
            alt_kernels: Vec::new(),
            mean_scales: vec![1.0],
            ep_prior: false,
            both_directions: false,
        }
    }
}

/// A classifier certified with a data-dependent prior.
#[derive(Clone, Debug)]
pub struct SplitPriorFit {
    /// Q on standardised inputs (basis `A ∪ B`, site form).
    pub posterior: GaussianPosterior,
    /// The scaler fitted on part A.
    pub x_scaler: Standardizer,
    /// The certificate on part B.
    pub certificate: Certificate,
    /// The certificate of the Laplace posterior of B under `P_A` (the sites' start).
    pub laplace_certificate: Certificate,
    /// The fraction used.
    pub fraction: f64,
    /// Row indices of part A and part B.
    pub part_a: Vec<usize>,
    /// Row indices of part B (the bound's sample).
    pub part_b: Vec<usize>,
    /// Catoni's λ of the certificate, if Catoni's bound was used.
    pub lambda: Option<f64>,
    /// The scale t of the prior's covariance.
    pub prior_scale: f64,
    /// The scale s of the prior's mean.
    pub mean_scale: f64,
    /// The kernel of `P_A` (θ by ML-II on A; on A's standardised inputs).
    pub prior_kernel: Kernel,
}

/// The Laplace posterior of `y` under the prior `N(m₀, K₀)`: Newton on
/// `Ψ(a) = −½aᵀK₀a + Σ ln p(y_i | m₀ + K₀a)` (GPML Alg. 3.1 with the offset `m₀`), step
/// halving; returns the sites `α = a = ∇ln p(f̂)`, `π = W(f̂)`.
pub fn laplace_with_prior_mean(
    prior: &LatentPrior,
    lik: &Likelihood,
    y: &[f64],
    cfg: &LaplaceConfig,
) -> Result<SiteParams> {
    lik.require_derivatives("Laplace")?;
    let n = y.len();
    let k = &prior.cov;
    let psi = |a: &[f64], ft: &[f64]| -> f64 {
        -0.5 * linalg::dot(a, ft)
            + (0..n)
                .map(|i| lik.ln_p_derivs(y[i], prior.mean[i] + ft[i]).ln_p)
                .sum::<f64>()
    };
    let (mut a, mut ft) = (vec![0.0; n], vec![0.0; n]);
    let mut obj = psi(&a, &ft);
    for _ in 0..cfg.max_iter {
        let d: Vec<_> = (0..n)
            .map(|i| lik.ln_p_derivs(y[i], prior.mean[i] + ft[i]))
            .collect();
        let sw: Vec<f64> = d.iter().map(|d| (-d.d2).max(0.0).sqrt()).collect();
        let chol = Cholesky::factor_filled(
            n,
            linalg::fill_site_b(k, &sw, 0.0),
            None,
            &JitterPolicy::default(),
            "I + W½K_AW½",
        )?;
        // b = W f̃ + ∇ln p, a = b − W½B⁻¹W½K₀b (GPML Alg. 3.1 l. 6–8 in the offset f̃ = f − m₀).
        let b: Vec<f64> = (0..n).map(|i| sw[i] * sw[i] * ft[i] + d[i].d1).collect();
        let kb = linalg::mat_vec(k, &b);
        let swkb: Vec<f64> = (0..n).map(|i| sw[i] * kb[i]).collect();
        let sol = chol.solve_vec(&swkb);
        let a_new: Vec<f64> = (0..n).map(|i| b[i] - sw[i] * sol[i]).collect();
        let f_new = linalg::mat_vec(k, &a_new);
        let mut step = 1.0;
        let (mut a_try, mut f_try, mut obj_try);
        loop {
            a_try = lerp(&a, &a_new, step);
            f_try = lerp(&ft, &f_new, step);
            obj_try = psi(&a_try, &f_try);
            if obj_try >= obj - 1e-12 * obj.abs() || step < 1e-6 {
                break;
            }
            step *= 0.5;
        }
        let change = (obj_try - obj).abs();
        (a, ft, obj) = (a_try, f_try, obj_try);
        if change < cfg.tol && step == 1.0 {
            break;
        }
    }
    let d: Vec<_> = (0..n)
        .map(|i| lik.ln_p_derivs(y[i], prior.mean[i] + ft[i]))
        .collect();
    Ok(SiteParams {
        alpha: d.iter().map(|d| d.d1).collect(),
        ln_pi: d
            .iter()
            .map(|d| {
                (-d.d2).max(1e-300).ln().clamp(
                    super::pac_gpc::LN_SITE_PRECISION.0,
                    super::pac_gpc::LN_SITE_PRECISION.1,
                )
            })
            .collect(),
    })
}

/// `x + t (z − x)`.
fn lerp(x: &[f64], z: &[f64], t: f64) -> Vec<f64> {
    x.iter().zip(z).map(|(x, z)| x + t * (z - x)).collect()
}

/// Q: the conditioned prior `P_A` updated by `sites` on the rows of `xb` (site form over
/// part B), the certificate's posterior; its `B` factor is the site evaluation's.
fn posterior_on_b(
    prior: &Prior,
    xb: MatRef<'_, f64>,
    sites: &SiteParams,
    e: &SiteEvaluation,
) -> GaussianPosterior {
    GaussianPosterior::sites(
        prior.clone(),
        xb.to_owned(),
        sites.alpha.clone(),
        e.sqrt_pi.clone(),
        e.chol_b.clone(),
    )
}

/// Where part A comes from in the permutation: its first `na` rows, or (swapped) its last.
fn split_parts(n: usize, na: usize, seed: u64, swapped: bool) -> (Vec<usize>, Vec<usize>) {
    let perm = permutation(n, seed);
    if swapped {
        (perm[n - na..].to_vec(), perm[..n - na].to_vec())
    } else {
        (perm[..na].to_vec(), perm[na..].to_vec())
    }
}

/// The candidate kernel structures of `P_A`: the given one, then [`SplitPriorConfig::alt_kernels`].
fn kernel_structures(kernel_init: &Kernel, cfg: &SplitPriorConfig) -> Vec<Kernel> {
    std::iter::once(kernel_init.clone())
        .chain(cfg.alt_kernels.iter().cloned())
        .collect()
}

/// The posterior of part A at θ by ML-II on A (Laplace, or EP with `ep_prior`).
fn fit_part_a(
    kernel_init: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &SplitPriorConfig,
) -> Result<GaussianPosterior> {
    let ml = if cfg.ep_prior {
        fit_ep_ml2(kernel_init, lik, x, y, &cfg.ml)?
    } else {
        fit_laplace_ml2(kernel_init, lik, x, y, &cfg.ml)?
    };
    Ok(ml.fit.posterior)
}

/// The posterior of part A₁ at a fixed kernel (Laplace, or EP with `ep_prior`).
fn posterior_at(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &SplitPriorConfig,
) -> Result<GaussianPosterior> {
    Ok(if cfg.ep_prior {
        ep(kernel, lik, x, y, &cfg.ml.ep)?.posterior
    } else {
        laplace(kernel, lik, x, y, &cfg.bound.laplace)?.posterior
    })
}

/// Whether the nested split of A is needed: a choice among priors, or Catoni's λ from A.
fn needs_nested(cfg: &SplitPriorConfig) -> bool {
    cfg.prior_scales.len() * cfg.mean_scales.len() * (1 + cfg.alt_kernels.len()) > 1
        || cfg.catoni == Some(CatoniLambda::FromPartA)
}

/// What part A alone fixes of a split at one fraction and direction: the rows of both parts,
/// A's scaler, the prior `P_A` (kernel structure, θ_A by ML-II, scales t and s chosen on a
/// nested split of A) on B's inputs, and the inequalities whose λ part A fixes. `certify`
/// recomputes it from the spec and the sample; nothing here sees part B's labels.
pub struct PartAPrior {
    /// Rows of part A (into the training sample in the fit's order).
    pub part_a: Vec<usize>,
    /// Rows of part B.
    pub part_b: Vec<usize>,
    /// The scaler fitted on A.
    pub x_scaler: Standardizer,
    /// Part B's inputs, standardised by it.
    pub xb: Mat<f64>,
    /// The kernel of `P_A` (θ_A by ML-II on A, before the scale t).
    pub kernel: Kernel,
    /// The covariance scale t.
    pub scale: f64,
    /// The mean scale s.
    pub mean_scale: f64,
    /// `P_A`: the (scaled) posterior of part A as the prior.
    pub prior: Prior,
    /// `P_A`'s mean and covariance on part B, what the sites of B are fitted against.
    latent: LatentPrior,
    /// The inequalities the certificate may use (Catoni's λ from A, a grid of λ, or the
    /// configured term), with the price of choosing among them.
    lambdas: Menu<ConfidenceTerm>,
    /// The certificate's zero-price descriptions of the prior and its choices.
    choices: Vec<PenaltyTerm>,
}

impl PartAPrior {
    /// Catoni's λ fixed on part A, if the certificate is Catoni's (the first candidate's).
    pub fn lambda(&self) -> Option<f64> {
        self.lambdas.items.first().and_then(|t| t.catoni_lambda())
    }

    /// Q: `P_A` updated by `sites` on part B (site form over B).
    pub fn posterior(&self, sites: &SiteParams) -> Result<GaussianPosterior> {
        let e = SiteEvaluation::new(&self.latent, sites)?;
        Ok(posterior_on_b(&self.prior, self.xb.as_ref(), sites, &e))
    }
}

/// Part A's prior for one split at a fixed fraction and direction (`menu_nats`: the price of
/// the choice among fractions and directions, which the nested estimate of λ counts).
#[allow(clippy::too_many_arguments)]
pub fn part_a_prior(
    kernel_init: &Kernel,
    lik: &Likelihood,
    train: &Dataset,
    classifier: GibbsClassifier,
    fraction: f64,
    swapped: bool,
    menu_nats: f64,
    cfg: &SplitPriorConfig,
) -> Result<PartAPrior> {
    let n = train.n();
    let na = crate::prior::split::part_a_size(n, fraction);
    if na < 2 || n - na < 2 {
        return Err(Error::InvalidParameter {
            name: "split fraction",
            value: fraction,
            reason: "leaves fewer than two points in a part",
        });
    }
    let (part_a, part_b) = split_parts(n, na, cfg.seed, swapped);
    let (a, b) = (train.subset(&part_a), train.subset(&part_b));
    let x_scaler = Standardizer::fit(a.x.as_ref(), &a.feature_names)?;
    let (xa, xb) = (
        x_scaler.transform(a.x.as_ref())?,
        x_scaler.transform(b.x.as_ref())?,
    );
    let posts_a = kernel_structures(kernel_init, cfg)
        .iter()
        .map(|k| fit_part_a(k, lik, xa.as_ref(), &a.y, cfg))
        .collect::<Result<Vec<_>>>()?;
    let nested = if needs_nested(cfg) {
        let part_a_data = (&xa, a.y.as_slice(), lik);
        let kernels_a: Vec<Kernel> = posts_a.iter().map(|p| p.kernel().clone()).collect();
        Some(nested_estimate(
            cfg,
            &kernels_a,
            part_a_data,
            classifier,
            n - na,
            menu_nats,
        )?)
    } else {
        None
    };
    let first = |v: &[f64], what: &'static str| v.first().copied().ok_or(Error::Empty { what });
    let (kernel_ix, scale, mean_scale) = match &nested {
        Some(e) => (e.kernel, e.scale, e.mean_scale),
        None => (
            0,
            first(&cfg.prior_scales, "prior scales")?,
            first(&cfg.mean_scales, "mean scales")?,
        ),
    };
    let post_a = &posts_a[kernel_ix];
    let prior = Prior::conditioned(scaled_prior_with_mean(post_a, scale, mean_scale)?);
    let latent = LatentPrior::of(&prior, xb.as_ref());
    let mut choices = vec![PenaltyTerm {
        what: format!(
            "prior: {} posterior on part A ({na} of {n} points, fraction {fraction}{}, seed {}), θ by ML-II on A",
            if cfg.ep_prior { "EP" } else { "Laplace" },
            if swapped { ", parts swapped" } else { "" },
            cfg.seed
        ),
        nats: 0.0,
    }];
    if cfg.prior_scales.len() > 1 || cfg.mean_scales.len() > 1 || posts_a.len() > 1 {
        choices.push(PenaltyTerm {
            what: format!(
                "prior kernel {}, covariance scale t = {scale}, mean scale s = {mean_scale} chosen on a nested split of part A",
                post_a.kernel().describe()
            ),
            nats: 0.0,
        });
    }
    Ok(PartAPrior {
        part_a,
        part_b,
        x_scaler,
        xb,
        kernel: post_a.kernel().clone(),
        scale,
        mean_scale,
        lambdas: catoni_lambdas(cfg, nested.as_ref())?,
        prior,
        latent,
        choices,
    })
}

/// One split at a fixed fraction and direction; `menu_choice` is the price of the choice.
#[allow(clippy::too_many_arguments)]
fn fit_fraction(
    kernel_init: &Kernel,
    lik: &Likelihood,
    train: &Dataset,
    classifier: GibbsClassifier,
    fraction: f64,
    swapped: bool,
    menu_choice: &PenaltyTerm,
    cfg: &SplitPriorConfig,
) -> Result<SplitPriorFit> {
    let pa = part_a_prior(
        kernel_init,
        lik,
        train,
        classifier,
        fraction,
        swapped,
        menu_choice.nats,
        cfg,
    )?;
    let b = train.subset(&pa.part_b);
    let (latent, xb) = (&pa.latent, &pa.xb);
    let mut choices = vec![menu_choice.clone()];
    choices.extend(pa.choices.iter().cloned());
    let terms = &pa.lambdas;
    let term_price = terms.price();
    let start = laplace_with_prior_mean(latent, lik, &b.y, &cfg.bound.laplace)?;
    let loss = GibbsLoss::Classification(classifier);
    let certify = |sites: &SiteParams, term: ConfidenceTerm| {
        let mut all = choices.clone();
        all.push(term_price.clone());
        let spec = CertificateSpec::new(cfg.bound.delta, term, all);
        let e = SiteEvaluation::new(latent, sites)?;
        let q = posterior_on_b(&pa.prior, xb.as_ref(), sites, &e);
        let c = Certificate::of_posterior(&q, xb.as_ref(), &b.y, &loss, &spec)?;
        Ok::<_, Error>((q, c))
    };
    let optimise = |term: ConfidenceTerm, from: &SiteParams| {
        let bound = BoundTarget {
            delta: cfg.bound.delta,
            term,
            penalty: menu_choice.nats + term_price.nats,
            kind: cfg.bound.kind,
        };
        optimise_sites(
            latent.clone(),
            &b.y,
            classifier,
            bound,
            from,
            &cfg.bound.lbfgs,
        )
        .map(|r| r.0)
    };
    // The middle λ's sites; with a grid, every λ is scored on them and the best re-optimised.
    let mut term = terms.items[terms.len() / 2];
    let (q_lap, laplace_certificate) = certify(&start, term)?;
    let (posterior, certificate) = if cfg.optimise_sites {
        let mut sites = optimise(term, &start)?;
        if terms.len() > 1 {
            term = terms
                .by_bound(|t, _| Ok((*t, certify(&sites, *t)?.1.bound)))?
                .value;
            sites = optimise(term, &sites)?;
        }
        certify(&sites, term)?
    } else {
        (q_lap, laplace_certificate.clone())
    };
    Ok(SplitPriorFit {
        posterior,
        certificate,
        laplace_certificate,
        fraction,
        lambda: term.catoni_lambda(),
        prior_scale: pa.scale,
        mean_scale: pa.mean_scale,
        prior_kernel: pa.kernel,
        x_scaler: pa.x_scaler,
        part_a: pa.part_a,
        part_b: pa.part_b,
    })
}

/// `P_A` with its covariance scaled by t: `GP(μ_A, t·k_A)` is the posterior of the prior
/// `t·k` under the sites of A at precisions `π_A/t` with mean weights `α_A/t`
/// (`t k − t²k_A·(tK_AA + tΠ⁻¹)⁻¹k_·A = t·k_A`); `B = I + Π½KΠ½` is unchanged.
pub fn scaled_prior(post: &GaussianPosterior, t: f64) -> Result<GaussianPosterior> {
    scaled_prior_with_mean(post, t, 1.0)
}

/// `P_A` with its covariance scaled by t and its mean by s: `GP(s·μ_A, t·k_A)`, the
/// [`scaled_prior`] with mean weights `s·α_A/t` (`t·k(x, X_A)·sα_A/t = s·μ_A(x)`).
pub fn scaled_prior_with_mean(
    post: &GaussianPosterior,
    t: f64,
    s: f64,
) -> Result<GaussianPosterior> {
    if !s.is_finite() {
        return Err(Error::InvalidParameter {
            name: "prior mean scale",
            value: s,
            reason: "must be finite",
        });
    }
    if !(t > 0.0 && t.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "prior covariance scale",
            value: t,
            reason: "must be positive and finite",
        });
    }
    if t == 1.0 && s == 1.0 {
        return Ok(post.clone());
    }
    let Covariance::Sites { sqrt_pi, chol_b } = &post.cov else {
        return Err(Error::Unsupported("P_A must be in site form".into()));
    };
    Ok(GaussianPosterior::sites(
        Kernel::Scale {
            ln_variance: t.ln(),
            inner: Box::new(post.kernel().clone()),
        },
        post.basis.clone(),
        post.alpha.iter().map(|a| s * a / t).collect(),
        sqrt_pi.iter().map(|p| p / t.sqrt()).collect(),
        chol_b.clone(),
    ))
}

/// The inequalities of [`SplitPriorConfig::catoni`], every λ fixed without part B
/// (`nested`: the estimate of part A, needed for [`CatoniLambda::FromPartA`]): Catoni's bound at
/// the λ of a grid fixed in advance (charged `ln 5`), at one λ fixed in advance or on part A
/// (free), or the configured term.
fn catoni_lambdas(
    cfg: &SplitPriorConfig,
    nested: Option<&NestedEstimate>,
) -> Result<Menu<ConfidenceTerm>> {
    let catoni = |lambda: f64| ConfidenceTerm::Catoni { lambda };
    Ok(match cfg.catoni {
        None => Menu::free(vec![cfg.bound.term], "confidence term", "in advance"),
        Some(CatoniLambda::Fixed(l)) => {
            Menu::free(vec![catoni(l)], format!("Catoni λ = {l}"), "in advance")
        }
        Some(CatoniLambda::Grid) => Menu::charged(
            CATONI_GRID.iter().map(|&l| catoni(l)).collect(),
            "Catoni λ (geometric in [0.3, 3])",
        ),
        Some(CatoniLambda::FromPartA) => {
            let l = nested
                .ok_or(Error::Empty {
                    what: "nested split of part A",
                })?
                .lambda();
            Menu::free(
                vec![catoni(l)],
                format!("Catoni λ = {l:.4}"),
                "on a nested split of part A",
            )
        }
    })
}

/// What a nested split of part A predicts for part B's certificate: A₂'s Gibbs error and the
/// complexity `(KL + penalty + ln(1/δ))/N_B` of its sites against `P_{A₁}` with kernel
/// `kernel` (an index into the candidate structures), covariance scale t and mean scale s.
#[derive(Clone, Copy, Debug)]
struct NestedEstimate {
    kernel: usize,
    scale: f64,
    mean_scale: f64,
    risk: f64,
    complexity: f64,
}

impl NestedEstimate {
    /// The estimated certificate at Catoni's best λ, `kl⁻¹(q, c)` (spec §1.2).
    fn bound(&self) -> f64 {
        crate::special::kl_inverse(self.risk, self.complexity)
    }

    /// [`catoni_optimal_lambda`] of the estimate, kept in [0.1, 10].
    fn lambda(&self) -> f64 {
        catoni_optimal_lambda(self.risk, self.complexity).clamp(0.1, 10.0)
    }
}

/// Part A alone predicts B's certificate: split A by a seeded permutation into halves A₁, A₂;
/// for each kernel of `kernels_a` (θ by ML-II on A) and each prior scale t and mean scale s
/// of the configuration, the posterior of A₁ at that kernel, scaled, is the prior of A₂, whose
/// sites are optimised for the kl bound as B's will be; the lowest estimated certificate wins.
fn nested_estimate(
    cfg: &SplitPriorConfig,
    kernels_a: &[Kernel],
    (xa, ya, lik): (&Mat<f64>, &[f64], &Likelihood),
    classifier: GibbsClassifier,
    n_b: usize,
    penalty: f64,
) -> Result<NestedEstimate> {
    let a = Dataset::new(xa.clone(), ya.to_vec())?;
    let perm = permutation(a.n(), cfg.seed.wrapping_add(0x9e37_79b9));
    let (a1, a2) = (a.subset(&perm[..a.n() / 2]), a.subset(&perm[a.n() / 2..]));
    crate::data::check_binary_labels(&a1.y)?;
    let bound = BoundTarget {
        delta: cfg.bound.delta,
        term: ConfidenceTerm::Sharp,
        penalty,
        kind: BoundKind::Kl,
    };
    let posts1 = kernels_a
        .iter()
        .map(|k| posterior_at(k, lik, a1.x.as_ref(), &a1.y, cfg))
        .collect::<Result<Vec<_>>>()?;
    let mut priors = Vec::new();
    for kernel in 0..kernels_a.len() {
        for &scale in &cfg.prior_scales {
            for &mean_scale in &cfg.mean_scales {
                priors.push((kernel, scale, mean_scale));
            }
        }
    }
    let menu = Menu::free(
        priors,
        "prior kernel, covariance scale t and mean scale s",
        "on a nested split of part A",
    );
    let chosen = menu.by_bound(|&(kernel, scale, mean_scale), _| {
        let prior1 =
            Prior::conditioned(scaled_prior_with_mean(&posts1[kernel], scale, mean_scale)?);
        let latent1 = LatentPrior::of(&prior1, a2.x.as_ref());
        let start = laplace_with_prior_mean(&latent1, lik, &a2.y, &cfg.bound.laplace)?;
        let lbfgs = &cfg.bound.lbfgs;
        let (sites, _) = optimise_sites(latent1.clone(), &a2.y, classifier, bound, &start, lbfgs)?;
        let e = SiteEvaluation::new(&latent1, &sites)?;
        let loss = GibbsLoss::Classification(classifier);
        let est = NestedEstimate {
            kernel,
            scale,
            mean_scale,
            risk: loss.empirical_risk(&a2.y, &e.marginals)?,
            // The complexity of part B's bound with Catoni's confidence term ln(1/δ).
            complexity: BoundTarget {
                term: ConfidenceTerm::Catoni { lambda: 1.0 },
                ..bound
            }
            .complexity(e.kl, n_b, 0.0),
        };
        Ok((est, est.bound()))
    })?;
    Ok(chosen.value)
}

/// Certify a GP classifier with the data-dependent prior of a seeded split of `train` (raw
/// inputs, ±1 labels): module doc.
pub fn fit_split_prior(
    kernel_init: &Kernel,
    lik: &Likelihood,
    train: &Dataset,
    classifier: GibbsClassifier,
    cfg: &SplitPriorConfig,
) -> Result<SplitPriorFit> {
    crate::data::check_binary_labels(&train.y)?;
    let menu = split_menu(cfg.fraction, cfg.both_directions);
    let chosen = menu.by_bound(|&(f, swapped), price| {
        let fit = fit_fraction(kernel_init, lik, train, classifier, f, swapped, price, cfg)?;
        let bound = fit.certificate.bound;
        Ok((fit, bound))
    })?;
    Ok(chosen.value)
}

/// The menu of (fraction, swapped) pairs a classifier split prior chooses from by its bound:
/// the fractions of `fraction` (one, or 0.3, 0.5, 0.7), each in one direction or both.
pub fn split_menu(fraction: SplitFraction, both_directions: bool) -> Menu<(f64, bool)> {
    let fractions = match fraction {
        SplitFraction::Fixed(f) => vec![f],
        SplitFraction::Menu => FRACTION_MENU.to_vec(),
    };
    let directions: &[bool] = if both_directions {
        &[false, true]
    } else {
        &[false]
    };
    let what = match (fractions.len(), directions.len()) {
        (1, 1) => "split fraction",
        (1, _) => "direction of the split (A→B or B→A)",
        (_, 1) => "split fraction {0.3, 0.5, 0.7}",
        _ => "split fraction {0.3, 0.5, 0.7} and direction",
    };
    let items = fractions
        .iter()
        .flat_map(|&f| directions.iter().map(move |&d| (f, d)))
        .collect();
    Menu::charged(items, what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::laplace::laplace;

    fn toy(n: usize) -> Dataset {
        let x = Mat::from_fn(n, 2, |i, j| {
            (((i * 17 + j * 29) % 41) as f64 / 41.0) * 4.0 - 2.0
        });
        let y = (0..n)
            .map(|i| {
                let t =
                    x[(i, 0)].sin() + 0.4 * x[(i, 1)] + 0.3 * (((i * 7) % 5) as f64 - 2.0) / 2.0;
                if t > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        Dataset::new(x, y).unwrap()
    }

    /// Catoni's λ "from part A" does not depend on part B: flipping B's labels leaves it
    /// unchanged. The certificate is Catoni's closed form at that λ with `ln(1/δ)` and no
    /// charge; the grid picks one of its five λ and charges `ln 5`.
    #[test]
    fn catoni_lambda_from_part_a_ignores_part_b() {
        let d = toy(60);
        let lik = Likelihood::probit();
        let c = GibbsClassifier::latent(&lik);
        let mut cfg = SplitPriorConfig::new(SplitFraction::Fixed(0.5), 3);
        cfg.bound.lbfgs.max_iter = 40;
        cfg.catoni = Some(CatoniLambda::FromPartA);
        let k = Kernel::se_iso(1.0, 1.0);
        let fit = fit_split_prior(&k, &lik, &d, c, &cfg).unwrap();
        let lambda = fit.lambda.expect("Catoni's λ");
        let mut flipped = d.clone();
        for &i in &fit.part_b {
            flipped.y[i] = -flipped.y[i];
        }
        let again = fit_split_prior(&k, &lik, &flipped, c, &cfg).unwrap();
        assert_eq!(again.part_b, fit.part_b);
        assert_eq!(again.lambda, Some(lambda));
        let cert = &fit.certificate;
        assert_eq!(cert.penalty, 0.0);
        assert_eq!(cert.confidence_term, ConfidenceTerm::Catoni { lambda });
        let cx = (cert.kl + 100f64.ln()) / cert.n as f64;
        let want = crate::bounds::catoni_bound(cert.empirical_risk, cx, lambda);
        assert!(
            (cert.bound - want).abs() < 1e-14,
            "{} vs {want}",
            cert.bound
        );
        cfg.catoni = Some(CatoniLambda::Grid);
        let g = fit_split_prior(&k, &lik, &d, c, &cfg).unwrap();
        assert!(CATONI_GRID.contains(&g.lambda.unwrap()));
        assert!((g.certificate.penalty - 5f64.ln()).abs() < 1e-12);
    }

    /// The scaled prior `GP(μ_A, t·k_A)`: at new inputs its mean is `P_A`'s and its
    /// covariance t times `P_A`'s; the nested split picks a scale of the menu.
    #[test]
    fn scaled_prior_scales_the_covariance_only() {
        let d = toy(30);
        let xs = d.subset(&(0..10).collect::<Vec<_>>());
        let lik = Likelihood::probit();
        let fit = laplace(
            &Kernel::se_iso(0.9, 1.5),
            &lik,
            d.x.as_ref(),
            &d.y,
            &Default::default(),
        )
        .unwrap();
        let on = |p: GaussianPosterior| LatentPrior::of(&Prior::conditioned(p), xs.x.as_ref());
        let base = on(fit.posterior.clone());
        let t = 0.3;
        let scaled = on(scaled_prior(&fit.posterior, t).unwrap());
        for i in 0..10 {
            assert!((scaled.mean[i] - base.mean[i]).abs() < 1e-10);
            for j in 0..10 {
                let want = t * base.cov[(i, j)];
                assert!((scaled.cov[(i, j)] - want).abs() < 1e-10);
            }
        }
        assert!(scaled_prior(&fit.posterior, 0.0).is_err());
        let s = 1.7;
        let both = on(scaled_prior_with_mean(&fit.posterior, t, s).unwrap());
        for i in 0..10 {
            assert!((both.mean[i] - s * base.mean[i]).abs() < 1e-10);
            assert!((both.cov[(i, i)] - t * base.cov[(i, i)]).abs() < 1e-10);
        }
        let mut cfg = SplitPriorConfig::new(SplitFraction::Fixed(0.5), 1);
        cfg.bound.lbfgs.max_iter = 30;
        cfg.prior_scales = PRIOR_SCALES.to_vec();
        let c = GibbsClassifier::latent(&lik);
        let s = fit_split_prior(&Kernel::se_iso(1.0, 1.0), &lik, &toy(60), c, &cfg).unwrap();
        assert!(PRIOR_SCALES.contains(&s.prior_scale));
        assert_eq!(s.certificate.penalty, 0.0);
    }

    /// Both directions of a fixed half split: the certificate is about one half, the other
    /// half is the prior's, the price is `ln 2`; the nested split of A picks the kernel among
    /// the two structures and a mean scale of the menu, at no charge.
    #[test]
    fn both_directions_pay_ln_2_and_swap_the_halves() {
        let d = toy(60);
        let lik = Likelihood::probit();
        let c = GibbsClassifier::latent(&lik);
        let mut cfg = SplitPriorConfig::new(SplitFraction::Fixed(0.5), 2);
        cfg.bound.lbfgs.max_iter = 30;
        cfg.catoni = Some(CatoniLambda::FromPartA);
        let k = Kernel::se_ard(&[1.0, 1.0], 1.0);
        let one = fit_split_prior(&k, &lik, &d, c, &cfg).unwrap();
        cfg.both_directions = true;
        cfg.alt_kernels = vec![Kernel::se_iso(1.0, 1.0)];
        cfg.mean_scales = vec![1.0, 2.0];
        let two = fit_split_prior(&k, &lik, &d, c, &cfg).unwrap();
        assert_eq!(one.certificate.penalty, 0.0);
        assert!((two.certificate.penalty - 2f64.ln()).abs() < 1e-12);
        assert!(two.part_b == one.part_b || two.part_b == one.part_a);
        let mut all: Vec<usize> = two.part_a.iter().chain(&two.part_b).copied().collect();
        all.sort();
        assert_eq!(all, (0..60).collect::<Vec<_>>());
        assert!([1.0, 2.0].contains(&two.mean_scale));
        assert_eq!(one.mean_scale, 1.0);
        assert_eq!(one.prior_kernel.n_params(), 3);
    }

    /// With a zero prior mean, Newton with the offset is plain Laplace; with a non-zero one
    /// the sites satisfy the mode's stationarity `α = ∇ln p(y | m₀ + K₀α)`.
    #[test]
    fn newton_with_prior_mean_finds_the_mode() {
        let d = toy(30);
        let k = Kernel::se_iso(1.0, 2.0);
        let lik = Likelihood::probit();
        let cfg = LaplaceConfig {
            tol: 1e-12,
            ..Default::default()
        };
        let plain = laplace(&k, &lik, d.x.as_ref(), &d.y, &cfg).unwrap();
        let zero = LatentPrior::of_kernel(&k, d.x.as_ref());
        let s = laplace_with_prior_mean(&zero, &lik, &d.y, &cfg).unwrap();
        for i in 0..30 {
            assert!((s.alpha[i] - plain.posterior.alpha[i]).abs() < 1e-8);
        }
        let shifted = LatentPrior {
            mean: (0..30).map(|i| 0.1 * i as f64 - 1.5).collect(),
            ..zero
        };
        let s = laplace_with_prior_mean(&shifted, &lik, &d.y, &cfg).unwrap();
        let f = linalg::mat_vec(&shifted.cov, &s.alpha);
        for i in 0..30 {
            let g = lik.ln_p_derivs(d.y[i], shifted.mean[i] + f[i]).d1;
            assert!((g - s.alpha[i]).abs() < 1e-7, "{i}: {g} vs {}", s.alpha[i]);
        }
    }

    /// Q, `P_A` updated on B, has q's marginals on B; `P_A`'s mean and covariance at B equal
    /// those of the Laplace posterior on A; the site evaluation's KL and Q's `KL(Q‖P_A)`
    /// equal the dense Gaussian KL `KL(N(m_q, S_q) ‖ N(μ_A, K_A))` with `S_q` and `K_A` the B
    /// blocks of the full site form over A ∪ B computed by dense inverses.
    #[test]
    fn kl_against_the_part_a_prior_matches_brute_force() {
        let d = toy(24);
        let (xa, xb) = (
            d.subset(&(0..12).collect::<Vec<_>>()),
            d.subset(&(12..24).collect::<Vec<_>>()),
        );
        let k = Kernel::se_iso(0.9, 1.5);
        let lik = Likelihood::probit();
        let fit_a = laplace(&k, &lik, xa.x.as_ref(), &xa.y, &Default::default()).unwrap();
        let prior = Prior::conditioned(fit_a.posterior.clone());
        let latent = LatentPrior::of(&prior, xb.x.as_ref());
        let pa = fit_a.posterior.predict(xb.x.as_ref()).unwrap();
        for i in 0..12 {
            assert!((latent.cov[(i, i)] - pa.var[i]).abs() < 1e-12);
            assert!((latent.mean[i] - pa.mean[i]).abs() < 1e-12);
        }
        let sites = SiteParams {
            alpha: (0..12).map(|i| 0.2 * (i as f64).sin()).collect(),
            ln_pi: (0..12).map(|i| 0.4 * i as f64 - 2.0).collect(),
        };
        let e = SiteEvaluation::new(&latent, &sites).unwrap();
        let q = posterior_on_b(&prior, xb.x.as_ref(), &sites, &e);
        let m = q.predict(xb.x.as_ref()).unwrap();
        for i in 0..12 {
            assert!((m.mean[i] - e.marginals.mean[i]).abs() < 1e-10);
            assert!((m.var[i] - e.marginals.var[i]).abs() < 1e-10);
        }
        assert!((q.kl_to_prior() - e.kl).abs() < 1e-10);
        // Brute force: the full 24×24 site form over A ∪ B, Σ = (K⁻¹ + Π)⁻¹, with Π the sites
        // of A (Laplace's) and of B, its B block against the prior's B block (K_A computed as
        // (K⁻¹ + Π_A)⁻¹ restricted to B); the mean of q on B from P_A's mean and K_A α_B.
        let none = JitterPolicy::none();
        let full = Mat::from_fn(24, 2, |i, j| {
            if i < 12 {
                xa.x[(i, j)]
            } else {
                xb.x[(i - 12, j)]
            }
        });
        let mut kfull = k.gram(full.as_ref());
        for i in 0..24 {
            kfull[(i, i)] += 1e-10;
        }
        let kinv = Cholesky::factor(kfull.as_ref(), &none, "K")
            .unwrap()
            .inverse();
        let Covariance::Sites { sqrt_pi: sa, .. } = &fit_a.posterior.cov else {
            panic!()
        };
        let sqrt_pi: Vec<f64> = sa.iter().cloned().chain(sites.sqrt_pi()).collect();
        let block = |pi_b: bool| -> Mat<f64> {
            let mut p = kinv.clone();
            for i in 0..24 {
                if i < 12 || pi_b {
                    p[(i, i)] += sqrt_pi[i] * sqrt_pi[i];
                }
            }
            let s = Cholesky::factor(p.as_ref(), &none, "P").unwrap().inverse();
            Mat::from_fn(12, 12, |i, j| s[(12 + i, 12 + j)])
        };
        let (sq, ka) = (block(true), block(false));
        let ma = &latent.mean;
        let ka_alpha = linalg::mat_vec(&ka, &sites.alpha);
        let mq: Vec<f64> = (0..12).map(|i| ma[i] + ka_alpha[i]).collect();
        let ka_inv = Cholesky::factor(ka.as_ref(), &none, "KA")
            .unwrap()
            .inverse();
        let dm: Vec<f64> = (0..12).map(|i| mq[i] - ma[i]).collect();
        let quad = linalg::dot(&dm, &linalg::mat_vec(&ka_inv, &dm));
        let tr = linalg::trace_of_product(ka_inv.as_ref(), sq.as_ref());
        let ld = |m: &Mat<f64>| Cholesky::factor(m.as_ref(), &none, "x").unwrap().ln_det();
        let want = 0.5 * (tr + quad - 12.0 + ld(&ka) - ld(&sq));
        assert!((e.kl - want).abs() < 1e-6, "{} vs {want}", e.kl);
        // The dense route inverts K (24 close points, ridge 1e-10): round-off ≈ 1e-7 here.
        for i in 0..12 {
            assert!(
                (ka[(i, i)] - pa.var[i]).abs() < 2e-6,
                "{} vs {}",
                ka[(i, i)],
                pa.var[i]
            );
        }
    }
}
