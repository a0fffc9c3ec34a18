//! `pacgp reproduce zhang-sparse`: seed 002 §4 — ΔR(k) of greedy, κ-greedy and random sparse
//! GP regression in the dual (Figures 1–3) beside Theorem 3.1's bound; `zhang-kin40k`: the
//! selections against VFE and PAC-SGP on kin40k. The experiments' settings and rows are the
//! library's ([`pacgp::experiments::zhang`]); this file writes them.

use anyhow::{Context, Result};
use pacgp::data::{self, CsvOptions};
use pacgp::experiments::zhang::{self, Kin40kRow, Kin40kSettings, ZhangSettings, KIN40K_METHODS};
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::{with_bar, write, write_csv};
use crate::plot::{write_svg, Figure, Series};

const ALGORITHMS: [&str; 3] = ["greedy", "kappa-greedy", "random"];

pub(super) fn run(a: &ReproduceArgs) -> Result<()> {
    let settings = super::scaled(a, ZhangSettings::quick, ZhangSettings::paper);
    let result = with_bar(
        settings.data_seeds.len(),
        "zhang-sparse data sets",
        |progress| zhang::zhang_sparse(&settings, progress),
    )?;
    write_csv(&a.out.join("zhang-sparse.csv"), &result.rows)?;
    let curves: serde_json::Map<String, serde_json::Value> = ALGORITHMS
        .iter()
        .map(|alg| {
            let mean = result.mean_curve(alg);
            let bound: Vec<f64> = (0..=settings.k_max)
                .map(|k| {
                    result
                        .rows
                        .iter()
                        .filter(|r| r.algorithm == *alg && r.k == k)
                        .map(|r| r.bound)
                        .sum::<f64>()
                        / settings.data_seeds.len() as f64
                })
                .collect();
            (
                alg.to_string(),
                json!({ "mean_delta_r": mean, "theorem_3_1_bound": bound }),
            )
        })
        .collect();
    let obj = json!({
        "experiment": "zhang-sparse",
        "settings": settings,
        "r_hat": result.r_hat,
        "delta_r0": result.delta_r0,
        "instances": result.instances,
        "curves": curves,
    });
    write(&a.out.join("zhang-sparse.json"), &obj.to_string())?;
    write_figures(a, &result)?;
    if a.json {
        out!("{obj}");
        return Ok(());
    }
    out!(
        "Seed 002 §4 (d = {}, n = {}, λ = {}, κ = {}, {} data seeds): R(ŵ) = {:.3} ± {:.3}, ΔR(0) = {:.3} ± {:.3} (the paper's one instance: 3.03, 0.90)",
        settings.d,
        settings.n,
        settings.lambda,
        settings.kappa,
        settings.data_seeds.len(),
        result.r_hat.mean,
        result.r_hat.sd,
        result.delta_r0.mean,
        result.delta_r0.sd
    );
    out!("    k   greedy  κ-greedy   random");
    let means: Vec<Vec<f64>> = ALGORITHMS.iter().map(|a| result.mean_curve(a)).collect();
    for k in (10..=settings.k_max).step_by(10) {
        out!(
            "{k:>5}  {:>7.4}  {:>8.4}  {:>7.4}",
            means[0][k],
            means[1][k],
            means[2][k]
        );
    }
    out!(
        "wrote {}",
        a.out.join("zhang-sparse*.{csv,json,svg}").display()
    );
    Ok(())
}

