//! A fitted model as one serialisable value: the shared posterior plus everything needed to
//! use it on raw data (standardisation, label map, noise, the loss's ε). Model files are JSON,
//! validated on load, and reload to identical predictions.
//!
//! - this file: the file format and its validation;
//! - [`usage`]: prediction, evaluation and certification of a fitted model;
//! - [`price`]: what a fit chose from the data and its price, re-derived from the stored spec;
//! - [`split_classifier`]: the classifier split prior's record;
//! - [`holdout`]: the held-out part of a fit and the test-set bound on the deployed predictor;
//! - `deployed`: the derandomised certificate on the deployed predictor, beside the Gibbs one;
//! - [`report`]: the content of a report on a model (certificates, LOO, test figures), gathered;
//! - [`sets`]: a classifier's conformal prediction sets (`fit --intervals` on a classifier);
//! - [`multiclass`]: prediction, evaluation, certificate and prices of the multi-class models;
//! - [`from_parameters`]: a sparse model assembled from parameters fitted elsewhere (Dask);
//! - [`evidence`]: an exact GP regressor's log marginal likelihood at any hyperparameters;
//! - `joint`: a regressor's joint predictive covariance and draws from it;
//! - [`svm_dual`]: an SVM's decision function and dual in scikit-learn's terms.
//!
//! The fitting pipelines that make models are in [`crate::fit`].

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::certificate::Certificate;
use crate::data::{ClassLabels, Dataset, LabelMap, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::inference::ConvergenceReport;
use crate::likelihood::Likelihood;
use crate::optim::OptimReport;
use crate::posterior::GaussianPosterior;
use crate::spec::CheckedFitSpec;

mod deployed;
pub mod evidence;
pub mod from_parameters;
pub mod holdout;
pub mod intervals;
mod joint;
pub mod multiclass;
mod predict;
pub mod price;
pub mod report;
pub mod sets;
pub mod shards;
pub mod softmax;
mod split;
pub mod split_classifier;
pub mod svm_dual;
pub mod usage;

pub use crate::certificate::deployed::{DeployedBound, DeployedCertificate, DeployedPredictor};
pub use crate::certificate::GibbsPredictor;
pub use evidence::LogEvidence;
pub use from_parameters::{sparse_model_from_parts, SparseModelParts};
pub use holdout::{HoldoutParts, HoldoutRecord};
pub use intervals::{FoldModel, IntervalRecord, StandardisedSample};
pub use multiclass::ClassPrediction;
pub use sets::SetRecord;
pub use svm_dual::SvmDual;
pub use usage::CertifyOptions;

/// Model-file format tag; bumped on incompatible changes.
pub const FORMAT: &str = "pacgp-model/2";

/// The format before the fit spec: files of it stored the certificate's prices, which
/// `certify` no longer reads, so they are refused with a request to refit.
const FORMAT_1: &str = "pacgp-model/1";

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
        /// The data-dependent split prior's record (`prior split:F`): what `certify` needs to
        /// rebuild P_A and Q on part B.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        split_prior: Option<crate::objective::gp_split::SplitRecord>,
        /// The sparse split prior's record (pac-sgp with `prior split:F`): the split, P_A (VFE
        /// on A) and Q's parameters, for `certify` on part B.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sparse_split_prior: Option<Box<crate::objective::sgp_split::SparseSplitRecord>>,
        /// What the spec's prediction intervals need at prediction time (`fit --intervals`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intervals: Option<Box<IntervalRecord>>,
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
        /// The classifier split prior's record (laplace, pac-gpc with `prior split:F`): what
        /// `certify` needs to reproduce the certificate on part B.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        split_prior: Option<Box<split_classifier::ClassifierSplitRecord>>,
    },
    /// A support vector machine read as a GP's MAP (seed 001 §17.4): the posterior is the
    /// prior GP shifted to mean `μ·f_SVM`; its sign is the SVM's decision.
    Svm {
        /// The two labels as they appear in the data (−1, +1).
        labels: LabelMap,
        /// The scale μ of the certified posterior mean (`f_SVM = mean/μ`).
        mu: f64,
        /// The solver settings the SVM was trained with (bias-free on the prior kernel for a
        /// certified SVM).
        config: crate::svm::SvmConfig,
        /// A bias fitted from the data (the spec's `bias`): the decision is `mean/μ + bias`, and
        /// no certificate holds (the prior would depend on the data). 0 for a certified SVM.
        #[serde(default)]
        bias: f64,
    },
    /// K ≥ 2 classes by one binary model per class, class k against the rest (the spec's
    /// binary method). [`FittedModel::posterior`] is a copy of the first class's, kept so
    /// every model has one; the certificate uses all K.
    OneVsRest {
        /// The K labels as they appear in the data, class 0 first.
        classes: ClassLabels,
        /// Class k's binary model, fitted on the sample relabelled +1 for k and −1 for the
        /// rest (its own spec, digest and labels are checked against the outer model's).
        members: Vec<FittedModel>,
    },
    /// K ≥ 2 classes by the softmax Laplace approximation (one shared kernel; the posterior
    /// couples the classes). [`FittedModel::posterior`] holds the shared prior (zero weights,
    /// no sites) over one latent function, so every model has one; the posterior is here.
    Softmax {
        /// The K labels as they appear in the data, class 0 first.
        classes: ClassLabels,
        /// The softmax Laplace posterior over the K latent functions.
        posterior: Box<crate::inference::softmax::SoftmaxPosterior>,
        /// The seed of the certificate's sampled risk, derived from the training sample
        /// ([`softmax::softmax_sampling_seed`]) so that no one chooses it; `certify` refuses a
        /// file whose record is not the sample's. Absent in files written before it existed
        /// (their certificate is drawn with the derived seed too).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sampling_seed: Option<u64>,
    },
}

