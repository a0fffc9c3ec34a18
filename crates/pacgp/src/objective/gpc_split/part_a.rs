//! Part A's prior: the kernel structures and θ fitted on A, the scaled prior `P_A` (covariance
//! scaled by t), Catoni's λ and the nested split of A that chooses the scale and structure.

use super::*;

/// Q: the conditioned prior `P_A` updated by `sites` on the rows of `xb` (site form over
/// part B), the certificate's posterior; its `B` factor is the site evaluation's.
pub(super) fn posterior_on_b(
    prior: &Prior,
    xb: MatRef<'_, f64>,
    sites: &SiteParams,
    e: &SiteEvaluation,
) -> Result<GaussianPosterior> {
    Ok(GaussianPosterior::sites(
        prior.try_clone()?,
        xb.to_owned(),
        sites.alpha.clone(),
        e.sqrt_pi.clone(),
        e.chol_b.try_clone()?,
    ))
}

/// Part A must hold both classes: its posterior is the prior. The split itself is not
/// stratified — a split that looked at the labels would make part B's labels depend on part
/// A's, and the bound on B needs B to be a sample independent of the prior.
fn check_both_classes(train: &Dataset, part_a: &[usize], fraction: f64, seed: u64) -> Result<()> {
    let first = train.y[part_a[0]];
    if part_a.iter().all(|&i| train.y[i] == first) {
        return Err(Error::Unsupported(format!(
            "part A of the split prior's sample split ({} rows at fraction {fraction}, seed {seed}) \
             holds only one class, and its posterior is the prior: the classifier split prior needs \
             more data or a larger fraction",
            part_a.len()
        )));
    }
    Ok(())
}

/// The candidate kernel structures of `P_A`: the given one, then [`SplitPriorConfig::alt_kernels`].
pub(super) fn kernel_structures(kernel_init: &Kernel, cfg: &SplitPriorConfig) -> Vec<Kernel> {
    std::iter::once(kernel_init.clone())
        .chain(cfg.alt_kernels.iter().cloned())
        .collect()
}

/// The posterior of part A at θ by ML-II on A (Laplace, or EP with `ep_prior`), and where
/// ML-II started when the wide start moved it: on more than [`start::WIDE_INPUTS`] inputs at
/// the median distance of A's rows (drawn with `cfg.seed`), stopped by the stall rule, as the
/// classifiers' own ML-II ([`crate::fit::classifier`]); `certify` refits A the same way.
pub(super) fn fit_part_a(
    kernel_init: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &SplitPriorConfig,
) -> Result<(GaussianPosterior, Option<String>)> {
    let mut ml_cfg = cfg.ml.clone();
    ml_cfg.lbfgs.stall = start::wide_stall(x.ncols());
    let (kernel, note) =
        start::wide_start_noted(kernel_init.clone(), x, cfg.seed, "leaves the evidence flat");
    let start = Problem::new(&kernel, lik, x, y);
    let ml = if cfg.ep_prior {
        fit_ep_ml2(start, &ml_cfg)?
    } else {
        fit_laplace_ml2(start, &ml_cfg)?
    };
    Ok((ml.fit.posterior, note))
}

/// The posterior of part A₁ at a fixed kernel (Laplace, or EP with `ep_prior`).
pub(super) fn posterior_at(
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
pub(super) fn needs_nested(cfg: &SplitPriorConfig) -> bool {
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
    pub(super) latent: PriorAt,
    /// The inequalities the certificate may use (Catoni's λ from A, a grid of λ, or the
    /// configured term), with the price of choosing among them.
    pub(super) lambdas: Menu<ConfidenceTerm>,
    /// The certificate's zero-price descriptions of the prior and its choices.
    pub(super) choices: Vec<PenaltyTerm>,
    /// Where ML-II on A started, when the wide start moved it (`fit_part_a`; the first
    /// kernel structure's that moved).
    pub start_note: Option<String>,
}

impl PartAPrior {
    /// Catoni's λ fixed on part A, if the certificate is Catoni's (the first candidate's).
    pub fn lambda(&self) -> Option<f64> {
        self.lambdas.items.first().and_then(|t| t.catoni_lambda())
    }

    /// Q: `P_A` updated by `sites` on part B (site form over B).
    pub fn posterior(&self, sites: &SiteParams) -> Result<GaussianPosterior> {
        let e = SiteEvaluation::new(&self.latent, sites)?;
        posterior_on_b(&self.prior, self.xb.as_ref(), sites, &e)
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
    let (part_a, part_b) = SampleSplit {
        swapped,
        ..SampleSplit::new(fraction, cfg.seed)
    }
    .parts(train)?;
    let na = part_a.len();
    check_both_classes(train, &part_a, fraction, cfg.seed)?;
    let (a, b) = (train.subset(&part_a), train.subset(&part_b));
    let x_scaler = Standardizer::fit(a.x.as_ref(), &a.feature_names)?;
    let (xa, xb) = (
        x_scaler.transform(a.x.as_ref())?,
        x_scaler.transform(b.x.as_ref())?,
    );
    let (posts_a, notes): (Vec<_>, Vec<_>) = kernel_structures(kernel_init, cfg)
        .iter()
        .map(|k| fit_part_a(k, lik, xa.as_ref(), &a.y, cfg))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
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
    let latent = prior.at(xb.as_ref())?;
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
        start_note: notes.into_iter().flatten().next(),
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
        return post.try_clone();
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
        chol_b.try_clone()?,
    ))
}

