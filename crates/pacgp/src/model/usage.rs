//! Using a fitted model on a test set: its metrics, and what a classifier's Gibbs classifier
//! and a regressor's noise and scaler are. Certificates are in `model/certify.rs`,
//! predictions in `model/predict.rs`.

use faer::MatRef;

use super::{Evaluation, FittedModel, Task};
use crate::certificate::{GibbsClassifier, GibbsLoss, GibbsPredictor};
use crate::data::{Dataset, TargetScaler};
use crate::error::{Error, Result};
use crate::inference::InferenceMethod;
use crate::loss::{self, RegressionLoss};
use crate::metrics;
use crate::posterior::Marginals;

impl FittedModel {
    pub(super) fn standardised_inputs(&self, x: MatRef<'_, f64>) -> Result<faer::Mat<f64>> {
        crate::data::check_finite(x, "inputs")?;
        self.x_scaler.transform(x)
    }

    pub(super) fn regression_parts(&self) -> Result<(f64, TargetScaler)> {
        match &self.task {
            Task::Regression {
                noise_variance,
                y_scaler,
                ..
            } => Ok((*noise_variance, *y_scaler)),
            Task::MultiOutput { .. } => Err(Error::Unsupported(format!(
                "this {} model has {} outputs: each output's regressor predicts it (predict_outputs)",
                self.method(),
                self.target_names().len()
            ))),
            Task::Classification { .. }
            | Task::Svm { .. }
            | Task::OneVsRest { .. }
            | Task::Softmax { .. } => Err(Error::Unsupported(format!(
                "'{}' is a classifier, not a regression model",
                self.method()
            ))),
        }
    }

    /// Whether the model is a classifier (binary or multi-class).
    pub fn is_classifier(&self) -> bool {
        matches!(
            self.task,
            Task::Classification { .. }
                | Task::Svm { .. }
                | Task::OneVsRest { .. }
                | Task::Softmax { .. }
        )
    }

    /// The Gibbs classifier of a classification model.
    pub(super) fn gibbs_classifier(&self, predictor: GibbsPredictor) -> Result<GibbsClassifier> {
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
            Task::Regression { .. } | Task::MultiOutput { .. } => Err(Error::Unsupported(format!(
                "'{}' is a regression model, not a classifier",
                self.method()
            ))),
            Task::OneVsRest { .. } | Task::Softmax { .. } => Err(Error::Unsupported(format!(
                "'{}' is a multi-class model: its Gibbs classifier is argmax over its classes",
                self.method()
            ))),
        }
    }

    /// Test metrics; for regression the Gibbs and Bayes risks when an ε is given or stored,
    /// for classifiers the Gibbs error of the latent classifier.
    pub fn evaluate(&self, test: &Dataset, epsilon: Option<f64>) -> Result<Evaluation> {
        match &self.task {
            Task::OneVsRest { .. } | Task::Softmax { .. } => self.evaluate_multiclass(test),
            Task::Classification { .. } | Task::Svm { .. } => self.evaluate_classifier(test),
            Task::Regression { .. } => self.evaluate_regression(test, epsilon),
            Task::MultiOutput { .. } => Err(Error::Unsupported(format!(
                "this {} model has the outputs {:?}: it is evaluated on all of them (evaluate_outputs)",
                self.method(),
                self.target_names()
            ))),
        }
    }

    /// A regressor's RMSE, MAE, NLPD and 95% coverage, and its ε-band Gibbs and Bayes risks.
    fn evaluate_regression(&self, test: &Dataset, epsilon: Option<f64>) -> Result<Evaluation> {
        let p = self.predict_regression(test.x.as_ref())?;
        let eps = epsilon.or(self.spec.epsilon());
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
                        "{v:.4e} (the targets are too large for double precision after squaring)"
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
}

impl FittedModel {
    /// The approximate-inference method this classifier was fitted with (its spec's).
    pub fn inference_method(&self) -> Result<InferenceMethod> {
        match &self.spec.method {
            crate::spec::Method::Classifier(c) => {
                Ok(crate::plan::inference_method(&c.inference, self.spec.seed)?.0)
            }
            crate::spec::Method::PacGpc(_) => Err(Error::NoLeaveOneOut {
                model: "pac-gpc",
                why: " (its posterior is trained by its bound, not by an inference method)",
            }),
            _ => Err(Error::Unsupported(format!(
                "{} is not a GP classifier with an inference method",
                self.method()
            ))),
        }
    }
}
