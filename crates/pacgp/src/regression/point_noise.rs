//! The GP regression posterior with per-point noise (docs/math.md §9.4.2): the posterior
//! of the full GP gets per-point noise for its mean (`λ_m,i`) and its covariance (`λ_v,i`), free
//! posterior parameters (not charged). With `C_m = K + Λ_m`, `C_v = K + Λ_v`, `α = C_m⁻¹y`,
//! `P = C_v⁻¹`:
//!
//! `q(f_X) = N(Kα, K − K C_v⁻¹ K)` (the site form with `Π = Λ_v⁻¹`),
//! `μ_i = y_i − λ_m,i α_i`, `v_i = λ_v,i − λ_v,i² P_ii`,
//! `KL = ½[Σ_i λ_v,i P_ii + αᵀKα − N − Σ_i ln λ_v,i + ln det C_v]` (docs/math.md §9.4.2).
//!
//! With every `λ_m,i = λ_v,i = σ²` it is PAC-GP's posterior ([`crate::objective::pac_gp`]).
//! Used by PAC-GP with per-point noise ([`crate::objective::pac_gp_hetero`]) and the split
//! prior ([`crate::objective::gp_split`]). Gradients (derived here, checked by central differences):
//! with `w_q = ∂B/∂R_S / N`, `w_c = ∂B/∂C / N`, `h = C_m⁻¹Λ_m g_μ`, `u = C_m⁻¹Λ_m α`,
//! - `∂/∂λ_m,j = w_q α_j(h_j − g_μ,j) − w_c α_j(α_j − u_j)`;
//! - `∂/∂λ_v,j = w_q[g_v,j(1 − 2λ_jP_jj) + Σ_i g_v,i λ_i² P_ij²] + ½w_c[2P_jj − (PΛ_vP)_jj − 1/λ_j]`;
//! - `∂/∂K = w_q[½(hαᵀ + αhᵀ) + P diag(λ_v² g_v) P] + w_c[−½ααᵀ + ½(uαᵀ + αuᵀ) + ½(P − PΛ_vP)]`,
//!   contracted with `∂K/∂θ`.

use faer::Mat;

use crate::error::Result;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::posterior::{GaussianKlTerms, Marginals};

/// The per-point-noise posterior on one Gram matrix `K` (docs/math.md §9.4.2), shared by PAC-GP
/// (`K` the kernel's Gram, `r = y`, `s = 1`) and the split prior (`K = K_A` on part B,
/// `r = y_B − μ_A`, free covariance scale `s`; docs/math.md §9.3.1): `α = C_m⁻¹r`, `P = C_v⁻¹`,
/// `μ_i = y_i − λ_m,i α_i`, `v_i = s(λ_v,i − λ_v,i² P_ii)` and
/// `KL = ½[s Σ_i λ_v,i P_ii + αᵀKα − N − N ln s − Σ_i ln λ_v,i + ln det C_v]`.
pub(crate) struct PointNoiseEval {
    /// `α = C_m⁻¹ r`.
    pub alpha: Vec<f64>,
    /// Factor of `C_m = K + Λ_m`.
    pub chol_m: Cholesky,
    /// `P = C_v⁻¹`.
    pub p: Mat<f64>,
    /// `λ_m`.
    pub lm: Vec<f64>,
    /// `λ_v`.
    pub lv: Vec<f64>,
    /// Covariance scale `s`.
    pub scale: f64,
    /// Q's marginals on the sample.
    pub marginals: Marginals,
    /// Empirical Gibbs risk.
    pub risk: f64,
    /// `KL(Q‖P)`.
    pub kl: f64,
    /// `∂risk_i/∂μ_i` per point (not divided by N).
    pub g_mu: Vec<f64>,
    /// `∂risk_i/∂v_i` per point.
    pub g_v: Vec<f64>,
}

