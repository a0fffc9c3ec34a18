//! What `fit` does, per method: a [`CheckedFitSpec`] and a training sample in, a
//! [`FittedModel`] out. The one entry point is [`fit`]; the CLI and the Python module call it
//! with the spec they mapped their inputs into.
//!
//! - `regression`: gpr, vfe/fitc/dtc, pac-gp, pac-sgp (and their split priors), greedy-sparse;
//! - `classifier`: laplace, ep, mean-field, ivm, sogp with θ from the candidate menu or the grid;
//! - `pac_gpc`: the classifier trained by its bound, and the classifier split prior;
//! - `svm`: the certified SVM;
//! - [`svgp`]: the sparse variational classifier (evidence or bound);
//! - [`sharded`]: what a fit over data shards minimises and how (vfe, pac-sgp);
//! - [`multiclass`]: K classes by one-vs-rest over any of the classifiers, or the softmax Laplace;
//! - `outputs`: K real targets at the same inputs, one regressor per output.

pub(crate) mod classifier;
pub mod intervals;
pub mod multiclass;
pub(crate) mod outputs;
pub(crate) mod pac_gpc;
pub(crate) mod regression;
pub mod sharded;
pub mod svgp;
pub(crate) mod svm;

use crate::data::{ClassLabels, Dataset, LabelMap, TrainingLabels};
use crate::error::{Error, Result};
use crate::memory::MemoryLimit;
use crate::model::{FittedModel, HoldoutParts};
use crate::optim::StopSignal;
use crate::spec::{CheckedFitSpec, FitSpec, Method};

pub use crate::plan::{classifier_candidates, svm_candidates, svm_prior_kernel};
pub use outputs::{fit_outputs, fit_outputs_until};

/// Fit `spec` on `data`. A binary classifier takes targets ±1 and the two labels (`None`:
/// "-1" and "1"); a multi-class fit takes class indices `0..K` and the K labels
/// ([`TrainingLabels::Classes`]) — a binary classifier's spec given more than two classes
/// becomes one-vs-rest, with a note; a regression method takes no labels. Data-dependent
/// defaults (a basis size of at most N) are filled in with a note in the model's report. With
/// prediction intervals in a regression spec, or prediction sets in a classifier's, their
/// record is made here ([`intervals`]; CV+ and split conformal refit the spec on parts of
/// `data`).
///
/// A fit that needs more memory than the machine has available is refused before it starts
/// ([`crate::cost`]); [`fit_within`] takes another limit.
///
/// With `certify_holdout` in the spec, the seeded split ([`HoldoutParts`]) keeps that fraction
/// of `data` out before anything is fitted — scalers, hyperparameters and the posterior see
/// only the rest (as does ε's default, [`FitOptions::with_default_epsilon`]) — and the model
/// records the split for `certify`.
///
/// The model counts the rows of `data` that repeat an earlier row ([`crate::data::Duplicates`],
/// [`FittedModel::duplicates`]), for the front ends' warning.
///
/// ```
/// use pacgp::prelude::*;
///
/// // Two classes, split by the sign of x (targets ±1).
/// let x = Mat::from_fn(30, 1, |i, _| i as f64 / 10.0 - 1.45);
/// let y = (0..30).map(|i| if i < 15 { -1.0 } else { 1.0 }).collect();
/// let data = Dataset::new(x, y)?;
///
/// // A Laplace GP classifier; `None`: the targets are the labels "-1" and "1".
/// let spec = FitOptions::default().check(MethodName::Laplace)?;
/// let model = fit(&spec, &data, None)?;
/// assert!(model.is_classifier());
///
/// // p(y = +1 | x) at raw inputs, low on the left and high on the right.
/// let at = Mat::from_fn(2, 1, |i, _| if i == 0 { -1.0 } else { 1.0 });
/// let (p, _latent) = model.predict_classification(at.as_ref())?;
/// assert!(p[0] < 0.5 && p[1] > 0.5);
/// # Ok::<(), pacgp::Error>(())
/// ```
///
/// [`FitOptions::with_default_epsilon`]: crate::spec::FitOptions::with_default_epsilon
pub fn fit(
    spec: &CheckedFitSpec,
    data: &Dataset,
    labels: impl Into<TrainingLabels>,
) -> Result<FittedModel> {
    fit_within(spec, data, labels, MemoryLimit::Available)
}

/// [`fit`], refused before it starts if its estimated peak memory ([`crate::cost::footprint`])
/// is above `limit`.
pub fn fit_within(
    spec: &CheckedFitSpec,
    data: &Dataset,
    labels: impl Into<TrainingLabels>,
    limit: MemoryLimit,
) -> Result<FittedModel> {
    fit_until(spec, data, labels, limit, &StopSignal::never())
}

