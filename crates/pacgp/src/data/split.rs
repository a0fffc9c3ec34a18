//! Seeded random permutations, train/test splits and k-fold.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};

/// Seeded train/test split: a random permutation (ChaCha8), the first `round(test_frac·n)`
/// indices form the test set. (The permutation differs from numpy's for the same seed.)
pub fn train_test_split(n: usize, test_frac: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(test_frac > 0.0 && test_frac < 1.0) {
        return Err(Error::InvalidParameter {
            name: "test_frac",
            value: test_frac,
            reason: "must lie in (0, 1)",
        });
    }
    let n_test = (test_frac * n as f64).round() as usize;
    if n_test == 0 || n_test >= n {
        return Err(Error::InvalidParameter {
            name: "test_frac",
            value: test_frac,
            reason: "leaves an empty train or test set for this n",
        });
    }
    let perm = permutation(n, seed);
    Ok((perm[n_test..].to_vec(), perm[..n_test].to_vec()))
}

/// A seeded random permutation of `0..n`.
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    idx
}

/// Seeded k-fold: `k` (train, test) pairs; every index is a test index exactly once.
pub fn k_fold(n: usize, k: usize, seed: u64) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    if k < 2 || k > n {
        return Err(Error::InvalidParameter {
            name: "k",
            value: k as f64,
            reason: "k-fold needs 2 ≤ k ≤ n",
        });
    }
    let perm = permutation(n, seed);
    Ok((0..k)
        .map(|f| {
            let (lo, hi) = (f * n / k, (f + 1) * n / k);
            let test = perm[lo..hi].to_vec();
            let train = perm[..lo].iter().chain(&perm[hi..]).copied().collect();
            (train, test)
        })
        .collect())
}
