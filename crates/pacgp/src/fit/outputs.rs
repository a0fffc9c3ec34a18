//! Multi-output regression: K ≥ 2 real targets at the same inputs, one regressor of the spec's
//! method per output, each fitted on its own column through [`super::fit_within`] (so every
//! regression method, its menus, intervals and holdout come as they are), as many at once as
//! memory and threads allow. The model's certificates are in [`crate::model::outputs`].

use rayon::prelude::*;

use crate::conformal::IntervalMethod;
use crate::data::{Outputs, TrainingLabels};
use crate::error::{Error, Result};
use crate::memory::MemoryLimit;
use crate::model::{FitReport, FittedModel, Task};
use crate::optim::StopSignal;
use crate::spec::{CheckedFitSpec, Method};

/// [`fit_outputs_until`] within the memory available now, never stopped early.
///
/// ```
/// use pacgp::prelude::*;
/// use pacgp::data::Outputs;
///
/// // Two targets at the same 30 inputs: sin(x) and 2x, named "wave" and "line".
/// let x = Mat::from_fn(30, 1, |i, _| i as f64 / 10.0);
/// let wave = (0..30).map(|i| (i as f64 / 10.0).sin()).collect();
/// let line = (0..30).map(|i| 0.2 * i as f64).collect();
/// let names = vec!["wave".to_string(), "line".to_string()];
/// let outputs = Outputs::new(x, vec![wave, line], vec!["x".into()], names)?;
///
/// let spec = FitOptions::default().check(MethodName::Gpr)?;
/// let model = pacgp::fit::fit_outputs(&spec, &outputs)?;
/// assert_eq!(model.target_names(), ["wave", "line"]);
/// let at = Mat::from_fn(1, 1, |_, _| 1.0);
/// let p = model.predict_outputs(at.as_ref())?;
/// assert!((p[0].mean[0] - 1f64.sin()).abs() < 0.05 && (p[1].mean[0] - 2.0).abs() < 0.05);
/// # Ok::<(), pacgp::Error>(())
/// ```
pub fn fit_outputs(spec: &CheckedFitSpec, outputs: &Outputs) -> Result<FittedModel> {
    fit_outputs_until(spec, outputs, MemoryLimit::Available, &StopSignal::never())
}

/// A regression `spec` fitted on every output of `outputs` (each refused, as [`super::fit`]
/// refuses it, if it needs more than `limit`; all stopped by `stop`): one model whose members
/// are the K regressors, named by the targets joined by commas.
pub fn fit_outputs_until(
    spec: &CheckedFitSpec,
    outputs: &Outputs,
    limit: MemoryLimit,
    stop: &StopSignal,
) -> Result<FittedModel> {
    if spec.is_classifier() {
        return Err(Error::Unsupported(format!(
            "{} is a classifier: several target columns are fitted by a regression method (one per output)",
            spec.method_name()
        )));
    }
    let (members, stopped) = crate::optim::stop::watch(stop, || fit_members(spec, outputs, limit));
    let mut model = assemble(outputs, members?);
    model.report.stopped_early = stopped;
    Ok(model)
}

/// Every output's regressor, [`super::multiclass::members_at_once`] of them in parallel; the
/// error of the first output that fails, as if fitted one after another.
fn fit_members(
    spec: &CheckedFitSpec,
    outputs: &Outputs,
    limit: MemoryLimit,
) -> Result<Vec<FittedModel>> {
    if spec.shares_kernel() {
        return shared_kernel_members(spec, outputs, limit);
    }
    let watch = crate::optim::stop::current();
    let samples = outputs.samples();
    let at_once = super::multiclass::members_at_once(spec, &samples[0], outputs.k(), limit);
    let mut members = Vec::with_capacity(outputs.k());
    for group in samples.chunks(at_once) {
        let fitted: Vec<Result<FittedModel>> = group
            .par_iter()
            .map(|s| {
                crate::optim::stop::within(watch.as_ref(), || {
                    super::fit_within(spec, s, TrainingLabels::None, limit)
                })
            })
            .collect();
        for m in fitted {
            members.push(m?);
        }
    }
    Ok(members)
}

/// Every output's gpr at one θ and σ² chosen by the outputs' summed evidence
/// ([`super::regression::gpr_shared`]), each with its intervals as a single fit makes them.
/// Refused with a holdout (the kernel is chosen on every output's rows, held out or not) and
/// with intervals that refit one output alone.
fn shared_kernel_members(
    spec: &CheckedFitSpec,
    outputs: &Outputs,
    limit: MemoryLimit,
) -> Result<Vec<FittedModel>> {
    if spec.certify_holdout.is_some() {
        return Err(Error::Unsupported(
            "a kernel shared by the outputs is chosen on every output's rows, so none stays held out: fit one kernel per output to certify on a holdout".into(),
        ));
    }
    if let Some(iv) = spec
        .intervals
        .filter(|iv| iv.method != IntervalMethod::JackknifePlus)
    {
        return Err(Error::Unsupported(format!(
            "{} intervals refit one output alone, not the outputs' shared kernel: take jackknife+ (the leave-one-out at the shared θ, no refits) or one kernel per output",
            iv.method
        )));
    }
    let samples = outputs.samples();
    let (resolved, notes) = spec.for_sample(outputs.n())?;
    crate::cost::check_fits(&resolved, outputs.n(), outputs.d(), 2, limit)?;
    let Method::Gpr(s) = &resolved.method else {
        return Err(Error::Unsupported(format!(
            "{} has no shared kernel over several outputs (gpr has)",
            spec.method_name()
        )));
    };
    let models = super::regression::gpr_shared(&resolved, s, samples)?;
    (models.into_iter().zip(samples))
        .map(|(mut model, data)| {
            model.report.notes.splice(0..0, notes.iter().cloned());
            let mut model = super::with_intervals(spec, &resolved, data, model)?;
            model.duplicates = Some(crate::data::Duplicates::of(data));
            Ok(model)
        })
        .collect()
}

/// The multi-output model around its members: their spec (the given one resolved for the
/// sample), inputs, scaler, size, holdout and duplicate count (the same for every output), the targets' names joined by commas, and a
/// report whose objective is the members' sum (the independent outputs' joint objective).
fn assemble(outputs: &Outputs, members: Vec<FittedModel>) -> FittedModel {
    let first = &members[0];
    let notes = members
        .iter()
        .flat_map(|m| {
            m.report
                .notes
                .iter()
                .map(move |n| format!("output '{}': {n}", m.target_name))
        })
        .collect();
    let objective = members
        .iter()
        .map(|m| m.report.objective)
        .sum::<Option<f64>>();
    let report = FitReport {
        objective,
        objective_name: first.report.objective_name.clone(),
        jitter_used: members
            .iter()
            .map(|m| m.report.jitter_used)
            .fold(0.0, f64::max),
        notes,
        ..Default::default()
    };
    // The members' spec: the given one resolved for the sample (a basis capped at N).
    let mut model = FittedModel::assemble(
        &first.spec,
        &outputs.samples()[0],
        first.x_scaler.clone(),
        Task::MultiOutput {
            members: Vec::new(),
        },
        report,
    );
    model.target_name = outputs.target_names().join(",");
    model.n_train = first.n_train;
    model.training_digest = first.training_digest.clone();
    model.holdout = first.holdout.clone();
    model.duplicates = first.duplicates;
    model.task = Task::MultiOutput { members };
    model
}