/// [`fit_within`] that stops early when `stop` fires (a time limit passes, an interrupt flag is
/// set): every optimiser of the fit returns its best point so far ([`crate::optim::stop`]), the
/// rest of the fit completes at those parameters, and the model says so in
/// [`FitReport::stopped_early`](crate::model::FitReport::stopped_early) — its certificate is
/// exact for the parameters it holds, which are not the optimum. A fit the signal never
/// interrupted is the same model as [`fit_within`]'s.
pub fn fit_until(
    spec: &CheckedFitSpec,
    data: &Dataset,
    labels: impl Into<TrainingLabels>,
    limit: MemoryLimit,
    stop: &StopSignal,
) -> Result<FittedModel> {
    let labels = labels.into();
    let (model, stopped) = crate::optim::stop::watch(stop, || fit_all(spec, data, labels, limit));
    let mut model = model?;
    model.report.stopped_early = stopped;
    Ok(model)
}

/// [`fit_within`] under the stop signal [`fit_until`] installed.
fn fit_all(
    spec: &CheckedFitSpec,
    data: &Dataset,
    labels: TrainingLabels,
    limit: MemoryLimit,
) -> Result<FittedModel> {
    let duplicates = Some(crate::data::Duplicates::of(data));
    let Some(fraction) = spec.certify_holdout else {
        let mut model = fit_sample(spec, data, labels, limit)?;
        model.duplicates = duplicates;
        return Ok(model);
    };
    let parts = HoldoutParts::of(data, fraction, spec.seed)?;
    let mut model = fit_sample(spec, &parts.fit, labels, limit)?;
    model.report.notes.push(format!(
        "{} of the {} rows held out (F = {fraction}, seed {}): the fit saw the other {}; certify takes all {} rows",
        parts.record.n_holdout,
        parts.record.n,
        parts.record.seed,
        parts.fit.n(),
        parts.record.n
    ));
    model.holdout = Some(parts.record);
    model.duplicates = duplicates;
    Ok(model)
}

/// [`fit_within`] on the rows the model is fitted on.
fn fit_sample(
    spec: &CheckedFitSpec,
    data: &Dataset,
    labels: TrainingLabels,
    limit: MemoryLimit,
) -> Result<FittedModel> {
    let given = spec;
    let (spec, notes) = given.for_sample(data.n())?;
    crate::cost::check_fits(&spec, data.n(), data.d(), labels.classes(), limit)?;
    if !spec.is_classifier() {
        if labels != TrainingLabels::None {
            return Err(Error::Unsupported(format!(
                "{} is a regression method: it takes real targets, not class labels",
                spec.method_name()
            )));
        }
        let model = fit_checked(&spec, data, LabelMap::signs(), notes)?;
        return with_intervals(given, &spec, data, model);
    }
    let sets = spec
        .intervals
        .map(|iv| (iv, labels.clone()))
        .filter(|_| spec.is_classifier());
    let mut model = fit_classifier(&spec, data, labels, notes, limit)?;
    if let Some((iv, labels)) = sets {
        let record = intervals::set_record(given, &iv, data, labels, &model)?;
        model.sets = Some(Box::new(record));
    }
    Ok(model)
}

/// A regressor fitted on `data` with the prediction intervals `spec` (resolved for the sample
/// from `given`) asks for.
fn with_intervals(
    given: &CheckedFitSpec,
    spec: &CheckedFitSpec,
    data: &Dataset,
    mut model: FittedModel,
) -> Result<FittedModel> {
    if let Some(iv) = &spec.intervals {
        let record = intervals::interval_record(given, iv, data, &model)?;
        if let crate::model::Task::Regression { intervals, .. } = &mut model.task {
            *intervals = Some(Box::new(record));
        }
    }
    Ok(model)
}

