//! The VFE bound as sums over shards (`regression::sharded`) equals the single-process VFE
//! objective and gradient (`NegSparseObjective`, itself checked against dense formulas and
//! finite differences in `tests/sparse.rs`) to 1e-10, for any split of the data.

use faer::Mat;
use pacgp::kernel::Kernel;
use pacgp::optim::Objective;
use pacgp::regression::sharded::{vfe_global, vfe_shard_gradient, vfe_shard_stats, ShardStats};
use pacgp::regression::sparse::{NegSparseObjective, SparseMethod};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn problem(n: usize, d: usize, m: usize, seed: u64) -> (Mat<f64>, Vec<f64>, Mat<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0..2.0_f64));
    let y = (0..n)
        .map(|i| (0..d).map(|j| x[(i, j)].sin()).sum::<f64>() + 0.1 * rng.gen_range(-1.0..1.0_f64))
        .collect();
    let z = Mat::from_fn(m, d, |_, _| rng.gen_range(-2.0..2.0));
    (x, y, z)
}

/// Objective and gradient by map (stats) → reduce → global → map (gradients) → sum.
fn sharded(
    kernel: &Kernel,
    noise: f64,
    x: &Mat<f64>,
    y: &[f64],
    z: &Mat<f64>,
    cuts: &[usize],
) -> (f64, Vec<f64>) {
    let bounds: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    let shard = |&(a, b): &(usize, usize)| (x.subrows(a, b - a), &y[a..b]);
    let stats: Vec<ShardStats> = bounds
        .iter()
        .map(|r| {
            let (xs, ys) = shard(r);
            vfe_shard_stats(kernel, z.as_ref(), xs, ys).unwrap()
        })
        .collect();
    let total = stats[1..]
        .iter()
        .fold(stats[0].clone(), |acc, s| acc.combine(s).unwrap());
    let global = vfe_global(kernel, noise, z.as_ref(), &total).unwrap();
    let mut grad = global.gradient.clone();
    for r in &bounds {
        let (xs, ys) = shard(r);
        let g = vfe_shard_gradient(kernel, z.as_ref(), xs, ys, &global.adjoints).unwrap();
        for (a, b) in grad.iter_mut().zip(g) {
            *a += b;
        }
    }
    (global.value, grad)
}

fn assert_close(a: f64, b: f64, what: &str) {
    let tol = 1e-10 * (1.0 + b.abs());
    assert!(
        (a - b).abs() <= tol,
        "{what}: sharded {a} vs single {b} (diff {:e})",
        a - b
    );
}

fn check(kernel: Kernel, noise: f64, n: usize, d: usize, m: usize, cuts: &[usize], seed: u64) {
    let (x, y, z) = problem(n, d, m, seed);
    let single = NegSparseObjective::new(&kernel, SparseMethod::Vfe, x.as_ref(), &y, m);
    let p = NegSparseObjective::pack(&kernel, noise, z.as_ref());
    let (neg_value, neg_grad) = single.value_and_gradient(&p).unwrap();
    let (value, grad) = sharded(&kernel, noise, &x, &y, &z, cuts);
    assert_close(value, -neg_value, "value");
    assert_eq!(grad.len(), neg_grad.len());
    for (k, (a, b)) in grad.iter().zip(&neg_grad).enumerate() {
        assert_close(*a, -b, &format!("gradient[{k}]"));
    }
}

#[test]
fn se_ard_three_uneven_shards() {
    let kernel = Kernel::se_ard(&[0.8, 1.3, 2.0], 1.7);
    check(kernel, 0.05, 300, 3, 12, &[0, 17, 160, 300], 1);
}

#[test]
fn one_shard_and_a_shard_per_point_agree_too() {
    let kernel = Kernel::se_iso(1.1, 0.9);
    check(kernel.clone(), 0.2, 40, 2, 6, &[0, 40], 2);
    let every: Vec<usize> = (0..=40).collect();
    check(kernel, 0.2, 40, 2, 6, &every, 2);
}

#[test]
fn matern_plus_linear_kernel() {
    let kernel = Kernel::from_spec("matern52-ard+linear", 2).unwrap();
    check(kernel, 0.1, 200, 2, 10, &[0, 50, 100, 200], 3);
}

#[test]
fn mismatched_statistics_are_refused() {
    let (x, y, z) = problem(20, 2, 4, 4);
    let kernel = Kernel::se_iso(1.0, 1.0);
    let s4 = vfe_shard_stats(&kernel, z.as_ref(), x.as_ref(), &y).unwrap();
    let s3 = vfe_shard_stats(&kernel, z.subrows(0, 3), x.as_ref(), &y).unwrap();
    assert!(s4.combine(&s3).is_err());
    assert!(vfe_global(&kernel, 0.1, z.subrows(0, 3), &s4).is_err());
    assert!(vfe_shard_stats(&kernel, z.as_ref(), x.subcols(0, 1), &y).is_err());
}
