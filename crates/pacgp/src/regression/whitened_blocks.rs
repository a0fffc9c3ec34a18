//! The whitened factors of docs/math.md §3.2 accumulated over row blocks ([`super::row_blocks`]):
//! the first pass every sparse objective makes over the data.
//!
//! With `L Lᵀ = K_uu + jitter·I` and, per block b, `F_b = K(Z, X_b)`, `V_b = L⁻¹F_b`,
//! `q_i = ‖V_{:,i}‖²`, `Λ_ii = σ_i² + α_s·max(k_ii − q_i, 0)`: `B = I + Σ_b V_bΛ_b⁻¹V_bᵀ` (the
//! lower triangle by a symmetric product), `γ = Σ_b V_bΛ_b⁻¹y_b`, `Σ y²/λ` and `Σ ln λ`. Memory:
//! O(M²) for the sums plus one block's `F_b`, `V_b` per thread; the per-point vectors are O(N).

use std::borrow::Cow;

use faer::{Mat, MatRef};

use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};

use super::row_blocks::{
    add_mat, add_vec, recycle, release, scratch, scratch_zeroed, BlockCache, RowBlocks, Streaming,
};

/// Jitter added to `K_uu`'s diagonal, GPflow's default (docs/math.md §8.1 uses the same 1e-6).
pub const KUU_JITTER: f64 = 1e-6;

/// One evaluation's fixed inputs: kernel at θ, inducing inputs Z, data and how to stream.
#[derive(Clone, Copy)]
pub(crate) struct SparseData<'a> {
    pub kernel: &'a Kernel,
    pub x: MatRef<'a, f64>,
    pub y: &'a [f64],
    pub z: MatRef<'a, f64>,
    pub blocks: RowBlocks,
}

impl<'a> SparseData<'a> {
    /// The problem at (θ, Z) on `(x, y)`, in blocks of `stream.block_rows` rows.
    pub fn new(
        kernel: &'a Kernel,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        z: MatRef<'a, f64>,
        stream: &Streaming,
    ) -> Self {
        Self {
            kernel,
            x,
            y,
            z,
            blocks: RowBlocks::new(x.nrows(), stream.block_rows),
        }
    }

    /// `F_b = K(Z, X_b)` (M × block rows), in a [`scratch`] matrix.
    pub fn kzx(&self, b: usize) -> Result<Mat<f64>> {
        let r = self.blocks.range(b);
        let mut f = scratch(self.z.nrows(), r.len());
        self.kernel
            .inducing_cross_into(self.z, self.x.subrows(r.start, r.len()), f.as_mut())?;
        Ok(f)
    }

    /// `V_b = L⁻¹F_b` (given `F_b`), on the calling thread, in a [`scratch`] matrix.
    pub fn whiten(l_uu: &Cholesky, f: &Mat<f64>) -> Mat<f64> {
        let mut v = scratch(f.nrows(), f.ncols());
        v.copy_from(f);
        l_uu.solve_lower_in_place_seq(v.as_mut());
        v
    }
}

/// `K(Z, Z)` (without jitter) and the factor `L Lᵀ = K(Z, Z) + jitter·I`, both from
/// [`Kernel::inducing_cross`] (the same bits as the `K(Z, X)` blocks).
pub(crate) fn kuu_factor(kernel: &Kernel, z: MatRef<'_, f64>) -> Result<(Mat<f64>, Cholesky)> {
    let kzz = kernel.inducing_cross(z, z)?;
    let mut kuu = kzz.clone();
    for i in 0..z.nrows() {
        kuu[(i, i)] += KUU_JITTER;
    }
    let l = Cholesky::factor(kuu.as_ref(), &JitterPolicy::default(), "K_uu")?;
    Ok((kzz, l))
}

/// The sums of the first pass and the per-point vectors it leaves.
pub(crate) struct WhitenedSums {
    /// `K(Z, Z)` without jitter (for the adjoint of `K_uu`).
    pub kzz: Mat<f64>,
    /// `L Lᵀ = K_uu + jitter·I`.
    pub l_uu: Cholesky,
    /// `k(x_i, x_i)`.
    pub kdiag: Vec<f64>,
    /// `q_i = ‖V_{:,i}‖²`.
    pub q: Vec<f64>,
    /// `Λ_ii`.
    pub lambda: Vec<f64>,
    /// `L_B L_Bᵀ = B = I + VΛ⁻¹Vᵀ`.
    pub l_b: Cholesky,
    /// `γ = VΛ⁻¹y`.
    pub gamma: Vec<f64>,
    /// `Σ_i y_i²/λ_i`.
    pub y_lambda_y: f64,
    /// `Σ_i ln λ_i`.
    pub ln_lambda: f64,
    /// The `V_b` kept for later passes (if they fitted the budget).
    pub v_cache: BlockCache,
}

