//! Fitting pipelines of the regression family: exact GP by ML-II, PAC-GP, sparse GPs (VFE,
//! FITC, DTC) and PAC-SGP, on standardised data; each ends as a [`FittedModel`].

use crate::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use crate::certificate::PenaltyTerm;
use crate::data::{Dataset, Standardizer, TargetScaler};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::loss::RegressionLoss;
use crate::objective::pac_gp::{fit_pac_gp, PacGpConfig};
use crate::optim::OptimReport;
use crate::posterior::GaussianPosterior;
use crate::prior::split::{fit_split_prior, SplitConfig, SplitFraction, SplitRecord};
use crate::prior::split_sparse::SparseSplitRecord;
use crate::prior::BoundLevers;
use crate::regression::exact::{fit_ml2, MlConfig};
use crate::regression::sparse::{train_sparse, InducingInit, SparseConfig, SparseMethod};

use super::{sample_digest, FitReport, FittedModel, Task, FORMAT};

/// Regression training data on the standardised scale, with the scalers that produced it.
struct Standardised {
    x_scaler: Standardizer,
    y_scaler: TargetScaler,
    x: faer::Mat<f64>,
    y: Vec<f64>,
}

/// Standardise inputs and targets with training statistics.
fn standardise(train: &Dataset) -> Result<Standardised> {
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let y_scaler = TargetScaler::fit_column(&train.y, &train.target_name)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let y = y_scaler.transform(&train.y);
    Ok(Standardised {
        x_scaler,
        y_scaler,
        x,
        y,
    })
}

/// The given kernel, or SE-ARD with signal variance 1 and lengthscales 1.
fn kernel_or_default(kernel: &Option<Kernel>, d: usize) -> Kernel {
    kernel
        .clone()
        .unwrap_or_else(|| Kernel::se_ard(&vec![1.0; d], 1.0))
}

/// Assemble a regression model file; a θ on the PAC grid is paid for with `T·ln L`.
fn regression_model(
    train: &Dataset,
    method: &str,
    s: Standardised,
    posterior: GaussianPosterior,
    noise_variance: f64,
    epsilon: Option<f64>,
    mut report: FitReport,
) -> FittedModel {
    if report.theta_on_grid && report.choices.is_empty() {
        report.choices = vec![PenaltyTerm::grid(
            &HyperGrid::default(),
            posterior.kernel.n_params(),
        )];
    }
    FittedModel {
        format: FORMAT.into(),
        input_coding: Default::default(),
        method: method.into(),
        feature_names: train.feature_names.clone(),
        target_name: train.target_name.clone(),
        n_train: train.n(),
        x_scaler: s.x_scaler,
        posterior,
        task: Task::Regression {
            noise_variance,
            y_scaler: s.y_scaler,
            split_prior: None,
            sparse_split_prior: None,
            confidence_term: None,
        },
        epsilon,
        report,
        training_digest: Some(sample_digest(train)),
        seed: 0,
    }
}

/// Options of [`fit_gpr`].
#[derive(Clone, Debug)]
pub struct GprOptions {
    /// Kernel (structure and initial values); `None` = SE-ARD with signal variance 1,
    /// lengthscales 1.
    pub kernel: Option<Kernel>,
    /// Initial noise variance (standardised scale).
    pub noise_init: f64,
    /// ML-II settings.
    pub ml: MlConfig,
    /// ε to store with the model (target units).
    pub epsilon: Option<f64>,
    /// Snap θ onto `grid` after optimisation so the model can be certified.
    pub snap_to_grid: bool,
    /// The hyperparameter grid (its range boxes θ; its size is the certificate's penalty).
    pub grid: HyperGrid,
}

impl Default for GprOptions {
    fn default() -> Self {
        Self {
            kernel: None,
            noise_init: 0.1,
            ml: MlConfig::default(),
            epsilon: None,
            snap_to_grid: true,
            grid: HyperGrid::wide(),
        }
    }
}

