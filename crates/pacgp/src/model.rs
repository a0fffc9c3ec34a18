//! A fitted model as one serialisable value: the shared posterior plus everything needed to
//! use it on raw data (standardisation, label map, noise, the loss's ε), and the fitting
//! pipelines the CLI calls. Model files are JSON and reload to identical predictions.

use std::path::Path;

use faer::MatRef;
use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, Certificate, ConfidenceTerm, HyperGrid};
use crate::data::{Dataset, LabelMap, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::inference::{ConvergenceReport, InferenceMethod};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::loss::{self, RegressionLoss};
use crate::metrics;
use crate::objective::pac_gp::{fit_pac_gp, PacGpConfig};
use crate::optim::OptimReport;
use crate::posterior::GaussianPosterior;
use crate::posterior::Marginals;
use crate::regression::exact::{fit_ml2, ExactGp, MlConfig};
use crate::regression::sparse::{train_sparse, SparseConfig, SparseMethod};

/// Model-file format tag; bumped on incompatible changes.
pub const FORMAT: &str = "pacgp-model/1";

/// What the model predicts.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "task", rename_all = "snake_case")]
pub enum Task {
    /// Real-valued targets with Gaussian observation noise.
    Regression {
        /// Noise variance σ² on the standardised scale.
        noise_variance: f64,
        /// Target standardisation (training statistics).
        y_scaler: TargetScaler,
    },
    /// Binary labels through a likelihood.
    Classification {
        /// The likelihood the posterior was inferred with.
        likelihood: Likelihood,
        /// The two labels as they appear in the data (−1, +1).
        labels: LabelMap,
        /// Gaussian input-noise variance v of the data model (naive mean field, seed 001
        /// eq. 17.16): a new label sees `f(x) + ξ`, `ξ ~ N(0, v)`, so class probabilities
        /// use the latent variance plus v. The certified Gibbs classifier is `sgn f`.
        #[serde(default)]
        input_noise: f64,
    },
}

/// A fitted model, ready to predict on raw inputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FittedModel {
    /// [`FORMAT`].
    pub format: String,
    /// How the training file's input cells were read (yes/no, missing as 0); files the
    /// model is applied to are read the same way.
    #[serde(default)]
    pub input_coding: crate::data::InputCoding,
    /// Method name as on the command line (e.g. `gpr`).
    pub method: String,
    /// Input column names, in order.
    pub feature_names: Vec<String>,
    /// Target column name.
    pub target_name: String,
    /// Training size.
    pub n_train: usize,
    /// Input standardisation (training statistics).
    pub x_scaler: Standardizer,
    /// The posterior over the latent function (on standardised inputs and targets).
    pub posterior: GaussianPosterior,
    /// Task-specific parts.
    pub task: Task,
    /// ε of the ε-band loss in target units, if the model was trained or certified with one.
    pub epsilon: Option<f64>,
    /// How the fit went (optimiser report, jitter).
    pub report: FitReport,
}

/// What happened during fitting, as data.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FitReport {
    /// Optimiser report (parameters in ln space: kernel θ then ln σ²).
    pub optimiser: Option<OptimReport>,
    /// Objective value at the returned parameters (e.g. log marginal likelihood).
    pub objective: Option<f64>,
    /// Name of that objective.
    pub objective_name: String,
    /// Jitter added to the final factorisation.
    pub jitter_used: f64,
    /// Whether θ was snapped onto the PAC grid (docs/math.md §2.4) after optimisation.
    pub theta_on_grid: bool,
    /// Union-bound penalty for how θ was chosen, if not the PAC grid's `T·ln 1201`
    /// (e.g. `ln |candidates|` when θ was picked from a finite list).
    #[serde(default)]
    pub penalty: Option<f64>,
    /// Convergence report of approximate inference (classifiers).
    #[serde(default)]
    pub inference: Option<ConvergenceReport>,
}

/// Predictions in the target's own units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegressionPrediction {
    /// Predictive mean.
    pub mean: Vec<f64>,
    /// Variance of the latent function.
    pub latent_var: Vec<f64>,
    /// Variance of a new observation (latent + noise).
    pub noisy_var: Vec<f64>,
}

