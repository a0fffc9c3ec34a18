//! The sparse PAC-GP bound ([`super::pac_sgp`]) as sums over data shards, for map-reduce
//! training of one sparse model over data held by several workers (the VFE form is
//! [`crate::regression::sharded`]), in the whitened basis throughout.
//!
//! With `L Lᵀ = K_uu + jitter·I` (factored once per evaluation on the driver,
//! [`PacSgpSharded::kuu_factor`]), `V = L⁻¹K_uf`, `q_i = ‖V_i‖²`, `Λ` of eq. 11,
//! `B = I + VΛ⁻¹Vᵀ = L_BL_Bᵀ`, `γ = VΛ⁻¹y`, `w = B⁻¹γ`, `Y = L_B⁻¹V`, the bound's parts are
//! `KL = ½[tr B⁻¹ + ‖w‖² − M + ln det B]`, `μ_i = V_iᵀw`, `v_i = k_ii − q_i + ‖Y_i‖²`
//! (docs/math.md §3.2). Three passes over the data, each with an M×M step on the driver:
//! 1. per shard `B_s = Σ_i V_iV_iᵀ/Λ_i`, `γ_s = Σ_i V_iy_i/Λ_i` ([`PacSgpSharded::shard_stats`]);
//!    once, `L_B`, `w` and `KL` ([`PacSgpSharded::state`]);
//! 2. per shard the summed Gibbs risk and the sums its adjoints enter, `Σ ∂r_i/∂μ_i V_i` and
//!    `Σ ∂r_i/∂v_i Y_iY_iᵀ` ([`PacSgpSharded::shard_risk`]); once, the bound (kl-inverse or
//!    Pinsker, penalty, confidence term: [`crate::bounds`]) and the adjoints `B̄`, `γ̄`
//!    ([`PacSgpSharded::combine`]);
//! 3. per shard the gradient through `K_{ZX_s}`, `diag K_{X_s}` and σ², and the shard's part
//!    of `Ψ = sym(V̄Vᵀ)` ([`PacSgpSharded::shard_gradient`]); once, the K_uu part
//!    `P̄ = −½L⁻ᵀΨL⁻¹` ([`PacSgpSharded::gradient`]).
//!
//! Reverse mode in the whitened variables: `B̄ = KL̄[½(B⁻¹ − B⁻²) − sym(hwᵀ)] − sym(uwᵀ)
//! − B⁻¹V diag(v̄)VᵀB⁻¹` (`h = B⁻¹w`, `u = B⁻¹Vμ̄`), `γ̄ = KL̄·h + u`,
//! `V̄ = wμ̄ᵀ + γ̄(y/Λ)ᵀ + 2B⁻¹V diag(v̄) + 2B̄VΛ⁻¹ + 2V diag(q̄)`, `Λ̄_i = −(V_iᵀB̄V_i +
//! y_iV_iᵀγ̄)/Λ_i²`; then `F̄ = L⁻ᵀV̄` and, since the bound depends on V only through
//! rotation-invariant forms, `P̄ = −½L⁻ᵀ sym(V̄Vᵀ)L⁻¹`, where `Bw = γ` reduces `sym(V̄Vᵀ)` to
//! `KL̄(I − B⁻¹ − wwᵀ) − 2B̄ + 2V diag(q̄)Vᵀ`. No M×M matrix here holds `K_uu⁻¹` or
//! `A⁻¹ = (K_uu + K_ufΛ⁻¹K_fu)⁻¹`, whose difference the unwhitened form subtracts: at
//! cond(K_uu) ≈ 1e9–1e10 that form's gradient carries 1e-3–1 relative rounding error (it
//! changes that much when the rows are permuted), this one ~1e-9.
//!
//! On shards held in one process the passes are a latent family of the one bound skeleton
//! ([`PacSgpShardedFamily`], [`PacSgpSharded::value_and_gradient`]): passes 1–2 its
//! evaluation, the adjoints and pass 3 its pull-back; the reduce step a cluster runs between
//! its workers' passes ([`PacSgpSharded::combine`]) takes the same bound and adjoints.
//!
//! Each pass recomputes the shard's `F` and `V` (O(N_s M²)) block by block
//! ([`crate::regression::sharded::row_blocks`]), so a worker keeps no state and its memory is
//! O(M² + block·M).

