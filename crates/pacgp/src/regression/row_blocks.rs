//! Streaming over the data in fixed blocks of rows: the O(N·M) matrices of the sparse
//! objectives (`K(Z, X)`, `V = L⁻¹K(Z, X)`, their adjoints) exist one block at a time, so memory
//! is O(M² + threads·block·M) instead of O(N·M) per intermediate.
//!
//! Blocks run in parallel on rayon's pool (one block is one task: dynamic load balance, so a
//! core busy with another process only takes fewer blocks), and their sums are added pairwise
//! in a binary tree fixed by the number of blocks alone. The block size is fixed too, so every
//! result is the same bits on one thread or many.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

use faer::Mat;

use crate::error::Result;
pub(crate) use crate::linalg::scratch::{recycle, release, scratch, scratch_zeroed};

/// How the sparse objectives stream over the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streaming {
    /// Rows per block (fixed, not derived from the thread count: sums round the same way on
    /// any number of threads).
    pub block_rows: usize,
    /// Bytes the whitened blocks (`V_b`, and PAC-SGP's `L_B⁻¹V_b`) may keep between passes
    /// instead of recomputing them: the leading blocks that fit are kept, the others are
    /// recomputed by every pass.
    pub cache_bytes: usize,
}

impl Streaming {
    /// How many leading blocks of `blocks` may keep `count` M×rows matrices each within the
    /// cache budget (all of them if they fit, none if `count = 0`).
    pub(crate) fn cached_blocks(&self, blocks: &RowBlocks, m: usize, count: usize) -> usize {
        let per_block = blocks.rows.saturating_mul(m).saturating_mul(8 * count);
        if per_block == 0 {
            return 0;
        }
        (self.cache_bytes / per_block).min(blocks.count())
    }
}

impl Default for Streaming {
    /// 1024 rows (M = 500: 4 MB per block matrix, 0.25 GFLOP per triangular solve); a 1 GiB
    /// cache (N·M ≤ 6.7·10⁷ for PAC-SGP's two matrices, e.g. N = 134 000 at M = 500).
    fn default() -> Self {
        Self {
            block_rows: 1024,
            cache_bytes: 1 << 30,
        }
    }
}

/// The partition of `0..n` into blocks of `rows` rows (the last one shorter).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowBlocks {
    n: usize,
    rows: usize,
}

impl RowBlocks {
    /// Blocks of `rows` (≥ 1) rows over `0..n`.
    pub fn new(n: usize, rows: usize) -> Self {
        Self {
            n,
            rows: rows.max(1),
        }
    }

    /// Number of blocks (one empty block when `n = 0`).
    pub fn count(&self) -> usize {
        self.n.div_ceil(self.rows).max(1)
    }

    /// The rows of block `b`.
    pub fn range(&self, b: usize) -> Range<usize> {
        let lo = (b * self.rows).min(self.n);
        lo..((b + 1) * self.rows).min(self.n)
    }

    /// `Σ_b f(b, outs_b)` over all blocks, in parallel, combined by `add` in a tree that depends
    /// on the number of blocks only. Each `outs` slice (length n, one entry per row) is handed
    /// to `f` cut to the block's rows, for per-point results.
    pub fn sum<T: Send>(
        &self,
        outs: Vec<&mut [f64]>,
        f: &(impl Fn(usize, Vec<&mut [f64]>) -> Result<T> + Sync),
        add: &(impl Fn(&mut T, T) + Sync),
    ) -> Result<T> {
        debug_assert!(outs.iter().all(|o| o.len() == self.n));
        self.tree(0, self.count(), outs, f, add)
    }

    fn tree<T: Send>(
        &self,
        lo: usize,
        hi: usize,
        outs: Vec<&mut [f64]>,
        f: &(impl Fn(usize, Vec<&mut [f64]>) -> Result<T> + Sync),
        add: &(impl Fn(&mut T, T) + Sync),
    ) -> Result<T> {
        if hi - lo == 1 {
            return f(lo, outs);
        }
        let mid = lo + (hi - lo) / 2;
        let split = self.range(mid).start - self.range(lo).start;
        let (left, right): (Vec<_>, Vec<_>) =
            outs.into_iter().map(|s| s.split_at_mut(split)).unzip();
        let (a, b) = rayon::join(
            || self.tree(lo, mid, left, f, add),
            || self.tree(mid, hi, right, f, add),
        );
        let mut a = a?;
        add(&mut a, b?);
        Ok(a)
    }
}

/// Per-block matrices kept from one pass to the next for the leading blocks that fit the
/// budget; the others are recomputed by each pass (the same bits: the computation is
/// deterministic).
pub(crate) struct BlockCache {
    slots: Vec<OnceLock<Mat<f64>>>,
}

impl BlockCache {
    /// A cache with slots for the first `blocks` blocks (none if 0).
    pub fn new(blocks: usize) -> Self {
        Self {
            slots: (0..blocks).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Block `b`'s matrix: the kept one, or `make()` (kept if block b has a slot).
    pub fn get_or(
        &self,
        b: usize,
        make: impl FnOnce() -> Result<Mat<f64>>,
    ) -> Result<Cow<'_, Mat<f64>>> {
        match self.slots.get(b) {
            Some(slot) => {
                if let Some(m) = slot.get() {
                    return Ok(Cow::Borrowed(m));
                }
                let m = make()?;
                Ok(Cow::Borrowed(slot.get_or_init(|| m)))
            }
            None => Ok(Cow::Owned(make()?)),
        }
    }
}

/// `a ← a + b` for matrices of the same shape.
pub(crate) fn add_mat(a: &mut Mat<f64>, b: &Mat<f64>) {
    debug_assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    for j in 0..a.ncols() {
        for (x, y) in a.col_mut(j).iter_mut().zip(b.col(j).iter()) {
            *x += y;
        }
    }
}

/// `a ← a + b` for vectors of the same length.
pub(crate) fn add_vec(a: &mut [f64], b: &[f64]) {
    debug_assert_eq!(a.len(), b.len());
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree sum visits every block once, hands each its rows of the per-point outputs, and
    /// gives the same bits on one and three threads.
    #[test]
    fn tree_sum_covers_every_row_once_with_thread_independent_bits() {
        let n = 1000;
        let blocks = RowBlocks::new(n, 37);
        assert_eq!(blocks.count(), 28);
        let terms: Vec<f64> = (0..n).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let run = |threads: usize| {
            let mut out = vec![0.0; n];
            let s = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    blocks.sum(
                        vec![&mut out],
                        &|b, mut o| {
                            let r = blocks.range(b);
                            assert_eq!(o[0].len(), r.len());
                            for (k, i) in r.clone().enumerate() {
                                o[0][k] = i as f64;
                            }
                            Ok(terms[r].iter().sum::<f64>())
                        },
                        &|a, b| *a += b,
                    )
                })
                .unwrap();
            (s, out)
        };
        let (s1, o1) = run(1);
        let (s3, o3) = run(3);
        assert_eq!(s1.to_bits(), s3.to_bits());
        assert_eq!(o1, o3);
        assert!(o1.iter().enumerate().all(|(i, v)| *v == i as f64));
        assert!((s1 - terms.iter().sum::<f64>()).abs() < 1e-12);
        assert_eq!(RowBlocks::new(0, 8).count(), 1);
        assert!(RowBlocks::new(0, 8).range(0).is_empty());
    }
}
