//! Titsias' VFE bound as sums over data shards, for map-reduce training of one sparse GP over
//! data held by several workers (Gal, van der Wilk & Rasmussen 2014, §3), in the whitened basis
//! of the single-process objective ([`super::sparse`], docs/math.md §3.2).
//!
//! The driver factors `L Lᵀ = K_uu + jitter·I` once per evaluation ([`kuu_factor`], the
//! in-process jitter policy) and sends `L` to the workers. With `V_s = L⁻¹K_{Z X_s}` the bound
//! depends on the data only through `Ā = Σ_s V_sV_sᵀ`, `b = Σ_s V_s y_s`, `c = Σ_s y_sᵀy_s`,
//! `g = Σ_s Σ_i (k_ii − q_i)` (`q_i = ‖V_i‖²`) and `n`. With `B = I + Ā/σ²` and `γ = b/σ²`:
//!
//! `F = −n/2 ln 2π − ½[n ln σ² + ln|B|] − ½(c/σ² − γᵀB⁻¹γ) − g/(2σ²)`
//!
//! (Woodbury on `Q_ff + σ²I`, Titsias 2009 eq. 9). Every matrix the driver factors or inverts
//! is `K_uu` or `B`, whose condition number is that of the data's fit, never `K_uu`'s square:
//! the unwhitened sums `K_{ZX}K_{XZ}` of Gal et al. lose all digits once cond(K_uu) ≳ 1e8
//! (long lengthscales, large σ_f²), where these agree with the single-process bound to 1e-8.
//!
//! The gradient takes the single-process objective's adjoints (see `objective_and_gradient`
//! in [`super::sparse`]): with `w = B⁻¹γ`, `β_i = (y_i − V_iᵀw)/σ²`, `a = L⁻ᵀVβ` (`Vβ` as
//! `(b − Āw)/σ²`, which is `w` in exact arithmetic but carries a step of refinement),
//! `F̄_s = C V_s + aβ_sᵀ` with `C = L⁻ᵀ(I − B⁻¹)/σ²`, `∂F/∂k_ii = −1/(2σ²)`, and the K_uu part
//! `P̄ = −½aaᵀ + L⁻ᵀ[½(I − B⁻¹) − ½Ā/σ²]L⁻¹`, whose `a` comes from the shards' point-by-point
//! `Σ V_iβ_i` (at cond(K_uu) ≈ 1e10 the sums' `(b − Āw)/σ²` costs the gradient a digit).
//! Map: [`vfe_shard_stats`], reduce: [`ShardStats::combine`], then [`vfe_global`], map:
//! [`vfe_shard_gradient`], reduce: [`VfeShardGradient::combine`], then [`vfe_gradient`].
//!
//! Each map step walks its shard in row blocks ([`row_blocks`]), so a worker's memory is
//! O(M² + block·M) whatever the shard's size.

use faer::{Mat, MatRef};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};

use super::row_blocks::RowBlocks;
use super::whitened_blocks::kuu_cholesky;
use crate::linalg::{add_outer, sandwich_inv};

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Elements of one block's M×rows matrices (`K_{ZX}`, `V`, `F̄`): 2²¹ doubles = 16 MB each.
const BLOCK_ELEMENTS: usize = 1 << 21;

/// Rows per block for `m` inducing inputs: at most `BLOCK_ELEMENTS`/M, at least 256.
pub fn block_rows(m: usize) -> usize {
    (BLOCK_ELEMENTS / m.max(1)).max(256)
}

/// `(start, len)` of the row blocks that cover `n` rows for `m` inducing inputs.
pub fn row_blocks(n: usize, m: usize) -> impl Iterator<Item = (usize, usize)> {
    let b = block_rows(m);
    (0..n.div_ceil(b)).map(move |k| (k * b, b.min(n - k * b)))
}

