//! `pacgp reproduce`: run an experiment of the seeds, write its table (CSV + JSON) and
//! figure (SVG) into the output folder, with a progress bar on a terminal.

use anyhow::{bail, Context, Result};
use pacgp::data::{self, CsvOptions, Dataset};

use crate::cli::{Experiment, ReproduceArgs};
use crate::output::{write, write_csv};

mod classification;
mod deployed;
mod intervals;
mod multiclass;
mod opper_winther;
mod regression;
mod svgp_real;
mod tighter_bounds;
mod tighter_classifiers;
mod zhang;

/// Run the chosen experiment.
pub fn reproduce(mut a: ReproduceArgs) -> Result<()> {
    a.data_dir = crate::output::data_dir(&a.data_dir);
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    match a.experiment {
        Experiment::PacGpEpsilon => regression::epsilon(&a),
        Experiment::PacGpSnelson => regression::snelson(&a),
        Experiment::PacSgpInducing => regression::inducing(&a),
        Experiment::IvmUci => classification::ivm_uci(&a),
        Experiment::IvmMnistGrid => classification::ivm_mnist_grid(&a),
        Experiment::IvmSelection2d => classification::ivm_selection_2d(&a),
        Experiment::RiskCoverage => classification::risk_coverage(&a),
        Experiment::OpperWinther => opper_winther::run(&a),
        Experiment::ZhangSparse => zhang::run(&a),
        Experiment::ZhangKin40k => zhang::kin40k(&a),
        Experiment::TighterBounds => tighter_bounds::run(&a),
        Experiment::Intervals => intervals::run(&a),
        Experiment::Multiclass => multiclass::run(&a),
        Experiment::Deployed => deployed::run(&a),
        Experiment::SvgpReal => svgp_real::run(&a),
    }
}

/// The experiment's `quick` settings under `--quick`, else its `full` ones.
fn scaled<S>(a: &ReproduceArgs, quick: fn() -> S, full: fn() -> S) -> S {
    if a.quick {
        quick()
    } else {
        full()
    }
}

/// The data sets `--datasets` names, each checked against the experiment's `known` ones (an
/// unknown name is refused with the list), in place of `datasets` (the experiment's own) when
/// any is named.
fn choose_datasets(
    a: &ReproduceArgs,
    known: &[&str],
    experiment: &str,
    datasets: &mut Vec<String>,
) -> Result<()> {
    if let Some(bad) = a.datasets.iter().find(|d| !known.contains(&d.as_str())) {
        bail!(pacgp::Error::Unsupported(format!(
            "unknown dataset '{bad}' for {experiment} (use {})",
            known.join(", ")
        )));
    }
    if !a.datasets.is_empty() {
        datasets.clone_from(&a.datasets);
    }
    Ok(())
}

/// The pool (and separate test file, if any) of boston, kin40k or pol for `experiment`
/// (another name is refused, naming the experiment).
fn load_pool(
    a: &ReproduceArgs,
    experiment: &str,
    name: &str,
) -> Result<(Dataset, Option<Dataset>)> {
    let opts = CsvOptions::default();
    Ok(match name {
        "boston" => (
            data::load_csv(a.data_dir.join("boston-housing/boston.csv"), &opts)
                .context("loading boston (run from the repository root, or pass --data-dir)")?,
            None,
        ),
        "kin40k" | "pol" => {
            let f = |part: &str| {
                data::load_csv(
                    a.data_dir.join(format!("{name}/{name}_{part}.csv.gz")),
                    &opts,
                )
                .with_context(|| format!("loading {name} ({part})"))
            };
            (f("train")?, Some(f("test")?))
        }
        other => bail!(pacgp::Error::Unsupported(format!(
            "unknown dataset '{other}' for {experiment} (use boston, kin40k, pol)"
        ))),
    })
}

/// Writes an experiment's rows to `<name>.csv` and their summary to `<name>-summary.csv` in
/// the output folder.
fn write_rows_and_summary<R: serde::Serialize, S: serde::Serialize>(
    a: &ReproduceArgs,
    name: &str,
    rows: &[R],
    summary: &[S],
) -> Result<()> {
    write_csv(&a.out.join(format!("{name}.csv")), rows)?;
    write_csv(&a.out.join(format!("{name}-summary.csv")), summary)
}

/// Writes an experiment's `table` to `<name>.json` in the output folder and prints it under
/// `--json`; true when it printed it (the caller then prints no text table).
fn write_json(a: &ReproduceArgs, name: &str, table: &serde_json::Value) -> Result<bool> {
    write(&a.out.join(format!("{name}.json")), &table.to_string())?;
    if a.json {
        out!("{table}");
    }
    Ok(a.json)
}
