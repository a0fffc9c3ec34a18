//! Leave-one-out for the SVM: the linear-response estimate of seed 001 §17.5 and exact LOO by
//! warm-started refits.
//!
//! **Linear response** (eqs. 17.26–17.31). Assume no other example changes its Kuhn–Tucker
//! group when example l is removed: non-SVs and bound SVs keep `δα_j = 0`, margin SVs keep
//! `y_j(f_j + b) = 1`. With `k = K + vI` over the margin SVs `M`:
//!
//! - non-SV l: nothing moves, `y_l f_l^{\l} = y_l(f_l + b)`;
//! - margin SV l: `y_l f_l^{\l} = y_l(f_l + b) − α_l / [A⁻¹]_ll` (eq. 17.29);
//! - bound SV l: `y_l f_l^{\l} = y_l(f_l + b) + α_l (a_lᵀ A⁻¹ a_l − k_ll)` (eq. 17.31),
//!
//! with `A = k_M`, `a_l = k_{M,l}` without a bias. **With a bias** (eq. 17.32) the margin SVs
//! satisfy `δf_j + δb = 0` and the equality constraint gives `Σ_{j≠l} y_j δα_j = y_l α_l`
//! (the seed's "Σ^{mSV} y δα = 0" with `δα_l = −α_l` counted); this is the same algebra with
//! the bias as one more margin "pattern": `A = [[k_M, 1], [1ᵀ, 0]]`, `a_l = [k_{M,l}; 1]`, and
//! the partitioned-inverse identity of eq. 17.29 holds for the bordered matrix. Only `A`
//! (`|M| + 1` square) is factored: `O(|M|³ + |M|²|B|)`.
//!
//! **Exact LOO** refits on the N − 1 other examples from the full solution with `α_l`
//! removed (and, with a bias, `y_l α_l` moved onto other α to keep `Σ y α = 0`), in parallel
//! over l with rayon. Removing a non-SV leaves the KKT conditions of the others satisfied, so
//! only support vectors are refitted (the rest keep the full solution, exactly).

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::{DenseRows, InputRows, KernelRows, SvmConfig, SvmFit};
use crate::error::{Error, Result};
use crate::inference::ConvergenceStatus;
use crate::kernel::Kernel;
use crate::linalg::{self, Lu};
use crate::loo::LooClassification;
use crate::memory::try_zeros;

fn check_fit(fit: &SvmFit, y: &[f64], n: usize) -> Result<()> {
    if y.len() != fit.alpha.len() || n != y.len() {
        return Err(Error::ShapeMismatch {
            what: "labels/kernel for the SVM leave-one-out",
            expected: format!("{} examples", fit.alpha.len()),
            found: format!("{} labels, {} kernel rows", y.len(), n),
        });
    }
    Ok(())
}

/// The linear-response LOO margins `y_l f_l^{\l}` (module doc) from a fit and its kernel rows
/// (`rows` must be the kernel the fit was trained with, including the slack's v).
pub fn svm_loo_margins(fit: &SvmFit, rows: &dyn KernelRows, y: &[f64]) -> Result<Vec<f64>> {
    check_fit(fit, y, rows.n())?;
    ResponseSystem::solve(fit, rows)?.margins(fit, rows)
}

/// The linear response's solved system (module doc): `A⁻¹` and, for the bound SVs, the
/// columns `a_l` and `A⁻¹a_l`. Without margin SVs and bias all are empty (`dim = 0`): removing
/// a bound SV then changes only its own term.
struct ResponseSystem {
    /// `A⁻¹` (`dim × dim`).
    a_inv: Mat<f64>,
    /// `a_l` of the bound SVs, as columns.
    bound_cols: Mat<f64>,
    /// `A⁻¹a_l` of the bound SVs, as columns.
    bound_solved: Mat<f64>,
}

