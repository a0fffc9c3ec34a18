//! Dense linear algebra over faer: a Cholesky factor that escalates jitter and reports
//! it, log-determinants, triangular and SPD solves, and the diagonal of an inverse.
//!
//! Every GP computation in the crate goes through [`Cholesky`]; no explicit inverse is
//! formed where a solve does.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{self, LltRegularization};
use faer::linalg::triangular_solve;
use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut, MatRef, Par};
use rayon::prelude::*;

use crate::error::{Error, Result};

pub mod scratch;

/// Matrices at least this large are factored and multiplied with rayon threads.
pub const PAR_THRESHOLD: usize = 512;

/// The parallelism to use for an `n × n` dense operation.
pub fn par_for(n: usize) -> Par {
    if n >= PAR_THRESHOLD {
        Par::rayon(0)
    } else {
        Par::Seq
    }
}

/// The parallelism for a triangular solve of order `n` with `ncols` right-hand sides: a single
/// column is solved sequentially, because faer's parallel matrix-vector update splits the
/// inner dimension by thread count and would round differently on one thread or many.
fn solve_par(n: usize, ncols: usize) -> Par {
    if ncols < 2 {
        Par::Seq
    } else {
        par_for(n.max(ncols))
    }
}

/// How much diagonal jitter to try when a Cholesky fails (GPyTorch / GPflow style).
///
/// The first attempt uses no jitter. Attempt `k ≥ 1` adds
/// `initial · factor^(k−1) · mean(diag A)` to the diagonal, up to `max_tries` attempts.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JitterPolicy {
    /// First jitter, relative to the mean diagonal entry.
    pub initial: f64,
    /// Growth factor between attempts.
    pub factor: f64,
    /// Number of jittered attempts after the plain one.
    pub max_tries: usize,
}

impl Default for JitterPolicy {
    /// 1e-10, 1e-9, …, 1e-4 times the mean diagonal (seven attempts).
    fn default() -> Self {
        Self {
            initial: 1e-10,
            factor: 10.0,
            max_tries: 7,
        }
    }
}

impl JitterPolicy {
    /// A policy that never adds jitter.
    pub fn none() -> Self {
        Self {
            initial: 0.0,
            factor: 1.0,
            max_tries: 0,
        }
    }
}

/// Lower Cholesky factor `L Lᵀ = A + jitter·I`, with the jitter that was needed.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "CholeskyRepr", into = "CholeskyRepr")]
pub struct Cholesky {
    l: Mat<f64>,
    jitter: f64,
}

/// Zero the strict upper triangle, so that a stored factor is `L` as a plain matrix on every
/// path (factorisation, wrapping, loading).
fn clear_upper(l: &mut Mat<f64>) {
    for j in 1..l.ncols() {
        for i in 0..j.min(l.nrows()) {
            l[(i, j)] = 0.0;
        }
    }
}

/// Factor `l` (lower triangle read) in place; `Err(pivot)` if it is not positive definite.
fn factor_in_place(l: &mut Mat<f64>) -> std::result::Result<(), usize> {
    let n = l.nrows();
    let par = par_for(n);
    let mut buf = MemBuffer::new(factor::cholesky_in_place_scratch::<f64>(
        n,
        par,
        Default::default(),
    ));
    let stack = MemStack::new(&mut buf);
    match factor::cholesky_in_place(
        l.as_mut(),
        LltRegularization::default(),
        par,
        stack,
        Default::default(),
    ) {
        Ok(_) => {
            // faer may use the strict upper triangle as workspace.
            clear_upper(l);
            Ok(())
        }
        Err(factor::LltError::NonPositivePivot { index }) => Err(index),
    }
}

/// The first non-finite entry of the lower triangle, as `(row, col)`.
fn first_non_finite_lower(a: MatRef<'_, f64>) -> Option<(usize, usize)> {
    (0..a.ncols()).find_map(|j| {
        (j..a.nrows())
            .find(|&i| !a[(i, j)].is_finite())
            .map(|i| (i, j))
    })
}

