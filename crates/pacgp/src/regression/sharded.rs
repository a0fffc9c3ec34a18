//! Titsias' VFE bound as sums over data shards, for map-reduce training of one sparse GP over
//! data held by several workers (Gal, van der Wilk & Rasmussen 2014, §3).
//!
//! Given (θ, σ², Z), the bound depends on the data only through
//! `A = Σ_s K_{Z X_s} K_{X_s Z}`, `b = Σ_s K_{Z X_s} y_s`, `c = Σ_s y_sᵀy_s`,
//! `t = Σ_s Σ_i k(x_i, x_i)` and `n`. With `S = σ²K_uu + A` (K_uu with the same jitter as
//! [`super::sparse`]) and `β = S⁻¹b`:
//!
//! `F = −n/2 ln 2π − ½[(n−M) ln σ² + ln|S| − ln|K_uu|] − (c − bᵀβ)/(2σ²) − (t − tr(K_uu⁻¹A))/(2σ²)`
//!
//! (Woodbury on `Q_ff + σ²I`, Titsias 2009 eq. 9). Its gradient is likewise two passes: one
//! M×M step computes the adjoints of the sums (`Ā`, `b̄`, `t̄`) and the K_uu and σ² parts; each
//! shard then adds its `K_{Z X_s}` and `diag K_{X_s}` adjoints. Map: [`vfe_shard_stats`],
//! reduce: [`ShardStats::combine`], then [`vfe_global`], map: [`vfe_shard_gradient`], sum.

use faer::{Mat, MatRef};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};

use super::sparse::KUU_JITTER;

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// The data's part of the VFE bound on one shard (or, combined, on all of them).
#[derive(Clone, Debug, PartialEq)]
pub struct ShardStats {
    /// `A = K_{ZX} K_{XZ}` (M×M).
    pub a: Mat<f64>,
    /// `b = K_{ZX} y` (M).
    pub b: Vec<f64>,
    /// `c = yᵀy`.
    pub yy: f64,
    /// `t = Σ_i k(x_i, x_i)`.
    pub trace_kff: f64,
    /// Number of points.
    pub n: usize,
}

impl ShardStats {
    /// The statistics of the union of two shards (the reduce step).
    pub fn combine(&self, other: &ShardStats) -> Result<ShardStats> {
        if self.b.len() != other.b.len() {
            return Err(Error::ShapeMismatch {
                what: "shard statistics",
                expected: format!("{} inducing inputs", self.b.len()),
                found: format!("{}", other.b.len()),
            });
        }
        Ok(ShardStats {
            a: &self.a + &other.a,
            b: self.b.iter().zip(&other.b).map(|(x, y)| x + y).collect(),
            yy: self.yy + other.yy,
            trace_kff: self.trace_kff + other.trace_kff,
            n: self.n + other.n,
        })
    }
}

/// The map step: one shard's sums at (θ, Z).
pub fn vfe_shard_stats(
    kernel: &Kernel,
    z: MatRef<'_, f64>,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<ShardStats> {
    check_shard(z, x, y)?;
    let kzx = kernel.cross(z, x);
    Ok(ShardStats {
        a: &kzx * kzx.transpose(),
        b: linalg::mat_vec(&kzx, y),
        yy: linalg::dot(y, y),
        trace_kff: kernel.diag(x).iter().sum(),
        n: y.len(),
    })
}

fn check_shard(z: MatRef<'_, f64>, x: MatRef<'_, f64>, y: &[f64]) -> Result<()> {
    if x.nrows() != y.len() || x.ncols() != z.ncols() {
        return Err(Error::ShapeMismatch {
            what: "shard",
            expected: format!("{} rows and {} columns", y.len(), z.ncols()),
            found: format!("{}×{}", x.nrows(), x.ncols()),
        });
    }
    crate::data::check_finite(x, "shard inputs")
}

/// Adjoints of the bound with respect to the shard sums, which each shard turns into its part
/// of the gradient.
#[derive(Clone, Debug, PartialEq)]
pub struct VfeAdjoints {
    /// `∂F/∂A = −½S⁻¹ − ββᵀ/(2σ²) + K_uu⁻¹/(2σ²)` (symmetric).
    pub a_bar: Mat<f64>,
    /// `∂F/∂b = β/σ²`.
    pub b_bar: Vec<f64>,
    /// `∂F/∂t = −1/(2σ²)`.
    pub t_bar: f64,
}

/// The reduce step's result: the bound, the adjoints for the shards, and the gradient's
/// global part (K_uu and σ²) in `[θ…, ln σ², vec(Z) row by row]`.
#[derive(Clone, Debug)]
pub struct VfeGlobal {
    /// The VFE bound F.
    pub value: f64,
    /// What the shards need for their gradient parts.
    pub adjoints: VfeAdjoints,
    /// The gradient's part through K_uu and σ².
    pub gradient: Vec<f64>,
}

