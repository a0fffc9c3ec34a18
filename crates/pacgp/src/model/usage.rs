//! Using a fitted model: predictions on raw inputs, test-set metrics, and certificates on the
//! training sample through the one constructor ([`crate::certificate`]).

use faer::MatRef;
use serde::{Deserialize, Serialize};

use super::{CertificateReport, Evaluation, FittedModel, RegressionPrediction, Task};
use crate::bounds::{ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::data::{Dataset, TargetScaler};
use crate::error::{Error, Result};
use crate::inference::ivm::IvmConfig;
use crate::inference::mean_field::MeanFieldConfig;
use crate::inference::sogp::{SogpConfig, SweepOrder};
use crate::inference::InferenceMethod;
use crate::loo::{ClassifierLoo, LooEstimator, LooMode, RegressionModel};
use crate::loss::{self, RegressionLoss};
use crate::metrics;
use crate::posterior::Marginals;
use crate::regression::exact::ExactGp;
use crate::regression::sparse::{SparseGp, SparseMethod};

/// Which stochastic classifier a classification certificate (and the Gibbs risk of
/// `evaluate`) is about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GibbsPredictor {
    /// The noise-free latent classifier `sgn(f(x) + b)`, `f ~ Q`.
    #[default]
    Latent,
    /// The probit's noisy classifier `sgn(f(x) + ξ + b)` (same as latent for other likelihoods).
    Noisy,
}

/// Settings of [`FittedModel::certify`].
#[derive(Clone, Debug, PartialEq)]
pub struct CertifyOptions {
    /// ε values of the ε-band loss in target units (regression). Empty = the model's own ε.
    /// Several ε certified at once pay `ln k` more each (union bound).
    pub epsilons: Vec<f64>,
    /// Confidence δ.
    pub delta: f64,
    /// Confidence constant.
    pub term: ConfidenceTerm,
    /// Classifier certificates: which Gibbs classifier.
    pub predictor: GibbsPredictor,
    /// Which leave-one-out estimates go beside the certificate (`None`: none).
    pub loo: Option<LooMode>,
}

impl Default for CertifyOptions {
    fn default() -> Self {
        Self {
            epsilons: Vec::new(),
            delta: 0.01,
            term: ConfidenceTerm::Maurer,
            predictor: GibbsPredictor::Latent,
            loo: Some(LooMode::Approx),
        }
    }
}

impl FittedModel {
    fn standardised_inputs(&self, x: MatRef<'_, f64>) -> Result<faer::Mat<f64>> {
        crate::data::check_finite(x, "inputs")?;
        self.x_scaler.transform(x)
    }

    fn regression_parts(&self) -> Result<(f64, TargetScaler)> {
        match &self.task {
            Task::Regression {
                noise_variance,
                y_scaler,
                ..
            } => Ok((*noise_variance, *y_scaler)),
            Task::Classification { .. } | Task::Svm { .. } => Err(Error::Unsupported(format!(
                "'{}' is a classifier, not a regression model",
                self.method
            ))),
        }
    }

    /// The confidence constant the model was trained with, if it stores one (`fit --xi`, the
    /// split prior); `certify` uses it unless told otherwise.
    pub fn trained_confidence_term(&self) -> Option<crate::bounds::ConfidenceTerm> {
        match &self.task {
            Task::Regression {
                split_prior: Some(r),
                ..
            } => Some(r.term),
            Task::Regression {
                sparse_split_prior: Some(r),
                ..
            } => Some(r.term),
            Task::Regression {
                confidence_term, ..
            } => *confidence_term,
            Task::Classification {
                split_prior: Some(r),
                ..
            } => Some(r.term),
            _ => None,
        }
    }

