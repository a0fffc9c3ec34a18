//! Wall time of approximate (cavity) against exact (refit) leave-one-out for Laplace and EP
//! (probit, SE kernel at fixed θ), and how often their decisions differ.
//!
//! `cargo run --release -p pacgp --example loo_speed -- bc [ROWS]`: breast cancer (683
//! complete rows, standardised), `se_iso(3, 4)`;
//! `cargo run --release -p pacgp --example loo_speed -- synth2000 [ROWS]`: N = 2000, D = 8,
//! x ~ U(−2, 2)⁸, y = sgn(Σ sin x_j + 0.3ε) (the classification bench's seeded draw),
//! SE-ARD with unit lengthscales.
//!
//! A third argument `cold` refits from each method's own start instead of warm-starting
//! from the full-data fit.
//!
//! ROWS (default: all) refits a seeded subset of the rows; the exact time for all N is then
//! extrapolated linearly (every refit costs the same up to its number of iterations) and
//! marked as such.

use std::time::Instant;

use faer::Mat;
use pacgp::data::{permutation, Standardizer};
use pacgp::inference::ep::EpConfig;
use pacgp::inference::laplace::LaplaceConfig;
use pacgp::inference::InferenceMethod;
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::loo::{classifier_exact_loo, training_cavities};

#[path = "../benches/common/mod.rs"]
mod common;

fn breast_cancer() -> (Mat<f64>, Vec<f64>, Kernel) {
    let opts = pacgp::data::CsvOptions {
        drop_columns: vec!["sample_code_number".into()],
        ..Default::default()
    };
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv");
    let d = pacgp::data::load_csv_classification(path, &opts)
        .expect("breast cancer data")
        .0;
    let s = Standardizer::fit(d.x.as_ref(), &d.feature_names).expect("scaler");
    (
        s.transform(d.x.as_ref()).expect("scaled"),
        d.y,
        Kernel::se_iso(3.0, 4.0),
    )
}

fn synth2000() -> (Mat<f64>, Vec<f64>, Kernel) {
    let (x, y) = common::synth_clf_gaussian(2000);
    (x, y, Kernel::se_ard(&[1.0; 8], 1.0))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (x, y, k) = match args.get(1).map(String::as_str) {
        Some("synth2000") => synth2000(),
        _ => breast_cancer(),
    };
    let n = y.len();
    let m = args
        .get(2)
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(n)
        .min(n);
    let rows: Vec<usize> = if m == n {
        (0..n).collect()
    } else {
        permutation(n, 10)[..m].to_vec()
    };
    let warm = args.get(3).map(String::as_str) != Some("cold");
    let lik = Likelihood::probit();
    for method in [
        InferenceMethod::new(LaplaceConfig::default()),
        InferenceMethod::new(EpConfig::default()),
    ] {
        let t = Instant::now();
        let fit = method.fit(&k, &lik, x.as_ref(), &y).expect("fit");
        let t_fit = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let cav = training_cavities(&fit, x.as_ref()).expect("cavities");
        let t_approx = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let exact = classifier_exact_loo(
            &method,
            &k,
            &lik,
            x.as_ref(),
            &y,
            &rows,
            warm.then_some(&fit),
        )
        .expect("refits");
        let t_exact = t.elapsed().as_secs_f64();
        let differ = rows
            .iter()
            .zip(&exact.loo_margins)
            .filter(|(&i, e)| (y[i] * cav.mean[i] > 0.0) != (**e > 0.0))
            .count();
        let approx_errors = rows
            .iter()
            .filter(|&&i| !(y[i] * cav.mean[i] > 0.0))
            .count();
        let t_all = t_exact * n as f64 / m as f64;
        println!(
            "{} N={n}: fit {t_fit:.3} s, cavity LOO {t_approx:.3} s, {m} {} refits {t_exact:.1} s \
             ({} all {n}{}), ratio {:.0}x; errors on the {m} rows: cavity {approx_errors}, \
             exact {}, {differ} decisions differ, {} refits not converged",
            method.name(),
            if warm { "warm" } else { "cold" },
            if m == n {
                "measured,"
            } else {
                "extrapolated to"
            },
            if m == n {
                String::new()
            } else {
                format!(" ≈ {t_all:.0} s")
            },
            t_all / t_approx,
            exact.errors,
            exact.not_converged
        );
    }
}
