//! The model file: its JSON layout (format 2), reading, writing and validation on load.
//!
//! On disk the posterior of a regressor or binary classifier sits at the top level beside
//! the task, as it always has; in memory it lives in its [`Task`] variant, so a multi-class
//! model has none. Files that multi-class fits wrote before carry a copy of the first
//! class's posterior (or the softmax model's prior) there: it is read and dropped, as no
//! certificate or prediction ever used it.

use std::borrow::Cow;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::data::{ClassLabels, InputCoding, LabelMap, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::inference::softmax::SoftmaxPosterior;
use crate::likelihood::Likelihood;
use crate::objective::gp_split::SplitRecord;
use crate::objective::sgp_split::SparseSplitRecord;
use crate::posterior::GaussianPosterior;
use crate::spec::{CheckedFitSpec, Method};

use super::split_classifier::ClassifierSplitRecord;
use super::{
    FitReport, FittedModel, HoldoutRecord, IntervalRecord, RegressionSplit, SetRecord, Task,
    FORMAT, FORMAT_1,
};

/// The file's fields in their order; borrowed when written, owned when read.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile<'a> {
    format: Cow<'a, str>,
    spec: Cow<'a, CheckedFitSpec>,
    #[serde(default)]
    input_coding: Cow<'a, InputCoding>,
    feature_names: Cow<'a, [String]>,
    target_name: Cow<'a, str>,
    n_train: usize,
    training_digest: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    holdout: Option<Cow<'a, HoldoutRecord>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duplicates: Option<crate::data::Duplicates>,
    x_scaler: Cow<'a, Standardizer>,
    /// Regressors and binary classifiers only (see the module's docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    posterior: Option<Cow<'a, GaussianPosterior>>,
    task: TaskFile<'a>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sets: Option<Cow<'a, SetRecord>>,
    report: Cow<'a, FitReport>,
}

/// [`Task`] as the file holds it (internally tagged by `task`, without the posterior). A
/// transient value, built once per file read or written, so its variants' sizes may differ.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, Deserialize)]
#[serde(tag = "task", rename_all = "snake_case")]
enum TaskFile<'a> {
    Regression {
        noise_variance: f64,
        y_scaler: Cow<'a, TargetScaler>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        split_prior: Option<Cow<'a, SplitRecord>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sparse_split_prior: Option<Cow<'a, SparseSplitRecord>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intervals: Option<Cow<'a, IntervalRecord>>,
    },
    Classification {
        likelihood: Cow<'a, Likelihood>,
        labels: Cow<'a, LabelMap>,
        #[serde(default)]
        input_noise: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        split_prior: Option<Cow<'a, ClassifierSplitRecord>>,
    },
    Svm {
        labels: Cow<'a, LabelMap>,
        mu: f64,
        config: Cow<'a, crate::svm::SvmConfig>,
        #[serde(default)]
        bias: f64,
    },
    OneVsRest {
        classes: Cow<'a, ClassLabels>,
        members: Cow<'a, [FittedModel]>,
    },
    Softmax {
        classes: Cow<'a, ClassLabels>,
        posterior: Cow<'a, SoftmaxPosterior>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sampling_seed: Option<u64>,
    },
    MultiOutput {
        members: Cow<'a, [FittedModel]>,
    },
}

impl<'a> From<&'a FittedModel> for ModelFile<'a> {
    fn from(m: &'a FittedModel) -> Self {
        Self {
            format: Cow::Borrowed(&m.format),
            spec: Cow::Borrowed(&m.spec),
            input_coding: Cow::Borrowed(&m.input_coding),
            feature_names: Cow::Borrowed(&m.feature_names),
            target_name: Cow::Borrowed(&m.target_name),
            n_train: m.n_train,
            training_digest: m.training_digest.as_deref().map(Cow::Borrowed),
            holdout: m.holdout.as_ref().map(Cow::Borrowed),
            duplicates: m.duplicates,
            x_scaler: Cow::Borrowed(&m.x_scaler),
            posterior: m.task.gaussian_posterior().map(Cow::Borrowed),
            task: TaskFile::from(&m.task),
            sets: m.sets.as_deref().map(Cow::Borrowed),
            report: Cow::Borrowed(&m.report),
        }
    }
}