/// `L Lᵀ = K_uu + jitter·I` at (θ, Z), with the single-process objective's jitter: what the
/// driver computes once per evaluation and sends to every shard.
pub fn kuu_factor(kernel: &Kernel, z: MatRef<'_, f64>) -> Result<Cholesky> {
    kuu_cholesky(kernel, z)
}

/// A `K_uu` factor received from the driver: `l` must be M×M with a positive, finite diagonal
/// (its strict upper triangle is ignored); `jitter` is what the driver reported.
pub fn kuu_factor_from_parts(l: Mat<f64>, jitter: f64, m: usize) -> Result<Cholesky> {
    if l.nrows() != m || l.ncols() != m {
        return Err(Error::ShapeMismatch {
            what: "K_uu factor",
            expected: format!("{m}×{m}"),
            found: format!("{}×{}", l.nrows(), l.ncols()),
        });
    }
    if let Some(i) = (0..m).find(|&i| !(l[(i, i)] > 0.0 && l[(i, i)].is_finite())) {
        return Err(Error::InvalidParameter {
            name: "K_uu factor diagonal",
            value: l[(i, i)],
            reason: "must be positive and finite",
        });
    }
    for j in 0..m {
        for i in j..m {
            if !l[(i, j)].is_finite() {
                return Err(Error::InvalidParameter {
                    name: "K_uu factor entry",
                    value: l[(i, j)],
                    reason: "must be finite",
                });
            }
        }
    }
    Ok(Cholesky::from_lower(l, jitter))
}

/// One block of points in the whitened basis given the driver's `L` (docs/math.md §3.2).
pub(crate) struct ShardBasis {
    /// `F = K(Z, X)` (M×rows).
    pub kzx: Mat<f64>,
    /// `V = L⁻¹F` (M×rows).
    pub v: Mat<f64>,
    /// `k(x_i, x_i)`.
    pub kdiag: Vec<f64>,
    /// `q_i = ‖V_{:,i}‖² = [Q_ff]_ii`.
    pub q: Vec<f64>,
    /// `Λ_ii = σ² + α_s·max(k_ii − q_i, 0)` (docs/math.md §3.2, eq. 11).
    pub lambda: Vec<f64>,
}

/// [`ShardBasis`] of the points `x` at (θ, σ², Z) with the driver's factor `l_uu`.
pub(crate) fn shard_basis(
    kernel: &Kernel,
    l_uu: &Cholesky,
    noise: f64,
    alpha_s: f64,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
) -> Result<ShardBasis> {
    let kzx = kernel.cross(z, x)?;
    Ok(ShardBasis::of_cross(
        kzx,
        l_uu,
        kernel.diag(x),
        noise,
        alpha_s,
    ))
}

impl ShardBasis {
    /// The basis of points with cross-covariance `kzx = K(Z, X)` and prior variances `kdiag`
    /// in the whitened basis of `l_uu`: `V = L⁻¹F`, `q_i = ‖V_{:,i}‖²`, `Λ_ii`.
    pub(crate) fn of_cross(
        kzx: Mat<f64>,
        l_uu: &Cholesky,
        kdiag: Vec<f64>,
        noise: f64,
        alpha_s: f64,
    ) -> Self {
        let mut v = kzx.clone();
        l_uu.solve_lower_in_place(v.as_mut());
        let q = linalg::col_sq_norms(&v);
        let lambda = kdiag
            .iter()
            .zip(&q)
            .map(|(k, q)| noise + alpha_s * (k - q).max(0.0))
            .collect();
        ShardBasis {
            kzx,
            v,
            kdiag,
            q,
            lambda,
        }
    }
}

/// The data's part of the VFE bound on one shard (or, combined, on all of them).
#[derive(Clone, Debug, PartialEq)]
pub struct ShardStats {
    /// `Ā = V Vᵀ` (M×M), `V = L⁻¹K_{ZX}`.
    pub vv: Mat<f64>,
    /// `b = V y` (M).
    pub vy: Vec<f64>,
    /// `c = yᵀy`.
    pub yy: f64,
    /// `g = Σ_i (k(x_i, x_i) − q_i)`, the trace of `K_ff − Q_ff` summed point by point.
    pub trace_gap: f64,
    /// Number of points.
    pub n: usize,
}

