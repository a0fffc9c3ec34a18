//! A fitted model as one serialisable value: the shared posterior plus everything needed to
//! use it on raw data (standardisation, label map, noise, the loss's ε). Model files are JSON,
//! validated on load, and reload to identical predictions.
//!
//! - this file: the model's types ([`FittedModel`], [`Task`], the reports) and accessors;
//! - `file`: the model file's layout, reading, writing and validation;
//! - `certify`: certificates on the training sample, one dispatch over the [`Task`];
//! - `usage`: test-set evaluation of a fitted model; `predict`: its predictions;
//! - `price`: what a fit chose from the data and its price, re-derived from the stored spec;
//! - `split_classifier`: the classifier split prior's record;
//! - `holdout`: the held-out part of a fit and the test-set bound on the deployed predictor;
//! - `deployed`: the derandomised certificate on the deployed predictor, beside the Gibbs one;
//! - [`report`]: the content of a report on a model (certificates, LOO, test figures), gathered;
//! - [`sets`]: a classifier's conformal prediction sets (`fit --intervals` on a classifier);
//! - `multiclass`: prediction, evaluation, certificate and prices of the multi-class models;
//! - `outputs`: a multi-output regressor's predictions, metrics and certificates;
//! - `from_parameters`: a sparse model assembled from parameters fitted elsewhere (Dask);
//! - `evidence`: an exact GP regressor's log marginal likelihood at any hyperparameters;
//! - `joint`: a regressor's joint predictive covariance and draws from it, and the GP
//!   prior's before any data;
//! - `svm_dual`: an SVM's decision function and dual in scikit-learn's terms.
//!
//! The fitting pipelines that make models are in [`crate::fit`].

use serde::{Deserialize, Serialize};

