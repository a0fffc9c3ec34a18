//! PAC-GP with heteroscedastic posterior noise (tighter-bounds spec §4.2): the posterior of the
//! full GP gets per-point noise for its mean (`λ_m,i`) and its covariance (`λ_v,i`), free
//! posterior parameters (not charged). With `C_m = K + Λ_m`, `C_v = K + Λ_v`, `α = C_m⁻¹y`,
//! `P = C_v⁻¹`:
//!
//! `q(f_X) = N(Kα, K − K C_v⁻¹ K)` (the site form with `Π = Λ_v⁻¹`),
//! `μ_i = y_i − λ_m,i α_i`, `v_i = λ_v,i − λ_v,i² P_ii`,
//! `KL = ½[Σ_i λ_v,i P_ii + αᵀKα − N − Σ_i ln λ_v,i + ln det C_v]` (spec §4.2).
//!
//! With every `λ_m,i = λ_v,i = σ²` it is [`super::pac_gp`]'s objective (checked in the
//! tests); that path is untouched. Gradients (derived here, checked by central differences):
//! with `w_q = ∂B/∂R_S / N`, `w_c = ∂B/∂C / N`, `h = C_m⁻¹Λ_m g_μ`, `u = C_m⁻¹Λ_m α`,
//! - `∂/∂λ_m,j = w_q α_j(h_j − g_μ,j) − w_c α_j(α_j − u_j)`;
//! - `∂/∂λ_v,j = w_q[g_v,j(1 − 2λ_jP_jj) + Σ_i g_v,i λ_i² P_ij²] + ½w_c[2P_jj − (PΛ_vP)_jj − 1/λ_j]`;
//! - `∂/∂K = w_q[½(hαᵀ + αhᵀ) + P diag(λ_v² g_v) P] + w_c[−½ααᵀ + ½(uαᵀ + αuᵀ) + ½(P − PΛ_vP)]`,
//!   contracted with `∂K/∂θ`.

use faer::{Mat, MatRef};

use crate::bounds::{BoundKind, BoundTarget, ConfidenceTerm};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::optim::{self, boxes, GridSnap, Objective, OptimReport, Restarts};
use crate::posterior::{GaussianPosterior, Marginals};

use super::pac_gp::{fit_pac_gp, PacGpConfig, PacGpTerms};

/// The per-point-noise posterior on one Gram matrix `K` (spec §4.2), shared by PAC-GP
/// (`K` the kernel's Gram, `r = y`, `s = 1`) and the split prior (`K = K_A` on part B,
/// `r = y_B − μ_A`, free covariance scale `s`; spec §3.2): `α = C_m⁻¹r`, `P = C_v⁻¹`,
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

/// `K + diag(λ)` factored.
pub(crate) fn factor_plus_diag(
    k: &Mat<f64>,
    lambda: &[f64],
    what: &'static str,
) -> Result<Cholesky> {
    let mut c = k.clone();
    for (i, l) in lambda.iter().enumerate() {
        c[(i, i)] += l;
    }
    Cholesky::factor(c.as_ref(), &JitterPolicy::none(), what)
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
        let chol_m = factor_plus_diag(k, &lm, "K + Λ_m")?;
        let chol_v = factor_plus_diag(k, &lv, "K + Λ_v")?;
        let alpha = chol_m.solve_vec(r);
        let pm = chol_v.inverse();
        let (mut risk, mut g_mu, mut g_v) = (0.0, vec![0.0; n], vec![0.0; n]);
        let (mut mean, mut var) = (vec![0.0; n], vec![0.0; n]);
        let mut tr = 0.0;
        for i in 0..n {
            mean[i] = y[i] - lm[i] * alpha[i];
            var[i] = (scale * (lv[i] - lv[i] * lv[i] * pm[(i, i)])).max(1e-300);
            if let Some(l) = loss {
                let pr = l.point_risk(y[i], mean[i], var[i]);
                risk += pr.risk / n as f64;
                g_mu[i] = pr.d_mean;
                g_v[i] = pr.d_var;
            }
            tr += scale * lv[i] * pm[(i, i)] - lv[i].ln();
        }
        // αᵀKα = rᵀα − αᵀΛ_mα.
        let quad =
            linalg::dot(r, &alpha) - (0..n).map(|i| lm[i] * alpha[i] * alpha[i]).sum::<f64>();
        let nf = n as f64;
        let kl = 0.5 * (tr + quad - nf - nf * scale.ln() + chol_v.ln_det());
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

/// The PAC-GP objective with per-point posterior noise over `[θ…; ln λ_m; ln λ_v]` (θ only
/// when free).
pub struct PacGpHeteroObjective<'a> {
    kernel: Kernel,
    free_theta: bool,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    loss: RegressionLoss,
    /// The bound minimised (δ, confidence term, form, penalty).
    target: BoundTarget,
}

