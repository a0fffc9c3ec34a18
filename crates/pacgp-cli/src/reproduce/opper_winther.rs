//! `pacgp reproduce opper-winther`: seed 001's Table 17.1 (SVM and naive mean field on the
//! Wisconsin breast-cancer data: exact and linear-response LOO, 10-fold CV, times,
//! iterations) and Figure 17.2 (α against margins). The experiment's settings and rows are
//! the library's ([`pacgp::experiments::opper_winther`]); this file only writes them.

use anyhow::Result;
use pacgp::data;
use pacgp::experiments::opper_winther::{self, OpperWintherConfig};
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::{write, write_csv};
use crate::plot::{write_svg, Figure, Series};

pub(super) fn run(a: &ReproduceArgs) -> Result<()> {
    let (data, _) = data::load_csv_classification(
        a.data_dir
            .join("breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv"),
        &opper_winther::csv_options(),
    )?;
    let cfg = if a.quick {
        // The selected point of the full grid, no exact LOO by refits.
        OpperWintherConfig {
            lengthscales: vec![3.0],
            input_noise: vec![1.3],
            kappas: vec![0.02],
            exact_loo: false,
            ..Default::default()
        }
    } else {
        OpperWintherConfig::default()
    };
    let pb = crate::output::spinner("opper-winther: Table 17.1 (SVM and naive mean field)");
    let result = opper_winther::run(&data, &cfg)?;
    pb.finish_and_clear();
    write_csv(&a.out.join("opper-winther-table-17-1.csv"), &result.table)?;
    write_csv(&a.out.join("opper-winther-figure-17-2.csv"), &result.figure)?;
    let obj = json!({ "experiment": "opper-winther", "quick": a.quick, "config": cfg, "table": result.table });
    write(&a.out.join("opper-winther.json"), &obj.to_string())?;
    let series = |name: &str, f: &dyn Fn(&opper_winther::Figure172Point) -> (f64, f64)| {
        Series::points(name, result.figure.iter().map(f).collect())
    };
    let fig = Figure {
        title: "Seed 001 Fig. 17.2: α against the margin, SVM and naive mean field".into(),
        x_label: "margin y f(x)".into(),
        y_label: "α (mean field rescaled to the SVM's length)".into(),
        series: vec![
            series("SVM", &|p| (p.margin_svm, p.alpha_svm)),
            series("naive mean field", &|p| (p.margin_mf, p.alpha_mf_rescaled)),
        ],
    };
    write_svg(&fig, &a.out.join("opper-winther-figure-17-2.svg"))?;
    if a.json {
        out!("{obj}");
        return Ok(());
    }
    out!("Seed 001, Table 17.1 (Wisconsin breast cancer, {} rows; seed: SVM LOO 0.0261, 10-fold CV 0.0307)", data.n());
    out!("algorithm             l     v     κ   exact LOO  LR-LOO  10-fold CV  s (fit)  s (fit+LOO)  iterations");
    for r in &result.table {
        out!(
            "{:<20} {:>5.2} {:>5.2} {:>5.2}  {:>9}  {:>6.4}  {:>10.4}  {:>7.3}  {:>11.3}  {:>10}",
            r.algorithm,
            r.lengthscale,
            r.input_noise,
            r.kappa,
            r.loo_exact.map_or("-".into(), |e| format!("{e:.4}")),
            r.loo_approx,
            r.cv_error,
            r.seconds_without_loo,
            r.seconds_with_loo,
            r.iterations
        );
    }
    out!(
        "wrote {}",
        a.out.join("opper-winther-*.{csv,json,svg}").display()
    );
    Ok(())
}
