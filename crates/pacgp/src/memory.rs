//! The memory a computation may use: what this machine has available (`MemAvailable` of
//! `/proc/meminfo` on Linux; unknown elsewhere), a limit a user gives instead
//! ([`MemoryLimit`]), the bytes of f64 arrays counted without overflow, and the one fallible
//! allocation of data-sized buffers ([`try_zeros`], [`try_from_fn`]), which returns a typed
//! error where the allocator would abort. How a fit's largest arrays grow with N is a
//! [`Footprint`], which each method's home states
//! ([`crate::spec::MethodSpec::footprint`]); the estimates from it are [`crate::cost`]'s; the
//! table coding checks its matrix here too.
//!
//! What goes through it: every buffer whose size grows like N² (N training rows: kernel
//! matrices, the factor's storage, the posterior's factor, LOO's grouped columns), N·M
//! (cross-covariances with M inducing inputs, basis or support vectors) or N·N* (N* test rows:
//! cross-covariances at test points, joint covariances and draws, LOO at test points), on the
//! paths a user reaches. That includes the inverses beside a factor (`Cholesky::l_inverse`,
//! `inverse`, `inverse_lower(_in)`, `inverse_diag`, `inverse_trace`,
//! `linalg::inverse_from_l_inverse`), the dense products and copies of such matrices
//! (`linalg::try_product`, `linalg::try_clone`, `Cholesky::try_clone`, `linalg::product`,
//! `linalg::weighted_gram`). The work space faer would allocate itself inside a
//! factorisation goes through [`try_scratch`]: the Cholesky factor's, the LU's of
//! linear-response LOO (`linalg::Lu`: its factor, its solves' copy of the right-hand side, the
//! `n × n` of its inverse; the mean-field LOO solves by blocks of columns, so it holds no
//! `N × N` solution), and the M × M eigensolver's of `variance_ratio_bound`. A sparse group's
//! Woodbury parts (`W_G`, `U`, `P W_G`; M × |G|) go through [`try_from_fn`] and
//! `linalg::try_product`. Buffers linear in N (vectors, N × D inputs, blocks of a fixed
//! number of rows) stay infallible: where an N-vector cannot be had, the N × N or N × M matrix
//! of the same fit would have been refused first, here or by [`crate::cost::check_fits`].
//!
//! Still infallible, and why:
//! - M × M matrices of the sparse methods (products `&a * &b` of `B⁻¹`, `K_uu`, the Cholesky
//!   adjoints) and of SOGP's basis: M is the user's inducing count, which [`crate::cost`]'s
//!   estimate (checked before a fit starts) counts, and an M × M (its factor) is already held
//!   beside each when they are formed;
//! - products and copies of one row block or shard block (`M ×` a block of rows: the sharded
//!   sparse passes, the softmax predictions' chunks), linear in N like the other blocks;
//! - what faer allocates inside the calls that take no work space from the caller (matrix
//!   products and triangular solves: packing buffers of one cache block), the LU's row
//!   permutations (N indices, linear), and the D × D eigendecomposition of the MNIST
//!   experiment's PCA (D features, not data-sized);
//! - `.clone()` of whole posteriors where nothing of the data's size is copied (the sparse
//!   models' M × M factors); a posterior copied with its N × N factor (a fold model, the
//!   split priors' P_A and Q) goes through `GaussianPosterior::try_clone`;
//! - `Kernel::gram_grad` (explicit N × N derivative matrices, for tests and small problems).

use faer::Mat;

use crate::error::{Error, Result};

pub use crate::error::{shown_bytes, LimitSource};

/// Bytes of one f64.
const F64_BYTES: u64 = 8;

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

