//! The sparse training objectives (FITC, VFE, DTC and the power-EP family between them) and
//! their analytic gradients in `[θ…, ln σ², vec(Z)]`, streamed over row blocks
//! (docs/math.md §3.2–3.3), and [`NegSparseObjective`], the form the optimiser minimises.

use faer::{Mat, MatRef};

use super::SparseMethod;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg::{self, add_outer_seq, sandwich_inv};
use crate::optim::Objective;
use crate::regression::row_blocks::{release, scratch, scratch_zeroed, Streaming};
use crate::regression::whitened_blocks::{
    assemble_gradient, mat_t_vec_seq, whitened_sums, GradPart, SparseData, WhitenedSums,
};

/// The sparse training objective (to be maximised) and, with `with_grad`, its gradient in
/// `[θ…, ln σ², vec(Z) row by row]`, streamed over row blocks ([`whitened_sums`], then one
/// gradient pass).
///
/// With `W = P⁻¹F`, `R = ββᵀ − Σ⁻¹` and `Σ = FᵀP⁻¹F + Λ`, the log density's adjoints are
/// `F̄ = WR = L⁻ᵀ[(Vβ)βᵀ − B⁻¹VΛ⁻¹]`, `P̄ = −½WRWᵀ = −½aaᵀ + ½L⁻ᵀ(I − B⁻¹)L⁻¹`
/// (`a = L⁻ᵀVβ`, using `WΣ⁻¹ = A⁻¹FΛ⁻¹` and `WΣ⁻¹Wᵀ = P⁻¹ − A⁻¹`) and `Λ̄_ii = ½R_ii`;
/// `q_i = F_iᵀP⁻¹F_i` then adds `2L⁻ᵀV diag(q̄)` to F̄ and `−L⁻ᵀV diag(q̄)VᵀL⁻¹` to P̄.
/// `Vβ = B⁻¹γ` (as `VΛ⁻¹Vᵀ = B − I`), so `a` is known after the first pass.
pub(super) fn objective_and_gradient(
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
fn first_adjoints(w: &WhitenedSums) -> Result<(Vec<f64>, Vec<f64>, Mat<f64>)> {
    let bg = w.l_b.solve_vec(&w.gamma);
    Ok((w.l_uu.solve_upper_vec(&bg), bg, w.l_b.inverse()?))
}

/// The gradient ([`assemble_gradient`]) from the blocks' `parts`, `∂/∂ln σ²` and the adjoint
/// of `K_uu`, `P̄ = −½aaᵀ + L⁻ᵀXL⁻¹` for a symmetric X.
fn gradient_through_kuu(
    data: &SparseData<'_>,
    w: &WhitenedSums,
    a: &[f64],
    x_mid: Mat<f64>,
    parts: &GradPart,
    d_ln_noise: f64,
) -> Vec<f64> {
    let mut pbar = sandwich_inv(&w.l_uu, x_mid);
    let m = a.len();
    for j in 0..m {
        for i in 0..m {
            pbar[(i, j)] -= 0.5 * a[i] * a[j];
        }
    }
    assemble_gradient(data, &w.kzz, parts, &pbar, d_ln_noise)
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
    let (a, bg, b_inv) = first_adjoints(w)?;
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
    let bmat = linalg::product(w.l_b.l(), w.l_b.l().transpose(), "B = L_B L_Bᵀ")?;
    let x_mid = Mat::from_fn(m, m, |i, j| {
        let id = if i == j { 1.0 } else { 0.0 };
        0.5 * (id - b_inv[(i, j)]) - q_bar * noise * (bmat[(i, j)] - id)
    });
    let d_ln_noise = noise * noise_bar;
    Ok(gradient_through_kuu(data, w, &a, x_mid, &parts, d_ln_noise))
}

/// FITC gradient: `s_i = ‖L_B⁻¹V_i‖²`, `Λ̄_ii = ½(β_i² − 1/λ_i + s_i/λ_i²)`, `q̄ = −Λ̄` where
/// the clamp of `Λ = σ² + max(k − q, 0)` is inactive, `F̄ = L⁻ᵀH` with
/// `H = (Vβ)βᵀ − L_B⁻ᵀ(L_B⁻¹V)Λ⁻¹ + 2V diag(q̄)`, and `X = ½(I − B⁻¹) − V diag(q̄)Vᵀ`.
fn fitc_gradient(data: &SparseData<'_>, w: &WhitenedSums, noise: f64) -> Result<Vec<f64>> {
    let m = data.z.nrows();
    let (a, bg, b_inv) = first_adjoints(w)?;
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
    let d_ln_noise = noise * parts.scalars[0];
    Ok(gradient_through_kuu(data, w, &a, x_mid, &parts, d_ln_noise))
}

/// Negative sparse objective over `[θ…, ln σ², vec(Z)]`, for the optimiser.
pub struct NegSparseObjective<'a> {
    kernel: Kernel,
    method: SparseMethod,
    x: MatRef<'a, f64>,
    pub(super) y: &'a [f64],
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
