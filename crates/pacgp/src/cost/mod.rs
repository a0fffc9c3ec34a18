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
//!   and mean-field classifiers (`K`, the factor of `B = I + W½KW½`, its inverse or `R`, the
//!   posterior's factor, the best candidate kept: `c = 5`); pac-gpc (those and its bound's
//!   gradient: `c = 12`); the SVM (the kernel
//!   rows its SMO solvers cache, two solves at a time on two threads, and the rows of the
//!   certificate's mean; its posterior has the prior's covariance, so no N × N factor:
//!   `c = 2`, against 1.4·8N² bytes measured at N = 3 000); the multi-class
//!   Laplace with K classes (`K` shared, `E_c` and the factor `L_c` per class, `M` and its
//!   factor, the evidence gradient's weights and the certificate's per-class covariances,
//!   with the allocator's pages between candidates: `c = 7K + 8`, read from the resident
//!   sizes of fits at K = 3 and 5, where the count of arrays alone gave `2K + 3`);
//! - **sparse** methods hold `c` matrices of `N × M` (`M` inducing inputs, basis vectors or
//!   the active set) and a few `M × M`: vfe, fitc, dtc, pac-sgp, greedy-sparse (`K_uf`,
//!   `L⁻¹K_uf`, the gradient's `N × M` weights: `c = 4`), IVM (`c = 3`), SOGP (the basis
//!   rows and the candidates' certificates' cross-covariances: `c = 12`, read from resident
//!   sizes);
//! - **streamed** methods hold only `M × M` matrices beyond the inputs and a few blocks of
//!   rows: the sparse variational classifier (svgp, pac-svgp: L-BFGS's 30 pairs of
//!   `M(M+1)/2`-long vectors, the block sums, `S`, `K_uu` and their products, `c = 60` of
//!   `M × M`; the inputs twice, as read and standardised).
//!
//! Every method also holds its inputs (`N × D`). The counts are estimates from reading the
//! code of one fit, and, where the resident size showed more (the multi-class Laplace, SOGP,
//! pac-gpc), from measurements (docs/performance.md, "Cost model"); candidates scored in
//! parallel threads each hold their own matrices, which the count leaves out (on a machine
//! where one fit barely fits, use one thread). One-vs-rest classes are fitted in parallel
//! only as many at once as fit in the memory available (`fit::multiclass`): the memory check
//! counts one member, the estimate [`estimate`] shows one per thread up to K.
//!
//! Prediction intervals and sets that refit (`--intervals cv+:K`, `split-conformal:F`,
//! `fit::intervals`) run after the fit, whose work arrays are gone by then, while the fitted
//! model is kept: the peak is the larger of the fit's and of the last refit's, which holds
//! the model's factor (`kept_bytes`), the factors of the fold models already refitted (CV+
//! keeps all K), and the refit's own arrays on its part of the rows ([`peak_bytes`]). CV+
//! with K = 5 on an exact GP: `1 + 4·0.64 + 5·0.64 = 6.8` matrices of N × N against the
//! fit's 5; split conformal at F = 0.3: `1 + 5·0.09`, below the fit's.
//!
//! A classifier's jackknife+ prediction sets (`--intervals jackknife+`, laplace, ep, ivm,
//! pac-gpc, mean field and the SVM) add nothing to count: the fit checks in `O(N)` that every posterior has a
//! downdate ([`crate::loo::LooDowndate::check_sites`]) and stores the labels (IVM: after one
//! refit at the fitted kernel for its active rows, whose arrays are the fit's, `O(N·d)`; the
//! SVM: its support vectors from the fit's own solution; mean field: the labels only, its LU of
//! `I + KΛ` is `predict --set`'s, as the downdate's); the downdate's one `L⁻¹`
//! (`N³/3`, the cavities) and its `O(N²·N*)` solves are `predict --set`'s, one posterior at a
//! time beside the stored factor (the Gram matrix and `L⁻¹`: fewer `N × N` than a fit holds).
//! svgp's record keeps a copy of the standardised training inputs (`N × D`, counted beside the
//! fitted model); its `w_i` (`M × N`) are `predict --set`'s.
//! Likewise a regressor's jackknife+ intervals: the exact GP's downdate is checked in `O(N)`
//! ([`crate::loo::LooDowndate::check_exact`]) and built by `predict`.
//!
//! The machine's memory and the limit a fit may use are [`crate::memory`]'s; the time a fit
//! takes is [`time`]'s, and [`estimate`] puts the two together for the front ends to show
//! before a long fit starts.

pub mod time;

use crate::error::{shown_bytes, Error, Result};
use crate::kernel::Kernel;
pub use crate::memory::Footprint;
use crate::memory::{matrices_bytes, MemoryLimit};
use crate::spec::{CheckedFitSpec, IntervalMethod, Method};

pub use time::{Shape, Work, FLOPS_PER_CORE};