/// Test-set metrics (regression or classification fields, as they apply).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Number of test points.
    pub n: usize,
    /// Root mean squared error (target units).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rmse: Option<f64>,
    /// Mean absolute error (target units).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mae: Option<f64>,
    /// Mean negative log predictive density (target units).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nlpd: Option<f64>,
    /// Fraction of targets inside the central 95% predictive interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage_95: Option<f64>,
    /// ε used for the regression risks (target units).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// Gibbs risk: ε-band (regression) or Gibbs classification error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gibbs_risk: Option<f64>,
    /// Error of the deterministic (posterior-mean / Bayes) predictor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bayes_risk: Option<f64>,
    /// Classification error of the Bayes classifier `sgn(μ + b)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
    /// Mean negative log predictive probability of the labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_loss: Option<f64>,
}

/// A certificate with the leave-one-out estimate next to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CertificateReport {
    /// The PAC-Bayes certificate (kl form, Maurer constant).
    #[serde(flatten)]
    pub certificate: Certificate,
    /// The bound's Pinsker (sqrt) form, for comparison.
    pub bound_sqrt: f64,
    /// ε (target units; regression only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// Leave-one-out ε-band error of the posterior mean (exact GP: closed form).
    pub loo_error: Option<f64>,
    /// Mean leave-one-out log predictive density (target units).
    pub loo_log_predictive: Option<f64>,
    /// Leave-one-out RMSE (target units).
    pub loo_rmse: Option<f64>,
}

