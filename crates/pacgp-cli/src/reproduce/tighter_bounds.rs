//! `pacgp reproduce tighter-bounds` (issue 15): the reference PAC-GP certificate against each
//! tighter-bounds lever and their combination on boston (SE iso and ARD), kin40k and pol, and
//! the classifier rows of [`super::tighter_classifiers`] (breast cancer, crabs). The
//! settings and rows are the library's ([`pacgp::experiments::tighter_bounds`]); this file
//! loads the data and writes the tables (CSV via `csv::Writer`, JSON).

use anyhow::Result;
use pacgp::experiments::tighter_bounds::{self as tb, TighterSettings};
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::with_bar;

/// The table's datasets: with `--sparse`, boston as usual and kin40k, pol by the sparse
/// protocol (M from the first `--m`, if given).
fn setups_of(a: &ReproduceArgs) -> Vec<tb::DatasetSetup> {
    let mut v = tb::dataset_setups(a.quick);
    if a.sparse {
        v.retain(|s| s.n_train.is_none());
        let mut sparse = tb::sparse_dataset_setups(a.quick);
        for s in &mut sparse {
            if let (Some(sp), Some(&m)) = (s.sparse.as_mut(), a.m.first()) {
                sp.m = m;
            }
        }
        v.extend(sparse);
    }
    v
}

pub(super) fn run(a: &ReproduceArgs) -> Result<()> {
    let settings = super::scaled(a, TighterSettings::quick, TighterSettings::full);
    let mut settings = settings;
    settings.reps = a.reps.unwrap_or(settings.reps);
    settings.first_rep = a.first_rep;
    let setups: Vec<tb::DatasetSetup> = setups_of(a)
        .into_iter()
        .filter(|s| a.datasets.is_empty() || a.datasets.contains(&s.name))
        .collect();
    // --- classifier rows (issue 15 item 6) ---
    let classifiers = super::tighter_classifiers::run(a)?;
    if let (true, Some(c)) = (setups.is_empty(), &classifiers) {
        return c.finish_alone(a);
    }
    // --- end classifier rows ---
    let mut rows = Vec::new();
    for s in &setups {
        let (pool, test) = super::load_pool(a, "tighter-bounds", &s.name)?;
        let n_levers = match s.sparse {
            Some(_) => settings.sparse_levers.len(),
            None => settings.levers.len(),
        };
        let label = format!("tighter-bounds ({}, {:?})", s.name, s.kernel);
        rows.extend(with_bar(settings.reps * n_levers, &label, |progress| {
            tb::tighter_bounds_on(&pool, test.as_ref(), s, &settings, progress)
        })?);
    }
    let summary = tb::summarise(&rows);
    super::write_rows_and_summary(a, "tighter-bounds", &rows, &summary)?;
    let obj = json!({
        "experiment": "tighter-bounds",
        "settings": settings,
        "datasets": setups,
        "summary": summary,
        "rows": rows,
        "classifiers": classifiers.as_ref().map(|c| c.json()), // issue 15 item 6
    });
    if super::write_json(a, "tighter-bounds", &obj)? {
        return Ok(());
    }
    out!(
        "Tighter certificates (ε = {} training sd, δ = {}, {} splits; means ± standard errors)",
        settings.epsilon,
        settings.delta,
        settings.reps
    );
    out!("dataset  kernel  lever                           bound          rel     test Gibbs      test MSE  KL       penalty  N");
    for s in &summary {
        out!(
            "{:<8} {:<7} {:<31} {:.3} ± {:.3}  {:>+6.1}%  {:.3} ± {:.3}  {:.3}  {:>7.2}  {:>7.2}  {:.0}",
            s.dataset,
            format!("{:?}", s.kernel),
            s.lever,
            s.bound,
            s.bound_se,
            100.0 * s.rel_to_reference,
            s.test_gibbs,
            s.test_gibbs_se,
            s.test_mse,
            s.kl,
            s.penalty,
            s.n_bound
        );
    }
    out!(
        "wrote {}",
        a.out.join("tighter-bounds*.{csv,json}").display()
    );
    // --- classifier rows (issue 15 item 6) ---
    if let Some(c) = &classifiers {
        c.print(&a.out)?;
    }
    Ok(())
}