impl Cholesky {
    /// Factor the symmetric matrix `a` (only its lower triangle is read), adding jitter
    /// per `policy` if needed. `what` names the matrix in the error.
    pub fn factor(a: MatRef<'_, f64>, policy: &JitterPolicy, what: &'static str) -> Result<Self> {
        let n = a.nrows();
        if n != a.ncols() {
            return Err(Error::ShapeMismatch {
                what,
                expected: "a square matrix".into(),
                found: format!("{}×{}", a.nrows(), a.ncols()),
            });
        }
        Self::factor_filled(
            n,
            |mut l| {
                // Copy the lower triangle only; faer reads nothing else.
                for j in 0..n {
                    for i in j..n {
                        l[(i, j)] = a[(i, j)];
                    }
                }
            },
            None,
            policy,
            what,
        )
    }

    /// [`Cholesky::factor`] of `a + diag(d)` with `d_i = diag(i)` (a Gram matrix plus noise:
    /// `K + σ²I`, `K + Λ`), built in the factor's storage without a copy of `a`.
    pub fn factor_plus_diag(
        a: MatRef<'_, f64>,
        diag: impl Fn(usize) -> f64,
        policy: &JitterPolicy,
        what: &'static str,
    ) -> Result<Self> {
        let n = a.nrows();
        if n != a.ncols() {
            return Err(Error::ShapeMismatch {
                what,
                expected: "a square matrix".into(),
                found: format!("{}×{}", a.nrows(), a.ncols()),
            });
        }
        Self::factor_filled(
            n,
            |mut l| {
                for j in 0..n {
                    for i in j..n {
                        l[(i, j)] = a[(i, j)];
                    }
                    l[(j, j)] += diag(j);
                }
            },
            None,
            policy,
            what,
        )
    }

    /// [`Cholesky::factor`] of the `n × n` matrix whose lower triangle `fill` writes, built
    /// and factored in `storage` (reused when it is `n × n`, e.g. from
    /// [`Cholesky::into_storage`]): no `n × n` temporary besides the factor itself, which
    /// matters in loops that refactor a matrix of the same size (Newton, EP sweeps).
    /// `fill` is called again for every jittered attempt.
    pub fn factor_filled(
        n: usize,
        fill: impl Fn(MatMut<'_, f64>),
        storage: Option<Mat<f64>>,
        policy: &JitterPolicy,
        what: &'static str,
    ) -> Result<Self> {
        let mut l = match storage {
            Some(m) if m.nrows() == n && m.ncols() == n => m,
            _ => Mat::<f64>::zeros(n, n),
        };
        fill(l.as_mut());
        if let Some((row, col)) = first_non_finite_lower(l.as_ref()) {
            return Err(Error::NonFinite { what, row, col });
        }
        let mean_diag = if n == 0 {
            1.0
        } else {
            (0..n).map(|i| l[(i, i)].abs()).sum::<f64>() / n as f64
        };
        let scale = if mean_diag > 0.0 { mean_diag } else { 1.0 };
        let mut jitter = 0.0;
        let mut last_pivot = 0;
        for attempt in 0..=policy.max_tries {
            if attempt > 0 {
                jitter = policy.initial * policy.factor.powi(attempt as i32 - 1) * scale;
                fill(l.as_mut());
                for i in 0..n {
                    l[(i, i)] += jitter;
                }
            }
            match factor_in_place(&mut l) {
                Ok(()) => return Ok(Self { l, jitter }),
                Err(p) => last_pivot = p,
            }
        }
        Err(Error::NotPositiveDefinite {
            what,
            pivot: last_pivot,
            jitter_tried: jitter,
        })
    }

    /// The factor's `n × n` storage, for reuse by [`Cholesky::factor_filled`].
    pub fn into_storage(self) -> Mat<f64> {
        self.l
    }

    /// Wrap an already computed lower factor (its strict upper triangle is ignored).
    pub fn from_lower(mut l: Mat<f64>, jitter: f64) -> Self {
        debug_assert_eq!(l.nrows(), l.ncols());
        clear_upper(&mut l);
        Self { l, jitter }
    }

    /// The lower-triangular factor `L` (its strict upper triangle is zero).
    pub fn l(&self) -> MatRef<'_, f64> {
        self.l.as_ref()
    }

    /// Diagonal jitter that was added before the factorisation succeeded (0 if none).
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// Dimension `n`.
    pub fn dim(&self) -> usize {
        self.l.nrows()
    }

    /// `ln det(A + jitter·I) = 2 Σ ln L_ii`.
    pub fn ln_det(&self) -> f64 {
        2.0 * (0..self.dim()).map(|i| self.l[(i, i)].ln()).sum::<f64>()
    }