impl FittedModel {
    /// Write the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string(self).map_err(|e| Error::ModelFile {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        std::fs::write(path, text).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Read a model written by [`FittedModel::save`]; a damaged file is an [`Error::ModelFile`].
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        let bad = |message: String| Error::ModelFile {
            path: path.display().to_string(),
            message,
        };
        let m: FittedModel = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if m.format != FORMAT {
            return Err(bad(format!("format '{}' is not '{FORMAT}'", m.format)));
        }
        m.validate().map_err(|e| bad(e.to_string()))?;
        Ok(m)
    }

    /// Internal consistency of a loaded model (shapes, finiteness).
    fn validate(&self) -> Result<()> {
        let p = &self.posterior;
        let d = self.feature_names.len();
        if p.basis.ncols() != d || self.x_scaler.mean.len() != d || self.x_scaler.sd.len() != d {
            return Err(Error::Numerical {
                what: "model file",
                message: "input dimensions disagree".into(),
            });
        }
        if p.alpha.len() != p.basis.nrows() || p.alpha.iter().any(|a| !a.is_finite()) {
            return Err(Error::Numerical {
                what: "model file",
                message: "mean weights are missing or not finite".into(),
            });
        }
        p.kernel.check_input_dim(d)?;
        crate::data::check_finite(p.basis.as_ref(), "model basis")
    }

    fn standardised_inputs(&self, x: MatRef<'_, f64>) -> Result<faer::Mat<f64>> {
        crate::data::check_finite(x, "inputs")?;
        self.x_scaler.transform(x)
    }

    fn regression_parts(&self) -> Result<(f64, TargetScaler)> {
        match &self.task {
            Task::Regression {
                noise_variance,
                y_scaler,
            } => Ok((*noise_variance, *y_scaler)),
            Task::Classification { .. } => Err(Error::Unsupported(format!(
                "'{}' is a classifier, not a regression model",
                self.method
            ))),
        }
    }

    /// Whether the model is a classifier.
    pub fn is_classifier(&self) -> bool {
        matches!(self.task, Task::Classification { .. })
    }

    /// The union-bound penalty for how θ was chosen.
    fn penalty(&self) -> f64 {
        self.report
            .penalty
            .unwrap_or_else(|| HyperGrid::default().penalty(self.posterior.kernel.n_params()))
    }

    /// Class probabilities `p(y = +1 | x)` and latent marginals at raw inputs.
    pub fn predict_classification(&self, x: MatRef<'_, f64>) -> Result<(Vec<f64>, Marginals)> {
        let Task::Classification {
            likelihood,
            input_noise,
            ..
        } = &self.task
        else {
            return Err(Error::Unsupported(format!(
                "'{}' is a regression model, not a classifier",
                self.method
            )));
        };
        let m = self
            .posterior
            .predict(self.standardised_inputs(x)?.as_ref())?;
        let p = m
            .mean
            .iter()
            .zip(&m.var)
            .map(|(mu, v)| likelihood.predictive_positive(*mu, *v + input_noise))
            .collect();
        Ok((p, m))
    }

    fn evaluate_classifier(&self, test: &Dataset) -> Result<Evaluation> {
        let Task::Classification { likelihood, .. } = &self.task else {
            unreachable!("checked by the caller")
        };
        let (p, m) = self.predict_classification(test.x.as_ref())?;
        let (b, lam) = likelihood.bias_and_slope();
        let scores: Vec<f64> = m.mean.iter().map(|mu| mu + b).collect();
        Ok(Evaluation {
            n: test.n(),
            error_rate: Some(metrics::error_rate(&scores, &test.y)?),
            log_loss: Some(metrics::log_loss(&p, &test.y)?),
            gibbs_risk: Some(loss::gibbs_error_classification(&test.y, &m, b, lam)?),
            bayes_risk: Some(loss::bayes_error_classification(&test.y, &m, b)?),
            ..Default::default()
        })
    }

    fn certify_classifier(
        &self,
        sample: &Dataset,
        delta: f64,
        term: ConfidenceTerm,
    ) -> Result<CertificateReport> {
        let Task::Classification { likelihood, .. } = &self.task else {
            unreachable!("checked by the caller")
        };
        let m = self
            .posterior
            .predict(self.standardised_inputs(sample.x.as_ref())?.as_ref())?;
        let (b, lam) = likelihood.bias_and_slope();
        let risk = loss::gibbs_error_classification(&sample.y, &m, b, lam)?;
        let kl = self.posterior.kl_to_prior().max(0.0);
        let n = sample.n();
        let certificate =
            Certificate::new(risk, kl, n, delta, self.penalty(), BoundKind::Kl, term)?;
        let bound_sqrt = crate::bounds::pac_bayes_bound(
            risk,
            kl,
            n,
            delta,
            self.penalty(),
            BoundKind::Sqrt,
            term,
        )?;
        Ok(CertificateReport {
            certificate,
            bound_sqrt,
            epsilon: None,
            loo_error: None,
            loo_log_predictive: None,
            loo_rmse: None,
        })
    }

    /// Predictive distribution at raw inputs, in target units.
    pub fn predict_regression(&self, x: MatRef<'_, f64>) -> Result<RegressionPrediction> {
        let (noise, ys) = self.regression_parts()?;
        let m = self
            .posterior
            .predict(self.standardised_inputs(x)?.as_ref())?;
        Ok(RegressionPrediction {
            mean: m.mean.iter().map(|v| ys.unscale_mean(*v)).collect(),
            latent_var: m.var.iter().map(|v| ys.unscale_var(*v)).collect(),
            noisy_var: m.var.iter().map(|v| ys.unscale_var(v + noise)).collect(),
        })
    }

    fn resolve_epsilon(&self, epsilon: Option<f64>) -> Option<f64> {
        epsilon.or(self.epsilon)
    }

    /// Test metrics; Gibbs and Bayes risks when an ε is given or stored.
    pub fn evaluate(&self, test: &Dataset, epsilon: Option<f64>) -> Result<Evaluation> {
        if self.is_classifier() {
            return self.evaluate_classifier(test);
        }
        let p = self.predict_regression(test.x.as_ref())?;
        let eps = self.resolve_epsilon(epsilon);
        let (gibbs, bayes) = match eps {
            Some(e) => {
                let loss = RegressionLoss::new_epsilon_band(e)?;
                let m = crate::posterior::Marginals {
                    mean: p.mean.clone(),
                    var: p.latent_var.clone(),
                };
                (
                    Some(loss::gibbs_risk_regression(&test.y, &m, &loss)?),
                    Some(loss::bayes_risk_regression(&test.y, &m, &loss)?),
                )
            }
            None => (None, None),
        };
        Ok(Evaluation {
            n: test.n(),
            rmse: Some(metrics::rmse(&p.mean, &test.y)?),
            mae: Some(metrics::mae(&p.mean, &test.y)?),
            nlpd: Some(metrics::nlpd(&p.mean, &p.noisy_var, &test.y)?),
            coverage_95: Some(metrics::coverage(&p.mean, &p.noisy_var, &test.y, 0.95)?),
            epsilon: eps,
            gibbs_risk: gibbs,
            bayes_risk: bayes,
            ..Default::default()
        })
    }

    /// PAC-Bayes certificate on `sample` (the training data): of the ε-band Gibbs risk for
    /// regression (with the closed-form LOO for exact GPs), of the Gibbs classification error
    /// for classifiers (docs/math.md §7.1); the penalty covers how θ was chosen.
    pub fn certify(
        &self,
        sample: &Dataset,
        epsilon: Option<f64>,
        delta: f64,
        term: ConfidenceTerm,
    ) -> Result<CertificateReport> {
        if self.is_classifier() {
            return self.certify_classifier(sample, delta, term);
        }
        let eps = self.resolve_epsilon(epsilon).ok_or_else(|| {
            Error::Unsupported("the ε-band loss needs --epsilon (in the target's units): this model was not trained with one".into())
        })?;
        if !self.report.theta_on_grid {
            return Err(Error::Unsupported(
                "this model's hyperparameters are not on the PAC grid (fitted with --no-snap), so no bound holds for it; refit without --no-snap".into(),
            ));
        }
        let (noise, ys) = self.regression_parts()?;
        let loss = RegressionLoss::new_epsilon_band(eps)?.scaled(1.0 / ys.sd);
        let xs = self.standardised_inputs(sample.x.as_ref())?;
        let y_std = ys.transform(&sample.y);
        let marg = self.posterior.predict(xs.as_ref())?;
        let risk = loss::gibbs_risk_regression(&y_std, &marg, &loss)?;
        let kl = self.posterior.kl_to_prior();
        let penalty = self.penalty();
        let n = sample.n();
        let certificate = Certificate::new(risk, kl, n, delta, penalty, BoundKind::Kl, term)?;
        let bound_sqrt =
            crate::bounds::pac_bayes_bound(risk, kl, n, delta, penalty, BoundKind::Sqrt, term)?;
        let (mut loo_error, mut loo_lp, mut loo_rmse) = (None, None, None);
        if self.method == "gpr" || self.method.starts_with("pac-gp") {
            let gp = ExactGp::fit(
                self.posterior.kernel.clone(),
                noise,
                xs,
                y_std.clone(),
                &Default::default(),
            )?;
            let loo = crate::loo::exact_gp_loo(&gp);
            let errs = loo
                .mean
                .iter()
                .zip(&y_std)
                .filter(|(m, y)| (*m - *y).abs() > loss.epsilon())
                .count();
            loo_error = Some(errs as f64 / n as f64);
            // Densities transform with the Jacobian 1/sd of the standardisation.
            loo_lp = Some(loo.log_predictive / n as f64 - ys.sd.ln());
            loo_rmse = Some(loo.mse(&y_std).sqrt() * ys.sd);
        }
        Ok(CertificateReport {
            certificate,
            bound_sqrt,
            epsilon: Some(eps),
            loo_error,
            loo_log_predictive: loo_lp,
            loo_rmse,
        })
    }
}

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
    let y_scaler = TargetScaler::fit(&train.y)?;
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