    /// The split-prior certificates (issue 15): rebuild the split, P_A and Q from the training
    /// sample and certify Q on part B for every ε (no leave-one-out for this model).
    fn certify_split_prior(
        &self,
        record: &crate::prior::split::SplitRecord,
        sample: &Dataset,
        xs: &faer::Mat<f64>,
        epsilons: &[f64],
        opts: &CertifyOptions,
    ) -> Result<Vec<CertificateReport>> {
        let (_, ys) = self.regression_parts()?;
        let y_std = ys.transform(&sample.y);
        let (q, n_a) = record.posterior(sample, xs, &y_std)?;
        let choices = record.choices(n_a, sample.n());
        certify_on_part_b(
            q.kl(),
            q.marginals_on_b(),
            &q.y_b,
            choices,
            &band_losses(epsilons, ys.sd)?,
            opts,
        )
    }

    /// The sparse split-prior certificates (issue 15): rebuild the split, P_A (stored) and Q
    /// from the training sample and certify Q on part B for every ε.
    fn certify_sparse_split_prior(
        &self,
        record: &crate::prior::split_sparse::SparseSplitRecord,
        sample: &Dataset,
        xs: &faer::Mat<f64>,
        epsilons: &[f64],
        opts: &CertifyOptions,
    ) -> Result<Vec<CertificateReport>> {
        let (_, ys) = self.regression_parts()?;
        let y_std = ys.transform(&sample.y);
        let (q, y_b, n_a) = record.posterior(sample, xs, &y_std)?;
        let choices = record.choices(n_a, sample.n());
        certify_on_part_b(
            q.kl(),
            q.marginals_on_b(),
            &y_b,
            choices,
            &band_losses(epsilons, ys.sd)?,
            opts,
        )
    }

    /// The classifier split prior's certificate (issue 15): rebuild the split, `P_A` and Q's
    /// parts on B from the record and the training sample
    /// ([`super::split_classifier::ClassifierSplitRecord::on_part_b`]) and certify Q on part
    /// B (no leave-one-out for this model).
    fn certify_split_classifier(
        &self,
        record: &super::split_classifier::ClassifierSplitRecord,
        sample: &Dataset,
        opts: &CertifyOptions,
    ) -> Result<Vec<CertificateReport>> {
        if !opts.epsilons.is_empty() {
            return Err(Error::Unsupported(
                "--epsilon applies to regression models; a classifier's certificate bounds its 0-1 error".into(),
            ));
        }
        let choices = self.choices();
        record.check_choices(&choices)?;
        let b = record.on_part_b(&self.posterior, &self.x_scaler, sample)?;
        let loss = GibbsLoss::Classification(self.gibbs_classifier(opts.predictor)?);
        certify_on_part_b(b.kl, &b.marginals, &b.y, choices, &[(loss, None)], opts)
    }

    /// Whether the model is a classifier.
    pub fn is_classifier(&self) -> bool {
        matches!(self.task, Task::Classification { .. } | Task::Svm { .. })
    }

    /// What was chosen from the data and its price (older files: their total penalty, or the
    /// PAC grid's `T·ln 1201`).
    pub fn choices(&self) -> Vec<PenaltyTerm> {
        if !self.report.choices.is_empty() {
            return self.report.choices.clone();
        }
        match self.report.penalty {
            Some(nats) => vec![PenaltyTerm {
                what: "hyperparameter choice (penalty stored by an older version)".into(),
                nats,
            }],
            None => vec![PenaltyTerm::grid(
                &HyperGrid::default(),
                self.posterior.kernel.n_params(),
            )],
        }
    }

    /// The Gibbs classifier of a classification model.
    fn gibbs_classifier(&self, predictor: GibbsPredictor) -> Result<GibbsClassifier> {
        match &self.task {
            Task::Classification { likelihood, .. } => Ok(match predictor {
                GibbsPredictor::Latent => GibbsClassifier::latent(likelihood),
                GibbsPredictor::Noisy => GibbsClassifier::noisy(likelihood),
            }),
            // The SVM's Gibbs classifier is sign(f + b), f ~ Q, no label noise (b = 0 when
            // certified: the bias is then the prior kernel's constant term).
            Task::Svm { bias, .. } => Ok(GibbsClassifier {
                bias: *bias,
                noise_slope: None,
            }),
            Task::Regression { .. } => Err(Error::Unsupported(format!(
                "'{}' is a regression model, not a classifier",
                self.method
            ))),
        }
    }

