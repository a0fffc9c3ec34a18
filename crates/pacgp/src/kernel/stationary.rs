//! Stationary kernels as functions of the scaled squared distance
//! `r² = Σ_t (x_t − z_t)² / l_t²`: squared exponential and Matérn ν ∈ {1/2, 3/2, 5/2}
//! (GPML eqs. 4.9 and 4.17), with fast parallel Gram matrices and gradient contractions.

use faer::{Mat, MatMut, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::StationaryParts;
use crate::error::Result;
use crate::vector_math::{self, VectorLoop};

/// Which stationary profile `k(r)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// `exp(−r²/2)`.
    SquaredExponential,
    /// Matérn ν = 1/2: `exp(−r)`.
    Matern12,
    /// Matérn ν = 3/2: `(1 + √3 r) exp(−√3 r)`.
    Matern32,
    /// Matérn ν = 5/2: `(1 + √5 r + 5r²/3) exp(−√5 r)`.
    Matern52,
}

impl Profile {
    /// `(k, dk/d(r²))` at `r²`. For Matérn 1/2, `dk/d(r²)` is singular at 0 but always
    /// multiplies a factor that vanishes faster; it is returned as 0 there.
    #[inline]
    pub fn value_and_slope(self, r2: f64) -> (f64, f64) {
        match self {
            Profile::SquaredExponential => {
                let k = (-0.5 * r2).exp();
                (k, -0.5 * k)
            }
            Profile::Matern12 => {
                let r = r2.sqrt();
                let k = (-r).exp();
                (k, if r > 0.0 { -k / (2.0 * r) } else { 0.0 })
            }
            Profile::Matern32 => {
                let s = 3f64.sqrt() * r2.sqrt();
                let e = (-s).exp();
                ((1.0 + s) * e, -1.5 * e)
            }
            Profile::Matern52 => {
                let s = 5f64.sqrt() * r2.sqrt();
                let e = (-s).exp();
                ((1.0 + s + 5.0 * r2 / 3.0) * e, -(5.0 / 6.0) * (1.0 + s) * e)
            }
        }
    }

    /// `dk/d(r²)` from `k = k(r²)` itself, without the exponential (as [`Self::value_and_slope`]).
    #[inline(always)]
    pub fn slope_from_value(self, k: f64, r2: f64) -> f64 {
        match self {
            Profile::SquaredExponential => -0.5 * k,
            Profile::Matern12 => {
                let r = r2.sqrt();
                if r > 0.0 {
                    -k / (2.0 * r)
                } else {
                    0.0
                }
            }
            Profile::Matern32 => -1.5 * k / (1.0 + 3f64.sqrt() * r2.sqrt()),
            Profile::Matern52 => {
                let s = 5f64.sqrt() * r2.sqrt();
                -(5.0 / 6.0) * (1.0 + s) * k / (1.0 + s + 5.0 * r2 / 3.0)
            }
        }
    }
}

impl Profile {
    /// `c[i] ← variance · k(c[i])` for squared scaled distances `c[i] = r²`, with the
    /// exponential of [`vector_math::exp`]; vectorises inside [`vector_math::vectorised`].
    #[inline(always)]
    fn fill_from_sqdist(self, c: &mut [f64], variance: f64) {
        match self {
            Profile::SquaredExponential => {
                for v in c {
                    *v = variance * vector_math::exp(-0.5 * *v);
                }
            }
            Profile::Matern12 => {
                for v in c {
                    *v = variance * vector_math::exp(-v.sqrt());
                }
            }
            Profile::Matern32 => {
                for v in c {
                    let s = 3f64.sqrt() * v.sqrt();
                    *v = variance * ((1.0 + s) * vector_math::exp(-s));
                }
            }
            Profile::Matern52 => {
                for v in c {
                    let s = 5f64.sqrt() * v.sqrt();
                    *v = variance * ((1.0 + s + 5.0 * *v / 3.0) * vector_math::exp(-s));
                }
            }
        }
    }
}

/// Scaled inputs transposed, one contiguous run per input dimension (`out[t·n + i] = x_it/l_t`),
/// so that squared distances to one point vectorise over the other points.
pub(crate) fn scaled_cols(x: MatRef<'_, f64>, ln_l: &[f64]) -> Vec<f64> {
    let (n, d) = (x.nrows(), x.ncols());
    let mut out = vec![0.0; n * d];
    for t in 0..d {
        let inv = (-ln_l[if ln_l.len() == 1 { 0 } else { t }]).exp();
        for i in 0..n {
            out[t * n + i] = x[(i, t)] * inv;
        }
    }
    out
}

