//! Sparse PAC-GP (kl-PAC-SGP / sqrt-PAC-SGP; seed 004, docs/math.md §3.2 and §5): minimise the
//! PAC-Bayes bound over kernel θ, the posterior noise σ² and the inducing inputs Z, with
//! Q in the FITC (`α_s = 1`, default) or VFE (`α_s = 0`) parametrisation of eq. (11).
//!
//! Written with `P = K_uu`, `F = K_uf`, `A = P + FΛ⁻¹Fᵀ`, `c = FΛ⁻¹y`, `e = A⁻¹c`:
//! `KL = ½[tr(PA⁻¹) + eᵀPe − M + ln det A − ln det P]`, `μ_i = F_iᵀe`,
//! `v_i = k_ii − F_iᵀP⁻¹F_i + F_iᵀA⁻¹F_i` (equal to docs/math.md §3.2's whitened forms); the gradient
//! is reverse-mode by hand through these M×M and M×N matrices, O(NM²) per evaluation.

use faer::{Mat, MatRef};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg;
use crate::linalg::{add_outer_seq, sandwich_inv};
use crate::loss::RegressionLoss;
use crate::posterior::GaussianKlTerms;
use crate::regression::row_blocks::{
    add_mat, add_vec, recycle, release, scratch, scratch_zeroed, BlockCache, Streaming,
};
use crate::regression::sparse::{NegSparseObjective, SparseMethod};
use crate::regression::whitened_blocks::{
    assemble_gradient, mat_t_vec_seq, mat_vec_seq, whitened_sums, GradPart, SparseData,
    WhitenedSums,
};

use crate::bounds::BoundValue;

use super::bound::{BoundObjective, LatentFamily, MinimisedBound, RiskAndKl};

#[cfg(test)]
mod dense_reference;
mod fit;

pub use fit::{
    fit_pac_sgp, fit_pac_sgp_with, pac_sgp_search, theta_choice, PacSgpBound, PacSgpFit,
    PacSgpSettings, DEFAULT_MAX_ITER,
};

/// PAC-SGP's latent family: `q(u)` of eq. (11) over `[θ…, ln σ², vec(Z)]` on standardised
/// data with the ε-band loss, streamed over row blocks.
pub struct PacSgpFamily<'a> {
    pub(super) kernel: Kernel,
    pub(super) x: MatRef<'a, f64>,
    pub(super) y: &'a [f64],
    pub(super) m: usize,
    pub(super) alpha_s: f64,
    pub(super) loss: RegressionLoss,
    /// How the row blocks are streamed (block size, cache budget).
    stream: Streaming,
}

/// The sparse PAC-GP objective: the bound over [`PacSgpFamily`].
pub type PacSgpObjective<'a> = BoundObjective<PacSgpFamily<'a>>;

/// The checks PAC-SGP's bound needs of its settings (α_s ∈ [0, 1], ε > 0), shared by the
/// in-process and the sharded objective.
pub(crate) fn check_pac_sgp_setup(alpha_s: f64, loss: &RegressionLoss) -> Result<()> {
    if !(0.0..=1.0).contains(&alpha_s) {
        return Err(Error::InvalidParameter {
            name: "alpha_s",
            value: alpha_s,
            reason: "must lie in [0, 1]",
        });
    }
    super::check_band(loss)
}

impl<'a> BoundObjective<PacSgpFamily<'a>> {
    /// The bound with `m` inducing inputs, posterior parametrisation `alpha_s` and loss.
    pub fn new(
        kernel: &Kernel,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        m: usize,
        alpha_s: f64,
        loss: RegressionLoss,
        bound: MinimisedBound,
    ) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x, y)?;
        kernel.check_input_dim(x.ncols())?;
        if m == 0 || m > x.nrows() {
            return Err(Error::InvalidParameter {
                name: "number of inducing points M",
                value: m as f64,
                reason: "must lie in 1..=N",
            });
        }
        check_pac_sgp_setup(alpha_s, &loss)?;
        let family = PacSgpFamily {
            kernel: kernel.clone(),
            x,
            y,
            m,
            alpha_s,
            loss,
            stream: Streaming::default(),
        };
        Ok(Self::over(family, bound))
    }

    /// The same objective streamed with other block and cache sizes (same values to rounding).
    pub fn with_streaming(mut self, stream: Streaming) -> Self {
        self.family_mut().stream = stream;
        self
    }

    /// The kernel, σ² and Z at `p`.
    pub(crate) fn unpack(&self, p: &[f64]) -> Result<(Kernel, f64, Mat<f64>)> {
        self.family().unpack(p)
    }
}

