//! `pacgp demo`: the main job on the data shipped in `data/`.

use std::time::Instant;

use anyhow::{Context, Result};
use pacgp::data::{self, CsvOptions, Dataset};
use pacgp::kernel::Kernel;
use pacgp::model::CertifyOptions;
use pacgp::spec::{CheckedFitSpec, FitOptions, MethodName};
use serde_json::json;

use super::{print_certificate, spinner};
use crate::cli::*;

/// The demo's gpr spec: the given kernel, ε stored.
fn gpr_spec(kernel: &str, epsilon: f64) -> Result<CheckedFitSpec> {
    let o = FitOptions {
        kernel: Some(kernel.into()),
        epsilon: Some(epsilon),
        ..Default::default()
    };
    Ok(o.check(MethodName::Gpr)?)
}

/// The main job on the shipped data: GP regression on boston (80/20 split) with two kernels
/// and on Snelson's 1-D set; each model evaluated on held-out data and certified.
pub(super) fn demo(mut a: DemoArgs) -> Result<()> {
    a.data_dir = crate::output::data_dir(&a.data_dir);
    let boston = data::load_csv(
        a.data_dir.join("boston-housing/boston.csv"),
        &CsvOptions::default(),
    )
    .context("loading boston (pass --data-dir if the shipped data/ folder moved)")?;
    let (tr, te) = data::train_test_split(boston.n(), 0.2, 0)?;
    let (train, test) = (boston.subset(&tr), boston.subset(&te));
    let snelson = data::load_csv(
        a.data_dir.join("snelson-1d/snelson_train.csv"),
        &CsvOptions::default(),
    )?;
    let (s_tr, s_te) = data::train_test_split(snelson.n(), 0.2, 0)?;
    let (s_train, s_test) = (snelson.subset(&s_tr), snelson.subset(&s_te));
    // ε in target units: $3k for boston's MEDV (in $1000s), 0.3 for Snelson's y.
    let cases: [(&str, &str, &Dataset, &Dataset, f64); 3] = [
        ("boston", "se-ard", &train, &test, 3.0),
        ("boston", "matern52-ard", &train, &test, 3.0),
        ("snelson", "se", &s_train, &s_test, 0.3),
    ];
    let mut rows = Vec::new();
    for (name, kernel, train, test, eps) in cases {
        let pb = spinner(&format!("{name}: fitting gpr with {kernel}"));
        let t0 = Instant::now();
        let model = pacgp::fit::fit(&gpr_spec(kernel, eps)?, train, None)?;
        let secs = t0.elapsed().as_secs_f64();
        pb.finish_and_clear();
        let ev = model.evaluate(test, None)?;
        let cert = model.certify(train, &CertifyOptions::default())?.remove(0);
        if !a.json {
            out!(
                "== {name} ({} train / {} test), gpr with {kernel}, fitted in {secs:.2} s",
                train.n(),
                test.n()
            );
            out!("  kernel: {}", model.kernel().describe());
            for note in super::fit::grid_edge_notes(&model) {
                out!("  note: {note}");
            }
            out!(
                "  test: RMSE {:.4}  NLPD {:.4}  95% coverage {:.3}  ε-band Gibbs risk {:.4}",
                ev.rmse.unwrap_or(f64::NAN),
                ev.nlpd.unwrap_or(f64::NAN),
                ev.coverage_95.unwrap_or(f64::NAN),
                ev.gibbs_risk.unwrap_or(f64::NAN)
            );
            print_certificate(&cert)?;
        }
        rows.push(json!({ "dataset": name, "kernel": kernel, "fit_seconds": secs, "evaluation": ev, "certificate": cert }));
    }
    // A classifier: breast cancer (Wisconsin), Laplace with the kernel chosen by the bound.
    let bc_opts = CsvOptions {
        drop_columns: vec!["sample_code_number".into()],
        ..Default::default()
    };
    let (bc, labels) = data::load_csv_classification(
        a.data_dir
            .join("breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv"),
        &bc_opts,
    )?;
    let (tr, te) = data::train_test_split(bc.n(), 0.2, 0)?;
    let (train, test) = (bc.subset(&tr), bc.subset(&te));
    let pb = spinner("breast cancer: fitting a Laplace GP classifier");
    let t0 = Instant::now();
    let spec = FitOptions::default().check(MethodName::Laplace)?;
    let model = pacgp::fit::fit(&spec, &train, Some(labels))?;
    let secs = t0.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let ev = model.evaluate(&test, None)?;
    let cert = model.certify(&train, &CertifyOptions::default())?.remove(0);
    if !a.json {
        out!("== breast cancer ({} train / {} test), Laplace GP classifier (probit), fitted in {secs:.2} s", train.n(), test.n());
        out!(
            "  kernel chosen by the bound: {}",
            model.kernel().describe()
        );
        out!(
            "  test: error rate {:.4}  Gibbs error {:.4}  log loss {:.4}",
            ev.error_rate.unwrap_or(f64::NAN),
            ev.gibbs_risk.unwrap_or(f64::NAN),
            ev.log_loss.unwrap_or(f64::NAN)
        );
        print_certificate(&cert)?;
    }
    rows.push(json!({ "dataset": "breast-cancer-wisconsin", "kernel": model.kernel().describe(), "fit_seconds": secs, "evaluation": ev, "certificate": cert }));
    if a.json {
        out!("{}", json!({ "demo": rows }));
    } else {
        if let Some(note) = candidate_edge_note(model.kernel(), train.d()) {
            out!("  note: {note}");
        }
        explain()?;
    }
    Ok(())
}