/// `c[i] ← Σ_t (zt[t·m + from + i] − b_t)²` for the last `c.len()` of the `m` points of `zt`
/// ([`scaled_cols`] layout; `from = m − c.len()`): the same sum, in the same order, as
/// `sqdist`, but vectorised over i.
#[inline(always)]
fn sqdist_to_tail(c: &mut [f64], zt: &[f64], m: usize, b: &[f64]) {
    let from = m - c.len();
    c.fill(0.0);
    for (t, bt) in b.iter().enumerate() {
        let col = &zt[t * m + from..(t + 1) * m];
        for (ci, zi) in c.iter_mut().zip(col) {
            let dlt = zi - bt;
            *ci += dlt * dlt;
        }
    }
}

/// Inputs above which [`Kernel::cross`](crate::kernel::Kernel::cross) (Gram and cross-covariance
/// matrices) takes the squared distances from one product (`product_sqdist`) rather than a sum
/// over the inputs for every pair (`sqdist_to_tail`; the sparse objectives' `K(Z, X)` blocks
/// keep it, so that `K(Z, Z)` stays symmetric to the bit).
///
/// The pairwise sum reads all of `zt` once per column, `N·M·D` values from memory rather than
/// cache: at 341 inputs and N = 2 300 it was a quarter of an ML-II evaluation's CPU time. At or
/// below it the matrices, and every fit on them, keep their bits.
pub const PRODUCT_DISTANCE_INPUTS: usize = 20;

/// `out[i, j] ← ‖a_i − b_j‖²` as `‖a_i‖² + ‖b_j‖² − 2a_i·b_j` by one matrix product, clamped
/// at 0 (rounding can leave a copy's distance at −10⁻¹⁶): `a` (P×D) in [`scaled_cols`] layout,
/// `b` (Q×D) in [`scaled_rows`] layout, `out` P×Q. On scaled inputs of norm about √D/l the
/// rounding of a distance is about `D·ε/l²` absolute, far below a kernel's jitter.
fn product_sqdist(a: &[f64], b: &[f64], d: usize, mut out: MatMut<'_, f64>) {
    let (p, q) = (out.nrows(), out.ncols());
    let am = MatRef::from_column_major_slice(a, p, d);
    let bm = MatRef::from_row_major_slice(b, q, d);
    faer::linalg::matmul::matmul(
        out.as_mut(),
        faer::Accum::Replace,
        am,
        bm.transpose(),
        -2.0,
        crate::linalg::par_for(p.max(q)),
    );
    let mut na = vec![0.0; p];
    for t in 0..d {
        for (s, v) in na.iter_mut().zip(&a[t * p..(t + 1) * p]) {
            *s += v * v;
        }
    }
    out.par_col_iter_mut().enumerate().for_each(|(j, c)| {
        let nb: f64 = b[j * d..(j + 1) * d].iter().map(|v| v * v).sum();
        let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
        for (v, s) in c.iter_mut().zip(&na) {
            *v = (*v + s + nb).max(0.0);
        }
    });
}

/// `c[i] ← variance · k(c[i])` over a column of squared distances, vectorised.
struct ProfileColumn<'a> {
    c: &'a mut [f64],
    profile: Profile,
    variance: f64,
}

impl VectorLoop for ProfileColumn<'_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        self.profile.fill_from_sqdist(self.c, self.variance);
    }
}

/// `out ← variance · k(out)` for a matrix of squared distances (every column, or with `sym`
/// the lower triangle, whose diagonal is set to distance 0 first: a point is its own copy).
fn profile_of_sqdist(profile: Profile, variance: f64, out: MatMut<'_, f64>, sym: bool) {
    out.par_col_iter_mut().enumerate().for_each(|(j, c)| {
        let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
        let from = if sym { j.min(c.len()) } else { 0 };
        if sym && from < c.len() {
            c[from] = 0.0;
        }
        vector_math::vectorised(ProfileColumn {
            c: &mut c[from..],
            profile,
            variance,
        });
    });
}