    /// `B ← L⁻¹ B`.
    pub fn solve_lower_in_place(&self, rhs: MatMut<'_, f64>) {
        let par = solve_par(self.dim(), rhs.ncols());
        triangular_solve::solve_lower_triangular_in_place(self.l.as_ref(), rhs, par);
    }

    /// `B ← L⁻ᵀ B`.
    pub fn solve_upper_in_place(&self, rhs: MatMut<'_, f64>) {
        let par = solve_par(self.dim(), rhs.ncols());
        triangular_solve::solve_upper_triangular_in_place(self.l.transpose(), rhs, par);
    }

    /// `B ← L⁻¹ B` on the calling thread (for tasks that are already parallel, e.g. row blocks).
    pub fn solve_lower_in_place_seq(&self, rhs: MatMut<'_, f64>) {
        triangular_solve::solve_lower_triangular_in_place(self.l.as_ref(), rhs, Par::Seq);
    }

    /// `B ← L⁻ᵀ B` on the calling thread.
    pub fn solve_upper_in_place_seq(&self, rhs: MatMut<'_, f64>) {
        triangular_solve::solve_upper_triangular_in_place(self.l.transpose(), rhs, Par::Seq);
    }

    /// `B ← A⁻¹ B`.
    pub fn solve_in_place(&self, mut rhs: MatMut<'_, f64>) {
        self.solve_lower_in_place(rhs.rb_mut());
        self.solve_upper_in_place(rhs);
    }

    /// `A⁻¹ B`.
    pub fn solve(&self, rhs: MatRef<'_, f64>) -> Mat<f64> {
        let mut x = rhs.to_owned();
        self.solve_in_place(x.as_mut());
        x
    }

    /// `A⁻¹ b` for a vector.
    pub fn solve_vec(&self, b: &[f64]) -> Vec<f64> {
        let mut x = col_from_slice(b);
        self.solve_in_place(x.as_mut());
        col_to_vec(x.as_ref())
    }

    /// `L⁻¹ b` for a vector.
    pub fn solve_lower_vec(&self, b: &[f64]) -> Vec<f64> {
        let mut x = col_from_slice(b);
        self.solve_lower_in_place(x.as_mut());
        col_to_vec(x.as_ref())
    }

    /// `L⁻ᵀ b` for a vector.
    pub fn solve_upper_vec(&self, b: &[f64]) -> Vec<f64> {
        let mut x = col_from_slice(b);
        self.solve_upper_in_place(x.as_mut());
        col_to_vec(x.as_ref())
    }

    /// `L⁻¹` (lower triangular, `n³/3` flops).
    pub fn l_inverse(&self) -> Mat<f64> {
        self.l_inverse_in(None)
    }

    /// [`Cholesky::l_inverse`] written into `storage` when it has the right shape (a loop
    /// that inverts a factor per iteration then reuses one buffer instead of fresh pages).
    pub fn l_inverse_in(&self, storage: Option<Mat<f64>>) -> Mat<f64> {
        let n = self.dim();
        let mut inv = match storage {
            Some(m) if m.nrows() == n && m.ncols() == n => m,
            _ => Mat::<f64>::zeros(n, n),
        };
        faer::linalg::triangular_inverse::invert_lower_triangular(
            inv.as_mut(),
            self.l.as_ref(),
            par_for(n),
        );
        // faer writes the lower triangle only: clear what a reused buffer held above it.
        clear_upper(&mut inv);
        inv
    }

    /// The full inverse `A⁻¹ = L⁻ᵀ L⁻¹` (use only where the whole matrix is needed,
    /// e.g. the NLML gradient's `tr((ααᵀ − K⁻¹) ∂K)`); `2n³/3` flops.
    pub fn inverse(&self) -> Mat<f64> {
        inverse_from_l_inverse(&self.l_inverse())
    }

    /// `diag(A⁻¹)_i = ‖L⁻¹ e_i‖²` computed as the column norms of `L⁻¹`... by rows:
    /// `[A⁻¹]_ii = Σ_k (L⁻¹)_{ki}²`.
    pub fn inverse_diag(&self) -> Vec<f64> {
        let linv = self.l_inverse();
        let n = self.dim();
        (0..n)
            .map(|i| (i..n).map(|k| linv[(k, i)] * linv[(k, i)]).sum())
            .collect()
    }