/// The inequalities of [`SplitPriorConfig::catoni`], every λ fixed without part B
/// (`nested`: the estimate of part A, needed for [`CatoniLambda::FromPartA`]): Catoni's bound at
/// the λ of a grid fixed in advance (charged `ln 5`), at one λ fixed in advance or on part A
/// (free), or the configured term.
pub(super) fn catoni_lambdas(
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
pub(super) struct NestedEstimate {
    kernel: usize,
    scale: f64,
    mean_scale: f64,
    risk: f64,
    complexity: f64,
}

impl NestedEstimate {
    /// The estimated certificate at Catoni's best λ, `kl⁻¹(q, c)` (docs/math.md §9.1).
    pub(super) fn bound(&self) -> f64 {
        crate::special::kl_inverse(self.risk, self.complexity)
    }

    /// [`catoni_optimal_lambda`] of the estimate, kept in [0.1, 10].
    pub(super) fn lambda(&self) -> f64 {
        catoni_optimal_lambda(self.risk, self.complexity).clamp(0.1, 10.0)
    }
}

/// Part A alone predicts B's certificate: split A by a seeded permutation into halves A₁, A₂;
/// for each kernel of `kernels_a` (θ by ML-II on A) and each prior scale t and mean scale s
/// of the configuration, the posterior of A₁ at that kernel, scaled, is the prior of A₂, whose
/// sites are optimised for the kl bound as B's will be; the lowest estimated certificate wins.
pub(super) fn nested_estimate(
    cfg: &SplitPriorConfig,
    kernels_a: &[Kernel],
    (xa, ya, lik): (&Mat<f64>, &[f64], &Likelihood),
    classifier: GibbsClassifier,
    n_b: usize,
    penalty: f64,
) -> Result<NestedEstimate> {
    let a = Dataset::new(xa.clone(), ya.to_vec())?;
    let halves = SampleSplit {
        fraction: 0.5,
        seed: cfg.seed.wrapping_add(0x9e37_79b9),
        stratified: true,
        swapped: false,
    };
    let (rows1, rows2) = halves.parts(&a)?;
    let (a1, a2) = (a.subset(&rows1), a.subset(&rows2));
    crate::data::check_binary_labels(&a1.y)?;
    let bound = MinimisedBound::new(
        cfg.bound.delta,
        ConfidenceTerm::Sharp,
        BoundKind::Kl,
        penalty,
    )?;
    // The complexity of part B's bound with Catoni's confidence term ln(1/δ).
    let catoni = bound
        .target()
        .with_term(ConfidenceTerm::Catoni { lambda: 1.0 })?;
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
        let latent1 = prior1.at(a2.x.as_ref())?;
        let start = laplace_with_prior_mean(&latent1, lik, &a2.y, &cfg.bound.laplace)?;
        let lbfgs = &cfg.bound.lbfgs;
        let (sites, _) = optimise_sites(latent1.clone(), &a2.y, classifier, &bound, &start, lbfgs)?;
        let e = SiteEvaluation::new(&latent1, &sites)?;
        let loss = GibbsLoss::Classification(classifier);
        let est = NestedEstimate {
            kernel,
            scale,
            mean_scale,
            risk: loss.empirical_risk(&a2.y, &e.marginals)?,
            complexity: catoni.complexity(e.kl, n_b, 0.0),
        };
        Ok((est, est.bound()))
    })?;
    Ok(chosen.value)
}
