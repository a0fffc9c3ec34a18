//! The regression family's pipelines on standardised data: exact GP by ML-II, sparse GPs by
//! their own objective (VFE, FITC, DTC), PAC-GP and PAC-SGP (on the grid, a coarse
//! hyperparameter prior, or the split prior), and T. Zhang's greedy sparse regression.

use super::MethodFit;
use crate::bounds::{BoundKind, HyperGrid};
use crate::data::{Dataset, LabelMap, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::{start, Kernel};
use crate::loss::RegressionLoss;
use crate::model::{FitReport, FittedModel, RegressionSplit, Task};
use crate::objective::gp_split::{fit_split_prior, SplitConfig, SplitFraction, SplitRecord};
use crate::objective::pac_gp::{fit_pac_gp, PacGpConfig};
use crate::objective::sgp_split::SparseSplitRecord;
use crate::optim::{OptimReport, Restarts};
use crate::plan::hyper_prior;
use crate::posterior::GaussianPosterior;
use crate::prior::BoundLevers;
use crate::regression::exact::{fit_ml2, fit_ml2_shared, ExactGp, MlConfig, RowNoise};
use crate::regression::sparse::{train_sparse, SparseConfig, SparseMethod};
use crate::spec::{
    CheckedFitSpec, GprSpec, GreedySparseSpec, PacGpSpec, PacPrior, PacSgpSpec, SparseSpec,
};

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

/// The regression task's part of a model.
fn task(
    posterior: GaussianPosterior,
    noise_variance: f64,
    y_scaler: TargetScaler,
    split_prior: Option<RegressionSplit>,
) -> Task {
    Task::Regression {
        posterior,
        noise_variance,
        y_scaler,
        split_prior,
        intervals: None,
    }
}

/// The levers of a bound-trained regressor: its confidence constant and coarse prior.
pub(crate) fn levers(spec: &CheckedFitSpec, prior: PacPrior) -> BoundLevers {
    BoundLevers {
        term: spec.confidence_term(),
        hyper_prior: match prior {
            PacPrior::Coarse(name) => Some(hyper_prior(name)),
            PacPrior::Grid | PacPrior::Split(_) => None,
        },
    }
}

/// The report of a fit by an optimiser.
fn report(
    name: &str,
    objective: f64,
    optimiser: Option<OptimReport>,
    jitter_used: f64,
) -> FitReport {
    FitReport {
        optimiser,
        objective: Some(objective),
        objective_name: name.into(),
        jitter_used,
        ..Default::default()
    }
}

/// The report of a model trained by minimising a bound.
fn bound_report(objective: f64, kind: BoundKind, optimiser: OptimReport, jitter: f64) -> FitReport {
    let name = match kind {
        BoundKind::Kl => "pac_bayes_bound_kl",
        BoundKind::Sqrt => "pac_bayes_bound_sqrt",
    };
    report(name, objective, Some(optimiser), jitter)
}

/// `gpr`: exact GP regression by ML-II on standardised inputs and targets, θ inside the wide
/// grid's range and snapped onto it (at most half a step in ln space) unless `snap` is off;
/// σ² fitted or kept, known per-row variances `alpha` added; or at θ kept as given (on the
/// inputs as given, nothing fitted); targets as given without `normalize_y`.
impl MethodFit for GprSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, _: LabelMap) -> Result<FittedModel> {
        Ok(gpr_shared(spec, self, std::slice::from_ref(train))?.swap_remove(0))
    }
}

