//! Time an SVM fit from a CSV under the protocol of `shared/peers/svm.py`, so the two can be
//! run alternately: RBF `exp(−γ‖x − x'‖²)` (default γ = 1/d), box constraint C (default 1),
//! bias, tolerance 1e-3, 200 MB kernel cache, shrinking; features z-scored with the training
//! mean and standard deviation (constant columns only centred); the two labels map to ±1.
//! Prints one JSON line: median training seconds over `--repeats`, support vectors (and
//! bound ones), dual objective, test error, and optionally the LOO error and its seconds.
//!
//! ```text
//! cargo run --release -p pacgp --example svm_timing -- --data train.csv [--test test.csv]
//!     [--target COL] [--drop a,b] [--c 1] [--gamma G] [--solver smo|adatron]
//!     [--repeats 3] [--loo none|approx|exact|both] [--max-train N] [--subsample N]
//!     [--momentum] [--max-iter SWEEPS]
//! ```
//!
//! `--max-train N` keeps the first N training rows (as the peers); `--subsample N` a seeded
//! random N of them (`data::permutation(n, 0)`), for files sorted by label.
#![allow(missing_docs)]

use std::time::Instant;

use faer::Mat;
use pacgp::data::{load_csv_classification, CsvOptions, TargetSpec};
use pacgp::kernel::Kernel;
use pacgp::svm::loo::{svm_exact_loo, svm_loo};
use pacgp::svm::{svm, Slack, SvmConfig, SvmSolver};

struct Args {
    data: String,
    test: Option<String>,
    target: Option<String>,
    drop: Vec<String>,
    c: f64,
    gamma: Option<f64>,
    solver: SvmSolver,
    repeats: usize,
    loo: String,
    max_train: Option<usize>,
    subsample: Option<usize>,
    momentum: bool,
    max_iter: Option<usize>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        data: String::new(),
        test: None,
        target: None,
        drop: vec![],
        c: 1.0,
        gamma: None,
        solver: SvmSolver::Smo,
        repeats: 3,
        loo: "none".into(),
        max_train: None,
        subsample: None,
        momentum: false,
        max_iter: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or(format!("{k} needs a value"));
        let num = |s: String| s.parse::<f64>().map_err(|e| e.to_string());
        match k.as_str() {
            "--data" => a.data = v()?,
            "--test" => a.test = Some(v()?),
            "--target" => a.target = Some(v()?),
            "--drop" => a.drop = v()?.split(',').map(String::from).collect(),
            "--c" => a.c = num(v()?)?,
            "--gamma" => a.gamma = Some(num(v()?)?),
            "--repeats" => a.repeats = num(v()?)? as usize,
            "--max-train" => a.max_train = Some(num(v()?)? as usize),
            "--subsample" => a.subsample = Some(num(v()?)? as usize),
            "--loo" => a.loo = v()?,
            "--momentum" => a.momentum = true,
            "--max-iter" => a.max_iter = Some(num(v()?)? as usize),
            "--solver" => {
                a.solver = match v()?.as_str() {
                    "smo" => SvmSolver::Smo,
                    "adatron" => SvmSolver::Adatron,
                    s => return Err(format!("unknown solver {s}")),
                }
            }
            _ => return Err(format!("unknown argument {k}")),
        }
    }
    if a.data.is_empty() {
        return Err("--data is required".into());
    }
    Ok(a)
}

fn load(path: &str, a: &Args) -> Result<(Mat<f64>, Vec<f64>), String> {
    let target = a.target.as_deref();
    let opts = CsvOptions {
        target: target.map_or_else(TargetSpec::default, TargetSpec::parse),
        drop_columns: a.drop.clone(),
        ..Default::default()
    };
    let (d, _) = load_csv_classification(path, &opts).map_err(|e| e.to_string())?;
    Ok((d.x, d.y))
}

