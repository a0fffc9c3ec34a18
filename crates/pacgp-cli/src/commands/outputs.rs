//! `predict`, `evaluate`, `certify` and `report` on a multi-output model (`fit --target
//! a,b,…`): each output's columns, metrics, certificates and report under its target's name,
//! and the joint certificate of all outputs.

use anyhow::Result;
use pacgp::data::{Dataset, Outputs, TargetRead};
use pacgp::model::FittedModel;
use serde_json::json;

use super::{note_dropped, print_certificate, spinner, ModelData};
use crate::cli::*;

/// Each output's predictions as columns `TARGET_mean`, `TARGET_latent_var`, `TARGET_noisy_var`
/// (and `TARGET_lower`, `TARGET_upper` with `--interval`), outputs in the model's order.
pub(super) fn predict(a: &PredictArgs, model: &FittedModel, read: &ModelData) -> Result<String> {
    let ds = &read.data;
    let slots = super::row_slots(read);
    let members = model.output_members()?;
    let pb = spinner(&format!(
        "predicting {} points, {} outputs",
        ds.n(),
        members.len()
    ));
    let predicted = members
        .iter()
        .map(|m| {
            let p = m.predict_regression(ds.x.as_ref())?;
            let iv = a
                .interval
                .map(|level| m.predict_intervals(ds.x.as_ref(), 1.0 - level))
                .transpose()?;
            Ok((p, iv))
        })
        .collect::<pacgp::Result<Vec<_>>>();
    pb.finish_and_clear();
    let predicted = predicted?;
    if let Some((_, Some(iv))) = predicted.first() {
        eprintln!(
            "note: intervals (each output's): {}",
            iv.statement.statement
        );
    }
    let by_row = |v: &[f64]| {
        super::by_row(&slots, v)
            .into_iter()
            .map(|x| x.copied())
            .collect::<Vec<_>>()
    };
    if a.json {
        let outputs: Vec<_> = members
            .iter()
            .zip(&predicted)
            .map(|(m, (p, iv))| {
                json!({ "target": m.target_name, "mean": by_row(&p.mean),
                        "latent_var": by_row(&p.latent_var), "noisy_var": by_row(&p.noisy_var),
                        "lower": iv.as_ref().map(|iv| by_row(&iv.lower)),
                        "upper": iv.as_ref().map(|iv| by_row(&iv.upper)),
                        "interval": iv.as_ref().map(|iv| &iv.statement) })
            })
            .collect();
        out!("{}", json!({ "n": slots.len(), "outputs": outputs }));
    }
    let parts: &[&str] = if a.interval.is_some() {
        &["mean", "latent_var", "noisy_var", "lower", "upper"]
    } else {
        &["mean", "latent_var", "noisy_var"]
    };
    let header: Vec<String> = members
        .iter()
        .flat_map(|m| {
            let name = super::csv_cell(&m.target_name);
            parts.iter().map(move |p| format!("{name}_{p}"))
        })
        .collect();
    let mut out = header.join(",") + "\n";
    for slot in &slots {
        let row: Vec<String> = predicted
            .iter()
            .flat_map(|(p, iv)| {
                let mut cells = vec![&p.mean, &p.latent_var, &p.noisy_var];
                if let Some(iv) = iv {
                    cells.extend([&iv.lower, &iv.upper]);
                }
                cells
                    .into_iter()
                    .map(|c| slot.map_or(String::new(), |i| c[i].to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        out.push_str(&row.join(","));
        out.push('\n');
    }
    Ok(out)
}

/// Every output's column of `path` read as the model's training file was (with `unknown`'s
/// policy for unseen categories, where given): the outputs, and the rows kept and left out
/// (the same for every output).
fn load_outputs(
    model: &FittedModel,
    path: &std::path::Path,
    unknown: Option<pacgp::data::UnknownCategory>,
) -> Result<(Outputs, ModelData)> {
    let mut coding = model.input_coding.clone();
    if let Some(u) = unknown {
        coding.unknown_category = u;
    }
    let mut samples = Vec::new();
    let mut kept = None;
    for name in model.target_names() {
        let r = pacgp::data::read_for_model(
            path,
            &coding,
            &model.feature_names,
            TargetRead::Number(&name),
        )?;
        let n = r.x.nrows();
        let data = Dataset::with_names(
            r.x,
            r.y.unwrap_or_else(|| vec![0.0; n]),
            model.feature_names.clone(),
            name.clone(),
        )?;
        if kept.is_none() {
            kept = Some(ModelData {
                data: data.clone(),
                lines: r.lines,
                dropped: r.dropped,
            });
        }
        samples.push(data);
    }
    let read = kept.ok_or_else(|| anyhow::anyhow!("a multi-output model without outputs"))?;
    Ok((Outputs::from_samples(samples)?, read))
}

/// Each output's test metrics, one line (or one JSON object) per output.
pub(super) fn evaluate(a: &EvaluateArgs, model: &FittedModel) -> Result<()> {
    let (test, read) = load_outputs(model, &a.data, a.unknown_category)?;
    note_dropped(&read, &a.data, "");
    let pb = spinner(&format!(
        "evaluating {} on {} points, {} outputs",
        model.method(),
        test.n(),
        test.k()
    ));
    let evals = model.evaluate_outputs(&test, a.epsilon);
    pb.finish_and_clear();
    let evals = evals?;
    let targets = model.target_names();
    if a.json {
        let outputs: Vec<_> = targets
            .iter()
            .zip(&evals)
            .map(|(t, e)| {
                let mut v = json!(e);
                v["target"] = json!(t);
                v
            })
            .collect();
        out!("{}", json!({ "outputs": outputs }));
        return Ok(());
    }
    for (t, e) in targets.iter().zip(&evals) {
        let prefix = format!("output '{}': ", pacgp::data::shown(t));
        super::print_regression_metrics(&prefix, e)?;
    }
    Ok(())
}

/// Each output's certificates at δ, then all outputs at once (δ/K each, union bound) with the
/// bound on their mean risk.
pub(super) fn certify(a: &CertifyArgs, model: &FittedModel) -> Result<()> {
    let (sample, read) = load_outputs(model, &a.data, None)?;
    note_dropped(&read, &a.data, "");
    let pb = spinner(&format!(
        "certifying {} on {} points, {} outputs",
        model.method(),
        sample.n(),
        sample.k()
    ));
    let certs = model.certify_outputs(&sample, &a.options());
    pb.finish_and_clear();
    let certs = certs?;
    if let Some(warning) = certs
        .outputs
        .first()
        .and_then(|o| o.certificates.first()?.duplicates?.warning())
    {
        eprintln!("warning: {warning}");
    }
    if a.json {
        out!("{}", serde_json::to_string(&certs)?);
        return Ok(());
    }
    for o in &certs.outputs {
        out!("output '{}':", pacgp::data::shown(&o.target));
        for c in &o.certificates {
            print_certificate(c)?;
        }
    }
    let joint = &certs.joint;
    out!(
        "all {} outputs at once (union bound, δ/{} = {:.4} each): with probability ≥ 1 − {} every bound below holds together",
        joint.outputs.len(),
        joint.outputs.len(),
        joint.delta_per_output,
        joint.delta
    );
    for o in &joint.outputs {
        let bounds: Vec<String> = o
            .certificates
            .iter()
            .map(|c| match c.epsilon {
                Some(eps) => format!("{:.4} (ε = {eps})", c.certificate.bound),
                None => format!("{:.4}", c.certificate.bound),
            })
            .collect();
        out!(
            "  output '{}': {}",
            pacgp::data::shown(&o.target),
            bounds.join(", ")
        );
    }
    for (e, mean) in joint.mean_bound.iter().enumerate() {
        let eps = joint.outputs[0].certificates[e].epsilon;
        out!(
            "  mean over the outputs of the ε-band Gibbs risk{}: at most {mean:.4}",
            eps.map(|v| format!(" (ε = {v})")).unwrap_or_default()
        );
    }
    Ok(())
}

/// The report page on a multi-output model: the joint certificate, then each output's report
/// (certificates at δ, leave-one-out, test metrics and figures, hyperparameters).
pub(super) fn report(a: &ReportArgs, model: &FittedModel, title: &str) -> Result<()> {
    let (sample, read) = load_outputs(model, &a.data, None)?;
    note_dropped(&read, &a.data, "");
    let test = match &a.test {
        Some(path) => {
            let (test, read) = load_outputs(model, path, a.unknown_category)?;
            note_dropped(&read, path, "");
            Some(test)
        }
        None => None,
    };
    let opts = pacgp::model::CertifyOptions {
        loo: a.loo,
        ..Default::default()
    };
    let pb = spinner(&format!(
        "certifying {} on {} points, {} outputs, for the report",
        model.method(),
        sample.n(),
        sample.k()
    ));
    let content = model.report_outputs(&sample, test.as_ref(), &opts);
    pb.finish_and_clear();
    let content = content?;
    crate::output::write(&a.out, &pacgp_report::render_outputs(&content, title))?;
    out!(
        "wrote {} (mean of the {} outputs' joint Gibbs certificates {})",
        a.out.display(),
        sample.k(),
        content
            .joint
            .mean_bound
            .first()
            .map_or("–".into(), |b| format!("{b:.4}"))
    );
    Ok(())
}