/// Exact GP regression by ML-II on standardised inputs and targets (training statistics),
/// θ on the grid `opts.grid` (docs/math.md §2.4; at most half a step in ln space), noise as fitted.
pub fn fit_gpr(train: &Dataset, opts: &GprOptions) -> Result<FittedModel> {
    if let Some(e) = opts.epsilon {
        RegressionLoss::new_epsilon_band(e)?;
    }
    let s = standardise(train)?;
    let kernel = kernel_or_default(&opts.kernel, train.d());
    // A certifiable model's θ lies on the grid: the driver optimises inside the grid's range
    // and snaps (≤ half a step in ln space).
    let ml = MlConfig {
        snap: opts.snap_to_grid.then_some(opts.grid),
        ..opts.ml.clone()
    };
    let (gp, report) = fit_ml2(&kernel, opts.noise_init, s.x.clone(), s.y.clone(), &ml)?;
    let (posterior, noise) = (gp.posterior(), gp.noise_variance);
    let choices = if opts.snap_to_grid {
        vec![PenaltyTerm::grid(&opts.grid, posterior.kernel.n_params())]
    } else {
        Vec::new()
    };
    Ok(regression_model(
        train,
        "gpr",
        s,
        posterior,
        noise,
        opts.epsilon,
        FitReport {
            optimiser: Some(report),
            objective: Some(gp.log_marginal_likelihood()),
            objective_name: "log_marginal_likelihood".into(),
            jitter_used: gp.jitter_used(),
            theta_on_grid: opts.snap_to_grid,
            choices,
            penalty: None,
            inference: None,
        },
    ))
}

/// Options of [`fit_pac_gp_model`].
#[derive(Clone, Debug)]
pub struct PacGpOptions {
    /// Kernel (structure and initial values); `None` = SE-ARD, signal variance 1, lengthscales 1.
    pub kernel: Option<Kernel>,
    /// Initial σ² on the standardised scale (the paper starts at 1).
    pub noise_init: f64,
    /// ε of the ε-band loss, in target units.
    pub epsilon: f64,
    /// Confidence δ.
    pub delta: f64,
    /// kl-PAC-GP or sqrt-PAC-GP.
    pub kind: BoundKind,
    /// Tighter-bounds levers (issue 15): confidence constant and hyperparameter prior.
    pub levers: BoundLevers,
    /// Data-dependent split prior (issue 15, `--prior split:F`) instead of the grid.
    pub split: Option<SplitFraction>,
    /// Seed of the split's permutation.
    pub seed: u64,
}

/// PAC-GP (seed 004) on standardised data: minimise the bound over θ and σ², snap θ to the
/// grid (or the hyperparameter prior's grid); the model stores ε (target units) so `certify`
/// reuses it. With `opts.split` the data-dependent prior ([`fit_split_prior_model`]).
pub fn fit_pac_gp_model(train: &Dataset, opts: &PacGpOptions) -> Result<FittedModel> {
    if let Some(fraction) = opts.split {
        return fit_split_prior_model(train, opts, fraction);
    }
    let s = standardise(train)?;
    let kernel = kernel_or_default(&opts.kernel, train.d());
    let mut cfg = PacGpConfig::new(s.y_scaler.scale_length(opts.epsilon), opts.kind)?;
    cfg.delta = opts.delta;
    cfg.term = opts.levers.term;
    cfg.hyper_prior = opts.levers.hyper_prior;
    let fit = fit_pac_gp(&kernel, opts.noise_init, s.x.clone(), s.y.clone(), &cfg)?;
    let (method, objective) = match opts.kind {
        BoundKind::Kl => ("pac-gp", fit.certificate.bound),
        BoundKind::Sqrt => ("pac-gp-sqrt", fit.certificate.bound_sqrt),
    };
    let mut report = bound_report(objective, opts.kind, Some(fit.report), fit.gp.jitter_used());
    report.choices = fit.certificate.penalty_terms.clone();
    let (posterior, noise) = (fit.gp.posterior(), fit.gp.noise_variance);
    let mut model = regression_model(
        train,
        method,
        s,
        posterior,
        noise,
        Some(opts.epsilon),
        report,
    );
    set_confidence_term(&mut model, opts.levers.term);
    Ok(model)
}