/// z-score with training statistics (population sd; sd 0 → 1), as `peers/common.py`.
fn standardise(train: &Mat<f64>, other: &Mat<f64>) -> (Mat<f64>, Mat<f64>) {
    let (n, d) = (train.nrows(), train.ncols());
    let mut mu = vec![0.0; d];
    let mut sd = vec![0.0; d];
    for j in 0..d {
        mu[j] = (0..n).map(|i| train[(i, j)]).sum::<f64>() / n as f64;
        let var = (0..n).map(|i| (train[(i, j)] - mu[j]).powi(2)).sum::<f64>() / n as f64;
        sd[j] = if var > 0.0 { var.sqrt() } else { 1.0 };
    }
    let z = |m: &Mat<f64>| Mat::from_fn(m.nrows(), d, |i, j| (m[(i, j)] - mu[j]) / sd[j]);
    (z(train), z(other))
}

fn main() {
    if let Err(e) = run() {
        eprintln!("svm_timing: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let a = parse()?;
    let (mut x, mut y) = load(&a.data, &a)?;
    if let Some(m) = a.max_train {
        let m = m.min(y.len());
        x = Mat::from_fn(m, x.ncols(), |i, j| x[(i, j)]);
        y.truncate(m);
    }
    if let Some(m) = a.subsample {
        let idx = &pacgp::data::permutation(y.len(), 0)[..m.min(y.len())];
        x = Mat::from_fn(idx.len(), x.ncols(), |i, j| x[(idx[i], j)]);
        y = idx.iter().map(|&i| y[i]).collect();
    }
    let (xte_raw, yte) = match &a.test {
        Some(p) => load(p, &a)?,
        None => (x.clone(), y.clone()),
    };
    let (xtr, xte) = standardise(&x, &xte_raw);
    let d = xtr.ncols();
    let gamma = a.gamma.unwrap_or(1.0 / d as f64);
    let k = Kernel::se_iso((1.0 / (2.0 * gamma)).sqrt(), 1.0); // exp(−γr²) = exp(−r²/(2l²))
    let cfg = SvmConfig {
        slack: Slack::Linear { c: a.c },
        solver: a.solver,
        adatron_momentum: a.momentum,
        max_iter: a.max_iter.unwrap_or(SvmConfig::default().max_iter),
        ..Default::default()
    };
    let mut times = Vec::new();
    let mut fit = None;
    for _ in 0..a.repeats.max(1) {
        let t = Instant::now();
        let f = svm(&k, xtr.as_ref(), &y, &cfg).map_err(|e| e.to_string())?;
        times.push(t.elapsed().as_secs_f64());
        fit = Some(f);
    }
    let fit = fit.ok_or("no fit")?;
    times.sort_by(f64::total_cmp);
    let pred = fit
        .decision_function(&k, xtr.as_ref(), &y, xte.as_ref())
        .map_err(|e| e.to_string())?;
    let test_err = (0..yte.len())
        .filter(|&i| !(yte[i] * pred[i] > 0.0))
        .count() as f64
        / yte.len() as f64;
    let mut out = serde_json::json!({
        "tool": "pacgp",
        "solver": format!("{:?}", a.solver),
        "n": y.len(),
        "d": d,
        "gamma": gamma,
        "c": a.c,
        "train_seconds": times[times.len() / 2],
        "train_seconds_all": times,
        "n_sv": fit.sets.margin_sv.len() + fit.sets.bound_sv.len(),
        "n_bsv": fit.sets.bound_sv.len(),
        "dual_objective": fit.dual_objective,
        "iterations": fit.report.iterations,
        "test_error": test_err,
        "notes": fit.report.notes,
    });
    if a.loo == "approx" || a.loo == "both" {
        let t = Instant::now();
        let l = svm_loo(&fit, &k, xtr.as_ref(), &y).map_err(|e| e.to_string())?;
        out["loo_approx_error"] = l.rate.into();
        out["loo_approx_seconds"] = t.elapsed().as_secs_f64().into();
    }
    if a.loo == "exact" || a.loo == "both" {
        let t = Instant::now();
        let l = svm_exact_loo(&k, xtr.as_ref(), &y, &cfg, &fit).map_err(|e| e.to_string())?;
        out["loo_exact_error"] = l.rate.into();
        out["loo_exact_seconds"] = t.elapsed().as_secs_f64().into();
    }
    println!("{out}");
    Ok(())
}
