//! Sparse GP regression with M inducing inputs Z (docs/math.md §3.2–3.3): FITC, VFE (Titsias) and
//! DTC, and the power-EP family between them (`α_s`), each with its own training objective,
//! analytic gradients in kernel θ, ln σ² and Z, and its own posterior (VFE/DTC: `Λ = σ²I`;
//! FITC: `Λ = σ²I + diag(K_ff − Q_ff)`), all in O(N M²).
//!
//! Shared algebra (docs/math.md §3.2): `L Lᵀ = K_uu`, `V = L⁻¹K_uf`, `q_i = ‖V_{:,i}‖²`,
//! `B = I + VΛ⁻¹Vᵀ`, `γ = VΛ⁻¹y`; `ln N(y | 0, Q_ff + Λ)` by Woodbury.

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bounds::HyperGrid;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky};
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, Objective, OptimReport, Restarts};
use crate::posterior::GaussianPosterior;
use crate::regression::exact::check_regression_inputs;
use crate::regression::inducing_init::{initial_inducing_with_targets, InducingInit};
use crate::regression::row_blocks::{release, scratch, scratch_zeroed, Streaming};
use crate::regression::whitened_blocks::{
    assemble_gradient, mat_t_vec_seq, whitened_sums, GradPart, SparseData, WhitenedSums,
};

/// Which sparse approximation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SparseMethod {
    /// Titsias' variational free energy: `ln N(y|0, Q_ff + σ²I) − tr(K_ff − Q_ff)/(2σ²)`.
    Vfe,
    /// Fully independent training conditional: `ln N(y|0, Q_ff + diag(K_ff − Q_ff) + σ²I)`.
    Fitc,
    /// Deterministic training conditional: `ln N(y|0, Q_ff + σ²I)`.
    Dtc,
}

impl SparseMethod {
    /// `α_s` of the posterior's `Λ = σ² + α_s·diag(K_ff − Q_ff)` (docs/math.md §3.2, eq. 11).
    pub fn alpha_s(self) -> f64 {
        match self {
            SparseMethod::Fitc => 1.0,
            SparseMethod::Vfe | SparseMethod::Dtc => 0.0,
        }
    }
}

pub use super::whitened_blocks::KUU_JITTER;

/// `L⁻ᵀ X L⁻¹` for a symmetric M×M `X` (two triangular solves, M³ flops).
pub(crate) fn sandwich_inv(l: &Cholesky, x: Mat<f64>) -> Mat<f64> {
    let mut y = x;
    l.solve_upper_in_place(y.as_mut()); // L⁻ᵀX
    let mut out = y.transpose().to_owned(); // X L⁻¹
    l.solve_upper_in_place(out.as_mut()); // L⁻ᵀ X L⁻¹
    out
}

/// `L Lᵀ = K_uu + jitter·I` at (θ, Z), with the same `K_uu` bits as the streamed objectives
/// ([`crate::regression::whitened_blocks::kuu_factor`]).
pub(crate) fn kuu_cholesky(kernel: &Kernel, z: MatRef<'_, f64>) -> Result<Cholesky> {
    Ok(crate::regression::whitened_blocks::kuu_factor(kernel, z)?.1)
}

/// The per-point whitened factors (everything but `B` and `γ`, which sum over the data):
/// the unstreamed form the reference objectives (`sparse_reference`) check the streamed ones by.
#[cfg(test)]
pub(crate) struct WhitenedBasis {
    /// `L Lᵀ = K_uu + jitter·I`.
    pub l_uu: Cholesky,
    /// `F = K(Z, X)` (M×N).
    pub kzx: Mat<f64>,
    /// `V = L⁻¹F` (M×N).
    pub v: Mat<f64>,
    /// `k(x_i, x_i)`.
    pub kdiag: Vec<f64>,
    /// `q_i = ‖V_{:,i}‖²`.
    pub q: Vec<f64>,
    /// `Λ_ii = σ² + α_s·max(k_ii − q_i, 0)` (docs/math.md §3.2, eq. 11).
    pub lambda: Vec<f64>,
}

/// [`WhitenedBasis`] at (θ, σ², Z) on the points `x`.
#[cfg(test)]
pub(crate) fn whitened_basis(
    kernel: &Kernel,
    noise: f64,
    alpha_s: f64,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
) -> Result<WhitenedBasis> {
    whitened_basis_per_point(kernel, |_| noise, alpha_s, x, z)
}

