//! Support vector machines as the MAP of a Gaussian process (seed 001 §17.4–17.7).
//!
//! **Dual problem.** With labels `y_i ∈ {±1}` and a covariance `k` the SVM solves
//!
//! `max_α W(α) = Σ_i α_i − ½ Σ_ij α_i α_j y_i y_j k_ij`, `0 ≤ α_i ≤ C`, and `Σ_i y_i α_i = 0`
//! when there is a bias b (seed 001 eq. 17.22, the saddle point of L in α).
//!
//! - *Linear slack* `C Σ ξ_i` (Laplace noise in eq. 17.22): `k = K`, `0 ≤ α ≤ C`.
//! - *Quadratic slack* `(1/2v) Σ ξ_i²` (Gaussian noise): `k = K + vI` (seed 001 eq. 17.16), no
//!   upper bound; the slack of a support vector is `ξ_i = v α_i`.
//!
//! The decision function is `f(x) + b = Σ_j K(x, x_j) y_j α_j + b` (eqs. 17.20–17.21; the
//! noise part `vI` of `k` is per training example and does not enter at a new input).
//!
//! **Solvers.** [`adatron`]: the parallel kernel Adatron of §17.7 (Anlauf & Biehl 1989;
//! Frieß et al. 1998) as projected gradient ascent on W, `O(N²)` per sweep with `k` held in
//! memory. [`smo`]: sequential minimal optimisation with second-order working-set selection
//! (Fan, Chen & Lin 2005, as in libsvm), shrinking and an LRU cache of kernel rows, so `k` is
//! never formed. Both end in the same [`SvmFit`] (b from the free support vectors, as libsvm).
//!
//! **Support-vector sets** (§17.5): non-SVs `α_i = 0`; margin SVs `0 < α_i < C`
//! (`y_i(f_i + b) = 1` with `f = k(y∘α)`); bound SVs `α_i = C` (linear slack only).
//!
//! Linear-response leave-one-out (eqs. 17.26–17.32) is in [`loo`], hyperparameter selection
//! by it in [`select`], and the PAC-Bayes certificate of the SVM as a GP MAP in
//! [`certificate`].
//!

use std::sync::Arc;

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::inference::{ConvergenceReport, ConvergenceStatus};
use crate::kernel::{Kernel, Profile};

mod row_cache;
mod rows;
pub use rows::*;

pub mod adatron;
pub mod ard;
pub mod certificate;
pub mod loo;
pub mod select;
pub mod smo;
pub mod solution;

/// The slack penalty, i.e. the SVM's noise model (seed 001 §17.4).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Slack {
    /// `C Σ ξ_i`: box constraint `0 ≤ α_i ≤ C` (Laplace noise).
    Linear {
        /// Box constraint C > 0.
        c: f64,
    },
    /// `(1/2v) Σ ξ_i²`: `v` added to the kernel's diagonal (eq. 17.16), no upper bound.
    Quadratic {
        /// Input-noise variance v > 0.
        v: f64,
    },
}

impl Slack {
    /// Upper bound on α (`+∞` for the quadratic slack).
    pub fn upper(&self) -> f64 {
        match *self {
            Slack::Linear { c } => c,
            Slack::Quadratic { .. } => f64::INFINITY,
        }
    }

    /// What is added to the kernel's diagonal (`v`, or 0 for the linear slack).
    pub fn diagonal_shift(&self) -> f64 {
        match *self {
            Slack::Linear { .. } => 0.0,
            Slack::Quadratic { v } => v,
        }
    }

    fn validate(&self) -> Result<()> {
        match *self {
            Slack::Linear { c } if !(c > 0.0 && c.is_finite()) => Err(Error::InvalidParameter {
                name: "SVM box constraint C",
                value: c,
                reason: "must be positive and finite",
            }),
            Slack::Quadratic { v } if !(v > 0.0 && v.is_finite()) => Err(Error::InvalidParameter {
                name: "SVM quadratic-slack variance v",
                value: v,
                reason: "must be positive and finite",
            }),
            _ => Ok(()),
        }
    }
}