impl Task {
    /// The label map of a binary classifier (GP classifier or SVM).
    pub fn labels(&self) -> Option<&LabelMap> {
        match self {
            Task::Classification { labels, .. } | Task::Svm { labels, .. } => Some(labels),
            Task::Regression { .. } | Task::OneVsRest { .. } | Task::Softmax { .. } => None,
        }
    }

    /// The K class labels of a multi-class model.
    pub fn classes(&self) -> Option<&ClassLabels> {
        match self {
            Task::OneVsRest { classes, .. } | Task::Softmax { classes, .. } => Some(classes),
            _ => None,
        }
    }
}

/// A fitted model, ready to predict on raw inputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FittedModel {
    /// [`FORMAT`].
    pub format: String,
    /// What the fit was: the method, its options, δ and the seed (checked again on load).
    /// `certify` re-derives every price of the certificate from it.
    pub spec: CheckedFitSpec,
    /// How the training table's cells became the inputs (categories, missing values, yes/no,
    /// header): files the model is applied to are read the same way.
    #[serde(default)]
    pub input_coding: crate::data::InputCoding,
    /// Input column names, in order.
    pub feature_names: Vec<String>,
    /// Target column name.
    pub target_name: String,
    /// Training size.
    pub n_train: usize,
    /// Digest of the training sample ([`crate::data::sample_digest`]): a certificate holds only on it
    /// (`None` for a model assembled from sharded sums, which never held the whole sample).
    pub training_digest: Option<String>,
    /// The held-out part of the sample (`fit --certify-holdout F`): the sample `fit` was given
    /// is the fit rows ([`FittedModel::n_train`], [`FittedModel::training_digest`]) plus these;
    /// `certify` takes the whole sample and re-derives both parts. `None`: no holdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout: Option<HoldoutRecord>,
    /// The rows of the sample `fit` was given (with a holdout, the whole sample) that repeat an
    /// earlier row ([`crate::data::Duplicates`]): reported, never priced — the certificate and
    /// the intervals assume independent rows. `None` in files written before it was counted
    /// and for models that never held the whole sample (sharded sums).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<crate::data::Duplicates>,
    /// Input standardisation (training statistics).
    pub x_scaler: Standardizer,
    /// The posterior over the latent function (on standardised inputs and targets).
    pub posterior: GaussianPosterior,
    /// Task-specific parts.
    pub task: Task,
    /// What a classifier's conformal prediction sets need at prediction time (`fit
    /// --intervals split-conformal:F` on a classifier; `None`: no sets, and every file
    /// written before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sets: Option<Box<SetRecord>>,
    /// How the fit went (optimiser report, jitter, notes): diagnostics only, never priced.
    pub report: FitReport,
    /// An SVM's dual solution as the fit found it, kept in memory only (never written):
    /// `certify` takes its leave-one-out from it when the sample, kernel and settings are the
    /// ones it was found for, row order included, instead of solving the same dual again. A
    /// model read from a file solves it again, to the same bits.
    #[serde(skip)]
    pub(crate) svm_solution: Option<std::sync::Arc<crate::svm::solution::SvmSolution>>,
}