/// [`WhitenedBasis`] with point `i`'s noise `noise(i)` in `Λ_ii` (per-point posterior noise,
/// docs/math.md §9.4.2).
#[cfg(test)]
pub(crate) fn whitened_basis_per_point(
    kernel: &Kernel,
    noise: impl Fn(usize) -> f64,
    alpha_s: f64,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
) -> Result<WhitenedBasis> {
    let l_uu = kuu_cholesky(kernel, z)?;
    let kzx = kernel.inducing_cross(z, x);
    let mut v = kzx.clone();
    l_uu.solve_lower_in_place(v.as_mut());
    let kdiag = kernel.diag(x);
    let q = linalg::col_sq_norms(&v);
    let lambda: Vec<f64> = kdiag
        .iter()
        .zip(&q)
        .enumerate()
        .map(|(i, (k, q))| noise(i) + alpha_s * (k - q).max(0.0))
        .collect();
    Ok(WhitenedBasis {
        l_uu,
        kzx,
        v,
        kdiag,
        q,
        lambda,
    })
}

/// The sparse training objective (to be maximised) and, with `with_grad`, its gradient in
/// `[θ…, ln σ², vec(Z) row by row]`, streamed over row blocks ([`whitened_sums`], then one
/// gradient pass).
///
/// With `W = P⁻¹F`, `R = ββᵀ − Σ⁻¹` and `Σ = FᵀP⁻¹F + Λ`, the log density's adjoints are
/// `F̄ = WR = L⁻ᵀ[(Vβ)βᵀ − B⁻¹VΛ⁻¹]`, `P̄ = −½WRWᵀ = −½aaᵀ + ½L⁻ᵀ(I − B⁻¹)L⁻¹`
/// (`a = L⁻ᵀVβ`, using `WΣ⁻¹ = A⁻¹FΛ⁻¹` and `WΣ⁻¹Wᵀ = P⁻¹ − A⁻¹`) and `Λ̄_ii = ½R_ii`;
/// `q_i = F_iᵀP⁻¹F_i` then adds `2L⁻ᵀV diag(q̄)` to F̄ and `−L⁻ᵀV diag(q̄)VᵀL⁻¹` to P̄.
/// `Vβ = B⁻¹γ` (as `VΛ⁻¹Vᵀ = B − I`), so `a` is known after the first pass.
fn objective_and_gradient(
    kernel: &Kernel,
    noise: f64,
    method: SparseMethod,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    y: &[f64],
    stream: &Streaming,
    with_grad: bool,
) -> Result<(f64, Vec<f64>)> {
    let data = SparseData::new(kernel, x, y, z, stream);
    let (n, m) = (x.nrows(), z.nrows());
    let cached = if with_grad {
        stream.cached_blocks(&data.blocks, m, 1)
    } else {
        0
    };
    let w = whitened_sums(&data, &|_| noise, method.alpha_s(), cached)?;
    let trace_gap: f64 = (0..n).map(|i| w.kdiag[i] - w.q[i]).sum();
    let mut value = w.ln_marginal();
    if method == SparseMethod::Vfe {
        value -= trace_gap / (2.0 * noise);
    }
    if !with_grad {
        return Ok((value, vec![]));
    }
    let grad = match method {
        SparseMethod::Vfe | SparseMethod::Dtc => {
            isotropic_gradient(&data, &w, noise, method == SparseMethod::Vfe, trace_gap)?
        }
        SparseMethod::Fitc => fitc_gradient(&data, &w, noise)?,
    };
    Ok((value, grad))
}

/// `a = L⁻ᵀVβ = L⁻ᵀB⁻¹γ`, `Vβ = B⁻¹γ` and `B⁻¹` after the first pass.
fn first_adjoints(w: &WhitenedSums) -> (Vec<f64>, Vec<f64>, Mat<f64>) {
    let bg = w.l_b.solve_vec(&w.gamma);
    (w.l_uu.solve_upper_vec(&bg), bg, w.l_b.inverse())
}

