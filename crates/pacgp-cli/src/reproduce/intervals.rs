//! `pacgp reproduce intervals`: prediction intervals on held-out data — the coverage and width
//! of jackknife+ (absolute and GP-std scores, no refits), split conformal, CV+ and the Gaussian
//! band over seeded splits of boston, kin40k and pol, against each method's guarantee; and
//! jackknife+ in closed form against N refits. The settings and rows are the library's
//! ([`pacgp::experiments::intervals`]); this file loads the data and writes the tables.

use anyhow::{Context, Result};
use pacgp::experiments::intervals::{self as iv, IntervalSettings};
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::{spinner, with_bar, write_csv};

pub(super) fn run(a: &ReproduceArgs) -> Result<()> {
    let mut settings = super::scaled(a, IntervalSettings::quick, IntervalSettings::full);
    settings.splits = a.reps.unwrap_or(settings.splits);
    if a.no_timing {
        settings.timing_n = None;
    }
    settings
        .data_sets
        .retain(|s| a.datasets.is_empty() || a.datasets.contains(&s.name));
    let mut rows = Vec::new();
    for s in &settings.data_sets {
        let (pool, test) = super::load_pool(a, "intervals", &s.name)?;
        let label = format!("intervals ({}, {})", s.name, s.model.name());
        rows.extend(with_bar(settings.splits, &label, |progress| {
            iv::intervals_on(s, &pool, test.as_ref(), &settings, progress)
        })?);
    }
    let timing = match settings.timing_n {
        Some(n) if a.datasets.is_empty() || a.datasets.iter().any(|d| d == "kin40k") => {
            let (pool, test) = super::load_pool(a, "intervals", "kin40k")?;
            let test = test.context("kin40k has a test file")?;
            let pb = spinner(&format!("jackknife+ by {n} refits against the closed form"));
            let t = iv::jackknife_timing(&pool, &test, "kin40k", n, settings.timing_test, 0.1);
            pb.finish_and_clear();
            Some(t?)
        }
        _ => None,
    };
    let summary = iv::summarise(&rows);
    super::write_rows_and_summary(a, "intervals", &rows, &summary)?;
    if let Some(t) = &timing {
        write_csv(&a.out.join("intervals-timing.csv"), std::slice::from_ref(t))?;
    }
    let obj = json!({
        "experiment": "intervals",
        "settings": settings,
        "summary": summary,
        "timing": timing,
        "rows": rows,
    });
    if super::write_json(a, "intervals", &obj)? {
        return Ok(());
    }
    out!(
        "Prediction intervals on held-out data ({} splits; coverage mean ± standard error; width relative to the Gaussian band and to split conformal)",
        settings.splits
    );
    out!("dataset  model    method            α      guarantee  coverage         meets  width     ×gauss  ×split");
    for s in &summary {
        out!(
            "{:<8} {:<8} {:<17} {:<5}  {:>9}  {:.4} ± {:.4}  {:<5}  {:>8.4}  {:>6.3}  {:>6.3}",
            s.data_set,
            s.model,
            s.method,
            s.alpha,
            s.guarantee
                .map_or("(nominal)".into(), |g| format!("{g:.4}")),
            s.coverage,
            s.coverage_se,
            s.meets_guarantee
                .map_or("", |m| if m { "yes" } else { "NO" }),
            s.mean_width,
            s.width_vs_gaussian,
            s.width_vs_split
        );
    }
    if let Some(t) = &timing {
        out!(
            "jackknife+ on {} (N = {}, {} test inputs, α = {}): closed form {:.3} s, {} refits {:.1} s — {:.0}× faster; largest difference of the interval ends {:.2e}",
            t.data_set,
            t.n_train,
            t.n_test,
            t.alpha,
            t.closed_form_seconds,
            t.n_train,
            t.refit_seconds,
            t.speedup,
            t.max_difference
        );
    }
    out!("wrote {}", a.out.join("intervals*.{csv,json}").display());
    Ok(())
}
