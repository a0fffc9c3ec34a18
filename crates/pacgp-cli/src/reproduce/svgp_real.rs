//! `pacgp reproduce svgp-real`: the settings and rows are the library's
//! ([`pacgp::experiments::svgp_real`]); this file loads the sets, writes the table (CSV via
//! `csv::Writer`, JSON) and prints it.

use std::path::Path;

use anyhow::{Context, Result};
use pacgp::experiments::svgp_real::{self as sr, SvgpRealRow, SvgpRealSettings, SVGP_REAL_SETS};
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::{bar, write_csv};

/// The settings `--quick`, `--m` and `--datasets` ask for.
fn settings(a: &ReproduceArgs) -> Result<SvgpRealSettings> {
    let mut s = super::scaled(a, SvgpRealSettings::quick, SvgpRealSettings::full);
    if let Some(&m) = a.m.first() {
        s.inducing = m;
    }
    super::choose_datasets(a, &SVGP_REAL_SETS, "svgp-real", &mut s.datasets)?;
    Ok(s)
}

/// Run the experiment, write `svgp-real.{csv,json}`, print the table.
pub(super) fn run(a: &ReproduceArgs) -> Result<()> {
    let settings = settings(a)?;
    let mut rows = Vec::new();
    let pb = bar(settings.datasets.len(), "svgp-real");
    for name in &settings.datasets {
        let task = sr::load_svgp_real_set(&a.data_dir, name).with_context(|| {
            format!("loading {name} (run from the repository root, or pass --data-dir)")
        })?;
        rows.extend(sr::svgp_real_rows(name, &task, &settings)?);
        pb.inc(1);
    }
    pb.finish_and_clear();
    write_csv(&a.out.join("svgp-real.csv"), &rows)?;
    let table = json!({
        "experiment": "svgp-real",
        "settings": settings,
        "rows": rows,
    });
    if !super::write_json(a, "svgp-real", &table)? {
        print(&rows, &a.out)?;
    }
    Ok(())
}

/// The table on stdout.
fn print(rows: &[SvgpRealRow], out: &Path) -> Result<()> {
    out!(
        "The sparse variational classifier on real data (δ = {}; certificates on the training rows, errors on the test file)",
        pacgp::bounds::DEFAULT_DELTA
    );
    out!("dataset    method    N train  N test    M  test error  test NLP  test Gibbs  Gibbs bound  deployed bound      KL  fit s");
    for r in rows {
        out!(
            "{:<10} {:<8} {:>8} {:>7} {:>4}  {:>10.4}  {:>8.4}  {:>10.4}  {:>11.4}  {:>14.4}  {:>6.1}  {:>5.1}",
            r.dataset,
            r.method,
            r.n_train,
            r.n_test,
            r.m,
            r.test_error,
            r.test_nlp,
            r.test_gibbs,
            r.gibbs_bound,
            r.deployed_bound,
            r.kl,
            r.fit_seconds
        );
    }
    out!("wrote {}", out.join("svgp-real.{csv,json}").display());
    Ok(())
}