/// Figures 1–3: mean ΔR(k); min/avg/max over the random runs; k·ΔR(k).
fn write_figures(a: &ReproduceArgs, result: &zhang::ZhangResult) -> Result<()> {
    let seed0 = result.settings.data_seeds[0];
    let curve = |alg: &str, f: &dyn Fn(&zhang::ZhangCurveRow) -> f64| -> Vec<(f64, f64)> {
        result
            .rows
            .iter()
            .filter(|r| r.algorithm == alg && r.data_seed == seed0 && r.k > 0)
            .map(|r| (r.k as f64, f(r)))
            .collect()
    };
    let fig1 = Figure {
        title: "Seed 002 Fig. 1: approximation error ΔR(k) against sparseness k".into(),
        x_label: "k".into(),
        y_label: "ΔR".into(),
        series: ALGORITHMS
            .iter()
            .map(|alg| Series::line(alg.to_string(), curve(alg, &|r| r.delta_r_mean)))
            .collect(),
    };
    write_svg(&fig1, &a.out.join("zhang-sparse-figure-1.svg"))?;
    let mut spread = Vec::new();
    for alg in ["kappa-greedy", "random"] {
        spread.push(Series::line(
            format!("{alg} min"),
            curve(alg, &|r| r.delta_r_min),
        ));
        spread.push(Series::line(
            format!("{alg} avg"),
            curve(alg, &|r| r.delta_r_mean),
        ));
        spread.push(Series::line(
            format!("{alg} max"),
            curve(alg, &|r| r.delta_r_max),
        ));
    }
    let fig2 = Figure {
        title: "Seed 002 Fig. 2: ΔR(k), best, average and worst of the random runs".into(),
        x_label: "k".into(),
        y_label: "ΔR".into(),
        series: spread,
    };
    write_svg(&fig2, &a.out.join("zhang-sparse-figure-2.svg"))?;
    let fig3 = Figure {
        title: "Seed 002 Fig. 3: k·ΔR(k) (Theorem 3.1: O(1))".into(),
        x_label: "k".into(),
        y_label: "k ΔR".into(),
        series: ALGORITHMS
            .iter()
            .map(|alg| Series::line(alg.to_string(), curve(alg, &|r| r.k_delta_r)))
            .collect(),
    };
    write_svg(&fig3, &a.out.join("zhang-sparse-figure-3.svg"))
}

/// kin40k: the three selections, VFE and kl-PAC-SGP (k-means or greedy Z) at every M.
pub(super) fn kin40k(a: &ReproduceArgs) -> Result<()> {
    let mut settings = super::scaled(a, Kin40kSettings::quick, Kin40kSettings::standard);
    if !a.m.is_empty() {
        settings.ms = a.m.clone();
    }
    let load = |f: &str| {
        data::load_csv(
            a.data_dir.join(format!("kin40k/kin40k_{f}.csv.gz")),
            &CsvOptions::default(),
        )
    };
    let train = load("train").context("loading the kin40k training set")?;
    let test = load("test").context("loading the kin40k test set")?;
    let fits = settings.ms.len() * KIN40K_METHODS.len();
    let rows = with_bar(fits, "zhang-kin40k fits", |progress| {
        zhang::kin40k_comparison(&train, &test, &settings, progress)
    })?;
    write_csv(&a.out.join("zhang-kin40k.csv"), &rows)?;
    let obj = json!({ "experiment": "zhang-kin40k", "settings": settings, "rows": rows });
    write(&a.out.join("zhang-kin40k.json"), &obj.to_string())?;
    write_kin40k_figure(a, &settings, &rows)?;
    if a.json {
        out!("{obj}");
        return Ok(());
    }
    out!(
        "kin40k ({} training, {} test points; θ, σ² of the selections by ML-II on {} points; ε = {} standardised, δ = {})",
        settings.n_train,
        settings.n_test,
        settings.n_hyper,
        settings.epsilon,
        pacgp::experiments::PAPER_DELTA
    );
    out!("    M  method          test RMSE   bound  test Gibbs   seconds");
    for r in &rows {
        out!(
            "{:>5}  {:<14}  {:>9.4}  {:>6.4}  {:>10.4}  {:>8.2}",
            r.m,
            r.method,
            r.test_rmse,
            r.bound,
            r.test_gibbs,
            r.seconds
        );
    }
    out!(
        "wrote {}",
        a.out.join("zhang-kin40k.{csv,json,svg}").display()
    );
    Ok(())
}

/// Bound and test Gibbs risk against M for every method.
fn write_kin40k_figure(a: &ReproduceArgs, s: &Kin40kSettings, rows: &[Kin40kRow]) -> Result<()> {
    let series = KIN40K_METHODS
        .iter()
        .flat_map(|m| {
            let pts = |f: fn(&Kin40kRow) -> f64| -> Vec<(f64, f64)> {
                rows.iter()
                    .filter(|r| r.method == *m)
                    .map(|r| (r.m as f64, f(r)))
                    .collect()
            };
            [
                Series::line(format!("{m} bound"), pts(|r| r.bound)),
                Series::points(format!("{m} test Gibbs"), pts(|r| r.test_gibbs)),
            ]
        })
        .collect();
    let fig = Figure {
        title: format!(
            "kin40k: bound (lines) and test Gibbs risk (points) vs M, ε = {}",
            s.epsilon
        ),
        x_label: "M".into(),
        y_label: "ε-band risk".into(),
        series,
    };
    write_svg(&fig, &a.out.join("zhang-kin40k.svg"))
}
