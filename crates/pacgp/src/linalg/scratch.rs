//! A thread's reusable block matrices: row-block passes take their `m × n` work matrices
//! from this thread's pool and give them back, so a pass does not page-fault fresh memory per
//! block.

use std::borrow::Cow;
use std::cell::RefCell;

use faer::Mat;

thread_local! {
    /// This thread's block matrices kept for reuse by its next blocks ([`scratch`]).
    static SCRATCH: RefCell<Vec<Mat<f64>>> = const { RefCell::new(Vec::new()) };
}

/// Most matrices a thread keeps for reuse (a block's work needs at most about six).
const SCRATCH_KEEP: usize = 8;

/// An `m × n` matrix for one block's work with stale entries (the caller overwrites them all),
/// reused from this thread's earlier blocks when one of that shape was [`recycle`]d. Fresh
/// allocations of a few MB per block cost page faults and page clearing (15% of a PAC-SGP
/// evaluation at N = 32000): mimalloc returns freed memory to the OS after ~10 ms, about
/// the time of one block.
pub fn scratch(m: usize, n: usize) -> Mat<f64> {
    SCRATCH
        .with(|pool| {
            let mut pool = pool.borrow_mut();
            let i = pool.iter().position(|a| a.nrows() == m && a.ncols() == n)?;
            Some(pool.swap_remove(i))
        })
        .unwrap_or_else(|| Mat::zeros(m, n))
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
