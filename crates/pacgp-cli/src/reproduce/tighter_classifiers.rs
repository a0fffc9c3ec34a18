//! The classifier rows of `pacgp reproduce tighter-bounds` (issue 15 item 6): breast cancer and
//! crabs, the bound-selected Laplace certificate against PAC-GPC, the split prior and its
//! combinations with Catoni's λ, the prior's scale and kernel structure fixed on part A and
//! both directions of the split (`CLASSIFIER_METHODS`), with the held-out checks. The settings, rows and summary are the library's
//! ([`pacgp::experiments::tighter_classifiers`]); this file loads the sets and writes the
//! tables (CSV via `csv::Writer`, JSON, a summary on stdout).

use anyhow::Result;
use pacgp::experiments::classification::load_uci_sets;
use pacgp::experiments::tighter_classifiers::{
    self as tc, TighterClassifierRow, TighterClassifierSettings, TighterClassifierSummary,
    TIGHTER_CLASSIFIER_SETS,
};
use serde_json::{json, Value};

use crate::cli::ReproduceArgs;
use crate::output::{bar, write};

/// Names `--datasets` accepts for the regression rows.
const REGRESSION_SETS: [&str; 3] = ["boston", "kin40k", "pol"];

/// The classifier part of the table: settings, sets, rows and their summary.
pub(super) struct ClassifierTable {
    settings: TighterClassifierSettings,
    sets: Vec<String>,
    rows: Vec<TighterClassifierRow>,
    summary: Vec<TighterClassifierSummary>,
}

/// The classifier sets `--datasets` selects (all when empty); unknown names are an error.
fn selected(a: &ReproduceArgs) -> Result<Vec<String>> {
    if let Some(bad) = a.datasets.iter().find(|d| {
        !REGRESSION_SETS.contains(&d.as_str()) && !TIGHTER_CLASSIFIER_SETS.contains(&d.as_str())
    }) {
        anyhow::bail!(pacgp::Error::Unsupported(format!(
            "unknown dataset '{bad}' for tighter-bounds (use {}, {})",
            REGRESSION_SETS.join(", "),
            TIGHTER_CLASSIFIER_SETS.join(", ")
        )));
    }
    Ok(TIGHTER_CLASSIFIER_SETS
        .iter()
        .filter(|s| a.datasets.is_empty() || a.datasets.iter().any(|d| d == *s))
        .map(|s| s.to_string())
        .collect())
}

/// Run the classifier rows `--datasets` selects and write `tighter-bounds-classifiers*.{csv,json}`;
/// `None` when no classification set is selected.
pub(super) fn run(a: &ReproduceArgs) -> Result<Option<ClassifierTable>> {
    let sets = selected(a)?;
    if sets.is_empty() {
        return Ok(None);
    }
    let settings = super::scaled(
        a,
        TighterClassifierSettings::quick,
        TighterClassifierSettings::full,
    );
    let cfg = settings.config();
    let mut rows = Vec::new();
    for (name, data) in load_uci_sets(&a.data_dir, &sets)? {
        let pb = bar(
            settings.reps,
            &format!("tighter-bounds ({name}, classifiers)"),
        );
        for seed in settings.seeds() {
            rows.extend(tc::tighter_classifier_rows(&name, &data, &[seed], &cfg)?);
            pb.inc(1);
        }
        pb.finish_and_clear();
    }
    let summary = tc::summarise_classifiers(&rows);
    super::write_rows_and_summary(a, "tighter-bounds-classifiers", &rows, &summary)?;
    let table = ClassifierTable {
        settings,
        sets,
        rows,
        summary,
    };
    write(
        &a.out.join("tighter-bounds-classifiers.json"),
        &table.json().to_string(),
    )?;
    Ok(Some(table))
}

impl ClassifierTable {
    /// Settings, sets, summary and rows as one JSON object.
    pub(super) fn json(&self) -> Value {
        json!({
            "experiment": "tighter-bounds-classifiers",
            "settings": self.settings,
            "datasets": self.sets,
            "summary": self.summary,
            "rows": self.rows,
        })
    }

    /// The summary table on stdout (files in `out_dir`).
    pub(super) fn print(&self, out_dir: &std::path::Path) -> Result<()> {
        out!(
            "Classifiers (latent Gibbs classifier, probit, δ = {}, {} seeded 80/20 splits; means ± standard errors; rel = vs {})",
            self.settings.delta,
            self.settings.reps,
            tc::CLASSIFIER_REFERENCE
        );
        out!("dataset        method                             bound            rel     test Gibbs       test error       KL      penalty  N    worst test−bound  worst lower99−bound");
        for s in &self.summary {
            out!(
                "{:<14} {:<34} {:.4} ± {:.4}  {:>+6.1}%  {:.4} ± {:.4}  {:.4} ± {:.4}  {:>6.2}  {:>6.2}  {:<4.0} {:>+.4}           {:>+.4}",
                s.dataset,
                s.method,
                s.bound,
                s.bound_se,
                100.0 * s.rel_to_reference,
                s.test_gibbs,
                s.test_gibbs_se,
                s.test_error,
                s.test_error_se,
                s.kl,
                s.penalty,
                s.n_bound,
                s.worst_test_minus_bound,
                s.worst_test_lower_minus_bound
            );
        }
        out!(
            "worst test−bound: held-out Gibbs error minus bound (raw, scatters by its standard error); worst lower99−bound: its 99% lower confidence limit minus bound (> 0 contradicts a certificate)"
        );
        out!(
            "wrote {}",
            out_dir
                .join("tighter-bounds-classifiers*.{csv,json}")
                .display()
        );
        Ok(())
    }

    /// Print the table (or its JSON with `--json`) when no regression rows were asked for.
    pub(super) fn finish_alone(&self, a: &ReproduceArgs) -> Result<()> {
        if a.json {
            out!("{}", self.json());
            return Ok(());
        }
        self.print(&a.out)
    }
}