impl ShardStats {
    fn zero(m: usize) -> Self {
        Self {
            vv: crate::memory::zeros(m, m),
            vy: vec![0.0; m],
            yy: 0.0,
            trace_gap: 0.0,
            n: 0,
        }
    }

    /// Add `other`'s sums to these (shapes checked by the callers).
    fn add(&mut self, other: ShardStats) {
        self.vv += &other.vv;
        for (a, b) in self.vy.iter_mut().zip(&other.vy) {
            *a += b;
        }
        self.yy += other.yy;
        self.trace_gap += other.trace_gap;
        self.n += other.n;
    }

    /// The statistics of the union of two shards (the reduce step).
    pub fn combine(&self, other: &ShardStats) -> Result<ShardStats> {
        check_len(other.vy.len(), self.vy.len(), "shard statistics")?;
        Ok(ShardStats {
            vv: &self.vv + &other.vv,
            vy: self.vy.iter().zip(&other.vy).map(|(x, y)| x + y).collect(),
            yy: self.yy + other.yy,
            trace_gap: self.trace_gap + other.trace_gap,
            n: self.n + other.n,
        })
    }
}

/// `found == expected`, else a shape error naming `what`.
pub(crate) fn check_len(found: usize, expected: usize, what: &'static str) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            what,
            expected: format!("length {expected}"),
            found: format!("{found}"),
        })
    }
}

