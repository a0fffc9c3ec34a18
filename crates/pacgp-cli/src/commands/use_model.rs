//! `predict`, `evaluate` and `certify`: using a saved model.

use anyhow::{Context, Result};
use pacgp::loo::LooMode;
use serde_json::json;

use super::{
    by_row, check_output_path, csv_cell, load_for_model, load_model, note_dropped,
    print_certificate, row_slots, spinner,
};
use crate::cli::*;

pub(super) fn predict(a: PredictArgs) -> Result<()> {
    if let Some(out) = &a.out {
        check_output_path(out, &[("--model", &a.model), ("--data", &a.data)])?;
    }
    let model = load_model(&a.model)?;
    let read = load_for_model(&model, &a.data, false, a.unknown_category)?;
    note_dropped(&read, &a.data, "; their output rows are empty");
    let ds = &read.data;
    let slots = row_slots(&read);
    if model.is_classifier() && a.interval.is_some() {
        anyhow::bail!(
            "--interval gives prediction intervals of a regressor; '{}' is a classifier",
            model.method()
        );
    }
    if model.output_members().is_ok() && a.set.is_none() {
        let out = super::outputs::predict(&a, &model, &read)?;
        return write_or_print(&a, out);
    }
    let pb = spinner(&format!("predicting {} points", ds.n()));
    // The library refuses sets of a regressor or of a classifier fitted without them.
    let sets = a
        .set
        .map(|level| model.predict_sets(ds.x.as_ref(), 1.0 - level))
        .transpose();
    let sets = match sets {
        Ok(s) => s.map(|s| (s.joined("|"), s.statement)),
        Err(e) => {
            pb.finish_and_clear();
            return Err(e.into());
        }
    };
    if let Some((_, statement)) = &sets {
        eprintln!("note: sets: {}", statement.statement);
    }
    if let Some(classes) = model.classes() {
        let predicted = model.predict_classes(ds.x.as_ref());
        pb.finish_and_clear();
        return predict_classes(&a, classes, &predicted?, &slots, sets.as_ref());
    }
    if let Some(labels) = model.task.labels() {
        let predicted = model.predict_classification(ds.x.as_ref());
        pb.finish_and_clear();
        let (p, m) = predicted?;
        let set = sets.as_ref().map(|s| &s.0);
        let label: Vec<&str> = model
            .labels_of(&m)?
            .iter()
            .map(|s| labels.decode(*s))
            .collect();
        // An SVM's decision value f_SVM(x) is its posterior mean over μ.
        let decision: Option<Vec<f64>> = match &model.task {
            pacgp::model::Task::Svm { mu, bias, .. } => {
                Some(m.mean.iter().map(|v| v / mu + bias).collect())
            }
            _ => None,
        };
        if a.json {
            out!(
                "{}",
                json!({ "n": slots.len(), "p_positive": by_row(&slots, &p), "label": by_row(&slots, &label),
                        "latent_mean": by_row(&slots, &m.mean), "latent_var": by_row(&slots, &m.var),
                        "decision": decision.as_ref().map(|d| by_row(&slots, d)),
                        "set": set.map(|s| by_row(&slots, s)),
                        "sets": sets.as_ref().map(|s| &s.1) })
            );
        }
        let mut out = format!("p_{},label,latent_mean,latent_var", labels.positive);
        if decision.is_some() {
            out.push_str(",decision");
        }
        if set.is_some() {
            out.push_str(",set");
        }
        out.push('\n');
        for slot in &slots {
            let Some(i) = *slot else {
                let columns = 4 + usize::from(decision.is_some()) + usize::from(set.is_some());
                out.push_str(&format!("{}\n", ",".repeat(columns - 1)));
                continue;
            };
            out.push_str(&format!("{},{},{},{}", p[i], label[i], m.mean[i], m.var[i]));
            if let Some(d) = &decision {
                out.push_str(&format!(",{}", d[i]));
            }
            if let Some(s) = set {
                out.push_str(&format!(",{}", csv_cell(&s[i])));
            }
            out.push('\n');
        }
        return write_or_print(&a, out);
    }
    let p = model.predict_regression(ds.x.as_ref());
    let intervals = a
        .interval
        .map(|level| model.predict_intervals(ds.x.as_ref(), 1.0 - level))
        .transpose();
    pb.finish_and_clear();
    let (p, intervals) = (p?, intervals?);
    if let Some(iv) = &intervals {
        eprintln!("note: intervals: {}", iv.statement.statement);
    }
    if a.json {
        out!(
            "{}",
            json!({ "n": slots.len(), "mean": by_row(&slots, &p.mean), "latent_var": by_row(&slots, &p.latent_var),
                    "noisy_var": by_row(&slots, &p.noisy_var),
                    "lower": intervals.as_ref().map(|iv| by_row(&slots, &iv.lower)),
                    "upper": intervals.as_ref().map(|iv| by_row(&slots, &iv.upper)),
                    "interval": intervals.as_ref().map(|iv| &iv.statement) })
        );
    }
    let mut out = String::from("mean,latent_var,noisy_var");
    out.push_str(if intervals.is_some() {
        ",lower,upper\n"
    } else {
        "\n"
    });
    for slot in &slots {
        match (*slot, &intervals) {
            (Some(i), None) => out.push_str(&format!(
                "{},{},{}\n",
                p.mean[i], p.latent_var[i], p.noisy_var[i]
            )),
            (Some(i), Some(iv)) => out.push_str(&format!(
                "{},{},{},{},{}\n",
                p.mean[i], p.latent_var[i], p.noisy_var[i], iv.lower[i], iv.upper[i]
            )),
            (None, None) => out.push_str(",,\n"),
            (None, Some(_)) => out.push_str(",,,,\n"),
        }
    }
    write_or_print(&a, out)
}