/// gpr's fit of several targets at the same inputs (`trains`, one per target, inputs equal)
/// sharing θ and σ², which maximise the sum of their log marginal likelihoods on the targets'
/// own scales (scikit-learn's multi-output regressor): one model per target.
pub fn gpr_shared(
    spec: &CheckedFitSpec,
    s: &GprSpec,
    trains: &[Dataset],
) -> Result<Vec<FittedModel>> {
    let first = trains.first().ok_or(Error::Empty { what: "targets" })?;
    let scaled = trains
        .iter()
        .map(|t| gpr_scaled(spec, t))
        .collect::<Result<Vec<_>>>()?;
    let mut kernel = Kernel::from_spec(&s.kernel, first.d())?;
    let noise = RowNoise {
        fixed: s.noise,
        known: gpr_alpha(s, first.n())?,
    };
    let x = scaled[0].x.clone();
    let (gps, opt, start_note) = match &s.kernel_params {
        Some(theta) => {
            kernel.set_params(theta)?;
            let sigma2 = s.noise.unwrap_or(s.noise_init);
            let jitter = MlConfig::default().jitter;
            let gps = scaled
                .iter()
                .map(|st| {
                    ExactGp::fit_with_known_noise(
                        kernel.clone(),
                        sigma2,
                        noise.known.clone(),
                        x.clone(),
                        st.y.clone(),
                        &jitter,
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            (gps, None, None)
        }
        None => {
            let mut ml = MlConfig {
                restarts: Restarts {
                    count: s.restarts,
                    seed: spec.seed,
                    ..Default::default()
                },
                snap: spec.grid(),
                noise,
                ..Default::default()
            };
            ml.lbfgs.stall = start::wide_stall(x.ncols());
            ml.pretrain = s.pretrain.or(start::wide_pretrain(x.ncols(), x.nrows()));
            let (start, note) =
                start::wide_start_noted(kernel, x.as_ref(), spec.seed, "leaves the evidence flat");
            let ys = scaled.iter().map(|st| st.y.clone()).collect();
            let fit = fit_ml2_shared(&start, s.noise_init, x, ys, &ml)?;
            let notes = note.into_iter().chain(fit.pretraining.map(|p| p.note()));
            (
                fit.models,
                Some(fit.report),
                Some(notes.collect::<Vec<_>>()),
            )
        }
    };
    let shared_note = (trains.len() > 1).then(|| {
        format!(
            "θ and σ² shared by the {} targets, chosen by the sum of their log marginal likelihoods",
            trains.len()
        )
    });
    (gps.into_iter().zip(scaled).zip(trains))
        .map(|((gp, st), train)| {
            let mut r = report(
                "log_marginal_likelihood",
                gp.log_marginal_likelihood(),
                opt.clone(),
                gp.jitter_used(),
            );
            r.notes.extend(start_note.iter().flatten().cloned());
            r.notes.extend(shared_note.clone());
            let task = task(gp.posterior()?, gp.noise_variance, st.y_scaler, None);
            Ok(FittedModel::assemble(spec, train, st.x_scaler, task, r))
        })
        .collect()
}

/// gpr's training data on the scale it is fitted on: inputs standardised unless θ is kept as
/// given (a kernel fixed in advance must not depend on the sample's spread), targets unless
/// `normalize_y` is off.
fn gpr_scaled(spec: &CheckedFitSpec, train: &Dataset) -> Result<Standardised> {
    let x_scaler = match spec.scales_inputs() {
        true => Standardizer::fit(train.x.as_ref(), &train.feature_names)?,
        false => Standardizer::identity(train.d()),
    };
    let y_scaler = match spec.scales_targets() {
        true => TargetScaler::fit_column(&train.y, &train.target_name)?,
        false => TargetScaler::identity(),
    };
    Ok(Standardised {
        x: x_scaler.transform(train.x.as_ref())?,
        y: y_scaler.transform(&train.y),
        x_scaler,
        y_scaler,
    })
}

/// gpr's known noise variances, one per row (empty without `alpha`); an `alpha` with neither
/// one value nor one per row is refused.
fn gpr_alpha(s: &GprSpec, n: usize) -> Result<Vec<f64>> {
    if s.alpha.is_empty() {
        return Ok(Vec::new());
    }
    s.alpha_at(n).ok_or_else(|| Error::ShapeMismatch {
        what: "alpha must be a scalar or an array with same number of entries as y",
        expected: format!("1 or {n} values"),
        found: format!("{} values", s.alpha.len()),
    })
}

/// `vfe`, `fitc`, `dtc`: trained by the method's own objective over θ (boxed to the PAC grid's
/// range and snapped onto it), σ² and Z; the model keeps the method's own posterior. On more
/// than [`start::WIDE_INPUTS`] inputs the lengthscales start at the median distance and the
/// search stops by the stall rule, as gpr's ML-II does (both objectives are evidences summed
/// over the rows, in nats; [`start`]).
impl MethodFit for SparseSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, _: LabelMap) -> Result<FittedModel> {
        let st = standardise(train)?;
        let kernel = Kernel::from_spec(&self.kernel, train.d())?;
        let mut cfg = SparseConfig {
            seed: spec.seed,
            init: self.inducing_init,
            snap: spec.grid(),
            pretrain: self.schedule.pretrain,
            ..Default::default()
        };
        if let Some(cap) = self.schedule.max_iter {
            cfg.lbfgs.max_iter = cap;
        }
        cfg.lbfgs.stall = start::wide_stall(train.d());
        let (kernel, start_note) =
            start::wide_start_noted(kernel, st.x.as_ref(), spec.seed, "leaves the evidence flat");
        let (x, y) = (st.x.as_ref(), &st.y);
        let m = self.inducing.unwrap_or(crate::spec::DEFAULT_BASIS);
        let (gp, opt, pre) =
            train_sparse(&kernel, self.noise_init, x, y, m, self.approximation, &cfg)?;
        let name = match self.approximation {
            SparseMethod::Vfe => "elbo",
            SparseMethod::Fitc | SparseMethod::Dtc => "log_marginal_likelihood",
        };
        let mut r = report(
            name,
            gp.objective(x, y)?,
            Some(opt),
            crate::regression::sparse::KUU_JITTER,
        );
        r.notes.extend(start_note);
        r.notes.extend(pre.map(|p| p.note()));
        let posterior = gp.posterior(x, y)?;
        let task = task(posterior, gp.noise_variance, st.y_scaler, None);
        Ok(FittedModel::assemble(spec, train, st.x_scaler, task, r))
    }
}

/// `pac-gp`, `pac-gp-sqrt` (Reeb et al. 2018) on standardised data: minimise the bound over θ
/// and σ², θ snapped onto the grid or the coarse prior's grid; with the split prior,
/// `split_pac_gp`.
impl MethodFit for PacGpSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, _: LabelMap) -> Result<FittedModel> {
        if let PacPrior::Split(fraction) = self.prior {
            return split_pac_gp(spec, self, fraction, train);
        }
        let st = standardise(train)?;
        let kernel = Kernel::from_spec(&self.kernel, train.d())?;
        let levers = levers(spec, self.prior);
        let band = RegressionLoss::band_in_standard_units(self.epsilon, st.y_scaler.sd)?;
        let mut cfg = PacGpConfig::with_loss(band, self.bound);
        cfg.delta = spec.delta;
        cfg.term = levers.term;
        cfg.hyper_prior = levers.hyper_prior;
        let fit = fit_pac_gp(&kernel, self.noise_init, st.x.clone(), st.y.clone(), &cfg)?;
        let objective = fit.certificate.bound_of_kind(self.bound);
        let r = bound_report(objective, self.bound, fit.report, fit.gp.jitter_used());
        let task = task(
            fit.gp.posterior()?,
            fit.gp.noise_variance,
            st.y_scaler,
            None,
        );
        Ok(FittedModel::assemble(spec, train, st.x_scaler, task, r))
    }
}