/// Assemble a regression model file.
fn regression_model(
    train: &Dataset,
    method: &str,
    s: Standardised,
    posterior: GaussianPosterior,
    noise_variance: f64,
    epsilon: Option<f64>,
    report: FitReport,
) -> FittedModel {
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
        },
        epsilon,
        report,
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
    /// Snap θ onto the PAC grid after optimisation so the model can be certified.
    pub snap_to_grid: bool,
}

impl Default for GprOptions {
    fn default() -> Self {
        Self {
            kernel: None,
            noise_init: 0.1,
            ml: MlConfig::default(),
            epsilon: None,
            snap_to_grid: true,
        }
    }
}

/// Exact GP regression by ML-II on standardised inputs and targets (training statistics),
/// θ snapped onto the PAC grid (docs/math.md §2.4; at most 0.005 in ln space), noise kept as fitted.
pub fn fit_gpr(train: &Dataset, opts: &GprOptions) -> Result<FittedModel> {
    if let Some(e) = opts.epsilon {
        RegressionLoss::new_epsilon_band(e)?;
    }
    let s = standardise(train)?;
    let kernel = kernel_or_default(&opts.kernel, train.d());
    // A certifiable model's θ must lie in the grid's range: optimise inside it, so that
    // snapping afterwards only rounds (≤ 0.005 in ln space) and never clamps.
    let grid = HyperGrid::default();
    let mut ml = opts.ml.clone();
    if opts.snap_to_grid {
        ml.theta_bounds = (
            ml.theta_bounds.0.max(grid.min_log),
            ml.theta_bounds.1.min(grid.max_log),
        );
    }
    let (mut gp, report) = fit_ml2(&kernel, opts.noise_init, s.x.clone(), s.y.clone(), &ml)?;
    if opts.snap_to_grid {
        let mut k = gp.kernel.clone();
        k.set_params(&grid.round(&k.params()))?;
        gp = ExactGp::fit(k, gp.noise_variance, s.x.clone(), s.y.clone(), &ml.jitter)?;
    }
    let (posterior, noise) = (gp.posterior(), gp.noise_variance);
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
}