/// `out ← variance · k(r(z_i, x_j))` (M×N, one column per point of `ux`; every entry written), with `zt` the
/// inducing inputs in [`scaled_cols`] layout and `ux` the points in [`scaled_rows`] layout:
/// distances and profile vectorised per column ([`vector_math`]), columns in parallel.
pub(crate) fn cross_vectorised(
    profile: Profile,
    variance: f64,
    zt: &[f64],
    ux: &[f64],
    d: usize,
    out: MatMut<'_, f64>,
) {
    debug_assert_eq!(
        (out.nrows(), out.ncols()),
        (zt.len() / d.max(1), ux.len() / d.max(1))
    );
    let m = out.nrows();
    out.par_col_iter_mut().enumerate().for_each(|(j, c)| {
        vector_math::vectorised(CrossColumn {
            c: c.try_as_col_major_mut().unwrap().as_slice_mut(),
            zt,
            m,
            b: &ux[j * d..(j + 1) * d],
            profile,
            variance,
        });
    });
}

/// One column of [`cross_vectorised`] and [`cross`]: `c[i] = variance · k(‖w_i − b‖²)` for
/// the last `c.len()` of the `m` points `w` of `zt`.
struct CrossColumn<'a> {
    c: &'a mut [f64],
    zt: &'a [f64],
    m: usize,
    b: &'a [f64],
    profile: Profile,
    variance: f64,
}

impl VectorLoop for CrossColumn<'_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        sqdist_to_tail(self.c, self.zt, self.m, self.b);
        self.profile.fill_from_sqdist(self.c, self.variance);
    }
}

/// One column of [`cross_adjoint`]'s `H = G∘S`, `S = variance·k'(r²)` from `K` itself
/// (`c` holds K's column on entry, H's on exit; `b` is the point, `zt` the inducing inputs).
struct SlopeColumn<'a> {
    c: &'a mut [f64],
    g: &'a [f64],
    zt: &'a [f64],
    b: &'a [f64],
    profile: Profile,
    variance: f64,
}

impl VectorLoop for SlopeColumn<'_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        match self.profile {
            Profile::SquaredExponential => {
                for (cj, gj) in self.c.iter_mut().zip(self.g) {
                    *cj = gj * (-0.5 * *cj);
                }
            }
            profile => {
                let m = self.c.len();
                let mut r2 = vec![0.0; m];
                sqdist_to_tail(&mut r2, self.zt, m, self.b);
                let var = self.variance;
                for ((cj, gj), r2j) in self.c.iter_mut().zip(self.g).zip(&r2) {
                    *cj = gj * (var * profile.slope_from_value(*cj / var, *r2j));
                }
            }
        }
    }
}

/// Inputs divided by their lengthscales, row-major (point i at `[i*d .. (i+1)*d]`).
pub(crate) fn scaled_rows(x: MatRef<'_, f64>, ln_l: &[f64]) -> Vec<f64> {
    let (n, d) = (x.nrows(), x.ncols());
    let inv: Vec<f64> = (0..d)
        .map(|t| (-ln_l[if ln_l.len() == 1 { 0 } else { t }]).exp())
        .collect();
    let mut out = vec![0.0; n * d];
    for i in 0..n {
        for t in 0..d {
            out[i * d + t] = x[(i, t)] * inv[t];
        }
    }
    out
}

#[inline]
fn sqdist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// `variance · k(r(x_i, z_j))` for all pairs (N×M), filled column by column (contiguous in
/// faer's column-major layout) in parallel, each column's distances and profile vectorised
/// over the points of `xt` ([`scaled_cols`] layout) with [`vector_math::exp`]; `uz` in
/// [`scaled_rows`] layout. With `sym` (`z = x`) only the lower triangle is evaluated, then
/// mirrored.
pub(crate) fn cross(
    profile: Profile,
    variance: f64,
    xt: &[f64],
    uz: &[f64],
    d: usize,
    sym: bool,
    storage: Option<Mat<f64>>,
) -> Result<Mat<f64>> {
    let (n, m) = (xt.len() / d.max(1), uz.len() / d.max(1));
    let what = if sym {
        super::matrices::GRAM
    } else {
        super::matrices::CROSS
    };
    // Every entry is written below (the upper triangle by symmetrising), so stale storage is fine.
    let mut out = crate::linalg::scratch::reuse_or_zeros(storage, n, m, what)?;
    if d > PRODUCT_DISTANCE_INPUTS {
        product_sqdist(xt, uz, d, out.as_mut());
        profile_of_sqdist(profile, variance, out.as_mut(), sym);
        if sym {
            crate::linalg::symmetrise_from_lower(&mut out);
        }
        return Ok(out);
    }
    out.par_col_iter_mut().enumerate().for_each(|(j, c)| {
        let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
        let from = if sym { j.min(n) } else { 0 };
        vector_math::vectorised(CrossColumn {
            c: &mut c[from..],
            zt: xt,
            m: n,
            b: &uz[j * d..(j + 1) * d],
            profile,
            variance,
        });
    });
    if sym {
        crate::linalg::symmetrise_from_lower(&mut out);
    }
    Ok(out)
}