/// Record a non-default confidence constant in the model (the default of `certify`).
fn set_confidence_term(model: &mut FittedModel, term: ConfidenceTerm) {
    if let Task::Regression {
        confidence_term, ..
    } = &mut model.task
    {
        *confidence_term = (term != ConfidenceTerm::Maurer).then_some(term);
    }
}

/// PAC-GP with the data-dependent prior (issue 15; tighter-bounds spec §3): a seeded split of
/// the rows' canonical order, scalers and θ_A, σ_A² by ML-II on part A, Q minimising the kl
/// bound on part B over (σ_m², σ_v²) with the covariance scale s fixed at 1 so that Q is the
/// shared site-form posterior exactly; the model keeps the split's record for `certify`.
pub fn fit_split_prior_model(
    train: &Dataset,
    opts: &PacGpOptions,
    fraction: SplitFraction,
) -> Result<FittedModel> {
    if opts.kind != BoundKind::Kl {
        return Err(crate::Error::Unsupported(
            "the split prior trains the kl bound only (use --method pac-gp)".into(),
        ));
    }
    if opts.levers.hyper_prior.is_some() {
        return Err(crate::Error::Unsupported(
            "the split prior fits θ on part A at no charge; a hyperparameter prior does not apply to it".into(),
        ));
    }
    let kernel = kernel_or_default(&opts.kernel, train.d());
    let cfg = SplitConfig {
        fraction,
        seed: opts.seed,
        epsilon: opts.epsilon,
        delta: opts.delta,
        term: opts.levers.term,
        unit_scale: true,
    };
    RegressionLoss::new_epsilon_band(opts.epsilon)?;
    let fit = fit_split_prior(train, &kernel, &cfg)?;
    let record = SplitRecord::of(&fit, fraction.candidates()?.len(), opts.levers.term);
    let posterior = fit.posterior.site_posterior()?;
    let mut model = split_prior_model(
        train,
        "pac-gp",
        "pac_bayes_bound_kl_split_prior",
        &fit.certificate,
        posterior.cov.jitter(),
        posterior,
        (fit.x_scaler.clone(), fit.y_scaler),
        fit.posterior.prior.noise_a,
        opts.epsilon,
    );
    if let Task::Regression { split_prior, .. } = &mut model.task {
        *split_prior = Some(record);
    }
    Ok(model)
}

/// The fit report of a model trained by minimising a bound.
fn bound_report(
    objective: f64,
    kind: BoundKind,
    optimiser: Option<OptimReport>,
    jitter_used: f64,
) -> FitReport {
    FitReport {
        objective: Some(objective),
        optimiser,
        objective_name: format!(
            "pac_bayes_bound_{}",
            if kind == BoundKind::Kl { "kl" } else { "sqrt" }
        ),
        jitter_used,
        theta_on_grid: true,
        choices: Vec::new(),
        penalty: None,
        inference: None,
    }
}

/// Options of [`fit_sparse_model`].
#[derive(Clone, Debug)]
pub struct SparseOptions {
    /// Kernel (structure and initial values); `None` = SE-ARD, signal variance 1, lengthscales 1.
    pub kernel: Option<Kernel>,
    /// Initial noise variance (standardised scale).
    pub noise_init: f64,
    /// Number of inducing inputs M.
    pub m: usize,
    /// VFE, FITC or DTC.
    pub method: SparseMethod,
    /// Seed of the initialisation of Z.
    pub seed: u64,
    /// How Z is initialised (k-means, a random subset, or greedy ΔR selection).
    pub init: InducingInit,
    /// ε to store with the model (target units).
    pub epsilon: Option<f64>,
}