/// PAC-GP (seed 004) on standardised data: minimise the bound over θ and σ², snap θ to the
/// grid; the model stores ε (target units) so `certify` reuses it.
pub fn fit_pac_gp_model(train: &Dataset, opts: &PacGpOptions) -> Result<FittedModel> {
    let s = standardise(train)?;
    let kernel = kernel_or_default(&opts.kernel, train.d());
    let mut cfg = PacGpConfig::new(s.y_scaler.scale_length(opts.epsilon), opts.kind)?;
    cfg.delta = opts.delta;
    let fit = fit_pac_gp(&kernel, opts.noise_init, s.x.clone(), s.y.clone(), &cfg)?;
    let (method, objective) = match opts.kind {
        BoundKind::Kl => ("pac-gp", fit.certificate.bound),
        BoundKind::Sqrt => ("pac-gp-sqrt", fit.bound_sqrt),
    };
    let report = bound_report(objective, opts.kind, Some(fit.report), fit.gp.jitter_used());
    let (posterior, noise) = (fit.gp.posterior(), fit.gp.noise_variance);
    Ok(regression_model(
        train,
        method,
        s,
        posterior,
        noise,
        Some(opts.epsilon),
        report,
    ))
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
    /// Seed of the k-means initialisation of Z.
    pub seed: u64,
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
    let grid = HyperGrid::default();
    let cfg = SparseConfig {
        seed: opts.seed,
        ..Default::default()
    };
    let (x, y) = (s.x.as_ref(), &s.y);
    let (mut gp, report) = train_sparse(
        &kernel,
        opts.noise_init,
        x,
        y,
        opts.m,
        opts.method,
        &cfg,
        (grid.min_log, grid.max_log),
    )?;
    gp.kernel.set_params(&grid.round(&gp.kernel.params()))?;
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
    /// Seed of the k-means initialisation.
    pub seed: u64,
}

/// Sparse PAC-GP (seed 004) on standardised data; σ² starts at 1 as in the paper.
pub fn fit_pac_sgp_model(train: &Dataset, opts: &PacSgpOptions) -> Result<FittedModel> {
    let s = standardise(train)?;
    let kernel = kernel_or_default(&opts.kernel, train.d());
    let loss = RegressionLoss::new_epsilon_band(s.y_scaler.scale_length(opts.epsilon))?;
    let (x, y) = (s.x.as_ref(), &s.y);
    let fit = crate::objective::pac_sgp::fit_pac_sgp(
        &kernel,
        1.0,
        x,
        y,
        opts.m,
        opts.alpha_s,
        loss,
        opts.delta,
        opts.kind,
        opts.seed,
        1000,
    )?;
    let (method, objective) = match opts.kind {
        BoundKind::Kl => ("pac-sgp", fit.certificate.bound),
        BoundKind::Sqrt => ("pac-sgp-sqrt", fit.bound_sqrt),
    };
    let report = bound_report(
        objective,
        opts.kind,
        Some(fit.report),
        crate::regression::sparse::KUU_JITTER,
    );
    let posterior = fit.gp.posterior_with_alpha(x, y, fit.alpha_s)?;
    Ok(regression_model(
        train,
        method,
        s,
        posterior,
        fit.gp.noise_variance,
        Some(opts.epsilon),
        report,
    ))
}

