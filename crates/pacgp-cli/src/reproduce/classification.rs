//! `pacgp reproduce` for seed 003's classification experiments: `ivm-uci`, `ivm-mnist-grid`,
//! `ivm-selection-2d`, `risk-coverage`. Each writes CSV + JSON tables and SVG figures.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use pacgp::bounds::ConfidenceTerm;
use pacgp::experiments::classification::{
    self as cls, GridCell, GridRecord, MnistGridSettings, RiskCoverageRow, UciRecord, UciSetup,
    SEED_003_DELTA as DELTA, UCI_ACTIVE_SET,
};
use pacgp::inference::ivm::IvmConfig;
use pacgp::inference::InferenceMethod;
use pacgp::likelihood::Likelihood;
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::{bar, write, write_csv};
use crate::plot::{write_svg, Figure, Series};

/// The UCI-style sets, with the hint a newcomer needs when they are not found.
fn uci_sets(a: &ReproduceArgs) -> Result<Vec<(String, pacgp::data::Dataset)>> {
    cls::load_uci_sets(&a.data_dir, &a.datasets)
        .context("loading the UCI-style sets (run from the repository root, or pass --data-dir)")
}

/// `ivm-uci`: bound vs test Gibbs error per data set and method (seed 003 §4.1, Figs. 3–8).
pub(super) fn ivm_uci(a: &ReproduceArgs) -> Result<()> {
    let sets = uci_sets(a)?;
    let reps = cls::uci_repetitions(a.quick);
    let methods = cls::seed_003_methods(UCI_ACTIVE_SET);
    let pb = bar(sets.len() * reps * methods.len(), "ivm-uci");
    let mut rows = Vec::new();
    for set in &sets {
        let setup = UciSetup::seed_003(reps, set.1.d(), a.seed_kernel);
        let done = rows.len();
        rows.extend(cls::ivm_uci(
            std::slice::from_ref(set),
            &methods,
            &setup,
            &mut |k| pb.set_position((done + k) as u64),
        )?);
    }
    pb.finish_and_clear();
    let summary = cls::summarise_uci(&rows);
    let records: Vec<UciRecord> = rows.iter().map(UciRecord::from).collect();
    write_csv(&a.out.join("ivm-uci.csv"), &records)?;
    let obj = json!({ "experiment": "ivm-uci", "delta": DELTA, "confidence_term": "seeger",
        "kernels": if a.seed_kernel { "seed: SE(l = 1), variance 1" } else { "lowest bound of nine, penalty ln 9" },
        "repetitions": reps, "summary": summary, "rows": rows });
    write(&a.out.join("ivm-uci.json"), &obj.to_string())?;
    for (name, _) in &sets {
        let mut series: Vec<Series> = methods
            .iter()
            .map(|m| {
                Series::points(
                    m.name.clone(),
                    rows.iter()
                        .filter(|r| &r.dataset == name && r.method == m.name)
                        .map(|r| (r.scores.test_gibbs, r.scores.bound))
                        .collect(),
                )
            })
            .collect();
        series.push(Series::line(
            "bound = test Gibbs error",
            vec![(0.0, 0.0), (0.5, 0.5)],
        ));
        let fig = Figure {
            title: format!(
                "{name}: PAC-Bayes bound vs test Gibbs error ({reps} draws, δ = {DELTA})"
            ),
            x_label: "test Gibbs error".into(),
            y_label: "bound on the Gibbs error".into(),
            series,
        };
        write_svg(&fig, &a.out.join(format!("ivm-uci-{name}.svg")))?;
    }
    if a.json {
        out!(
            "{}",
            json!({ "experiment": "ivm-uci", "repetitions": reps, "summary": summary })
        );
    } else {
        out!(
            "{:<14} {:<8} {:>7} {:>11} {:>10} {:>10} {:>7} {:>6} {:>12}",
            "dataset",
            "method",
            "bound",
            "train Gibbs",
            "test Gibbs",
            "test err",
            "KL",
            "holds",
            "non-vacuous"
        );
        for s in &summary {
            out!(
                "{:<14} {:<8} {:>7.4} {:>11.4} {:>10.4} {:>10.4} {:>7.2} {:>3}/{:<3} {:>8}/{}",
                s.dataset,
                s.method,
                s.bound,
                s.train_gibbs,
                s.test_gibbs,
                s.test_error,
                s.kl,
                s.bound_holds,
                s.reps,
                s.non_vacuous,
                s.reps
            );
        }
        out!(
            "wrote {}/ivm-uci.{{csv,json}} and one SVG per data set",
            a.out.display()
        );
    }
    Ok(())
}

/// Reads one quantity of a grid cell.
type CellField = fn(&GridCell) -> f64;