/// `P̄ = −½aaᵀ + L⁻ᵀXL⁻¹` for a symmetric X.
fn kuu_adjoint(w: &WhitenedSums, a: &[f64], x_mid: Mat<f64>) -> Mat<f64> {
    let mut pbar = sandwich_inv(&w.l_uu, x_mid);
    let m = a.len();
    for j in 0..m {
        for i in 0..m {
            pbar[(i, j)] -= 0.5 * a[i] * a[j];
        }
    }
    pbar
}

/// VFE (`vfe`) or DTC gradient (`Λ = σ²I`): `Σ_i s_i = tr(B⁻¹VVᵀ) = σ²(M − tr B⁻¹)`,
/// `F̄ = aβᵀ + L⁻ᵀ(2q̄I − B⁻¹/σ²)V` (VFE's `−tr(K_ff − Q_ff)/(2σ²)` gives `q̄ = −k̄ = 1/(2σ²)`)
/// and `X = ½(I − B⁻¹) − q̄σ²(B − I)`: one M×M by M×N product per block beyond V.
fn isotropic_gradient(
    data: &SparseData<'_>,
    w: &WhitenedSums,
    noise: f64,
    vfe: bool,
    trace_gap: f64,
) -> Result<Vec<f64>> {
    let (n, m) = (data.x.nrows(), data.z.nrows());
    let (a, bg, b_inv) = first_adjoints(w);
    let q_bar = if vfe { 0.5 / noise } else { 0.0 };
    let mut c = Mat::from_fn(m, m, |i, j| {
        -b_inv[(i, j)] / noise + if i == j { 2.0 * q_bar } else { 0.0 }
    });
    w.l_uu.solve_upper_in_place(c.as_mut());
    let parts = data.blocks.sum(
        vec![],
        &|b, _| {
            let r = data.blocks.range(b);
            let (f, v) = w.f_and_v(data, b)?;
            let vt_bg = mat_t_vec_seq(v.as_ref().as_ref(), &bg);
            let beta: Vec<f64> = r
                .clone()
                .map(|i| (data.y[i] - vt_bg[i - r.start]) / noise)
                .collect();
            let mut g = scratch(m, r.len());
            faer::linalg::matmul::matmul(
                g.as_mut(),
                faer::Accum::Replace,
                c.as_ref(),
                v.as_ref().as_ref(),
                1.0,
                faer::Par::Seq,
            );
            release(v);
            add_outer_seq(&mut g, &a, &beta);
            let beta_sq = beta.iter().map(|b| b * b).sum::<f64>();
            let kbar = vec![-q_bar; r.len()];
            Ok(GradPart::of_block(
                data,
                b,
                f,
                g,
                &kbar,
                Mat::zeros(0, 0),
                vec![beta_sq],
            ))
        },
        &|p, q| p.add(q),
    )?;
    let tr_binv: f64 = (0..m).map(|k| b_inv[(k, k)]).sum();
    let mut noise_bar = 0.5 * (parts.scalars[0] - n as f64 / noise + (m as f64 - tr_binv) / noise);
    if vfe {
        noise_bar += trace_gap / (2.0 * noise * noise);
    }
    let bmat = linalg::product(w.l_b.l(), w.l_b.l().transpose());
    let x_mid = Mat::from_fn(m, m, |i, j| {
        let id = if i == j { 1.0 } else { 0.0 };
        0.5 * (id - b_inv[(i, j)]) - q_bar * noise * (bmat[(i, j)] - id)
    });
    let pbar = kuu_adjoint(w, &a, x_mid);
    Ok(assemble_gradient(
        data,
        &w.kzz,
        &parts,
        &pbar,
        noise * noise_bar,
    ))
}

