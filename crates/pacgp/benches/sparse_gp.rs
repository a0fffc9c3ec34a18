//! Sparse hot paths: one objective + gradient of VFE and of kl-PAC-SGP (FITC form) at
//! M = 500, D = 8 and N = 8000, 16000, 32000 (kin40k size), to show the cost growing
//! linearly in N (report the slope per 1000 points from the three means). Data as `shared/peers/make_data.py`. Run: `cargo bench -p pacgp --bench sparse_gp`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use faer::Mat;
use pacgp::bounds::{BoundKind, HyperGrid};
use pacgp::kernel::Kernel;
use pacgp::loss::RegressionLoss;
use pacgp::objective::pac_sgp::PacSgpObjective;
use pacgp::optim::Objective;
use pacgp::regression::sparse::{NegSparseObjective, SparseMethod};
use rand::{Rng, SeedableRng};
use std::time::Duration;

fn synth(n: usize, d: usize) -> (Mat<f64>, Vec<f64>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let x = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| (0..d).map(|j| f64::sin(x[(i, j)])).sum::<f64>() + 0.1 * (rng.gen::<f64>() - 0.5))
        .collect();
    (x, y)
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("sparse_gp");
    // Ten samples, short warm-up and measurement: the 32000-point case still takes ~10 evaluations.
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let m = 500;
    let k = Kernel::se_ard(&[1.0, 1.2, 0.9, 1.5, 2.0, 0.8, 1.1, 1.3], 1.0);
    for &n in &[8000usize, 16000, 32000] {
        let (x, y) = synth(n, 8);
        let z = Mat::from_fn(m, 8, |a, t| x[(a * 7 % n, t)]);
        let p = NegSparseObjective::pack(&k, 0.1, z.as_ref());
        let vfe = NegSparseObjective::new(&k, SparseMethod::Vfe, x.as_ref(), &y, m);
        g.bench_with_input(
            BenchmarkId::new("vfe_objective_and_gradient", n),
            &n,
            |b, _| b.iter(|| vfe.value_and_gradient(&p).unwrap()),
        );
        let pen = HyperGrid::default().penalty(9);
        let pac = PacSgpObjective::new(
            &k,
            x.as_ref(),
            &y,
            m,
            1.0,
            RegressionLoss::EpsilonBand { epsilon: 0.6 },
            0.01,
            pen,
            BoundKind::Kl,
        )
        .unwrap();
        g.bench_with_input(
            BenchmarkId::new("kl_pac_sgp_objective_and_gradient", n),
            &n,
            |b, _| b.iter(|| pac.value_and_gradient(&p).unwrap()),
        );
    }
    g.finish();
}

criterion_group!(sparse, benches);
criterion_main!(sparse);
