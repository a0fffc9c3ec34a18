//! What a report on a fitted model shows (`pacgp report`, Python `pacgp.report`), gathered
//! from the library's own computations and nothing else: the certificates are
//! [`FittedModel::certify`]'s, the test metrics [`FittedModel::evaluate`]'s, the figures' points
//! `predict`'s (its labels, probabilities and 95% intervals, the ones `evaluate`'s coverage
//! counts), the risk–coverage curve [`crate::selective::risk_coverage`]'s and the reliability
//! bins [`metrics::reliability`]'s. Every number keeps the name of the predictor it is about.
//! Rendering (HTML, SVG) is the front ends' business; this is the typed content.

use serde::Serialize;

use super::{CertificateReport, CertifyOptions, Evaluation, FittedModel, Task};
use crate::data::{ColumnCoding, Dataset, Duplicates};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::metrics::{self, ReliabilityBin};
use crate::selective::{self, ConfidenceScore};

/// Reliability-diagram bins on [0, 1] (equal width).
pub const RELIABILITY_BINS: usize = 10;

/// The level of the regressors' predictive intervals in the predicted-vs-actual figure: the
/// central Gaussian interval whose coverage `evaluate` reports (`coverage_95`).
pub const INTERVAL_LEVEL: f64 = 0.95;

/// Everything a report on one model shows, computed by the library.
#[derive(Clone, Debug, Serialize)]
pub struct ModelReport {
    /// The method as users spell it (`gpr`, `laplace`, …).
    pub method: String,
    /// Regression, binary or multi-class classification.
    pub task: TaskKind,
    /// The training sample and how its cells were read.
    pub data: DataSummary,
    /// The model's hyperparameters.
    pub model: ModelSummary,
    /// The certificates on the training sample, as `certify` computes them (one per ε).
    pub certificates: Vec<CertificateReport>,
    /// Metrics and figures on a test file, when one is given.
    pub test: Option<TestReport>,
}

/// What the model predicts.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskKind {
    /// Real-valued targets.
    Regression,
    /// Two labels; `positive` is coded +1.
    BinaryClassification {
        /// The label coded −1.
        negative: String,
        /// The label coded +1.
        positive: String,
    },
    /// K ≥ 2 classes.
    MultiClass {
        /// The class labels, class 0 first.
        classes: Vec<String>,
    },
}

/// The training sample as the model saw it.
#[derive(Clone, Debug, Serialize)]
pub struct DataSummary {
    /// Rows of the certified sample.
    pub n: usize,
    /// The target column.
    pub target: String,
    /// One entry per model input: its name and the training mean and deviation it was
    /// standardised with.
    pub inputs: Vec<InputSummary>,
    /// How each table column became inputs (empty for model files written before codings
    /// were stored).
    pub columns: Vec<ColumnSummary>,
    /// The missing-value policy, as the command line spells it.
    pub missing: String,
    /// Rows of the sample that repeat an earlier row (the bound assumes independent rows).
    pub duplicates: Option<Duplicates>,
}

/// One model input.
#[derive(Clone, Debug, Serialize)]
pub struct InputSummary {
    /// Input name.
    pub name: String,
    /// Training mean (raw units).
    pub mean: f64,
    /// Training standard deviation (raw units).
    pub sd: f64,
}

/// One table column and its coding.
#[derive(Clone, Debug, Serialize)]
pub struct ColumnSummary {
    /// Column name.
    pub name: String,
    /// `number`, or the categories a categorical column was coded with.
    pub categories: Option<Vec<String>>,
}

/// The fitted model's hyperparameters.
#[derive(Clone, Debug, Serialize)]
pub struct ModelSummary {
    /// The kernel's hyperparameters, θ = ln(value), in the kernel's order. Empty for a
    /// multi-class model (each class has its own; the certificate covers them all).
    pub hyperparameters: Vec<Hyperparameter>,
    /// ARD lengthscales per input (standardised inputs), when the kernel has one ARD
    /// stationary part over every input; a short lengthscale is a relevant input.
    pub lengthscales: Option<Vec<Lengthscale>>,
    /// Regression noise variance on the standardised scale.
    pub noise_variance: Option<f64>,
    /// ε of the ε-band loss the model was fitted with (target units).
    pub epsilon: Option<f64>,
    /// δ of the fit.
    pub delta: f64,
    /// What the fit reported for a user (notes, optimiser status).
    pub notes: Vec<String>,
}

