//! The sparse PAC-GP bound ([`super::pac_sgp`]) as sums over data shards, for map-reduce
//! training of one sparse model over data held by several workers (issue 14; the VFE form is
//! [`crate::regression::sharded`]).
//!
//! With the module docs of [`super::pac_sgp`] (`P = K_uu = LLᵀ`, `V = L⁻¹F`, `Λ` of eq. 11),
//! the bound depends on the data through sums only, in three passes:
//! 1. per shard `B_s = Σ_i V_iV_iᵀ/Λ_i` and `γ_s = Σ_i V_i y_i/Λ_i` ([`PacSgpSharded::shard_stats`]);
//!    once, `B = I + ΣB_s = L_BL_Bᵀ`, `e = L⁻ᵀB⁻¹γ` and `KL` ([`PacSgpSharded::state`]);
//! 2. per shard, from `μ_i = F_iᵀe` and `v_i = k_ii − q_i + ‖L_B⁻¹V_i‖²`, the summed Gibbs risk
//!    of the loss and the sums its adjoints enter, `Σ ∂r_i/∂μ_i V_i` and
//!    `Σ ∂r_i/∂v_i (L_B⁻¹V_i)(L_B⁻¹V_i)ᵀ` ([`PacSgpSharded::shard_risk`]); once, the bound
//!    (kl-inverse or Pinsker, penalty, confidence term: [`crate::bounds`]), the M×M adjoints
//!    and the gradient's global part through K_uu ([`PacSgpSharded::combine`]);
//! 3. per shard the gradient's parts through `K_{ZX_s}`, `diag K_{X_s}`, σ² and the shard's
//!    `q_i` term of `P̄` ([`PacSgpSharded::shard_gradient`]); the gradient is the sum.
//!
//! Each pass recomputes the shard's `F` and `V` (O(N_s M²)), so a worker keeps no state.

use faer::{Mat, MatRef};
use rayon::prelude::*;

use crate::bounds::{BoundKind, BoundTarget, ConfidenceTerm};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::posterior::GaussianPosterior;
use crate::prior::{HyperPrior, ThetaPenalty};
use crate::regression::sparse::{
    add_outer, kuu_cholesky, sandwich_inv, whitened_basis, WhitenedBasis,
};

use super::pac_sgp::PacSgpTerms;

/// The sparse PAC-GP bound over `[θ…, ln σ², vec(Z) row by row]` (the layout of
/// [`super::pac_sgp::PacSgpObjective`]), evaluated from per-shard sums.
#[derive(Clone, Debug)]
pub struct PacSgpSharded {
    kernel: Kernel,
    d: usize,
    m: usize,
    alpha_s: f64,
    loss: RegressionLoss,
    /// The bound minimised (δ, confidence term, form, the constant penalty).
    target: BoundTarget,
    /// A coarse hyperparameter prior's `−ln π(θ)` surrogate, added to the penalty.
    theta_prior: ThetaPenalty,
}

/// Pass 1 of one shard (or, combined, of all): `Σ V_iV_iᵀ/Λ_i`, `Σ V_iy_i/Λ_i` and the count.
#[derive(Clone, Debug, PartialEq)]
pub struct PacSgpShardStats {
    /// `B_s = Σ_i V_iV_iᵀ/Λ_i` (M×M).
    pub b: Mat<f64>,
    /// `γ_s = Σ_i V_i y_i/Λ_i` (M).
    pub gamma: Vec<f64>,
    /// Number of points.
    pub n: usize,
}

/// The M×M state after pass 1, which pass 2 needs on every shard.
#[derive(Clone, Debug)]
pub struct PacSgpState {
    /// Lower Cholesky factor `L_B` of `B = I + ΣB_s`.
    pub l_b: Mat<f64>,
    /// `e = A⁻¹c = L⁻ᵀB⁻¹γ`, so that `μ_i = F_iᵀe`.
    pub e: Vec<f64>,
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
    /// `Σ_i (∂r_i/∂v_i) W_iW_iᵀ` with `W = L_B⁻¹V` (M×M).
    pub g: Mat<f64>,
    /// Number of points.
    pub n: usize,
}