/// A note when the classifier's chosen lengthscale is the shortest or longest of the nine
/// candidates: the best kernel may lie beyond what was offered.
fn candidate_edge_note(chosen: &Kernel, d: usize) -> Option<String> {
    let ln_l = |k: &Kernel| k.params().last().copied();
    let offered: Vec<f64> = pacgp::fit::classifier_candidates(d)
        .iter()
        .filter_map(ln_l)
        .collect();
    let l = ln_l(chosen)?;
    let (lo, hi) = offered
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &t| {
            (a.min(t), b.max(t))
        });
    let edge = if (l - hi).abs() < 1e-9 {
        "longest"
    } else if (l - lo).abs() < 1e-9 {
        "shortest"
    } else {
        return None;
    };
    Some(format!(
        "l = {:.4} is the {edge} lengthscale among the candidates ({:.4} to {:.4}): a kernel beyond that range might do better (try fit --select ml2)",
        l.exp(),
        lo.exp(),
        hi.exp()
    ))
}

/// One plain line per term the demo prints, so that every number above can be read.
const GLOSSARY: &[(&str, &str)] = &[
    ("kernel σ²·SE(l=…)", "the prior over functions: signal variance σ² times a squared-exponential (or Matérn) correlation; each l is how far (in sd of that input) an input must move for the output to change, and an l in the thousands means that input is ignored"),
    ("RMSE", "root mean squared error of the predicted mean on the held-out test rows, in the target's units (boston: $1000s)"),
    ("NLPD", "negative log predictive density of the test targets: lower is better, and it punishes error bars that are too narrow or too wide"),
    ("95% coverage", "share of test targets inside the 95% predictive interval; near 0.95 means the error bars are honest"),
    ("ε-band Gibbs risk", "the chance that a function drawn at random from the posterior misses the target by more than ε; the certificate bounds this"),
    ("with probability ≥ 1 − δ … at most B", "the PAC-Bayes certificate: unless the training sample was one of the unlucky ones (chance δ), the risk on new data from the same source is at most B"),
    ("bounded predictor", "exactly which random predictor the bound is about; 'standardised units' are the target divided by its standard deviation, so ε is rescaled there"),
    ("empirical risk", "the same Gibbs risk measured on the training rows"),
    ("KL(Q‖P) nats", "how far the fitted posterior Q moved from the prior P, in nats (natural-log units); the bound pays for it, divided by N"),
    ("penalty nats", "the grid penalty: the price of choosing the hyperparameters from the data, ln of the number of grid values each could take, summed over them (ln 9 for the nine candidate kernels of a classifier)"),
    ("confidence term", "ln(2√N/δ) (Maurer's), added to KL and penalty before dividing by N: the part that makes more data give a tighter bound"),
    ("N", "the number of training rows the certificate holds for"),
    ("Pinsker form", "a simpler, looser version of the same bound (empirical risk + √(complexity/2)); above 1 it says nothing"),
    ("leave-one-out", "each training row predicted by the model refitted without it (in closed form, no refits): a test-error estimate from the training data alone"),
    ("error rate / Gibbs error", "share of test rows misclassified by the mean prediction / by a classifier drawn at random from the posterior (the one the certificate bounds)"),
    ("deployed predictor … at most B", "a second certificate, on what predict returns (the sign of the posterior mean; a regressor's mean within ε), from the same posterior and rows: the Gibbs risk plus how often two draws disagree, or the Gibbs-type margin risk divided by its least chance; it costs more than the Gibbs certificate at small N and nears it as N grows"),
    ("log loss", "mean −ln p(true label) on the test rows: lower is better, and confident mistakes cost most"),
    ("leave-one-out error (cavity)", "the leave-one-out error estimated from the cavity distributions of the fitted approximation, without refitting"),
    ("θ on the grid's edge", "fit prints a note when a hyperparameter (ln space) lands on the edge of the grid it is rounded to: the best value may lie beyond it, though the bound still holds for the one used"),
];

/// Print [`GLOSSARY`] after the results.
fn explain() -> Result<()> {
    out!("");
    out!("What the numbers mean:");
    for (term, meaning) in GLOSSARY {
        out!("  {term}: {meaning}");
    }
    Ok(())
}