/// One evaluation of [`PacSgpFamily`] at (θ, Z) and the points' noises: the first two passes'
/// sums and what the adjoint pass needs besides the bound's partials.
pub struct PacSgpEvaluation {
    kernel: Kernel,
    z: Mat<f64>,
    s2: f64,
    w: WhitenedSums,
    y_cache: BlockCache,
    e: Vec<f64>,
    bg: Vec<f64>,
    b_inv: Mat<f64>,
    marg: Marginals,
    g_mu: Vec<f64>,
    g_v: Vec<f64>,
}

impl PacSgpFamily<'_> {
    /// The kernel, σ² and Z at `p`.
    pub(crate) fn unpack(&self, p: &[f64]) -> Result<(Kernel, f64, Mat<f64>)> {
        NegSparseObjective::new(&self.kernel, SparseMethod::Fitc, self.x, self.y, self.m).unpack(p)
    }

    /// `R_S` and `KL` at (`kernel`, `z`) with point i's posterior noise `noise(i)` in `Λ_ii`
    /// (the heteroscedastic form passes its own; `s2` is the shared σ² the ln σ² slot of
    /// the gradient is taken in) and, with `with_grad`, what [`Self::pull_back_at`] needs. The
    /// first two passes over row blocks: the whitened sums ([`whitened_sums`]), the marginals
    /// and risk.
    pub(crate) fn evaluate_at(
        &self,
        kernel: Kernel,
        noise: &(dyn Fn(usize) -> f64 + Sync),
        s2: f64,
        z: Mat<f64>,
        with_grad: bool,
    ) -> Result<(RiskAndKl, PacSgpEvaluation)> {
        let (n, m) = (self.x.nrows(), self.m);
        let nf = n as f64;
        let data = SparseData::new(&kernel, self.x, self.y, z.as_ref(), &self.stream);
        let cached = if with_grad {
            self.stream.cached_blocks(&data.blocks, m, 2)
        } else {
            0
        };
        let w = whitened_sums(&data, &|i| noise(i), self.alpha_s, cached)?;
        // e = A⁻¹c = L⁻ᵀB⁻¹γ; tr(PA⁻¹) = tr B⁻¹, eᵀPe = ‖B⁻¹γ‖², ln det A − ln det P = ln det B.
        let bg = w.l_b.solve_vec(&w.gamma);
        let e = w.l_uu.solve_upper_vec(&bg);
        let b_inv = w.l_b.inverse()?;
        let tr_binv: f64 = (0..m).map(|a| b_inv[(a, a)]).sum();
        let kl = GaussianKlTerms::site_form(tr_binv, linalg::dot(&bg, &bg), m, w.l_b.ln_det()).kl();
        let y_cache = BlockCache::new(cached);
        let (mut g_mu, mut g_v) = (vec![0.0; n], vec![0.0; n]);
        let marg = self.marginals_pass(&data, &w, &y_cache, &bg, &mut g_mu, &mut g_v, with_grad)?;
        let risk = marg.risk / nf;
        let eval = PacSgpEvaluation {
            kernel,
            z,
            s2,
            w,
            y_cache,
            e,
            bg,
            b_inv,
            marg,
            g_mu,
            g_v,
        };
        Ok((RiskAndKl::new(risk, kl), eval))
    }

    /// The third pass: from the bound's partials `b`, the gradient in `[θ…, ln s2, vec(Z)]`
    /// (without the θ prior's share) and the adjoint `∂B/∂Λ_ii` per point.
    pub(crate) fn pull_back_at(
        &self,
        ev: PacSgpEvaluation,
        b: &BoundValue,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let nf = self.x.nrows() as f64;
        let data = SparseData::new(&ev.kernel, self.x, self.y, ev.z.as_ref(), &self.stream);
        let adj = Adjoints {
            e: ev.e,
            bg: ev.bg,
            b_inv: ev.b_inv,
            klb: b.d_complexity / nf,
            scale: b.d_risk / nf,
            g_mu: ev.g_mu,
            g_v: ev.g_v,
        };
        self.gradient(&data, &ev.w, &ev.y_cache, &adj, ev.marg, ev.s2)
    }

    /// [`Self::evaluate_at`] at `p`: one σ² for every point.
    fn evaluate_p(&self, p: &[f64], with_grad: bool) -> Result<(RiskAndKl, PacSgpEvaluation)> {
        let (kernel, s2, z) = self.unpack(p)?;
        self.evaluate_at(kernel, &|_| s2, s2, z, with_grad)
    }

    /// Second pass: `μ_i = F_iᵀe = V_iᵀB⁻¹γ` (from `bg = B⁻¹γ`, without `e`'s cond(L)), `s_i = F_iᵀA⁻¹F_i = ‖L_B⁻¹V_i‖²`, `v_i = k_ii − q_i + s_i`, the
    /// risk and its derivatives `∂r_i/∂μ_i`, `∂r_i/∂v_i` (into `g_mu`, `g_v`); with the gradient
    /// also `Σ Y diag(∂r/∂v) Yᵀ` (`Y = L_B⁻¹V`, lower triangle) and `Σ V ∂r/∂μ`.
    fn marginals_pass(
        &self,
        data: &SparseData<'_>,
        w: &WhitenedSums,
        y_cache: &BlockCache,
        bg: &[f64],
        g_mu: &mut [f64],
        g_v: &mut [f64],
        with_grad: bool,
    ) -> Result<Marginals> {
        let m = self.m;
        data.blocks.sum(
            vec![g_mu, g_v],
            &|b, mut out| {
                let r = data.blocks.range(b);
                let (f, v) = w.f_and_v(data, b)?;
                let yb = y_cache.get_or(b, || Ok(self.whiten_b(w, &v)))?;
                let mu = mat_t_vec_seq(v.as_ref().as_ref(), bg);
                recycle(f);
                let mut risk = 0.0;
                for (k, i) in r.clone().enumerate() {
                    let s = yb.col_as_slice(k).iter().map(|v| v * v).sum::<f64>();
                    let var = (w.kdiag[i] - w.q[i] + s).max(1e-12);
                    let pr = self.loss.point_risk(self.y[i], mu[k], var);
                    risk += pr.risk;
                    (out[0][k], out[1][k]) = (pr.d_mean, pr.d_var);
                }
                let (mut g0, mut vg) = (Mat::zeros(0, 0), vec![]);
                if with_grad {
                    g0 = scratch_zeroed(m, m);
                    linalg::syrk_lower_add(g0.as_mut(), yb.as_ref().as_ref(), Some(out[1]));
                    vg = mat_vec_seq(v.as_ref().as_ref(), out[0]);
                }
                release(yb);
                release(v);
                Ok(Marginals { risk, g0, vg })
            },
            &|a, b| {
                a.risk += b.risk;
                add_mat(&mut a.g0, &b.g0);
                recycle(b.g0);
                add_vec(&mut a.vg, &b.vg);
            },
        )
    }

    /// `Y_b = L_B⁻¹V_b`.
    fn whiten_b(&self, w: &WhitenedSums, v: &Mat<f64>) -> Mat<f64> {
        let mut yb = scratch(v.nrows(), v.ncols());
        yb.copy_from(v);
        w.l_b.solve_lower_in_place_seq(yb.as_mut());
        yb
    }

    /// Reverse mode through the module docs' formulas (adjoints of KL, μ, v first), with every
    /// M×N step a triangular solve or one product on a block's contiguous columns:
    /// `Ā = KL̄·½(A⁻¹ − A⁻¹PA⁻¹ − ehᵀ − heᵀ) − ½(teᵀ + etᵀ) − A⁻¹F diag(v̄)FᵀA⁻¹`,
    /// `F̄ = eμ̄ᵀ + c̄(y/Λ)ᵀ + 2A⁻¹F diag(v̄) + 2ĀFΛ⁻¹ + 2P⁻¹F diag(q̄)`,
    /// `P̄ = KL̄·½(A⁻¹ + eeᵀ − P⁻¹) + Ā − P⁻¹F diag(q̄)FᵀP⁻¹`, with `A⁻¹F = L⁻ᵀL_B⁻ᵀL_B⁻¹V`
    /// and `P⁻¹F = L⁻ᵀV`. Every M×M adjoint is formed whitened (`C = LᵀĀL = B̄`,
    /// `P̄ = L⁻ᵀ[…]L⁻¹`, see [`super::pac_sgp_sharded`]), never as `A⁻¹ − P⁻¹`, whose
    /// difference loses all digits once cond(K_uu) ≳ 1e9. `C` needs the second pass's sums,
    /// `F̄` and `P̄` then one more pass over the row blocks.
    fn gradient(
        &self,
        data: &SparseData<'_>,
        w: &WhitenedSums,
        y_cache: &BlockCache,
        adj: &Adjoints,
        marg: Marginals,
        s2: f64,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let (n, m) = (self.x.nrows(), self.m);
        let (l, lb, lam) = (&w.l_uu, &w.l_b, &w.lambda);
        let (e, klb, scale) = (&adj.e, adj.klb, adj.scale);
        let (bg, b_inv) = (&adj.bg, &adj.b_inv);
        // Whitened adjoints (objective::pac_sgp_sharded's module doc): C = LᵀĀL = B̄ and
        // c̄ = L⁻ᵀγ̄ are formed from B⁻¹ and w = B⁻¹γ alone, never from A⁻¹ and P⁻¹, whose
        // difference loses all digits once cond(K_uu) ≳ 1e9.
        let h = lb.solve_vec(bg); // B⁻¹w
        let vmub: Vec<f64> = marg.vg.iter().map(|g| scale * g).collect(); // Vμ̄
        let u = lb.solve_vec(&vmub);
        let b2 = linalg::product(b_inv.as_ref(), b_inv.as_ref(), "B⁻²")?;
        let mut g0 = marg.g0;
        linalg::symmetrise_from_lower(&mut g0);
        // B⁻¹V diag(v̄)VᵀB⁻¹ = L_B⁻ᵀ(Y diag(v̄) Yᵀ)L_B⁻¹
        let bvb = sandwich_inv(lb, Mat::from_fn(m, m, |a, b| scale * g0[(a, b)]));
        let sym = |x: &[f64], y: &[f64], a: usize, b: usize| 0.5 * (x[a] * y[b] + y[a] * x[b]);
        let c_mat = Mat::from_fn(m, m, |a, b| {
            klb * (0.5 * (b_inv[(a, b)] - b2[(a, b)]) - sym(&h, bg, a, b))
                - sym(&u, bg, a, b)
                - bvb[(a, b)]
        });
        let gbar: Vec<f64> = (0..m).map(|a| klb * h[a] + u[a]).collect();
        let cbar = l.solve_upper_vec(&gbar);
        let mut lamb = vec![0.0; n];
        let parts = data.blocks.sum(
            vec![&mut lamb],
            &|b, mut out| {
                let r = data.blocks.range(b);
                let (f, v_kept) = w.f_and_v(data, b)?;
                let v: &Mat<f64> = &v_kept;
                let yb = y_cache.get_or(b, || Ok(self.whiten_b(w, v)))?;
                let nb = r.len();
                let mut cv = scratch(m, nb);
                faer::linalg::matmul::matmul(
                    cv.as_mut(),
                    faer::Accum::Replace,
                    c_mat.as_ref(),
                    v.as_ref(),
                    1.0,
                    faer::Par::Seq,
                );
                let ftc = mat_t_vec_seq(v.as_ref(), &gbar); // F_iᵀc̄ = V_iᵀγ̄
                let (mut qb, mut kb, mut vb, mut s2b) =
                    (vec![0.0; nb], vec![0.0; nb], vec![0.0; nb], 0.0);
                for (k, i) in r.clone().enumerate() {
                    let fa = linalg::dot(v.col_as_slice(k), cv.col_as_slice(k));
                    let lb_i = -(fa + ftc[k] * self.y[i]) / (lam[i] * lam[i]);
                    out[0][k] = lb_i;
                    s2b += lb_i;
                    // Λ uses max(k − q, 0): no gradient flows where the clamp is active.
                    let through = if w.kdiag[i] - w.q[i] >= 0.0 {
                        self.alpha_s * lb_i
                    } else {
                        0.0
                    };
                    vb[k] = scale * adj.g_v[i];
                    qb[k] = -vb[k] - through;
                    kb[k] = vb[k] + through;
                }
                // P̄'s −L⁻ᵀ(V diag(q̄) Vᵀ)L⁻¹, summed over blocks (lower triangle).
                let mut pq = scratch_zeroed(m, m);
                linalg::syrk_lower_add(pq.as_mut(), v.as_ref(), Some(&qb));
                // F̄ = eμ̄ᵀ + c̄(y/Λ)ᵀ + L⁻ᵀ[2L_B⁻ᵀ(L_B⁻¹V diag(v̄)) + 2CVΛ⁻¹ + 2V diag(q̄)].
                let mut ybv = scratch(m, nb);
                for k in 0..nb {
                    let (dst, src) = (ybv.col_as_slice_mut(k), yb.col_as_slice(k));
                    for (d, s) in dst.iter_mut().zip(src) {
                        *d = s * vb[k];
                    }
                }
                release(yb);
                lb.solve_upper_in_place_seq(ybv.as_mut());
                for (k, i) in r.clone().enumerate() {
                    let (vi, yi) = (v.col_as_slice(k), ybv.col_as_slice(k));
                    let c = cv.col_as_slice_mut(k);
                    for a in 0..m {
                        c[a] = 2.0 * (yi[a] + c[a] / lam[i] + vi[a] * qb[k]);
                    }
                }
                recycle(ybv);
                release(v_kept);
                l.solve_upper_in_place_seq(cv.as_mut());
                let mub: Vec<f64> = r.clone().map(|i| scale * adj.g_mu[i]).collect();
                let yl: Vec<f64> = r.clone().map(|i| self.y[i] / lam[i]).collect();
                add_outer_seq(&mut cv, e, &mub);
                add_outer_seq(&mut cv, &cbar, &yl);
                Ok(GradPart::of_block(data, b, f, cv, &kb, pq, vec![s2b]))
            },
            &|p, q| p.add(q),
        )?;
        // P̄ = KL̄·½[A⁻¹ + eeᵀ − P⁻¹] + Ā − L⁻ᵀ(V diag(q̄) Vᵀ)L⁻¹
        //   = L⁻ᵀ[KL̄·½(B⁻¹ − I + wwᵀ) + C − V diag(q̄)Vᵀ]L⁻¹.
        let mut vqv = parts.mm.clone();
        linalg::symmetrise_from_lower(&mut vqv);
        let inner = Mat::from_fn(m, m, |a, b| {
            let id = if a == b { 1.0 } else { 0.0 };
            klb * 0.5 * (b_inv[(a, b)] - id + bg[a] * bg[b]) + c_mat[(a, b)] - vqv[(a, b)]
        });
        let pbar = sandwich_inv(l, inner);
        let grad = assemble_gradient(data, &w.kzz, &parts, &pbar, s2 * parts.scalars[0]);
        Ok((grad, lamb))
    }
}

