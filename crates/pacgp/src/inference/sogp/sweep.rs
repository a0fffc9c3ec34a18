//! The order of the online sweeps over the training points: natural, given, or a seeded permutation
//! per sweep, validated against N.

use super::*;

/// The order in which each sweep visits the training points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SweepOrder {
    /// Rows `0, 1, …, N−1` in every sweep.
    Natural,
    /// This sequence of row indices in every sweep (each `< N`; repeats allowed).
    Given(Vec<usize>),
    /// A fresh seeded permutation per sweep (ChaCha8 seeded once with `seed`).
    Shuffled {
        /// RNG seed; the same seed gives the same fit.
        seed: u64,
    },
}

/// The visiting sequence of every sweep, validated against `n`.
pub(super) fn sweep_orders(order: &SweepOrder, n: usize, sweeps: usize) -> Result<Vec<Vec<usize>>> {
    match order {
        SweepOrder::Natural => Ok(vec![(0..n).collect(); sweeps]),
        SweepOrder::Given(idx) => {
            if idx.is_empty() {
                return Err(Error::Empty {
                    what: "SOGP sweep order",
                });
            }
            if let Some(&bad) = idx.iter().find(|&&i| i >= n) {
                return Err(Error::ShapeMismatch {
                    what: "SOGP sweep order",
                    expected: format!("row indices below {n}"),
                    found: format!("{bad}"),
                });
            }
            Ok(vec![idx.clone(); sweeps])
        }
        SweepOrder::Shuffled { seed } => {
            let mut rng = ChaCha8Rng::seed_from_u64(*seed);
            Ok((0..sweeps)
                .map(|_| {
                    let mut p: Vec<usize> = (0..n).collect();
                    p.shuffle(&mut rng);
                    p
                })
                .collect())
        }
    }
}
