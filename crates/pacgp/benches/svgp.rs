//! The sparse variational classifier's hot path: one objective + gradient (the negative ELBO,
//! and the kl PAC-Bayes bound) at M = 500, D = 8 on labelled synthetic data
//! (`benches/common::synth_clf`), q(u) away from the prior:
//! - `svgp/{objective}/{n}` at N = 8000 and 32000 on the global pool (cost linear in N);
//! - `svgp_threads/elbo-{t}t/32000` on a pool of 1 and of 2 threads;
//! - `svgp_jackknife_sets/lac/{n}`: `predict_sets` of a fitted svgp (M = 50) with jackknife+
//!   sets at 256 inputs, N = 2000 and 8000 (its rows' sites removed from q(u); `O(N)` scores
//!   per input).
//!
//! Run: `cargo bench -p pacgp --bench svgp`. The whole fits, and GPflow's step at N = 10⁵, are
//! timed by `examples/svgp_timing.rs` (docs/performance.md).
#![allow(missing_docs)] // criterion_group! generates undocumented items

mod common;

use common::{kernel, synth_clf};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use faer::Mat;
use pacgp::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use pacgp::certificate::GibbsClassifier;
use pacgp::likelihood::Likelihood;
use pacgp::objective::bound::MinimisedBound;
use pacgp::optim::Objective;
use pacgp::svgp::point::Link;
use pacgp::svgp::{SvgpCriterion, SvgpObjective, WhitenedQ};
use std::time::Duration;

/// The allocator of the `pacgp` binary and the Python module (see the CLI's main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const M: usize = 500;

/// Data, Z at every 7th row, q(u) = N(0.1·1, 0.5·I) in the whitened space.
fn problem(n: usize) -> (Mat<f64>, Vec<f64>, Mat<f64>, WhitenedQ) {
    let (x, y) = synth_clf(n, 8);
    let z = Mat::from_fn(M, 8, |a, t| x[(a * 7 % n, t)]);
    let mut q = WhitenedQ::prior(M);
    q.mean.iter_mut().for_each(|m| *m = 0.1);
    (0..M).for_each(|j| q.sqrt[(j, j)] = 0.5);
    (x, y, z, q)
}

fn bound() -> SvgpCriterion {
    SvgpCriterion::Bound {
        bound: MinimisedBound::new(
            0.01,
            ConfidenceTerm::Maurer,
            BoundKind::Kl,
            HyperGrid::default().penalty(9),
        )
        .unwrap(),
        classifier: GibbsClassifier::latent(&Likelihood::probit()),
    }
}

fn configure(g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
}

fn by_size(c: &mut Criterion) {
    let mut g = c.benchmark_group("svgp");
    configure(&mut g);
    for n in [8000, 32000] {
        let (x, y, z, q) = problem(n);
        for (name, criterion) in [
            ("elbo", SvgpCriterion::Elbo(Link::Probit)),
            ("kl_bound", bound()),
        ] {
            let obj = SvgpObjective::new(&kernel(), x.as_ref(), &y, M, criterion).unwrap();
            let p = obj.layout().pack(&kernel(), z.as_ref(), &q);
            g.bench_with_input(BenchmarkId::new(name, n), &p, |b, p| {
                b.iter(|| obj.value_and_gradient(p).unwrap())
            });
        }
    }
    g.finish();
}

fn by_threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("svgp_threads");
    configure(&mut g);
    let (x, y, z, q) = problem(32000);
    let obj = SvgpObjective::new(
        &kernel(),
        x.as_ref(),
        &y,
        M,
        SvgpCriterion::Elbo(Link::Probit),
    )
    .unwrap();
    let p = obj.layout().pack(&kernel(), z.as_ref(), &q);
    for t in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap();
        g.bench_function(BenchmarkId::new(format!("elbo-{t}t"), 32000), |b| {
            b.iter(|| pool.install(|| obj.value_and_gradient(&p).unwrap()))
        });
    }
    g.finish();
}

/// A fitted svgp with jackknife+ sets on `n` rows of `synth_clf`, M = 50, 200 L-BFGS steps.
fn jackknife_model(n: usize) -> pacgp::model::FittedModel {
    use pacgp::spec::{FitOptions, IntervalMethod, MethodName};
    let (x, y) = synth_clf(n, 8);
    let data = pacgp::data::Dataset {
        x,
        y,
        feature_names: (1..=8).map(|t| format!("x{t}")).collect(),
        target_name: "label".into(),
    };
    let spec = FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        inducing: Some(50),
        max_iter: Some(200),
        ..Default::default()
    }
    .check(MethodName::Svgp)
    .unwrap();
    pacgp::fit::fit(&spec, &data, pacgp::data::LabelMap::signs()).unwrap()
}

fn jackknife_sets(c: &mut Criterion) {
    let mut g = c.benchmark_group("svgp_jackknife_sets");
    configure(&mut g);
    let (xt, _) = synth_clf(256, 8);
    for n in [2000, 8000] {
        let model = jackknife_model(n);
        g.bench_function(BenchmarkId::new("lac", n), |b| {
            b.iter(|| model.predict_sets(xt.as_ref(), 0.1).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, by_size, by_threads, jackknife_sets);
criterion_main!(benches);
