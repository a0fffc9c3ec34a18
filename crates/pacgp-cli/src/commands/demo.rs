//! `pacgp demo`: the main job on the data shipped in `data/`.

use std::time::Instant;

use anyhow::{Context, Result};
use pacgp::bounds::ConfidenceTerm;
use pacgp::data::{self, CsvOptions, Dataset};
use pacgp::inference::InferenceMethod;
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::model::{fit_gpr, CertifyOptions, ClassifierOptions, GibbsPredictor, GprOptions};
use pacgp::optim::Restarts;
use pacgp::regression::exact::MlConfig;
use serde_json::json;

use super::{print_certificate, spinner};
use crate::cli::*;

/// gpr settings of the demo: the given kernel, no restarts, ε stored.
fn gpr_options(
    kernel: &str,
    d: usize,
    restarts: usize,
    seed: u64,
    epsilon: Option<f64>,
) -> Result<GprOptions> {
    Ok(GprOptions {
        kernel: Some(Kernel::from_spec(kernel, d)?),
        ml: MlConfig {
            restarts: Restarts {
                count: restarts,
                seed,
                ..Default::default()
            },
            ..Default::default()
        },
        epsilon,
        ..Default::default()
    })
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
        let model = fit_gpr(train, &gpr_options(kernel, train.d(), 0, 0, Some(eps))?)?;
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
            out!("  kernel: {}", model.posterior.kernel.describe());
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
    let opts = ClassifierOptions {
        method: InferenceMethod::Laplace(Default::default()),
        likelihood: Likelihood::probit(),
        delta: 0.01,
        term: ConfidenceTerm::Maurer,
        selection: Default::default(),
        predictor: GibbsPredictor::Latent,
    };
    let model = pacgp::model::fit_classifier(&train, labels, &opts)?;
    let secs = t0.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let ev = model.evaluate(&test, None)?;
    let cert = model.certify(&train, &CertifyOptions::default())?.remove(0);
    if !a.json {
        out!("== breast cancer ({} train / {} test), Laplace GP classifier (probit), fitted in {secs:.2} s", train.n(), test.n());
        out!(
            "  kernel chosen by the bound: {}",
            model.posterior.kernel.describe()
        );
        out!(
            "  test: error rate {:.4}  Gibbs error {:.4}  log loss {:.4}",
            ev.error_rate.unwrap_or(f64::NAN),
            ev.gibbs_risk.unwrap_or(f64::NAN),
            ev.log_loss.unwrap_or(f64::NAN)
        );
        print_certificate(&cert)?;
    }
    rows.push(json!({ "dataset": "breast-cancer-wisconsin", "kernel": model.posterior.kernel.describe(), "fit_seconds": secs, "evaluation": ev, "certificate": cert }));
    if a.json {
        out!("{}", json!({ "demo": rows }));
    }
    Ok(())
}