/// A fit estimated to take longer than this many seconds (wall, on the threads it runs on)
/// is announced with its estimate before it starts.
pub const LONG_FIT_SECONDS: f64 = 30.0;

/// Resident bytes of the process itself (code, runtime, allocator): about 20 MB for a fit of
/// 200 rows (`/usr/bin/time -v`, release build).
pub const PROCESS_BYTES: u64 = 20_000_000;

/// Bytes of one cell of a table as read (`data::encoding::Table`: a `String` of 24 bytes and
/// its heap block), held while the table is coded.
const TABLE_CELL_BYTES: u64 = 48;

/// What a fit is estimated to cost before it starts: its peak memory and its work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Peak resident bytes of a process that reads the table and fits: the fit's arrays
    /// ([`Footprint::bytes`]), the table's N × (D + 1) cells as read, and [`PROCESS_BYTES`].
    pub bytes: u64,
    /// Flops and loop counts ([`time::work`]).
    pub work: Work,
}

impl Estimate {
    /// Wall seconds on `threads` cores: the CPU seconds shared among them.
    pub fn wall_seconds(&self, threads: usize) -> f64 {
        self.work.cpu_seconds() / threads.max(1) as f64
    }

    /// Whether a fit on `threads` cores is long enough to announce ([`LONG_FIT_SECONDS`]).
    pub fn is_long(&self, threads: usize) -> bool {
        self.wall_seconds(threads) > LONG_FIT_SECONDS
    }

    /// `about 2.4 min on 2 threads (310 GFLOP) and 1.2 GB of memory`, for the front ends.
    pub fn sentence(&self, threads: usize) -> String {
        format!(
            "about {} on {threads} thread{} ({:.0} GFLOP) and {} of memory",
            shown_seconds(self.wall_seconds(threads)),
            if threads == 1 { "" } else { "s" },
            self.work.flops() / 1e9,
            shown_bytes(self.bytes)
        )
    }
}

/// `45 s`, `3.2 min`, `1.5 h`: a duration in the unit a reader takes in at once.
pub fn shown_seconds(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.1} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// The estimate of a fit of `spec` on `n` rows of `d` inputs and `k` classes (2 for a binary
/// or regression fit), with the defaults the fit fills in for `n` rows.
pub fn estimate(spec: &CheckedFitSpec, n: usize, d: usize, k: usize) -> Result<Estimate> {
    let (spec, _) = spec.for_sample(n)?;
    let spec = as_fitted_on(spec, k)?;
    let p = match spec.prior_kernel_spec() {
        Some(kernel) => Kernel::from_spec(kernel, d)?.n_params(),
        // The candidate menus' kernels: σ_f² and one lengthscale.
        None => 2,
    };
    let shape = Shape {
        n: n as f64,
        d: d as f64,
        k: k as f64,
        p: p as f64,
    };
    let table = (n as u64)
        .saturating_mul(d as u64 + 1)
        .saturating_mul(TABLE_CELL_BYTES);
    let intervals = spec.intervals.map(|iv| iv.method);
    Ok(Estimate {
        bytes: peak_bytes(&spec, n, d, k)
            .saturating_mul(members_at_once(&spec.method, k))
            .saturating_add(table)
            .saturating_add(PROCESS_BYTES),
        work: time::fit_work(&spec.method, intervals, shape),
    })
}

/// One-vs-rest members fitted at once, each with its own arrays: one per worker thread up to
/// K (`fit::multiclass::members_at_once`, which fits fewer where memory is short); 1 else.
fn members_at_once(method: &Method, k: usize) -> u64 {
    match method {
        Method::OneVsRest(_) => rayon::current_num_threads().clamp(1, k.max(1)) as u64,
        _ => 1,
    }
}

/// The spec a fit on `k` classes runs: a binary classifier's on more than two classes is
/// fitted one-vs-rest, as `fit` does (`fit::fit_classifier`).
fn as_fitted_on(spec: CheckedFitSpec, k: usize) -> Result<CheckedFitSpec> {
    if k > 2 && spec.is_classifier() && spec.multiclass().is_none() {
        return Ok(crate::spec::FitSpec::from(spec)
            .into_one_vs_rest()
            .check()?);
    }
    Ok(spec)
}

/// [`estimate`] of fitting `outputs` ≥ 1 regression targets at the same inputs
/// ([`crate::fit::fit_outputs`]) on `threads` cores. With a kernel shared by all: one fit's
/// work (each step factors `K + σ²I` once for every output) and its arrays beside the other
/// outputs' kept posteriors. With one kernel per output: `outputs` fits' work, up to one per
/// thread at a time, their arrays beside the kept posteriors of the outputs not running.
pub fn estimate_outputs(
    spec: &CheckedFitSpec,
    n: usize,
    d: usize,
    outputs: usize,
    threads: usize,
) -> Result<Estimate> {
    let one = estimate(spec, n, d, 2)?;
    let (resolved, _) = spec.for_sample(n)?;
    let outputs = outputs.max(1);
    let (at_once, work) = match spec.shares_kernel() {
        true => (1, one.work),
        false => (threads.clamp(1, outputs), one.work.repeated(outputs as f64)),
    };
    let running = peak_bytes(&resolved, n, d, 2).saturating_mul(at_once as u64 - 1);
    let resting = kept_bytes(&resolved.method, 2, n, d).saturating_mul((outputs - at_once) as u64);
    Ok(Estimate {
        bytes: one.bytes.saturating_add(running).saturating_add(resting),
        work,
    })
}

