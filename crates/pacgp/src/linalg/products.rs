//! Vector and matrix products the GP code shares: dots, traces, weighted Gram matrices, the
//! symmetric row-block product (lower triangle only) and an order-fixed parallel sum, so results
//! do not depend on the thread count.

use super::*;

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
pub(super) const MAT_VEC_ROWS: usize = 256;

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
/// Its two buffers (`A diag(w)` and the `M × M` result; N × N both where `A` is) come from
/// [`crate::memory::try_zeros`].
pub fn weighted_gram(a: &Mat<f64>, w: &[f64]) -> Result<Mat<f64>> {
    let m = a.nrows();
    let mut aw = try_clone(a.as_ref(), "A diag(w) of a weighted Gram matrix")?;
    scale_cols(&mut aw, w);
    let mut out = crate::memory::try_zeros(m, m, "a weighted Gram matrix A diag(w) Aᵀ")?;
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
    Ok(out)
}

/// Inner-dimension columns per call in [`syrk_lower_add`]: faer's triangular-output product
/// ran at ~75 GFLOP/s on one core with ≤ 256, ~55 with 2048 (M = 500, this project's machine).
pub(super) const SYRK_CHUNK: usize = 256;

/// `out ← out + A diag(w) Aᵀ` on the lower triangle only (`w = 1` if `None`), for an M×K `A`,
/// on the calling thread: half the flops of the full product, in fixed chunks of
/// `SYRK_CHUNK` columns (the same rounding on any thread count).
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
/// on a machine with a busy core waits for a descheduled worker. The result comes from
/// [`crate::memory::try_zeros`] (named `what`).
pub fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>, what: &'static str) -> Result<Mat<f64>> {
    product_with(a, b, par_for(a.nrows().max(b.ncols())), what)
}

/// `A B` as faer's `&a * &b` computes it (the same kernel and faer's global parallelism, so
/// the same bits), into a matrix from [`crate::memory::try_zeros`] named `what`: the product
/// of data-sized results (N × N, N × M, N × N*) that returns [`Error::OutOfMemory`] where
/// `&a * &b` would abort.
pub fn try_product(a: MatRef<'_, f64>, b: MatRef<'_, f64>, what: &'static str) -> Result<Mat<f64>> {
    product_with(a, b, faer::get_global_parallelism(), what)
}

/// `A B` with parallelism `par` into a fallible zero matrix (faer's `Mul` writes into zeros).
fn product_with(
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    par: Par,
    what: &'static str,
) -> Result<Mat<f64>> {
    assert_eq!(a.ncols(), b.nrows(), "inner dimensions of a product");
    let mut out = crate::memory::try_zeros(a.nrows(), b.ncols(), what)?;
    faer::linalg::matmul::matmul(out.as_mut(), faer::Accum::Replace, a, b, 1.0, par);
    Ok(out)
}

/// `B ← A − B` entry by entry: faer's `A − B` written over `B` (the same entries), so that
/// `K − VᵀV` needs no third matrix besides the product.
pub fn subtract_from(a: MatRef<'_, f64>, b: &mut Mat<f64>) {
    assert_eq!(
        (a.nrows(), a.ncols()),
        (b.nrows(), b.ncols()),
        "shapes of A − B"
    );
    for j in 0..b.ncols() {
        for (v, x) in b.col_as_slice_mut(j).iter_mut().zip(a.col(j).iter()) {
            *v = x - *v;
        }
    }
}

/// `a.to_owned()` (a `.clone()` of a matrix) through [`crate::memory::try_zeros`], named
/// `what`: the copy of a data-sized matrix that returns [`Error::OutOfMemory`] instead of
/// aborting.
pub fn try_clone(a: MatRef<'_, f64>, what: &'static str) -> Result<Mat<f64>> {
    let mut out = crate::memory::try_zeros(a.nrows(), a.ncols(), what)?;
    out.copy_from(a);
    Ok(out)
}

/// `A B` where the factors marked lower triangular are read on their lower triangle only:
/// half [`product`]'s flops for each triangular factor, with the same parallelism.
pub fn product_with_lower(
    a: MatRef<'_, f64>,
    a_lower: bool,
    b: MatRef<'_, f64>,
    b_lower: bool,
) -> Mat<f64> {
    use faer::linalg::matmul::triangular::{matmul, BlockStructure};
    let structure = |lower: bool| {
        if lower {
            BlockStructure::TriangularLower
        } else {
            BlockStructure::Rectangular
        }
    };
    let mut out = crate::memory::zeros(a.nrows(), b.ncols());
    matmul(
        out.as_mut(),
        BlockStructure::Rectangular,
        faer::Accum::Replace,
        a,
        structure(a_lower),
        b,
        structure(b_lower),
        1.0,
        par_for(a.nrows().max(b.ncols())),
    );
    out
}

/// Copy the strict lower triangle of a square matrix onto its upper triangle.
pub fn symmetrise_from_lower(a: &mut Mat<f64>) {
    assert_eq!(
        a.nrows(),
        a.ncols(),
        "symmetrise_from_lower needs a square matrix"
    );
    symmetrise_block(a.as_mut());
}

/// Order below which [`symmetrise_from_lower`] copies on the calling thread.
const SYMMETRISE_LEAF: usize = 256;

/// [`symmetrise_from_lower`] of a square block, recursively: with `A = [A00 A01; A10 A11]`,
/// `A01 ← A10ᵀ` by column chunks in parallel, then the diagonal blocks side by side. A plain
/// column loop reads the lower triangle across rows on one thread.
fn symmetrise_block(a: MatMut<'_, f64>) {
    let n = a.nrows();
    if n <= SYMMETRISE_LEAF {
        let mut a = a;
        for j in 0..n {
            for i in 0..j {
                a[(i, j)] = a[(j, i)];
            }
        }
        return;
    }
    let h = n / 2;
    let (a00, a01, a10, a11) = a.split_at_mut(h, h);
    let a10 = faer::reborrow::IntoConst::into_const(a10);
    const CHUNK: usize = 64;
    a01.par_col_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, mut block)| {
            let rows = a10.subrows(c * CHUNK, block.ncols());
            block.copy_from(rows.transpose());
        });
    rayon::join(|| symmetrise_block(a00), || symmetrise_block(a11));
}

/// `A ← A + u vᵀ` on the calling thread.
pub fn add_outer_seq(a: &mut Mat<f64>, u: &[f64], v: &[f64]) {
    for (j, vj) in v.iter().enumerate() {
        for (ci, ui) in a.col_as_slice_mut(j).iter_mut().zip(u) {
            *ci += ui * vj;
        }
    }
}

/// `A ← A + u vᵀ`, column by column in parallel.
pub fn add_outer(a: &mut Mat<f64>, u: &[f64], v: &[f64]) {
    a.par_col_iter_mut().zip(v).for_each(|(c, vj)| {
        let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
        for (ci, ui) in c.iter_mut().zip(u) {
            *ci += ui * vj;
        }
    });
}