/// Which dual solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SvmSolver {
    /// Parallel kernel Adatron (seed 001 §17.7); stops at `max_i (δα_i/η_i)² < tol` or a
    /// relative duality gap `< tol` (linear slack, no bias), within `max_iter` sweeps.
    Adatron,
    /// SMO with second-order working-set selection; stops at a maximal KKT violation `< tol`.
    Smo,
}

/// Settings of [`svm`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvmConfig {
    /// Slack penalty (noise model).
    pub slack: Slack,
    /// Fit a bias b (the GP's constant mean, with `Σ y_i α_i = 0`).
    pub bias: bool,
    /// Dual solver.
    pub solver: SvmSolver,
    /// Stopping tolerance: SMO's maximal violating pair gap (libsvm `-e`, default 1e-3);
    /// Adatron's `max_i (δα_i/η_i)²` (the seed's ftol = 1e-5 at unit rate) and relative
    /// duality gap.
    pub tol: f64,
    /// Iteration budget (SMO pair updates / Adatron sweeps; a fit gives the Adatron
    /// [`adatron::DEFAULT_SWEEPS`]); running out is reported, for the Adatron with a note.
    pub max_iter: usize,
    /// Kernel-row cache of SMO in MB (libsvm `-m`, default 200).
    pub cache_mb: f64,
    /// SMO shrinking heuristic (libsvm `-h 1`).
    pub shrinking: bool,
    /// Adatron sweeps from a Nesterov extrapolation with gradient restarts (not the seed's
    /// plain parallel Adatron; same solution, fewer sweeps).
    pub adatron_momentum: bool,
}

impl Default for SvmConfig {
    /// libsvm's defaults: linear slack C = 1, bias, SMO, ε = 1e-3, 200 MB, shrinking.
    fn default() -> Self {
        Self {
            slack: Slack::Linear { c: 1.0 },
            bias: true,
            solver: SvmSolver::Smo,
            tol: 1e-3,
            max_iter: 10_000_000,
            cache_mb: 200.0,
            shrinking: true,
            adatron_momentum: false,
        }
    }
}

impl SvmConfig {
    /// Typed errors for C ≤ 0, v ≤ 0, tol ≤ 0, a zero budget or a negative cache.
    pub fn validate(&self) -> Result<()> {
        self.slack.validate()?;
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "SVM tolerance",
                value: self.tol,
                reason: "must be positive and finite",
            });
        }
        if self.max_iter == 0 {
            return Err(Error::InvalidParameter {
                name: "SVM max_iter",
                value: 0.0,
                reason: "must be at least 1",
            });
        }
        if !(self.cache_mb >= 0.0 && self.cache_mb.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "SVM cache size (MB)",
                value: self.cache_mb,
                reason: "must be ≥ 0 and finite",
            });
        }
        Ok(())
    }
}

/// The three groups of the Kuhn–Tucker conditions (seed 001 §17.5), as training-row indices.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SupportVectorSets {
    /// `α_i = 0` (`y_i(f_i + b) ≥ 1`).
    pub non_sv: Vec<usize>,
    /// `0 < α_i < C` (`y_i(f_i + b) = 1`).
    pub margin_sv: Vec<usize>,
    /// `α_i = C` (`y_i(f_i + b) ≤ 1`; linear slack only).
    pub bound_sv: Vec<usize>,
}

/// A fitted SVM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvmFit {
    /// Dual variables `α_i ≥ 0` (the seed's embedding strengths).
    pub alpha: Vec<f64>,
    /// Bias b (0 when fitted without one).
    pub b: f64,
    /// `f(x_i) + b = Σ_j K_ij y_j α_j + b` at the training inputs (noise-free K: the decision
    /// values of the classifier there).
    pub decision: Vec<f64>,
    /// `y_i(f_i + b)` with `f = k(y∘α)`, `k = K + vI` for the quadratic slack: 1 on margin SVs.
    pub margins: Vec<f64>,
    /// Non-SV, margin-SV and bound-SV sets.
    pub sets: SupportVectorSets,
    /// Dual objective `W(α)` at the solution (libsvm's `obj` is `−W`).
    pub dual_objective: f64,
    /// Slack penalty used.
    pub slack: Slack,
    /// Whether a bias was fitted.
    pub bias: bool,
    /// Solver used.
    pub solver: SvmSolver,
    /// Iterations, final violation, notes.
    pub report: ConvergenceReport,
}