/// The peak bytes of the arrays of a fit of `spec` (defaults filled in) on `n` rows of `d`
/// inputs and `k` classes: its method's [`footprint`], or what is alive during the last refit
/// of its prediction intervals or sets if that is more (module doc).
pub fn peak_bytes(spec: &CheckedFitSpec, n: usize, d: usize, k: usize) -> u64 {
    let fit = footprint(&spec.method, k).bytes(n, d);
    match spec.intervals.map(|iv| iv.method) {
        Some(iv) => fit.max(refit_bytes(&spec.method, iv, n, d, k)),
        None => fit,
    }
}

/// Bytes alive during the last refit of `iv` after a fit of `method` on `n` rows: the fitted
/// model ([`kept_bytes`]), CV+'s fold models fitted before (`K − 1` of them, each kept), and
/// the refit's footprint on its part (`n − ⌊n/K⌋` rows at most, `data::k_fold`; `round(F·n)`,
/// `data::part_a_size`), or, once it is fitted, its model and the copy a fold model takes of
/// it (`model::FoldModel::of`). Jackknife+ refits nothing at fit time; svgp's, pac-svgp's
/// and SOGP's records copy the standardised training inputs beside the fitted model.
fn refit_bytes(method: &Method, iv: IntervalMethod, n: usize, d: usize, k: usize) -> u64 {
    let (part, earlier) = match iv {
        IntervalMethod::JackknifePlus if crate::spec::training_inputs_classifier(method) => {
            let inputs = matrices_bytes(1, n, d).unwrap_or(u64::MAX);
            return kept_bytes(method, k, n, d).saturating_add(inputs);
        }
        IntervalMethod::JackknifePlus => return 0,
        IntervalMethod::CvPlus { folds } => (n - n / folds.max(1), folds.saturating_sub(1)),
        IntervalMethod::SplitConformal { fraction } => {
            (crate::data::part_a_size(n, fraction).min(n), 0)
        }
    };
    let kept_part = kept_bytes(method, k, part, d);
    let refit = footprint(method, k)
        .bytes(part, d)
        .max(kept_part.saturating_mul(2));
    kept_bytes(method, k, n, d)
        .saturating_add(kept_part.saturating_mul(earlier as u64))
        .saturating_add(refit)
}

/// Bytes a fitted model of `method` keeps on `n` rows of `d` inputs: a dense method its
/// posterior's `N × N` factor (the multi-class Laplace one per class, counted as K) and its
/// `N × D` basis; a sparse or streamed one two `M × M` factors and its `M × D` basis.
fn kept_bytes(method: &Method, k: usize, n: usize, d: usize) -> u64 {
    let (rows, squares) = match footprint(method, k) {
        Footprint::Dense { .. } => match method {
            Method::Softmax(_) => (n, k as u64),
            _ => (n, 1),
        },
        Footprint::Sparse { basis, .. } | Footprint::Streamed { basis, .. } => (basis.min(n), 2),
    };
    matrices_bytes(squares, rows, rows)
        .and_then(|a| a.checked_add(matrices_bytes(1, rows, d)?))
        .unwrap_or(u64::MAX)
}

/// The basis size the advice of a refused dense fit quotes for the sparse methods.
pub const SUGGESTED_BASIS: usize = 500;

/// The footprint of `method` (defaults filled in: [`crate::spec::CheckedFitSpec::for_sample`])
/// with `k` classes (2 for a binary or regression fit): its home's
/// ([`crate::spec::MethodSpec::footprint`]).
pub fn footprint(method: &Method, k: usize) -> Footprint {
    method.home().footprint(k)
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
    let needed = peak_bytes(spec, n, d, k);
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
    let refits = needed > print.bytes(n, d);
    let held = match print {
        Footprint::Dense { matrices } => format!(
            "{matrices} matrices of {n} × {n}, {} each",
            shown_bytes(matrices_bytes(1, n, n).unwrap_or(u64::MAX))
        ),
        Footprint::Sparse { basis, matrices } => {
            format!("{matrices} matrices of {n} × {}", basis.min(n))
        }
        Footprint::Streamed { basis, square } => {
            let m = basis.min(n);
            format!("{square} matrices of {m} × {m}, the rows streamed in blocks")
        }
    };
    let held = match (refits, spec.intervals) {
        (true, Some(iv)) => format!(
            "{held}, and more while {} refits it on part of the rows beside the fitted model",
            iv.method
        ),
        _ => held,
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
mod tests;
