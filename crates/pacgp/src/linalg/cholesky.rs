//! The Cholesky factor every GP computation goes through: jitter escalated and reported
//! (GPyTorch / GPflow style), solves, log-determinants, the diagonal of an inverse, and its
//! validated on-disk form.

use super::*;

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
pub(super) fn clear_upper(l: &mut Mat<f64>) {
    let clear = |j: usize, c: &mut [f64]| {
        let end = j.min(c.len());
        c[..end].fill(0.0);
    };
    if l.nrows() >= PAR_THRESHOLD {
        l.par_col_iter_mut()
            .enumerate()
            .for_each(|(j, c)| clear(j, column_slice(c)));
    } else {
        for j in 1..l.ncols() {
            clear(j, l.col_as_slice_mut(j));
        }
    }
}

/// A column of an owned matrix as a slice.
fn column_slice(c: faer::ColMut<'_, f64>) -> &mut [f64] {
    c.try_as_col_major_mut()
        .expect("an owned matrix has contiguous columns")
        .as_slice_mut()
}

/// Factor `l` (lower triangle read) in place; `Ok(Err(pivot))` if it is not positive
/// definite, `Err` if faer's work space for it (named `what`) cannot be had.
pub(super) fn factor_in_place(
    l: &mut Mat<f64>,
    what: &'static str,
) -> Result<std::result::Result<(), usize>> {
    let n = l.nrows();
    let par = par_for(n);
    let req = factor::cholesky_in_place_scratch::<f64>(n, par, Default::default());
    let mut buf = crate::memory::try_scratch(req, n, what)?;
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
            Ok(Ok(()))
        }
        Err(factor::LltError::NonPositivePivot { index }) => Ok(Err(index)),
    }
}

/// The first non-finite entry of the lower triangle, as `(row, col)`.
pub(super) fn first_non_finite_lower(a: MatRef<'_, f64>) -> Option<(usize, usize)> {
    let in_column = |j: usize| {
        let c = a.col(j);
        (j..a.nrows()).find(|&i| !c[i].is_finite()).map(|i| (i, j))
    };
    if a.nrows() >= PAR_THRESHOLD {
        (0..a.ncols()).into_par_iter().find_map_first(in_column)
    } else {
        (0..a.ncols()).find_map(in_column)
    }
}

/// Writes the lower triangle of `a + diag(d)`, `d_i = diag(i)`, columns in parallel for large
/// matrices (for [`Cholesky::factor_filled`]).
fn fill_plus_diag<'a>(
    a: MatRef<'a, f64>,
    diag: impl Fn(usize) -> f64 + Sync + 'a,
) -> impl Fn(MatMut<'_, f64>) + 'a {
    move |mut l: MatMut<'_, f64>| {
        let n = a.nrows();
        let fill = |j: usize, mut c: faer::ColMut<'_, f64>| {
            c.rb_mut()
                .subrows_mut(j, n - j)
                .copy_from(a.col(j).subrows(j, n - j));
            c[j] += diag(j);
        };
        if n >= PAR_THRESHOLD {
            l.rb_mut()
                .par_col_iter_mut()
                .enumerate()
                .for_each(|(j, c)| fill(j, c));
        } else {
            for j in 0..n {
                fill(j, l.rb_mut().col_mut(j));
            }
        }
    }
}

impl Cholesky {
    /// Factor the symmetric matrix `a` (only its lower triangle is read), adding jitter
    /// per `policy` if needed. `what` names the matrix in the error.
    pub fn factor(a: MatRef<'_, f64>, policy: &JitterPolicy, what: &'static str) -> Result<Self> {
        // Copies the lower triangle only; faer reads nothing else.
        Self::factor_plus_diag(a, |_| 0.0, policy, what)
    }

    /// [`Cholesky::factor`] of `a + diag(d)` with `d_i = diag(i)` (a Gram matrix plus noise:
    /// `K + σ²I`, `K + Λ`), built in the factor's storage without a copy of `a`.
    pub fn factor_plus_diag(
        a: MatRef<'_, f64>,
        diag: impl Fn(usize) -> f64 + Sync,
        policy: &JitterPolicy,
        what: &'static str,
    ) -> Result<Self> {
        Self::factor_plus_diag_in(a, diag, None, policy, what)
    }

