//! `pacgp reproduce` for seed 004's regression experiments (PAC-GP, PAC-SGP): tables (CSV +
//! JSON) and figures (SVG).

use anyhow::{Context, Result};
use pacgp::data::{self, CsvOptions};
use pacgp::experiments::pac_gp::{self, CurvePoint, EpsilonRow, EpsilonSettings, SnelsonSettings};
use pacgp::experiments::pac_sgp::{self, InducingRow, InducingSetup, INDUCING_DATASETS};
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::{bar, with_bar, write, write_csv};
use crate::plot::{write_svg, Figure, Series, Style};

/// Method `m`'s two series of a figure: its bound (a line) and its test Gibbs risk (points,
/// named `m: test`).
fn bound_and_test(
    m: &str,
    test: &str,
    bound: Vec<(f64, f64)>,
    test_gibbs: Vec<(f64, f64)>,
) -> [Series; 2] {
    [
        Series::line(format!("{m}: bound"), bound),
        Series::points(format!("{m}: {test}"), test_gibbs),
    ]
}

pub(super) fn epsilon(a: &ReproduceArgs) -> Result<()> {
    let boston = data::load_csv(
        a.data_dir.join("boston-housing/boston.csv"),
        &CsvOptions::default(),
    )
    .context("loading boston (run from the repository root, or pass --data-dir)")?;
    let settings = super::scaled(a, EpsilonSettings::quick, EpsilonSettings::paper);
    let reps = settings.repetitions;
    let rows = with_bar(
        settings.total_fits(),
        "pac-gp-epsilon (boston)",
        |progress| pac_gp::pac_gp_epsilon(&boston, &settings, progress),
    )?;
    let summary = pac_gp::summarise(&rows);
    write_csv(&a.out.join("pac-gp-epsilon.csv"), &rows)?;
    write_csv(&a.out.join("pac-gp-epsilon-summary.csv"), &summary)?;
    let obj = json!({ "experiment": "pac-gp-epsilon", "repetitions": reps, "summary": summary, "rows": rows });
    write(&a.out.join("pac-gp-epsilon.json"), &obj.to_string())?;
    let mut series = Vec::new();
    for m in ["full-gp", "kl-pac-gp", "sqrt-pac-gp"] {
        let pts = |f: fn(&EpsilonRow) -> f64| {
            summary
                .iter()
                .filter(|r| r.method == m)
                .map(|r| (r.epsilon, f(r)))
                .collect::<Vec<_>>()
        };
        series.extend(bound_and_test(
            m,
            "test Gibbs risk",
            pts(|r| r.bound),
            pts(|r| r.test_gibbs),
        ));
    }
    let fig = Figure {
        title: format!("boston: PAC-Bayes bound and test Gibbs risk vs ε (mean of {reps} splits)"),
        x_label: "ε (standardised target units)".into(),
        y_label: "risk".into(),
        series,
    };
    write_svg(&fig, &a.out.join("pac-gp-epsilon.svg"))?;
    if a.json {
        out!(
            "{}",
            json!({ "experiment": "pac-gp-epsilon", "repetitions": reps, "summary": summary })
        );
    } else {
        out!(
            "{:<12} {:>5} {:>8} {:>8} {:>10} {:>10} {:>9} {:>7}",
            "method",
            "ε",
            "bound",
            "sqrt",
            "train Gibbs",
            "test Gibbs",
            "test MSE",
            "KL/N"
        );
        for r in &summary {
            out!(
                "{:<12} {:>5.2} {:>8.4} {:>8.4} {:>10.4} {:>10.4} {:>9.4} {:>7.4}",
                r.method,
                r.epsilon,
                r.bound,
                r.bound_sqrt,
                r.train_gibbs,
                r.test_gibbs,
                r.test_mse,
                r.kl_over_n
            );
        }
        out!("wrote {}/pac-gp-epsilon.{{csv,json,svg}}", a.out.display());
    }
    Ok(())
}