impl<'a> PacGpHeteroObjective<'a> {
    /// The bound for `kernel` on `(x, y)`; θ is a parameter when `free_theta`, else fixed.
    pub fn new(
        kernel: &Kernel,
        free_theta: bool,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        loss: RegressionLoss,
        delta: f64,
        penalty: f64,
        kind: BoundKind,
    ) -> Result<Self> {
        let target = super::check_bound_setup(kernel, x, y, delta, penalty, kind)?;
        Ok(Self {
            kernel: kernel.clone(),
            free_theta,
            x,
            y,
            loss,
            target,
        })
    }

    /// The same objective with another confidence constant (default Maurer's `ln(2√N/δ)`).
    pub fn with_confidence_term(mut self, term: ConfidenceTerm) -> Self {
        self.target.term = term;
        self
    }

    fn n_theta(&self) -> usize {
        if self.free_theta {
            self.kernel.n_params()
        } else {
            0
        }
    }

    fn kernel_at(&self, p: &[f64]) -> Result<Kernel> {
        let mut k = self.kernel.clone();
        if self.free_theta {
            k.set_params(&p[..k.n_params()])?;
        }
        Ok(k)
    }

    /// The Gram matrix at `p` and the posterior's terms.
    fn evaluate(&self, p: &[f64]) -> Result<(Mat<f64>, PointNoiseEval)> {
        let n = self.y.len();
        let nt = self.n_theta();
        let k = self.kernel_at(p)?.gram(self.x);
        let lm: Vec<f64> = p[nt..nt + n].iter().map(|l| l.exp()).collect();
        let lv: Vec<f64> = p[nt + n..].iter().map(|l| l.exp()).collect();
        let e = PointNoiseEval::new(&k, self.y, self.y, (lm, lv, 1.0), Some(&self.loss))?;
        Ok((k, e))
    }

    /// `(R_S, KL, bound)` at `p`.
    pub fn terms(&self, p: &[f64]) -> Result<PacGpTerms> {
        let (_, e) = self.evaluate(p)?;
        Ok(PacGpTerms {
            empirical_risk: e.risk,
            kl: e.kl,
            bound: self.target.at(e.risk, e.kl, self.y.len()).value,
        })
    }

    /// The posterior at `p` in the shared site form (`Π = Λ_v⁻¹`, `α = C_m⁻¹y`).
    pub fn posterior_at(&self, p: &[f64]) -> Result<GaussianPosterior> {
        let (k, e) = self.evaluate(p)?;
        let sqrt_pi: Vec<f64> = e.lv.iter().map(|l| 1.0 / l.sqrt()).collect();
        let chol_b = Cholesky::factor_filled(
            sqrt_pi.len(),
            linalg::fill_site_b(&k, &sqrt_pi, 0.0),
            None,
            &JitterPolicy::none(),
            "I + Λ_v^-½KΛ_v^-½",
        )?;
        Ok(GaussianPosterior::sites(
            self.kernel_at(p)?,
            self.x.to_owned(),
            e.alpha,
            sqrt_pi,
            chol_b,
        ))
    }
}

impl Objective for PacGpHeteroObjective<'_> {
    fn dim(&self) -> usize {
        self.n_theta() + 2 * self.y.len()
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (k, e) = self.evaluate(p)?;
        let n = self.y.len();
        let nf = n as f64;
        let b = self.target.at(e.risk, e.kl, n);
        let (value, d_q, d_c) = (b.value, b.d_risk, b.d_complexity);
        let (wq, wc) = (d_q / nf, d_c / nf);
        let (alpha, pm, lv) = (&e.alpha, &e.p, &e.lv);
        let (h, u) = e.adjoints();
        let mut grad = Vec::with_capacity(self.dim());
        if self.free_theta {
            // P diag(d) P with d = w_q λ_v² g_v − ½ w_c λ_v, plus the rank-two and P terms.
            let d: Vec<f64> = (0..n)
                .map(|i| wq * lv[i] * lv[i] * e.g_v[i] - 0.5 * wc * lv[i])
                .collect();
            let mut g = linalg::weighted_gram(pm, &d);
            for j in 0..n {
                for i in 0..n {
                    g[(i, j)] += wq * 0.5 * (h[i] * alpha[j] + alpha[i] * h[j])
                        + wc * (-0.5 * alpha[i] * alpha[j]
                            + 0.5 * (u[i] * alpha[j] + alpha[i] * u[j])
                            + 0.5 * pm[(i, j)]);
                }
            }
            let kernel = self.kernel_at(p)?;
            grad.extend(kernel.gram_grad_contract_symmetric(self.x, g.as_ref(), Some(k.as_ref())));
        }
        let (d_lm, d_lv, _) = e.noise_gradients(wq, wc, &h, &u);
        grad.extend(d_lm.iter().zip(&e.lm).map(|(d, l)| l * d));
        grad.extend(d_lv.iter().zip(lv).map(|(d, l)| l * d));
        Ok((value, grad))
    }
}