/// Options of [`fit_classifier`].
#[derive(Clone, Debug)]
pub struct ClassifierOptions {
    /// Inference method and its settings.
    pub method: InferenceMethod,
    /// Likelihood.
    pub likelihood: Likelihood,
    /// Confidence δ of the bound used to select θ.
    pub delta: f64,
    /// Confidence constant of that bound.
    pub term: ConfidenceTerm,
    /// How the kernel hyperparameters are chosen.
    pub selection: HyperSelection,
}

/// The candidate kernels `σ_f²·SE(l)` on standardised inputs whose bound is compared:
/// `σ_f² ∈ {1, 4, 16}`, `l ∈ {½, 1, 2}·√D`, fixed before seeing data.
pub fn classifier_candidates(d: usize) -> Vec<Kernel> {
    let base = (d as f64).sqrt();
    let mut out = Vec::new();
    for sf2 in [1.0, 4.0, 16.0] {
        for m in [0.5, 1.0, 2.0] {
            out.push(Kernel::se_iso(m * base, sf2));
        }
    }
    out
}

/// How a classifier's kernel hyperparameters are chosen. Either way the penalty of the
/// choice enters the certificate, so the bound stored with the model holds as computed.
#[derive(Clone, Debug, Default)]
pub enum HyperSelection {
    /// The lowest PAC-Bayes bound among [`classifier_candidates`] (penalty `ln 9`).
    #[default]
    BoundOverCandidates,
    /// ML-II from `kernel` (Laplace/EP evidence with analytic gradients, or the IVM
    /// pseudo-likelihood of seed 003 §4.3) inside the PAC grid's range, then θ snapped onto
    /// the grid of seed 004 (penalty `T·ln 1201`).
    Ml2 {
        /// Kernel structure and starting values.
        kernel: Kernel,
    },
}

/// Bound of a fit on its training sample with the given penalty (docs/math.md §7.1).
fn classifier_bound(
    fit: &crate::inference::ClassifierFit,
    x: MatRef<'_, f64>,
    y: &[f64],
    opts: &ClassifierOptions,
    penalty: f64,
) -> Result<f64> {
    let (b, lam) = opts.likelihood.bias_and_slope();
    let risk = loss::gibbs_error_classification(y, &fit.posterior.predict(x)?, b, lam)?;
    crate::bounds::pac_bayes_bound(
        risk,
        fit.posterior.kl_to_prior().max(0.0),
        y.len(),
        opts.delta,
        penalty,
        BoundKind::Kl,
        opts.term,
    )
}

/// A chosen classifier fit with its bound, the penalty of the choice and the optimiser report.
type Selected = (
    crate::inference::ClassifierFit,
    f64,
    f64,
    Option<OptimReport>,
);

/// The lowest-bound fit among the candidate kernels, with its bound and penalty `ln 9`.
fn select_by_bound(x: MatRef<'_, f64>, y: &[f64], opts: &ClassifierOptions) -> Result<Selected> {
    let candidates = classifier_candidates(x.ncols());
    let penalty = (candidates.len() as f64).ln();
    let mut best: Option<(f64, crate::inference::ClassifierFit)> = None;
    for k in &candidates {
        let fit = opts.method.fit(k, &opts.likelihood, x, y)?;
        let bound = classifier_bound(&fit, x, y, opts, penalty)?;
        if best.as_ref().is_none_or(|(bb, _)| bound < *bb) {
            best = Some((bound, fit));
        }
    }
    let (bound, fit) = best.ok_or(Error::Empty {
        what: "kernel candidates",
    })?;
    Ok((fit, bound, penalty, None))
}