/// Sparse GP regression (VFE / FITC / DTC) trained by its own objective over θ (boxed to the
/// PAC grid's range and snapped onto it afterwards), σ² and Z; the model keeps the method's
/// own posterior (VFE/DTC: `Λ = σ²I`, FITC: `Λ = σ²I + diag(K_ff − Q_ff)`).
pub fn fit_sparse_model(train: &Dataset, opts: &SparseOptions) -> Result<FittedModel> {
    if let Some(e) = opts.epsilon {
        RegressionLoss::new_epsilon_band(e)?;
    }
    let s = standardise(train)?;
    let kernel = kernel_or_default(&opts.kernel, train.d());
    let cfg = SparseConfig {
        seed: opts.seed,
        init: opts.init,
        snap: Some(HyperGrid::default()),
        ..Default::default()
    };
    let (x, y) = (s.x.as_ref(), &s.y);
    let (gp, report) = train_sparse(&kernel, opts.noise_init, x, y, opts.m, opts.method, &cfg)?;
    let (name, objective_name) = match opts.method {
        SparseMethod::Vfe => ("vfe", "elbo"),
        SparseMethod::Fitc => ("fitc", "log_marginal_likelihood"),
        SparseMethod::Dtc => ("dtc", "log_marginal_likelihood"),
    };
    let report = FitReport {
        objective: Some(gp.objective(x, y)?),
        optimiser: Some(report),
        objective_name: objective_name.into(),
        jitter_used: crate::regression::sparse::KUU_JITTER,
        theta_on_grid: true,
        choices: Vec::new(),
        penalty: None,
        inference: None,
    };
    let posterior = gp.posterior(x, y)?;
    Ok(regression_model(
        train,
        name,
        s,
        posterior,
        gp.noise_variance,
        opts.epsilon,
        report,
    ))
}

/// Options of [`fit_pac_sgp_model`].
#[derive(Clone, Debug)]
pub struct PacSgpOptions {
    /// Kernel (structure and initial values); `None` = SE-ARD, signal variance 1, lengthscales 1.
    pub kernel: Option<Kernel>,
    /// Number of inducing inputs M.
    pub m: usize,
    /// ε of the ε-band loss, in target units.
    pub epsilon: f64,
    /// Confidence δ.
    pub delta: f64,
    /// kl-PAC-SGP or sqrt-PAC-SGP.
    pub kind: BoundKind,
    /// Posterior parametrisation: 1 = FITC (the paper's), 0 = VFE.
    pub alpha_s: f64,
    /// Seed of the initialisation of Z.
    pub seed: u64,
    /// How Z is initialised (the paper's k-means, a random subset, or greedy ΔR selection).
    pub init: InducingInit,
    /// Tighter-bounds levers (issue 15): confidence constant and hyperparameter prior.
    pub levers: BoundLevers,
}

/// Sparse PAC-GP (seed 004) on standardised data; σ² starts at 1 as in the paper.
pub fn fit_pac_sgp_model(train: &Dataset, opts: &PacSgpOptions) -> Result<FittedModel> {
    let s = standardise(train)?;
    let kernel = kernel_or_default(&opts.kernel, train.d());
    let loss = RegressionLoss::new_epsilon_band(s.y_scaler.scale_length(opts.epsilon))?;
    let (x, y) = (s.x.as_ref(), &s.y);
    let settings = crate::objective::pac_sgp::PacSgpSettings {
        m: opts.m,
        alpha_s: opts.alpha_s,
        loss,
        delta: opts.delta,
        kind: opts.kind,
        seed: opts.seed,
        init: opts.init,
        max_iter: 1000,
    };
    let fit =
        crate::objective::pac_sgp::fit_pac_sgp_with(&kernel, 1.0, x, y, &settings, &opts.levers)?;
    let (method, objective) = match opts.kind {
        BoundKind::Kl => ("pac-sgp", fit.certificate.bound),
        BoundKind::Sqrt => ("pac-sgp-sqrt", fit.certificate.bound_sqrt),
    };
    let mut report = bound_report(
        objective,
        opts.kind,
        Some(fit.report),
        crate::regression::sparse::KUU_JITTER,
    );
    report.choices = fit.certificate.penalty_terms.clone();
    let posterior = fit.gp.posterior_with_alpha(x, y, fit.alpha_s)?;
    let mut model = regression_model(
        train,
        method,
        s,
        posterior,
        fit.gp.noise_variance,
        Some(opts.epsilon),
        report,
    );
    set_confidence_term(&mut model, opts.levers.term);
    Ok(model)
}