/// The bound and the gradient's global part from the combined statistics (M×M work only).
pub fn vfe_global(
    kernel: &Kernel,
    noise: f64,
    z: MatRef<'_, f64>,
    s: &ShardStats,
) -> Result<VfeGlobal> {
    let m = z.nrows();
    if s.b.len() != m {
        return Err(Error::ShapeMismatch {
            what: "shard statistics",
            expected: format!("{m} inducing inputs"),
            found: format!("{}", s.b.len()),
        });
    }
    let mut kuu = kernel.gram(z);
    for i in 0..m {
        kuu[(i, i)] += KUU_JITTER;
    }
    let policy = JitterPolicy::default();
    let l_uu = Cholesky::factor(kuu.as_ref(), &policy, "K_uu")?;
    let s_mat = Mat::from_fn(m, m, |i, j| noise * kuu[(i, j)] + s.a[(i, j)]);
    let l_s = Cholesky::factor(s_mat.as_ref(), &policy, "σ²K_uu + A")?;
    let beta = l_s.solve_vec(&s.b);
    let (kinv, sinv) = (l_uu.inverse(), l_s.inverse());
    let tr_kinv_a: f64 = (0..m)
        .flat_map(|j| (0..m).map(move |i| (i, j)))
        .map(|(i, j)| kinv[(i, j)] * s.a[(i, j)])
        .sum();
    let (n, mf) = (s.n as f64, m as f64);
    let fit = s.yy - linalg::dot(&s.b, &beta);
    let gap = s.trace_kff - tr_kinv_a;
    // Titsias 2009 eq. 9 through Woodbury (module doc).
    let value = -0.5 * n * LN_2PI
        - 0.5 * ((n - mf) * noise.ln() + l_s.ln_det() - l_uu.ln_det())
        - fit / (2.0 * noise)
        - gap / (2.0 * noise);
    let a_bar = Mat::from_fn(m, m, |i, j| {
        -0.5 * sinv[(i, j)] - beta[i] * beta[j] / (2.0 * noise) + kinv[(i, j)] / (2.0 * noise)
    });
    // ∂F/∂K_uu = −½σ²S⁻¹ + ½K_uu⁻¹ − ½ββᵀ − K_uu⁻¹AK_uu⁻¹/(2σ²).
    let kak = &kinv * &s.a * &kinv;
    let kuu_bar = Mat::from_fn(m, m, |i, j| {
        -0.5 * noise * sinv[(i, j)] + 0.5 * kinv[(i, j)]
            - 0.5 * beta[i] * beta[j]
            - kak[(i, j)] / (2.0 * noise)
    });
    let tr_sinv_kuu: f64 = (0..m)
        .flat_map(|j| (0..m).map(move |i| (i, j)))
        .map(|(i, j)| sinv[(i, j)] * kuu[(i, j)])
        .sum();
    let kuu_beta = linalg::mat_vec(&kuu, &beta);
    let noise_bar = -(n - mf) / (2.0 * noise) - 0.5 * tr_sinv_kuu + fit / (2.0 * noise * noise)
        - linalg::dot(&beta, &kuu_beta) / (2.0 * noise)
        + gap / (2.0 * noise * noise);
    let mut gradient = kernel.gram_grad_contract(z, kuu_bar.as_ref());
    gradient.push(noise * noise_bar);
    let dz = kernel.gram_grad_z(z, kuu_bar.as_ref());
    push_rows(&mut gradient, &dz);
    Ok(VfeGlobal {
        value,
        adjoints: VfeAdjoints {
            a_bar,
            b_bar: beta.iter().map(|v| v / noise).collect(),
            t_bar: -0.5 / noise,
        },
        gradient,
    })
}

fn push_rows(out: &mut Vec<f64>, dz: &Mat<f64>) {
    for a in 0..dz.nrows() {
        for t in 0..dz.ncols() {
            out.push(dz[(a, t)]);
        }
    }
}

/// The second map step: one shard's part of the gradient (same layout; its ln σ² entry is 0),
/// through `∂F/∂K_{ZX_s} = 2ĀK_{ZX_s} + b̄y_sᵀ` and `∂F/∂k(x_i, x_i) = t̄`.
pub fn vfe_shard_gradient(
    kernel: &Kernel,
    z: MatRef<'_, f64>,
    x: MatRef<'_, f64>,
    y: &[f64],
    adj: &VfeAdjoints,
) -> Result<Vec<f64>> {
    check_shard(z, x, y)?;
    if adj.b_bar.len() != z.nrows() {
        return Err(Error::ShapeMismatch {
            what: "VFE adjoints",
            expected: format!("{} inducing inputs", z.nrows()),
            found: format!("{}", adj.b_bar.len()),
        });
    }
    let kzx = kernel.cross(z, x);
    let m = z.nrows();
    let a2 = Mat::from_fn(m, m, |i, j| 2.0 * adj.a_bar[(i, j)]);
    let mut g = &a2 * &kzx;
    crate::regression::sparse::add_outer(&mut g, &adj.b_bar, y);
    let (mut gradient, dz) = kernel.cross_adjoint(z, x, kzx, &g);
    let gdiag = kernel.diag_grad_contract(x, &vec![adj.t_bar; y.len()]);
    for (g, d) in gradient.iter_mut().zip(&gdiag) {
        *g += d;
    }
    gradient.push(0.0);
    push_rows(&mut gradient, &dz);
    Ok(gradient)
}
