//! Seed 002 Table 1: the cost of k-term sparse approximation. Algorithm 3 (κ-greedy, κ = 59)
//! at n = 10000 and k = 125, 250, 500; Algorithm 2 (random) at the same sizes; Algorithm 1
//! (full greedy) at n = 2000 and k = 50, 100, 200, 400 and at k = 100 for n = 1000, 2000, 4000
//! (Gram matrix formed outside the timed loop). Both greedy steps are timed: the paper's
//! rescaled step and the exact refit. Growth exponents are the log-log slopes between the
//! means. SE-ARD kernel, D = 8, data as in `benches/sparse_gp.rs`.
//! Run: `RAYON_NUM_THREADS=1 cargo bench -p pacgp --bench greedy` (one thread: Table 1 counts
//! sequential operations, and on a shared machine rayon's waits under oversubscription swamp
//! the growth being measured).
#![allow(missing_docs)] // criterion_group! generates undocumented items

mod common;

use common::{kernel, synth};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pacgp::regression::greedy::{select, Algorithm, GreedyConfig, GreedyProblem, StopRule, Update};
use std::time::Duration;

fn cfg(algorithm: Algorithm, update: Update, k: usize) -> GreedyConfig {
    GreedyConfig {
        algorithm,
        update,
        stop: StopRule::Steps { k },
        seed: 7,
    }
}

fn label(update: Update) -> &'static str {
    match update {
        Update::Rescale => "rescale",
        Update::Refit => "refit",
    }
}

fn randomised(c: &mut Criterion) {
    let mut g = c.benchmark_group("greedy_n10000");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let k = kernel();
    let n = 10_000;
    let (x, y) = synth(n, 8);
    let lambda = 0.01 / n as f64;
    let p = GreedyProblem::new(&k, x.as_ref(), &y, lambda).unwrap();
    for kk in [125usize, 250, 500] {
        for update in [Update::Rescale, Update::Refit] {
            let c = cfg(Algorithm::KappaGreedy { kappa: 59 }, update, kk);
            g.bench_with_input(
                BenchmarkId::new(format!("kappa59_{}", label(update)), kk),
                &kk,
                |b, _| b.iter(|| select(&p, &c).unwrap()),
            );
        }
        let c = cfg(Algorithm::Random, Update::Refit, kk);
        g.bench_with_input(BenchmarkId::new("random", kk), &kk, |b, _| {
            b.iter(|| select(&p, &c).unwrap())
        });
    }
    g.finish();
}

fn full_greedy(c: &mut Criterion) {
    let mut g = c.benchmark_group("greedy_full");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let k = kernel();
    let runs: [(usize, usize); 6] = [
        (2000, 50),
        (2000, 100),
        (2000, 200),
        (2000, 400),
        (1000, 100),
        (4000, 100),
    ];
    for (n, kk) in runs {
        let (x, y) = synth(n, 8);
        let lambda = 0.01 / n as f64;
        let p = GreedyProblem::new(&k, x.as_ref(), &y, lambda)
            .unwrap()
            .with_gram()
            .unwrap();
        for update in [Update::Rescale, Update::Refit] {
            let c = cfg(Algorithm::Greedy, update, kk);
            g.bench_with_input(
                BenchmarkId::new(format!("n{n}_{}", label(update)), kk),
                &kk,
                |b, _| b.iter(|| select(&p, &c).unwrap()),
            );
        }
    }
    g.finish();
}

criterion_group!(benches, randomised, full_greedy);
criterion_main!(benches);