/// PAC-GP with the data-dependent prior (docs/math.md §9.3): a seeded split of the rows'
/// canonical order, scalers and θ_A, σ_A² by ML-II on part A, Q minimising the kl bound on
/// part B over (σ_m², σ_v²) with the covariance scale fixed at 1, so that Q is the shared
/// site-form posterior exactly; the model keeps the split's record for `certify`.
fn split_pac_gp(
    spec: &CheckedFitSpec,
    s: &PacGpSpec,
    fraction: SplitFraction,
    train: &Dataset,
) -> Result<FittedModel> {
    let kernel = Kernel::from_spec(&s.kernel, train.d())?;
    let cfg = SplitConfig {
        unit_scale: true,
        ..split_config(spec, s.epsilon, fraction)
    };
    let fit = fit_split_prior(train, &kernel, &cfg)?;
    let record = SplitRecord::of(&fit, fraction.candidates()?.len(), cfg.term);
    let posterior = fit.posterior;
    let mut r = report(
        "pac_bayes_bound_kl_split_prior",
        fit.certificate.bound,
        Some(fit.report.clone()),
        posterior.cov.jitter(),
    );
    r.notes.extend(fit.prior.start_note.clone());
    let split_prior = Some(RegressionSplit::Dense(record));
    let task = task(posterior, fit.prior.noise_a, fit.y_scaler, split_prior);
    Ok(FittedModel::assemble(spec, train, fit.x_scaler, task, r))
}