/// Adjoint of `K = variance · k(r(z_j, x_i))` (M×N, given as `k`, overwritten as scratch)
/// against `G` (M×N): `([Σ G∘∂K/∂ln σ² if with_variance, Σ G∘∂K/∂ln l_t …], ∂/∂Z Σ G∘K)`.
///
/// With `S = variance·k'(r²)` and `H = G∘S`, `∂K/∂ln l_t = −2S(w_t − u_t)²` and
/// `∂K_ji/∂z_jt = 2S(w_jt − u_it)/l_t` (`w = z/l`, `u = x/l`), so both reduce to the row and
/// column sums of H and one product `H·U` (M·N·D flops). `S` comes from `K` itself
/// ([`Profile::slope_from_value`]): no exponential is recomputed. `zt` holds `w` in
/// [`scaled_cols`] layout (for the distances the Matérn slopes need), `uz` in rows.
pub(crate) fn cross_adjoint(
    profile: Profile,
    variance: f64,
    ln_l: &[f64],
    uz: &[f64],
    zt: &[f64],
    ux: &[f64],
    d: usize,
    k: &mut Mat<f64>,
    g: &Mat<f64>,
    with_variance: bool,
) -> (Vec<f64>, Mat<f64>) {
    let (m, n) = (uz.len() / d.max(1), ux.len() / d.max(1));
    // Pass over the columns of K (one training point each): K → H, and Σ G∘K, Σ_j H_ji.
    let per_col: Vec<(f64, f64)> = k
        .par_col_iter_mut()
        .enumerate()
        .map(|(i, c)| {
            let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
            let gc = g.col_as_slice(i);
            let gk = c.iter().zip(gc).map(|(k, g)| g * k).sum::<f64>();
            vector_math::vectorised(SlopeColumn {
                c: &mut *c,
                g: gc,
                zt,
                b: &ux[i * d..(i + 1) * d],
                profile,
                variance,
            });
            (gk, c.iter().sum::<f64>())
        })
        .collect();
    // [U, 1] (N×(D+1)) so that one product gives H·U and the row sums of H.
    let u1 = Mat::from_fn(n, d + 1, |i, t| if t < d { ux[i * d + t] } else { 1.0 });
    let mut hu = crate::memory::zeros(m, d + 1);
    faer::linalg::matmul::matmul(
        hu.as_mut(),
        faer::Accum::Replace,
        k.as_ref(),
        u1.as_ref(),
        1.0,
        faer::Par::Seq,
    );
    let inv_l: Vec<f64> = (0..d)
        .map(|t| (-ln_l[if ln_l.len() == 1 { 0 } else { t }]).exp())
        .collect();
    let mut dl = vec![0.0; d];
    for t in 0..d {
        let x_part: f64 = (0..n).map(|i| ux[i * d + t].powi(2) * per_col[i].1).sum();
        let z_part: f64 = (0..m)
            .map(|j| {
                let w = uz[j * d + t];
                w * w * hu[(j, d)] - 2.0 * w * hu[(j, t)]
            })
            .sum();
        dl[t] = -2.0 * (x_part + z_part);
    }
    let dz = Mat::from_fn(m, d, |j, t| {
        2.0 * inv_l[t] * (uz[j * d + t] * hu[(j, d)] - hu[(j, t)])
    });
    let mut out = Vec::with_capacity(ln_l.len() + 1);
    if with_variance {
        out.push(per_col.iter().map(|p| p.0).sum());
    }
    if ln_l.len() == 1 {
        out.push(dl.iter().sum());
    } else {
        out.extend(dl);
    }
    (out, dz)
}

