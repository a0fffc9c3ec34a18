//! `predict`, `evaluate` and `certify`: using a saved model.

use anyhow::{Context, Result};
use pacgp::loo::LooMode;
use pacgp::model::CertifyOptions;
use serde_json::json;

use super::{load_for_model, load_model, print_certificate, spinner};
use crate::cli::*;

pub(super) fn predict(a: PredictArgs) -> Result<()> {
    let model = load_model(&a.model)?;
    let ds = load_for_model(&model, &a.data, false)?;
    let pb = spinner(&format!("predicting {} points", ds.n()));
    if let Some(labels) = model.task.labels() {
        let predicted = model.predict_classification(ds.x.as_ref());
        pb.finish_and_clear();
        let (p, m) = predicted?;
        let label: Vec<&str> = p
            .iter()
            .map(|p| labels.decode(if *p >= 0.5 { 1.0 } else { -1.0 }))
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
                json!({ "n": p.len(), "p_positive": p, "label": label, "latent_mean": m.mean, "latent_var": m.var, "decision": decision })
            );
        }
        let mut out = format!("p_{},label,latent_mean,latent_var", labels.positive);
        out.push_str(if decision.is_some() {
            ",decision\n"
        } else {
            "\n"
        });
        for i in 0..p.len() {
            out.push_str(&format!("{},{},{},{}", p[i], label[i], m.mean[i], m.var[i]));
            match &decision {
                Some(d) => out.push_str(&format!(",{}\n", d[i])),
                None => out.push('\n'),
            }
        }
        return write_or_print(&a, out);
    }
    let p = model.predict_regression(ds.x.as_ref());
    pb.finish_and_clear();
    let p = p?;
    if a.json {
        out!(
            "{}",
            json!({ "n": p.mean.len(), "mean": p.mean, "latent_var": p.latent_var, "noisy_var": p.noisy_var })
        );
    }
    let mut out = String::from("mean,latent_var,noisy_var\n");
    for i in 0..p.mean.len() {
        out.push_str(&format!(
            "{},{},{}\n",
            p.mean[i], p.latent_var[i], p.noisy_var[i]
        ));
    }
    write_or_print(&a, out)
}

fn write_or_print(a: &PredictArgs, out: String) -> Result<()> {
    match &a.out {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?
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
    let ds = load_for_model(&model, &a.data, true)?;
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
            let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
            out!(
                "{} test points: RMSE {:.4}  MAE {:.4}  NLPD {:.4}  95% coverage {:.3}",
                e.n,
                f(e.rmse),
                f(e.mae),
                f(e.nlpd),
                f(e.coverage_95)
            );
            if let (Some(eps), Some(g), Some(b)) = (e.epsilon, e.gibbs_risk, e.bayes_risk) {
                out!("ε = {eps}: Gibbs risk {g:.4}, error of the mean predictor {b:.4}");
            }
        }
    }
    Ok(())
}

pub(super) fn certify(a: CertifyArgs) -> Result<()> {
    let model = load_model(&a.model)?;
    let ds = load_for_model(&model, &a.data, true)?;
    let opts = CertifyOptions {
        epsilons: a.epsilon.clone(),
        delta: a.delta,
        term: a.confidence_term,
        predictor: a.predictor,
        loo: a.loo.0,
    };
    // Leave-one-out by refits (SOGP, `--loo exact|both`) can take minutes: show it is working.
    let pb = spinner(&format!(
        "certifying {} on {} points{}",
        model.method(),
        ds.n(),
        match opts.loo {
            Some(LooMode::Exact | LooMode::Both) => " (exact leave-one-out: N refits)",
            Some(_) => " (with the leave-one-out estimate)",
            None => "",
        }
    ));
    let certs = model.certify(&ds, &opts);
    pb.finish_and_clear();
    let certs = certs?;
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