/// The split prior's settings for a PAC regressor's spec: its fraction, ε in the target's
/// units, and the fit's seed, δ and confidence term.
fn split_config(spec: &CheckedFitSpec, epsilon: f64, fraction: SplitFraction) -> SplitConfig {
    SplitConfig {
        fraction,
        seed: spec.seed,
        delta: spec.delta,
        term: spec.confidence_term(),
        ..SplitConfig::new(epsilon)
    }
}

/// `pac-sgp`, `pac-sgp-sqrt` (FITC form) on standardised data, σ² starting at 1 as in the
/// paper; with the split prior, `split_pac_sgp`.
impl MethodFit for PacSgpSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, _: LabelMap) -> Result<FittedModel> {
        if let PacPrior::Split(fraction) = self.prior {
            return split_pac_sgp(spec, self, fraction, train);
        }
        let st = standardise(train)?;
        let kernel = Kernel::from_spec(&self.kernel, train.d())?;
        let loss = RegressionLoss::band_in_standard_units(self.epsilon, st.y_scaler.sd)?;
        let (x, y) = (st.x.as_ref(), &st.y);
        let settings = crate::objective::pac_sgp::PacSgpSettings {
            m: self.inducing.unwrap_or(crate::spec::DEFAULT_BASIS),
            alpha_s: 1.0,
            loss,
            delta: spec.delta,
            kind: self.bound,
            seed: spec.seed,
            init: self.inducing_init,
            max_iter: self
                .schedule
                .max_iter
                .unwrap_or(crate::objective::pac_sgp::DEFAULT_MAX_ITER),
            pretrain: self.schedule.pretrain,
        };
        let levers = levers(spec, self.prior);
        let fit =
            crate::objective::pac_sgp::fit_pac_sgp_with(&kernel, 1.0, x, y, &settings, &levers)?;
        let objective = fit.certificate.bound_of_kind(self.bound);
        let jitter = crate::regression::sparse::KUU_JITTER;
        let mut r = bound_report(objective, self.bound, fit.report, jitter);
        r.notes.extend(fit.pretraining.map(|p| p.note()));
        let posterior = fit.gp.posterior_with_alpha(x, y, fit.alpha_s)?;
        let task = task(posterior, fit.gp.noise_variance, st.y_scaler, None);
        Ok(FittedModel::assemble(spec, train, st.x_scaler, task, r))
    }
}