/// ML-II inside the grid's range, θ snapped onto the grid, refit there; penalty `T·ln 1201`.
fn select_by_ml2(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    opts: &ClassifierOptions,
) -> Result<Selected> {
    use crate::inference::evidence::{fit_ep_ml2, fit_laplace_ml2, ClassifierMlConfig, WarmStart};
    use crate::inference::ivm::ml2::{ivm_ml2, IvmMl2Config};
    use crate::inference::InferenceMethod;
    let grid = HyperGrid::default();
    let boxed = (grid.min_log, grid.max_log);
    let ml = |laplace| -> Result<(Kernel, OptimReport, WarmStart)> {
        let cfg = ClassifierMlConfig {
            theta_bounds: boxed,
            ..Default::default()
        };
        let r = if laplace {
            fit_laplace_ml2(kernel, &opts.likelihood, x, y, &cfg)?
        } else {
            fit_ep_ml2(kernel, &opts.likelihood, x, y, &cfg)?
        };
        Ok((r.kernel, r.report, r.warm))
    };
    let (mut fitted, report, warm) = match &opts.method {
        InferenceMethod::Laplace(_) => ml(true)?,
        InferenceMethod::Ep(_) => ml(false)?,
        InferenceMethod::Ivm(cfg) => {
            let mut c = IvmMl2Config::new(cfg.active_set, 3);
            c.ivm = *cfg;
            c.kernel_optim.bounds = Some(vec![boxed; kernel.n_params()]);
            let r = ivm_ml2(kernel, &opts.likelihood, x, y, &c)?;
            let rep = r.kernel_reports.last().cloned();
            (
                r.fit.posterior.kernel,
                rep.ok_or(Error::Empty {
                    what: "IVM ML-II rounds",
                })?,
                WarmStart::None,
            )
        }
        other => {
            return Err(Error::Unsupported(format!(
                "ML-II hyperparameters are available for laplace, ep and ivm, not {}",
                other.name()
            )))
        }
    };
    fitted.set_params(&grid.round(&fitted.params()))?;
    // The grid point is within 0.005 of the optimum in ln space: start from its fit.
    let fit = match (&opts.method, &warm) {
        (InferenceMethod::Laplace(cfg), WarmStart::Laplace(f0)) => {
            crate::inference::laplace::laplace_warm(&fitted, &opts.likelihood, x, y, cfg, f0)?
        }
        (InferenceMethod::Ep(cfg), WarmStart::Ep(sites)) => {
            crate::inference::ep::ep_warm(&fitted, &opts.likelihood, x, y, cfg, sites)?.0
        }
        _ => opts.method.fit(&fitted, &opts.likelihood, x, y)?,
    };
    let penalty = grid.penalty(fitted.n_params());
    let bound = classifier_bound(&fit, x, y, opts, penalty)?;
    Ok((fit, bound, penalty, Some(report)))
}

/// GP classification with certified hyperparameters: by default θ is chosen by **minimising
/// the PAC-Bayes bound** on the Gibbs error over [`classifier_candidates`] (union bound:
/// penalty `ln 9`); with [`HyperSelection::Ml2`] by ML-II snapped onto the PAC grid.
pub fn fit_classifier(
    train: &Dataset,
    labels: LabelMap,
    opts: &ClassifierOptions,
) -> Result<FittedModel> {
    crate::data::check_binary_labels(&train.y)?;
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let (fit, bound, penalty, optimiser) = match &opts.selection {
        HyperSelection::BoundOverCandidates => select_by_bound(x.as_ref(), &train.y, opts)?,
        HyperSelection::Ml2 { kernel } => select_by_ml2(kernel, x.as_ref(), &train.y, opts)?,
    };
    let name = opts.method.name();
    Ok(FittedModel {
        format: FORMAT.into(),
        input_coding: Default::default(),
        method: name.into(),
        feature_names: train.feature_names.clone(),
        target_name: train.target_name.clone(),
        n_train: train.n(),
        x_scaler,
        posterior: fit.posterior,
        task: Task::Classification {
            likelihood: opts.likelihood,
            labels,
            input_noise: match &opts.method {
                crate::inference::InferenceMethod::MeanField(cfg) => cfg.input_noise,
                _ => 0.0,
            },
        },
        epsilon: None,
        report: FitReport {
            optimiser,
            objective: Some(bound),
            objective_name: "pac_bayes_bound_gibbs_error".into(),
            jitter_used: fit.report.jitter_used,
            theta_on_grid: true,
            penalty: Some(penalty),
            inference: Some(fit.report),
        },
    })
}