use faer::{Mat, MatRef};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::linalg::{add_outer, sandwich_inv};
use crate::loss::RegressionLoss;
use crate::posterior::GaussianKlTerms;
use crate::regression::sharded::{
    add, check_len, check_shard, check_square, push_rows, row_blocks, shard_basis, ShardBasis,
};
use crate::regression::sparse_sums::sums_of;
pub use crate::regression::sparse_sums::{
    posterior_from_stats, posterior_shard_stats, PacSgpShardStats,
};
use crate::regression::whitened_blocks::kuu_cholesky;

use crate::bounds::BoundValue;

use super::bound::{BoundObjective, BoundTerms, LatentFamily, MinimisedBound, RiskAndKl};

mod gradient;

/// The sparse PAC-GP bound over `[θ…, ln σ², vec(Z) row by row]` (the layout of
/// [`super::pac_sgp::PacSgpObjective`]), evaluated from per-shard sums.
#[derive(Clone, Debug)]
pub struct PacSgpSharded {
    kernel: Kernel,
    d: usize,
    m: usize,
    alpha_s: f64,
    loss: RegressionLoss,
    /// The bound minimised (δ, confidence term, form, θ's price).
    bound: MinimisedBound,
}

/// The M×M state after pass 1, which pass 2 needs on every shard.
#[derive(Clone, Debug)]
pub struct PacSgpState {
    /// Lower Cholesky factor `L_B` of `B = I + ΣB_s`.
    pub l_b: Mat<f64>,
    /// `w = B⁻¹γ`, so that `μ_i = V_iᵀw`.
    pub w: Vec<f64>,
    /// `KL(Q‖P_θ)`.
    pub kl: f64,
    /// Number of points of all shards.
    pub n: usize,
}

/// Pass 2 of one shard (or, combined, of all): the summed Gibbs risk and its adjoints' sums.
#[derive(Clone, Debug, PartialEq)]
pub struct PacSgpShardRisk {
    /// `Σ_i r_i` (not yet divided by N).
    pub risk_sum: f64,
    /// `Σ_i (∂r_i/∂μ_i) V_i` (M).
    pub u: Vec<f64>,
    /// `Σ_i (∂r_i/∂v_i) Y_iY_iᵀ` with `Y = L_B⁻¹V` (M×M).
    pub g: Mat<f64>,
    /// Number of points.
    pub n: usize,
}

/// What pass 3 needs on every shard: the adjoints of the bound in the whitened sums.
#[derive(Clone, Debug)]
pub struct PacSgpAdjoints {
    /// Lower Cholesky factor `L_B` (as in [`PacSgpState`]).
    pub l_b: Mat<f64>,
    /// `w = B⁻¹γ` (as in [`PacSgpState`]).
    pub w: Vec<f64>,
    /// `B̄ = ∂bound/∂B` (symmetric M×M).
    pub b_bar: Mat<f64>,
    /// `γ̄ = ∂bound/∂γ` (M).
    pub gamma_bar: Vec<f64>,
    /// `∂bound/∂R_S / N`: scales every point's `∂r_i/∂μ_i`, `∂r_i/∂v_i`.
    pub risk_scale: f64,
}

/// The result of the reduce step after pass 2.
#[derive(Clone, Debug)]
pub struct PacSgpGlobal {
    /// `(R_S, KL, bound)`.
    pub terms: BoundTerms,
    /// What the shards need for their gradient parts.
    pub adjoints: PacSgpAdjoints,
    /// What the driver keeps for [`PacSgpSharded::gradient`].
    pub driver: PacSgpDriverPart,
}

/// The driver's part of the gradient, completed by the shards' sums in
/// [`PacSgpSharded::gradient`].
#[derive(Clone, Debug, PartialEq)]
pub struct PacSgpDriverPart {
    /// The part of `Ψ = sym(V̄Vᵀ)` the sums give (all but the shards' `2Σ q̄_iV_iV_iᵀ`).
    pub psi: Mat<f64>,
    /// The hyperparameter prior's penalty gradient (θ entries; zero elsewhere).
    pub gradient: Vec<f64>,
}

/// Pass 3 of one shard (or, combined, of all).
#[derive(Clone, Debug, PartialEq)]
pub struct PacSgpShardGradient {
    /// The gradient through `K_{ZX_s}`, `diag K_{X_s}` and σ².
    pub gradient: Vec<f64>,
    /// `Σ_i q̄_i V_iV_iᵀ` (M×M), the shard's part of `Ψ`.
    pub vqv: Mat<f64>,
}