/// A classifier's prediction sets: each row's labels joined by `|`, and their statement.
type Sets = (Vec<String>, pacgp::conformal::IntervalStatement);

/// A multi-class model's predictions: one probability column per class (`p_LABEL`, in the
/// model's class order) and the predicted label, then the prediction set with `--set`;
/// `--json` adds the per-class latent means.
fn predict_classes(
    a: &PredictArgs,
    classes: &pacgp::data::ClassLabels,
    p: &pacgp::model::ClassPrediction,
    slots: &[Option<usize>],
    sets: Option<&Sets>,
) -> Result<()> {
    let k = classes.k();
    let rows: Vec<Vec<f64>> = (0..p.probabilities.nrows())
        .map(|i| (0..k).map(|j| p.probabilities[(i, j)]).collect())
        .collect();
    let label: Vec<&str> = p.labels.iter().map(|&c| classes.decode(c)).collect();
    if a.json {
        let latent: Vec<Vec<f64>> = (0..rows.len())
            .map(|i| p.latent.iter().map(|m| m.mean[i]).collect())
            .collect();
        out!(
            "{}",
            json!({ "n": slots.len(), "classes": classes.labels, "probabilities": by_row(slots, &rows),
                    "label": by_row(slots, &label), "latent_mean": by_row(slots, &latent),
                    "set": sets.map(|s| by_row(slots, &s.0)), "sets": sets.map(|s| &s.1) })
        );
    }
    let mut out: Vec<String> = classes
        .labels
        .iter()
        .map(|l| csv_cell(&format!("p_{l}")))
        .collect();
    out.push("label".into());
    if sets.is_some() {
        out.push("set".into());
    }
    let mut text = out.join(",") + "\n";
    for slot in slots {
        match *slot {
            Some(i) => {
                let cells: Vec<String> = rows[i].iter().map(|v| v.to_string()).collect();
                text.push_str(&format!("{},{}", cells.join(","), csv_cell(label[i])));
                if let Some(s) = sets {
                    text.push_str(&format!(",{}", csv_cell(&s.0[i])));
                }
                text.push('\n');
            }
            None => text.push_str(&format!(
                "{}\n",
                ",".repeat(k + usize::from(sets.is_some()))
            )),
        }
    }
    write_or_print(a, text)
}

fn write_or_print(a: &PredictArgs, out: String) -> Result<()> {
    match &a.out {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))?
        }
        None if !a.json => {
            use std::io::Write as _;
            std::io::stdout().lock().write_all(out.as_bytes())?
        }
        None => {}
    }
    Ok(())
}

pub(super) fn evaluate(a: EvaluateArgs) -> Result<()> {
    let model = load_model(&a.model)?;
    if model.output_members().is_ok() {
        return super::outputs::evaluate(&a, &model);
    }
    let read = load_for_model(&model, &a.data, true, a.unknown_category)?;
    note_dropped(&read, &a.data, "");
    let ds = read.data;
    let pb = spinner(&format!(
        "evaluating {} on {} points",
        model.method(),
        ds.n()
    ));
    let e = model.evaluate(&ds, a.epsilon);
    pb.finish_and_clear();
    let e = e?;
    if a.json {
        out!("{}", serde_json::to_string(&e)?);
    } else {
        if let (Some(err), Some(ll), Some(g)) = (e.error_rate, e.log_loss, e.gibbs_risk) {
            out!(
                "{} test points: error rate {err:.4}  Gibbs error {g:.4}  log loss {ll:.4}",
                e.n
            );
        } else {
            super::print_regression_metrics("", &e)?;
        }
    }
    Ok(())
}

pub(super) fn certify(a: CertifyArgs) -> Result<()> {
    let model = load_model(&a.model)?;
    if model.output_members().is_ok() {
        return super::outputs::certify(&a, &model);
    }
    let read = load_for_model(&model, &a.data, true, None)?;
    note_dropped(&read, &a.data, "");
    let ds = read.data;
    let opts = a.options();
    // Leave-one-out by refits (SOGP, `--loo exact|both`) can take minutes: show it is working.
    let pb = spinner(&format!(
        "certifying {} on {} points{}",
        model.method(),
        ds.n(),
        match model.spec.leave_one_out(opts.loo) {
            Ok(Some(LooMode::Exact | LooMode::Both)) => " (exact leave-one-out: N refits)",
            Ok(Some(_)) => " (with the leave-one-out estimate)",
            _ => "",
        }
    ));
    let certs = model.certify(&ds, &opts);
    pb.finish_and_clear();
    let certs = certs?;
    if let Some(warning) = certs.first().and_then(|c| c.duplicates?.warning()) {
        eprintln!("warning: {warning}");
    }
    if a.json {
        match certs.as_slice() {
            [one] => out!("{}", serde_json::to_string(one)?),
            many => out!("{}", json!({ "certificates": many })),
        }
    } else {
        for c in &certs {
            print_certificate(c)?;
        }
    }
    Ok(())
}
