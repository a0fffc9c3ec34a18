//! Exact-GP hot paths at N = 1000…8000, D = 8, SE-ARD: Gram build, Cholesky, and one
//! negative-log-marginal-likelihood + gradient evaluation (what every ML-II step costs).
//! Data: x ~ U(−2, 2)^8, y = Σ sin(x_j) + 0.1 ε, as `shared/peers/make_data.py`.
//! Run: `cargo bench -p pacgp --bench exact_gp`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

mod common;

use common::{kernel, synth};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pacgp::linalg::{Cholesky, JitterPolicy};
use pacgp::optim::Objective;
use pacgp::regression::exact::NegLogMarginalLikelihood;

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("exact_gp");
    g.sample_size(10);
    for &n in &[1000usize, 2000, 4000, 8000] {
        let (x, y) = synth(n, 8);
        let k = kernel();
        g.bench_with_input(BenchmarkId::new("gram", n), &n, |b, _| {
            b.iter(|| k.gram(x.as_ref()).unwrap())
        });
        let mut kn = k.gram(x.as_ref()).unwrap();
        for i in 0..n {
            kn[(i, i)] += 0.01;
        }
        g.bench_with_input(BenchmarkId::new("cholesky", n), &n, |b, _| {
            b.iter(|| Cholesky::factor(kn.as_ref(), &JitterPolicy::none(), "K").unwrap())
        });
        if n <= 4000 {
            let obj = NegLogMarginalLikelihood::new(&k, x.as_ref(), &y, JitterPolicy::default());
            let mut p = k.params();
            p.push(0.01f64.ln());
            g.bench_with_input(BenchmarkId::new("nlml_and_gradient", n), &n, |b, _| {
                b.iter(|| obj.value_and_gradient(&p).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(exact, benches);
criterion_main!(exact);