    /// `tr(A⁻¹) = ‖L⁻¹‖_F²`.
    pub fn inverse_trace(&self) -> f64 {
        let linv = self.l_inverse();
        let n = self.dim();
        let mut s = 0.0;
        for j in 0..n {
            for i in j..n {
                s += linv[(i, j)] * linv[(i, j)];
            }
        }
        s
    }
}

/// Writes the lower triangle of the site form's `B = I + diag(s) K diag(s) + shift·I`,
/// columns in parallel (for [`Cholesky::factor_filled`]).
pub fn fill_site_b<'a>(k: &'a Mat<f64>, s: &'a [f64], shift: f64) -> impl Fn(MatMut<'_, f64>) + 'a {
    move |b: MatMut<'_, f64>| {
        let n = s.len();
        b.par_col_iter_mut().enumerate().for_each(|(j, col)| {
            let col = col
                .try_as_col_major_mut()
                .expect("an owned matrix has contiguous columns")
                .as_slice_mut();
            let kc = k.col_as_slice(j);
            for i in j..n {
                col[i] = s[i] * kc[i] * s[j];
            }
            col[j] += 1.0 + shift;
        })
    }
}

/// `A⁻¹ = L⁻ᵀL⁻¹` from `L⁻¹` (lower triangular, e.g. [`Cholesky::l_inverse`]) by one
/// triangular product (`n³/3` flops), symmetric.
pub fn inverse_from_l_inverse(l_inv: &Mat<f64>) -> Mat<f64> {
    use faer::linalg::matmul::triangular::{matmul, BlockStructure};
    let n = l_inv.nrows();
    let mut out = Mat::<f64>::zeros(n, n);
    matmul(
        out.as_mut(),
        BlockStructure::TriangularLower,
        faer::Accum::Replace,
        l_inv.transpose(),
        BlockStructure::TriangularUpper,
        l_inv.as_ref(),
        BlockStructure::TriangularLower,
        1.0,
        par_for(n),
    );
    for j in 0..n {
        for i in 0..j {
            out[(i, j)] = out[(j, i)];
        }
    }
    out
}

/// A single-column matrix from a slice.
pub fn col_from_slice(b: &[f64]) -> Mat<f64> {
    Mat::from_fn(b.len(), 1, |i, _| b[i])
}

/// The first column of a matrix as a `Vec`.
pub fn col_to_vec(m: MatRef<'_, f64>) -> Vec<f64> {
    (0..m.nrows()).map(|i| m[(i, 0)]).collect()
}

/// Dot product of two slices.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `tr(A B)` for square `A`, `B` of the same size, without forming the product.
pub fn trace_of_product(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let n = a.nrows();
    let mut s = 0.0;
    for j in 0..n {
        for i in 0..n {
            s += a[(i, j)] * b[(j, i)];
        }
    }
    s
}

/// Column `j` of an owned matrix as a contiguous slice (faer stores columns contiguously).
pub fn col(a: &Mat<f64>, j: usize) -> &[f64] {
    a.col_as_slice(j)
}

/// `Σ_k a_kj b_kj` for every column j (the diagonal of `AᵀB`), parallel over columns.
pub fn col_dots(a: &Mat<f64>, b: &Mat<f64>) -> Vec<f64> {
    debug_assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    (0..a.ncols())
        .into_par_iter()
        .map(|j| dot(col(a, j), col(b, j)))
        .collect()
}

/// Indices handed to one task by [`ordered_par_sum`]; fixed (not derived from the thread
/// count) so that every sum is rounded the same way on one thread or many.
pub const SUM_CHUNK: usize = 16;

/// `Σ_{j<n} f(j)` of `p`-vectors, parallel over fixed chunks of [`SUM_CHUNK`] indices: `add(j,
/// acc)` adds term j into its chunk's partial sum, and the partials are combined in index
/// order, so the result is bit-identical whatever the thread count (unlike rayon's
/// `fold`/`reduce`, whose splits follow the scheduling).
pub fn ordered_par_sum(n: usize, p: usize, add: impl Fn(usize, &mut [f64]) + Sync) -> Vec<f64> {
    let partials: Vec<Vec<f64>> = (0..n.div_ceil(SUM_CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut acc = vec![0.0; p];
            for j in c * SUM_CHUNK..((c + 1) * SUM_CHUNK).min(n) {
                add(j, &mut acc);
            }
            acc
        })
        .collect();
    let mut total = vec![0.0; p];
    for part in &partials {
        for (t, v) in total.iter_mut().zip(part) {
            *t += v;
        }
    }
    total
}