impl<'a> From<&'a Task> for TaskFile<'a> {
    fn from(task: &'a Task) -> Self {
        match task {
            Task::Regression {
                noise_variance,
                y_scaler,
                split_prior,
                intervals,
                ..
            } => TaskFile::Regression {
                noise_variance: *noise_variance,
                y_scaler: Cow::Borrowed(y_scaler),
                split_prior: match split_prior {
                    Some(RegressionSplit::Dense(r)) => Some(Cow::Borrowed(r)),
                    _ => None,
                },
                sparse_split_prior: match split_prior {
                    Some(RegressionSplit::Sparse(r)) => Some(Cow::Borrowed(&**r)),
                    _ => None,
                },
                intervals: intervals.as_deref().map(Cow::Borrowed),
            },
            Task::Classification {
                likelihood,
                labels,
                input_noise,
                split_prior,
                ..
            } => TaskFile::Classification {
                likelihood: Cow::Borrowed(likelihood),
                labels: Cow::Borrowed(labels),
                input_noise: *input_noise,
                split_prior: split_prior.as_deref().map(Cow::Borrowed),
            },
            Task::Svm {
                labels,
                mu,
                config,
                bias,
                ..
            } => TaskFile::Svm {
                labels: Cow::Borrowed(labels),
                mu: *mu,
                config: Cow::Borrowed(config),
                bias: *bias,
            },
            Task::OneVsRest { classes, members } => TaskFile::OneVsRest {
                classes: Cow::Borrowed(classes),
                members: Cow::Borrowed(members),
            },
            Task::MultiOutput { members } => TaskFile::MultiOutput {
                members: Cow::Borrowed(members),
            },
            Task::Softmax {
                classes,
                posterior,
                sampling_seed,
            } => TaskFile::Softmax {
                classes: Cow::Borrowed(classes),
                posterior: Cow::Borrowed(&**posterior),
                sampling_seed: *sampling_seed,
            },
        }
    }
}

impl TaskFile<'_> {
    /// The in-memory task, given the file's top-level posterior (required by the regressors
    /// and binary classifiers; dropped for the multi-class models, see the module's docs).
    fn into_task(self, posterior: Option<GaussianPosterior>) -> std::result::Result<Task, String> {
        let needed = |p: Option<GaussianPosterior>, kind: &str| {
            p.ok_or_else(|| format!("a {kind} model file without its posterior"))
        };
        Ok(match self {
            TaskFile::Regression {
                noise_variance,
                y_scaler,
                split_prior,
                sparse_split_prior,
                intervals,
            } => Task::Regression {
                posterior: needed(posterior, "regression")?,
                noise_variance,
                y_scaler: y_scaler.into_owned(),
                split_prior: match (split_prior, sparse_split_prior) {
                    (None, None) => None,
                    (Some(r), None) => Some(RegressionSplit::Dense(r.into_owned())),
                    (None, Some(r)) => Some(RegressionSplit::Sparse(Box::new(r.into_owned()))),
                    (Some(_), Some(_)) => {
                        return Err(
                            "a regression task with both a split prior and a sparse split prior record (no version of pacgp writes both)"
                                .into(),
                        )
                    }
                },
                intervals: intervals.map(|r| Box::new(r.into_owned())),
            },
            TaskFile::Classification {
                likelihood,
                labels,
                input_noise,
                split_prior,
            } => Task::Classification {
                posterior: needed(posterior, "classification")?,
                likelihood: likelihood.into_owned(),
                labels: labels.into_owned(),
                input_noise,
                split_prior: split_prior.map(|r| Box::new(r.into_owned())),
            },
            TaskFile::Svm {
                labels,
                mu,
                config,
                bias,
            } => Task::Svm {
                posterior: needed(posterior, "SVM")?,
                labels: labels.into_owned(),
                mu,
                config: config.into_owned(),
                bias,
            },
            TaskFile::OneVsRest { classes, members } => Task::OneVsRest {
                classes: classes.into_owned(),
                members: members.into_owned(),
            },
            TaskFile::MultiOutput { members } => Task::MultiOutput {
                members: members.into_owned(),
            },
            TaskFile::Softmax {
                classes,
                posterior,
                sampling_seed,
            } => Task::Softmax {
                classes: classes.into_owned(),
                posterior: Box::new(posterior.into_owned()),
                sampling_seed,
            },
        })
    }
}