/// The memory available to a new allocation on this machine: `MemAvailable` of
/// `/proc/meminfo` (Linux); `None` where it cannot be read.
pub fn available_memory() -> Option<u64> {
    #[cfg(test)]
    if let Some(bytes) = AVAILABLE_IN_TEST.with(std::cell::Cell::get) {
        return Some(bytes);
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

#[cfg(test)]
thread_local! {
    /// The memory [`available_memory`] reports on this thread inside
    /// [`with_available_memory`] (unit tests only).
    static AVAILABLE_IN_TEST: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// `f` with [`available_memory`] reporting `bytes` on this thread: a unit test reaches the
/// refusal of a buffer whose inputs must be held first (an inverse beside its factor) without
/// filling the machine's memory. The check itself is the one every allocation goes through.
#[cfg(test)]
pub(crate) fn with_available_memory<R>(bytes: u64, f: impl FnOnce() -> R) -> R {
    let before = AVAILABLE_IN_TEST.with(|a| a.replace(Some(bytes)));
    let out = f();
    AVAILABLE_IN_TEST.with(|a| a.set(before));
    out
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

/// Buffers above this many bytes are checked against the memory available now before they
/// are allocated (Linux overcommits: an allocation it grants can still be killed when its
/// pages are touched); smaller ones only through the allocator's answer.
const CHECKED_BYTES: u64 = 64 << 20;

/// The error of a buffer of `rows × cols` f64 named `what` that cannot be had.
fn out_of_memory(what: &'static str, rows: usize, cols: usize) -> Error {
    Error::OutOfMemory {
        what,
        rows,
        cols,
        bytes: matrices_bytes(1, rows, cols),
    }
}

/// Whether `rows × cols` f64 may be asked of the allocator: countable in 64 bits and, above
/// [`CHECKED_BYTES`], within the memory available now (where known).
fn may_allocate(rows: usize, cols: usize) -> bool {
    match matrices_bytes(1, rows, cols) {
        None => false,
        Some(b) if b > CHECKED_BYTES => available_memory().is_none_or(|a| b <= a),
        Some(_) => true,
    }
}

/// Whether `count` matrices of `rows × cols` fit in the memory available now, else
/// [`Error::OutOfMemory`] naming `what` (its rows the count, its columns `rows · cols`): a
/// check before work whose buffers are allocated inside (a fit's own matrices).
pub fn check_matrices(count: usize, rows: usize, cols: usize, what: &'static str) -> Result<()> {
    let cells = rows.saturating_mul(cols);
    let fits = match matrices_bytes(count as u64, rows, cols) {
        None => false,
        Some(b) => available_memory().is_none_or(|a| b <= a),
    };
    match fits {
        true => Ok(()),
        false => Err(out_of_memory(what, count, cells)),
    }
}

/// A `rows × cols` matrix of zeros, or [`Error::OutOfMemory`] instead of the allocator's
/// abort: the one fallible allocation of data-sized matrices (N × N, N × M, N × D). Its
/// columns' padding is zero too ([`zeros`]).
pub fn try_zeros(rows: usize, cols: usize, what: &'static str) -> Result<Mat<f64>> {
    if !may_allocate(rows, cols) {
        return Err(out_of_memory(what, rows, cols));
    }
    let padded = rows
        .checked_next_multiple_of(COLUMN_TILE)
        .ok_or_else(|| out_of_memory(what, rows, cols))?;
    let mut m = Mat::new();
    m.try_reserve(padded, cols)
        .map_err(|_| out_of_memory(what, rows, cols))?;
    // Within the capacity just reserved: no further allocation.
    m.resize_with(padded, cols, |_, _| 0.0);
    m.truncate(rows, cols);
    Ok(m)
}

/// The entries faer rounds each column up to (64 bytes of f64).
const COLUMN_TILE: usize = 8;

/// `Mat::zeros` with the padding of its columns zero as well, for the work matrices the
/// products read. faer pads each column to a multiple of 8 entries and leaves the padding as
/// the allocator gave it; its x86 product kernels read the left operand's last 8-entry tile of
/// a column whole (what the padding yields is discarded). Where stale values there are
/// subnormal, every multiply-add on them takes a microcode assist: a 100 × 1024 by 1024 × 9
/// product ran 12× slower, to the same bits (the CHANGELOG's entry of 2026-12-03).
pub fn zeros(rows: usize, cols: usize) -> Mat<f64> {
    // A row count within 7 of `usize::MAX` cannot be allocated anyway: `Mat::zeros` says so.
    let Some(padded) = rows.checked_next_multiple_of(COLUMN_TILE) else {
        return Mat::zeros(rows, cols);
    };
    let mut m = Mat::zeros(padded, cols);
    m.truncate(rows, cols);
    m
}

/// [`try_zeros`] with entry `(i, j)` set to `f(i, j)`, column by column: `Mat::from_fn` for
/// data-sized matrices (the same entries, each computed once).
pub fn try_from_fn(
    rows: usize,
    cols: usize,
    what: &'static str,
    f: impl Fn(usize, usize) -> f64,
) -> Result<Mat<f64>> {
    let mut m = try_zeros(rows, cols, what)?;
    for j in 0..cols {
        for (i, v) in m.col_as_slice_mut(j).iter_mut().enumerate() {
            *v = f(i, j);
        }
    }
    Ok(m)
}

/// A vector of `len` zeros, or [`Error::OutOfMemory`]: [`try_zeros`] for data-sized vectors.
pub fn try_zeros_vec(len: usize, what: &'static str) -> Result<Vec<f64>> {
    if !may_allocate(len, 1) {
        return Err(out_of_memory(what, len, 1));
    }
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| out_of_memory(what, len, 1))?;
    v.resize(len, 0.0);
    Ok(v)
}

/// The work space faer asks for (`req`, a `…_scratch` of its low-level API), or
/// [`Error::OutOfMemory`] naming `what`, shown as `rows ×` as many f64 columns as its bytes
/// fill: [`try_zeros`] for the buffers faer would otherwise allocate itself (a
/// factorisation's, an inverse's), checked against the memory available by its real bytes
/// (alignment padding included).
pub fn try_scratch(
    req: faer::dyn_stack::StackReq,
    rows: usize,
    what: &'static str,
) -> Result<faer::dyn_stack::MemBuffer> {
    // `usize::MAX`: a size or alignment that does not count.
    let bytes = Some(req.unaligned_bytes_required())
        .filter(|&b| b != usize::MAX)
        .map(|b| b as u64);
    let refused = || Error::OutOfMemory {
        what,
        rows,
        cols: bytes.map_or(usize::MAX, |b| {
            b.div_ceil(F64_BYTES * rows.max(1) as u64) as usize
        }),
        bytes,
    };
    match bytes {
        None => return Err(refused()),
        Some(b) if b > CHECKED_BYTES && available_memory().is_some_and(|a| b > a) => {
            return Err(refused())
        }
        Some(_) => {}
    }
    faer::dyn_stack::MemBuffer::try_new(req).map_err(|_| refused())
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
    /// `square` matrices of `basis × basis` and a second copy of the inputs, nothing of
    /// `N × basis` (the rows are streamed in blocks).
    Streamed {
        /// Inducing inputs (at most N).
        basis: usize,
        /// How many `basis × basis` matrices are held at once.
        square: u64,
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
            Footprint::Streamed { basis, square } => {
                let m = basis.min(n);
                matrices_bytes(square, m, m).and_then(|a| a.checked_add(matrices_bytes(1, n, d)?))
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The zero-padded matrices have faer's own layout (the same column stride as
    /// `Mat::zeros`, so every product on them takes the same path to the same bits) and zero
    /// entries, at every row count around the 8-entry tile.
    #[test]
    fn padded_zeros_keep_faer_layout() {
        for rows in 0..=17 {
            let plain = Mat::<f64>::zeros(rows, 3);
            for m in [zeros(rows, 3), try_zeros(rows, 3, "test").unwrap()] {
                assert_eq!((m.nrows(), m.ncols()), (rows, 3));
                assert_eq!(m.col_stride(), plain.col_stride(), "{rows} rows");
                assert!((0..rows).all(|i| (0..3).all(|j| m[(i, j)] == 0.0)));
            }
        }
        // A row count too near `usize::MAX` to pad is the typed error, not a 0 × 0 matrix.
        assert!(try_zeros(usize::MAX - 3, 0, "unpaddable matrix").is_err());
    }

    /// Buffers of a countable size come back zeroed and shaped; one whose bytes overflow, or
    /// that is larger than any machine's memory, is the typed error, not an abort.
    #[test]
    fn buffers_too_large_are_typed_errors() {
        let m = try_zeros(3, 2, "test matrix").unwrap();
        assert_eq!((m.nrows(), m.ncols()), (3, 2));
        assert!((0..3).all(|i| (0..2).all(|j| m[(i, j)] == 0.0)));
        assert_eq!(try_zeros_vec(4, "test vector").unwrap(), vec![0.0; 4]);
        match try_zeros(usize::MAX, 2, "overflowing matrix") {
            Err(Error::OutOfMemory { bytes: None, .. }) => {}
            other => panic!("{other:?}"),
        }
        // 2⁶⁰ bytes: more than any allocator gives (and than MemAvailable, where read).
        let e = try_zeros(1 << 28, 1 << 29, "huge matrix").unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { bytes: Some(b), .. } if b == 1 << 60));
        assert!(
            e.to_string().starts_with("cannot allocate huge matrix"),
            "{e}"
        );
        assert!(try_zeros_vec(1 << 60, "huge vector").is_err());
    }

    #[test]
    fn meminfo_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   22000000 kB\n";
        assert_eq!(mem_available(text), Some(22_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 3 kB\n"), None);
    }
}