impl ResponseSystem {
    /// One factor of the bordered system: `O(|M|³ + |M|²|B|)`.
    fn solve(fit: &SvmFit, rows: &dyn KernelRows) -> Result<Self> {
        let (a, bound_cols) = bordered_system(fit, rows)?;
        if a.nrows() == 0 {
            let bound_solved = linalg::try_clone(bound_cols.as_ref(), "A⁻¹a_l")?;
            return Ok(Self {
                a_inv: a,
                bound_cols,
                bound_solved,
            });
        }
        let lu = Lu::factor(a, "the margin support vectors' kernel matrix")?;
        let bound_solved = lu.solve(
            bound_cols.as_ref(),
            "A⁻¹ times the bound support vectors' columns",
        )?;
        let a_inv = lu.inverse("the inverse of the margin support vectors' kernel matrix")?;
        Ok(Self {
            a_inv,
            bound_cols,
            bound_solved,
        })
    }

    /// The margins `y_l f_l^{\l}` of every example (eqs. 17.29, 17.31; module doc).
    fn margins(&self, fit: &SvmFit, rows: &dyn KernelRows) -> Result<Vec<f64>> {
        let mut margins = fit.margins.clone();
        for (p, &l) in fit.sets.margin_sv.iter().enumerate() {
            margins[l] -= fit.alpha[l] / self.a_inv[(p, p)]; // eq. 17.29
        }
        let dim = self.a_inv.nrows();
        for (q, &l) in fit.sets.bound_sv.iter().enumerate() {
            let quad: f64 = (0..dim)
                .map(|p| self.bound_cols[(p, q)] * self.bound_solved[(p, q)])
                .sum();
            margins[l] += fit.alpha[l] * (quad - rows.diag(l)); // eq. 17.31
        }
        if let Some(i) = margins.iter().position(|v| !v.is_finite()) {
            return Err(Error::Numerical {
                what: "SVM linear-response LOO",
                message: format!(
                    "non-finite LOO margin at example {i} (singular margin-SV kernel matrix)"
                ),
            });
        }
        Ok(margins)
    }
}

/// The bordered system of the linear response (module doc): `A = k_M` over the margin SVs
/// (bordered by the bias) and the columns `a_l` of the bound SVs, from the fit's kernel rows.
fn bordered_system(fit: &SvmFit, rows: &dyn KernelRows) -> Result<(Mat<f64>, Mat<f64>)> {
    let m_set = &fit.sets.margin_sv;
    let b_set = &fit.sets.bound_sv;
    let m = m_set.len();
    let dim = m + usize::from(fit.bias);
    let mut a = try_zeros(dim, dim, "the margin support vectors' kernel matrix")?;
    let mut rhs = try_zeros(dim, b_set.len(), "the bound support vectors' columns")?;
    let mut r = vec![0.0; m];
    let mut rb = vec![0.0; b_set.len()];
    for (p, &i) in m_set.iter().enumerate() {
        rows.fill_row(i, m_set, &mut r);
        for q in 0..m {
            a[(p, q)] = r[q];
        }
        rows.fill_row(i, b_set, &mut rb);
        for q in 0..b_set.len() {
            rhs[(p, q)] = rb[q];
        }
    }
    if fit.bias {
        for p in 0..m {
            a[(p, m)] = 1.0;
            a[(m, p)] = 1.0;
        }
        for q in 0..b_set.len() {
            rhs[(m, q)] = 1.0;
        }
    }
    Ok((a, rhs))
}

/// The linear-response leave-one-out decision functions at any input: eqs. 17.29 and 17.31
/// read at a new x instead of at `x_l`, under the same assumption (no other example changes
/// its Kuhn–Tucker group). With `ã(x) = [k_M(x); 1]` (the 1 with a bias):
///
/// - non-SV l: `f^{\l}(x) = f(x)`;
/// - margin SV l (position p in M): `f^{\l}(x) = f(x) − y_l α_l [A⁻¹ã(x)]_p / [A⁻¹]_pp`, the
///   partitioned inverse of eq. 17.29 (`k(x, x_l) − ã_{M∖l}(x)ᵀA_{M∖l}⁻¹a_{M∖l,l}`);
/// - bound SV l: `f^{\l}(x) = f(x) − y_l α_l (k(x, x_l) − ã(x)ᵀA⁻¹a_l)` (eq. 17.31).
///
/// `f` includes the bias, and `f^{\l}` the bias's own response. At `x = x_l` these are the
/// margins of [`svm_loo_margins`] (`y_l f^{\l}(x_l)`), the slack's v included there.
pub struct SvmLooFunctions {
    fit: SvmFit,
    kernel: Kernel,
    x: Mat<f64>,
    y: Vec<f64>,
    /// The bordered system, solved once for the functions and the training margins.
    system: ResponseSystem,
}