impl SvmFit {
    /// Training labels' predicted signs `sgn(f(x_i) + b)` disagreeing with `y`, as a fraction.
    pub fn training_error(&self, y: &[f64]) -> f64 {
        let wrong = self
            .decision
            .iter()
            .zip(y)
            .filter(|(f, y)| !(**f * **y > 0.0))
            .count();
        wrong as f64 / y.len().max(1) as f64
    }

    /// Decision values `f(x) + b` at the rows of `x_new` for an SVM trained on `x_train`.
    pub fn decision_function(
        &self,
        kernel: &Kernel,
        x_train: MatRef<'_, f64>,
        y: &[f64],
        x_new: MatRef<'_, f64>,
    ) -> Result<Vec<f64>> {
        check_shapes(x_train, y)?;
        if y.len() != self.alpha.len() || x_new.ncols() != x_train.ncols() {
            return Err(Error::ShapeMismatch {
                what: "SVM prediction inputs",
                expected: format!("{} labels, {} columns", self.alpha.len(), x_train.ncols()),
                found: format!("{} labels, {} columns", y.len(), x_new.ncols()),
            });
        }
        crate::data::check_finite(x_new, "SVM prediction inputs")?;
        let sv: Vec<usize> = (0..y.len()).filter(|&i| self.alpha[i] > 0.0).collect();
        let xs = Mat::from_fn(sv.len(), x_train.ncols(), |r, c| x_train[(sv[r], c)]);
        let ks = kernel.cross(x_new, xs.as_ref())?;
        Ok((0..x_new.nrows())
            .map(|r| {
                sv.iter()
                    .enumerate()
                    .map(|(t, &j)| ks[(r, t)] * y[j] * self.alpha[j])
                    .sum::<f64>()
                    + self.b
            })
            .collect())
    }
}

/// Rows of the (unsigned) SVM kernel `k = K + shift·I` on the training set, computed on
/// demand: the only access the solvers need, so `k` need not be held.
pub trait KernelRows: Sync {
    /// Number of training points N.
    fn n(&self) -> usize;
    /// `k_ii`.
    fn diag(&self, i: usize) -> f64;
    /// `out[t] = k(i, cols[t])`.
    fn fill_row(&self, i: usize, cols: &[usize], out: &mut [f64]);
}

/// Shapes, finite inputs, ±1 labels with both classes.
pub(crate) fn check_shapes(x: MatRef<'_, f64>, y: &[f64]) -> Result<()> {
    crate::regression::exact::check_regression_inputs(x, y)?;
    crate::data::check_binary_labels(y)?;
    Ok(())
}

fn check_labels_gram(gram: MatRef<'_, f64>, y: &[f64]) -> Result<()> {
    if gram.nrows() != gram.ncols() || gram.nrows() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "precomputed SVM Gram matrix",
            expected: format!("{0}×{0} for {0} labels", y.len()),
            found: format!("{}×{}", gram.nrows(), gram.ncols()),
        });
    }
    crate::data::check_finite(gram, "precomputed SVM Gram matrix")?;
    if y.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: "SVM labels",
            row: y.iter().position(|v| !v.is_finite()).unwrap_or(0),
            col: 0,
        });
    }
    crate::data::check_binary_labels(y)
}

/// Train an SVM with covariance `kernel` on `(x, y)` (labels ±1).
///
/// Errors: one class only or labels not ±1 (`NotBinary`), NaN/∞ inputs (`NonFinite`),
/// C ≤ 0, v ≤ 0 or another bad setting (`InvalidParameter`), shapes (`ShapeMismatch`).
pub fn svm(kernel: &Kernel, x: MatRef<'_, f64>, y: &[f64], cfg: &SvmConfig) -> Result<SvmFit> {
    cfg.validate()?;
    check_shapes(x, y)?;
    let rows = InputRows::new(kernel, x, cfg.slack.diagonal_shift())?;
    solve(&rows, y, cfg, None)
}