/// `‖a_{:,j}‖²` for every column j, parallel over columns.
pub fn col_sq_norms(a: &Mat<f64>) -> Vec<f64> {
    (0..a.ncols())
        .into_par_iter()
        .map(|j| col(a, j).iter().map(|v| v * v).sum())
        .collect()
}

/// `A ← A diag(w)`: column j scaled by `w_j`, in parallel.
pub fn scale_cols(a: &mut Mat<f64>, w: &[f64]) {
    debug_assert_eq!(a.ncols(), w.len());
    a.par_col_iter_mut().zip(w).for_each(|(c, wj)| {
        for v in c.try_as_col_major_mut().unwrap().as_slice_mut() {
            *v *= wj;
        }
    });
}

/// Rows of `A x` computed by one task in [`mat_vec_ref`] (fixed, not from the thread count).
const MAT_VEC_ROWS: usize = 256;

/// `A x` for an M×N matrix and an N-vector.
pub fn mat_vec(a: &Mat<f64>, x: &[f64]) -> Vec<f64> {
    mat_vec_ref(a.as_ref(), x)
}

/// `A x` for a borrowed M×N matrix, parallel over fixed blocks of rows, each a sequential
/// product: faer's own parallel matrix-vector product splits the inner dimension by thread
/// count, so its rounding (and every fit built on it) would depend on `--threads`.
pub fn mat_vec_ref(a: MatRef<'_, f64>, x: &[f64]) -> Vec<f64> {
    debug_assert_eq!(a.ncols(), x.len());
    let mut y = vec![0.0; a.nrows()];
    let xc = faer::ColRef::from_slice(x);
    y.par_chunks_mut(MAT_VEC_ROWS)
        .enumerate()
        .for_each(|(b, yb)| {
            let rows = a.subrows(b * MAT_VEC_ROWS, yb.len());
            let dst = faer::ColMut::from_slice_mut(yb);
            faer::linalg::matmul::matmul(
                dst.as_mat_mut(),
                faer::Accum::Replace,
                rows,
                xc.as_mat(),
                1.0,
                Par::Seq,
            );
        });
    y
}

/// `Aᵀ x` for an M×N matrix and an M-vector (one dot product per column, in parallel).
pub fn mat_t_vec(a: &Mat<f64>, x: &[f64]) -> Vec<f64> {
    (0..a.ncols())
        .into_par_iter()
        .map(|j| dot(col(a, j), x))
        .collect()
}

/// `A diag(w) Aᵀ` (M×M, symmetric) for an M×N matrix `A`, by one dense product (faer's
/// triangular-output product measured slower than the full one at M = 500, N ≥ 8000).
/// Sequential below [`PAR_THRESHOLD`] (see [`par_for`]): faer's AVX-512 kernels leave the
/// rayon workers' upper vector state dirty, and every libm `exp` a worker runs afterwards
/// (kernel matrices, their adjoints) became ~10× slower — full PAC-GP on boston (N = 506)
/// took 1.6× longer with two threads than with one.
pub fn weighted_gram(a: &Mat<f64>, w: &[f64]) -> Mat<f64> {
    let m = a.nrows();
    let mut aw = a.clone();
    scale_cols(&mut aw, w);
    let mut out = Mat::<f64>::zeros(m, m);
    faer::linalg::matmul::matmul(
        out.as_mut(),
        faer::Accum::Replace,
        aw.as_ref(),
        a.transpose(),
        1.0,
        par_for(m.max(a.ncols())),
    );
    // Exactly symmetric (the product's rounding differs between the two triangles).
    for j in 0..m {
        for i in 0..j {
            out[(i, j)] = out[(j, i)];
        }
    }
    out
}

/// Inner-dimension columns per call in [`syrk_lower_add`]: faer's triangular-output product
/// ran at ~75 GFLOP/s on one core with ≤ 256, ~55 with 2048 (M = 500, this project's machine).
const SYRK_CHUNK: usize = 256;