/// Box of every `ln λ`: PAC-GP's noise box.
const LN_LAMBDA: (f64, f64) = boxes::LN_NOISE;

/// A PAC-GP with heteroscedastic posterior noise and its certificate.
#[derive(Clone, Debug)]
pub struct PacGpHeteroFit {
    /// The posterior at the snapped θ.
    pub posterior: GaussianPosterior,
    /// `ln λ_m` then `ln λ_v`, one per training point.
    pub ln_lambda: Vec<f64>,
    /// Its certificate (through [`Certificate::of_posterior`]).
    pub certificate: Certificate,
    /// The homoscedastic PAC-GP certificate it started from (same grid penalty).
    pub homoscedastic: Certificate,
    /// That PAC-GP's posterior.
    pub homoscedastic_posterior: GaussianPosterior,
    /// Report of the last (θ fixed) optimisation.
    pub report: OptimReport,
}

/// Train PAC-GP (its own fit first), then free the per-point noises: joint optimisation of θ
/// and `ln λ` from the PAC-GP optimum, θ snapped onto the grid, `ln λ` re-optimised there.
pub fn fit_pac_gp_hetero(
    kernel_init: &Kernel,
    noise_init: f64,
    x: Mat<f64>,
    y: Vec<f64>,
    cfg: &PacGpConfig,
) -> Result<PacGpHeteroFit> {
    let base = fit_pac_gp(kernel_init, noise_init, x.clone(), y.clone(), cfg)?;
    let n = y.len();
    let nk = kernel_init.n_params();
    let penalty = cfg.grid.penalty(nk);
    let obj = |k: &Kernel, free| {
        PacGpHeteroObjective::new(
            k,
            free,
            x.as_ref(),
            &y,
            cfg.loss,
            cfg.delta,
            penalty,
            cfg.kind,
        )
        .map(|o| o.with_confidence_term(cfg.term))
    };
    let s2 = base.gp.noise_variance + base.gp.jitter_used();
    let mut x0 = base.gp.kernel.params();
    x0.extend(std::iter::repeat_n(s2.ln(), 2 * n));
    let mut bounds = vec![boxes::LN_THETA; nk];
    bounds.extend(std::iter::repeat_n(LN_LAMBDA, 2 * n));
    let joint = obj(&base.gp.kernel, true)?;
    let min = optim::drive(
        &joint,
        &x0,
        bounds,
        &cfg.lbfgs,
        &Restarts::default(),
        Some(&GridSnap {
            grid: cfg.grid,
            n: nk,
        }),
    )?;
    let mut kernel = base.gp.kernel.clone();
    kernel.set_params(&min.params[..nk])?;
    let flat = vec![s2.ln(); 2 * n];
    // λ re-optimised at the snapped θ from the joint optimum's λ or σ², whichever is lower.
    let at = |k: &Kernel, joint: Option<&[f64]>| -> Result<(Kernel, optim::Minimum)> {
        let fixed = obj(k, false)?;
        let mut start = flat.clone();
        if let Some(j) = joint {
            if fixed.terms(j)?.bound < fixed.terms(&flat)?.bound {
                start = j.to_vec();
            }
        }
        let m = optim::drive(
            &fixed,
            &start,
            vec![LN_LAMBDA; 2 * n],
            &cfg.lbfgs,
            &Restarts::default(),
            None,
        )?;
        Ok((k.clone(), m))
    };
    let (mut kernel, mut m2) = at(&kernel, Some(&min.params[nk..]))?;
    // If θ moved to a worse grid point, PAC-GP's own θ with free λ (never above PAC-GP);
    // either is a grid point, paid for by the same T·ln L.
    if m2.report.value > base.certificate.bound_of_kind(cfg.kind) {
        let (k, m) = at(&base.gp.kernel, None)?;
        if m.report.value < m2.report.value {
            (kernel, m2) = (k, m);
        }
    }
    let posterior = obj(&kernel, false)?.posterior_at(&m2.params)?;
    let spec = CertificateSpec::new(cfg.delta, cfg.term, vec![PenaltyTerm::grid(&cfg.grid, nk)]);
    let certificate = Certificate::of_posterior(
        &posterior,
        x.as_ref(),
        &y,
        &GibbsLoss::Regression(cfg.loss),
        &spec,
    )?;
    Ok(PacGpHeteroFit {
        posterior,
        ln_lambda: m2.params,
        certificate,
        homoscedastic: base.certificate,
        homoscedastic_posterior: base.gp.posterior(),
        report: m2.report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradcheck::{assert_gradient_close, Tolerance};
    use crate::objective::pac_gp::PacGpObjective;

    fn toy(n: usize) -> (Mat<f64>, Vec<f64>) {
        let x = Mat::from_fn(n, 1, |i, _| i as f64 * 0.37 - 2.5);
        let y = (0..n)
            .map(|i| (x[(i, 0)] * 1.3).sin() + 0.3 * (((i * 7) % 5) as f64 - 2.0) / 2.0)
            .collect();
        (x, y)
    }

    /// The gradient in θ and every ln λ matches central differences.
    #[test]
    fn gradient_matches_central_differences() {
        let (x, y) = toy(12);
        let l = RegressionLoss::new_epsilon_band(0.4).unwrap();
        let k = Kernel::se_iso(1.1, 0.9);
        let obj = PacGpHeteroObjective::new(&k, true, x.as_ref(), &y, l, 0.05, 2.0, BoundKind::Kl)
            .unwrap();
        let mut p = k.params();
        p.extend((0..24).map(|i| -2.0 + 0.15 * i as f64));
        let (_, g) = obj.value_and_gradient(&p).unwrap();
        assert_gradient_close(
            |q| obj.value(q).unwrap(),
            &p,
            &g,
            1e-6,
            Tolerance::mixed(1e-6),
            "heteroscedastic PAC-GP",
        );
    }

    /// With every λ equal to σ² the terms are PAC-GP's own; the certificate of the posterior
    /// equals the objective's terms.
    #[test]
    fn equal_noises_reduce_to_pac_gp_and_terms_equal_the_certificate() {
        let (x, y) = toy(15);
        let l = RegressionLoss::new_epsilon_band(0.4).unwrap();
        let k = Kernel::se_iso(0.9, 1.2);
        let s2: f64 = 0.2;
        let homo = PacGpObjective::new(&k, x.as_ref(), &y, l, 0.05, 2.0, BoundKind::Kl).unwrap();
        let mut ph = k.params();
        ph.push(s2.ln());
        let want = homo.terms(&ph).unwrap();
        let het = PacGpHeteroObjective::new(&k, false, x.as_ref(), &y, l, 0.05, 2.0, BoundKind::Kl)
            .unwrap();
        let got = het.terms(&vec![s2.ln(); 30]).unwrap();
        assert!(
            (got.kl - want.kl).abs() < 1e-10,
            "{} vs {}",
            got.kl,
            want.kl
        );
        assert!((got.empirical_risk - want.empirical_risk).abs() < 1e-12);
        let p: Vec<f64> = (0..30).map(|i| -2.0 + 0.1 * i as f64).collect();
        let t = het.terms(&p).unwrap();
        let post = het.posterior_at(&p).unwrap();
        let spec = CertificateSpec::new(
            0.05,
            ConfidenceTerm::Maurer,
            vec![PenaltyTerm {
                what: "test".into(),
                nats: 2.0,
            }],
        );
        let c = Certificate::of_posterior(&post, x.as_ref(), &y, &GibbsLoss::Regression(l), &spec)
            .unwrap();
        assert!((c.kl - t.kl).abs() < 1e-10, "{} vs {}", c.kl, t.kl);
        assert!((c.empirical_risk - t.empirical_risk).abs() < 1e-10);
        assert!((c.bound - t.bound).abs() < 1e-10);
    }

    /// Freeing the per-point noises never certifies worse than PAC-GP at its snapped θ.
    #[test]
    fn heteroscedastic_fit_is_never_looser_than_pac_gp() {
        let (x, y) = toy(40);
        let mut cfg = PacGpConfig::new(0.4, BoundKind::Kl).unwrap();
        cfg.lbfgs.max_iter = 200;
        let fit = fit_pac_gp_hetero(&Kernel::se_iso(1.0, 1.0), 0.1, x, y, &cfg).unwrap();
        assert!(
            fit.certificate.bound <= fit.homoscedastic.bound + 1e-9,
            "{} vs {}",
            fit.certificate.bound,
            fit.homoscedastic.bound
        );
        // The free noises are worth something here: the first-order gain is not zero.
        assert!(
            fit.certificate.bound < 0.99 * fit.homoscedastic.bound,
            "{} vs {}",
            fit.certificate.bound,
            fit.homoscedastic.bound
        );
    }
}
