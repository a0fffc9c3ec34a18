//! What a report on a fitted model shows (`pacgp report`, Python `pacgp.report`), gathered
//! from the library's own computations and nothing else: the certificates are
//! [`FittedModel::certify`]'s, the test metrics [`FittedModel::evaluate`]'s, the figures' points
//! `predict`'s (its labels, probabilities and 95% intervals, the ones `evaluate`'s coverage
//! counts), the risk–coverage curve [`crate::selective::risk_coverage`]'s, the reliability
//! bins [`metrics::reliability`]'s (binary: of p(y = +1); multi-class: of the top label's
//! probability) and a multi-class model's confusion matrix of predict's classes, whose
//! off-diagonal share is `evaluate`'s error rate. Every number keeps the name of the predictor
//! it is about.
//! Rendering (HTML, SVG) is the front ends' business; this is the typed content.

use serde::Serialize;

use super::multiclass::ClassPrediction;
use super::outputs::JointCertificate;
use super::{CertificateReport, CertifyOptions, Evaluation, FittedModel, Task};
use crate::data::{ColumnCoding, Dataset, Duplicates, Outputs};
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

/// Everything a report on a multi-output model shows: each output's report (as a
/// single-target model's, its certificates at δ) and all outputs certified at once.
#[derive(Clone, Debug, Serialize)]
pub struct OutputsReport {
    /// Each output's report, in the model's order.
    pub outputs: Vec<ModelReport>,
    /// Every output's certificates at δ/K (a union bound), with the mean of their bounds.
    pub joint: JointCertificate,
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
    /// ARD lengthscales per input (standardised inputs), or per group of inputs (one per
    /// table column for `se-groups(…)`), when the kernel has one such stationary part over
    /// every input; a short lengthscale is a relevant input.
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

/// One input's ARD lengthscale, or one group's.
#[derive(Clone, Debug, Serialize)]
pub struct Lengthscale {
    /// The input's name; for a group, the table column its inputs code (or, for a group that
    /// is no one column, its first and last inputs' names).
    pub input: String,
    /// How many model inputs share the lengthscale (1 unless grouped).
    pub inputs: usize,
    /// Its lengthscale on standardised inputs.
    pub lengthscale: f64,
}

/// A test file's metrics and figures.
#[derive(Clone, Debug, Serialize)]
pub struct TestReport {
    /// `evaluate`'s metrics.
    pub evaluation: Evaluation,
    /// Classifiers' reliability bins. Binary: predict's p(y = +1) against the observed
    /// frequency of +1. Multi-class (top-label): predict's largest class probability against
    /// the share of rows whose predicted class is right.
    pub reliability: Option<Vec<ReliabilityBin>>,
    /// Binary classifiers: predict's labels, the most confident first.
    pub risk_coverage: Option<RiskCoverage>,
    /// Regressors: each test row's target, predicted mean and 95% interval.
    pub regression: Option<Vec<RegressionPoint>>,
    /// Multi-class models: test rows counted by true class and predict's class.
    pub confusion: Option<ConfusionMatrix>,
}

/// Test rows counted by true class (rows) and predicted class (columns).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfusionMatrix {
    /// The class labels as in the data, class 0 first: the order of rows and columns.
    pub classes: Vec<String>,
    /// `counts[i][j]`: test rows of class i that predict labels j.
    pub counts: Vec<Vec<usize>>,
}

impl ConfusionMatrix {
    /// The matrix of `predicted` against `actual` (class indices, `actual` as the data holds
    /// them); an index outside the classes is an error.
    pub fn new(classes: &[String], actual: &[f64], predicted: &[usize]) -> Result<Self> {
        let k = classes.len();
        crate::multiclass::check_labels(actual, k)?;
        if actual.len() != predicted.len() {
            return Err(Error::ShapeMismatch {
                what: "predicted classes",
                expected: format!("{} rows", actual.len()),
                found: format!("{}", predicted.len()),
            });
        }
        let mut counts = vec![vec![0; k]; k];
        for (&y, &p) in actual.iter().zip(predicted) {
            if p >= k {
                return Err(Error::InvalidParameter {
                    name: "predicted class",
                    value: p as f64,
                    reason: "must be a class index 0, 1, …, K − 1",
                });
            }
            counts[y as usize][p] += 1;
        }
        Ok(Self {
            classes: classes.to_vec(),
            counts,
        })
    }