/// Seed 003's six tables as text blocks of comma-separated values (rows w, columns C).
fn grid_tables(cells: &[GridCell], ws: &[f64], cs: &[f64]) -> String {
    let tables: [(&str, CellField); 6] = [
        ("Gibbs training error", |g| g.scores.train_gibbs),
        ("Gibbs test error", |g| g.scores.test_gibbs),
        ("gap error bound", |g| g.scores.gap),
        ("estimated Gibbs error upper bound", |g| g.scores.bound),
        ("0-1 training error", |g| g.scores.train_error),
        ("0-1 test error", |g| g.scores.test_error),
    ];
    let mut s = String::new();
    for (title, f) in tables {
        let _ = writeln!(s, "# {title}");
        let _ = writeln!(
            s,
            "w\\C,{}",
            cs.iter()
                .map(|c| format!("{c:e}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        for &w in ws {
            let row: Vec<String> = cs
                .iter()
                .map(|&c| {
                    cells
                        .iter()
                        .find(|g| g.w == w && g.c == c)
                        .map_or(String::new(), |g| format!("{:.4}", f(g)))
                })
                .collect();
            let _ = writeln!(s, "{w:e},{}", row.join(","));
        }
        s.push('\n');
    }
    s
}

/// `ivm-mnist-grid`: seed 003 §4.2's (w, C) grid with IVM on MNIST 2 vs 3.
pub(super) fn ivm_mnist_grid(a: &ReproduceArgs) -> Result<()> {
    let settings = super::scaled(a, MnistGridSettings::quick, MnistGridSettings::paper);
    let (n_train, d, ws, cs) = (
        settings.n_train,
        settings.active_set,
        &settings.ws,
        &settings.cs,
    );
    let pb = bar(ws.len() * cs.len(), "ivm-mnist-grid");
    let tt = cls::mnist_2v3(
        &a.data_dir.join("mnist-2v3/mnist_rsvd_2v3.csv.gz"),
        &a.data_dir.join("mnist-2v3/mnist_test_2v3.csv.gz"),
        n_train,
        settings.pca_components,
    )
    .context("loading MNIST 2 vs 3 (run from the repository root, or pass --data-dir)")?;
    let method = InferenceMethod::new(IvmConfig::new(d));
    let cells = cls::w_c_grid(
        (tt.x.as_ref(), &tt.y),
        (tt.xt.as_ref(), &tt.yt),
        ws,
        cs,
        &method,
        &Likelihood::probit(),
        DELTA,
        ConfidenceTerm::Seeger,
        &mut |k| pb.set_position(k as u64),
    )?;
    pb.finish_and_clear();
    let records: Vec<GridRecord> = cells.iter().map(GridRecord::from).collect();
    write_csv(&a.out.join("ivm-mnist-grid.csv"), &records)?;
    let tables = grid_tables(&cells, ws, cs);
    write(&a.out.join("ivm-mnist-grid-tables.txt"), &tables)?;
    let obj = json!({ "experiment": "ivm-mnist-grid", "settings": settings, "n_test": tt.yt.len(),
        "delta": DELTA, "cells": cells });
    write(&a.out.join("ivm-mnist-grid.json"), &obj.to_string())?;
    // Seed 003 Fig. 9: the quantities against w at one C.
    let c_fix = cs[cs.len() / 2];
    let along = |f: fn(&GridCell) -> f64| -> Vec<(f64, f64)> {
        cells
            .iter()
            .filter(|g| g.c == c_fix)
            .map(|g| (g.w.log10(), f(g)))
            .collect()
    };
    let fig = Figure {
        title: format!("MNIST 2 vs 3, IVM d = {d}: against log10 w at C = {c_fix:e}"),
        x_label: "log10 w".into(),
        y_label: "error".into(),
        series: vec![
            Series::line("PAC-Bayes bound", along(|g| g.scores.bound)),
            Series::line("test Gibbs error", along(|g| g.scores.test_gibbs)),
            Series::line("training Gibbs error", along(|g| g.scores.train_gibbs)),
            Series::line("gap term", along(|g| g.scores.gap)),
        ],
    };
    write_svg(&fig, &a.out.join("ivm-mnist-grid.svg"))?;
    let best = cells
        .iter()
        .min_by(|p, q| p.scores.bound.total_cmp(&q.scores.bound))
        .context("empty grid")?;
    let best_val = cells
        .iter()
        .min_by(|p, q| p.scores.test_gibbs.total_cmp(&q.scores.test_gibbs))
        .context("empty grid")?;
    if a.json {
        out!(
            "{}",
            json!({ "experiment": "ivm-mnist-grid", "best_by_bound": best,
                "best_by_validation": best_val, "n_cells": cells.len() })
        );
    } else {
        {
            use std::io::Write as _;
            std::io::stdout().lock().write_all(tables.as_bytes())?;
        }
        out!(
            "lowest bound {:.4} at w = {:e}, C = {:e} (test Gibbs {:.4}, test 0-1 {:.4})",
            best.scores.bound,
            best.w,
            best.c,
            best.scores.test_gibbs,
            best.scores.test_error
        );
        out!(
            "validation choice (lowest held-out Gibbs error, seed 003 §4.2): w = {:e}, C = {:e} (Gibbs {:.4}, 0-1 {:.4}, bound {:.4})",
            best_val.w, best_val.c, best_val.scores.test_gibbs, best_val.scores.test_error, best_val.scores.bound
        );
        out!("wrote {}/ivm-mnist-grid.{{csv,json,svg}} and the six tables in ivm-mnist-grid-tables.txt", a.out.display());
    }
    Ok(())
}

/// `ivm-selection-2d`: the points IVM and SOGP keep on seed 003 §3.4's three-Gaussian problem.
pub(super) fn ivm_selection_2d(a: &ReproduceArgs) -> Result<()> {
    let (points, selections) = cls::selection_2d()?;
    for sel in &selections {
        let mut series = Vec::new();
        for (label, class) in [("class −1", -1.0), ("class +1", 1.0)] {
            series.push(Series::points(
                label,
                points
                    .iter()
                    .filter(|p| p.y == class)
                    .map(|p| (p.x1, p.x2))
                    .collect(),
            ));
            series.push(Series::points(
                format!("{label}, selected by {}", sel.method),
                sel.selected
                    .iter()
                    .map(|&i| &points[i])
                    .filter(|p| p.y == class)
                    .map(|p| (p.x1, p.x2))
                    .collect(),
            ));
        }
        let fig = Figure {
            title: format!(
                "{}: the {} points kept ({} points, three Gaussians)",
                sel.method,
                sel.selected.len(),
                points.len()
            ),
            x_label: "x1".into(),
            y_label: "x2".into(),
            series,
        };
        write_svg(
            &fig,
            &a.out.join(format!("ivm-selection-2d-{}.svg", sel.method)),
        )?;
    }
    write_csv(&a.out.join("ivm-selection-2d.csv"), &points)?;
    let obj = json!({ "experiment": "ivm-selection-2d", "methods": selections });
    write(&a.out.join("ivm-selection-2d.json"), &obj.to_string())?;
    if a.json {
        out!("{obj}");
    } else {
        for sel in &selections {
            out!("{}: {} points selected", sel.method, sel.selected.len());
        }
        out!(
            "wrote {}/ivm-selection-2d.{{csv,json}} and one SVG per method",
            a.out.display()
        );
    }
    Ok(())
}

/// `risk-coverage`: seed 003 §4.4's curves (IVM, §4.1's setting), ordering by |μ/σ| and |μ|.
pub(super) fn risk_coverage(a: &ReproduceArgs) -> Result<()> {
    let sets = uci_sets(a)?;
    let reps = cls::uci_repetitions(a.quick);
    let method = cls::seed_003_methods(UCI_ACTIVE_SET).remove(0);
    let coverages: Vec<f64> = (2..=20).map(|k| k as f64 / 20.0).collect();
    let pb = bar(sets.len() * reps, "risk-coverage");
    let mut rows = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let setup = UciSetup::seed_003(reps, set.1.d(), a.seed_kernel);
        rows.extend(cls::risk_coverage_study(
            std::slice::from_ref(set),
            &method,
            &setup,
            &coverages,
            &mut |k| pb.set_position((i * reps + k) as u64),
        )?);
    }
    pb.finish_and_clear();
    write_csv(&a.out.join("risk-coverage.csv"), &rows)?;
    let obj = json!({ "experiment": "risk-coverage", "method": method.name, "repetitions": reps, "rows": rows });
    write(&a.out.join("risk-coverage.json"), &obj.to_string())?;
    for (name, _) in &sets {
        let series = ["mean-over-std", "abs-mean"]
            .iter()
            .map(|o| {
                Series::line(
                    *o,
                    rows.iter()
                        .filter(|r: &&RiskCoverageRow| &r.dataset == name && r.ordering == *o)
                        .map(|r| (r.coverage, r.risk))
                        .collect(),
                )
            })
            .collect();
        let fig = Figure {
            title: format!(
                "{name}: risk vs coverage ({}, mean of {reps} draws)",
                method.name
            ),
            x_label: "coverage".into(),
            y_label: "risk (error among accepted)".into(),
            series,
        };
        write_svg(&fig, &a.out.join(format!("risk-coverage-{name}.svg")))?;
    }
    if a.json {
        out!("{obj}");
    } else {
        out!(
            "{:<14} {:<14} {:>8} {:>8} {:>8}",
            "dataset",
            "ordering",
            "c=0.5",
            "c=0.8",
            "c=1.0"
        );
        for (name, _) in &sets {
            for o in ["mean-over-std", "abs-mean"] {
                let at = |c: f64| {
                    rows.iter()
                        .find(|r| {
                            &r.dataset == name && r.ordering == o && (r.coverage - c).abs() < 1e-9
                        })
                        .map_or(f64::NAN, |r| r.risk)
                };
                out!(
                    "{name:<14} {o:<14} {:>8.4} {:>8.4} {:>8.4}",
                    at(0.5),
                    at(0.8),
                    at(1.0)
                );
            }
        }
        out!(
            "wrote {}/risk-coverage.{{csv,json}} and one SVG per data set",
            a.out.display()
        );
    }
    Ok(())
}