/// The second pass's sums: `Σ r_i`, and with the gradient `Σ Y diag(∂r/∂v) Yᵀ` (lower
/// triangle) and `Σ V ∂r/∂μ`.
struct Marginals {
    risk: f64,
    g0: Mat<f64>,
    vg: Vec<f64>,
}

/// What the gradient pass needs from the first two: `e = A⁻¹c`, `B⁻¹γ`, `B⁻¹`, `KL̄ = ∂B/∂KL`
/// per point (`klb`), `∂B/∂R_S / N` (`scale`) and the per-point risk derivatives.
struct Adjoints {
    e: Vec<f64>,
    bg: Vec<f64>,
    b_inv: Mat<f64>,
    klb: f64,
    scale: f64,
    g_mu: Vec<f64>,
    g_v: Vec<f64>,
}

impl LatentFamily for PacSgpFamily<'_> {
    type Evaluation = PacSgpEvaluation;

    fn dim(&self) -> usize {
        self.kernel.n_params() + 1 + self.m * self.x.ncols()
    }

    fn sample_size(&self) -> usize {
        self.y.len()
    }

    fn n_theta(&self) -> usize {
        self.kernel.n_params()
    }

    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, PacSgpEvaluation)> {
        self.evaluate_p(p, true)
    }

    fn pull_back(&self, _p: &[f64], ev: PacSgpEvaluation, b: &BoundValue) -> Result<Vec<f64>> {
        Ok(self.pull_back_at(ev, b)?.0)
    }

    fn risk_and_kl(&self, p: &[f64]) -> Result<RiskAndKl> {
        Ok(self.evaluate_p(p, false)?.0)
    }
}