impl PacSgpShardRisk {
    /// The risk sums of the union of two shards (the reduce step of pass 2).
    pub fn combine(&self, other: &Self) -> Result<Self> {
        check_len(other.u.len(), self.u.len(), "PAC-SGP shard risks")?;
        check_square(&other.g, self.u.len(), "PAC-SGP shard risks")?;
        Ok(Self {
            risk_sum: self.risk_sum + other.risk_sum,
            u: add(&self.u, &other.u),
            g: &self.g + &other.g,
            n: self.n + other.n,
        })
    }
}

impl PacSgpShardGradient {
    /// The gradient parts of the union of two shards (the reduce step of pass 3).
    pub fn combine(&self, other: &Self) -> Result<Self> {
        check_len(
            other.gradient.len(),
            self.gradient.len(),
            "PAC-SGP gradient parts",
        )?;
        check_square(&other.vqv, self.vqv.nrows(), "PAC-SGP gradient parts")?;
        Ok(Self {
            gradient: add(&self.gradient, &other.gradient),
            vqv: &self.vqv + &other.vqv,
        })
    }
}

/// `½(xyᵀ + yxᵀ)` entry `(a, b)`.
fn sym_outer(x: &[f64], y: &[f64], a: usize, b: usize) -> f64 {
    0.5 * (x[a] * y[b] + y[a] * x[b])
}

/// Per-point risks and their derivatives in μ_i and v_i, with `Y = L_B⁻¹V`.
struct PointTerms {
    risk: f64,
    d_mean: Vec<f64>,
    d_var: Vec<f64>,
    y_b: Mat<f64>,
}

impl PacSgpSharded {
    /// The bound of [`super::pac_sgp::PacSgpObjective::new`] (same arguments, with the input
    /// dimension `d` for the data it does not hold).
    pub fn new(
        kernel: &Kernel,
        d: usize,
        m: usize,
        alpha_s: f64,
        loss: RegressionLoss,
        bound: MinimisedBound,
    ) -> Result<Self> {
        kernel.check_input_dim(d)?;
        if m == 0 {
            return Err(Error::InvalidParameter {
                name: "number of inducing points M",
                value: 0.0,
                reason: "must be positive",
            });
        }
        super::pac_sgp::check_pac_sgp_setup(alpha_s, &loss)?;
        Ok(Self {
            kernel: kernel.clone(),
            d,
            m,
            alpha_s,
            loss,
            bound,
        })
    }

    /// Length of the parameter vector `[θ…, ln σ², vec(Z)]`.
    pub fn dim(&self) -> usize {
        self.kernel.n_params() + 1 + self.m * self.d
    }

    /// Split a parameter vector into (kernel, σ², Z).
    pub fn unpack(&self, p: &[f64]) -> Result<(Kernel, f64, Mat<f64>)> {
        check_len(p.len(), self.dim(), "PAC-SGP parameter vector")?;
        let nk = self.kernel.n_params();
        let mut k = self.kernel.clone();
        k.set_params(&p[..nk])?;
        let d = self.d;
        let z = Mat::from_fn(self.m, d, |a, t| p[nk + 1 + a * d + t]);
        Ok((k, p[nk].exp(), z))
    }