impl PointNoiseEval {
    /// Evaluate at noises `λ_m`, `λ_v` and scale `s` for Gram `k`, residual targets `r` (the
    /// weights' right-hand side) and targets `y` (the loss's); with a loss, the risk and its
    /// partials too (else they are zero).
    pub fn new(
        k: &Mat<f64>,
        r: &[f64],
        y: &[f64],
        (lm, lv, scale): (Vec<f64>, Vec<f64>, f64),
        loss: Option<&RegressionLoss>,
    ) -> Result<Self> {
        let n = y.len();
        let chol_m =
            Cholesky::factor_plus_diag(k.as_ref(), |i| lm[i], &JitterPolicy::none(), "K + Λ_m")?;
        let chol_v =
            Cholesky::factor_plus_diag(k.as_ref(), |i| lv[i], &JitterPolicy::none(), "K + Λ_v")?;
        let alpha = chol_m.solve_vec(r);
        let pm = chol_v.inverse()?;
        let (mut risk, mut g_mu, mut g_v) = (0.0, vec![0.0; n], vec![0.0; n]);
        let (mut mean, mut var) = (vec![0.0; n], vec![0.0; n]);
        let (mut tr, mut ln_lv) = (0.0, 0.0);
        for i in 0..n {
            mean[i] = y[i] - lm[i] * alpha[i];
            var[i] = (scale * (lv[i] - lv[i] * lv[i] * pm[(i, i)])).max(1e-300);
            if let Some(l) = loss {
                let pr = l.point_risk(y[i], mean[i], var[i]);
                risk += pr.risk / n as f64;
                g_mu[i] = pr.d_mean;
                g_v[i] = pr.d_var;
            }
            tr += scale * lv[i] * pm[(i, i)];
            ln_lv += lv[i].ln();
        }
        // αᵀKα = rᵀα − αᵀΛ_mα.
        let quad =
            linalg::dot(r, &alpha) - (0..n).map(|i| lm[i] * alpha[i] * alpha[i]).sum::<f64>();
        // Σ = s(K − K C_v⁻¹ K), so K⁻¹Σ = s Λ_v C_v⁻¹.
        let nf = n as f64;
        let kl = GaussianKlTerms {
            trace: tr,
            mahalanobis: quad,
            dim: nf,
            ln_det_ratio: nf * scale.ln() + ln_lv - chol_v.ln_det(),
        }
        .kl();
        Ok(Self {
            alpha,
            chol_m,
            p: pm,
            lm,
            lv,
            scale,
            marginals: Marginals { mean, var },
            risk,
            kl,
            g_mu,
            g_v,
        })
    }

    /// `h = C_m⁻¹Λ_m g_μ` and `u = C_m⁻¹Λ_m α` (the mean noises' adjoints).
    pub fn adjoints(&self) -> (Vec<f64>, Vec<f64>) {
        let n = self.alpha.len();
        let lg: Vec<f64> = (0..n).map(|i| self.lm[i] * self.g_mu[i]).collect();
        let la: Vec<f64> = (0..n).map(|i| self.lm[i] * self.alpha[i]).collect();
        (self.chol_m.solve_vec(&lg), self.chol_m.solve_vec(&la))
    }

    /// `(∂B/∂λ_m, ∂B/∂λ_v, ∂B/∂s)` for `w_q = ∂B/∂R_S / N`, `w_c = ∂B/∂C / N` and the
    /// [`Self::adjoints`] `(h, u)` (module docs; with `s`:
    /// `∂/∂λ_v,j = w_q s[g_v,j(1 − 2λ_jP_jj) + Σ_i g_v,i λ_i² P_ij²] + ½w_c[s(P_jj − (PΛ_vP)_jj) + P_jj − 1/λ_j]`,
    /// `∂/∂s = w_q Σ_i g_v,i v_i/s + ½w_c[Σ_i λ_v,i P_ii − N/s]`).
    pub fn noise_gradients(
        &self,
        wq: f64,
        wc: f64,
        h: &[f64],
        u: &[f64],
    ) -> (Vec<f64>, Vec<f64>, f64) {
        let n = self.alpha.len();
        let (alpha, lv, s) = (&self.alpha, &self.lv, self.scale);
        let d_lm = (0..n)
            .map(|j| wq * alpha[j] * (h[j] - self.g_mu[j]) - wc * alpha[j] * (alpha[j] - u[j]))
            .collect();
        let mut d_lv = Vec::with_capacity(n);
        let (mut ds_risk, mut tr) = (0.0, 0.0);
        for j in 0..n {
            let col = self.p.col_as_slice(j);
            let (mut s_g, mut s_l) = (0.0, 0.0);
            for i in 0..n {
                let p2 = col[i] * col[i];
                s_g += self.g_v[i] * lv[i] * lv[i] * p2;
                s_l += lv[i] * p2;
            }
            let pjj = col[j];
            d_lv.push(
                wq * s * (self.g_v[j] * (1.0 - 2.0 * lv[j] * pjj) + s_g)
                    + 0.5 * wc * (s * (pjj - s_l) + pjj - 1.0 / lv[j]),
            );
            ds_risk += self.g_v[j] * self.marginals.var[j] / s;
            tr += lv[j] * pjj;
        }
        let d_s = wq * ds_risk + 0.5 * wc * (tr - n as f64 / s);
        (d_lm, d_lv, d_s)
    }
}