    /// Class probabilities `p(y = +1 | x)` and latent marginals at raw inputs; for an SVM the
    /// probability that its Gibbs classifier says +1, `Φ(μ f_SVM(x)/√k(x,x))`.
    pub fn predict_classification(&self, x: MatRef<'_, f64>) -> Result<(Vec<f64>, Marginals)> {
        if let Task::Svm { bias, .. } = &self.task {
            let m = self
                .posterior
                .predict(self.standardised_inputs(x)?.as_ref())?;
            let p = m
                .mean
                .iter()
                .zip(&m.var)
                .map(|(mu, v)| {
                    crate::special::normal_cdf((mu + bias) / v.sqrt().max(f64::MIN_POSITIVE))
                })
                .collect();
            return Ok((p, m));
        }
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

    /// Test metrics; for regression the Gibbs and Bayes risks when an ε is given or stored,
    /// for classifiers the Gibbs error of the latent classifier.
    pub fn evaluate(&self, test: &Dataset, epsilon: Option<f64>) -> Result<Evaluation> {
        if self.is_classifier() {
            return self.evaluate_classifier(test);
        }
        let p = self.predict_regression(test.x.as_ref())?;
        let eps = epsilon.or(self.epsilon);
        let (gibbs, bayes) = match eps {
            Some(e) => {
                let loss = RegressionLoss::new_epsilon_band(e)?;
                let m = Marginals {
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
        let finite = |what: &'static str, v: f64| -> Result<f64> {
            if v.is_finite() {
                Ok(v)
            } else {
                Err(Error::Numerical {
                    what,
                    message: format!(
                        "{v} (the targets are too large for double precision after squaring)"
                    ),
                })
            }
        };
        Ok(Evaluation {
            n: test.n(),
            rmse: Some(finite("RMSE", metrics::rmse(&p.mean, &test.y)?)?),
            mae: Some(finite("MAE", metrics::mae(&p.mean, &test.y)?)?),
            nlpd: Some(finite(
                "NLPD",
                metrics::nlpd(&p.mean, &p.noisy_var, &test.y)?,
            )?),
            coverage_95: Some(metrics::coverage(&p.mean, &p.noisy_var, &test.y, 0.95)?),
            epsilon: eps,
            gibbs_risk: gibbs,
            bayes_risk: bayes,
            ..Default::default()
        })
    }

    fn evaluate_classifier(&self, test: &Dataset) -> Result<Evaluation> {
        let g = self.gibbs_classifier(GibbsPredictor::Latent)?;
        let (p, m) = self.predict_classification(test.x.as_ref())?;
        let scores: Vec<f64> = m.mean.iter().map(|mu| mu + g.bias).collect();
        Ok(Evaluation {
            n: test.n(),
            error_rate: Some(metrics::error_rate(&scores, &test.y)?),
            log_loss: Some(metrics::log_loss(&p, &test.y)?),
            gibbs_risk: Some(GibbsLoss::Classification(g).empirical_risk(&test.y, &m)?),
            bayes_risk: Some(loss::bayes_error_classification(&test.y, &m, g.bias)?),
            ..Default::default()
        })
    }

    /// PAC-Bayes certificates on `sample`, which must be the training sample: of the ε-band
    /// Gibbs risk for regression (one per ε, with the closed-form LOO for exact GPs), of the
    /// Gibbs classification error for classifiers (docs/math.md §7.1); the penalty covers how θ
    /// was chosen and, for several ε, `ln k`.
    pub fn certify(
        &self,
        sample: &Dataset,
        opts: &CertifyOptions,
    ) -> Result<Vec<CertificateReport>> {
        self.check_training_sample(sample)?;
        let xs = self.standardised_inputs(sample.x.as_ref())?;
        let marginals = self.posterior.predict(xs.as_ref())?;
        let kl = self.posterior.kl_to_prior();
        let mut choices = self.choices();
        if let Task::Svm { config, .. } = &self.task {
            if config.bias {
                return Err(Error::Unsupported(
                    "an SVM with a bias fitted from the data has no certificate (the prior would depend on the data): refit without --bias true, which puts the bias into the prior kernel as a constant term".into(),
                ));
            }
        }
        if let Task::Classification {
            split_prior: Some(record),
            ..
        } = &self.task
        {
            return self.certify_split_classifier(record, sample, opts);
        }
        if self.is_classifier() {
            if !self.report.theta_on_grid {
                return Err(Error::Unsupported(
                    "this classifier's θ was chosen from the data off the PAC grid (by ML-II on part A of a split prior): its certificate is the one stored at fit time, on part B, and cannot be recomputed on the whole sample".into(),
                ));
            }
            if !opts.epsilons.is_empty() {
                return Err(Error::Unsupported(
                    "--epsilon applies to regression models; a classifier's certificate bounds its 0-1 error".into(),
                ));
            }
            let loss = GibbsLoss::Classification(self.gibbs_classifier(opts.predictor)?);
            let spec = CertificateSpec::new(opts.delta, opts.term, choices);
            let certificate = Certificate::from_marginals(kl, &marginals, &sample.y, &loss, &spec)?;
            let mut report = CertificateReport::new(certificate, None);
            if let Some(mode) = opts.loo {
                let loo = self.classifier_loo(xs.as_ref(), &sample.y, mode)?;
                report.loo_error = loo.approx.as_ref().map(|a| a.loo.rate);
                report.loo_estimator = loo.approx.as_ref().map(|a| a.estimator);
                report.loo_exact_error = loo.exact.as_ref().map(|e| e.rate);
            }
            return Ok(vec![report]);
        }
        if !self.report.theta_on_grid {
            return Err(Error::Unsupported(
                "this model's hyperparameters are not on the PAC grid (fitted with --no-snap), so no bound holds for it; refit without --no-snap".into(),
            ));
        }
        let epsilons = if opts.epsilons.is_empty() {
            vec![self.epsilon.ok_or_else(|| {
                Error::Unsupported("the ε-band loss needs --epsilon (in the target's units): this model was not trained with one".into())
            })?]
        } else {
            opts.epsilons.clone()
        };
        if let Task::Regression {
            split_prior: Some(record),
            ..
        } = &self.task
        {
            return self.certify_split_prior(record, sample, &xs, &epsilons, opts);
        }
        if let Task::Regression {
            sparse_split_prior: Some(record),
            ..
        } = &self.task
        {
            return self.certify_sparse_split_prior(record, sample, &xs, &epsilons, opts);
        }
        if epsilons.len() > 1 {
            choices.push(PenaltyTerm::candidates(epsilons.len(), "ε of the loss"));
        }
        let (noise, ys) = self.regression_parts()?;
        let y_std = ys.transform(&sample.y);
        let spec = CertificateSpec::new(opts.delta, opts.term, choices);
        // One LOO (a closed form, or N refits) serves every ε: only the band changes.
        let loo = match opts.loo {
            Some(mode) => {
                let model = self.regression_refit(xs.as_ref(), &y_std, noise)?;
                let eps0 = epsilons[0] / ys.sd;
                Some(crate::loo::regression_loo(
                    model.as_loo(xs.as_ref(), &y_std),
                    eps0,
                    mode,
                )?)
            }
            None => None,
        };
        epsilons
            .iter()
            .map(|&eps| {
                let loss = RegressionLoss::new_epsilon_band(eps)?.scaled(1.0 / ys.sd);
                let certificate = Certificate::from_marginals(
                    kl,
                    &marginals,
                    &y_std,
                    &GibbsLoss::Regression(loss),
                    &spec,
                )?;
                let mut report = CertificateReport::new(certificate, Some(eps));
                if let Some(loo) = &loo {
                    let n = y_std.len() as f64;
                    let band = loss.epsilon();
                    if let Some(a) = &loo.approx {
                        report.loo_error = Some(a.loo.band_error(&y_std, band));
                        report.loo_estimator = Some(LooEstimator::ClosedForm);
                        // Densities transform with the Jacobian 1/sd of the standardisation.
                        report.loo_log_predictive = Some(a.loo.log_predictive / n - ys.sd.ln());
                        report.loo_rmse = Some(a.loo.mse(&y_std).sqrt() * ys.sd);
                    }
                    report.loo_exact_error =
                        loo.exact.as_ref().map(|e| e.loo.band_error(&y_std, band));
                }
                Ok(report)
            })
            .collect()
    }
}

impl CertificateReport {
    /// A certificate with no LOO figures yet.
    pub fn new(certificate: Certificate, epsilon: Option<f64>) -> Self {
        Self {
            certificate,
            epsilon,
            loo_error: None,
            loo_estimator: None,
            loo_exact_error: None,
            loo_log_predictive: None,
            loo_rmse: None,
        }
    }
}

/// A regressor refitted on the certified sample at its stored parameters, for its LOO.
enum RegressionRefit {
    Exact(ExactGp),
    Sparse(SparseGp),
}

impl RegressionRefit {
    fn as_loo<'a>(&'a self, x: MatRef<'a, f64>, y: &'a [f64]) -> RegressionModel<'a> {
        match self {
            RegressionRefit::Exact(gp) => RegressionModel::Exact(gp),
            RegressionRefit::Sparse(gp) => RegressionModel::Sparse { gp, x, y },
        }
    }
}

impl FittedModel {
    /// The approximate-inference method this classifier was fitted with (the settings the
    /// model file keeps: IVM's active-set size and SOGP's memory are the posterior's basis
    /// size, SOGP visits the points in the model's seeded order).
    pub fn inference_method(&self) -> Result<InferenceMethod> {
        let m = self.posterior.n_basis();
        Ok(match self.method.as_str() {
            "laplace" => InferenceMethod::Laplace(Default::default()),
            "ep" => InferenceMethod::Ep(Default::default()),
            "mean-field" => {
                let Task::Classification { input_noise, .. } = &self.task else {
                    return Err(Error::Unsupported("mean field is a classifier".into()));
                };
                InferenceMethod::MeanField(MeanFieldConfig {
                    input_noise: *input_noise,
                    ..Default::default()
                })
            }
            "pac-gpc" => {
                return Err(Error::Unsupported(
                    "pac-gpc's posterior is trained by its bound, not by an inference method, so it has no leave-one-out estimate; certify it with --loo none".into(),
                ))
            }
            "ivm" => InferenceMethod::Ivm(IvmConfig::new(m)),
            "sogp" => InferenceMethod::Sogp {
                config: SogpConfig {
                    max_basis: m,
                    ..Default::default()
                },
                order: SweepOrder::Shuffled { seed: self.seed },
            },
            other => {
                return Err(Error::Unsupported(format!(
                    "no inference method named '{other}'"
                )))
            }
        })
    }