/// FITC gradient: `s_i = ‖L_B⁻¹V_i‖²`, `Λ̄_ii = ½(β_i² − 1/λ_i + s_i/λ_i²)`, `q̄ = −Λ̄` where
/// the clamp of `Λ = σ² + max(k − q, 0)` is inactive, `F̄ = L⁻ᵀH` with
/// `H = (Vβ)βᵀ − L_B⁻ᵀ(L_B⁻¹V)Λ⁻¹ + 2V diag(q̄)`, and `X = ½(I − B⁻¹) − V diag(q̄)Vᵀ`.
fn fitc_gradient(data: &SparseData<'_>, w: &WhitenedSums, noise: f64) -> Result<Vec<f64>> {
    let m = data.z.nrows();
    let (a, bg, b_inv) = first_adjoints(w);
    let lam = &w.lambda;
    let parts = data.blocks.sum(
        vec![],
        &|b, _| {
            let r = data.blocks.range(b);
            let (f, v_kept) = w.f_and_v(data, b)?;
            let v: &Mat<f64> = &v_kept;
            let vt_bg = mat_t_vec_seq(v.as_ref(), &bg);
            let mut yb = scratch(m, r.len());
            yb.copy_from(v);
            w.l_b.solve_lower_in_place_seq(yb.as_mut());
            let (nb, mut lam_bar_sum) = (r.len(), 0.0);
            let (mut beta, mut q_bar, mut kbar) = (vec![0.0; nb], vec![0.0; nb], vec![0.0; nb]);
            for (k, i) in r.clone().enumerate() {
                beta[k] = (data.y[i] - vt_bg[k]) / lam[i];
                let s = yb.col_as_slice(k).iter().map(|v| v * v).sum::<f64>();
                let lam_bar = 0.5 * (beta[k] * beta[k] - 1.0 / lam[i] + s / (lam[i] * lam[i]));
                lam_bar_sum += lam_bar;
                q_bar[k] = if w.kdiag[i] - w.q[i] >= 0.0 {
                    -lam_bar
                } else {
                    0.0
                };
                kbar[k] = -q_bar[k];
            }
            for (k, i) in r.clone().enumerate() {
                yb.col_as_slice_mut(k).iter_mut().for_each(|c| *c /= lam[i]);
            }
            w.l_b.solve_upper_in_place_seq(yb.as_mut());
            for k in 0..nb {
                let vk = v.col_as_slice(k);
                let c = yb.col_as_slice_mut(k);
                for t in 0..m {
                    c[t] = bg[t] * beta[k] - c[t] + 2.0 * vk[t] * q_bar[k];
                }
            }
            w.l_uu.solve_upper_in_place_seq(yb.as_mut());
            let mut vqv = scratch_zeroed(m, m);
            linalg::syrk_lower_add(vqv.as_mut(), v.as_ref(), Some(&q_bar));
            release(v_kept);
            Ok(GradPart::of_block(
                data,
                b,
                f,
                yb,
                &kbar,
                vqv,
                vec![lam_bar_sum],
            ))
        },
        &|p, q| p.add(q),
    )?;
    let mut vqv = parts.mm.clone();
    linalg::symmetrise_from_lower(&mut vqv);
    let x_mid = Mat::from_fn(m, m, |i, j| {
        0.5 * (if i == j { 1.0 } else { 0.0 } - b_inv[(i, j)]) - vqv[(i, j)]
    });
    let pbar = kuu_adjoint(w, &a, x_mid);
    Ok(assemble_gradient(
        data,
        &w.kzz,
        &parts,
        &pbar,
        noise * parts.scalars[0],
    ))
}

/// `A ← A + u vᵀ` on the calling thread.
pub(crate) fn add_outer_seq(a: &mut Mat<f64>, u: &[f64], v: &[f64]) {
    for (j, vj) in v.iter().enumerate() {
        for (ci, ui) in a.col_as_slice_mut(j).iter_mut().zip(u) {
            *ci += ui * vj;
        }
    }
}

/// `A ← A + u vᵀ`, column by column in parallel.
pub(crate) fn add_outer(a: &mut Mat<f64>, u: &[f64], v: &[f64]) {
    a.par_col_iter_mut().zip(v).for_each(|(c, vj)| {
        let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
        for (ci, ui) in c.iter_mut().zip(u) {
            *ci += ui * vj;
        }
    });
}

/// Negative sparse objective over `[θ…, ln σ², vec(Z)]`, for the optimiser.
pub struct NegSparseObjective<'a> {
    kernel: Kernel,
    method: SparseMethod,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    m: usize,
    stream: Streaming,
}

impl<'a> NegSparseObjective<'a> {
    /// The objective of `method` with `m` inducing inputs.
    pub fn new(
        kernel: &Kernel,
        method: SparseMethod,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        m: usize,
    ) -> Self {
        Self {
            kernel: kernel.clone(),
            method,
            x,
            y,
            m,
            stream: Streaming::default(),
        }
    }

    /// The same objective streamed with other block and cache sizes (same values to rounding).
    pub fn with_streaming(mut self, stream: Streaming) -> Self {
        self.stream = stream;
        self
    }

