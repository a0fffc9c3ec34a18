//! Worker-thread counts: what a user asks for (`--threads`, Python's `n_threads`) resolved
//! against the cores this process may use, the same way in every front end.
//!
//! Following scikit-learn's `n_jobs`: `n ≥ 1` threads, `−1` all cores, `−2` all but one, …
//! (`cores + 1 + n`); `0` is refused. Counts above [`MAX_PER_CORE`] × cores are refused too:
//! they only add scheduling and memory (each rayon worker has its own stack), and a typo such
//! as `--threads 5000` once turned a 0.01 s fit into a minute at 840 MB.

use crate::error::{Error, Result};

/// Most worker threads accepted per available core.
pub const MAX_PER_CORE: usize = 4;

/// Cores this process may use (its CPU affinity and cgroup quota; 1 if unknown), read once:
/// the standard library reads the cgroup files at every call (about 0.1 ms, measurable on a
/// millisecond fit).
pub fn available_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The number of worker threads for the request `requested` on `cores` cores.
pub fn resolve_on(requested: i64, cores: usize) -> Result<usize> {
    let refuse = |reason: String| Error::Threads {
        requested,
        cores,
        reason,
    };
    let max = MAX_PER_CORE * cores;
    match requested {
        0 => Err(refuse(
            "give at least 1, or −1 for all cores (leave it out to use every core)".into(),
        )),
        n if n > 0 => {
            if n as u64 > max as u64 {
                Err(refuse(format!(
                    "at most {MAX_PER_CORE} per core ({max}) are accepted"
                )))
            } else {
                Ok(n as usize)
            }
        }
        n => {
            let k = cores as i64 + 1 + n;
            if k >= 1 {
                Ok(k as usize)
            } else {
                Err(refuse(format!(
                    "a negative count means all cores but |n| − 1, which needs n ≥ −{cores}"
                )))
            }
        }
    }
}

/// [`resolve_on`] on this machine's [`available_cores`].
pub fn resolve(requested: i64) -> Result<usize> {
    resolve_on(requested, available_cores())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scikit-learn's `n_jobs` convention and the cap, on a pretend 2-core and 8-core machine.
    #[test]
    fn requests_resolve_like_n_jobs_with_a_cap() {
        assert_eq!(resolve_on(1, 2).unwrap(), 1);
        assert_eq!(resolve_on(8, 2).unwrap(), 8);
        assert_eq!(resolve_on(-1, 2).unwrap(), 2);
        assert_eq!(resolve_on(-2, 8).unwrap(), 7);
        assert_eq!(resolve_on(-2, 2).unwrap(), 1);
        for (bad, cores) in [
            (0, 2),
            (9, 2),
            (5000, 2),
            (i64::MAX, 8),
            (-3, 2),
            (i64::MIN, 2),
        ] {
            let e = resolve_on(bad, cores).unwrap_err();
            assert!(matches!(e, Error::Threads { requested, .. } if requested == bad));
            assert!(
                e.to_string().contains(&format!("{cores} available cores")),
                "{e}"
            );
        }
        assert!(resolve(-1).unwrap() >= 1);
    }
}