    /// Rows whose predicted class is not their class (off the diagonal).
    pub fn errors(&self) -> usize {
        let all: usize = self.counts.iter().flatten().sum();
        all - (0..self.counts.len())
            .map(|i| self.counts[i][i])
            .sum::<usize>()
    }
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
        self.report_on(sample, test, self.certify(sample, opts)?)
    }

    /// The report's content on a multi-output model ([`super::Task::MultiOutput`]): each
    /// output's report, its certificates at δ as [`FittedModel::certify_outputs`] gives them,
    /// and the joint certificate of all outputs at once; `test` a file with every target.
    pub fn report_outputs(
        &self,
        sample: &Outputs,
        test: Option<&Outputs>,
        opts: &CertifyOptions,
    ) -> Result<OutputsReport> {
        let tests = test
            .map(|t| self.matched_outputs(t).map(|_| t.samples()))
            .transpose()?;
        let certified = self.certify_outputs(sample, opts)?;
        let outputs = (self.output_members()?.iter())
            .zip(sample.samples())
            .zip(certified.outputs)
            .enumerate()
            .map(|(j, ((m, s), own))| m.report_on(s, tests.map(|t| &t[j]), own.certificates))
            .collect::<Result<_>>()?;
        Ok(OutputsReport {
            outputs,
            joint: certified.joint,
        })
    }

    /// The report on `sample` with its `certificates` (computed for this model on it).
    fn report_on(
        &self,
        sample: &Dataset,
        test: Option<&Dataset>,
        certificates: Vec<CertificateReport>,
    ) -> Result<ModelReport> {
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
            .map(|(ls, sizes)| self.lengthscales_by_name(&ls, &sizes));
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

    /// Each lengthscale named by what it covers: its input, or, for a group of inputs, the
    /// table column they code (its first and last inputs when the group is no one column).
    fn lengthscales_by_name(&self, lengthscales: &[f64], sizes: &[usize]) -> Vec<Lengthscale> {
        let columns = &self.input_coding.columns;
        let by_column =
            columns.len() == sizes.len() && columns.iter().zip(sizes).all(|(c, &n)| c.width() == n);
        let mut start = 0;
        let mut out = Vec::with_capacity(lengthscales.len());
        for (j, (&lengthscale, &n)) in lengthscales.iter().zip(sizes).enumerate() {
            let names = &self.feature_names[start..start + n];
            let input = match names {
                _ if by_column => columns[j].name().to_string(),
                [one] => one.clone(),
                [first, .., last] => format!("{first} … {last}"),
                [] => String::new(),
            };
            out.push(Lengthscale {
                input,
                inputs: n,
                lengthscale,
            });
            start += n;
        }
        out
    }

    /// Metrics and figures on `test`: `evaluate`'s metrics; for a multi-class model the
    /// top-label reliability bins and the confusion matrix of predict's classes; for a binary
    /// classifier the reliability bins of predict's probability and the risk–coverage curve of
    /// its labels; for a regressor the targets against predict's means and 95% intervals.
    fn test_report(&self, test: &Dataset) -> Result<TestReport> {
        let evaluation = self.evaluate(test, None)?;
        let mut report = TestReport {
            evaluation,
            reliability: None,
            risk_coverage: None,
            regression: None,
            confusion: None,
        };
        if let Some(classes) = self.classes() {
            let p = self.predict_classes(test.x.as_ref())?;
            let (confidence, correct) = top_label(&p, &test.y);
            report.reliability = Some(metrics::reliability(
                &confidence,
                &correct,
                RELIABILITY_BINS,
            )?);
            report.confusion = Some(ConfusionMatrix::new(&classes.labels, &test.y, &p.labels)?);
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

/// Top-label calibration data from predict's classes: each row's largest class probability
/// (capped at 1 against rounding) and ±1 for whether its predicted class is `y`'s.
fn top_label(p: &ClassPrediction, y: &[f64]) -> (Vec<f64>, Vec<f64>) {
    p.labels
        .iter()
        .zip(y)
        .enumerate()
        .map(|(i, (&label, &truth))| {
            let right = if label as f64 == truth { 1.0 } else { -1.0 };
            (p.probabilities[(i, label)].min(1.0), right)
        })
        .unzip()
}

/// The lengthscales of the kernel's one ARD stationary part over `d` inputs, one per input
/// or per group of inputs, with the group sizes (`None` when it has none, or more than one, or
/// an isotropic one).
fn ard_lengthscales(kernel: &Kernel, d: usize) -> Option<(Vec<f64>, Vec<usize>)> {
    let mut found = Vec::new();
    collect_ard(kernel, d, &mut found);
    match found.as_slice() {
        [(ln_l, sizes)] => Some((ln_l.iter().map(|l| l.exp()).collect(), sizes.clone())),
        _ => None,
    }
}

/// Every stationary part of `kernel` with more than one lengthscale covering the `d` inputs:
/// its ln lengthscales and how many inputs each covers.
fn collect_ard<'a>(kernel: &'a Kernel, d: usize, out: &mut Vec<(&'a [f64], Vec<usize>)>) {
    match kernel {
        Kernel::Stationary {
            ln_lengthscale,
            groups,
            ..
        } if ln_lengthscale.len() > 1 => {
            let sizes = groups
                .clone()
                .unwrap_or_else(|| vec![1; ln_lengthscale.len()]);
            if sizes.len() == ln_lengthscale.len() && sizes.iter().sum::<usize>() == d {
                out.push((ln_lengthscale, sizes));
            }
        }
        Kernel::Scale { inner, .. } => collect_ard(inner, d, out),
        Kernel::Sum { left, right } | Kernel::Product { left, right } => {
            collect_ard(left, d, out);
            collect_ard(right, d, out);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Profile;

    #[test]
    fn confusion_matrix_counts_rows_by_true_and_predicted_class() {
        let classes = ["a".to_string(), "b".into(), "c".into()];
        let actual = [0.0, 0.0, 1.0, 2.0, 2.0, 2.0];
        let predicted = [0, 1, 1, 2, 0, 2];
        let m = ConfusionMatrix::new(&classes, &actual, &predicted).unwrap();
        // Counted by hand: a→a, a→b; b→b; c→c, c→a, c→c.
        assert_eq!(m.counts, vec![vec![1, 1, 0], vec![0, 1, 0], vec![1, 0, 2]]);
        assert_eq!(m.errors(), 2);
        for (y, p) in [
            (vec![3.0], vec![0]),
            (vec![0.0], vec![3]),
            (vec![0.5], vec![0]),
        ] {
            let e = ConfusionMatrix::new(&classes, &y, &p).unwrap_err();
            assert!(matches!(e, Error::InvalidParameter { .. }), "{e}");
        }
        let e = ConfusionMatrix::new(&classes, &[0.0, 1.0], &[0]).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    }

    #[test]
    fn grouped_lengthscales_are_one_per_group_over_every_input() {
        let grouped = |groups: Option<Vec<usize>>, ln: Vec<f64>| Kernel::Scale {
            ln_variance: 0.0,
            inner: Box::new(Kernel::Stationary {
                profile: Profile::SquaredExponential,
                ln_lengthscale: ln,
                groups,
            }),
        };
        let k = grouped(Some(vec![1, 3]), vec![0.0, 2.0f64.ln()]);
        assert_eq!(ard_lengthscales(&k, 4), Some((vec![1.0, 2.0], vec![1, 3])));
        // Groups that do not cover the inputs, and one lengthscale for all: no chart.
        assert_eq!(ard_lengthscales(&k, 5), None);
        assert_eq!(ard_lengthscales(&grouped(None, vec![0.0]), 4), None);
        let ard = grouped(None, vec![0.0; 3]);
        assert_eq!(ard_lengthscales(&ard, 3), Some((vec![1.0; 3], vec![1; 3])));
    }
}