pub(super) fn snelson(a: &ReproduceArgs) -> Result<()> {
    let train = data::load_csv(
        a.data_dir.join("snelson-1d/snelson_train.csv"),
        &CsvOptions::default(),
    )
    .context("loading snelson (run from the repository root, or pass --data-dir)")?;
    let settings = SnelsonSettings::paper();
    let pb = bar(1, "pac-gp-snelson (full and sparse PAC-GP)");
    let curves = pac_gp::pac_gp_snelson(&train, &settings)?;
    pb.finish_and_clear();
    let points: Vec<CurvePoint> = curves.iter().flat_map(|c| c.points()).collect();
    write_csv(&a.out.join("pac-gp-snelson.csv"), &points)?;
    let summary: Vec<_> = curves
        .iter()
        .map(|c| json!({ "label": c.label, "epsilon": c.epsilon, "noise_variance": c.noise_variance, "kl_over_n": c.kl_over_n, "bound": c.bound }))
        .collect();
    write(
        &a.out.join("pac-gp-snelson.json"),
        &json!({ "experiment": "pac-gp-snelson", "curves": curves }).to_string(),
    )?;
    let mut series = vec![Series::points(
        "training data",
        (0..train.n())
            .map(|i| (train.x[(i, 0)], train.y[i]))
            .collect(),
    )];
    for c in &curves {
        series.push(Series {
            name: format!("{} ±2 sd", c.label),
            points: c
                .x
                .iter()
                .zip(&c.mean)
                .zip(&c.sd)
                .map(|((x, m), s)| (*x, m - 2.0 * s))
                .collect(),
            style: Style::Band {
                upper: c.mean.iter().zip(&c.sd).map(|(m, s)| m + 2.0 * s).collect(),
            },
        });
        series.push(Series::line(
            c.label.clone(),
            c.x.iter().copied().zip(c.mean.iter().copied()).collect(),
        ));
        if !c.inducing.is_empty() {
            let floor = train.y.iter().cloned().fold(f64::INFINITY, f64::min) - 0.5;
            series.push(Series::points(
                format!("{}: inducing inputs", c.label),
                c.inducing.iter().map(|z| (*z, floor)).collect(),
            ));
        }
    }
    let fig = Figure {
        title: format!(
            "Snelson 1-D: ML-II, kl-PAC-GP and kl-PAC-SGP (M = {}) for three ε",
            settings.inducing.unwrap_or(0)
        ),
        x_label: "x".into(),
        y_label: "y".into(),
        series,
    };
    write_svg(&fig, &a.out.join("pac-gp-snelson.svg"))?;
    if a.json {
        out!(
            "{}",
            json!({ "experiment": "pac-gp-snelson", "summary": summary })
        );
    } else {
        for c in &curves {
            out!(
                "{:<28} σ² {:.4}  KL/N {:.4}  bound {:.4}",
                c.label,
                c.noise_variance,
                c.kl_over_n,
                c.bound
            );
        }
        out!("wrote {}/pac-gp-snelson.{{csv,json,svg}}", a.out.display());
    }
    Ok(())
}

pub(super) fn inducing(a: &ReproduceArgs) -> Result<()> {
    let mut setup = super::scaled(a, InducingSetup::quick, InducingSetup::paper);
    if !a.m.is_empty() {
        setup.ms = a.m.clone();
    }
    let names: Vec<String> = if a.datasets.is_empty() {
        INDUCING_DATASETS.iter().map(|s| s.to_string()).collect()
    } else {
        a.datasets.clone()
    };
    let mut all: Vec<InducingRow> = Vec::new();
    for name in &names {
        let name = name.as_str();
        if !INDUCING_DATASETS.contains(&name) {
            anyhow::bail!(pacgp::Error::Unsupported(format!(
                "unknown dataset '{name}' for pac-sgp-inducing (use {})",
                INDUCING_DATASETS.join(", ")
            )));
        }
        let load = |f: &str| {
            data::load_csv(
                a.data_dir.join(format!("{name}/{name}_{f}.csv.gz")),
                &CsvOptions::default(),
            )
        };
        let (train, test) = (
            load("train").context("loading the training set")?,
            load("test").context("loading the test set")?,
        );
        let label = format!(
            "pac-sgp-inducing ({name}, N = {})",
            setup.n_train.min(train.n())
        );
        let rows = with_bar(setup.total_fits(), &label, |progress| {
            pac_sgp::pac_sgp_inducing(name, &train, &test, &setup, 0, progress)
        })?;
        all.extend(rows);
    }
    write_csv(&a.out.join("pac-sgp-inducing.csv"), &all)?;
    let obj = json!({ "experiment": "pac-sgp-inducing", "setup": setup, "rows": all });
    write(&a.out.join("pac-sgp-inducing.json"), &obj.to_string())?;
    for name in &names {
        let mut series = Vec::new();
        for m in ["kl-pac-sgp", "sqrt-pac-sgp", "vfe", "fitc"] {
            let pts = |f: fn(&InducingRow) -> f64| {
                all.iter()
                    .filter(|r| &r.dataset == name && r.method == m)
                    .map(|r| (r.m as f64, f(r)))
                    .collect::<Vec<_>>()
            };
            series.extend(bound_and_test(
                m,
                "test Gibbs",
                pts(|r| r.bound),
                pts(|r| r.test_gibbs),
            ));
        }
        let fig = Figure {
            title: format!(
                "{name}: bound and test Gibbs risk vs M (ε = {})",
                setup.epsilon
            ),
            x_label: "M".into(),
            y_label: "risk".into(),
            series,
        };
        write_svg(&fig, &a.out.join(format!("pac-sgp-inducing-{name}.svg")))?;
    }
    if a.json {
        out!("{obj}");
    } else {
        out!(
            "{:<8} {:>4} {:<13} {:>8} {:>8} {:>11} {:>10} {:>9} {:>7} {:>9}",
            "data",
            "M",
            "method",
            "bound",
            "sqrt",
            "train Gibbs",
            "test Gibbs",
            "test MSE",
            "KL/N",
            "σ²"
        );
        for r in &all {
            out!(
                "{:<8} {:>4} {:<13} {:>8.4} {:>8.4} {:>11.4} {:>10.4} {:>9.4} {:>7.4} {:>9.5}",
                r.dataset,
                r.m,
                r.method,
                r.bound,
                r.bound_sqrt,
                r.train_gibbs,
                r.test_gibbs,
                r.test_mse,
                r.kl_over_n,
                r.noise_variance
            );
        }
        out!(
            "wrote {}/pac-sgp-inducing.{{csv,json}} and one SVG per dataset",
            a.out.display()
        );
    }
    Ok(())
}