/// A shard's shape (`x` N×D, `y` N, Z M×D, `L` M×M) and finite inputs.
pub(crate) fn check_shard(
    z: MatRef<'_, f64>,
    l_uu: &Cholesky,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<()> {
    if x.nrows() != y.len() || x.ncols() != z.ncols() {
        return Err(Error::ShapeMismatch {
            what: "shard",
            expected: format!("{} rows and {} columns", y.len(), z.ncols()),
            found: format!("{}×{}", x.nrows(), x.ncols()),
        });
    }
    check_len(l_uu.dim(), z.nrows(), "K_uu factor")?;
    crate::data::check_finite(x, "shard inputs")
}

/// The map step: one shard's sums at (θ, Z) in the basis of the driver's `L` ([`kuu_factor`]).
pub fn vfe_shard_stats(
    kernel: &Kernel,
    z: MatRef<'_, f64>,
    l_uu: &Cholesky,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<ShardStats> {
    check_shard(z, l_uu, x, y)?;
    let m = z.nrows();
    if y.is_empty() {
        return Ok(ShardStats::zero(m));
    }
    // Blocks in parallel, summed in a tree fixed by the block count (the same bits on any
    // number of threads); `Ā` on its lower triangle only, half the flops of the full product.
    let blocks = RowBlocks::new(y.len(), block_rows(m));
    let mut acc = blocks.sum(
        vec![],
        &|b, _| {
            let r = blocks.range(b);
            let (xb, yb) = (x.subrows(r.start, r.len()), &y[r.clone()]);
            let sb = shard_basis(kernel, l_uu, 0.0, 0.0, xb, z)?;
            let mut part = ShardStats::zero(m);
            linalg::syrk_lower_add(part.vv.as_mut(), sb.v.as_ref(), None);
            part.vy = linalg::mat_vec(&sb.v, yb);
            part.yy = linalg::dot(yb, yb);
            part.trace_gap = sb.kdiag.iter().zip(&sb.q).map(|(k, q)| k - q).sum::<f64>();
            part.n = r.len();
            Ok(part)
        },
        &|a, b| a.add(b),
    )?;
    linalg::symmetrise_from_lower(&mut acc.vv);
    Ok(acc)
}

/// Adjoints of the bound which each shard turns into its part of the gradient.
#[derive(Clone, Debug, PartialEq)]
pub struct VfeAdjoints {
    /// `C = L⁻ᵀ(I − B⁻¹)/σ²`, so that `F̄_s = C V_s + aβ_sᵀ` (M×M).
    pub c: Mat<f64>,
    /// `a = L⁻ᵀVβ` from the sums, `Vβ = (b − Āw)/σ²` (M).
    pub a: Vec<f64>,
    /// `w = B⁻¹γ`, so that `β_i = (y_i − V_iᵀw)/σ²` (M).
    pub w: Vec<f64>,
    /// The noise variance σ².
    pub noise: f64,
    /// `∂F/∂k(x_i, x_i) = −1/(2σ²)`.
    pub t_bar: f64,
}

/// The reduce step's result: the bound, the adjoints for the shards, and what the driver keeps
/// for [`vfe_gradient`].
#[derive(Clone, Debug)]
pub struct VfeGlobal {
    /// The VFE bound F.
    pub value: f64,
    /// What the shards need for their gradient parts.
    pub adjoints: VfeAdjoints,
    /// What the driver keeps for [`vfe_gradient`].
    pub driver: VfeDriverPart,
}

/// The driver's part of the VFE gradient, completed by the shards' sums in [`vfe_gradient`].
#[derive(Clone, Debug, PartialEq)]
pub struct VfeDriverPart {
    /// `L⁻ᵀXL⁻¹`, the K_uu adjoint `P̄` without its `−½aaᵀ` term (M×M), which waits for the
    /// shards' `Σ V_iβ_i`.
    pub pbar_sandwich: Mat<f64>,
    /// ln σ²'s gradient entry without the shards' `½σ²Σβ_i²`.
    pub ln_noise_gradient: f64,
}

/// The bound, the shards' adjoints and the driver's part of the gradient from the combined
/// statistics (M×M work only).
pub fn vfe_global(
    kernel: &Kernel,
    noise: f64,
    z: MatRef<'_, f64>,
    l_uu: &Cholesky,
    s: &ShardStats,
) -> Result<VfeGlobal> {
    let m = z.nrows();
    check_len(s.vy.len(), m, "shard statistics")?;
    check_len(l_uu.dim(), m, "K_uu factor")?;
    check_square(&s.vv, m, "shard statistics")?;
    kernel.check_input_dim(z.ncols())?;
    if !(noise > 0.0 && noise.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "noise_variance",
            value: noise,
            reason: "must be positive and finite",
        });
    }
    let (n, mf) = (s.n as f64, m as f64);
    // B = I + Ā/σ², γ = b/σ² (the single-process `sparse_reference::whitened` with Λ = σ²I).
    let inv = 1.0 / noise;
    let bmat = Mat::from_fn(m, m, |i, j| {
        s.vv[(i, j)] * inv + if i == j { 1.0 } else { 0.0 }
    });
    let l_b = Cholesky::factor(bmat.as_ref(), &JitterPolicy::default(), "I + VΛ⁻¹Vᵀ")?;
    let gamma: Vec<f64> = s.vy.iter().map(|v| v * inv).collect();
    let lb_gamma = l_b.solve_lower_vec(&gamma);
    let quad = s.yy * inv - linalg::dot(&lb_gamma, &lb_gamma);
    let ln_det = l_b.ln_det() + n * noise.ln();
    // Titsias 2009 eq. 9 through Woodbury (module doc).
    let value = -0.5 * quad - 0.5 * ln_det - 0.5 * n * LN_2PI - s.trace_gap / (2.0 * noise);
    let w = l_b.solve_vec(&gamma);
    // Vβ = Σ_i V_i(y_i − V_iᵀw)/σ² = (b − Āw)/σ²: equal to w in exact arithmetic, its residual
    // form carries a step of refinement. (The shards' own Σ V_iβ_i, summed point by point, is
    // more accurate still and replaces it in P̄: vfe_gradient.)
    let aw = linalg::mat_vec(&s.vv, &w);
    let vbeta: Vec<f64> = s.vy.iter().zip(&aw).map(|(b, aw)| (b - aw) * inv).collect();
    let a = l_uu.solve_upper_vec(&vbeta);
    let b_inv = l_b.inverse()?;
    let tr_binv: f64 = (0..m).map(|k| b_inv[(k, k)]).sum();
    // ln σ²'s part here: σ²[½(−n/σ² + (M − tr B⁻¹)/σ²) + g/(2σ⁴)]; the shards add ½σ²Σβ_i².
    let noise_bar =
        0.5 * (-n / noise + (mf - tr_binv) / noise) + s.trace_gap / (2.0 * noise * noise);
    // C = L⁻ᵀ(2q̄I − B⁻¹/σ²) with q̄ = 1/(2σ²).
    let mut c = Mat::from_fn(m, m, |i, j| {
        -b_inv[(i, j)] * inv + if i == j { inv } else { 0.0 }
    });
    l_uu.solve_upper_in_place(c.as_mut());
    // L⁻ᵀXL⁻¹ with X = ½(I − B⁻¹) − q̄σ²(B − I), B − I = Ā/σ².
    let x_mid = Mat::from_fn(m, m, |i, j| {
        let id = if i == j { 1.0 } else { 0.0 };
        0.5 * (id - b_inv[(i, j)]) - 0.5 * s.vv[(i, j)] * inv
    });
    Ok(VfeGlobal {
        value,
        adjoints: VfeAdjoints {
            c,
            a,
            w,
            noise,
            t_bar: -0.5 * inv,
        },
        driver: VfeDriverPart {
            pbar_sandwich: sandwich_inv(l_uu, x_mid),
            ln_noise_gradient: noise * noise_bar,
        },
    })
}

