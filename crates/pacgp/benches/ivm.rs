//! IVM selection + fit at d = 300 on n = 1500, 3000, 6000 points (D = 8, probit), to show the
//! O(n d²) cost growing linearly in n at fixed d. Data: x ~ U(−2, 2)^8, label
//! `sgn(Σ_j sin x_j + 0.3 ε)`. Run: `cargo bench -p pacgp --bench ivm`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use faer::Mat;
use pacgp::inference::ivm::{ivm, IvmConfig};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use rand::{Rng, SeedableRng};

fn synth(n: usize, d: usize) -> (Mat<f64>, Vec<f64>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let x = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            let f = (0..d).map(|j| f64::sin(x[(i, j)])).sum::<f64>();
            if f + 0.3 * (rng.gen::<f64>() - 0.5) > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("ivm");
    g.sample_size(10);
    let k = Kernel::se_ard(&[1.0, 1.2, 0.9, 1.5, 2.0, 0.8, 1.1, 1.3], 4.0);
    let lik = Likelihood::probit();
    let cfg = IvmConfig::new(300);
    for &n in &[1500usize, 3000, 6000] {
        let (x, y) = synth(n, 8);
        g.bench_with_input(BenchmarkId::new("fit_d300", n), &n, |b, _| {
            b.iter(|| ivm(&k, &lik, x.as_ref(), &y, &cfg).unwrap())
        });
    }
    g.finish();
}

criterion_group!(ivm_bench, benches);
criterion_main!(ivm_bench);