/// One kernel hyperparameter.
#[derive(Clone, Debug, Serialize)]
pub struct Hyperparameter {
    /// Its name in θ (`ln_signal_variance`, `ln_lengthscale[2]`, …).
    pub name: String,
    /// Its value in ln space, as stored.
    pub ln_value: f64,
}

/// One input's ARD lengthscale.
#[derive(Clone, Debug, Serialize)]
pub struct Lengthscale {
    /// The input's name.
    pub input: String,
    /// Its lengthscale on standardised inputs.
    pub lengthscale: f64,
}

/// A test file's metrics and figures.
#[derive(Clone, Debug, Serialize)]
pub struct TestReport {
    /// `evaluate`'s metrics.
    pub evaluation: Evaluation,
    /// Binary classifiers: predict's p(y = +1) against the observed frequency.
    pub reliability: Option<Vec<ReliabilityBin>>,
    /// Binary classifiers: predict's labels, the most confident first.
    pub risk_coverage: Option<RiskCoverage>,
    /// Regressors: each test row's target, predicted mean and 95% interval.
    pub regression: Option<Vec<RegressionPoint>>,
}

/// A risk–coverage curve of predict's labels.
#[derive(Clone, Debug, Serialize)]
pub struct RiskCoverage {
    /// How confidence is scored (`|μ + b| / σ`, or the SVM's `|f(x) + b|`).
    pub score: String,
    /// `(coverage, risk)` points, coverage increasing.
    pub curve: Vec<(f64, f64)>,
}

/// One test row of a regressor.
#[derive(Clone, Debug, Serialize)]
pub struct RegressionPoint {
    /// The target.
    pub actual: f64,
    /// Predict's mean.
    pub mean: f64,
    /// Lower end of the central 95% Gaussian predictive interval (noise included).
    pub lower: f64,
    /// Upper end of it.
    pub upper: f64,
}

impl FittedModel {
    /// The report's content: `sample` must be the training sample (the certificates are
    /// [`FittedModel::certify`]'s with `opts`), `test` a file with targets read for the model.
    pub fn report(
        &self,
        sample: &Dataset,
        test: Option<&Dataset>,
        opts: &CertifyOptions,
    ) -> Result<ModelReport> {
        let certificates = self.certify(sample, opts)?;
        let test = test.map(|t| self.test_report(t)).transpose()?;
        Ok(ModelReport {
            method: self.method().to_string(),
            task: self.task_kind(),
            data: self.data_summary(sample, certificates.first()),
            model: self.model_summary(),
            certificates,
            test,
        })
    }

    fn task_kind(&self) -> TaskKind {
        if let Some(classes) = self.classes() {
            return TaskKind::MultiClass {
                classes: classes.labels.clone(),
            };
        }
        match self.task.labels() {
            Some(l) => TaskKind::BinaryClassification {
                negative: l.negative.clone(),
                positive: l.positive.clone(),
            },
            None => TaskKind::Regression,
        }
    }

    fn data_summary(&self, sample: &Dataset, first: Option<&CertificateReport>) -> DataSummary {
        let inputs = self
            .feature_names
            .iter()
            .enumerate()
            .map(|(j, name)| InputSummary {
                name: name.clone(),
                mean: self.x_scaler.mean[j],
                sd: self.x_scaler.sd[j],
            })
            .collect();
        let columns = self
            .input_coding
            .columns
            .iter()
            .map(|c| ColumnSummary {
                name: c.name().to_string(),
                categories: match c {
                    ColumnCoding::Number { .. } => None,
                    ColumnCoding::Category { levels, .. } => Some(levels.clone()),
                },
            })
            .collect();
        let missing = serde_json::to_value(self.input_coding.missing)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        DataSummary {
            n: sample.n(),
            target: self.target_name.clone(),
            inputs,
            columns,
            missing,
            duplicates: first.and_then(|c| c.duplicates),
        }
    }

