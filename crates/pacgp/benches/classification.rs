//! GP classification at N = 2000, D = 8 (SE-ARD, probit/logistic): Laplace and parallel EP
//! fits at fixed θ and one evidence + gradient evaluation (criterion), sequential EP at
//! N = 500, and whole ML-II fits (Laplace with the logistic, start θ = 0 as scikit-learn's
//! `GaussianProcessClassifier` in `shared/peers/gpc.py --ard`; EP with the probit). An ML-II fit takes seconds
//! to minutes, too long for criterion's ten samples: two fits are timed once each with
//! `Instant` and printed to stderr (wall time, evaluations, ln q) before the criterion runs.
//!
//! Data: `synth_clf_n2000.csv` written by `python3 shared/peers/make_data.py --out
//! /tmp/peers-data` (x ~ U(−2, 2)^8, label = 1 if Σ sin(x_j) + 0.3 ε > 0), read from
//! `$PACGP_CLF_DATA` or `/tmp/peers-data/synth_clf_n2000.csv`; if absent, a draw from the
//! same distribution (seeded ChaCha8) is used instead. Inputs are z-scored as gpc.py does.
//! Run: `cargo bench -p pacgp --bench classification`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion};
use faer::Mat;
use pacgp::data::{load_csv_classification, CsvOptions, Standardizer};
use pacgp::inference::ep::{ep, EpConfig, EpSchedule};
use pacgp::inference::evidence::{
    fit_ep_ml2, fit_laplace_ml2, laplace_evidence, ClassifierMlConfig,
};
use pacgp::inference::laplace::{laplace, LaplaceConfig};
use pacgp::inference::Problem;
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;

mod common;

fn data() -> (Mat<f64>, Vec<f64>) {
    let path = std::env::var("PACGP_CLF_DATA")
        .unwrap_or_else(|_| "/tmp/peers-data/synth_clf_n2000.csv".into());
    let (x, y, names) = match load_csv_classification(&path, &CsvOptions::default()) {
        Ok((d, _)) => (d.x, d.y, d.feature_names),
        Err(_) => {
            let (x, y) = common::synth_clf_gaussian(2000);
            (x, y, (1..=8).map(|j| format!("x{j}")).collect())
        }
    };
    let s = Standardizer::fit(x.as_ref(), &names).unwrap();
    (s.transform(x.as_ref()).unwrap(), y)
}

/// Two timed ML-II fits (Laplace, logistic) and one EP ML-II fit (probit, parallel sweeps,
/// the ML-II default site tolerance), printed to stderr.
fn time_ml2(x: &Mat<f64>, y: &[f64], k: &Kernel) {
    let t = std::time::Instant::now();
    let r = fit_ep_ml2(
        Problem::new(k, &Likelihood::probit(), x.as_ref(), y),
        &ClassifierMlConfig::default(),
    )
    .unwrap();
    eprintln!(
        "ep_ml2_fit_probit n=2000: {:.2} s, {} iterations, {} evaluations, {:?}, ln Z_EP = {:.4}",
        t.elapsed().as_secs_f64(),
        r.report.iterations,
        r.report.evaluations,
        r.report.termination,
        r.fit.ln_evidence.unwrap(),
    );
    for run in 0..2 {
        let t = std::time::Instant::now();
        let r = fit_laplace_ml2(
            Problem::new(k, &Likelihood::Logistic, x.as_ref(), y),
            &ClassifierMlConfig::default(),
        )
        .unwrap();
        eprintln!(
            "laplace_ml2_fit_logistic n=2000 run {run}: {:.2} s, {} iterations, {} evaluations, \
             {:?}, ln q = {:.4}, θ = {:?}",
            t.elapsed().as_secs_f64(),
            r.report.iterations,
            r.report.evaluations,
            r.report.termination,
            r.fit.ln_evidence.unwrap(),
            r.report.params
        );
    }
}

fn benches(c: &mut Criterion) {
    let (x, y) = data();
    let k = Kernel::se_ard(&[1.0; 8], 1.0);
    if std::env::var_os("PACGP_BENCH_SKIP_ML2").is_none() {
        time_ml2(&x, &y, &k);
    }
    let mut g = c.benchmark_group("classification_n2000");
    g.sample_size(10);
    let probit = Likelihood::probit();
    g.bench_function("laplace_fit", |b| {
        b.iter(|| laplace(&k, &probit, x.as_ref(), &y, &LaplaceConfig::default()).unwrap())
    });
    g.bench_function("laplace_evidence_and_gradient", |b| {
        b.iter(|| {
            laplace_evidence(
                Problem::new(&k, &Likelihood::Logistic, x.as_ref(), &y),
                &LaplaceConfig::default(),
                None,
            )
            .unwrap()
        })
    });
    let par = EpConfig::default();
    g.bench_function("ep_parallel_fit", |b| {
        b.iter(|| ep(&k, &probit, x.as_ref(), &y, &par).unwrap())
    });
    g.finish();
    // Sequential EP is O(N³) memory-bound rank-one work per sweep: compared at N = 500.
    let mut g = c.benchmark_group("classification_n500");
    g.sample_size(10);
    let idx: Vec<usize> = (0..500).collect();
    let x5 = Mat::from_fn(500, x.ncols(), |i, j| x[(idx[i], j)]);
    let y5 = &y[..500];
    for (name, cfg) in [
        (
            "ep_sequential_fit",
            EpConfig {
                schedule: EpSchedule::Sequential,
                damping: 1.0,
                ..EpConfig::default()
            },
        ),
        ("ep_parallel_fit", par),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| ep(&k, &probit, x5.as_ref(), y5, &cfg).unwrap())
        });
    }
    g.finish();
}

criterion_group!(classification, benches);
criterion_main!(classification);
