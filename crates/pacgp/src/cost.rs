//! What a fit needs in memory, estimated before it starts, and what the machine has: a fit
//! that cannot fit is refused with the numbers ([`Error::NotEnoughMemory`]) instead of
//! dying in the allocator part-way (issue 43: an exact GP on 43 152 rows asked for one
//! 15 GB matrix of several on a 24 GB machine).
//!
//! The model counts the largest arrays a method holds at once, by the math:
//!
//! - **dense** methods hold `c` matrices of `N × N` f64 (`8·c·N²` bytes): exact GP and PAC-GP
//!   regression (Gram matrix, the factor of `K + σ²I`, `L⁻¹`, the gradient's weights
//!   `½(ααᵀ − K⁻¹)`, and the best model's factor kept by the optimiser: `c = 5`); Laplace, EP
//!   and mean-field classifiers and pac-gpc (`K`, the factor of `B = I + W½KW½`, its inverse
//!   or `R`, the posterior's factor, the best candidate kept: `c = 5`); the SVM (the Gram
//!   matrix of `k + 1`, the posterior's factor, its inverse: `c = 3`); the multi-class
//!   Laplace with K classes (`K` shared, `E_c` and the factor `L_c` per class, `M` and its
//!   factor: `c = 2K + 3`);
//! - **sparse** methods hold `c` matrices of `N × M` (`M` inducing inputs, basis vectors or
//!   the active set) and a few `M × M`: vfe, fitc, dtc, pac-sgp, greedy-sparse (`K_uf`,
//!   `L⁻¹K_uf`, the gradient's `N × M` weights: `c = 4`), IVM (`c = 3`), SOGP (the basis
//!   rows: `c = 1`).
//!
//! Every method also holds its inputs (`N × D`). The counts are upper estimates from reading
//! the code of one fit; candidates scored in parallel threads each hold their own matrices,
//! which the count leaves out (on a machine where one fit barely fits, use one thread).
//!
//! The machine's memory is `MemAvailable` of `/proc/meminfo` on Linux
//! ([`available_memory`]); elsewhere it is unknown and no fit is refused unless a limit is
//! given ([`MemoryLimit::Bytes`]).

use crate::error::{Error, Result};
use crate::spec::{CheckedFitSpec, Inference, Method, DEFAULT_BASIS};

/// Bytes of one f64.
const F64_BYTES: u64 = 8;

/// The basis size the advice of a refused dense fit quotes for the sparse methods.
pub const SUGGESTED_BASIS: usize = 500;

/// How much memory a fit may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryLimit {
    /// What the machine has available now ([`available_memory`]); no check where unknown.
    #[default]
    Available,
    /// This many bytes (a limit the user gave).
    Bytes(u64),
    /// No check.
    Unchecked,
}

impl MemoryLimit {
    /// A size as a user writes it: bytes (`1048576`), or a number with a unit `k`, `M`, `G`,
    /// `T` (powers of 1024, an optional `B` or `iB` after it: `8G`, `1.5GiB`, `512M`); `none`
    /// turns the check off.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("none") {
            return Ok(MemoryLimit::Unchecked);
        }
        let bad = |reason: &str| Error::InvalidSpec {
            spec: text.to_string(),
            reason: reason.to_string(),
        };
        let lower = t.to_ascii_lowercase();
        let unit_at = lower
            .find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(lower.len());
        let (number, unit) = lower.split_at(unit_at);
        let scale: u64 = match unit.trim_end_matches("ib").trim_end_matches('b') {
            "" => 1,
            "k" => 1 << 10,
            "m" => 1 << 20,
            "g" => 1 << 30,
            "t" => 1 << 40,
            _ => {
                return Err(bad(
                    "a memory size is a number with k, M, G or T (e.g. 8G), or none",
                ))
            }
        };
        let value: f64 = number
            .trim()
            .parse()
            .map_err(|_| bad("a memory size is a number with k, M, G or T (e.g. 8G), or none"))?;
        let bytes = value * scale as f64;
        if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
            return Err(bad("a memory size must be at least one byte"));
        }
        Ok(MemoryLimit::Bytes(bytes as u64))
    }

    /// The bytes a fit may use and where that number comes from; `None`: no check.
    pub fn resolve(self) -> Option<(u64, LimitSource)> {
        match self {
            MemoryLimit::Available => available_memory().map(|b| (b, LimitSource::Available)),
            MemoryLimit::Bytes(b) => Some((b, LimitSource::Given)),
            MemoryLimit::Unchecked => None,
        }
    }
}

/// Where a memory limit comes from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitSource {
    /// The machine's available memory.
    Available,
    /// A limit the user gave.
    Given,
}

/// The memory available to a new allocation on this machine: `MemAvailable` of
/// `/proc/meminfo` (Linux); `None` where it cannot be read.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