/// What happened during fitting, as data (nothing here enters a certificate).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitReport {
    /// Optimiser report (parameters in ln space: kernel θ then ln σ²).
    pub optimiser: Option<OptimReport>,
    /// Objective value at the returned parameters (e.g. log marginal likelihood).
    pub objective: Option<f64>,
    /// Name of that objective.
    pub objective_name: String,
    /// Jitter added to the final factorisation.
    pub jitter_used: f64,
    /// Convergence report of approximate inference (classifiers).
    #[serde(default)]
    pub inference: Option<ConvergenceReport>,
    /// What the fit decided that a user should know (a basis size capped at N, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Set when a time limit or an interrupt stopped the optimisers before their convergence
    /// tests ([`crate::optim::stop`]): the model holds the best parameters reached and its
    /// posterior and certificate are exact for them. `None`: the fit ran to its end (and every
    /// file written before the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<crate::optim::StoppedEarly>,
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
    /// The PAC-Bayes certificate.
    #[serde(flatten)]
    pub certificate: Certificate,
    /// ε (target units; regression only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// Approximate leave-one-out error: the ε-band error of the LOO mean (regression: closed
    /// form, exact at fixed parameters) or the LOO 0-1 error (classifiers: cavities, linear
    /// response, or refits where the model has no approximation).
    pub loo_error: Option<f64>,
    /// How `loo_error` was computed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub loo_estimator: Option<crate::loo::LooEstimator>,
    /// Exact leave-one-out error from N refits at the stored hyperparameters (`--loo exact|both`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub loo_exact_error: Option<f64>,
    /// Mean leave-one-out log predictive density (target units).
    pub loo_log_predictive: Option<f64>,
    /// Leave-one-out RMSE (target units).
    pub loo_rmse: Option<f64>,
    /// The test-set bound on the deployed predictor from the held-out rows (models fitted
    /// with a holdout; the PAC-Bayes certificate above is then at δ/2).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub deployed: Option<DeployedCertificate>,
    /// The rows of the certified sample that repeat an earlier row, counted again from it:
    /// the bound assumes independent rows, which copies break (nothing can price them).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub duplicates: Option<crate::data::Duplicates>,
    /// Classifiers: the training sample's error rate of always predicting its most frequent
    /// class ([`crate::metrics::majority_rate`]). A bound not below it says the model is no
    /// better than that on new data, as far as the certificate can tell.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub majority_rate: Option<f64>,
    /// The model's fit was stopped early ([`FitReport::stopped_early`]): the certificate is
    /// exact for the parameters the model holds, which are not the optimum.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stopped_early: Option<crate::optim::StoppedEarly>,
}

impl CertificateReport {
    /// Whether the bound is below the majority-class rate (`None` for regression).
    pub fn beats_majority(&self) -> Option<bool> {
        self.majority_rate.map(|m| self.certificate.bound < m)
    }
}