/// What pass 3 needs on every shard: the adjoints of the bound in the per-point quantities.
#[derive(Clone, Debug)]
pub struct PacSgpAdjoints {
    /// Lower Cholesky factor `L_B` (as in [`PacSgpState`]).
    pub l_b: Mat<f64>,
    /// `e` (as in [`PacSgpState`]).
    pub e: Vec<f64>,
    /// `C = LᵀĀL`, so that `F_iᵀĀF_i = V_iᵀCV_i`.
    pub c: Mat<f64>,
    /// `c̄ = KL̄·h + t`, the adjoint of `c = FΛ⁻¹y`.
    pub c_bar: Vec<f64>,
    /// `∂bound/∂R_S / N`: scales every point's `∂r_i/∂μ_i`, `∂r_i/∂v_i`.
    pub risk_scale: f64,
}

/// The result of the reduce step after pass 2.
#[derive(Clone, Debug)]
pub struct PacSgpGlobal {
    /// `(R_S, KL, bound)`.
    pub terms: PacSgpTerms,
    /// What the shards need for their gradient parts.
    pub adjoints: PacSgpAdjoints,
    /// The gradient's global part: through K_uu's `P̄` (all but the per-shard `q̄` term) and
    /// the hyperparameter prior's penalty.
    pub gradient: Vec<f64>,
}

impl PacSgpShardStats {
    /// The statistics of the union of two shards (the reduce step of pass 1).
    pub fn combine(&self, other: &Self) -> Result<Self> {
        check_len(
            other.gamma.len(),
            self.gamma.len(),
            "PAC-SGP shard statistics",
        )?;
        Ok(Self {
            b: &self.b + &other.b,
            gamma: add(&self.gamma, &other.gamma),
            n: self.n + other.n,
        })
    }
}

impl PacSgpShardRisk {
    /// The risk sums of the union of two shards (the reduce step of pass 2).
    pub fn combine(&self, other: &Self) -> Result<Self> {
        check_len(other.u.len(), self.u.len(), "PAC-SGP shard risks")?;
        Ok(Self {
            risk_sum: self.risk_sum + other.risk_sum,
            u: add(&self.u, &other.u),
            g: &self.g + &other.g,
            n: self.n + other.n,
        })
    }
}

fn add(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

fn check_len(found: usize, expected: usize, what: &'static str) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            what,
            expected: format!("{expected} inducing inputs"),
            found: format!("{found}"),
        })
    }
}