/// `MemAvailable` (in kB in the file) of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => value.checked_mul(1024),
        Some(_) => None,
    }
}

/// Bytes of `count` f64 matrices of `rows × cols`; `None` if it overflows 64 bits.
pub fn matrices_bytes(count: u64, rows: usize, cols: usize) -> Option<u64> {
    (rows as u64)
        .checked_mul(cols as u64)?
        .checked_mul(F64_BYTES)?
        .checked_mul(count)
}

/// How a method's largest arrays grow with the number of rows N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Footprint {
    /// `matrices` of `N × N`.
    Dense {
        /// How many are held at once.
        matrices: u64,
    },
    /// `matrices` of `N × basis` and `matrices` of `basis × basis`.
    Sparse {
        /// Inducing inputs, basis vectors or active-set size (at most N).
        basis: usize,
        /// How many are held at once.
        matrices: u64,
    },
}

impl Footprint {
    /// The peak bytes on `n` rows of `d` inputs (saturating at `u64::MAX`).
    pub fn bytes(self, n: usize, d: usize) -> u64 {
        let inputs = matrices_bytes(1, n, d);
        let arrays = match self {
            Footprint::Dense { matrices } => matrices_bytes(matrices, n, n),
            Footprint::Sparse { basis, matrices } => {
                let m = basis.min(n);
                matrices_bytes(matrices, n, m)
                    .and_then(|a| a.checked_add(matrices_bytes(matrices, m, m)?))
            }
        };
        inputs
            .and_then(|i| i.checked_add(arrays?))
            .unwrap_or(u64::MAX)
    }

    /// Whether it grows as N².
    pub fn is_dense(self) -> bool {
        matches!(self, Footprint::Dense { .. })
    }
}

/// The footprint of `method` (defaults filled in: [`crate::spec::CheckedFitSpec::for_sample`])
/// with `k` classes (2 for a binary or regression fit).
pub fn footprint(method: &Method, k: usize) -> Footprint {
    let sparse = |basis: Option<usize>, matrices| Footprint::Sparse {
        basis: basis.unwrap_or(DEFAULT_BASIS),
        matrices,
    };
    let dense = |matrices| Footprint::Dense { matrices };
    match method {
        Method::Gpr(_) | Method::PacGp(_) => dense(5),
        Method::Sparse(s) => sparse(s.inducing, 4),
        Method::PacSgp(s) => sparse(s.inducing, 4),
        Method::GreedySparse(s) => sparse(s.basis, 4),
        Method::Classifier(c) => match c.inference {
            Inference::Ivm { active_set } => sparse(active_set, 3),
            Inference::Sogp { active_set } => sparse(active_set, 1),
            Inference::Laplace { .. } | Inference::Ep | Inference::MeanField { .. } => dense(5),
        },
        Method::PacGpc(_) => dense(5),
        Method::Svm(_) => dense(3),
        Method::OneVsRest(inner) => footprint(inner, 2),
        Method::Softmax(_) => dense(2 * k as u64 + 3),
    }
}

/// `8.2 GB`, `612 MB`, `12 kB` (powers of 1000, three significant digits at most).
pub fn shown_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    let (value, unit) = match bytes {
        0..=999 => return format!("{bytes} B"),
        1_000..=999_999 => (b / 1e3, "kB"),
        1_000_000..=999_999_999 => (b / 1e6, "MB"),
        1_000_000_000..=999_999_999_999 => (b / 1e9, "GB"),
        _ => (b / 1e12, "TB"),
    };
    if value >= 100.0 {
        format!("{value:.0} {unit}")
    } else if value >= 10.0 {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.2} {unit}")
    }
}

