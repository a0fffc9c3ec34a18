//! Fitting the split prior: P_A on part A, Q by minimising the bound on part B, over the
//! menu of fractions; the record `certify` rebuilds Q from.

use super::*;
use crate::bounds::DEFAULT_DELTA;
use crate::objective::bound::MinimisedBound;

/// Settings of [`fit_split_prior`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SplitConfig {
    /// The fraction F of part A (fixed, or the menu).
    pub fraction: SplitFraction,
    /// Seed of the permutation that makes the split.
    pub seed: u64,
    /// ε of the ε-band loss in the **target's own units**.
    pub epsilon: f64,
    /// Confidence δ.
    pub delta: f64,
    /// Confidence constant (the sharp ξ(N_B) by default: nothing here reproduces the paper).
    pub term: ConfidenceTerm,
    /// Fix s = 1 (Q then is the ordinary GP posterior with noise σ_A² on A, σ_m² / σ_v² on B).
    pub unit_scale: bool,
}

impl SplitConfig {
    /// The menu of fractions, seed 0, δ = [`DEFAULT_DELTA`], the sharp constant, free s.
    pub fn new(epsilon: f64) -> Self {
        Self {
            fraction: SplitFraction::Menu,
            seed: 0,
            epsilon,
            delta: DEFAULT_DELTA,
            term: ConfidenceTerm::Sharp,
            unit_scale: false,
        }
    }
}

/// What a model file keeps to reproduce a split-prior certificate from the training sample:
/// the split (fraction, menu size, seed), θ_A and σ_A², Q's free parameters and the
/// confidence term. The scalers are the model's own (fitted on A).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitRecord {
    /// Fraction F of part A.
    pub fraction: f64,
    /// Number of fractions the bound chose among (1 = fixed; its `ln` is charged).
    pub menu: usize,
    /// Seed of the permutation (applied to the rows' canonical order).
    pub seed: u64,
    /// The prior's kernel with θ_A.
    pub kernel_a: Kernel,
    /// σ_A².
    pub noise_a: f64,
    /// Q's free parameters.
    pub params: SplitPosteriorParams,
    /// Q's per-point noises on B, if it has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_noise: Option<PointNoise>,
    /// Confidence constant the certificate uses.
    pub term: ConfidenceTerm,
}

impl SplitRecord {
    /// The record of a fit that chose among `menu` fractions with confidence term `term`.
    pub fn of(fit: &SplitFit, menu: usize, term: ConfidenceTerm) -> Self {
        Self {
            fraction: fit.fraction,
            menu,
            seed: fit.seed,
            kernel_a: fit.prior.kernel.clone(),
            noise_a: fit.prior.noise_a,
            params: fit.params,
            point_noise: fit.point_noise.clone(),
            term,
        }
    }

    /// The penalty terms of the certificate: the prior's description and the price of the
    /// spec's menu of `fractions` ([`SplitFraction::menu`]) when it has more than one.
    pub fn choices(&self, fractions: &Menu<f64>, n_a: usize, n: usize) -> Vec<PenaltyTerm> {
        let mut choices = vec![PenaltyTerm {
            what: format!(
                "prior: GP posterior of part A ({n_a} of {n} points, F = {}, seed {}), θ and σ_A² by ML-II on A; bound on part B",
                self.fraction, self.seed
            ),
            nats: 0.0,
        }];
        if fractions.len() > 1 {
            choices.push(fractions.price());
        }
        choices
    }

    /// Q from a prior P_A refitted on part A of `parts` and the record's free parameters on
    /// part B (the caller checks P_A against the record's θ_A and σ_A²).
    pub fn posterior_on(
        &self,
        prior: &SplitPrior,
        parts: &RegressionParts,
    ) -> Result<GaussianPosterior> {
        let noise = self.point_noise.as_ref();
        let (q, _) = prior.update(&parts.x_b, &parts.y_b, self.params, noise)?;
        Ok(q)
    }
}