    /// (kernel, σ², Z) at `p`, after checking a shard's shape and the driver's factor.
    fn shard_setup(
        &self,
        p: &[f64],
        l_uu: &Cholesky,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<(Kernel, f64, Mat<f64>)> {
        let (kernel, s2, z) = self.unpack(p)?;
        check_shard(z.as_ref(), l_uu, x, y)?;
        Ok((kernel, s2, z))
    }

    /// `L Lᵀ = K_uu + jitter·I` at `p` (the single-process jitter): computed once per
    /// evaluation on the driver and passed to every pass.
    pub fn kuu_factor(&self, p: &[f64]) -> Result<Cholesky> {
        let (kernel, _, z) = self.unpack(p)?;
        kuu_cholesky(&kernel, z.as_ref())
    }

    /// Pass 1 (map): one shard's `B_s`, `γ_s` at `p`, given the driver's `L`.
    pub fn shard_stats(
        &self,
        p: &[f64],
        l_uu: &Cholesky,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<PacSgpShardStats> {
        let (kernel, s2, z) = self.shard_setup(p, l_uu, x, y)?;
        let mut acc = PacSgpShardStats {
            b: crate::memory::zeros(self.m, self.m),
            gamma: vec![0.0; self.m],
            n: 0,
        };
        for (start, rows) in row_blocks(y.len(), self.m) {
            let xb = x.subrows(start, rows);
            let sb = shard_basis(&kernel, l_uu, s2, self.alpha_s, xb, z.as_ref())?;
            acc = acc.combine(&sums_of(&sb, &y[start..start + rows])?)?;
        }
        Ok(acc)
    }

    /// After pass 1 (once): `L_B`, `w = B⁻¹γ` and `KL = ½[tr B⁻¹ + ‖w‖² − M + ln det B]`.
    pub fn state(&self, p: &[f64], s: &PacSgpShardStats) -> Result<PacSgpState> {
        let m = self.m;
        check_len(p.len(), self.dim(), "PAC-SGP parameter vector")?;
        check_len(s.gamma.len(), m, "PAC-SGP shard statistics")?;
        check_square(&s.b, m, "PAC-SGP shard statistics")?;
        if s.n == 0 {
            return Err(Error::Empty {
                what: "PAC-SGP shards",
            });
        }
        let mut b = s.b.clone();
        for k in 0..m {
            b[(k, k)] += 1.0;
        }
        let lb = Cholesky::factor(b.as_ref(), &JitterPolicy::default(), "I + VΛ⁻¹Vᵀ")?;
        let w = lb.solve_vec(&s.gamma);
        let tr_binv = lb.inverse_trace()?;
        let kl = GaussianKlTerms::site_form(tr_binv, linalg::dot(&w, &w), m, lb.ln_det()).kl();
        Ok(PacSgpState {
            l_b: lb.into_storage(),
            w,
            kl,
            n: s.n,
        })
    }

    /// μ_i = V_iᵀw, v_i (clamped at 1e-12 as the single-process objective) and the loss's
    /// point terms.
    fn point_terms(&self, wb: &ShardBasis, lb: &Cholesky, w: &[f64], y: &[f64]) -> PointTerms {
        let mu = linalg::mat_t_vec(&wb.v, w);
        let mut y_b = wb.v.clone();
        lb.solve_lower_in_place(y_b.as_mut());
        let s = linalg::col_sq_norms(&y_b);
        let (mut risk, mut d_mean, mut d_var) = (0.0, vec![0.0; y.len()], vec![0.0; y.len()]);
        for i in 0..y.len() {
            let var = (wb.kdiag[i] - wb.q[i] + s[i]).max(1e-12);
            let r = self.loss.point_risk(y[i], mu[i], var);
            risk += r.risk;
            d_mean[i] = r.d_mean;
            d_var[i] = r.d_var;
        }
        PointTerms {
            risk,
            d_mean,
            d_var,
            y_b,
        }
    }

    fn check_state(&self, l_b: &Mat<f64>, w: &[f64]) -> Result<Cholesky> {
        check_square(l_b, self.m, "PAC-SGP state L_B")?;
        check_len(w.len(), self.m, "PAC-SGP state w")?;
        Ok(Cholesky::from_lower(l_b.clone(), 0.0))
    }

    /// Pass 2 (map): one shard's summed Gibbs risk and the sums its adjoints enter.
    pub fn shard_risk(
        &self,
        p: &[f64],
        l_uu: &Cholesky,
        st: &PacSgpState,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<PacSgpShardRisk> {
        let lb = self.check_state(&st.l_b, &st.w)?;
        let (kernel, s2, z) = self.shard_setup(p, l_uu, x, y)?;
        let mut acc = PacSgpShardRisk {
            risk_sum: 0.0,
            u: vec![0.0; self.m],
            g: crate::memory::zeros(self.m, self.m),
            n: 0,
        };
        for (start, rows) in row_blocks(y.len(), self.m) {
            let (xb, yb) = (x.subrows(start, rows), &y[start..start + rows]);
            let wb = shard_basis(&kernel, l_uu, s2, self.alpha_s, xb, z.as_ref())?;
            let pt = self.point_terms(&wb, &lb, &st.w, yb);
            acc = acc.combine(&PacSgpShardRisk {
                risk_sum: pt.risk,
                u: linalg::mat_vec(&wb.v, &pt.d_mean),
                g: linalg::weighted_gram(&pt.y_b, &pt.d_var)?,
                n: rows,
            })?;
        }
        Ok(acc)
    }

    /// After pass 2 (once): the bound (eq. 5 or Pinsker through [`MinimisedBound::at`]), the
    /// adjoints `B̄`, `γ̄` and the sums' part of `Ψ` (`PacSgpSharded::adjoints`), and the
    /// hyperparameter prior's share of the gradient.
    pub fn combine(
        &self,
        p: &[f64],
        st: &PacSgpState,
        r: &PacSgpShardRisk,
    ) -> Result<PacSgpGlobal> {
        self.check_risk(st, r)?;
        let (kernel, _, _) = self.unpack(p)?;
        let nk = kernel.n_params();
        let risk = r.risk_sum / st.n as f64;
        let at = self.bound.at(&p[..nk], risk, st.kl, st.n);
        let terms = BoundTerms {
            empirical_risk: risk,
            kl: st.kl,
            bound: at.value.value,
        };
        let (adjoints, psi) = self.adjoints(st, r, &at.value)?;
        let mut gradient = vec![0.0; self.dim()];
        at.add_penalty_gradient(&mut gradient);
        Ok(PacSgpGlobal {
            terms,
            adjoints,
            driver: PacSgpDriverPart { psi, gradient },
        })
    }

    /// The summed risks `r` fit the state `st` of pass 1 (M and N).
    fn check_risk(&self, st: &PacSgpState, r: &PacSgpShardRisk) -> Result<()> {
        let m = self.m;
        self.check_state(&st.l_b, &st.w)?;
        check_len(r.u.len(), m, "PAC-SGP shard risks")?;
        check_square(&r.g, m, "PAC-SGP shard risks")?;
        if r.n != st.n {
            return Err(Error::ShapeMismatch {
                what: "PAC-SGP shard risks",
                expected: format!("{} points (pass 1)", st.n),
                found: format!("{}", r.n),
            });
        }
        Ok(())
    }

    /// From the bound's partials `b`: the adjoints `B̄`, `γ̄` of the whitened sums (module doc)
    /// and the sums' part of `Ψ = sym(V̄Vᵀ)`, `KL̄(I − B⁻¹ − wwᵀ) − 2B̄`.
    fn adjoints(
        &self,
        st: &PacSgpState,
        r: &PacSgpShardRisk,
        b: &BoundValue,
    ) -> Result<(PacSgpAdjoints, Mat<f64>)> {
        let m = self.m;
        let lb = self.check_state(&st.l_b, &st.w)?;
        let nf = st.n as f64;
        let (klb, scale) = (b.d_complexity / nf, b.d_risk / nf);
        let w = &st.w;
        let b_inv = lb.inverse()?;
        let b2 = &b_inv * &b_inv;
        let h = lb.solve_vec(w);
        let t: Vec<f64> = r.u.iter().map(|u| scale * u).collect(); // Vμ̄
        let u = lb.solve_vec(&t);
        // B⁻¹V diag(v̄)VᵀB⁻¹ = L_B⁻ᵀ(Y diag(v̄)Yᵀ)L_B⁻¹.
        let g = Mat::from_fn(m, m, |a, b| scale * r.g[(a, b)]);
        let bvb = sandwich_inv(&lb, g);
        let b_bar = Mat::from_fn(m, m, |a, b| {
            klb * (0.5 * (b_inv[(a, b)] - b2[(a, b)]) - sym_outer(&h, w, a, b))
                - sym_outer(&u, w, a, b)
                - bvb[(a, b)]
        });
        let gamma_bar: Vec<f64> = (0..m).map(|a| klb * h[a] + u[a]).collect();
        // Ψ = sym(V̄Vᵀ) − 2Σq̄_iV_iV_iᵀ: with Bw = γ, the terms w(Vμ̄)ᵀ, γ̄γᵀ, 2B⁻¹V diag(v̄)Vᵀ
        // and 2B̄(B − I) of V̄Vᵀ collapse to KL̄(I − B⁻¹ − wwᵀ) − 2B̄, with no product by B.
        let psi = Mat::from_fn(m, m, |a, b| {
            let id = if a == b { 1.0 } else { 0.0 };
            klb * (id - b_inv[(a, b)] - w[a] * w[b]) - 2.0 * b_bar[(a, b)]
        });
        let adjoints = PacSgpAdjoints {
            l_b: st.l_b.clone(),
            w: w.clone(),
            b_bar,
            gamma_bar,
            risk_scale: scale,
        };
        Ok((adjoints, psi))
    }

    /// The three passes over in-process shards: `(terms, gradient)` (what a cluster does with
    /// the maps on its workers), with `L` factored once: the bound over
    /// [`PacSgpShardedFamily`].
    pub fn value_and_gradient(
        &self,
        p: &[f64],
        shards: &[(MatRef<'_, f64>, &[f64])],
    ) -> Result<(BoundTerms, Vec<f64>)> {
        let family = PacSgpShardedFamily {
            sharded: self,
            shards,
        };
        BoundObjective::over(family, self.bound.clone()).terms_and_gradient(p)
    }
}

/// The sharded PAC-SGP as a latent family over shards held in this process (a cluster runs the
/// same passes on its workers, with [`PacSgpSharded::combine`] between them).
pub struct PacSgpShardedFamily<'s, 'a> {
    sharded: &'s PacSgpSharded,
    shards: &'s [(MatRef<'a, f64>, &'a [f64])],
}

/// Passes 1 and 2 of one evaluation: the driver's `L`, the state and the summed risks.
pub struct PacSgpShardedEvaluation {
    l: Cholesky,
    st: PacSgpState,
    risk: PacSgpShardRisk,
}

impl LatentFamily for PacSgpShardedFamily<'_, '_> {
    type Evaluation = PacSgpShardedEvaluation;

    fn dim(&self) -> usize {
        self.sharded.dim()
    }

    fn sample_size(&self) -> usize {
        self.shards.iter().map(|(_, y)| y.len()).sum()
    }

    fn n_theta(&self) -> usize {
        self.sharded.kernel.n_params()
    }

    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, PacSgpShardedEvaluation)> {
        let s = self.sharded;
        let l = s.kuu_factor(p)?;
        let stats = reduce(
            self.shards.iter().map(|(x, y)| s.shard_stats(p, &l, *x, y)),
            |a, b| a.combine(b),
        )?;
        let st = s.state(p, &stats)?;
        let risk = reduce(
            self.shards
                .iter()
                .map(|(x, y)| s.shard_risk(p, &l, &st, *x, y)),
            |a, b| a.combine(b),
        )?;
        s.check_risk(&st, &risk)?;
        let rk = RiskAndKl::new(risk.risk_sum / st.n as f64, st.kl);
        Ok((rk, PacSgpShardedEvaluation { l, st, risk }))
    }

    fn pull_back(
        &self,
        p: &[f64],
        ev: PacSgpShardedEvaluation,
        b: &BoundValue,
    ) -> Result<Vec<f64>> {
        let s = self.sharded;
        let (adjoints, psi) = s.adjoints(&ev.st, &ev.risk, b)?;
        let parts = reduce(
            self.shards
                .iter()
                .map(|(x, y)| s.shard_gradient(p, &ev.l, &adjoints, *x, y)),
            |a, b| a.combine(b),
        )?;
        let driver = PacSgpDriverPart {
            psi,
            gradient: vec![0.0; s.dim()],
        };
        s.gradient(p, &ev.l, &driver, &parts)
    }
}

fn reduce<T>(
    mut parts: impl Iterator<Item = Result<T>>,
    f: impl Fn(&T, &T) -> Result<T>,
) -> Result<T> {
    let mut acc = parts.next().ok_or(Error::Empty {
        what: "PAC-SGP shards",
    })??;
    for part in parts {
        acc = f(&acc, &part?)?;
    }
    Ok(acc)
}

impl super::pac_sgp::PacSgpBound {
    /// The bound over shards of `m` inducing inputs on `d` inputs, for `kernel`'s structure,
    /// with the posterior's `alpha_s` (1: FITC, 0: VFE).
    pub fn sharded(
        &self,
        kernel: &Kernel,
        d: usize,
        m: usize,
        alpha_s: f64,
    ) -> Result<PacSgpSharded> {
        let bound = self.minimised(kernel)?;
        PacSgpSharded::new(kernel, d, m, alpha_s, self.loss, bound)
    }
}