impl WhitenedSums {
    /// `ln N(y | 0, Q_ff + Λ)` by Woodbury: `−½[Σ y²/λ − ‖L_B⁻¹γ‖²] − ½[ln det B + Σ ln λ] − (n/2) ln 2π`.
    pub fn ln_marginal(&self) -> f64 {
        const LN_2PI: f64 = 1.837_877_066_409_345_5;
        let lb_gamma = self.l_b.solve_lower_vec(&self.gamma);
        let quad = self.y_lambda_y - linalg::dot(&lb_gamma, &lb_gamma);
        let n = self.q.len() as f64;
        -0.5 * quad - 0.5 * (self.l_b.ln_det() + self.ln_lambda) - 0.5 * n * LN_2PI
    }
}

/// Block sums of the first pass.
struct Pass1 {
    b: Mat<f64>,
    gamma: Vec<f64>,
    y_lambda_y: f64,
    ln_lambda: f64,
}

/// The first pass at (θ, Z) with point i's noise `noise(i)` in `Λ_ii`; keeps `V_b` of the first
/// `cached_blocks` blocks for later passes (the caller's share of the cache budget).
pub(crate) fn whitened_sums(
    data: &SparseData<'_>,
    noise: &(impl Fn(usize) -> f64 + Sync),
    alpha_s: f64,
    cached_blocks: usize,
) -> Result<WhitenedSums> {
    let (n, m) = (data.x.nrows(), data.z.nrows());
    let (kzz, l_uu) = kuu_factor(data.kernel, data.z)?;
    let v_cache = BlockCache::new(cached_blocks);
    let (mut kdiag, mut q, mut lambda) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let sums = data.blocks.sum(
        vec![&mut kdiag, &mut q, &mut lambda],
        &|b, mut out| {
            let r = data.blocks.range(b);
            let v = v_cache.get_or(b, || {
                let f = data.kzx(b)?;
                let v = SparseData::whiten(&l_uu, &f);
                recycle(f);
                Ok(v)
            })?;
            let kd = data.kernel.diag(data.x.subrows(r.start, r.len()));
            let mut inv_lam = vec![0.0; r.len()];
            let mut ly = vec![0.0; r.len()];
            let (mut y_lambda_y, mut ln_lambda) = (0.0, 0.0);
            for (k, i) in r.clone().enumerate() {
                let qi = v.col_as_slice(k).iter().map(|v| v * v).sum::<f64>();
                let lam = noise(i) + alpha_s * (kd[k] - qi).max(0.0);
                (out[0][k], out[1][k], out[2][k]) = (kd[k], qi, lam);
                inv_lam[k] = 1.0 / lam;
                ly[k] = data.y[i] * inv_lam[k];
                y_lambda_y += data.y[i] * data.y[i] / lam;
                ln_lambda += lam.ln();
            }
            let mut bm = scratch_zeroed(m, m);
            linalg::syrk_lower_add(bm.as_mut(), v.as_ref().as_ref(), Some(&inv_lam));
            let gamma = mat_vec_seq(v.as_ref().as_ref(), &ly);
            release(v);
            Ok(Pass1 {
                b: bm,
                gamma,
                y_lambda_y,
                ln_lambda,
            })
        },
        &|a, b| {
            add_mat(&mut a.b, &b.b);
            recycle(b.b);
            add_vec(&mut a.gamma, &b.gamma);
            a.y_lambda_y += b.y_lambda_y;
            a.ln_lambda += b.ln_lambda;
        },
    )?;
    let mut bmat = sums.b;
    for k in 0..m {
        bmat[(k, k)] += 1.0;
    }
    let l_b = Cholesky::factor(bmat.as_ref(), &JitterPolicy::default(), "I + VΛ⁻¹Vᵀ")?;
    Ok(WhitenedSums {
        kzz,
        l_uu,
        kdiag,
        q,
        lambda,
        l_b,
        gamma: sums.gamma,
        y_lambda_y: sums.y_lambda_y,
        ln_lambda: sums.ln_lambda,
        v_cache,
    })
}