/// PAC-SGP's sparse data-dependent prior (issue 15; tighter-bounds spec §3.3): a seeded split
/// of the rows' canonical order, scalers, θ_A, σ_A² and Z by VFE with `opts.m` inducing inputs
/// on part A, Q ("P_A updated with B") minimising the kl bound on part B over σ² and α_s; the
/// model keeps P_A and the split for `certify`. `opts.alpha_s`, `init` and the hyperparameter
/// prior do not apply (θ and Z are fitted on A at no charge).
pub fn fit_sparse_split_prior_model(
    train: &Dataset,
    opts: &PacSgpOptions,
    fraction: SplitFraction,
) -> Result<FittedModel> {
    if opts.kind != BoundKind::Kl {
        return Err(crate::Error::Unsupported(
            "the sparse split prior trains the kl bound only (use --method pac-sgp)".into(),
        ));
    }
    if opts.levers.hyper_prior.is_some() {
        return Err(crate::Error::Unsupported(
            "the split prior fits θ on part A at no charge; a hyperparameter prior does not apply to it".into(),
        ));
    }
    let kernel = kernel_or_default(&opts.kernel, train.d());
    let mut cfg = SplitConfig::new(opts.epsilon);
    cfg.fraction = fraction;
    cfg.seed = opts.seed;
    cfg.delta = opts.delta;
    cfg.term = opts.levers.term;
    RegressionLoss::new_epsilon_band(opts.epsilon)?;
    let fit = crate::prior::split_sparse::fit_sparse_split_prior(train, &kernel, opts.m, &cfg)?;
    let record = SparseSplitRecord::of(&fit, opts.levers.term);
    let posterior = fit.posterior.shared_posterior()?;
    let mut model = split_prior_model(
        train,
        "pac-sgp",
        "pac_bayes_bound_kl_sparse_split_prior",
        &fit.certificate,
        crate::regression::sparse::KUU_JITTER,
        posterior,
        (fit.x_scaler.clone(), fit.y_scaler),
        fit.posterior.prior.noise_a,
        opts.epsilon,
    );
    if let Task::Regression {
        sparse_split_prior, ..
    } = &mut model.task
    {
        *sparse_split_prior = Some(Box::new(record));
    }
    Ok(model)
}

/// The model file of a split-prior fit (full or sparse): the certificate's bound as the
/// objective, θ fixed on part A (on the grid), part A's scalers and noise; the caller stores
/// the split record in the task.
#[allow(clippy::too_many_arguments)]
fn split_prior_model(
    train: &Dataset,
    method: &str,
    objective_name: &str,
    certificate: &crate::certificate::Certificate,
    jitter_used: f64,
    posterior: GaussianPosterior,
    (x_scaler, y_scaler): (Standardizer, TargetScaler),
    noise_a: f64,
    epsilon: f64,
) -> FittedModel {
    let report = FitReport {
        objective: Some(certificate.bound),
        optimiser: None,
        objective_name: objective_name.into(),
        jitter_used,
        theta_on_grid: true,
        choices: certificate.penalty_terms.clone(),
        penalty: None,
        inference: None,
    };
    let s = Standardised {
        x_scaler,
        y_scaler,
        x: faer::Mat::zeros(0, 0),
        y: Vec::new(),
    };
    regression_model(train, method, s, posterior, noise_a, Some(epsilon), report)
}