    /// Split a parameter vector into (kernel, σ², Z).
    pub fn unpack(&self, p: &[f64]) -> Result<(Kernel, f64, Mat<f64>)> {
        let nk = self.kernel.n_params();
        let d = self.x.ncols();
        let mut k = self.kernel.clone();
        k.set_params(&p[..nk])?;
        let z = Mat::from_fn(self.m, d, |a, t| p[nk + 1 + a * d + t]);
        Ok((k, p[nk].exp(), z))
    }

    /// Pack (kernel, σ², Z) into a parameter vector.
    pub fn pack(kernel: &Kernel, noise: f64, z: MatRef<'_, f64>) -> Vec<f64> {
        let mut p = kernel.params();
        p.push(noise.ln());
        for a in 0..z.nrows() {
            for t in 0..z.ncols() {
                p.push(z[(a, t)]);
            }
        }
        p
    }
}

impl Objective for NegSparseObjective<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_params() + 1 + self.m * self.x.ncols()
    }
    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (k, noise, z) = self.unpack(p)?;
        let (v, g) = objective_and_gradient(
            &k,
            noise,
            self.method,
            self.x,
            z.as_ref(),
            self.y,
            &self.stream,
            true,
        )?;
        Ok((-v, g.into_iter().map(|g| -g).collect()))
    }
}

/// A sparse GP at fixed (θ, σ², Z).
#[derive(Clone, Debug)]
pub struct SparseGp {
    /// Covariance function.
    pub kernel: Kernel,
    /// Noise variance σ².
    pub noise_variance: f64,
    /// Inducing inputs (M×D).
    pub z: Mat<f64>,
    /// Which approximation (decides the training objective and the posterior's Λ).
    pub method: SparseMethod,
}

fn check_sparse(x: MatRef<'_, f64>, y: &[f64], z: MatRef<'_, f64>, noise: f64) -> Result<()> {
    check_regression_inputs(x, y)?;
    if z.nrows() == 0 {
        return Err(Error::InvalidParameter {
            name: "number of inducing points M",
            value: 0.0,
            reason: "must be at least 1",
        });
    }
    if z.nrows() > x.nrows() {
        return Err(Error::InvalidParameter {
            name: "number of inducing points M",
            value: z.nrows() as f64,
            reason: "must not exceed N",
        });
    }
    if z.ncols() != x.ncols() {
        return Err(Error::ShapeMismatch {
            what: "inducing inputs",
            expected: format!("{} columns", x.ncols()),
            found: format!("{}", z.ncols()),
        });
    }
    crate::data::check_finite(z, "inducing inputs")?;
    if !(noise > 0.0 && noise.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "noise_variance",
            value: noise,
            reason: "must be positive and finite",
        });
    }
    Ok(())
}

impl SparseGp {
    /// The method's training objective (log marginal likelihood or ELBO) at these parameters.
    pub fn objective(&self, x: MatRef<'_, f64>, y: &[f64]) -> Result<f64> {
        check_sparse(x, y, self.z.as_ref(), self.noise_variance)?;
        Ok(objective_and_gradient(
            &self.kernel,
            self.noise_variance,
            self.method,
            x,
            self.z.as_ref(),
            y,
            &Streaming::default(),
            false,
        )?
        .0)
    }

    /// The posterior with `Λ = σ² + α_s diag(K_ff − Q_ff)` (docs/math.md §3.2, eq. 11), in whitened
    /// precision form: `α = L⁻ᵀB⁻¹γ`.
    pub fn posterior_with_alpha(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        alpha_s: f64,
    ) -> Result<GaussianPosterior> {
        check_sparse(x, y, self.z.as_ref(), self.noise_variance)?;
        if !(0.0..=1.0).contains(&alpha_s) {
            return Err(Error::InvalidParameter {
                name: "alpha_s",
                value: alpha_s,
                reason: "must lie in [0, 1]",
            });
        }
        let data = SparseData::new(&self.kernel, x, y, self.z.as_ref(), &Streaming::default());
        let f = whitened_sums(&data, &|_| self.noise_variance, alpha_s, 0)?;
        let binv_gamma = f.l_b.solve_vec(&f.gamma);
        let alpha = f.l_uu.solve_upper_vec(&binv_gamma);
        Ok(GaussianPosterior::whitened(
            self.kernel.clone(),
            self.z.clone(),
            alpha,
            f.l_uu,
            f.l_b,
        ))
    }

