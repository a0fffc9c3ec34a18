//! The sharded sparse objectives' map steps, as one Dask worker of one thread runs them on one
//! shard (M = 500, D = 8, data as `shared/peers/make_data.py`; `docs/dask.md`):
//! - `sharded/vfe_stats/{n}`: VFE's first map step, `Ā = Σ VVᵀ`, `Σ Vy`, `Σ y²` and the trace
//!   gap over the shard's row blocks;
//! - `sharded/vfe_gradient/{n}`: VFE's second map step, the shard's part of the gradient;
//! - `sharded/pac_sgp_evaluation/{n}`: one kl-PAC-SGP (FITC form) evaluation over the one
//!   shard, its three map steps and the driver's M×M work between them.
//!
//! A 10⁶-point evaluation on two workers is eight such shards of 125 000 rows; the cost is
//! linear in the rows, so 32 000 keeps a sample short.
//!
//! Run: `cargo bench -p pacgp --bench sharded`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

mod common;

use common::{kernel, pac_sgp_settings, synth};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use faer::Mat;
use pacgp::objective::pac_sgp_sharded::PacSgpSharded;
use pacgp::regression::sharded::{kuu_factor, vfe_global, vfe_shard_gradient, vfe_shard_stats};
use pacgp::regression::sparse::NegSparseObjective;
use std::time::Duration;

/// The allocator of the `pacgp` binary and the Python module (see the CLI's main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const M: usize = 500;
const D: usize = 8;

fn map_steps(c: &mut Criterion) {
    let mut g = c.benchmark_group("sharded");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    // A worker of one thread, as on the documented LocalCluster.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let n = 32000;
    let (x, y) = synth(n, D);
    let kernel = kernel();
    let noise = 0.1;
    let z = Mat::from_fn(M, D, |a, t| x[(a * 7 % n, t)]);
    let l = kuu_factor(&kernel, z.as_ref()).unwrap();

    g.bench_with_input(BenchmarkId::new("vfe_stats", n), &n, |b, _| {
        b.iter(|| pool.install(|| vfe_shard_stats(&kernel, z.as_ref(), &l, x.as_ref(), &y)))
    });
    let stats = vfe_shard_stats(&kernel, z.as_ref(), &l, x.as_ref(), &y).unwrap();
    let global = vfe_global(&kernel, noise, z.as_ref(), &l, &stats).unwrap();
    g.bench_with_input(BenchmarkId::new("vfe_gradient", n), &n, |b, _| {
        b.iter(|| {
            pool.install(|| {
                vfe_shard_gradient(&kernel, z.as_ref(), &l, x.as_ref(), &y, &global.adjoints)
            })
        })
    });

    let b = pac_sgp_settings();
    let pac = PacSgpSharded::new(&kernel, D, M, 1.0, b.loss, b.bound).unwrap();
    let p = NegSparseObjective::pack(&kernel, noise, z.as_ref());
    let shard = [(x.as_ref(), y.as_slice())];
    g.bench_with_input(BenchmarkId::new("pac_sgp_evaluation", n), &n, |b, _| {
        b.iter(|| pool.install(|| pac.value_and_gradient(&p, &shard).unwrap()))
    });
    g.finish();
}

criterion_group!(sharded, map_steps);
criterion_main!(sharded);