impl FittedModel {
    /// A model of `spec` fitted on `train`: the format tag, the sample's names, size and digest
    /// around the fitted parts.
    pub fn assemble(
        spec: &CheckedFitSpec,
        train: &Dataset,
        x_scaler: Standardizer,
        posterior: GaussianPosterior,
        task: Task,
        report: FitReport,
    ) -> Self {
        Self {
            format: FORMAT.into(),
            spec: spec.clone(),
            input_coding: Default::default(),
            feature_names: train.feature_names.clone(),
            target_name: train.target_name.clone(),
            n_train: train.n(),
            training_digest: Some(crate::data::sample_digest(train)),
            holdout: None,
            duplicates: None,
            x_scaler,
            posterior,
            task,
            sets: None,
            report,
            svm_solution: None,
        }
    }

    /// The method's name as users spell it.
    pub fn method(&self) -> crate::spec::MethodName {
        self.spec.method_name()
    }

    /// Write the model as JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string(self).map_err(|e| Error::ModelFile {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        std::fs::write(path, text).map_err(|source| Error::Write {
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
        Self::from_json(&text, &path.display().to_string())
    }

    /// Parse and validate a model file's text; `name` names it in errors.
    pub fn from_json(text: &str, name: &str) -> Result<Self> {
        let bad = |message: String| Error::ModelFile {
            path: name.to_string(),
            message,
        };
        let format = serde_json::from_str::<FormatTag>(text)
            .map(|t| t.format)
            .unwrap_or_default();
        if format == FORMAT_1 {
            return Err(bad(format!(
                "written by an older version of pacgp (format '{FORMAT_1}', which stored the certificate's prices); refit the model with this version"
            )));
        }
        let m: FittedModel = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        if m.format != FORMAT {
            return Err(bad(format!("format '{}' is not '{FORMAT}'", m.format)));
        }
        m.validate().map_err(|e| bad(e.to_string()))?;
        Ok(m)
    }

    /// Internal consistency of a loaded model: shapes against the basis and the input count,
    /// finite values, positive variances and scales (the posterior checks its own factors).
    fn validate(&self) -> Result<()> {
        let bad = |message: String| Error::Numerical {
            what: "model file",
            message,
        };
        let p = &self.posterior;
        let d = self.feature_names.len();
        if d == 0 || p.basis.ncols() != d {
            return Err(bad(format!(
                "{d} input names for a basis of {} columns",
                p.basis.ncols()
            )));
        }
        self.input_coding
            .check(&self.feature_names)
            .map_err(|e| bad(e.to_string()))?;
        if self.x_scaler.mean.len() != d || self.x_scaler.sd.len() != d {
            return Err(bad(format!(
                "the input scaler has {} means and {} deviations for {d} inputs",
                self.x_scaler.mean.len(),
                self.x_scaler.sd.len()
            )));
        }
        let finite_positive = |v: f64| v.is_finite() && v > 0.0;
        if !self.x_scaler.mean.iter().all(|m| m.is_finite())
            || !self.x_scaler.sd.iter().all(|s| finite_positive(*s))
        {
            return Err(bad(
                "input scaler values must be finite, deviations positive".into(),
            ));
        }
        if self.n_train == 0 {
            return Err(bad("training size 0".into()));
        }
        // The count is reported, never priced (`certify` counts again from its sample): only
        // its own consistency is checked.
        if let Some(dup) = &self.duplicates {
            if dup.n < self.n_train || dup.rows > dup.same_inputs || dup.same_inputs >= dup.n {
                return Err(bad(format!(
                    "a duplicate count of {} rows ({} same inputs) of {} for {} training rows",
                    dup.rows, dup.same_inputs, dup.n, self.n_train
                )));
            }
        }
        if let Some(h) = &self.holdout {
            if h.n_holdout == 0 || h.n != self.n_train + h.n_holdout {
                return Err(bad(format!(
                    "a holdout of {} of {} rows for {} training rows",
                    h.n_holdout, h.n, self.n_train
                )));
            }
        }
        match (
            &self.sets,
            self.is_classifier() && self.spec.intervals.is_some(),
        ) {
            (Some(r), true) => r
                .validate(&self.spec, self.n_train, &self.class_names()?)
                .map_err(|e| bad(format!("prediction-set record: {e}")))?,
            (None, false) => {}
            (Some(_), false) => {
                return Err(bad(
                    "a prediction-set record in a model whose spec has no sets".into(),
                ))
            }
            (None, true) => {
                return Err(bad(
                    "the spec has prediction sets and the model no record of them".into(),
                ))
            }
        }
        if self.spec.is_classifier() != self.is_classifier() {
            return Err(bad(format!(
                "a {} model with a {} task",
                self.method(),
                if self.is_classifier() {
                    "classification"
                } else {
                    "regression"
                }
            )));
        }
        let task_kind = match &self.task {
            Task::OneVsRest { .. } => Some(crate::spec::MultiClass::OneVsRest),
            Task::Softmax { .. } => Some(crate::spec::MultiClass::Softmax),
            _ => None,
        };
        if self.spec.multiclass() != task_kind {
            return Err(bad(format!(
                "a {} spec ({}) with a task that is {}",
                self.method(),
                self.spec
                    .multiclass()
                    .map_or("binary or regression".to_string(), |m| m.to_string()),
                task_kind.map_or("binary or regression".to_string(), |m| m.to_string())
            )));
        }
        match &self.task {
            Task::Regression {
                noise_variance,
                y_scaler,
                intervals,
                ..
            } => {
                match intervals {
                    Some(r) => r
                        .validate(&self.spec, self.n_train, d)
                        .map_err(|e| bad(format!("interval record: {e}")))?,
                    None if self.spec.intervals.is_some() => {
                        return Err(bad(
                            "the spec has prediction intervals and the model no record of them"
                                .into(),
                        ))
                    }
                    None => {}
                }
                if !finite_positive(*noise_variance) {
                    return Err(bad(format!(
                        "noise variance {noise_variance} (must be positive and finite)"
                    )));
                }
                if !(y_scaler.mean.is_finite() && finite_positive(y_scaler.sd)) {
                    return Err(bad(format!(
                        "target scaler mean {} sd {} (sd must be positive and finite)",
                        y_scaler.mean, y_scaler.sd
                    )));
                }
            }
            Task::Svm { mu, config, .. } => {
                config.validate()?;
                if !finite_positive(*mu) {
                    return Err(bad(format!(
                        "SVM scale μ = {mu} (must be positive and finite)"
                    )));
                }
            }
            Task::OneVsRest { classes, members } => {
                self.check_members(classes, members)
                    .map_err(|e| bad(format!("one-vs-rest: {e}")))?;
            }
            Task::Softmax {
                classes, posterior, ..
            } => {
                self.check_softmax(classes, posterior)
                    .map_err(|e| bad(format!("softmax: {e}")))?;
            }
            Task::Classification {
                likelihood,
                input_noise,
                split_prior,
                ..
            } => {
                if let Some(r) = split_prior {
                    r.check(self.n_train, self.posterior.basis.nrows())
                        .map_err(|e| bad(format!("split prior record: {e}")))?;
                }
                likelihood.validate()?;
                if !(input_noise.is_finite() && *input_noise >= 0.0) {
                    return Err(bad(format!(
                        "input noise {input_noise} (must be finite and non-negative)"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Refuse to certify on anything but the training sample: the bound is about the sample
    /// the posterior was fitted on (same rows, in any order).
    pub fn check_training_sample(&self, sample: &Dataset) -> Result<()> {
        if sample.n() != self.n_train {
            return Err(Error::NotTrainingSample {
                reason: format!(
                    "it has {} rows and the model was trained on {}",
                    sample.n(),
                    self.n_train
                ),
            });
        }
        match &self.training_digest {
            Some(want) if *want != crate::data::sample_digest(sample) => {
                Err(Error::NotTrainingSample {
                    reason: "its rows differ from the training rows (digest mismatch)".into(),
                })
            }
            _ => Ok(()),
        }
    }
}

/// Just the format tag of a model file, read before the rest so an older format is named.
#[derive(Deserialize)]
struct FormatTag {
    #[serde(default)]
    format: String,
}
