//! Sparse hot paths: one objective + gradient of VFE, FITC and kl-PAC-SGP (FITC form) at
//! M = 500, D = 8 (data as `shared/peers/make_data.py`):
//! - `sparse_gp/{method}/{n}` at N = 8000, 16000, 32000 on the global pool (cost linear in N);
//! - `sparse_gp_threads/{method}-{t}t/32000` on a pool of 1 and of 2 threads (the second core's
//!   gain, issue target ≥ 1.7×);
//! - `sparse_gp_busy/{method}-{t}t/32000` the same with a busy loop in another process holding
//!   one core (target: two threads no slower than one);
//! - `kmeans_sums/{n}`: one Lloyd step of the inducing inputs' k-means start (M = 500 centres).
//!
//! Run: `cargo bench -p pacgp --bench sparse_gp` (filter with e.g. `-- sparse_gp_threads`).
#![allow(missing_docs)] // criterion_group! generates undocumented items

mod common;

use common::{kernel, pac_sgp_settings, synth};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use faer::Mat;
use pacgp::kernel::Kernel;
use pacgp::objective::pac_sgp::PacSgpObjective;
use pacgp::optim::Objective;
use pacgp::regression::inducing_init::kmeans_sums;
use pacgp::regression::sparse::{NegSparseObjective, SparseMethod};
use std::time::Duration;

/// The allocator of the `pacgp` binary and the Python module (see the CLI's main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const M: usize = 500;

/// The three objectives at one problem size, with their starting point.
struct Problem {
    x: Mat<f64>,
    y: Vec<f64>,
    p: Vec<f64>,
    kernel: Kernel,
}

impl Problem {
    fn new(n: usize) -> Self {
        let kernel = kernel();
        let (x, y) = synth(n, 8);
        let z = Mat::from_fn(M, 8, |a, t| x[(a * 7 % n, t)]);
        let p = NegSparseObjective::pack(&kernel, 0.1, z.as_ref());
        Self { x, y, p, kernel }
    }

    /// `f(name, objective)` for VFE, FITC and kl-PAC-SGP.
    fn each(&self, mut f: impl FnMut(&str, &(dyn Objective + Sync))) {
        for (name, method) in [("vfe", SparseMethod::Vfe), ("fitc", SparseMethod::Fitc)] {
            f(
                name,
                &NegSparseObjective::new(&self.kernel, method, self.x.as_ref(), &self.y, M),
            );
        }
        let b = pac_sgp_settings();
        let pac = PacSgpObjective::new(
            &self.kernel,
            self.x.as_ref(),
            &self.y,
            M,
            1.0,
            b.loss,
            b.bound,
        )
        .unwrap();
        f("kl_pac_sgp", &pac);
    }
}

fn configure(g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    // Ten samples, short warm-up and measurement: the 32000-point case still takes ~10 evaluations.
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
}

fn by_size(c: &mut Criterion) {
    let mut g = c.benchmark_group("sparse_gp");
    configure(&mut g);
    for &n in &[8000usize, 16000, 32000] {
        let pb = Problem::new(n);
        pb.each(|name, o| {
            g.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| o.value_and_gradient(&pb.p).unwrap())
            });
        });
    }
    g.finish();
}

/// One and two threads at N = 32000, optionally with a busy loop holding one core.
fn by_threads(c: &mut Criterion, group: &str, busy: bool) {
    let mut g = c.benchmark_group(group);
    configure(&mut g);
    let n = 32000;
    let pb = Problem::new(n);
    let spinner = busy.then(|| {
        std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .expect("start the busy loop")
    });
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pb.each(|name, o| {
            let id = BenchmarkId::new(format!("{name}-{threads}t"), n);
            g.bench_with_input(id, &n, |b, _| {
                b.iter(|| pool.install(|| o.value_and_gradient(&pb.p).unwrap()))
            });
        });
    }
    if let Some(mut child) = spinner {
        child.kill().ok();
        child.wait().ok();
    }
    g.finish();
}

fn threads(c: &mut Criterion) {
    by_threads(c, "sparse_gp_threads", false);
}

fn busy(c: &mut Criterion) {
    by_threads(c, "sparse_gp_busy", true);
}

fn kmeans(c: &mut Criterion) {
    let mut g = c.benchmark_group("kmeans_sums");
    configure(&mut g);
    let n = 32000;
    let (x, _) = synth(n, 8);
    let centres = Mat::from_fn(M, 8, |a, t| x[(a * 7 % n, t)]);
    g.bench_function(BenchmarkId::from_parameter(n), |b| {
        b.iter(|| kmeans_sums(x.as_ref(), centres.as_ref()).unwrap())
    });
    g.finish();
}

criterion_group!(sparse, by_size, threads, busy, kmeans);
criterion_main!(sparse);
