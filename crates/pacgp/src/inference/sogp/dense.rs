//! Small dense helpers of the online updates: triangular solves on a Cholesky factor, the factor
//! with one row and column removed, and the rank-one and grow-by-one updates of a square matrix.

use super::*;

/// `L⁻¹b` for a lower-triangular `L` with positive diagonal (faer's forward substitution).
pub(super) fn forward_solve(l: MatRef<'_, f64>, b: &[f64]) -> Vec<f64> {
    let mut x = b.to_vec();
    let n = x.len();
    let rhs = MatMut::from_column_major_slice_mut(&mut x, n, 1);
    triangular_solve::solve_lower_triangular_in_place(l, rhs, Par::Seq);
    x
}

/// `L⁻ᵀb` for a lower-triangular `L` with positive diagonal (faer's back substitution on `Lᵀ`).
pub(super) fn back_solve_transposed(l: MatRef<'_, f64>, b: &[f64]) -> Vec<f64> {
    let mut x = b.to_vec();
    let n = x.len();
    let rhs = MatMut::from_column_major_slice_mut(&mut x, n, 1);
    triangular_solve::solve_upper_triangular_in_place(l.transpose(), rhs, Par::Seq);
    x
}

/// The Cholesky factor of `K_B` without row and column `j`: with `L = [L₁₁ 0 0; ·  l₂₂ 0;
/// L₃₁ l₃₂ L₃₃]` it is `[L₁₁ 0; L₃₁ L₃₃']`, `L₃₃'L₃₃'ᵀ = L₃₃L₃₃ᵀ + l₃₂l₃₂ᵀ` by the rank-one
/// Cholesky update (Golub & Van Loan §6.5.4, one rotation per column, `O(M²)`).
pub(super) fn cholesky_without(l: MatRef<'_, f64>, j: usize) -> Mat<f64> {
    let m = l.nrows();
    let keep: Vec<usize> = (0..m).filter(|&i| i != j).collect();
    let mut out = Mat::from_fn(m - 1, m - 1, |a, b| l[(keep[a], keep[b])]);
    let mut x: Vec<f64> = (j + 1..m).map(|i| l[(i, j)]).collect();
    for (k, col) in (j..m - 1).enumerate() {
        let d = out[(col, col)];
        let r = d.hypot(x[k]);
        let (c, s) = (r / d, x[k] / d);
        out[(col, col)] = r;
        for (t, row) in (col + 1..m - 1).enumerate() {
            let xi = &mut x[k + 1 + t];
            out[(row, col)] = (out[(row, col)] + s * *xi) / c;
            *xi = c * *xi - s * out[(row, col)];
        }
    }
    out
}

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `A v` for a square `A`.
pub(super) fn mat_vec(a: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
    (0..a.nrows())
        .map(|i| (0..a.ncols()).map(|j| a[(i, j)] * v[j]).sum())
        .collect()
}

/// `A ← A + w s sᵀ`.
pub(super) fn rank_one(a: &mut Mat<f64>, w: f64, s: &[f64]) {
    for j in 0..a.ncols() {
        let wj = w * s[j];
        for i in 0..a.nrows() {
            a[(i, j)] += wj * s[i];
        }
    }
}

/// `[A 0; 0 0]`: one more zero row and column.
pub(super) fn grow(a: MatRef<'_, f64>) -> Mat<f64> {
    let m = a.nrows();
    Mat::from_fn(
        m + 1,
        m + 1,
        |i, j| {
            if i < m && j < m {
                a[(i, j)]
            } else {
                0.0
            }
        },
    )
}