/// A model trained with the data-dependent prior: the split, the scalers fitted on A, Q and
/// its certificate on B.
#[derive(Clone, Debug)]
pub struct SplitFit {
    /// The fraction F used.
    pub fraction: f64,
    /// Seed of the split's permutation.
    pub seed: u64,
    /// Rows of part A (of the training sample as given).
    pub a: Vec<usize>,
    /// Rows of part B.
    pub b: Vec<usize>,
    /// Input scaler fitted on A.
    pub x_scaler: Standardizer,
    /// Target scaler fitted on A.
    pub y_scaler: TargetScaler,
    /// The prior P_A.
    pub prior: SplitPrior,
    /// Inputs of part B (standardised).
    pub x_b: Mat<f64>,
    /// Targets of part B (standardised).
    pub y_b: Vec<f64>,
    /// Q's free parameters (with [`Self::point_noise`], only the scale `s` is Q's; the noises
    /// are those of the homoscedastic fit it started from).
    pub params: SplitPosteriorParams,
    /// Per-point noises on B in place of `σ_m²`, `σ_v²` (docs/math.md §9.4.2 on the split prior).
    pub point_noise: Option<PointNoise>,
    /// Q, the shared posterior over P_A.
    pub posterior: GaussianPosterior,
    /// The certificate on part B (`n = N_B`).
    pub certificate: Certificate,
    /// The optimiser's report of the bound's minimisation on B that made Q.
    pub report: OptimReport,
}

impl SplitFit {
    /// Number of points the certificate is evaluated on, N_B.
    pub fn n_b(&self) -> usize {
        self.b.len()
    }
}

/// Fit the data-dependent prior model for one fraction of the menu `fractions` on raw
/// (unscaled) data (the menu's price is charged); with
/// `catoni_grid`, Catoni's bound at the best λ of [`CATONI_GRID`] (`ln 5` more) instead of
/// `cfg.term`.
pub(super) fn fit_fraction(
    train: &Dataset,
    kernel_init: &Kernel,
    fraction: f64,
    fractions: &Menu<f64>,
    cfg: &SplitConfig,
    catoni_grid: bool,
) -> Result<SplitFit> {
    let RegressionParts {
        a,
        b,
        x_scaler,
        y_scaler,
        x_a,
        y_a,
        x_b,
        y_b,
    } = RegressionParts::of(train, fraction, cfg.seed)?;
    let loss = RegressionLoss::band_in_standard_units(cfg.epsilon, y_scaler.sd)?;
    let prior = SplitPrior::fit_ml2(kernel_init, x_a, y_a, cfg.seed)?;
    let prior_b = prior.on(x_b.as_ref())?;
    let record = SplitRecord {
        fraction,
        menu: fractions.len(),
        seed: cfg.seed,
        kernel_a: prior.kernel.clone(),
        noise_a: prior.noise_a,
        params: SplitPosteriorParams {
            noise_mean: 1.0,
            noise_cov: 1.0,
            scale: 1.0,
        },
        point_noise: None,
        term: cfg.term,
    };
    let mut choices = record.choices(fractions, a.len(), train.n());
    let terms = catoni_menu(catoni_grid, cfg.term);
    choices.push(terms.price());
    let spec_of = |term| CertificateSpec::new(cfg.delta, term, choices.clone());
    let obj_of = |term| {
        let penalty = spec_of(term).penalty();
        let bound = MinimisedBound::new(cfg.delta, term, BoundKind::Kl, penalty)?;
        Ok::<_, Error>(SplitBoundObjective::new(&prior_b, &y_b, loss, bound))
    };
    // The middle term from two starts; with the grid, every λ scored there, the best refined.
    let mut term = terms.items[terms.len() / 2];
    let two_starts = [prior.noise_a.ln(), 0.0].map(|l| [l, l, 0.0]);
    let (mut params, mut report) =
        minimise_split_bound(&obj_of(term)?, &two_starts, cfg.unit_scale)?;
    if terms.len() > 1 {
        let ln = params.to_ln();
        term = terms
            .by_bound(|t, _| Ok((*t, obj_of(*t)?.value(&ln)?)))?
            .value;
        (params, report) =
            minimise_split_bound(&obj_of(term)?, &[[ln[0], ln[1], ln[2]]], cfg.unit_scale)?;
    }
    let spec = spec_of(term);
    let (posterior, params) = prior.update_at(&prior_b, &x_b, &y_b, params, None)?;
    let certificate = Certificate::of_posterior(
        &posterior,
        x_b.as_ref(),
        &y_b,
        &GibbsLoss::Regression(loss),
        &spec,
    )?;
    Ok(SplitFit {
        fraction,
        seed: cfg.seed,
        a,
        b,
        x_scaler,
        y_scaler,
        prior,
        x_b,
        y_b,
        params,
        point_noise: None,
        posterior,
        certificate,
        report,
    })
}