    fn model_summary(&self) -> ModelSummary {
        // A multi-class model has K kernels (one-vs-rest) or a coupled posterior: none shown.
        let kernel = self.task.gaussian_posterior().map(|p| p.kernel());
        let hyperparameters = kernel.map_or_else(Vec::new, |kernel| {
            kernel
                .param_names()
                .into_iter()
                .zip(kernel.params())
                .map(|(name, ln_value)| Hyperparameter { name, ln_value })
                .collect()
        });
        let lengthscales = kernel
            .and_then(|kernel| ard_lengthscales(kernel, self.feature_names.len()))
            .map(|ls| {
                self.feature_names
                    .iter()
                    .zip(ls)
                    .map(|(input, lengthscale)| Lengthscale {
                        input: input.clone(),
                        lengthscale,
                    })
                    .collect()
            });
        let noise_variance = match &self.task {
            Task::Regression { noise_variance, .. } => Some(*noise_variance),
            _ => None,
        };
        let mut notes = self.report.notes.clone();
        if let Some(o) = &self.report.optimiser {
            notes.push(format!(
                "optimiser: {:?} after {} iterations ({})",
                o.termination, o.iterations, o.message
            ));
        }
        ModelSummary {
            hyperparameters,
            lengthscales,
            noise_variance,
            epsilon: self.spec.epsilon(),
            delta: self.spec.delta,
            notes,
        }
    }

    /// Metrics and figures on `test`: `evaluate`'s metrics; for a binary classifier the
    /// reliability bins of predict's probability and the risk–coverage curve of its labels;
    /// for a regressor the targets against predict's means and 95% intervals.
    fn test_report(&self, test: &Dataset) -> Result<TestReport> {
        let evaluation = self.evaluate(test, None)?;
        let mut report = TestReport {
            evaluation,
            reliability: None,
            risk_coverage: None,
            regression: None,
        };
        if self.classes().is_some() {
            return Ok(report);
        }
        if self.is_classifier() {
            let (p, m) = self.predict_classification(test.x.as_ref())?;
            let labels = self.labels_of(&m)?;
            let (score, confidence) = match &self.task {
                Task::Classification { likelihood, .. } => (
                    "|μ + b| / σ".to_string(),
                    selective::confidence(&m, likelihood, ConfidenceScore::MeanOverStd),
                ),
                Task::Svm { mu, bias, .. } => (
                    "|f(x) + b| (the SVM's decision)".to_string(),
                    m.mean.iter().map(|v| (v / mu + bias).abs()).collect(),
                ),
                _ => {
                    return Err(Error::Unsupported(format!(
                        "'{}' is not a binary classifier with a risk–coverage score",
                        self.method()
                    )))
                }
            };
            report.reliability = Some(metrics::reliability(&p, &test.y, RELIABILITY_BINS)?);
            report.risk_coverage = Some(RiskCoverage {
                score,
                curve: selective::risk_coverage(&test.y, &labels, &confidence)?,
            });
            return Ok(report);
        }
        let p = self.predict_regression(test.x.as_ref())?;
        let z = metrics::normal_quantile(0.5 + INTERVAL_LEVEL / 2.0);
        report.regression = Some(
            test.y
                .iter()
                .zip(&p.mean)
                .zip(&p.noisy_var)
                .map(|((&actual, &mean), &v)| RegressionPoint {
                    actual,
                    mean,
                    lower: mean - z * v.sqrt(),
                    upper: mean + z * v.sqrt(),
                })
                .collect(),
        );
        Ok(report)
    }
}

/// The lengthscales of the kernel's one ARD stationary part over `d` inputs (`None` when it
/// has none, or more than one, or an isotropic one).
fn ard_lengthscales(kernel: &Kernel, d: usize) -> Option<Vec<f64>> {
    let mut found = Vec::new();
    collect_ard(kernel, d, &mut found);
    match found.as_slice() {
        [one] => Some(one.iter().map(|l| l.exp()).collect()),
        _ => None,
    }
}

fn collect_ard<'a>(kernel: &'a Kernel, d: usize, out: &mut Vec<&'a [f64]>) {
    match kernel {
        Kernel::Stationary { ln_lengthscale, .. } if d > 1 && ln_lengthscale.len() == d => {
            out.push(ln_lengthscale)
        }
        Kernel::Scale { inner, .. } => collect_ard(inner, d, out),
        Kernel::Sum { left, right } | Kernel::Product { left, right } => {
            collect_ard(left, d, out);
            collect_ard(right, d, out);
        }
        _ => {}
    }
}