fn check_square(a: &Mat<f64>, m: usize, what: &'static str) -> Result<()> {
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

/// Per-point risks and their derivatives in μ_i and v_i, with `W = L_B⁻¹V`.
struct PointTerms {
    risk: f64,
    d_mean: Vec<f64>,
    d_var: Vec<f64>,
    w: Mat<f64>,
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
        delta: f64,
        penalty: f64,
        kind: BoundKind,
    ) -> Result<Self> {
        kernel.check_input_dim(d)?;
        if m == 0 {
            return Err(Error::InvalidParameter {
                name: "number of inducing points M",
                value: 0.0,
                reason: "must be positive",
            });
        }
        let target = super::pac_sgp::check_pac_sgp_setup(alpha_s, &loss, delta, penalty, kind)?;
        Ok(Self {
            kernel: kernel.clone(),
            d,
            m,
            alpha_s,
            loss,
            target,
            theta_prior: ThetaPenalty::constant(0.0),
        })
    }

    /// The same bound with the smooth surrogate of `−ln π(θ)` added to the constant penalty.
    pub fn with_hyper_prior(mut self, prior: HyperPrior) -> Result<Self> {
        self.theta_prior = self.theta_prior.with_prior(prior, &self.kernel)?;
        Ok(self)
    }

    /// The same bound with another confidence constant (default Maurer's `ln(2√N/δ)`).
    pub fn with_confidence_term(mut self, term: ConfidenceTerm) -> Self {
        self.target.term = term;
        self
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

    fn basis(
        &self,
        p: &[f64],
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<(Kernel, f64, Mat<f64>, WhitenedBasis)> {
        if x.nrows() != y.len() || x.ncols() != self.d {
            return Err(Error::ShapeMismatch {
                what: "shard",
                expected: format!("{} rows and {} columns", y.len(), self.d),
                found: format!("{}×{}", x.nrows(), x.ncols()),
            });
        }
        crate::data::check_finite(x, "shard inputs")?;
        let (kernel, s2, z) = self.unpack(p)?;
        let wb = whitened_basis(&kernel, s2, self.alpha_s, x, z.as_ref())?;
        Ok((kernel, s2, z, wb))
    }

    /// Pass 1 (map): one shard's `B_s`, `γ_s` at `p`.
    pub fn shard_stats(
        &self,
        p: &[f64],
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<PacSgpShardStats> {
        let (_, _, _, wb) = self.basis(p, x, y)?;
        Ok(sums_of(&wb, y))
    }

    /// After pass 1 (once): `L_B`, `e` and `KL = ½[tr B⁻¹ + ‖B⁻¹γ‖² − M + ln det B]`.
    pub fn state(&self, p: &[f64], s: &PacSgpShardStats) -> Result<PacSgpState> {
        let m = self.m;
        check_len(s.gamma.len(), m, "PAC-SGP shard statistics")?;
        check_square(&s.b, m, "PAC-SGP shard statistics")?;
        if s.n == 0 {
            return Err(Error::Empty {
                what: "PAC-SGP shards",
            });
        }
        let (kernel, _, z) = self.unpack(p)?;
        let l = kuu_cholesky(&kernel, z.as_ref())?;
        let mut b = s.b.clone();
        for k in 0..m {
            b[(k, k)] += 1.0;
        }
        let lb = Cholesky::factor(b.as_ref(), &JitterPolicy::default(), "I + VΛ⁻¹Vᵀ")?;
        let bg = lb.solve_vec(&s.gamma);
        let e = l.solve_upper_vec(&bg);
        let tr_binv = lb.inverse_trace();
        let kl = 0.5 * (tr_binv + linalg::dot(&bg, &bg) - m as f64 + lb.ln_det());
        Ok(PacSgpState {
            l_b: lb.into_storage(),
            e,
            kl,
            n: s.n,
        })
    }

    /// μ_i, v_i (clamped at 1e-12 as the single-process objective) and the loss's point terms.
    fn point_terms(&self, wb: &WhitenedBasis, lb: &Cholesky, e: &[f64], y: &[f64]) -> PointTerms {
        let mu = linalg::mat_t_vec(&wb.kzx, e);
        let mut w = wb.v.clone();
        lb.solve_lower_in_place(w.as_mut());
        let s = linalg::col_sq_norms(&w);
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
            w,
        }
    }

    fn check_state(&self, l_b: &Mat<f64>, e: &[f64]) -> Result<Cholesky> {
        check_square(l_b, self.m, "PAC-SGP state L_B")?;
        check_len(e.len(), self.m, "PAC-SGP state e")?;
        Ok(Cholesky::from_lower(l_b.clone(), 0.0))
    }

    /// Pass 2 (map): one shard's summed Gibbs risk and the sums its adjoints enter.
    pub fn shard_risk(
        &self,
        p: &[f64],
        st: &PacSgpState,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<PacSgpShardRisk> {
        let lb = self.check_state(&st.l_b, &st.e)?;
        let (_, _, _, wb) = self.basis(p, x, y)?;
        let pt = self.point_terms(&wb, &lb, &st.e, y);
        Ok(PacSgpShardRisk {
            risk_sum: pt.risk,
            u: linalg::mat_vec(&wb.v, &pt.d_mean),
            g: linalg::weighted_gram(&pt.w, &pt.d_var),
            n: y.len(),
        })
    }

    /// After pass 2 (once): the bound (eq. 5 or Pinsker through [`crate::bounds`]), the adjoints
    /// `Ā`, `c̄` of [`super::pac_sgp`]'s gradient and its part through `P̄` without the
    /// per-point `q̄` term: `P̄_global = KL̄·½(A⁻¹ + eeᵀ − P⁻¹) + Ā`.
    pub fn combine(
        &self,
        p: &[f64],
        st: &PacSgpState,
        r: &PacSgpShardRisk,
    ) -> Result<PacSgpGlobal> {
        let m = self.m;
        let lb = self.check_state(&st.l_b, &st.e)?;
        check_len(r.u.len(), m, "PAC-SGP shard risks")?;
        check_square(&r.g, m, "PAC-SGP shard risks")?;
        if r.n != st.n {
            return Err(Error::ShapeMismatch {
                what: "PAC-SGP shard risks",
                expected: format!("{} points (pass 1)", st.n),
                found: format!("{}", r.n),
            });
        }
        let (kernel, _, z) = self.unpack(p)?;
        let l = kuu_cholesky(&kernel, z.as_ref())?;
        let (n, e) = (st.n, &st.e);
        let nf = n as f64;
        let risk = r.risk_sum / nf;
        let (penalty, d_penalty) = self.theta_prior.at(&p[..kernel.n_params()]);
        let b = self.target.at_with(risk, st.kl, n, penalty);
        let (bound, d_q, d_c) = (b.value, b.d_risk, b.d_complexity);
        let terms = PacSgpTerms {
            empirical_risk: risk,
            kl: st.kl,
            bound,
        };
        let (klb, scale) = (d_c / nf, d_q / nf);
        let b_inv = lb.inverse();
        let bg = linalg::mat_vec(&l.l().transpose().to_owned(), e); // B⁻¹γ = Lᵀe
        let a_inv = sandwich_inv(&l, b_inv.clone());
        let p_inv = l.inverse();
        let apa = sandwich_inv(&l, &b_inv * &b_inv);
        let h = l.solve_upper_vec(&lb.solve_vec(&bg));
        let vmu: Vec<f64> = r.u.iter().map(|u| scale * u).collect();
        let t = l.solve_upper_vec(&lb.solve_vec(&vmu));
        let l_a = Cholesky::from_lower(l.l() * lb.l(), 0.0);
        let g = Mat::from_fn(m, m, |a, b| scale * r.g[(a, b)]);
        let avfa = sandwich_inv(&l_a, g);
        let abar = Mat::from_fn(m, m, |a, b| {
            klb * 0.5 * (a_inv[(a, b)] - apa[(a, b)] - (e[a] * h[b] + h[a] * e[b]))
                - 0.5 * (t[a] * e[b] + e[a] * t[b])
                - avfa[(a, b)]
        });
        let c_bar: Vec<f64> = (0..m).map(|a| klb * h[a] + t[a]).collect();
        let c = l.l().transpose() * (&abar * l.l());
        let pbar = Mat::from_fn(m, m, |a, b| {
            klb * 0.5 * (a_inv[(a, b)] + e[a] * e[b] - p_inv[(a, b)]) + abar[(a, b)]
        });
        let mut gradient = kernel.gram_grad_contract(z.as_ref(), pbar.as_ref());
        for (gt, dp) in gradient.iter_mut().zip(&d_penalty) {
            *gt += d_c * dp / nf;
        }
        gradient.push(0.0);
        push_rows(
            &mut gradient,
            &kernel.gram_grad_z(z.as_ref(), pbar.as_ref()),
        );
        Ok(PacSgpGlobal {
            terms,
            adjoints: PacSgpAdjoints {
                l_b: st.l_b.clone(),
                e: e.clone(),
                c,
                c_bar,
                risk_scale: scale,
            },
            gradient,
        })
    }

    /// Pass 3 (map): one shard's part of the gradient, through `F̄_s` (eq. of
    /// [`super::pac_sgp`]'s gradient: `eμ̄ᵀ + c̄(y/Λ)ᵀ + L⁻ᵀ[2W̃ + 2CVΛ⁻¹ + 2V diag(q̄)]`),
    /// `diag K̄`, `σ̄²` and `P̄_s = −L⁻ᵀ(V diag(q̄)Vᵀ)L⁻¹`.
    pub fn shard_gradient(
        &self,
        p: &[f64],
        adj: &PacSgpAdjoints,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<Vec<f64>> {
        let m = self.m;
        let lb = self.check_state(&adj.l_b, &adj.e)?;
        check_square(&adj.c, m, "PAC-SGP adjoint C")?;
        check_len(adj.c_bar.len(), m, "PAC-SGP adjoint c̄")?;
        let (kernel, s2, z, wb) = self.basis(p, x, y)?;
        let n = y.len();
        let pt = self.point_terms(&wb, &lb, &adj.e, y);
        let (l, lam, kd, q) = (&wb.l_uu, &wb.lambda, &wb.kdiag, &wb.q);
        let mub: Vec<f64> = pt.d_mean.iter().map(|g| adj.risk_scale * g).collect();
        let vb: Vec<f64> = pt.d_var.iter().map(|g| adj.risk_scale * g).collect();
        let mut cv = &adj.c * &wb.v;
        let fa = linalg::col_dots(&wb.v, &cv);
        let ftc = linalg::mat_t_vec(&wb.kzx, &adj.c_bar);
        let lamb: Vec<f64> = (0..n)
            .map(|i| -(fa[i] + ftc[i] * y[i]) / (lam[i] * lam[i]))
            .collect();
        // Λ uses max(k − q, 0): no gradient flows where the clamp is active.
        let through_lam = |i: usize| {
            if kd[i] - q[i] >= 0.0 {
                self.alpha_s * lamb[i]
            } else {
                0.0
            }
        };
        let qb: Vec<f64> = (0..n).map(|i| -vb[i] - through_lam(i)).collect();
        let kb: Vec<f64> = (0..n).map(|i| vb[i] + through_lam(i)).collect();
        let s2b: f64 = lamb.iter().sum();
        let pqp = sandwich_inv(l, linalg::weighted_gram(&wb.v, &qb));
        let pbar = Mat::from_fn(m, m, |a, b| -pqp[(a, b)]);
        let mut w = pt.w;
        linalg::scale_cols(&mut w, &vb);
        lb.solve_upper_in_place(w.as_mut());
        cv.par_col_iter_mut().enumerate().for_each(|(i, c)| {
            let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
            let (vi, wi) = (wb.v.col_as_slice(i), w.col_as_slice(i));
            for a in 0..m {
                c[a] = 2.0 * (wi[a] + c[a] / lam[i] + vi[a] * qb[i]);
            }
        });
        drop(w);
        l.solve_upper_in_place(cv.as_mut());
        let yl: Vec<f64> = (0..n).map(|i| y[i] / lam[i]).collect();
        add_outer(&mut cv, &adj.e, &mub);
        add_outer(&mut cv, &adj.c_bar, &yl);
        let WhitenedBasis { kzx, .. } = wb;
        let (mut grad, dz_x) = kernel.cross_adjoint(z.as_ref(), x, kzx, &cv);
        let gp = kernel.gram_grad_contract(z.as_ref(), pbar.as_ref());
        let gd = kernel.diag_grad_contract(x, &kb);
        for (k, g) in grad.iter_mut().enumerate() {
            *g += gp[k] + gd[k];
        }
        grad.push(s2 * s2b);
        push_rows(
            &mut grad,
            &(&dz_x + &kernel.gram_grad_z(z.as_ref(), pbar.as_ref())),
        );
        Ok(grad)
    }

    /// The three passes over in-process shards: `(terms, gradient)` (what a cluster does with
    /// the maps on its workers).
    pub fn value_and_gradient(
        &self,
        p: &[f64],
        shards: &[(MatRef<'_, f64>, &[f64])],
    ) -> Result<(PacSgpTerms, Vec<f64>)> {
        let stats = reduce(
            shards.iter().map(|(x, y)| self.shard_stats(p, *x, y)),
            |a, b| a.combine(b),
        )?;
        let st = self.state(p, &stats)?;
        let risk = reduce(
            shards.iter().map(|(x, y)| self.shard_risk(p, &st, *x, y)),
            |a, b| a.combine(b),
        )?;
        let global = self.combine(p, &st, &risk)?;
        let mut grad = global.gradient;
        for (x, y) in shards {
            for (g, s) in grad
                .iter_mut()
                .zip(self.shard_gradient(p, &global.adjoints, *x, y)?)
            {
                *g += s;
            }
        }
        Ok((global.terms, grad))
    }
}

/// `Σ V_iV_iᵀ/Λ_i`, `Σ V_i y_i/Λ_i` of the points of `wb`.
fn sums_of(wb: &WhitenedBasis, y: &[f64]) -> PacSgpShardStats {
    let inv_lam: Vec<f64> = wb.lambda.iter().map(|l| 1.0 / l).collect();
    let ly: Vec<f64> = y.iter().zip(&inv_lam).map(|(y, il)| y * il).collect();
    PacSgpShardStats {
        b: linalg::weighted_gram(&wb.v, &inv_lam),
        gamma: linalg::mat_vec(&wb.v, &ly),
        n: y.len(),
    }
}

/// One shard's part of a sparse posterior with `Λ = σ² + α_s diag(K_ff − Q_ff)` (eq. 11; VFE
/// `α_s = 0`, FITC 1): the sums [`posterior_from_stats`] turns into the posterior.
pub fn posterior_shard_stats(
    kernel: &Kernel,
    noise: f64,
    alpha_s: f64,
    z: MatRef<'_, f64>,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<PacSgpShardStats> {
    if x.nrows() != y.len() || x.ncols() != z.ncols() {
        return Err(Error::ShapeMismatch {
            what: "shard",
            expected: format!("{} rows and {} columns", y.len(), z.ncols()),
            found: format!("{}×{}", x.nrows(), x.ncols()),
        });
    }
    crate::data::check_finite(x, "shard inputs")?;
    if !(noise > 0.0 && noise.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "noise variance",
            value: noise,
            reason: "must be positive and finite",
        });
    }
    if !(0.0..=1.0).contains(&alpha_s) {
        return Err(Error::InvalidParameter {
            name: "alpha_s",
            value: alpha_s,
            reason: "must lie in [0, 1]",
        });
    }
    Ok(sums_of(&whitened_basis(kernel, noise, alpha_s, x, z)?, y))
}

/// The sparse posterior (whitened precision form, `α = L⁻ᵀB⁻¹γ` with `B = I + ΣB_s`) from the
/// summed [`posterior_shard_stats`]: what `SparseGp::posterior_with_alpha` gives on all the data.
pub fn posterior_from_stats(
    kernel: &Kernel,
    z: MatRef<'_, f64>,
    s: &PacSgpShardStats,
) -> Result<GaussianPosterior> {
    let m = z.nrows();
    check_len(s.gamma.len(), m, "posterior statistics")?;
    check_square(&s.b, m, "posterior statistics")?;
    let l_uu = kuu_cholesky(kernel, z)?;
    let mut b = s.b.clone();
    for k in 0..m {
        b[(k, k)] += 1.0;
    }
    let l_b = Cholesky::factor(b.as_ref(), &JitterPolicy::default(), "I + VΛ⁻¹Vᵀ")?;
    let alpha = l_uu.solve_upper_vec(&l_b.solve_vec(&s.gamma));
    Ok(GaussianPosterior::whitened(
        kernel.clone(),
        z.to_owned(),
        alpha,
        l_uu,
        l_b,
    ))
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

fn push_rows(out: &mut Vec<f64>, dz: &Mat<f64>) {
    for a in 0..dz.nrows() {
        for t in 0..dz.ncols() {
            out.push(dz[(a, t)]);
        }
    }
}