    /// [`Cholesky::factor_plus_diag`] built in `storage` (reused when it is `n × n`, e.g. a
    /// buffer from a [`scratch::Pool`]).
    pub fn factor_plus_diag_in(
        a: MatRef<'_, f64>,
        diag: impl Fn(usize) -> f64 + Sync,
        storage: Option<Mat<f64>>,
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
        Self::factor_filled(n, fill_plus_diag(a, diag), storage, policy, what)
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
        let mut l = scratch::reuse_or_zeros(storage, n, n, what)?;
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
            match factor_in_place(&mut l, what)? {
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

    /// A copy of the factor (its `n × n` through [`super::try_clone`]): `.clone()` for factors
    /// of the data's size, [`Error::OutOfMemory`] instead of an abort.
    pub fn try_clone(&self) -> Result<Self> {
        Ok(Self {
            l: super::try_clone(self.l.as_ref(), "a copy of a Cholesky factor")?,
            jitter: self.jitter,
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

    /// `L⁻¹` (lower triangular, `n³/3` flops), or [`Error::OutOfMemory`] where its `n × n`
    /// cannot be had.
    pub fn l_inverse(&self) -> Result<Mat<f64>> {
        self.l_inverse_in(None)
    }

    /// [`Cholesky::l_inverse`] written into `storage` when it has the right shape (a loop
    /// that inverts a factor per iteration then reuses one buffer instead of fresh pages).
    pub fn l_inverse_in(&self, storage: Option<Mat<f64>>) -> Result<Mat<f64>> {
        let n = self.dim();
        let mut inv = scratch::reuse_or_zeros(storage, n, n, L_INVERSE)?;
        faer::linalg::triangular_inverse::invert_lower_triangular(
            inv.as_mut(),
            self.l.as_ref(),
            par_for(n),
        );
        // faer writes the lower triangle only: clear what a reused buffer held above it.
        clear_upper(&mut inv);
        Ok(inv)
    }

    /// The full inverse `A⁻¹ = L⁻ᵀ L⁻¹` (use only where the whole matrix is needed,
    /// e.g. the NLML gradient's `tr((ααᵀ − K⁻¹) ∂K)`); `2n³/3` flops.
    pub fn inverse(&self) -> Result<Mat<f64>> {
        let mut inv = self.inverse_lower()?;
        super::products::symmetrise_from_lower(&mut inv);
        Ok(inv)
    }

    /// The lower triangle of [`Cholesky::inverse`] (zeros above it), for callers that read
    /// only that half of the symmetric inverse.
    pub fn inverse_lower(&self) -> Result<Mat<f64>> {
        inverse_lower_from_l_inverse(&self.l_inverse()?, None)
    }

    /// The lower triangle of `A⁻¹` written into `storage` (reused when it is `n × n`; its
    /// strict upper triangle keeps what `storage` held), with `L⁻¹` computed in `l_inv` (the
    /// caller's buffers, given back after use): `(A⁻¹'s lower triangle, L⁻¹)`.
    pub(crate) fn inverse_lower_in(
        &self,
        l_inv: Option<Mat<f64>>,
        storage: Option<Mat<f64>>,
    ) -> Result<(Mat<f64>, Mat<f64>)> {
        let l_inv = self.l_inverse_in(l_inv)?;
        let out = inverse_lower_from_l_inverse(&l_inv, storage)?;
        Ok((out, l_inv))
    }

    /// `diag(A⁻¹)_i = ‖L⁻¹ e_i‖²` computed as the column norms of `L⁻¹`... by rows:
    /// `[A⁻¹]_ii = Σ_k (L⁻¹)_{ki}²`.
    pub fn inverse_diag(&self) -> Result<Vec<f64>> {
        let linv = self.l_inverse()?;
        let n = self.dim();
        Ok((0..n)
            .map(|i| (i..n).map(|k| linv[(k, i)] * linv[(k, i)]).sum())
            .collect())
    }

    /// `tr(A⁻¹) = ‖L⁻¹‖_F²`.
    pub fn inverse_trace(&self) -> Result<f64> {
        let linv = self.l_inverse()?;
        let n = self.dim();
        let mut s = 0.0;
        for j in 0..n {
            for i in j..n {
                s += linv[(i, j)] * linv[(i, j)];
            }
        }
        Ok(s)
    }
}

/// What an [`Error::OutOfMemory`] names when `L⁻¹` cannot be had.
const L_INVERSE: &str = "the inverse of a Cholesky factor";

/// What an [`Error::OutOfMemory`] names when `A⁻¹` cannot be had.
const INVERSE: &str = "the inverse of a factored matrix";

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
pub fn inverse_from_l_inverse(l_inv: &Mat<f64>) -> Result<Mat<f64>> {
    let mut out = inverse_lower_from_l_inverse(l_inv, None)?;
    super::products::symmetrise_from_lower(&mut out);
    Ok(out)
}

/// The lower triangle of [`inverse_from_l_inverse`], written into `storage` where it is
/// `n × n` (its strict upper triangle left as it was), else into zeros.
fn inverse_lower_from_l_inverse(l_inv: &Mat<f64>, storage: Option<Mat<f64>>) -> Result<Mat<f64>> {
    use faer::linalg::matmul::triangular::{matmul, BlockStructure};
    let n = l_inv.nrows();
    let mut out = scratch::reuse_or_zeros(storage, n, n, INVERSE)?;
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
    Ok(out)
}

/// On-disk form of a [`Cholesky`]; validated on load.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct CholeskyRepr {
    #[serde(with = "serde_mat")]
    l: Mat<f64>,
    jitter: f64,
}

/// The same factor and jitter (factors of different sizes are unequal, not a panic).
impl PartialEq for Cholesky {
    fn eq(&self, other: &Self) -> bool {
        self.jitter == other.jitter && super::same_mat(self.l(), other.l())
    }
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

/// `L⁻ᵀ X L⁻¹` for a symmetric M×M `X` (two triangular solves, M³ flops).
pub fn sandwich_inv(l: &Cholesky, x: Mat<f64>) -> Mat<f64> {
    let mut y = x;
    l.solve_upper_in_place(y.as_mut()); // L⁻ᵀX
    let mut out = y.transpose().to_owned(); // X L⁻¹
    l.solve_upper_in_place(out.as_mut()); // L⁻ᵀ X L⁻¹
    out
}

/// The adjoint of a matrix from that of its Cholesky factor (Murray 2016, "Differentiation of
/// the Cholesky decomposition", eq. 10 in symmetric form): for `f(L)` with `LLᵀ = Σ` and
/// `L̄ = ∂f/∂L` (only its lower triangle is read), `G = L⁻ᵀ ½(Φ + Φᵀ) L⁻¹` with
/// `Φ = Φ(LᵀL̄)` the lower triangle with half its diagonal, so that `df = Σ_ij G_ij dΣ_ij`
/// for every symmetric `dΣ`. Since `dL = L Φ(L⁻¹dΣL⁻ᵀ)`; O(M³).
pub fn cholesky_adjoint(l: &Cholesky, l_bar: MatRef<'_, f64>) -> Mat<f64> {
    let m = l.dim();
    let lower_bar = Mat::from_fn(m, m, |i, j| if i >= j { l_bar[(i, j)] } else { 0.0 });
    cholesky_adjoint_from_product(l, (l.l().transpose() * &lower_bar).as_ref())
}

/// [`cholesky_adjoint`] from `P = LᵀL̄` itself, for callers that hold it without forming L̄:
/// the upper triangle of L̄ meets only zeros of `dL` in `tr(L̄ᵀdL)`, so any `L̄` that agrees
/// on the lower triangle gives the same `G` (e.g. `L̄ = −L⁻ᵀX`, whose `P` is `−X`).
pub fn cholesky_adjoint_from_product(l: &Cholesky, p: MatRef<'_, f64>) -> Mat<f64> {
    let m = l.dim();
    let phi = |i: usize, j: usize| match i.cmp(&j) {
        std::cmp::Ordering::Greater => p[(i, j)],
        std::cmp::Ordering::Equal => 0.5 * p[(i, i)],
        std::cmp::Ordering::Less => 0.0,
    };
    let sym = Mat::from_fn(m, m, |i, j| 0.5 * (phi(i, j) + phi(j, i)));
    sandwich_inv(l, sym)
}