/// A classifier's fit on the rows it is fitted on (binary, or K classes one-vs-rest or
/// softmax), from the spec resolved for them.
fn fit_classifier(
    spec: &CheckedFitSpec,
    data: &Dataset,
    labels: TrainingLabels,
    mut notes: Vec<String>,
    limit: MemoryLimit,
) -> Result<FittedModel> {
    match (spec.multiclass(), labels) {
        (None, TrainingLabels::Classes(classes)) if classes.k() > 2 => {
            notes.push(format!(
                "{} classes: fitted one-vs-rest, class k against the rest (the default for more than two classes; multiclass softmax with laplace fits the multi-class Laplace)",
                classes.k()
            ));
            let spec = FitSpec::from(spec.clone()).into_one_vs_rest().check()?;
            fit_multiclass(&spec, data, classes, notes, limit)
        }
        (None, TrainingLabels::Classes(classes)) => {
            // Two classes as indices: the binary fit on ±1.
            let y = data
                .y
                .iter()
                .map(|c| if *c == 1.0 { 1.0 } else { -1.0 })
                .collect();
            crate::data::check_class_indices(&data.y, 2)?;
            let binary = Dataset { y, ..data.clone() };
            let map = LabelMap {
                negative: classes.labels[0].clone(),
                positive: classes.labels[1].clone(),
            };
            fit_checked(spec, &binary, map, notes)
        }
        (None, other) => {
            crate::data::check_binary_labels(&data.y)?;
            let map = match other {
                TrainingLabels::Binary(m) => m,
                _ => LabelMap::signs(),
            };
            fit_checked(spec, data, map, notes)
        }
        (Some(_), TrainingLabels::Classes(classes)) => {
            fit_multiclass(spec, data, classes, notes, limit)
        }
        (Some(_), other) => {
            // Two labels coded ±1 for a multi-class method: classes 0 and 1.
            crate::data::check_binary_labels(&data.y)?;
            let map = match other {
                TrainingLabels::Binary(m) => m,
                _ => LabelMap::signs(),
            };
            let classes = ClassLabels {
                labels: vec![map.negative, map.positive],
            };
            let y = data
                .y
                .iter()
                .map(|s| if *s > 0.0 { 1.0 } else { 0.0 })
                .collect();
            let indexed = Dataset { y, ..data.clone() };
            fit_multiclass(spec, &indexed, classes, notes, limit)
        }
    }
}

/// A multi-class spec on class indices, its one-vs-rest members within `limit`.
fn fit_multiclass(
    spec: &CheckedFitSpec,
    data: &Dataset,
    classes: ClassLabels,
    notes: Vec<String>,
    limit: MemoryLimit,
) -> Result<FittedModel> {
    let mut model = match &spec.method {
        Method::OneVsRest(_) => multiclass::one_vs_rest(spec, data, classes, limit)?,
        Method::Softmax(s) => multiclass::softmax(spec, s, data, classes)?,
        _ => {
            return Err(Error::Unsupported(format!(
                "{} is not a multi-class method",
                spec.method_name()
            )))
        }
    };
    model.report.notes.splice(0..0, notes);
    Ok(model)
}

/// A binary classifier or a regressor.
fn fit_checked(
    spec: &CheckedFitSpec,
    data: &Dataset,
    labels: LabelMap,
    notes: Vec<String>,
) -> Result<FittedModel> {
    let home = fit_home(&spec.method).ok_or_else(|| {
        Error::Unsupported(format!(
            "a multi-class {} fit needs its labels as classes",
            spec.method_name()
        ))
    })?;
    let mut model = home.fit(spec, data, labels)?;
    model.report.notes.splice(0..0, notes);
    Ok(model)
}

/// What a binary classifier or a regressor does in the fit layer: the fit half of its home
/// (the spec half is [`crate::spec::MethodSpec`]; both registered once,
/// `spec::registered_methods!`).
pub(crate) trait MethodFit {
    /// The model of `spec` (resolved for the sample) on `train` (±1 targets with `labels` for
    /// a binary classifier; a regressor ignores them).
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, labels: LabelMap) -> Result<FittedModel>;
}

/// [`fit_home`] from the registered methods: the multi-class ones have none.
macro_rules! fit_homes {
    ([$($variant:ident),+] [$($multi:ident),*]) => {
        /// The fit half of a binary classifier's or a regressor's home (`None`: a multi-class
        /// method, fitted by [`fit_multiclass`]).
        fn fit_home(method: &Method) -> Option<&dyn MethodFit> {
            match method {
                $(Method::$variant(s) => Some(s),)+
                $(Method::$multi(_))|* | Method::OneVsRest(_) => None,
            }
        }
    };
}

crate::spec::registered_methods!(fit_homes);

/// A binary classifier's task: its posterior, likelihood and labels, no input noise, and the
/// record of the split that gave its prior, if one did.
pub(crate) fn classifier_task(
    posterior: crate::posterior::GaussianPosterior,
    likelihood: crate::likelihood::Likelihood,
    labels: LabelMap,
    split_prior: Option<Box<crate::model::split_classifier::ClassifierSplitRecord>>,
) -> crate::model::Task {
    crate::model::Task::Classification {
        posterior,
        likelihood,
        labels,
        input_noise: 0.0,
        split_prior,
    }
}
