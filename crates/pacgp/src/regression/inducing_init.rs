//! Where the inducing inputs of a sparse GP start (docs/math.md §3.2): a seeded subset of the
//! training inputs, Lloyd's k-means from it, or κ-greedy selection (seed 002 Algorithm 3).

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kernel::Kernel;

/// How to place the initial inducing inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InducingInit {
    /// Lloyd's k-means ([`KMEANS_ITERATIONS`] iterations) from a seeded random subset of
    /// the training inputs.
    KMeans,
    /// A seeded random subset of the training inputs.
    Subset,
    /// Training inputs chosen by κ-greedy ΔR selection (seed 002 Algorithm 3,
    /// κ = [`GREEDY_KAPPA`](crate::regression::greedy::GREEDY_KAPPA), exact refit) under the
    /// initial kernel and noise; needs the targets, see [`initial_inducing_with_targets`].
    Greedy,
}

/// Seeded initial inducing inputs.
pub fn initial_inducing(
    x: MatRef<'_, f64>,
    m: usize,
    init: InducingInit,
    seed: u64,
) -> Result<Mat<f64>> {
    crate::regression::greedy::check_inducing_count(m, x.nrows())?;
    let subset = distinct_subset(x, m, seed)?;
    Ok(match init {
        InducingInit::Subset => subset,
        InducingInit::KMeans => kmeans(x, subset, KMEANS_ITERATIONS)?,
        InducingInit::Greedy => {
            return Err(Error::Unsupported(
                "greedy inducing inputs need the targets, kernel and noise: use initial_inducing_with_targets".into(),
            ))
        }
    })
}

/// The first `m` rows of the seeded permutation whose inputs differ from every row taken
/// before (a table with repeated rows would otherwise start two inducing inputs, or two
/// k-means centres, at one point, where they stay); without repeats, the permutation's
/// first `m`. Fewer than `m` distinct rows is an error.
fn distinct_subset(x: MatRef<'_, f64>, m: usize, seed: u64) -> Result<Mat<f64>> {
    let mut seen = std::collections::HashSet::new();
    let mut rows = Vec::with_capacity(m);
    for i in crate::data::permutation(x.nrows(), seed) {
        // Adding 0.0 turns −0 into +0, so equal values have equal bits.
        let key: Vec<u64> = (0..x.ncols())
            .map(|t| (x[(i, t)] + 0.0).to_bits())
            .collect();
        if seen.insert(key) {
            rows.push(i);
            if rows.len() == m {
                return Ok(Mat::from_fn(m, x.ncols(), |a, t| x[(rows[a], t)]));
            }
        }
    }
    Err(Error::InvalidParameter {
        name: "number of inducing points M",
        value: m as f64,
        reason: "exceeds the number of distinct training inputs (rows that repeat one another count once): use fewer inducing points",
    })
}

/// Seeded initial inducing inputs for every [`InducingInit`], the greedy one chosen by
/// ΔR under `kernel` and noise `σ²` (Zhang's `λ = σ²/N`).
pub fn initial_inducing_with_targets(
    kernel: &Kernel,
    noise: f64,
    x: MatRef<'_, f64>,
    y: &[f64],
    m: usize,
    init: InducingInit,
    seed: u64,
) -> Result<Mat<f64>> {
    match init {
        InducingInit::Greedy => {
            crate::regression::greedy::greedy_inducing(kernel, noise, x, y, m, seed)
        }
        _ => initial_inducing(x, m, init, seed),
    }
}

/// Lloyd's iterations of the k-means start ([`InducingInit::KMeans`]).
pub const KMEANS_ITERATIONS: usize = 20;

/// Lloyd's k-means from the given centres; an empty cluster keeps its centre.
fn kmeans(x: MatRef<'_, f64>, mut c: Mat<f64>, iters: usize) -> Result<Mat<f64>> {
    for _ in 0..iters {
        let (sum, count) = kmeans_sums(x, c.as_ref())?;
        update_centres(&mut c, &sum, &count);
    }
    Ok(c)
}

/// One Lloyd step's sums over the points `x`: per centre of `c`, the sum and the number of
/// the points nearest to it (squared Euclidean distance, the first centre on ties). The
/// nearest centres are found in parallel (each point on its own: the same result on any
/// thread count), the sums taken in point order. A sample held in shards adds its shards'
/// sums (`pacgp.distributed`).
pub fn kmeans_sums(x: MatRef<'_, f64>, c: MatRef<'_, f64>) -> Result<(Mat<f64>, Vec<usize>)> {
    let (d, m) = (x.ncols(), c.nrows());
    if c.ncols() != d {
        return Err(Error::ShapeMismatch {
            what: "k-means centres",
            expected: format!("{d} columns, as the points"),
            found: format!("{}", c.ncols()),
        });
    }
    if m == 0 {
        return Err(Error::ShapeMismatch {
            what: "k-means centres",
            expected: "at least one centre".into(),
            found: "none".into(),
        });
    }
    let mut sum = Mat::<f64>::zeros(m, d);
    let mut count = vec![0usize; m];
    let nearest = nearest_centres(x, c);
    for (i, &best) in nearest.iter().enumerate() {
        count[best] += 1;
        for t in 0..d {
            sum[(best, t)] += x[(i, t)];
        }
    }
    Ok((sum, count))
}

/// Rows of `x` per parallel task of [`nearest_centres`].
const NEAREST_BLOCK: usize = 256;