/// Gradient contraction for `variance · k(r)` with lengthscales `ln_l` (`p`'s): returns
/// `[Σ G ∂K/∂ln σ², Σ G ∂K/∂ln l_t …]` (the first entry only if σ² is a hyperparameter).
///
/// `∂K/∂ln l_t = variance · k'(r²) · (−2 (x_t − z_t)²/l_t²)`; one pass over all pairs, or
/// with `symmetric` (`uz = ux` and `G = Gᵀ`) over the lower triangle, off-diagonal pairs
/// counted twice. With `gram` (this kernel's `K(X, Z)`), `k` is read, not recomputed.
pub(super) fn grad_contract(
    p: &StationaryParts<'_>,
    ux: &[f64],
    uz: &[f64],
    d: usize,
    g: MatRef<'_, f64>,
    symmetric: bool,
    gram: Option<MatRef<'_, f64>>,
) -> Vec<f64> {
    let (profile, variance, ln_l) = (p.profile, p.variance, &*p.ln_l);
    let n_l = ln_l.len();
    let n = ux.len() / d.max(1);
    let m = uz.len() / d.max(1);
    // Parallel over the columns of G so that G (column-major) is read contiguously, in fixed
    // chunks summed in order (the same bits on any thread count).
    let acc = crate::linalg::ordered_par_sum(m, n_l + 1, |j, acc| {
        let b = &uz[j * d..(j + 1) * d];
        let from = if symmetric { j } else { 0 };
        for i in from..n {
            let gij = if symmetric && i > j {
                2.0 * g[(i, j)]
            } else {
                g[(i, j)]
            };
            if gij == 0.0 {
                continue;
            }
            let a = &ux[i * d..(i + 1) * d];
            let r2 = sqdist(a, b);
            let (k, slope) = match gram {
                Some(km) => {
                    let k = km[(i, j)] / variance;
                    (k, profile.slope_from_value(k, r2))
                }
                None => profile.value_and_slope(r2),
            };
            acc[0] += gij * k;
            let w = -2.0 * gij * slope;
            if n_l == 1 {
                acc[1] += w * r2;
            } else {
                for t in 0..d {
                    let dt = a[t] - b[t];
                    acc[1 + t] += w * dt * dt;
                }
            }
        }
    });
    let mut out = Vec::with_capacity(n_l + 1);
    if p.scaled {
        out.push(variance * acc[0]);
    }
    out.extend(acc[1..].iter().map(|v| variance * v));
    out
}

/// `∂/∂Z Σ_ij G_ij · variance · k(r(x_i, z_j))` (M×D; `p`'s variance, profile and lengthscales), parallel over the columns of G:
/// `∂k/∂z_t = variance · k'(r²) · (−2)(x_t − z_t)/l_t²`, written with `u = x/l`. With `gram`
/// (this kernel's `K(X, Z)`), `k'` comes from `k` ([`Profile::slope_from_value`]), not an exponential.
pub(super) fn grad_z(
    p: &StationaryParts<'_>,
    ux: &[f64],
    uz: &[f64],
    d: usize,
    g: MatRef<'_, f64>,
    gram: Option<MatRef<'_, f64>>,
) -> Mat<f64> {
    let (profile, variance, ln_l) = (p.profile, p.variance, &*p.ln_l);
    let (n, m) = (ux.len() / d.max(1), uz.len() / d.max(1));
    let inv_l: Vec<f64> = (0..d)
        .map(|t| (-ln_l[if ln_l.len() == 1 { 0 } else { t }]).exp())
        .collect();
    let rows: Vec<Vec<f64>> = (0..m)
        .into_par_iter()
        .map(|j| {
            let b = &uz[j * d..(j + 1) * d];
            let mut acc = vec![0.0; d];
            for i in 0..n {
                let gij = g[(i, j)];
                if gij == 0.0 {
                    continue;
                }
                let a = &ux[i * d..(i + 1) * d];
                let r2 = sqdist(a, b);
                let slope = match gram {
                    Some(km) => profile.slope_from_value(km[(i, j)] / variance, r2),
                    None => profile.value_and_slope(r2).1,
                };
                let w = -2.0 * variance * gij * slope;
                for t in 0..d {
                    acc[t] += w * (a[t] - b[t]);
                }
            }
            acc.iter().zip(&inv_l).map(|(v, il)| v * il).collect()
        })
        .collect();
    Mat::from_fn(m, d, |j, t| rows[j][t])
}