use crate::certificate::Certificate;
use crate::data::{ClassLabels, Dataset, LabelMap, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::inference::ConvergenceReport;
use crate::likelihood::Likelihood;
use crate::optim::OptimReport;
use crate::posterior::GaussianPosterior;
use crate::spec::CheckedFitSpec;

mod certify;
mod deployed;
pub(crate) mod evidence;
mod file;
pub(crate) mod from_parameters;
pub(crate) mod holdout;
pub(crate) mod intervals;
pub(crate) mod joint;
pub(crate) mod multiclass;
pub(crate) mod outputs;
mod predict;
pub(crate) mod price;
pub mod report;
pub mod sets;
pub(crate) mod shards;
pub(crate) mod softmax;
mod split;
pub(crate) mod split_classifier;
pub(crate) mod svm_dual;
mod usage;

pub use crate::certificate::deployed::{DeployedBound, DeployedCertificate, DeployedPredictor};
pub use crate::certificate::GibbsPredictor;
pub use certify::CertifyOptions;
pub use evidence::LogEvidence;
pub use from_parameters::{sparse_model_from_parts, SparseModelParts};
pub use holdout::{HoldoutParts, HoldoutRecord};
pub use intervals::{FoldModel, IntervalRecord, StandardisedSample};
pub use joint::PriorPredictive;
pub use multiclass::ClassPrediction;
pub use outputs::{JointCertificate, OutputCertificate, OutputCertificates};
pub use sets::{ActiveSets, SetRecord, TrainingInputs};
pub use split_classifier::ClassifierSplitRecord;
pub use svm_dual::SvmDual;

/// Model-file format tag; bumped on incompatible changes.
pub const FORMAT: &str = "pacgp-model/2";

/// The format before the fit spec: files of it stored the certificate's prices, which
/// `certify` no longer reads, so they are refused with a request to refit.
const FORMAT_1: &str = "pacgp-model/1";

/// What the model predicts, with the posterior(s) it predicts from: every variant holds exactly
/// what its kind needs, so no model carries a record it cannot use or a placeholder posterior.
#[derive(Clone, Debug)]
pub enum Task {
    /// Real-valued targets with Gaussian observation noise.
    Regression {
        /// The posterior over the latent function (standardised inputs and targets).
        posterior: GaussianPosterior,
        /// Noise variance σ² on the standardised scale.
        noise_variance: f64,
        /// Target standardisation (training statistics).
        y_scaler: TargetScaler,
        /// The data-dependent split prior's record (`prior split:F`), dense or sparse: what
        /// `certify` needs to rebuild P_A and Q on part B. `None`: a data-free prior.
        split_prior: Option<RegressionSplit>,
        /// What the spec's prediction intervals need at prediction time (`fit --intervals`).
        intervals: Option<Box<IntervalRecord>>,
    },
    /// Binary labels through a likelihood.
    Classification {
        /// The posterior over the latent function (standardised inputs).
        posterior: GaussianPosterior,
        /// The likelihood the posterior was inferred with.
        likelihood: Likelihood,
        /// The two labels as they appear in the data (−1, +1).
        labels: LabelMap,
        /// Gaussian input-noise variance v of the data model (naive mean field, seed 001
        /// eq. 17.16): a new label sees `f(x) + ξ`, `ξ ~ N(0, v)`, so class probabilities
        /// use the latent variance plus v. The certified Gibbs classifier is `sgn f`.
        input_noise: f64,
        /// The classifier split prior's record (laplace, pac-gpc with `prior split:F`): what
        /// `certify` needs to reproduce the certificate on part B.
        split_prior: Option<Box<split_classifier::ClassifierSplitRecord>>,
    },
    /// A support vector machine read as a GP's MAP (seed 001 §17.4): the posterior is the
    /// prior GP shifted to mean `μ·f_SVM`; its sign is the SVM's decision.
    Svm {
        /// The certified posterior (standardised inputs).
        posterior: GaussianPosterior,
        /// The two labels as they appear in the data (−1, +1).
        labels: LabelMap,
        /// The scale μ of the certified posterior mean (`f_SVM = mean/μ`).
        mu: f64,
        /// The solver settings the SVM was trained with (bias-free on the prior kernel for a
        /// certified SVM).
        config: crate::svm::SvmConfig,
        /// A bias fitted from the data (the spec's `bias`): the decision is `mean/μ + bias`, and
        /// no certificate holds (the prior would depend on the data). 0 for a certified SVM.
        bias: f64,
    },
    /// K ≥ 2 classes by one binary model per class, class k against the rest (the spec's
    /// binary method); the certificate uses all K.
    OneVsRest {
        /// The K labels as they appear in the data, class 0 first.
        classes: ClassLabels,
        /// Class k's binary model, fitted on the sample relabelled +1 for k and −1 for the
        /// rest (its own spec, digest and labels are checked against the outer model's).
        members: Vec<FittedModel>,
    },
    /// K ≥ 2 classes by the softmax Laplace approximation (one shared kernel; the posterior
    /// couples the classes).
    Softmax {
        /// The K labels as they appear in the data, class 0 first.
        classes: ClassLabels,
        /// The softmax Laplace posterior over the K latent functions.
        posterior: Box<crate::inference::softmax::SoftmaxPosterior>,
        /// The seed of the certificate's sampled risk, derived from the training sample
        /// (`softmax::softmax_sampling_seed`) so that no one chooses it; `certify` refuses a
        /// file whose record is not the sample's. Absent in files written before it existed
        /// (their certificate is drawn with the derived seed too).
        sampling_seed: Option<u64>,
    },
    /// K ≥ 2 real targets at the same inputs, one regressor of the spec's method per output
    /// (`outputs`): each output is certified as a regressor, and all K at once by a union
    /// bound (δ/K each).
    MultiOutput {
        /// Output j's regressor, fitted on the inputs and target column j: its target name,
        /// digest and scalers are that column's, its spec the outer model's.
        members: Vec<FittedModel>,
    },
}

/// A regression split prior's record: the dense one (pac-gp) or the sparse one (pac-sgp).
#[derive(Clone, Debug)]
pub enum RegressionSplit {
    /// `prior split:F` on an exact GP: the split, P_A's θ_A and σ_A², Q's free parameters.
    Dense(crate::objective::gp_split::SplitRecord),
    /// `prior split:F` on pac-sgp: the split, P_A (VFE on A) and Q's parameters.
    Sparse(Box<crate::objective::sgp_split::SparseSplitRecord>),
}

impl Task {
    /// The posterior of a regressor or binary classifier; `None` for the multi-class models,
    /// which hold one per class (one-vs-rest) or a coupled one (softmax).
    pub fn gaussian_posterior(&self) -> Option<&GaussianPosterior> {
        match self {
            Task::Regression { posterior, .. }
            | Task::Classification { posterior, .. }
            | Task::Svm { posterior, .. } => Some(posterior),
            Task::OneVsRest { .. } | Task::Softmax { .. } | Task::MultiOutput { .. } => None,
        }
    }

    /// `p(y = +1)` of a binary model at a latent marginal `N(mean, var)`: a GP classifier's
    /// likelihood predictive (its input noise added to the variance), the SVM's probability
    /// that a draw of Q votes +1, `Φ((mean + bias)/√var)`. `None` for other tasks.
    pub(crate) fn positive_probability(&self, mean: f64, var: f64) -> Option<f64> {
        match self {
            Task::Classification {
                likelihood,
                input_noise,
                ..
            } => Some(likelihood.predictive_positive(mean, var + input_noise)),
            Task::Svm { bias, .. } => Some(crate::special::normal_cdf(
                (mean + bias) / var.sqrt().max(f64::MIN_POSITIVE),
            )),
            _ => None,
        }
    }

    /// The label map of a binary classifier (GP classifier or SVM).
    pub fn labels(&self) -> Option<&LabelMap> {
        match self {
            Task::Classification { labels, .. } | Task::Svm { labels, .. } => Some(labels),
            Task::Regression { .. }
            | Task::OneVsRest { .. }
            | Task::Softmax { .. }
            | Task::MultiOutput { .. } => None,
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

/// A fitted model, ready to predict on raw inputs. Its file layout is in [`file`].
#[derive(Clone, Debug)]
pub struct FittedModel {
    /// [`FORMAT`].
    pub format: String,
    /// What the fit was: the method, its options, δ and the seed (checked again on load).
    /// `certify` re-derives every price of the certificate from it.
    pub spec: CheckedFitSpec,
    /// How the training table's cells became the inputs (categories, missing values, yes/no,
    /// header): files the model is applied to are read the same way.
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
    pub holdout: Option<HoldoutRecord>,
    /// The rows of the sample `fit` was given (with a holdout, the whole sample) that repeat an
    /// earlier row ([`crate::data::Duplicates`]): reported, never priced — the certificate and
    /// the intervals assume independent rows. `None` in files written before it was counted
    /// and for models that never held the whole sample (sharded sums).
    pub duplicates: Option<crate::data::Duplicates>,
    /// Input standardisation (training statistics).
    pub x_scaler: Standardizer,
    /// What the model predicts and the posterior(s) it predicts from.
    pub task: Task,
    /// What a classifier's conformal prediction sets need at prediction time (`fit
    /// --intervals split-conformal:F` on a classifier; `None`: no sets, and every file
    /// written before them).
    pub sets: Option<Box<SetRecord>>,
    /// How the fit went (optimiser report, jitter, notes): diagnostics only, never priced.
    pub report: FitReport,
    /// An SVM's dual solution as the fit found it, kept in memory only (never written):
    /// `certify` takes its leave-one-out from it when the sample, kernel and settings are the
    /// ones it was found for, row order included, instead of solving the same dual again. A
    /// model read from a file solves it again, to the same bits.
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
            task,
            sets: None,
            report,
            svm_solution: None,
        }
    }

    /// The posterior of a regressor or binary classifier. A multi-class model has one per
    /// class (one-vs-rest: its members') or a coupled one (softmax): refused, naming it.
    pub fn posterior(&self) -> Result<&GaussianPosterior> {
        self.task.gaussian_posterior().ok_or_else(|| {
            Error::Unsupported(format!(
                "a multi-class {} model has no single Gaussian posterior (one-vs-rest: each class's member has its own)",
                self.method()
            ))
        })
    }

    /// The kernel(s) the model predicts with: one, or one per class for one-vs-rest (class
    /// order) or per output (output order), or the softmax model's shared kernel.
    pub fn kernels(&self) -> Vec<&crate::kernel::Kernel> {
        match &self.task {
            Task::OneVsRest { members, .. } | Task::MultiOutput { members } => {
                members.iter().flat_map(|m| m.kernels()).collect()
            }
            Task::Softmax { posterior, .. } => vec![&posterior.kernel],
            Task::Regression { posterior, .. }
            | Task::Classification { posterior, .. }
            | Task::Svm { posterior, .. } => vec![posterior.kernel()],
        }
    }

    /// The kernel of a regressor or binary classifier, the softmax model's shared one, or
    /// class 0's of a one-vs-rest model and output 0's of a multi-output one (every member
    /// has its own: [`FittedModel::kernels`]).
    pub fn kernel(&self) -> &crate::kernel::Kernel {
        match &self.task {
            Task::OneVsRest { members, .. } | Task::MultiOutput { members } => members[0].kernel(),
            Task::Softmax { posterior, .. } => &posterior.kernel,
            Task::Regression { posterior, .. }
            | Task::Classification { posterior, .. }
            | Task::Svm { posterior, .. } => posterior.kernel(),
        }
    }

    /// The method's name as users spell it.
    pub fn method(&self) -> crate::spec::MethodName {
        self.spec.method_name()
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