/// The index of the centre nearest to each point (squared Euclidean distance summed over the
/// inputs in order, the first centre on ties). The centres are laid out input by input so
/// that one point's distances to all centres run as contiguous, vectorised passes.
fn nearest_centres(x: MatRef<'_, f64>, c: MatRef<'_, f64>) -> Vec<usize> {
    let (n, d, m) = (x.nrows(), x.ncols(), c.nrows());
    let by_input: Vec<f64> = (0..d)
        .flat_map(|t| (0..m).map(move |a| c[(a, t)]))
        .collect();
    let mut nearest = vec![0usize; n];
    nearest
        .par_chunks_mut(NEAREST_BLOCK)
        .enumerate()
        .for_each(|(block, out)| {
            let mut dist = vec![0.0; m];
            for (k, best) in out.iter_mut().enumerate() {
                let i = block * NEAREST_BLOCK + k;
                dist.fill(0.0);
                for (t, centres) in by_input.chunks_exact(m.max(1)).enumerate().take(d) {
                    let xt = x[(i, t)];
                    for (s, &ct) in dist.iter_mut().zip(centres) {
                        let diff = xt - ct;
                        *s += diff * diff;
                    }
                }
                *best = first_minimum(&dist);
            }
        });
    nearest
}

/// The index of the smallest entry, the first on ties (0 when all are NaN or there are none).
fn first_minimum(v: &[f64]) -> usize {
    v.iter()
        .enumerate()
        .fold(
            (0, f64::INFINITY),
            |b, (a, &s)| if s < b.1 { (a, s) } else { b },
        )
        .0
}

/// Each centre with points becomes their mean; an empty cluster keeps its centre.
fn update_centres(c: &mut Mat<f64>, sum: &Mat<f64>, count: &[usize]) {
    for (a, &k) in count.iter().enumerate() {
        if k > 0 {
            for t in 0..c.ncols() {
                c[(a, t)] = sum[(a, t)] / k as f64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lloyd's sums on a sample held in two parts add up to the sums on the whole (what the
    /// sharded start relies on), ties go to the first centre, and centres of another width
    /// are refused.
    #[test]
    fn kmeans_sums_add_over_parts_and_refuse_a_width_mismatch() {
        let x = Mat::from_fn(7, 2, |i, t| (i as f64) * if t == 0 { 1.0 } else { -0.5 });
        // Point 3 = (3, −1.5) is as far from both centres: it goes to the first.
        let c = Mat::from_fn(2, 2, |a, t| [[1.0, -0.5], [5.0, -2.5]][a][t]);
        let (sum, count) = kmeans_sums(x.as_ref(), c.as_ref()).unwrap();
        assert_eq!(count, vec![4, 3]);
        assert_eq!((sum[(0, 0)], sum[(1, 0)]), (6.0, 15.0));
        let (a, na) = kmeans_sums(x.as_ref().subrows(0, 4), c.as_ref()).unwrap();
        let (b, nb) = kmeans_sums(x.as_ref().subrows(4, 3), c.as_ref()).unwrap();
        for k in 0..2 {
            assert_eq!(na[k] + nb[k], count[k]);
            for t in 0..2 {
                assert_eq!(a[(k, t)] + b[(k, t)], sum[(k, t)]);
            }
        }
        let none = Mat::<f64>::zeros(0, 2);
        assert!(matches!(
            kmeans_sums(x.as_ref(), none.as_ref()),
            Err(Error::ShapeMismatch { .. })
        ));
        let wide = Mat::<f64>::zeros(2, 3);
        assert!(matches!(
            kmeans_sums(x.as_ref(), wide.as_ref()),
            Err(Error::ShapeMismatch { .. })
        ));
    }

    /// The blocked nearest-centre search picks, point by point, the centre a plain loop over
    /// centres and inputs picks (the same sums in the same order, so the same bits), on
    /// more points than one block, with planted ties.
    #[test]
    fn the_start_skips_repeated_rows_and_keeps_the_permutation_without_them() {
        // 12 rows, each input written twice (6 distinct).
        let x = Mat::from_fn(12, 2, |i, t| ((i % 6) * 3 + t) as f64);
        for seed in 0..5 {
            let z = distinct_subset(x.as_ref(), 6, seed).unwrap();
            let mut keys: Vec<(u64, u64)> = (0..6)
                .map(|a| (z[(a, 0)].to_bits(), z[(a, 1)].to_bits()))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), 6, "seed {seed}");
            assert!(initial_inducing(x.as_ref(), 6, InducingInit::KMeans, seed).is_ok());
        }
        assert!(distinct_subset(x.as_ref(), 7, 0).is_err());
        // Without repeats: the permutation's first m rows, as before.
        let y = Mat::from_fn(12, 2, |i, t| (i * 3 + t) as f64);
        let perm = crate::data::permutation(12, 3);
        let z = distinct_subset(y.as_ref(), 5, 3).unwrap();
        for a in 0..5 {
            assert_eq!(z[(a, 0)], y[(perm[a], 0)]);
        }
    }

    #[test]
    fn nearest_centres_equal_a_plain_loop() {
        let (n, d, m) = (3 * NEAREST_BLOCK + 17, 5, 37);
        let mut state = 12345u64;
        let mut unif = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let x = Mat::from_fn(n, d, |_, _| (unif() * 8.0).round() / 4.0);
        let mut c = Mat::from_fn(m, d, |_, _| (unif() * 8.0).round() / 4.0);
        for t in 0..d {
            c[(m - 1, t)] = c[(3, t)]; // a duplicated centre: its points go to centre 3
        }
        let plain: Vec<usize> = (0..n)
            .map(|i| {
                let mut best = (0, f64::INFINITY);
                for a in 0..m {
                    let s: f64 = (0..d).map(|t| (x[(i, t)] - c[(a, t)]).powi(2)).sum();
                    if s < best.1 {
                        best = (a, s);
                    }
                }
                best.0
            })
            .collect();
        assert_eq!(nearest_centres(x.as_ref(), c.as_ref()), plain);
        assert!(!plain.contains(&(m - 1)));
    }
}