/// `A x` on the calling thread (one faer product; no split of the inner dimension).
pub(crate) fn mat_vec_seq(a: MatRef<'_, f64>, x: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.nrows()];
    faer::linalg::matmul::matmul(
        faer::ColMut::from_slice_mut(&mut out).as_mat_mut(),
        faer::Accum::Replace,
        a,
        faer::ColRef::from_slice(x).as_mat(),
        1.0,
        faer::Par::Seq,
    );
    out
}

/// `Aᵀ x` on the calling thread (one dot product per column).
pub(crate) fn mat_t_vec_seq(a: MatRef<'_, f64>, x: &[f64]) -> Vec<f64> {
    (0..a.ncols())
        .map(|j| a.col(j).iter().zip(x).map(|(a, x)| a * x).sum())
        .collect()
}

impl WhitenedSums {
    /// `F_b` and `V_b = L⁻¹F_b` of block b (`V_b` kept from the first pass or recomputed).
    pub fn f_and_v(
        &self,
        data: &SparseData<'_>,
        b: usize,
    ) -> Result<(Mat<f64>, Cow<'_, Mat<f64>>)> {
        let f = data.kzx(b)?;
        let v = self
            .v_cache
            .get_or(b, || Ok(SparseData::whiten(&self.l_uu, &f)))?;
        Ok((f, v))
    }
}

/// One block's share of a gradient: kernel θ and Z through `K(Z, X_b)` and `diag K(X_b)`, an
/// M×M sum (lower triangle) and scalars; added over blocks by [`GradPart::add`].
pub(crate) struct GradPart {
    /// `Σ G∘∂K/∂θ` plus the diagonal's part.
    pub theta: Vec<f64>,
    /// `∂/∂Z Σ G∘K` (M×D).
    pub dz: Mat<f64>,
    /// An M×M sum the objective needs after the pass (lower triangle), or 0×0.
    pub mm: Mat<f64>,
    /// Scalar sums.
    pub scalars: Vec<f64>,
}

impl GradPart {
    /// The adjoints of block b's `K(Z, X_b)` (given as `f`, recycled) against `g` (recycled)
    /// and of its `diag K(X_b)` against `kbar`, with an M×M sum and scalars.
    pub fn of_block(
        data: &SparseData<'_>,
        b: usize,
        mut f: Mat<f64>,
        g: Mat<f64>,
        kbar: &[f64],
        mm: Mat<f64>,
        scalars: Vec<f64>,
    ) -> Self {
        let r = data.blocks.range(b);
        let xb = data.x.subrows(r.start, r.len());
        let (mut theta, dz) = data.kernel.cross_adjoint_in(data.z, xb, &mut f, &g);
        recycle(f);
        recycle(g);
        add_vec(&mut theta, &data.kernel.diag_grad_contract(xb, kbar));
        Self {
            theta,
            dz,
            mm,
            scalars,
        }
    }

    /// `self ← self + other`.
    pub fn add(&mut self, other: GradPart) {
        add_vec(&mut self.theta, &other.theta);
        add_mat(&mut self.dz, &other.dz);
        add_mat(&mut self.mm, &other.mm);
        recycle(other.mm);
        add_vec(&mut self.scalars, &other.scalars);
    }
}

/// The gradient `[θ…, ∂/∂ln σ², vec(Z) row by row]` from the blocks' parts, the adjoint `P̄`
/// of `K_uu` (symmetric) and `∂/∂ln σ²`.
pub(crate) fn assemble_gradient(
    data: &SparseData<'_>,
    kzz: &Mat<f64>,
    parts: &GradPart,
    pbar: &Mat<f64>,
    d_ln_noise: f64,
) -> Vec<f64> {
    let (gp, dzp) = data
        .kernel
        .inducing_gram_adjoint(data.z, kzz.as_ref(), pbar.as_ref());
    let mut grad = parts.theta.clone();
    add_vec(&mut grad, &gp);
    grad.push(d_ln_noise);
    let (m, d) = (data.z.nrows(), data.z.ncols());
    for a in 0..m {
        for t in 0..d {
            grad.push(parts.dz[(a, t)] + dzp[(a, t)]);
        }
    }
    grad
}

/// `L Lᵀ = K_uu + jitter·I` at (θ, Z), with the same `K_uu` bits as the streamed objectives
/// ([`kuu_factor`]).
pub(crate) fn kuu_cholesky(kernel: &Kernel, z: MatRef<'_, f64>) -> Result<Cholesky> {
    Ok(kuu_factor(kernel, z)?.1)
}
