//! `pacgp fit`: map the flags into the library's fit options, let the library check them and
//! fit, save the model, print a summary. Which options apply to which method, their ranges and
//! defaults are the library's (`pacgp::spec`); nothing here interprets an option.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use pacgp::data::TargetKind;
use pacgp::inference::ConvergenceStatus;
use pacgp::model::{FittedModel, Task};
use pacgp::optim::StopSignal;
use serde_json::json;

use super::check_output_path;
use crate::cli::*;
use crate::output::FitProgress;

/// Fit, save, print a summary. Several comma-separated targets fit one regressor per output.
pub(super) fn fit(a: FitArgs) -> Result<()> {
    if let Some(out) = &a.out {
        check_output_path(out, &[("--data", &a.data.data)])?;
    }
    if let Some(targets) = super::several_targets(&a.data) {
        return fit_outputs(a, &targets);
    }
    let (method, mut options) = (a.method(), a.options());
    // A bound-trained regressor given no ε takes the library's default from the targets.
    let mut epsilon_note = None;
    let mut preloaded = None;
    if method.trains_on_epsilon() && options.epsilon.is_none() {
        let training = super::load_training(&a.data, TargetKind::Number)?;
        (options, epsilon_note) = options.with_default_epsilon(method, &training.data)?;
        preloaded = Some(training);
    }
    // Checked here for the kind of target to read; checked again below on the table, whose
    // one-hot columns may choose the default kernel.
    let target = {
        let spec = options.clone().check(method)?;
        match (spec.multiclass(), spec.is_classifier()) {
            (Some(_), _) => TargetKind::Classes,
            (None, true) => TargetKind::AnyLabels,
            (None, false) => TargetKind::Number,
        }
    };
    let training = match preloaded {
        Some(t) => t,
        None => super::load_training(&a.data, target)?,
    };
    let (spec, kernel_note) = options.check_on_table(method, &training.coding)?;
    let labels = training.training_labels();
    let train = training.data;
    let estimate = pacgp::cost::estimate(&spec, train.n(), train.d(), labels.classes())?;
    let what = format!("fitting {} on {} points", spec.method_name(), train.n());
    if a.estimate_only {
        let shape = (train.n(), train.d(), labels.classes());
        return print_estimate(&a, &spec, shape, &what, &estimate);
    }
    let (model, secs) = run(&a, &what, &estimate, |limit, stop| {
        pacgp::fit::fit_until(&spec, &train, labels, limit, stop)
    })?;
    let notes = epsilon_note.into_iter().chain(kernel_note).collect();
    finish(&a, model, training.coding, notes, secs)
}

/// Several real targets (`--target a,b,…`): one regressor of the method per output, on the
/// same inputs. A bound-trained method needs `--epsilon` (one ε in every target's units).
fn fit_outputs(a: FitArgs, targets: &[pacgp::data::TargetSpec]) -> Result<()> {
    let (method, options) = (a.method(), a.options());
    if method.trains_on_epsilon() && options.epsilon.is_none() {
        return Err(pacgp::Error::Unsupported(format!(
            "{method} trains on the ε-band loss: with several targets give --epsilon (one ε, in every target's units), or fit each target on its own"
        ))
        .into());
    }
    let read = pacgp::data::read_outputs(&a.data.data, &super::csv_options(&a.data)?, targets)?;
    for note in &read.notes {
        eprintln!("note: {note}");
    }
    let (spec, kernel_note) = options.check_on_table(method, &read.coding)?;
    let outputs = &read.outputs;
    let threads = rayon::current_num_threads();
    let estimate =
        pacgp::cost::estimate_outputs(&spec, outputs.n(), outputs.d(), outputs.k(), threads)?;
    let what = format!(
        "fitting {} on {} points, each of {} outputs",
        spec.method_name(),
        outputs.n(),
        outputs.k()
    );
    if a.estimate_only {
        let shape = (outputs.n(), outputs.d(), 2);
        return print_estimate(&a, &spec, shape, &what, &estimate);
    }
    let (model, secs) = run(&a, &what, &estimate, |limit, stop| {
        pacgp::fit::fit_outputs_until(&spec, outputs, limit, stop)
    })?;
    finish(
        &a,
        model,
        read.coding,
        kernel_note.into_iter().collect(),
        secs,
    )
}