/// `out ← out + A diag(w) Aᵀ` on the lower triangle only (`w = 1` if `None`), for an M×K `A`,
/// on the calling thread: half the flops of the full product, in fixed chunks of
/// [`SYRK_CHUNK`] columns (the same rounding on any thread count).
pub fn syrk_lower_add(mut out: MatMut<'_, f64>, a: MatRef<'_, f64>, w: Option<&[f64]>) {
    use faer::linalg::matmul::triangular::{matmul, BlockStructure};
    let (m, k) = (a.nrows(), a.ncols());
    let mut aw = scratch::scratch(m, SYRK_CHUNK.min(k));
    for c0 in (0..k).step_by(SYRK_CHUNK) {
        let width = SYRK_CHUNK.min(k - c0);
        let chunk = a.subcols(c0, width);
        let lhs = match w {
            None => chunk,
            Some(w) => {
                for j in 0..width {
                    let (src, wj) = (chunk.col(j), w[c0 + j]);
                    for (d, s) in aw.col_mut(j).iter_mut().zip(src.iter()) {
                        *d = s * wj;
                    }
                }
                aw.as_ref().subcols(0, width)
            }
        };
        matmul(
            out.rb_mut(),
            BlockStructure::TriangularLower,
            faer::Accum::Add,
            lhs,
            BlockStructure::Rectangular,
            chunk.transpose(),
            BlockStructure::Rectangular,
            1.0,
            Par::Seq,
        );
    }
    scratch::recycle(aw);
}

/// `A B` with [`par_for`]'s parallelism (sequential below [`PAR_THRESHOLD`]) instead of faer's
/// global setting: small products between the parallel passes then cost no fork-join, which
/// on a machine with a busy core waits for a descheduled worker.
pub fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(a.nrows(), b.ncols());
    faer::linalg::matmul::matmul(
        out.as_mut(),
        faer::Accum::Replace,
        a,
        b,
        1.0,
        par_for(a.nrows().max(b.ncols())),
    );
    out
}

