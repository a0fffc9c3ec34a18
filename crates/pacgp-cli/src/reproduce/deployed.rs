//! `pacgp reproduce deployed`: the settings, rows and summary are the library's
//! ([`pacgp::experiments::deployed`]); this file runs the splits and writes the tables (CSV via
//! `csv::Writer`, JSON) and a summary on stdout.

use std::path::Path;

use anyhow::Result;
use pacgp::experiments::deployed::{self as dp, DeployedSettings, DeployedSummary, DEPLOYED_SETS};
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::bar;

/// The settings `--quick`, `--reps`, `--datasets` and `--holdout` ask for.
fn settings(a: &ReproduceArgs) -> Result<DeployedSettings> {
    let mut s = super::scaled(a, DeployedSettings::quick, DeployedSettings::full);
    if let Some(f) = a.holdout {
        s = s.with_holdout(f)?;
    }
    s.splits = a.reps.unwrap_or(s.splits);
    super::choose_datasets(a, &DEPLOYED_SETS, "deployed", &mut s.datasets)?;
    Ok(s)
}

/// Run the experiment, write `deployed*.{csv,json}`, print the summary.
pub(super) fn run(a: &ReproduceArgs) -> Result<()> {
    let settings = settings(a)?;
    let mut rows = Vec::new();
    for name in &settings.datasets {
        let (data, labels) = dp::load_deployed_set(&a.data_dir, name)?;
        let pb = bar(settings.splits, &format!("deployed ({name})"));
        for seed in 0..settings.splits as u64 {
            rows.extend(dp::deployed_rows(name, (&data, &labels), seed, &settings)?);
            pb.inc(1);
        }
        pb.finish_and_clear();
    }
    let summary = dp::summarise(&rows);
    super::write_rows_and_summary(a, "deployed", &rows, &summary)?;
    let table = json!({
        "experiment": "deployed",
        "splits": settings.splits,
        "test_fraction": settings.test_fraction,
        "alpha": settings.alpha,
        "holdout": settings.holdout,
        "summary": summary,
        "rows": rows,
    });
    if !super::write_json(a, "deployed", &table)? {
        print(&settings, &summary, &a.out)?;
    }
    Ok(())
}

/// The summary table on stdout.
fn print(s: &DeployedSettings, summary: &[DeployedSummary], out: &Path) -> Result<()> {
    out!(
        "Certificates on the Gibbs and the deployed predictor (δ = {}, seeded {:.0}/{:.0} splits, means; sets at α = {})",
        pacgp::bounds::DEFAULT_DELTA,
        100.0 * (1.0 - s.test_fraction),
        100.0 * s.test_fraction,
        s.alpha
    );
    out!("dataset        method   splits  Gibbs bound  test Gibbs  deployed bound    test error  ratio  below  set cover  set size  holdout bound  its test error  ratio  below");
    for r in summary {
        out!(
            "{:<14} {:<8} {:>6}  {:>11.4}  {:>10.4}  {:.4} ± {:.4}  {:>10.4}  {:>5.1}  {:>2}/{:<2}  {:>9.3}  {:>8.3}  {:>13.4}  {:>14.4}  {:>5.1}  {:>2}/{:<2}",
            r.dataset,
            r.method,
            r.splits,
            r.gibbs_bound,
            r.test_gibbs,
            r.deployed_bound,
            r.deployed_bound_se,
            r.test_error,
            r.ratio,
            r.deployed_below_test + r.gibbs_below_test,
            2 * r.splits,
            r.set_coverage,
            r.set_size,
            r.holdout_bound,
            r.holdout_test_error,
            r.holdout_ratio,
            r.holdout_below_test,
            r.splits
        );
    }
    out!("ratio: mean deployed bound over mean test error of predict; below: certificates (Gibbs and deployed) below their held-out error, out of all");
    out!(
        "holdout: the method fitted on {:.0}% of the training part, predict's error bounded on the other {:.0}% (binomial tail, at δ/2)",
        100.0 * (1.0 - s.holdout),
        100.0 * s.holdout
    );
    print_c_bound(summary)?;
    out!("wrote {}", out.join("deployed*.{csv,json}").display());
    Ok(())
}

/// The comparison of the C-bound with the deployed certificate's forms on stdout.
fn print_c_bound(summary: &[DeployedSummary]) -> Result<()> {
    out!("The C-bound beside the deployed certificate's forms (grid enlarged by it, priced ln of the enlarged grid): median over the splits of each form's least bound over predict's held-out error");
    out!("dataset        method   disagreement  divided  first order  tandem  C-bound  C-bound least");
    for r in summary {
        out!(
            "{:<14} {:<8} {:>12.1}  {:>7.1}  {:>11.1}  {:>6.1}  {:>7.1}  {:>7}/{:<2}",
            r.dataset,
            r.method,
            r.median_ratio_disagreement,
            r.median_ratio_divided,
            r.median_ratio_first_order,
            r.median_ratio_tandem,
            r.median_ratio_c_bound,
            r.c_bound_wins,
            r.splits
        );
    }
    Ok(())
}