/// Refuse a fit of `spec` (defaults filled in) on `n` rows of `d` inputs and `k` classes
/// that needs more than `limit`, before anything is allocated; the error says what it needs,
/// what there is, and what a sparse method with [`SUGGESTED_BASIS`] needs.
pub fn check_fits(
    spec: &CheckedFitSpec,
    n: usize,
    d: usize,
    k: usize,
    limit: MemoryLimit,
) -> Result<()> {
    let Some((limit, source)) = limit.resolve() else {
        return Ok(());
    };
    let print = footprint(&spec.method, k);
    let needed = print.bytes(n, d);
    if needed <= limit {
        return Ok(());
    }
    let m = SUGGESTED_BASIS.min(n);
    let bytes = Footprint::Sparse {
        basis: m,
        matrices: 4,
    }
    .bytes(n, d);
    let even = if bytes > limit { "even " } else { "" };
    let lighter = if spec.is_classifier() {
        format!(
            "{even}ivm or sogp with an active set of {m} need about {}",
            shown_bytes(bytes)
        )
    } else {
        format!(
            "{even}vfe, fitc or pac-sgp with {m} inducing inputs need about {}",
            shown_bytes(bytes)
        )
    };
    let held = match print {
        Footprint::Dense { matrices } => format!(
            "{matrices} matrices of {n} × {n}, {} each",
            shown_bytes(matrices_bytes(1, n, n).unwrap_or(u64::MAX))
        ),
        Footprint::Sparse { basis, matrices } => {
            format!("{matrices} matrices of {n} × {}", basis.min(n))
        }
    };
    Err(Error::NotEnoughMemory {
        method: spec.method_name().to_string(),
        n,
        needed,
        held,
        limit,
        limit_source: source,
        lighter: if print.is_dense() {
            lighter
        } else {
            "a smaller basis needs less".into()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_footprints_in_closed_form() {
        let (n, d) = (43_152usize, 6usize);
        let (nn, nd) = ((n * n) as u64, (n * d) as u64);
        // Exact GP: five N × N matrices and the inputs.
        let gpr = Footprint::Dense { matrices: 5 };
        assert_eq!(gpr.bytes(n, d), 8 * (5 * nn + nd));
        // 74.5 GB: one N × N is 14 896 760 832 bytes, the allocation of issue 43.
        assert_eq!(matrices_bytes(1, n, n), Some(14_896_760_832));
        assert_eq!(shown_bytes(gpr.bytes(n, d)), "74.5 GB");
        // Sparse with M = 500: 4 N × M and 4 M × M.
        let vfe = Footprint::Sparse {
            basis: 500,
            matrices: 4,
        };
        assert_eq!(
            vfe.bytes(n, d),
            8 * (4 * (n as u64) * 500 + 4 * 500 * 500 + nd)
        );
        // A basis larger than N is N.
        let small = Footprint::Sparse {
            basis: 500,
            matrices: 1,
        };
        assert_eq!(small.bytes(10, 1), 8 * (100 + 100 + 10));
        // Overflow saturates rather than wrapping.
        assert_eq!(gpr.bytes(usize::MAX, 1), u64::MAX);
    }

    /// Each method's count, read from its spec, and the check against a limit.
    #[test]
    fn methods_have_their_footprints_and_are_checked() {
        use crate::spec::{FitOptions, MethodName as N};
        let spec = |m, inducing| {
            FitOptions {
                inducing,
                ..Default::default()
            }
            .check(m)
            .unwrap()
        };
        let gpr = spec(N::Gpr, None);
        assert_eq!(footprint(&gpr.method, 2), Footprint::Dense { matrices: 5 });
        assert_eq!(
            footprint(&spec(N::Laplace, None).method, 2),
            Footprint::Dense { matrices: 5 }
        );
        assert_eq!(
            footprint(&spec(N::Svm, None).method, 2),
            Footprint::Dense { matrices: 3 }
        );
        assert_eq!(
            footprint(&spec(N::Vfe, Some(500)).method, 2),
            Footprint::Sparse {
                basis: 500,
                matrices: 4
            }
        );
        // 200 rows of one input: 5·8·200² + 8·200 bytes.
        let needed = 5 * 8 * 200 * 200 + 8 * 200;
        assert!(check_fits(&gpr, 200, 1, 2, MemoryLimit::Bytes(needed)).is_ok());
        assert!(check_fits(&gpr, 200, 1, 2, MemoryLimit::Unchecked).is_ok());
        match check_fits(&gpr, 200, 1, 2, MemoryLimit::Bytes(needed - 1)) {
            Err(Error::NotEnoughMemory {
                needed: n,
                limit,
                limit_source: LimitSource::Given,
                ..
            }) => assert_eq!((n, limit), (needed, needed - 1)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sizes_parse_as_users_write_them() {
        let ok = |t: &str, b: u64| {
            assert_eq!(MemoryLimit::parse(t).unwrap(), MemoryLimit::Bytes(b), "{t}")
        };
        ok("1M", 1 << 20);
        ok("8G", 8 << 30);
        ok("1.5GiB", 3 << 29);
        ok("512mb", 512 << 20);
        ok("1000", 1000);
        assert_eq!(MemoryLimit::parse("none").unwrap(), MemoryLimit::Unchecked);
        for bad in ["", "G", "8X", "-1G", "0", "nan"] {
            assert!(MemoryLimit::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn meminfo_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   22000000 kB\n";
        assert_eq!(mem_available(text), Some(22_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 3 kB\n"), None);
    }

    #[test]
    fn shown_bytes_keeps_three_digits() {
        assert_eq!(shown_bytes(999), "999 B");
        assert_eq!(shown_bytes(1_048_576), "1.05 MB");
        assert_eq!(shown_bytes(612_000_000), "612 MB");
        assert_eq!(shown_bytes(22_528_000_000), "22.5 GB");
    }
}
