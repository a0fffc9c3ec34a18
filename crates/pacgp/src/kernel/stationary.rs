//! Stationary kernels as functions of the scaled squared distance
//! `r² = Σ_t (x_t − z_t)² / l_t²`: squared exponential and Matérn ν ∈ {1/2, 3/2, 5/2}
//! (GPML eqs. 4.9 and 4.17), with fast parallel Gram matrices and gradient contractions.

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

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

/// `variance · k(r(x_i, z_j))` for all pairs, parallel over rows; symmetric fill if `sym`.
pub(crate) fn cross(
    profile: Profile,
    variance: f64,
    ux: &[f64],
    uz: &[f64],
    d: usize,
    sym: bool,
) -> Mat<f64> {
    let (n, m) = (ux.len() / d.max(1), uz.len() / d.max(1));
    // Row-major buffer filled in parallel, then copied into the column-major matrix.
    let mut buf = vec![0.0; n * m];
    buf.par_chunks_mut(m.max(1))
        .enumerate()
        .for_each(|(i, row)| {
            let a = &ux[i * d..(i + 1) * d];
            let upto = if sym { i + 1 } else { m };
            for j in 0..upto {
                row[j] = variance
                    * profile
                        .value_and_slope(sqdist(a, &uz[j * d..(j + 1) * d]))
                        .0;
            }
        });
    Mat::from_fn(n, m, |i, j| {
        if sym && j > i {
            buf[j * m + i]
        } else {
            buf[i * m + j]
        }
    })
}

/// Gradient contraction for `variance · k(r)` with lengthscales `ln_l`:
/// returns `[Σ G ∂K/∂ln σ², Σ G ∂K/∂ln l_t …]` (the first entry only if `with_variance`).
///
/// `∂K/∂ln l_t = variance · k'(r²) · (−2 (x_t − z_t)²/l_t²)`; one pass over all pairs.
pub(crate) fn grad_contract(
    profile: Profile,
    variance: f64,
    ln_l: &[f64],
    ux: &[f64],
    uz: &[f64],
    d: usize,
    g: MatRef<'_, f64>,
    with_variance: bool,
) -> Vec<f64> {
    let n_l = ln_l.len();
    let n = ux.len() / d.max(1);
    let m = uz.len() / d.max(1);
    // Parallel over the columns of G so that G (column-major) is read contiguously.
    let acc = (0..m)
        .into_par_iter()
        .fold(
            || vec![0.0; n_l + 1],
            |mut acc, j| {
                let b = &uz[j * d..(j + 1) * d];
                for i in 0..n {
                    let gij = g[(i, j)];
                    if gij == 0.0 {
                        continue;
                    }
                    let a = &ux[i * d..(i + 1) * d];
                    let r2 = sqdist(a, b);
                    let (k, slope) = profile.value_and_slope(r2);
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
                acc
            },
        )
        .reduce(
            || vec![0.0; n_l + 1],
            |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect(),
        );
    let mut out = Vec::with_capacity(n_l + 1);
    if with_variance {
        out.push(variance * acc[0]);
    }
    out.extend(acc[1..].iter().map(|v| variance * v));
    out
}

/// `∂/∂Z Σ_ij G_ij · variance · k(r(x_i, z_j))` (M×D), parallel over the columns of G:
/// `∂k/∂z_t = variance · k'(r²) · (−2)(x_t − z_t)/l_t²`, written with `u = x/l`.
pub(crate) fn grad_z(
    profile: Profile,
    variance: f64,
    ln_l: &[f64],
    ux: &[f64],
    uz: &[f64],
    d: usize,
    g: MatRef<'_, f64>,
) -> Mat<f64> {
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
                let slope = profile.value_and_slope(sqdist(a, b)).1;
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