impl TryFrom<ModelFile<'_>> for FittedModel {
    type Error = String;

    fn try_from(f: ModelFile<'_>) -> std::result::Result<Self, String> {
        Ok(Self {
            format: f.format.into_owned(),
            spec: f.spec.into_owned(),
            input_coding: f.input_coding.into_owned(),
            feature_names: f.feature_names.into_owned(),
            target_name: f.target_name.into_owned(),
            n_train: f.n_train,
            training_digest: f.training_digest.map(Cow::into_owned),
            holdout: f.holdout.map(Cow::into_owned),
            duplicates: f.duplicates,
            x_scaler: f.x_scaler.into_owned(),
            task: f.task.into_task(f.posterior.map(Cow::into_owned))?,
            sets: f.sets.map(|s| Box::new(s.into_owned())),
            report: f.report.into_owned(),
            svm_solution: None,
        })
    }
}

impl Serialize for FittedModel {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        ModelFile::from(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FittedModel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let file = ModelFile::deserialize(deserializer)?;
        FittedModel::try_from(file).map_err(serde::de::Error::custom)
    }
}

impl FittedModel {
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
    pub(super) fn validate(&self) -> Result<()> {
        let bad = |message: String| Error::Numerical {
            what: "model file",
            message,
        };
        let d = self.feature_names.len();
        for cols in self.basis_columns()? {
            if d == 0 || cols != d {
                return Err(bad(format!(
                    "{d} input names for a basis of {cols} columns"
                )));
            }
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
                .validate(self)
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
                // σ² may be 0 where known per-row variances (gpr's alpha) carry the noise.
                let known_noise =
                    matches!(&self.spec.method, Method::Gpr(g) if !g.alpha.is_empty());
                let noise_ok =
                    finite_positive(*noise_variance) || (known_noise && *noise_variance == 0.0);
                if !noise_ok {
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
            Task::MultiOutput { members } => {
                self.check_outputs(members)
                    .map_err(|e| bad(format!("multi-output: {e}")))?;
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
                if let crate::spec::Method::Svgp(s) = &self.spec.method {
                    if s.split.is_some() != split_prior.is_some() {
                        return Err(bad(
                            "split prior record: the spec's split prior and the record must come together".into(),
                        ));
                    }
                }
                if let Some(r) = split_prior {
                    // pac-svgp's Q lives on its inducing inputs, the others' on part B.
                    let on_part_b = !matches!(self.spec.method, crate::spec::Method::Svgp(_));
                    let basis = self.posterior()?.basis.nrows();
                    r.check(self.n_train, on_part_b.then_some(basis))
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

    /// The input columns of every posterior the model predicts with (one, K members', or the
    /// softmax model's shared basis).
    fn basis_columns(&self) -> Result<Vec<usize>> {
        match &self.task {
            Task::OneVsRest { members, .. } | Task::MultiOutput { members } => members
                .iter()
                .map(|m| Ok(m.posterior()?.basis.ncols()))
                .collect(),
            Task::Softmax { posterior, .. } => Ok(vec![posterior.basis.ncols()]),
            _ => Ok(vec![self.posterior()?.basis.ncols()]),
        }
    }
}

/// Just the format tag of a model file, read before the rest so an older format is named.
#[derive(Deserialize)]
struct FormatTag {
    #[serde(default)]
    format: String,
}