/// Train an SVM on a precomputed Gram matrix `K` (`v` of the quadratic slack is added here).
pub fn svm_precomputed(gram: MatRef<'_, f64>, y: &[f64], cfg: &SvmConfig) -> Result<SvmFit> {
    cfg.validate()?;
    check_labels_gram(gram, y)?;
    let rows = DenseRows::new(gram, cfg.slack.diagonal_shift());
    solve(&rows, y, cfg, None)
}

/// Solve the dual on any [`KernelRows`] (its shift must be the slack's v), optionally from a
/// feasible warm start `alpha0`.
pub fn solve(
    rows: &dyn KernelRows,
    y: &[f64],
    cfg: &SvmConfig,
    alpha0: Option<&[f64]>,
) -> Result<SvmFit> {
    cfg.validate()?;
    if let Some(a) = alpha0 {
        if a.len() != y.len() {
            return Err(Error::ShapeMismatch {
                what: "SVM warm start",
                expected: format!("{} values", y.len()),
                found: format!("{}", a.len()),
            });
        }
    }
    let (alpha, field, report) = match cfg.solver {
        SvmSolver::Smo => smo::solve(rows, y, cfg, alpha0)?,
        SvmSolver::Adatron => adatron::solve(rows, y, cfg, alpha0)?,
    };
    Ok(finish(y, cfg, alpha, &field, report))
}

/// Bias, sets, decision values and dual objective from α and `F = k(y∘α)` (shared by both
/// solvers). b is libsvm's: the mean of `y_i − F_i` over free α, else the midpoint of the
/// feasible interval.
fn finish(
    y: &[f64],
    cfg: &SvmConfig,
    alpha: Vec<f64>,
    field: &[f64],
    report: ConvergenceReport,
) -> SvmFit {
    let n = y.len();
    let c = cfg.slack.upper();
    let v = cfg.slack.diagonal_shift();
    let b = if cfg.bias {
        bias(y, &alpha, field, c)
    } else {
        0.0
    };
    let mut sets = SupportVectorSets::default();
    for (i, &a) in alpha.iter().enumerate() {
        if a <= 0.0 {
            sets.non_sv.push(i);
        } else if a >= c {
            sets.bound_sv.push(i);
        } else {
            sets.margin_sv.push(i);
        }
    }
    let dual_objective =
        alpha.iter().sum::<f64>() - 0.5 * (0..n).map(|i| alpha[i] * y[i] * field[i]).sum::<f64>();
    let margins = (0..n).map(|i| y[i] * (field[i] + b)).collect();
    let decision = (0..n).map(|i| field[i] - v * y[i] * alpha[i] + b).collect();
    SvmFit {
        alpha,
        b,
        decision,
        margins,
        sets,
        dual_objective,
        slack: cfg.slack,
        bias: cfg.bias,
        solver: cfg.solver,
        report,
    }
}

/// libsvm's `calculate_rho` in our signs: `b = mean_{free}(y_i − F_i)`, or the midpoint of
/// the interval the KKT conditions leave when no α is free.
fn bias(y: &[f64], alpha: &[f64], field: &[f64], c: f64) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
    for i in 0..y.len() {
        let r = y[i] - field[i]; // b that puts i on the margin
        let (at_lower, at_upper) = (alpha[i] <= 0.0, alpha[i] >= c);
        if !at_lower && !at_upper {
            sum += r;
            count += 1;
        } else if (at_lower && y[i] > 0.0) || (at_upper && y[i] < 0.0) {
            lo = lo.max(r); // y(F + b) ≥ 1 (non-SV, y = +1) or ≤ 1 (bound, y = −1)
        } else {
            hi = hi.min(r);
        }
    }
    if count > 0 {
        sum / count as f64
    } else if lo.is_finite() && hi.is_finite() {
        0.5 * (lo + hi)
    } else if lo.is_finite() {
        lo
    } else if hi.is_finite() {
        hi
    } else {
        0.0
    }
}

/// The field `F = k(y∘α)` by rows of k over the support vectors (`O(N·#SV)`).
pub(crate) fn field_of(rows: &dyn KernelRows, y: &[f64], alpha: &[f64]) -> Vec<f64> {
    let n = y.len();
    let all: Vec<usize> = (0..n).collect();
    let mut f = vec![0.0; n];
    let mut r = vec![0.0; n];
    for j in (0..n).filter(|&j| alpha[j] > 0.0) {
        rows.fill_row(j, &all, &mut r);
        let w = y[j] * alpha[j];
        for (fi, ri) in f.iter_mut().zip(&r) {
            *fi += w * ri;
        }
    }
    f
}