impl SvmLooFunctions {
    /// The leave-one-out functions of `fit`, trained with `kernel` on `(x, y)`: one factor of
    /// the bordered system, `O(|M|³ + |M|²|B|)`.
    pub fn new(fit: SvmFit, kernel: Kernel, x: Mat<f64>, y: Vec<f64>) -> Result<Self> {
        super::check_shapes(x.as_ref(), &y)?;
        let rows = InputRows::new(&kernel, x.as_ref(), fit.slack.diagonal_shift())?;
        check_fit(&fit, &y, rows.n())?;
        let system = ResponseSystem::solve(&fit, &rows)?;
        drop(rows);
        Ok(Self {
            fit,
            kernel,
            x,
            y,
            system,
        })
    }

    /// The fit whose leave-one-out functions these are.
    pub fn fit(&self) -> &SvmFit {
        &self.fit
    }

    /// The linear-response margins `y_l f^{\l}(x_l)` at the training inputs
    /// ([`svm_loo_margins`], from the system already solved).
    pub fn training_margins(&self) -> Result<Vec<f64>> {
        let rows = InputRows::new(
            &self.kernel,
            self.x.as_ref(),
            self.fit.slack.diagonal_shift(),
        )?;
        self.system.margins(&self.fit, &rows)
    }

    /// `f^{\l}(x_j) − f(x_j)` for every training example l (row) and input `x_j` of `xs`
    /// (column): 0 for the non-SVs.
    pub fn shifts(&self, xs: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let (m_set, b_set) = (&self.fit.sets.margin_sv, &self.fit.sets.bound_sv);
        let (m, nb) = (m_set.len(), xs.nrows());
        let dim = self.system.a_inv.nrows();
        let mut out = try_zeros(self.y.len(), nb, "the SVM's leave-one-out shifts")?;
        let k_m = self.kernel.cross(
            crate::linalg::select_rows(self.x.as_ref(), m_set).as_ref(),
            xs,
        )?;
        let mut a_x = try_zeros(dim, nb, "the margin support vectors' kernel at the inputs")?;
        for j in 0..nb {
            for p in 0..m {
                a_x[(p, j)] = k_m[(p, j)];
            }
            if self.fit.bias {
                a_x[(m, j)] = 1.0;
            }
        }
        let g = &self.system.a_inv * &a_x;
        let strength = |l: usize| self.y[l] * self.fit.alpha[l];
        for (p, &l) in m_set.iter().enumerate() {
            let scale = strength(l) / self.system.a_inv[(p, p)];
            for j in 0..nb {
                out[(l, j)] = -scale * g[(p, j)]; // eq. 17.29 at x_j
            }
        }
        if !b_set.is_empty() {
            let k_b = self.kernel.cross(
                crate::linalg::select_rows(self.x.as_ref(), b_set).as_ref(),
                xs,
            )?;
            for (q, &l) in b_set.iter().enumerate() {
                for j in 0..nb {
                    let quad: f64 = (0..dim)
                        .map(|r| a_x[(r, j)] * self.system.bound_solved[(r, q)])
                        .sum();
                    out[(l, j)] = -strength(l) * (k_b[(q, j)] - quad); // eq. 17.31 at x_j
                }
            }
        }
        Ok(out)
    }
}