/// `--estimate-only`: the estimate a fit would announce, on stdout (one JSON object with
/// `--json`), after the memory check the fit would make (rows, inputs, classes in `shape`).
fn print_estimate(
    a: &FitArgs,
    spec: &pacgp::spec::CheckedFitSpec,
    (n, d, k): (usize, usize, usize),
    what: &str,
    estimate: &pacgp::cost::Estimate,
) -> Result<()> {
    let (resolved, _) = spec.for_sample(n)?;
    pacgp::cost::check_fits(&resolved, n, d, k, a.memory_limit.unwrap_or_default())?;
    let threads = rayon::current_num_threads();
    if a.json {
        let value = json!({
            "fit": what,
            "threads": threads,
            "wall_seconds": estimate.wall_seconds(threads),
            "cpu_seconds": estimate.work.cpu_seconds(),
            "gflop": estimate.work.flops() / 1e9,
            "peak_bytes": estimate.bytes,
        });
        println!("{value}");
    } else {
        println!("estimate: {what}: {}", estimate.sentence(threads));
    }
    Ok(())
}

/// Run a fit under the progress bar and the stop signal (`--time-limit`, Ctrl-C) within
/// `--memory-limit`: the model and the seconds it took.
fn run(
    a: &FitArgs,
    what: &str,
    estimate: &pacgp::cost::Estimate,
    fit: impl FnOnce(pacgp::memory::MemoryLimit, &StopSignal) -> pacgp::Result<FittedModel>,
) -> Result<(FittedModel, f64)> {
    let counter = Arc::new(AtomicU64::new(0));
    let progress = FitProgress::start(
        what,
        estimate,
        rayon::current_num_threads(),
        Arc::clone(&counter),
    );
    let t0 = Instant::now();
    let limit = a.memory_limit.unwrap_or_default();
    let stop = stop_signal(a.time_limit)?.with_progress(counter);
    let fitted = fit(limit, &stop);
    progress.finish();
    Ok((fitted?, t0.elapsed().as_secs_f64()))
}

/// Keep the input coding and the front end's notes in the model, save it, and say on stderr
/// what the fit noted and warned, then print the summary.
fn finish(
    a: &FitArgs,
    mut model: FittedModel,
    coding: pacgp::data::InputCoding,
    notes: Vec<String>,
    secs: f64,
) -> Result<()> {
    model.report.notes.extend(notes);
    model.input_coding = coding;
    model.save(a.out())?;
    for note in model.x_scaler.notes() {
        eprintln!("note: {note}");
    }
    for note in model.report.notes.iter().chain(&grid_edge_notes(&model)) {
        eprintln!("note: {note}");
    }
    // A stopped fit's warning below says what the optimiser's note would.
    let stopped = model.report.stopped_early.is_some();
    if let Some(note) = model.report.optimiser.as_ref().and_then(|r| r.note()) {
        if !stopped {
            eprintln!("note: {note}");
        }
    }
    if let Some(warning) = model.duplicates.and_then(|d| d.warning()) {
        eprintln!("warning: {warning}");
    }
    if let Some(stopped) = &model.report.stopped_early {
        eprintln!("warning: {}", stopped.sentence(TIME_LIMIT_FLAG));
    }
    print_summary(a, &model, secs)
}

/// How the command line names the time limit in the stopped-early sentence.
pub(super) const TIME_LIMIT_FLAG: &str = "--time-limit";

/// The fit's stop signal: `--time-limit` from now, and an interrupt flag that the first Ctrl-C
/// sets (the fit stops at its best point so far and the model is saved); a second Ctrl-C
/// quits at once, saving nothing (exit status 130, the shell's for SIGINT).
fn stop_signal(time_limit: Option<Duration>) -> Result<StopSignal> {
    let flag = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&flag);
    ctrlc::set_handler(move || {
        if seen.swap(true, Ordering::SeqCst) {
            eprintln!("interrupted again: quitting without saving the model");
            std::process::exit(130);
        }
        eprintln!(
            "interrupted: stopping the fit at its best point so far to save the model (Ctrl-C again quits without saving)"
        );
    })?;
    let stop = StopSignal::never().with_interrupt(flag);
    Ok(match time_limit {
        Some(limit) => stop.with_time_limit(limit),
        None => stop,
    })
}