/// A report for a solver run.
pub(crate) fn report(
    converged: bool,
    iterations: usize,
    final_change: f64,
    notes: Vec<String>,
) -> ConvergenceReport {
    ConvergenceReport {
        status: if converged {
            ConvergenceStatus::Converged
        } else {
            ConvergenceStatus::MaxIterations
        },
        iterations,
        final_change,
        jitter_used: 0.0,
        notes,
    }
}

/// Shared row handle of the SMO cache.
pub(crate) type Row = Arc<Vec<f64>>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows filled from the inputs (the vectorised squared-exponential path, a constant term
    /// as an offset, a Matérn kernel entry by entry, a diagonal shift) equal the kernel's own
    /// Gram matrix to round-off.
    #[test]
    fn input_rows_equal_the_gram_matrix() {
        let x = Mat::from_fn(37, 3, |i, j| ((i * 7 + j * 5) % 17) as f64 / 4.0 - 2.0);
        let se = Kernel::se_ard(&[0.7, 1.3, 2.0], 1.7);
        let with_constant = Kernel::Sum {
            left: Box::new(se.clone()),
            right: Box::new(Kernel::Constant { ln_variance: 0.3 }),
        };
        let matern = Kernel::stationary(Profile::Matern32, &[1.1], 0.8);
        let all: Vec<usize> = (0..37).collect();
        let some: Vec<usize> = (0..37).filter(|j| j % 3 != 1).collect();
        for k in [se, with_constant, matern] {
            let shift = 0.25;
            let rows = InputRows::new(&k, x.as_ref(), shift).unwrap();
            let g = k.gram(x.as_ref()).unwrap();
            for cols in [&all, &some] {
                let mut out = vec![0.0; cols.len()];
                for i in [0, 5, 36] {
                    rows.fill_row(i, cols, &mut out);
                    for (t, &j) in cols.iter().enumerate() {
                        let want = g[(i, j)] + if i == j { shift } else { 0.0 };
                        assert!(
                            (out[t] - want).abs() <= 1e-14 * want.abs().max(1.0),
                            "{}: ({i}, {j}) {} vs {want}",
                            k.describe(),
                            out[t]
                        );
                    }
                    assert!((rows.diag(i) - g[(i, i)] - shift).abs() < 1e-14);
                }
            }
        }
    }

    /// Rows kept across solves ([`SharedRows`]) with each solve's shift have the bits the
    /// solve's own [`InputRows`] would give, on every row, on all columns and on a subset,
    /// read in any order and more than once.
    #[test]
    fn shared_rows_have_the_bits_of_input_rows() {
        let x = Mat::from_fn(29, 3, |i, j| ((i * 5 + j * 3) % 13) as f64 / 3.0 - 2.0);
        let se = Kernel::se_iso(1.3, 0.4);
        let with_constant = crate::plan::svm_prior_kernel(&se);
        let matern = Kernel::stationary(Profile::Matern52, &[0.9], 0.2);
        let all: Vec<usize> = (0..29).collect();
        let some: Vec<usize> = (0..29).filter(|j| j % 4 != 2).collect();
        for k in [se, with_constant, matern] {
            let shared = SharedRows::new(&k, x.as_ref()).unwrap();
            for shift in [0.0, 0.7, 0.0] {
                let own = InputRows::new(&k, x.as_ref(), shift).unwrap();
                let kept = shared.shifted(shift);
                for cols in [&some, &all] {
                    let (mut a, mut b) = (vec![0.0; cols.len()], vec![0.0; cols.len()]);
                    for i in (0..29).rev() {
                        own.fill_row(i, cols, &mut a);
                        kept.fill_row(i, cols, &mut b);
                        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&a), bits(&b), "{} row {i}", k.describe());
                        assert_eq!(own.diag(i).to_bits(), kept.diag(i).to_bits());
                    }
                }
            }
        }
    }
}