/// Linear-response leave-one-out error of an SVM (seed 001 eqs. 17.26–17.32) trained with
/// `kernel` on `(x, y)`.
pub fn svm_loo(
    fit: &SvmFit,
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<LooClassification> {
    super::check_shapes(x, y)?;
    let rows = InputRows::new(kernel, x, fit.slack.diagonal_shift())?;
    Ok(LooClassification::from_margins(
        svm_loo_margins(fit, &rows, y)?,
        0,
    ))
}

/// The full solution without example l, made feasible for the N − 1 problem: with a bias,
/// `y_l α_l` is moved onto the others (raising same-label α below C, else lowering
/// opposite-label α; free ones first) so that `Σ y α = 0` holds again.
pub fn warm_start_without(alpha: &[f64], y: &[f64], l: usize, c: f64, bias: bool) -> Vec<f64> {
    let mut a: Vec<f64> = alpha.to_vec();
    let mut rest = a[l];
    a[l] = 0.0;
    if bias {
        let order: Vec<usize> = (0..a.len())
            .filter(|&j| j != l && a[j] > 0.0 && a[j] < c)
            .chain((0..a.len()).filter(|&j| j != l && !(a[j] > 0.0 && a[j] < c)))
            .collect();
        for j in order {
            if rest <= 0.0 {
                break;
            }
            let room = if y[j] == y[l] { c - a[j] } else { a[j] };
            let t = rest.min(room);
            a[j] += if y[j] == y[l] { t } else { -t };
            rest -= t;
        }
    }
    a.remove(l);
    a
}

/// Exact LOO by refits, with per-example detail.
#[derive(Clone, Debug, PartialEq)]
pub struct SvmExactLoo {
    /// Margins, error count, refits that hit their budget.
    pub loo: LooClassification,
    /// For each l, how many other examples changed Kuhn–Tucker group in the refit (0 for
    /// non-SVs, which are not refitted): where it is 0 the linear response is exact.
    pub group_changes: Vec<usize>,
    /// Total SMO/Adatron iterations over all refits.
    pub iterations: usize,
}

fn group(a: f64, c: f64) -> u8 {
    if a <= 0.0 {
        0
    } else if a >= c {
        2
    } else {
        1
    }
}

/// Exact leave-one-out of an SVM by warm-started refits (parallel over examples) on the
/// noise-free Gram matrix `gram = K(x, x)` (the slack's v is added inside); `fit` is the
/// full-data solution with the same `cfg`.
pub fn svm_exact_loo_gram(
    gram: MatRef<'_, f64>,
    y: &[f64],
    cfg: &SvmConfig,
    fit: &SvmFit,
) -> Result<SvmExactLoo> {
    cfg.validate()?;
    check_fit(fit, y, gram.nrows())?;
    let n = y.len();
    let c = cfg.slack.upper();
    let v = cfg.slack.diagonal_shift();
    type Refit = (f64, usize, bool, usize);
    let per: Vec<Result<Refit>> = (0..n)
        .into_par_iter()
        .map(|l| {
            if fit.alpha[l] <= 0.0 {
                return Ok((fit.margins[l], 0, false, 0));
            }
            let idx: Vec<usize> = (0..n).filter(|&j| j != l).collect();
            let yt: Vec<f64> = idx.iter().map(|&j| y[j]).collect();
            let rows = DenseRows::subset(gram, v, &idx);
            let a0 = warm_start_without(&fit.alpha, y, l, c, cfg.bias);
            let f = super::solve(&rows, &yt, cfg, Some(&a0))?;
            let pred: f64 = idx
                .iter()
                .enumerate()
                .map(|(t, &j)| gram[(l, j)] * yt[t] * f.alpha[t])
                .sum::<f64>()
                + f.b;
            let changes = idx
                .iter()
                .enumerate()
                .filter(|&(t, &j)| group(f.alpha[t], c) != group(fit.alpha[j], c))
                .count();
            let unconverged = f.report.status == ConvergenceStatus::MaxIterations;
            Ok((y[l] * pred, changes, unconverged, f.report.iterations))
        })
        .collect();
    let per: Vec<Refit> = per.into_iter().collect::<Result<_>>()?;
    let margins = per.iter().map(|p| p.0).collect();
    let not_converged = per.iter().filter(|p| p.2).count();
    Ok(SvmExactLoo {
        loo: LooClassification::from_margins(margins, not_converged),
        group_changes: per.iter().map(|p| p.1).collect(),
        iterations: per.iter().map(|p| p.3).sum(),
    })
}

/// Exact leave-one-out of an SVM trained with `kernel` on `(x, y)` (builds `K`, then
/// [`svm_exact_loo_gram`]).
pub fn svm_exact_loo(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &SvmConfig,
    fit: &SvmFit,
) -> Result<LooClassification> {
    super::check_shapes(x, y)?;
    kernel.check_input_dim(x.ncols())?;
    let gram = kernel.gram(x)?;
    Ok(svm_exact_loo_gram(gram.as_ref(), y, cfg, fit)?.loo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `k(i, j) = 2 δ_ij`: a margin-SV matrix that is cheap to fill and non-singular.
    struct TwiceIdentity(usize);

    impl KernelRows for TwiceIdentity {
        fn n(&self) -> usize {
            self.0
        }
        fn diag(&self, _: usize) -> f64 {
            2.0
        }
        fn fill_row(&self, i: usize, cols: &[usize], out: &mut [f64]) {
            for (o, &j) in out.iter_mut().zip(cols) {
                *o = if i == j { 2.0 } else { 0.0 };
            }
        }
    }

    /// The linear-response LOO of an SVM whose `A⁻¹` cannot be had is [`Error::OutOfMemory`]
    /// from [`Lu::inverse`], not an abort: with "available" set to the bytes of `A` (2900
    /// square, above the unchecked size), `A` and the inverse's own `n × n` are allowed and
    /// faer's (padded) work space for it is refused. With the machine's memory it succeeds,
    /// and `A = [[2I, 1], [1ᵀ, 0]]` gives the closed-form margins below.
    #[test]
    fn a_margin_sv_inverse_that_does_not_fit_is_a_typed_error() {
        let m = 2899;
        let y: Vec<f64> = (0..m)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let x = faer::Mat::from_fn(4, 1, |i, _| i as f64);
        let mut fit = super::super::svm(
            &Kernel::se_iso(1.0, 1.0),
            x.as_ref(),
            &[1.0, -1.0, 1.0, -1.0],
            &SvmConfig::default(),
        )
        .unwrap();
        fit.alpha = vec![0.5; m];
        fit.margins = vec![1.0; m];
        fit.bias = true;
        fit.sets = super::super::SupportVectorSets {
            non_sv: Vec::new(),
            margin_sv: (0..m).collect(),
            bound_sv: Vec::new(),
        };
        let rows = TwiceIdentity(m);
        let dim = m + 1;
        let bytes = crate::memory::matrices_bytes(1, dim, dim).unwrap();
        let got = crate::memory::with_available_memory(bytes, || svm_loo_margins(&fit, &rows, &y));
        match got {
            Err(Error::OutOfMemory {
                what,
                rows,
                bytes: Some(b),
                ..
            }) => {
                assert_eq!(
                    what,
                    "the inverse of the margin support vectors' kernel matrix"
                );
                assert!(rows == dim && b > bytes);
            }
            other => panic!("{other:?}"),
        }
        // A⁻¹'s top-left block is (2I)⁻¹ − (2I)⁻¹1 s⁻¹ 1ᵀ(2I)⁻¹ with s = −m/2, so
        // [A⁻¹]_ll = ½ − 1/(2m) and y_l f_l^{\l} = 1 − α_l/[A⁻¹]_ll.
        let margins = svm_loo_margins(&fit, &rows, &y).unwrap();
        let expect = 1.0 - 0.5 / (0.5 - 0.5 / m as f64);
        assert!(margins.iter().all(|v| (v - expect).abs() < 1e-12));
    }
}
