//! The seed papers' experiments as library functions returning tables.

pub mod classification;
pub mod deployed;
pub mod intervals;
pub mod multiclass;
pub mod opper_winther;
pub mod pac_gp;
pub mod pac_sgp;
pub mod svgp_real;
pub mod tighter_bounds;
pub mod tighter_classifiers;
pub mod zhang;

use crate::bounds::DEFAULT_DELTA;
use crate::data::{permutation, train_test_split, Dataset};
use crate::error::Result;

/// Confidence level `1 − HELD_OUT_DELTA` of the held-out lower limits of the experiments' tables:
/// the δ of their certificates ([`DEFAULT_DELTA`]), so both sides claim the same confidence.
pub const HELD_OUT_DELTA: f64 = DEFAULT_DELTA;

/// δ of seed 004's experiments (PAC-GP's §4: every bound at δ = 0.01), which the
/// reproductions of its figures and of Zhang's kin40k comparison certify at.
pub const PAPER_DELTA: f64 = 0.01;

/// Mean and standard error of the mean (sample sd / √n) of one column of an experiment's
/// rows; the standard error of fewer than two values is reported as 0 (a table then shows
/// the value alone, and a check against "mean − 2·se" asks the value itself).
pub(crate) fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (m, 0.0);
    }
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

/// One split's training and test sets: with a test file and `n_train: Some(n)`, the first n
/// rows of the training pool's seeded permutation (seed `split`) and `n_test` rows of the test
/// file's (seed `1000 + split`); otherwise the pool's seeded 80/20 split.
pub(crate) fn split_of(
    pool: &Dataset,
    test_pool: Option<&Dataset>,
    (n_train, n_test): (Option<usize>, usize),
    split: usize,
) -> Result<(Dataset, Dataset)> {
    match (n_train, test_pool) {
        (Some(n), Some(t)) => {
            let tr: Vec<usize> = permutation(pool.n(), split as u64)
                .into_iter()
                .take(n.min(pool.n()))
                .collect();
            let te: Vec<usize> = permutation(t.n(), 1000 + split as u64)
                .into_iter()
                .take(n_test.min(t.n()))
                .collect();
            Ok((pool.subset(&tr), t.subset(&te)))
        }
        _ => {
            let (tr, te) = train_test_split(pool.n(), 0.2, split as u64)?;
            Ok((pool.subset(&tr), pool.subset(&te)))
        }
    }
}

/// The largest of `f` over a group of an experiment's rows (−∞ for none): the worst case a
/// summary reports, e.g. of a test risk over its certificate's bound.
pub(crate) fn worst<R>(group: &[&R], f: impl Fn(&R) -> f64) -> f64 {
    group.iter().map(|r| f(r)).fold(f64::NEG_INFINITY, f64::max)
}

/// Mean squared error of the predictive means `mean` against the test targets `y`: the MSE
/// column of the regression tables.
pub(crate) fn mean_squared_error(mean: &[f64], y: &[f64]) -> f64 {
    mean.iter()
        .zip(y)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        / y.len() as f64
}

/// The rows grouped by `key`, groups and rows in first-seen order: what every experiment's
/// summary averages over (one group per data set and method).
pub fn groups_in_order<T, K: PartialEq>(rows: &[T], key: impl Fn(&T) -> K) -> Vec<(K, Vec<&T>)> {
    let mut groups: Vec<(K, Vec<&T>)> = Vec::new();
    for r in rows {
        let k = key(r);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    groups
}