/// Copy the strict lower triangle of a square matrix onto its upper triangle.
pub fn symmetrise_from_lower(a: &mut Mat<f64>) {
    for j in 0..a.ncols() {
        for i in 0..j {
            a[(i, j)] = a[(j, i)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(n: usize) -> Mat<f64> {
        let b = Mat::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4);
        let mut a = &b * b.transpose();
        for i in 0..n {
            a[(i, i)] += 1.0;
        }
        a
    }

    #[test]
    fn solve_and_inverse_agree_with_identity() {
        let a = spd(9);
        let c = Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "A").unwrap();
        assert_eq!(c.jitter(), 0.0);
        let inv = c.inverse();
        let prod = &a * &inv;
        for i in 0..9 {
            for j in 0..9 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((prod[(i, j)] - e).abs() < 1e-12);
            }
        }
        let d = c.inverse_diag();
        for i in 0..9 {
            assert!((d[i] - inv[(i, i)]).abs() < 1e-13);
        }
        assert!((c.inverse_trace() - d.iter().sum::<f64>()).abs() < 1e-12);
        // L⁻¹ written into a used buffer equals a fresh one, upper triangle zero included.
        let li = c.l_inverse();
        assert_eq!(c.l_inverse_in(Some(Mat::from_fn(9, 9, |_, _| 7.0))), li);
        assert_eq!(c.l_inverse_in(Some(Mat::zeros(3, 3))), li);
        let b: Vec<f64> = (0..9).map(|i| i as f64).collect();
        let x = c.solve_vec(&b);
        for i in 0..9 {
            let ax: f64 = (0..9).map(|j| a[(i, j)] * x[j]).sum();
            assert!((ax - b[i]).abs() < 1e-12);
        }
    }

    #[test]
    fn factor_is_lower_triangular_and_reproduces_a() {
        let a = spd(40);
        let c = Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "A").unwrap();
        let l = c.l();
        let llt = l * l.transpose();
        for j in 0..40 {
            for i in 0..40 {
                if i < j {
                    assert_eq!(l[(i, j)], 0.0);
                }
                assert!((llt[(i, j)] - a[(i, j)]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn weighted_gram_and_column_helpers_match_dense_products() {
        let a = Mat::from_fn(7, 30, |i, j| ((i * 5 + j * 11) % 13) as f64 / 13.0 - 0.5);
        let w: Vec<f64> = (0..30).map(|j| (j as f64 - 10.0) / 7.0).collect();
        let dense =
            &a * Mat::from_fn(30, 30, |i, j| if i == j { w[i] } else { 0.0 }) * a.transpose();
        let fast = weighted_gram(&a, &w);
        let b = Mat::from_fn(7, 30, |i, j| (i + j) as f64 / 9.0);
        let atb = a.transpose() * &b;
        let (dots, norms) = (col_dots(&a, &b), col_sq_norms(&a));
        let x: Vec<f64> = (0..30).map(|j| j as f64 / 30.0).collect();
        let xm: Vec<f64> = (0..7).map(|i| 1.0 - i as f64 / 7.0).collect();
        let (ax, atx) = (mat_vec(&a, &x), mat_t_vec(&a, &xm));
        for i in 0..7 {
            for j in 0..7 {
                assert!((fast[(i, j)] - dense[(i, j)]).abs() < 1e-12);
            }
            let e: f64 = (0..30).map(|j| a[(i, j)] * x[j]).sum();
            assert!((ax[i] - e).abs() < 1e-12);
        }
        for j in 0..30 {
            assert!((dots[j] - atb[(j, j)]).abs() < 1e-12);
            let n2: f64 = (0..7).map(|i| a[(i, j)] * a[(i, j)]).sum();
            assert!((norms[j] - n2).abs() < 1e-12);
            let e: f64 = (0..7).map(|i| a[(i, j)] * xm[i]).sum();
            assert!((atx[j] - e).abs() < 1e-12);
        }
    }

    /// The chunked lower-triangle product equals the dense `A diag(w) Aᵀ` (to rounding) with
    /// and without weights, across several chunks, and leaves the strict upper triangle alone.
    #[test]
    fn syrk_lower_add_matches_dense_product() {
        let (m, k) = (9, 2 * SYRK_CHUNK + 37);
        let a = Mat::from_fn(m, k, |i, j| ((i * 5 + j * 11) % 13) as f64 / 13.0 - 0.5);
        let w: Vec<f64> = (0..k).map(|j| (j as f64 - 200.0) / 97.0).collect();
        for weights in [None, Some(&w[..])] {
            let mut out = Mat::from_fn(m, m, |i, j| if i < j { 7.0 } else { 1.0 });
            syrk_lower_add(out.as_mut(), a.as_ref(), weights);
            for j in 0..m {
                for i in 0..m {
                    let dense: f64 = (0..k)
                        .map(|t| a[(i, t)] * a[(j, t)] * weights.map_or(1.0, |w| w[t]))
                        .sum();
                    if i < j {
                        assert_eq!(out[(i, j)], 7.0);
                    } else {
                        assert!((out[(i, j)] - 1.0 - dense).abs() < 1e-12 * k as f64);
                    }
                }
            }
            symmetrise_from_lower(&mut out);
            assert_eq!(out[(0, m - 1)], out[(m - 1, 0)]);
        }
    }

    #[test]
    fn ln_det_matches_product_of_eigen_free_2x2() {
        let a = Mat::from_fn(2, 2, |i, j| [[4.0, 1.0], [1.0, 3.0]][i][j]);
        let c = Cholesky::factor(a.as_ref(), &JitterPolicy::none(), "A").unwrap();
        assert!((c.ln_det() - 11f64.ln()).abs() < 1e-14);
    }

    #[test]
    fn singular_matrix_gets_jitter_reported() {
        // Rank one: ones(3,3).
        let a = Mat::from_fn(3, 3, |_, _| 1.0);
        let c = Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "ones").unwrap();
        assert!(c.jitter() > 0.0);
    }

    #[test]
    fn indefinite_matrix_is_a_typed_error() {
        let a = Mat::from_fn(2, 2, |i, j| if i == j { -1.0 } else { 0.0 });
        match Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "neg") {
            Err(Error::NotPositiveDefinite {
                what, jitter_tried, ..
            }) => {
                assert_eq!(what, "neg");
                assert!(jitter_tried > 0.0);
            }
            other => panic!("expected NotPositiveDefinite, got {other:?}"),
        }
    }

    #[test]
    fn nan_is_rejected() {
        let mut a = spd(3);
        a[(2, 1)] = f64::NAN;
        assert!(matches!(
            Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "A"),
            Err(Error::NonFinite { .. })
        ));
    }

    /// `f` on a rayon pool of `threads` threads, as `pacgp --threads` runs it.
    fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(f)
    }

    /// Deterministic reductions: the ordered sum equals the plain sequential chunked sum
    /// bit for bit, and A x, the single-column solves and the factor (sizes above both
    /// parallel thresholds) are the same bits on one, two and three threads; A x matches a
    /// naive loop to rounding.
    #[test]
    fn reductions_are_bit_identical_on_any_thread_count() {
        let n = 700;
        let terms: Vec<f64> = (0..n)
            .map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0)
            .collect();
        let sum = |_| {
            ordered_par_sum(n, 2, |j, acc| {
                acc[0] += terms[j];
                acc[1] += terms[j] * terms[j];
            })
        };
        let mut expect = [0.0; 2];
        for chunk in terms.chunks(SUM_CHUNK) {
            expect[0] += chunk.iter().sum::<f64>();
            expect[1] += chunk.iter().map(|t| t * t).sum::<f64>();
        }
        let a = spd(n);
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let run = |threads| {
            on_threads(threads, || {
                let c = Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "A").unwrap();
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                let mut out = bits(&sum(()));
                out.extend(bits(&mat_vec(&a, &x)));
                out.extend(bits(&c.solve_vec(&x)));
                out.extend(bits(&col_to_vec(c.l().col(n / 2).as_mat())));
                out
            })
        };
        let one = run(1);
        assert_eq!(one[..2], [expect[0].to_bits(), expect[1].to_bits()]);
        assert!(one == run(2) && one == run(3));
        let ax = mat_vec(&a, &x);
        for i in (0..n).step_by(97) {
            let naive: f64 = (0..n).map(|j| a[(i, j)] * x[j]).sum();
            assert!((ax[i] - naive).abs() < 1e-12 * n as f64);
        }
    }
}