/// Hyperparameters sitting on the edge of the grid they were snapped onto: the optimum may
/// lie outside it.
pub(super) fn grid_edge_notes(model: &FittedModel) -> Vec<String> {
    let Some(grid) = model.spec.grid() else {
        return Vec::new();
    };
    let kernels: Vec<(String, &pacgp::kernel::Kernel)> = match member_names(model) {
        Some(names) => names
            .into_iter()
            .zip(model.kernels())
            .map(|(name, k)| (format!("{name}: "), k))
            .collect(),
        None => vec![(String::new(), model.kernel())],
    };
    kernels
        .into_iter()
        .flat_map(|(which, k)| {
            k.params()
                .into_iter()
                .zip(k.param_names())
                .filter(|(t, _)| grid.at_edge(*t))
                .map(move |(t, name)| {
                    format!(
                        "{which}{name} = {t} (ln space) sits on the edge of the hyperparameter grid [{}, {}]: the optimum may lie beyond it",
                        grid.min_log, grid.max_log
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The members of a one-vs-rest or multi-output model in words (`class 'a'`, `output 'y'`),
/// in their order; `None` for a model with one posterior or the softmax model's shared one.
fn member_names(model: &FittedModel) -> Option<Vec<String>> {
    match &model.task {
        Task::OneVsRest { classes, members } => Some(
            (0..members.len())
                .map(|c| format!("class '{}'", pacgp::data::shown(classes.decode(c))))
                .collect(),
        ),
        Task::MultiOutput { members } => Some(
            members
                .iter()
                .map(|m| format!("output '{}'", pacgp::data::shown(&m.target_name)))
                .collect(),
        ),
        _ => None,
    }
}

/// The kernel of every class of a one-vs-rest model, in words (its classes' order); the
/// softmax model's kernel is shared (the model's own).
fn class_kernels(model: &FittedModel) -> Option<Vec<String>> {
    match &model.task {
        Task::OneVsRest { members, .. } => {
            Some(members.iter().map(|m| m.kernel().describe()).collect())
        }
        _ => None,
    }
}

/// Each output of a multi-output model: its target, kernel, noise and objective.
fn output_summaries(model: &FittedModel) -> Option<Vec<serde_json::Value>> {
    let members = model.output_members().ok()?;
    Some(
        members
            .iter()
            .map(|m| {
                json!({
                    "target": m.target_name,
                    "kernel": m.kernel().describe(),
                    "noise_variance": noise_of(m),
                    "objective": m.report.objective,
                })
            })
            .collect(),
    )
}

/// A single-output regressor's noise variance σ² (standardised targets).
fn noise_of(model: &FittedModel) -> Option<f64> {
    match &model.task {
        Task::Regression { noise_variance, .. } => Some(*noise_variance),
        _ => None,
    }
}

/// The classifier split prior's record of a model, if it has one.
fn split_classifier(model: &FittedModel) -> Option<&pacgp::model::ClassifierSplitRecord> {
    match &model.task {
        Task::Classification {
            split_prior: Some(r),
            ..
        } => Some(r),
        _ => None,
    }
}

fn print_summary(a: &FitArgs, model: &FittedModel, secs: f64) -> Result<()> {
    let noise = noise_of(model);
    let inf = model.report.inference.as_ref();
    let opt = model.report.optimiser.as_ref();
    if a.json {
        let summary = json!({
            "method": model.method().to_string(),
            "n": model.n_train,
            "d": model.feature_names.len(),
            "kernel": model.kernel().describe(),
            "noise_variance": noise,
            "likelihood": match &model.task { Task::Classification { likelihood, .. } => Some(likelihood.name()), _ => None },
            "objective": model.report.objective,
            "objective_name": model.report.objective_name,
            "penalty_terms": model.choices().ok(),
            "labels": model.task.labels().map(|l| json!({ "negative": l.negative, "positive": l.positive })),
            "multiclass": model.spec.multiclass(),
            "classes": model.classes().map(|c| &c.labels),
            "class_kernels": class_kernels(model),
            "targets": model.target_names(),
            "outputs": output_summaries(model),
            "inputs": model.feature_names,
            "iterations": opt.map(|r| r.iterations as usize).or(inf.map(|r| r.iterations)),
            "evaluations": opt.map(|r| r.evaluations),
            "unsnapped_objective": opt.map(|r| r.value),
            "termination": opt.map(|r| r.termination),
            "status": inf.map(|r| r.status),
            "notes": inf.map(|r| r.notes.clone()),
            "jitter_used": model.report.jitter_used,
            "duplicates": model.duplicates,
            "split_prior": split_classifier(model).map(|r| json!({
                "fraction": r.fraction,
                "seed": r.seed,
                "n_a": r.n_a,
                "n_b": r.n_b,
                "lambda": r.lambda,
                "prior_scale": r.prior_scale,
                "mean_scale": r.mean_scale,
                "prior_kernel": r.kernel_a.describe(),
                "swapped": r.swapped,
                "menu": r.menu,
            })),
            "stopped_early": model.report.stopped_early.map(|s| {
                let mut record = json!(s);
                record["statement"] = json!(s.sentence(TIME_LIMIT_FLAG));
                record
            }),
            "fit_seconds": secs,
            "model": a.out().display().to_string(),
        });
        out!("{summary}");
        return Ok(());
    }
    out!(
        "fitted {}{} on {} points × {} inputs{} in {secs:.2} s",
        model.method(),
        model
            .spec
            .multiclass()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default(),
        model.n_train,
        model.feature_names.len(),
        model
            .output_members()
            .map(|m| {
                let kernel = match model.spec.shares_kernel() {
                    true => ", one kernel shared",
                    false => "",
                };
                format!(", {} outputs (one regressor each{kernel})", m.len())
            })
            .unwrap_or_default()
    );
    if let Some(classes) = model.classes() {
        let shown: Vec<String> = classes
            .labels
            .iter()
            .map(|l| format!("'{}'", pacgp::data::shown(l)))
            .collect();
        out!("  classes: {} ({} classes)", shown.join(", "), classes.k());
    }
    if let Ok(members) = model.output_members() {
        for m in members {
            out!(
                "  output '{}': kernel (standardised inputs; θ = ln value) {}",
                pacgp::data::shown(&m.target_name),
                m.kernel().describe()
            );
            if let Some(v) = noise_of(m) {
                out!("    noise variance σ² (standardised targets): {v:.4}");
            }
        }
    }
    match class_kernels(model) {
        _ if model.output_members().is_ok() => {}
        Some(kernels) => {
            for (label, k) in model
                .classes()
                .map(|c| &c.labels[..])
                .unwrap_or(&[])
                .iter()
                .zip(kernels)
            {
                out!(
                    "  kernel of class '{}' against the rest (standardised inputs; θ = ln value): {k}",
                    pacgp::data::shown(label)
                );
            }
        }
        None => out!(
            "  kernel (on standardised inputs; θ = ln value): {}",
            model.kernel().describe()
        ),
    }
    if let Some(l) = model.task.labels() {
        out!(
            "  labels: '{}' → −1, '{}' → +1 ({})",
            pacgp::data::shown(&l.negative),
            pacgp::data::shown(&l.positive),
            if a.data.positive.is_some() {
                "--positive"
            } else {
                "the second in sorted order; --positive LABEL chooses"
            }
        );
    }
    if let Some(v) = noise {
        out!("  noise variance σ² (standardised targets): {v:.4}");
    }
    let explain = match model.report.objective_name.as_str() {
        "log_marginal_likelihood" => "log marginal likelihood (higher is better)",
        "elbo" => "evidence lower bound (higher is better)",
        "svm_dual_objective" => "SVM dual objective (a bias fitted from the data: no certificate)",
        "zhang_primal_objective" => {
            "Zhang's regularised risk R at the refit weights (lower is better)"
        }
        "pac_bayes_bound_multiclass_gibbs_error" => {
            "PAC-Bayes bound on the multi-class Gibbs classification error (run certify for its parts)"
        }
        name if name.starts_with("pac_bayes_bound_gibbs_error") => {
            "PAC-Bayes bound on the Gibbs classification error (run certify for its parts)"
        }
        name if name.starts_with("pac_bayes_bound") => {
            "PAC-Bayes bound on the ε-band Gibbs risk (run certify for its parts)"
        }
        other => other,
    };
    out!(
        "  {explain}{}: {:.4}",
        if model.output_members().is_ok() {
            ", summed over the outputs"
        } else {
            ""
        },
        model.report.objective.unwrap_or(f64::NAN)
    );
    if let Some(r) = split_classifier(model) {
        out!(
            "  split prior: part A {} points (F = {}, seed {}{}), bound on part B ({} points); prior covariance scale t = {}{}",
            r.n_a,
            r.fraction,
            r.seed,
            if r.swapped { ", parts swapped" } else { "" },
            r.n_b,
            r.prior_scale,
            r.lambda
                .map(|l| format!("; Catoni λ = {l:.4} fixed on part A"))
                .unwrap_or_default()
        );
    }
    if let Some(r) = opt {
        out!(
            "  optimiser: {} iterations, {} evaluations, stopped: {}",
            r.iterations,
            r.evaluations,
            r.message
        );
    }
    if let Some(r) = inf {
        out!(
            "  inference: {} iterations, {}{}",
            r.iterations,
            match r.status {
                ConvergenceStatus::Converged => "converged",
                ConvergenceStatus::MaxIterations => "stopped at the iteration limit",
            },
            if r.notes.is_empty() {
                String::new()
            } else {
                format!("; {}", r.notes.join("; "))
            }
        );
    }
    if let Some(stopped) = &model.report.stopped_early {
        out!("  {}", stopped.sentence(TIME_LIMIT_FLAG));
    }
    if model.report.jitter_used > 0.0 {
        out!(
            "  note: jitter {:e} was added to the diagonal to factorise",
            model.report.jitter_used
        );
    }
    out!("  saved to {}", a.out().display());
    Ok(())
}