    /// Leave-one-out of a classifier on its (standardised) training sample: the method is
    /// refitted once at the stored kernel, in the sample's row order, then LOO'd.
    fn classifier_loo(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        mode: LooMode,
    ) -> Result<ClassifierLoo> {
        if let Task::Svm { config, .. } = &self.task {
            return self.svm_loo(x, y, config, mode);
        }
        let Task::Classification { likelihood, .. } = &self.task else {
            return Err(Error::Unsupported("not a classifier".into()));
        };
        let method = self.inference_method()?;
        let fit = method.fit(&self.posterior.kernel, likelihood, x, y)?;
        crate::loo::classifier_loo(&method, likelihood, x, y, &fit, mode)
    }

    /// Leave-one-out of an SVM: refitted once on the sample with its stored settings on the
    /// prior kernel, then linear response (seed 001 eqs. 17.26–17.32) and/or warm refits.
    fn svm_loo(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        config: &crate::svm::SvmConfig,
        mode: LooMode,
    ) -> Result<ClassifierLoo> {
        use crate::loo::ApproxLoo;
        let kernel = &self.posterior.kernel;
        let fit = crate::svm::svm(kernel, x, y, config)?;
        let approx = match mode {
            LooMode::Approx | LooMode::Both => Some(ApproxLoo {
                estimator: LooEstimator::LinearResponse,
                loo: crate::svm::loo::svm_loo(&fit, kernel, x, y)?,
            }),
            LooMode::Exact => None,
        };
        let exact = match mode {
            LooMode::Exact | LooMode::Both => {
                Some(crate::svm::loo::svm_exact_loo(kernel, x, y, config, &fit)?)
            }
            LooMode::Approx => None,
        };
        Ok(ClassifierLoo { approx, exact })
    }