/// `a` is M×M, else a shape error naming `what`.
pub(crate) fn check_square(a: &Mat<f64>, m: usize, what: &'static str) -> Result<()> {
    if a.nrows() == m && a.ncols() == m {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            what,
            expected: format!("{m}×{m}"),
            found: format!("{}×{}", a.nrows(), a.ncols()),
        })
    }
}

/// Append an M×D matrix's rows to a gradient vector (the `vec(Z)` layout).
pub(crate) fn push_rows(out: &mut Vec<f64>, dz: &Mat<f64>) {
    for a in 0..dz.nrows() {
        for t in 0..dz.ncols() {
            out.push(dz[(a, t)]);
        }
    }
}

/// One shard's (or, combined, all shards') part of the VFE gradient.
#[derive(Clone, Debug, PartialEq)]
pub struct VfeShardGradient {
    /// The gradient through `K_{ZX_s}` and `diag K_{X_s}` in `[θ…, ln σ², vec(Z)]`, with
    /// `½σ²Σ_i β_i²` in ln σ²'s entry.
    pub gradient: Vec<f64>,
    /// `Σ_i V_i β_i` (M), summed point by point.
    pub v_beta: Vec<f64>,
}

impl VfeShardGradient {
    /// The gradient parts of the union of two shards (the reduce step).
    pub fn combine(&self, other: &Self) -> Result<Self> {
        check_len(other.v_beta.len(), self.v_beta.len(), "VFE gradient parts")?;
        if other.gradient.len() != self.gradient.len() {
            return Err(Error::ShapeMismatch {
                what: "VFE gradient parts",
                expected: format!("{} entries", self.gradient.len()),
                found: format!("{}", other.gradient.len()),
            });
        }
        Ok(Self {
            gradient: add(&self.gradient, &other.gradient),
            v_beta: add(&self.v_beta, &other.v_beta),
        })
    }
}