/// Options of [`fit_greedy_sparse_model`].
#[derive(Clone, Debug)]
pub struct GreedySparseOptions {
    /// Kernel (structure and initial values); `None` = SE-ARD, signal variance 1, lengthscales 1.
    pub kernel: Option<Kernel>,
    /// Number of basis points k (greedy steps).
    pub k: usize,
    /// Seed of the ML-II subset and of κ-greedy's candidate draws.
    pub seed: u64,
    /// ε to store with the model (target units).
    pub epsilon: Option<f64>,
}

/// Training points that ML-II sees before the greedy selection (a seeded subset).
pub const GREEDY_ML2_POINTS: usize = 1000;
/// Up to this N the full greedy Algorithm 1 is used; beyond it κ-greedy with κ = 59.
pub const GREEDY_FULL_UP_TO: usize = 2000;

/// Zhang's sparse GP regression in the dual (seed 002) as a certified model: θ and σ² by ML-II
/// on a seeded subset of at most [`GREEDY_ML2_POINTS`] points, snapped onto the wide grid; then
/// k basis points chosen greedily (Algorithm 1, or κ-greedy past [`GREEDY_FULL_UP_TO`] points)
/// with every weight refit, λ = σ²/N. The model is the DTC posterior on the chosen basis, whose
/// mean is the greedy predictor.
pub fn fit_greedy_sparse_model(train: &Dataset, opts: &GreedySparseOptions) -> Result<FittedModel> {
    use crate::regression::greedy::{
        Algorithm, GreedySparseConfig, GreedySparseGp, StopRule, Update,
    };
    if let Some(e) = opts.epsilon {
        RegressionLoss::new_epsilon_band(e)?;
    }
    let s = standardise(train)?;
    let kernel = kernel_or_default(&opts.kernel, train.d());
    let n = s.y.len();
    if opts.k == 0 || opts.k > n {
        return Err(crate::Error::InvalidParameter {
            name: "number of basis points k",
            value: opts.k as f64,
            reason: "must lie in 1..=N",
        });
    }
    let rows: Vec<usize> = crate::data::permutation(n, opts.seed)
        .into_iter()
        .take(n.min(GREEDY_ML2_POINTS))
        .collect();
    let xs = faer::Mat::from_fn(rows.len(), s.x.ncols(), |i, j| s.x[(rows[i], j)]);
    let ys: Vec<f64> = rows.iter().map(|&i| s.y[i]).collect();
    let grid = HyperGrid::wide();
    let ml = MlConfig {
        snap: Some(grid),
        ..Default::default()
    };
    let (gp, report) = fit_ml2(&kernel, 0.1, xs, ys, &ml)?;
    let cfg = GreedySparseConfig {
        algorithm: if n <= GREEDY_FULL_UP_TO {
            Algorithm::Greedy
        } else {
            Algorithm::KappaGreedy { kappa: 59.min(n) }
        },
        update: Update::Refit,
        stop: StopRule::Steps { k: opts.k },
        seed: opts.seed,
    };
    let (x, y) = (s.x.as_ref(), &s.y);
    let g = GreedySparseGp::fit(&gp.kernel, gp.noise_variance, x, y, &cfg)?;
    let posterior = g.posterior(x, y)?;
    let report = FitReport {
        objective: Some(g.objective),
        optimiser: Some(report),
        objective_name: "zhang_primal_objective".into(),
        jitter_used: posterior.cov.jitter(),
        theta_on_grid: true,
        choices: vec![PenaltyTerm::grid(&grid, posterior.kernel.n_params())],
        penalty: None,
        inference: None,
    };
    Ok(regression_model(
        train,
        "greedy-sparse",
        s,
        posterior,
        g.noise_variance,
        opts.epsilon,
        report,
    ))
}