/// Serde support for faer matrices as `{ "nrows", "ncols", "data" (column-major) }`.
pub mod serde_mat {
    use faer::Mat;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Repr {
        nrows: usize,
        ncols: usize,
        data: Vec<f64>,
    }

    /// Serialize a matrix.
    pub fn serialize<S: Serializer>(m: &Mat<f64>, s: S) -> Result<S::Ok, S::Error> {
        let mut data = Vec::with_capacity(m.nrows() * m.ncols());
        for j in 0..m.ncols() {
            for i in 0..m.nrows() {
                data.push(m[(i, j)]);
            }
        }
        Repr {
            nrows: m.nrows(),
            ncols: m.ncols(),
            data,
        }
        .serialize(s)
    }

    /// Deserialize a matrix, checking that the data length matches the shape.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Mat<f64>, D::Error> {
        let r = Repr::deserialize(d)?;
        if r.data.len() != r.nrows * r.ncols {
            return Err(serde::de::Error::custom(format!(
                "matrix data has {} entries, expected {}×{}",
                r.data.len(),
                r.nrows,
                r.ncols
            )));
        }
        Ok(Mat::from_fn(r.nrows, r.ncols, |i, j| {
            r.data[j * r.nrows + i]
        }))
    }
}

/// On-disk form of a [`Cholesky`]; validated on load.
#[derive(serde::Serialize, serde::Deserialize)]
struct CholeskyRepr {
    #[serde(with = "serde_mat")]
    l: Mat<f64>,
    jitter: f64,
}

impl TryFrom<CholeskyRepr> for Cholesky {
    type Error = String;
    fn try_from(r: CholeskyRepr) -> std::result::Result<Self, String> {
        let n = r.l.nrows();
        if r.l.ncols() != n {
            return Err(format!(
                "Cholesky factor is {}×{}, not square",
                n,
                r.l.ncols()
            ));
        }
        if (0..n).any(|i| !(r.l[(i, i)] > 0.0 && r.l[(i, i)].is_finite())) {
            return Err("Cholesky factor has a non-positive or non-finite diagonal".into());
        }
        let mut l = r.l;
        clear_upper(&mut l);
        Ok(Cholesky {
            l,
            jitter: r.jitter,
        })
    }
}

impl From<Cholesky> for CholeskyRepr {
    fn from(c: Cholesky) -> Self {
        CholeskyRepr {
            l: c.l,
            jitter: c.jitter,
        }
    }
}