    /// The regressor at its stored parameters on the sample (row order of the sample).
    fn regression_refit(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        noise: f64,
    ) -> Result<RegressionRefit> {
        let kernel = self.posterior.kernel.clone();
        Ok(match self.method.as_str() {
            "gpr" | "pac-gp" | "pac-gp-sqrt" => RegressionRefit::Exact(ExactGp::fit(
                kernel,
                noise,
                x.to_owned(),
                y.to_vec(),
                &Default::default(),
            )?),
            "vfe" | "fitc" | "dtc" | "pac-sgp" | "pac-sgp-sqrt" | "greedy-sparse" => {
                let method = match self.method.as_str() {
                    "vfe" => SparseMethod::Vfe,
                    // Zhang's greedy model is the DTC posterior on its chosen basis.
                    "dtc" | "greedy-sparse" => SparseMethod::Dtc,
                    // PAC-SGP certifies the FITC form of its posterior (α_s = 1).
                    _ => SparseMethod::Fitc,
                };
                RegressionRefit::Sparse(SparseGp {
                    kernel,
                    noise_variance: noise,
                    z: self.posterior.basis.clone(),
                    method,
                })
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "no regression method named '{other}'"
                )))
            }
        })
    }
}

/// The ε-band losses of `epsilons` (target units) on targets standardised by `y_sd`, each with
/// its ε, for [`certify_on_part_b`].
fn band_losses(epsilons: &[f64], y_sd: f64) -> Result<Vec<(GibbsLoss, Option<f64>)>> {
    epsilons
        .iter()
        .map(|&eps| {
            let loss = RegressionLoss::new_epsilon_band(eps)?.scaled(1.0 / y_sd);
            Ok((GibbsLoss::Regression(loss), Some(eps)))
        })
        .collect()
}

/// A split prior's certificates on part B, one per loss (regression: one per ε; classifiers:
/// the Gibbs 0-1 loss): Q's KL and marginals on B, the split's choices, plus `ln k` when k
/// losses are certified at once.
fn certify_on_part_b(
    kl: f64,
    marginals: &Marginals,
    y_b: &[f64],
    mut choices: Vec<PenaltyTerm>,
    losses: &[(GibbsLoss, Option<f64>)],
    opts: &CertifyOptions,
) -> Result<Vec<CertificateReport>> {
    if losses.len() > 1 {
        choices.push(PenaltyTerm::candidates(losses.len(), "ε of the loss"));
    }
    let spec = CertificateSpec::new(opts.delta, opts.term, choices);
    losses
        .iter()
        .map(|(loss, eps)| {
            let c = Certificate::from_marginals(kl, marginals, y_b, loss, &spec)?;
            Ok(CertificateReport::new(c, *eps))
        })
        .collect()
}