/// Minimise the B-bound over Q's free parameters `[ln σ_m², ln σ_v², ln s]` from each start
/// (σ² = σ_A² and σ² = 1, s = 1 for a fresh fit); the lowest wins, with its report.
pub(super) fn minimise_split_bound(
    obj: &SplitBoundObjective<'_>,
    starts: &[[f64; 3]],
    unit_scale: bool,
) -> Result<(SplitPosteriorParams, OptimReport)> {
    let ln_s = if unit_scale {
        (0.0, 0.0)
    } else {
        LN_SCALE_BOUNDS
    };
    let bounds = vec![boxes::LN_NOISE, boxes::LN_NOISE, ln_s];
    let lbfgs = LbfgsConfig {
        max_iter: 300,
        ..Default::default()
    };
    let mut best: Option<optim::Minimum> = None;
    for x0 in starts {
        let m = optim::drive(obj, x0, bounds.clone(), &lbfgs, &Restarts::default(), None)?;
        if best
            .as_ref()
            .is_none_or(|b| m.report.value < b.report.value)
        {
            best = Some(m);
        }
    }
    let best = best.ok_or(Error::Empty {
        what: "starts of the split-prior bound",
    })?;
    Ok((SplitPosteriorParams::from_ln(&best.params), best.report))
}

/// Train with the data-dependent prior (docs/math.md §9.3): for each candidate fraction, split with
/// the seeded permutation, fit scalers and θ_A, σ_A² on A, minimise the bound on B over
/// `(σ_m², σ_v², s)`; keep the lowest certified bound (the menu's `ln 3` is in every
/// candidate's certificate).
pub fn fit_split_prior(
    train: &Dataset,
    kernel_init: &Kernel,
    cfg: &SplitConfig,
) -> Result<SplitFit> {
    fit_fractions(train, kernel_init, cfg, false, false)
}

/// [`fit_split_prior`] certified with Catoni's bound (docs/math.md §9.1) at the best λ of
/// [`CATONI_GRID`], a grid fixed in advance charged `ln 5` on top of the fraction menu's
/// `ln 3` (`cfg.term` is unused: Catoni's confidence term is `ln(1/δ)`).
pub fn fit_split_prior_catoni(
    train: &Dataset,
    kernel_init: &Kernel,
    cfg: &SplitConfig,
) -> Result<SplitFit> {
    fit_fractions(train, kernel_init, cfg, true, false)
}

/// [`fit_split_prior`] (with `catoni_grid`, [`fit_split_prior_catoni`]) with per-point
/// posterior noises on B (docs/math.md §9.4.2 on the split prior, free, not charged): each
/// fraction's homoscedastic fit, then [`free_split_point_noise`] from its optimum; the lowest
/// certificate wins.
pub fn fit_split_prior_point_noise(
    train: &Dataset,
    kernel_init: &Kernel,
    cfg: &SplitConfig,
    catoni_grid: bool,
) -> Result<SplitFit> {
    fit_fractions(train, kernel_init, cfg, catoni_grid, true)
}

