//! Private rayon pools kept between calls. Building a pool starts its threads, which cost a
//! small fit about as much as its solver; so a pool of the asked size is taken from the idle
//! ones when there is one, used by one call at a time (two Python threads fitting with
//! `n_threads=1` each still run side by side, each in its own pool), and given back after.

use std::sync::Mutex;

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

/// Idle pools, most recently used last.
static IDLE: Mutex<Vec<ThreadPool>> = Mutex::new(Vec::new());

/// Idle pools kept at most (their workers sleep; more are dropped).
const KEEP: usize = 4;

/// Run `f` in a pool of `n` threads, reusing an idle one of that size.
pub(crate) fn install<T: Send>(
    n: usize,
    f: impl FnOnce() -> T + Send,
) -> Result<T, ThreadPoolBuildError> {
    let pool = match take(n) {
        Some(pool) => pool,
        None => ThreadPoolBuilder::new().num_threads(n).build()?,
    };
    let out = pool.install(f);
    give_back(pool);
    Ok(out)
}

fn take(n: usize) -> Option<ThreadPool> {
    let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
    let at = idle.iter().rposition(|p| p.current_num_threads() == n)?;
    Some(idle.remove(at))
}

fn give_back(pool: ThreadPool) {
    let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
    idle.push(pool);
    if idle.len() > KEEP {
        idle.remove(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool runs the work with the asked number of threads and is reused by the next call
    /// of that size (the same worker thread), not by a call of another size.
    #[test]
    fn pools_are_sized_and_reused() {
        let worker = || (rayon::current_num_threads(), std::thread::current().id());
        let (n1, first) = install(1, worker).unwrap();
        let (n1b, again) = install(1, worker).unwrap();
        let (n2, _) = install(2, worker).unwrap();
        assert_eq!((n1, n1b, n2), (1, 1, 2));
        assert_eq!(first, again);
    }
}