/// The entrywise sum of two vectors.
pub(crate) fn add(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// The second map step: one shard's part of the gradient, through `F̄_s = C V_s + aβ_sᵀ`,
/// `∂F/∂k(x_i, x_i) = t̄` and, in ln σ²'s entry, `½σ²Σ_i β_i²`; and its `Σ_i V_iβ_i`.
pub fn vfe_shard_gradient(
    kernel: &Kernel,
    z: MatRef<'_, f64>,
    l_uu: &Cholesky,
    x: MatRef<'_, f64>,
    y: &[f64],
    adj: &VfeAdjoints,
) -> Result<VfeShardGradient> {
    check_shard(z, l_uu, x, y)?;
    let (m, d) = (z.nrows(), z.ncols());
    check_len(adj.a.len(), m, "VFE adjoints")?;
    check_len(adj.w.len(), m, "VFE adjoints")?;
    check_square(&adj.c, m, "VFE adjoint C")?;
    let nk = kernel.n_params();
    let mut gradient = vec![0.0; nk + 1 + m * d];
    let mut v_beta = vec![0.0; m];
    let mut beta_sq = 0.0;
    for (start, rows) in row_blocks(y.len(), m) {
        let (xb, yb) = (x.subrows(start, rows), &y[start..start + rows]);
        let sb = shard_basis(kernel, l_uu, adj.noise, 0.0, xb, z)?;
        let vt_w = linalg::mat_t_vec(&sb.v, &adj.w);
        let beta: Vec<f64> = (0..rows).map(|i| (yb[i] - vt_w[i]) / adj.noise).collect();
        beta_sq += linalg::dot(&beta, &beta);
        for (acc, v) in v_beta.iter_mut().zip(linalg::mat_vec(&sb.v, &beta)) {
            *acc += v;
        }
        let mut fbar = &adj.c * &sb.v;
        add_outer(&mut fbar, &adj.a, &beta);
        let (g_theta, dz) = kernel.cross_adjoint(z, xb, sb.kzx, &fbar);
        let gdiag = kernel.diag_grad_contract(xb, &vec![adj.t_bar; rows]);
        for k in 0..nk {
            gradient[k] += g_theta[k] + gdiag[k];
        }
        for a in 0..m {
            for t in 0..d {
                gradient[nk + 1 + a * d + t] += dz[(a, t)];
            }
        }
    }
    gradient[nk] = adj.noise * 0.5 * beta_sq;
    Ok(VfeShardGradient { gradient, v_beta })
}

/// The gradient in `[θ…, ln σ², vec(Z)]` from the driver's part and the shards' summed parts:
/// `P̄ = L⁻ᵀXL⁻¹ − ½aaᵀ` with `a = L⁻ᵀΣ_sV_sβ_s` (the shards' point-by-point sum, which keeps
/// `P̄` as accurate as the single-process objective's at cond(K_uu) ~ 1e10), contracted with
/// `∂K_uu` once.
pub fn vfe_gradient(
    kernel: &Kernel,
    z: MatRef<'_, f64>,
    l_uu: &Cholesky,
    global: &VfeDriverPart,
    shards: &VfeShardGradient,
) -> Result<Vec<f64>> {
    let (m, d) = (z.nrows(), z.ncols());
    let nk = kernel.n_params();
    check_len(shards.v_beta.len(), m, "VFE gradient parts")?;
    check_len(l_uu.dim(), m, "K_uu factor")?;
    check_square(&global.pbar_sandwich, m, "VFE global state")?;
    if shards.gradient.len() != nk + 1 + m * d {
        return Err(Error::ShapeMismatch {
            what: "VFE gradient parts",
            expected: format!("{} entries", nk + 1 + m * d),
            found: format!("{}", shards.gradient.len()),
        });
    }
    let a = l_uu.solve_upper_vec(&shards.v_beta);
    let pbar = Mat::from_fn(m, m, |i, j| {
        global.pbar_sandwich[(i, j)] - 0.5 * a[i] * a[j]
    });
    let mut gradient = kernel.gram_grad_contract(z, pbar.as_ref());
    gradient.push(global.ln_noise_gradient);
    push_rows(&mut gradient, &kernel.gram_grad_z(z, pbar.as_ref()));
    for (g, s) in gradient.iter_mut().zip(&shards.gradient) {
        *g += s;
    }
    Ok(gradient)
}