/// From a homoscedastic split-prior fit (`base`, made with `cfg`): minimise the bound on B
/// over `[ln λ_m; ln λ_v; ln s]` from its optimum at its confidence term and penalty; with
/// `catoni_grid` the grid's best λ is re-chosen at the result (the grid is already charged).
/// Never certifies above `base` (its Q is in the family; `base` is returned if it is lower).
pub fn free_split_point_noise(
    base: SplitFit,
    cfg: &SplitConfig,
    catoni_grid: bool,
) -> Result<SplitFit> {
    let c = &base.certificate;
    let loss = RegressionLoss::band_in_standard_units(cfg.epsilon, base.y_scaler.sd)?;
    let prior_b = base.prior.on(base.x_b.as_ref())?;
    let obj_of = |term| {
        let bound = MinimisedBound::new(cfg.delta, term, BoundKind::Kl, c.penalty)?;
        Ok::<_, Error>(SplitPointNoiseObjective::new(
            &prior_b, &base.y_b, loss, bound,
        ))
    };
    let n = base.y_b.len();
    let ln_s = if cfg.unit_scale {
        (0.0, 0.0)
    } else {
        LN_SCALE_BOUNDS
    };
    let mut bounds = vec![boxes::LN_NOISE; 2 * n];
    bounds.push(ln_s);
    let lbfgs = LbfgsConfig {
        max_iter: 300,
        ..Default::default()
    };
    let obj = obj_of(c.confidence_term)?;
    let x0 = obj.start(&base.params);
    let m = optim::drive(&obj, &x0, bounds, &lbfgs, &Restarts::default(), None)?;
    let mut term = c.confidence_term;
    if catoni_grid {
        // The grid's price is already in `c.penalty`.
        let grid = catoni_menu(true, term);
        term = grid
            .by_bound(|t, _| Ok((*t, obj_of(*t)?.value(&m.params)?)))?
            .value;
    }
    let p = &m.params;
    let noise = PointNoise {
        mean: p[..n].iter().map(|l| l.exp()).collect(),
        cov: p[n..2 * n].iter().map(|l| l.exp()).collect(),
    };
    let params = SplitPosteriorParams {
        scale: p[2 * n].exp(),
        ..base.params
    };
    let (posterior, params) =
        base.prior
            .update_at(&prior_b, &base.x_b, &base.y_b, params, Some(&noise))?;
    let spec = CertificateSpec::new(cfg.delta, term, c.penalty_terms.clone());
    let certificate = Certificate::of_posterior(
        &posterior,
        base.x_b.as_ref(),
        &base.y_b,
        &GibbsLoss::Regression(loss),
        &spec,
    )?;
    if certificate.bound > base.certificate.bound {
        return Ok(base);
    }
    Ok(SplitFit {
        params,
        point_noise: Some(noise),
        posterior,
        certificate,
        report: m.report,
        ..base
    })
}

/// Every candidate fraction (with per-point noises freed if `point_noise`); the lowest
/// certificate wins.
pub(super) fn fit_fractions(
    train: &Dataset,
    kernel_init: &Kernel,
    cfg: &SplitConfig,
    catoni_grid: bool,
    point_noise: bool,
) -> Result<SplitFit> {
    BoundTarget::check_confidence(cfg.delta, cfg.term)?;
    let menu = cfg.fraction.menu()?;
    let chosen = menu.by_bound(|&f, _| {
        let mut fit = fit_fraction(train, kernel_init, f, &menu, cfg, catoni_grid)?;
        if point_noise {
            fit = free_split_point_noise(fit, cfg, catoni_grid)?;
        }
        let bound = fit.certificate.bound;
        Ok((fit, bound))
    })?;
    Ok(chosen.value)
}