    /// The method's own posterior (VFE/DTC: `α_s = 0`; FITC: `α_s = 1`).
    pub fn posterior(&self, x: MatRef<'_, f64>, y: &[f64]) -> Result<GaussianPosterior> {
        self.posterior_with_alpha(x, y, self.method.alpha_s())
    }
}

/// Settings of [`train_sparse`].
#[derive(Clone, Debug)]
pub struct SparseConfig {
    /// Initial inducing inputs.
    pub init: InducingInit,
    /// Seed of the initialisation.
    pub seed: u64,
    /// Optimiser settings.
    pub lbfgs: LbfgsConfig,
    /// Box for kernel θ (ln space).
    pub theta_bounds: (f64, f64),
    /// Optimise θ inside this grid's range and snap it onto the grid afterwards.
    pub snap: Option<HyperGrid>,
    /// Optimise first on a seeded subsample of this many rows ([`optim::drive_warm`]).
    pub pretrain: Option<usize>,
}

impl Default for SparseConfig {
    fn default() -> Self {
        Self {
            init: InducingInit::KMeans,
            seed: 0,
            lbfgs: LbfgsConfig {
                max_iter: 300,
                ..Default::default()
            },
            theta_bounds: boxes::LN_THETA,
            snap: None,
            pretrain: None,
        }
    }
}

/// Train θ (within `cfg.theta_bounds`, ln space, snapped onto `cfg.snap` if given), σ² and Z
/// by maximising the method's objective with the one driver ([`optim::drive`]).
pub fn train_sparse(
    kernel_init: &Kernel,
    noise_init: f64,
    x: MatRef<'_, f64>,
    y: &[f64],
    m: usize,
    method: SparseMethod,
    cfg: &SparseConfig,
) -> Result<(SparseGp, OptimReport, Option<optim::Pretraining>)> {
    let z0 = initial_inducing_with_targets(kernel_init, noise_init, x, y, m, cfg.init, cfg.seed)?;
    check_sparse(x, y, z0.as_ref(), noise_init)?;
    kernel_init.check_input_dim(x.ncols())?;
    let obj = NegSparseObjective::new(kernel_init, method, x, y, m);
    let sub = PretrainRows::draw(x, y, cfg.pretrain, cfg.seed);
    let warm_obj = sub
        .as_ref()
        .map(|s| NegSparseObjective::new(kernel_init, method, s.x.as_ref(), &s.y, m));
    let warm = warm_obj.as_ref().map(|o| optim::WarmStart {
        objective: o,
        rows: o.y.len(),
        of: y.len(),
    });
    let p0 = NegSparseObjective::pack(kernel_init, noise_init, z0.as_ref());
    let nk = kernel_init.n_params();
    let mut bounds = vec![cfg.theta_bounds; nk];
    bounds.push(boxes::LN_NOISE);
    bounds.extend(std::iter::repeat_n(boxes::FREE, m * x.ncols()));
    let snap = GridSnap::leading(cfg.snap, nk);
    let (min, pretraining) = optim::drive_warm(
        &obj,
        warm.as_ref(),
        &p0,
        bounds,
        &cfg.lbfgs,
        &SparseConfig::default().lbfgs,
        &Restarts::default(),
        snap.as_ref(),
    )?;
    let (kernel, noise_variance, z) = obj.unpack(&min.params)?;
    Ok((
        SparseGp {
            kernel,
            noise_variance,
            z,
            method,
        },
        min.report,
        pretraining,
    ))
}

/// The rows of a warm start's seeded subsample ([`crate::data::split::subsample`]).
pub struct PretrainRows {
    /// Their inputs.
    pub x: Mat<f64>,
    /// Their targets.
    pub y: Vec<f64>,
}

impl PretrainRows {
    /// `k` rows drawn with `seed`, or `None` without a warm start or when `k ≥ N`.
    pub fn draw(x: MatRef<'_, f64>, y: &[f64], k: Option<usize>, seed: u64) -> Option<Self> {
        let rows = crate::data::split::subsample(y.len(), k?, seed)?;
        Some(Self {
            x: linalg::select_rows(x, &rows),
            y: rows.iter().map(|&i| y[i]).collect(),
        })
    }
}