/// PAC-SGP's sparse data-dependent prior (docs/math.md §9.3.2): a seeded split of the
/// rows' canonical order, scalers, θ_A, σ_A² and Z by VFE with M inducing inputs on part A, Q
/// ("P_A updated with B") minimising the kl bound on part B over σ² and α_s; the model keeps
/// P_A and the split for `certify`.
fn split_pac_sgp(
    spec: &CheckedFitSpec,
    s: &PacSgpSpec,
    fraction: SplitFraction,
    train: &Dataset,
) -> Result<FittedModel> {
    let kernel = Kernel::from_spec(&s.kernel, train.d())?;
    let cfg = split_config(spec, s.epsilon, fraction);
    let m = s.inducing.unwrap_or(crate::spec::DEFAULT_BASIS);
    let fit = crate::objective::sgp_split::fit_sparse_split_prior(train, &kernel, m, &cfg)?;
    let record = SparseSplitRecord::of(&fit, cfg.term);
    let posterior = fit.posterior;
    let mut r = report(
        "pac_bayes_bound_kl_sparse_split_prior",
        fit.certificate.bound,
        None,
        crate::regression::sparse::KUU_JITTER,
    );
    r.notes.extend(fit.prior.start_note.clone());
    let split_prior = Some(RegressionSplit::Sparse(Box::new(record)));
    let task = task(posterior, fit.prior.noise_a, fit.y_scaler, split_prior);
    Ok(FittedModel::assemble(spec, train, fit.x_scaler, task, r))
}

/// `greedy-sparse`: T. Zhang's sparse GP regression in the dual as a certified model: θ and σ²
/// by ML-II on a seeded subset of at most `GREEDY_ML2_POINTS` points, snapped onto the wide
/// grid; then k basis points chosen greedily (Algorithm 1, or κ-greedy past
/// `GREEDY_FULL_UP_TO` points; both in [`crate::regression::greedy`]) with every weight
/// refit, λ = σ²/N. The model is the DTC
/// posterior on the chosen basis, whose mean is the greedy predictor.
impl MethodFit for GreedySparseSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, _: LabelMap) -> Result<FittedModel> {
        use crate::regression::greedy::{
            Algorithm, GreedySparseConfig, GreedySparseGp, StopRule, Update, GREEDY_FULL_UP_TO,
            GREEDY_KAPPA, GREEDY_ML2_POINTS,
        };
        let st = standardise(train)?;
        let kernel = Kernel::from_spec(&self.kernel, train.d())?;
        let n = st.y.len();
        let k = self.basis.unwrap_or(crate::spec::DEFAULT_BASIS);
        let rows: Vec<usize> = crate::data::permutation(n, spec.seed)
            .into_iter()
            .take(n.min(GREEDY_ML2_POINTS))
            .collect();
        let xs = faer::Mat::from_fn(rows.len(), st.x.ncols(), |i, j| st.x[(rows[i], j)]);
        let ys: Vec<f64> = rows.iter().map(|&i| st.y[i]).collect();
        let ml = MlConfig {
            snap: Some(HyperGrid::wide()),
            ..Default::default()
        };
        let (gp, opt) = fit_ml2(&kernel, 0.1, xs, ys, &ml)?;
        let cfg = GreedySparseConfig {
            algorithm: if n <= GREEDY_FULL_UP_TO {
                Algorithm::Greedy
            } else {
                Algorithm::KappaGreedy {
                    kappa: GREEDY_KAPPA.min(n),
                }
            },
            update: Update::Refit,
            stop: StopRule::Steps { k },
            seed: spec.seed,
        };
        let (x, y) = (st.x.as_ref(), &st.y);
        let g = GreedySparseGp::fit(&gp.kernel, gp.noise_variance, x, y, &cfg)?;
        let posterior: GaussianPosterior = g.posterior(x, y)?;
        let r = report(
            "zhang_primal_objective",
            g.objective,
            Some(opt),
            posterior.cov.jitter(),
        );
        let task = task(posterior, g.noise_variance, st.y_scaler, None);
        Ok(FittedModel::assemble(spec, train, st.x_scaler, task, r))
    }
}
