//! Reusable work matrices: row-block passes take their `m × n` matrices from this thread's
//! pool and give them back, and an objective keeps its `N × N` ones in a [`Pool`] of its own
//! between evaluations, so neither page-faults fresh memory on every call. The `N × N` ones
//! ([`Pool::take`], [`reuse_or_zeros`]) are fallible ([`crate::memory::try_zeros`]); a block's
//! ([`scratch`]) is `M ×` a fixed number of rows, linear in the data, and stays infallible.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Mutex;

use faer::Mat;

use crate::error::Result;
use crate::memory::try_zeros;

thread_local! {
    /// This thread's block matrices kept for reuse by its next blocks ([`scratch`]).
    static SCRATCH: RefCell<Vec<Mat<f64>>> = const { RefCell::new(Vec::new()) };
}

/// Most matrices a thread keeps for reuse (a block's work needs at most about six).
const SCRATCH_KEEP: usize = 8;

/// An `m × n` matrix for one block's work with stale entries (the caller overwrites them all),
/// reused from this thread's earlier blocks when one of that shape was [`recycle`]d, else new
/// with its column padding zero ([`crate::memory::zeros`]). Fresh allocations of a few MB per
/// block cost page faults and page clearing (15% of a PAC-SGP evaluation at N = 32000):
/// mimalloc returns freed memory to the OS after ~10 ms, about the time of one block.
pub fn scratch(m: usize, n: usize) -> Mat<f64> {
    SCRATCH
        .with(|pool| {
            let mut pool = pool.borrow_mut();
            let i = pool.iter().position(|a| a.nrows() == m && a.ncols() == n)?;
            Some(pool.swap_remove(i))
        })
        .unwrap_or_else(|| crate::memory::zeros(m, n))
}

/// `storage` where it is `m × n` (entries stale: the caller overwrites what it reads), else a
/// fresh zero matrix ([`crate::memory::try_zeros`], named `what`): the `_in` variants' "write
/// into this buffer if it fits".
pub fn reuse_or_zeros(
    storage: Option<Mat<f64>>,
    m: usize,
    n: usize,
    what: &'static str,
) -> Result<Mat<f64>> {
    match reuse(storage, m, n) {
        Some(a) => Ok(a),
        None => try_zeros(m, n, what),
    }
}

/// `storage` where it is `m × n` (entries stale), else `None`.
pub fn reuse(storage: Option<Mat<f64>>, m: usize, n: usize) -> Option<Mat<f64>> {
    storage.filter(|a| a.nrows() == m && a.ncols() == n)
}

/// [`scratch`] set to zero.
pub fn scratch_zeroed(m: usize, n: usize) -> Mat<f64> {
    let mut a = scratch(m, n);
    a.fill(0.0);
    a
}

/// Give a block matrix back for reuse by this thread's next blocks.
pub fn recycle(a: Mat<f64>) {
    SCRATCH.with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.len() < SCRATCH_KEEP && a.nrows() * a.ncols() > 0 {
            pool.push(a);
        }
    });
}

/// [`recycle`] a block matrix that was computed for this use rather than kept in a cache.
pub fn release(a: Cow<'_, Mat<f64>>) {
    if let Cow::Owned(a) = a {
        recycle(a);
    }
}

/// Work matrices an owner (an objective, a fit) keeps between its calls and frees with itself,
/// unlike the thread's pool: `N × N` buffers cost page faults and zeroing when fresh (10% of an
/// exact ML-II evaluation at N = 2000), but should not outlive the fit that needed them.
#[derive(Debug, Default)]
pub struct Pool(Mutex<Vec<Mat<f64>>>);

impl Pool {
    /// Most matrices a pool keeps.
    const KEEP: usize = 6;

    /// An `m × n` matrix with stale entries (the caller overwrites what it reads), kept from an
    /// earlier call when one of that shape was given back, else zero
    /// ([`crate::memory::try_zeros`], named `what`).
    pub fn take(&self, m: usize, n: usize, what: &'static str) -> Result<Mat<f64>> {
        match self.kept(m, n) {
            Some(a) => Ok(a),
            None => try_zeros(m, n, what),
        }
    }

    /// A kept `m × n` matrix (entries stale), if one was given back; `None` otherwise.
    pub fn kept(&self, m: usize, n: usize) -> Option<Mat<f64>> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = kept.iter().position(|a| a.nrows() == m && a.ncols() == n)?;
        Some(kept.swap_remove(i))
    }

    /// Keep `a` for a later [`Pool::take`].
    pub fn give(&self, a: Mat<f64>) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < Self::KEEP && a.nrows() * a.ncols() > 0 {
            kept.push(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Pool {
        /// [`Pool::take`] of a matrix that always fits.
        fn take_t(&self, m: usize, n: usize) -> Mat<f64> {
            self.take(m, n, "test matrix").unwrap()
        }
    }

    #[test]
    fn a_pool_returns_kept_matrices_by_shape_and_keeps_at_most_its_limit() {
        let pool = Pool::default();
        assert_eq!(pool.take_t(3, 2), Mat::<f64>::zeros(3, 2)); // nothing kept: zeros
        pool.give(Mat::from_fn(3, 2, |_, _| 7.0));
        assert_eq!(pool.take_t(2, 3), Mat::<f64>::zeros(2, 3)); // another shape: not that one
        assert_eq!(pool.take_t(3, 2)[(2, 1)], 7.0); // the kept one, entries stale
        assert_eq!(pool.take_t(3, 2)[(2, 1)], 0.0); // taken already
        for _ in 0..Pool::KEEP + 3 {
            pool.give(Mat::from_fn(2, 2, |_, _| 1.0));
        }
        pool.give(Mat::zeros(0, 4)); // empty: never kept
        let kept = (0..Pool::KEEP + 3)
            .filter(|_| pool.take_t(2, 2)[(0, 0)] == 1.0)
            .count();
        assert_eq!(kept, Pool::KEEP);
    }
}
