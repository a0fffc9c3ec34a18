//! Sparse PAC-GP with heteroscedastic posterior noise (docs/math.md §9.4.2 in the sparse
//! form): the posterior `q(u)` of PAC-SGP (seed 004, eq. (11)) with a free noise per training
//! point, `Λ_ii = σ_i² + α_s·max(k_ii − q_i, 0)`. The σ_i² are Q's parameters (not charged):
//! the prior stays `p(u) = N(0, K_uu)`, so the KL keeps PAC-SGP's closed form
//! `KL = ½[tr(PA⁻¹) + eᵀPe − M + ln det A − ln det P]` with `A = P + FΛ⁻¹Fᵀ`, and the
//! marginals `μ_i = F_iᵀe`, `v_i = k_ii − q_i + F_iᵀA⁻¹F_i` (see [`super::pac_sgp`]).
//!
//! PAC-SGP's reverse mode already carries the adjoint `∂B/∂Λ_ii` per point; the gradient in
//! `ln σ_i²` is `σ_i²·∂B/∂Λ_ii` (with one shared σ² it sums to PAC-SGP's `σ²·Σ_i ∂B/∂Λ_ii`).
//! Parameters `[θ… (when free); ln σ_1²…ln σ_N²; vec(Z) row by row]`.

use faer::{Mat, MatRef};

use crate::bounds::ConfidenceTerm;
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::optim::{self, boxes, LbfgsConfig, OptimReport, Restarts};
use crate::posterior::GaussianPosterior;
use crate::regression::row_blocks::Streaming;
use crate::regression::whitened_blocks::{whitened_sums, SparseData};

use crate::bounds::BoundValue;

use super::bound::{BoundObjective, LatentFamily, MinimisedBound, RiskAndKl};
use super::pac_sgp::{PacSgpEvaluation, PacSgpFamily, PacSgpFit, PacSgpObjective, PacSgpSettings};

/// PAC-SGP's family with per-point posterior noise over `[θ… (when free); ln σ_i²; vec(Z)]`
/// on standardised data.
pub struct PacSgpHeteroFamily<'a> {
    base: PacSgpFamily<'a>,
    free_theta: bool,
}

/// The PAC-SGP bound with per-point posterior noise: the bound over [`PacSgpHeteroFamily`].
pub type PacSgpHeteroObjective<'a> = BoundObjective<PacSgpHeteroFamily<'a>>;

impl<'a> BoundObjective<PacSgpHeteroFamily<'a>> {
    /// PAC-SGP's bound `base` with a noise per point; θ is a parameter when `free_theta`
    /// (else held at `base`'s kernel, its hyperparameter prior's price with it).
    pub fn new(base: PacSgpObjective<'a>, free_theta: bool) -> Self {
        let (base, mut bound) = base.into_parts();
        if !free_theta {
            bound = bound.with_theta_fixed(&base.kernel.params());
        }
        Self::over(PacSgpHeteroFamily { base, free_theta }, bound)
    }

    /// The kernel, the per-point noises and Z at `p`.
    pub fn unpack(&self, p: &[f64]) -> Result<(Kernel, Vec<f64>, Mat<f64>)> {
        self.family().unpack(p)
    }

    /// Pack `[θ (when free); ln σ_i²; vec(Z)]`.
    pub fn pack(&self, kernel: &Kernel, noise: &[f64], z: MatRef<'_, f64>) -> Vec<f64> {
        let mut p = if self.family().free_theta {
            kernel.params()
        } else {
            vec![]
        };
        p.extend(noise.iter().map(|s| s.ln()));
        for a in 0..z.nrows() {
            for t in 0..z.ncols() {
                p.push(z[(a, t)]);
            }
        }
        p
    }

    /// Q at `p` as the shared posterior (whitened precision form, `α = L⁻ᵀB⁻¹γ`).
    pub fn posterior_at(&self, p: &[f64]) -> Result<GaussianPosterior> {
        let (kernel, noise, z) = self.unpack(p)?;
        let b = &self.family().base;
        let data = SparseData::new(&kernel, b.x, b.y, z.as_ref(), &Streaming::default());
        let wh = whitened_sums(&data, &|i| noise[i], b.alpha_s, 0)?;
        let alpha = wh.l_uu.solve_upper_vec(&wh.l_b.solve_vec(&wh.gamma));
        Ok(GaussianPosterior::whitened(
            kernel, z, alpha, wh.l_uu, wh.l_b,
        ))
    }
}

impl PacSgpHeteroFamily<'_> {
    /// The kernel, the per-point noises and Z at `p`.
    fn unpack(&self, p: &[f64]) -> Result<(Kernel, Vec<f64>, Mat<f64>)> {
        if p.len() != self.dim() {
            return Err(Error::ShapeMismatch {
                what: "heteroscedastic PAC-SGP parameters",
                expected: format!("{}", self.dim()),
                found: format!("{}", p.len()),
            });
        }
        let b = &self.base;
        let (nt, n, d) = (self.n_theta(), b.y.len(), b.x.ncols());
        let mut kernel = b.kernel.clone();
        if self.free_theta {
            kernel.set_params(&p[..nt])?;
        }
        let noise: Vec<f64> = p[nt..nt + n].iter().map(|l| l.exp()).collect();
        let z = Mat::from_fn(b.m, d, |a, t| p[nt + n + a * d + t]);
        Ok((kernel, noise, z))
    }

    /// PAC-SGP's evaluation at `p`'s kernel, Z and per-point noises, and the noises.
    fn evaluate_p(
        &self,
        p: &[f64],
        with_grad: bool,
    ) -> Result<(RiskAndKl, PacSgpEvaluation, Vec<f64>)> {
        let (kernel, noise, z) = self.unpack(p)?;
        let (rk, ev) = self
            .base
            .evaluate_at(kernel, &|i| noise[i], 1.0, z, with_grad)?;
        Ok((rk, ev, noise))
    }
}

/// One evaluation of [`PacSgpHeteroFamily`]: PAC-SGP's, and the per-point noises.
pub struct PacSgpHeteroEvaluation {
    base: PacSgpEvaluation,
    noise: Vec<f64>,
}

impl LatentFamily for PacSgpHeteroFamily<'_> {
    type Evaluation = PacSgpHeteroEvaluation;

    fn dim(&self) -> usize {
        self.n_theta() + self.base.y.len() + self.base.m * self.base.x.ncols()
    }

    fn sample_size(&self) -> usize {
        self.base.y.len()
    }

    fn n_theta(&self) -> usize {
        if self.free_theta {
            self.base.kernel.n_params()
        } else {
            0
        }
    }

    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, PacSgpHeteroEvaluation)> {
        let (rk, base, noise) = self.evaluate_p(p, true)?;
        Ok((rk, PacSgpHeteroEvaluation { base, noise }))
    }

    fn pull_back(
        &self,
        _p: &[f64],
        ev: PacSgpHeteroEvaluation,
        b: &BoundValue,
    ) -> Result<Vec<f64>> {
        let (g, lamb) = self.base.pull_back_at(ev.base, b)?;
        // g = [θ…, (shared ln σ² slot), vec(Z)]: replace the slot by the per-point adjoints.
        let nk = self.base.kernel.n_params();
        let mut grad = Vec::with_capacity(self.dim());
        grad.extend_from_slice(&g[..self.n_theta()]);
        grad.extend(ev.noise.iter().zip(&lamb).map(|(s, l)| s * l));
        grad.extend_from_slice(&g[nk + 1..]);
        Ok(grad)
    }

    fn risk_and_kl(&self, p: &[f64]) -> Result<RiskAndKl> {
        Ok(self.evaluate_p(p, false)?.0)
    }
}

/// A PAC-SGP with per-point posterior noise, its certificate and the PAC-SGP it started from.
#[derive(Clone, Debug)]
pub struct PacSgpHeteroFit {
    /// Q (θ of the PAC-SGP fit, Z and the noises as optimised).
    pub posterior: GaussianPosterior,
    /// The per-point posterior noises σ_i².
    pub noise: Vec<f64>,
    /// Its certificate (through [`Certificate::of_posterior`], the PAC-SGP fit's penalty).
    pub certificate: Certificate,
    /// The homoscedastic PAC-SGP it started from.
    pub homoscedastic: PacSgpFit,
    /// Report of the per-point optimisation.
    pub report: OptimReport,
}

/// From a trained PAC-SGP (`base`, fitted on `(x, y)` with `st` and confidence `term`): at its
/// snapped θ (same penalty), minimise the bound over `ln σ_i²` and Z from its optimum (so it
/// never certifies worse than `base`), `iters` L-BFGS steps.
pub fn free_point_noise(
    base: PacSgpFit,
    x: MatRef<'_, f64>,
    y: &[f64],
    st: &PacSgpSettings,
    term: ConfidenceTerm,
    iters: usize,
) -> Result<PacSgpHeteroFit> {
    let gp = &base.gp;
    let bound = MinimisedBound::new(st.delta, term, st.kind, base.certificate.penalty)?;
    let homo = PacSgpObjective::new(&gp.kernel, x, y, gp.z.nrows(), base.alpha_s, st.loss, bound)?;
    let obj = PacSgpHeteroObjective::new(homo, false);
    let x0 = obj.pack(&gp.kernel, &vec![gp.noise_variance; y.len()], gp.z.as_ref());
    let mut bounds = vec![boxes::LN_NOISE; y.len()];
    bounds.extend(std::iter::repeat_n(boxes::FREE, gp.z.nrows() * x.ncols()));
    let lbfgs = LbfgsConfig {
        max_iter: iters,
        ..Default::default()
    };
    let min = optim::drive(&obj, &x0, bounds, &lbfgs, &Restarts::default(), None)?;
    let (_, noise, _) = obj.unpack(&min.params)?;
    let posterior = obj.posterior_at(&min.params)?;
    let spec = CertificateSpec::new(st.delta, term, base.certificate.penalty_terms.clone());
    let certificate =
        Certificate::of_posterior(&posterior, x, y, &GibbsLoss::Regression(st.loss), &spec)?;
    Ok(PacSgpHeteroFit {
        posterior,
        noise,
        certificate,
        homoscedastic: base,
        report: min.report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::{BoundKind, DEFAULT_DELTA};
    use crate::certificate::PenaltyTerm;
    use crate::gradcheck::{assert_objective_gradient, Tolerance};
    use crate::linalg::{self, Cholesky, JitterPolicy};
    use crate::loss::RegressionLoss;
    use crate::objective::pac_sgp::fit_pac_sgp_with;
    use crate::optim::Objective;
    use crate::prior::BoundLevers;
    use crate::regression::inducing_init::InducingInit;
    use crate::regression::sparse::{NegSparseObjective, KUU_JITTER};

    fn toy(n: usize) -> (Mat<f64>, Vec<f64>) {
        crate::objective::toy::sine(n)
    }

    fn z0() -> Mat<f64> {
        Mat::from_fn(4, 2, |a, t| -1.5 + 0.8 * a as f64 + 0.3 * t as f64)
    }

    fn objective<'a>(
        x: MatRef<'a, f64>,
        y: &'a [f64],
        k: &Kernel,
        free: bool,
        alpha_s: f64,
        kind: BoundKind,
    ) -> PacSgpHeteroObjective<'a> {
        let l = RegressionLoss::new_epsilon_band(0.3).unwrap();
        let homo = PacSgpObjective::new(k, x, y, 4, alpha_s, l, sharp(kind)).unwrap();
        PacSgpHeteroObjective::new(homo, free)
    }

    /// The tests' bound: δ = 0.05, the sharp term, 3 nats.
    fn sharp(kind: BoundKind) -> MinimisedBound {
        MinimisedBound::new(0.05, ConfidenceTerm::Sharp, kind, 3.0).unwrap()
    }

    /// The gradient in θ, every ln σ_i² and Z matches central differences (FITC, VFE and an
    /// interpolated α_s; both bound forms).
    #[test]
    fn gradient_matches_central_differences() {
        let (x, y) = toy(20);
        let k = Kernel::se_ard(&[0.8, 1.3], 1.4);
        for (alpha_s, kind) in [
            (1.0, BoundKind::Kl),
            (0.0, BoundKind::Sqrt),
            (0.4, BoundKind::Kl),
        ] {
            let obj = objective(x.as_ref(), &y, &k, true, alpha_s, kind);
            let noise: Vec<f64> = (0..20).map(|i| 0.02 * (1.0 + 0.3 * i as f64)).collect();
            let p = obj.pack(&k, &noise, z0().as_ref());
            assert_objective_gradient(
                &obj,
                &p,
                1e-6,
                Tolerance::mixed(1e-6),
                &format!("heteroscedastic PAC-SGP α_s = {alpha_s}"),
            );
        }
    }

    /// With every σ_i² equal to σ² the terms and gradient are PAC-SGP's own (the σ_i² slots sum
    /// to its ln σ² slot); at unequal noises the objective's KL, risk and bound equal the
    /// certificate of its shared posterior.
    #[test]
    fn equal_noises_reduce_to_pac_sgp_and_terms_equal_the_certificate() {
        let (x, y) = toy(25);
        let k = Kernel::se_ard(&[0.9, 1.1], 1.2);
        let l = RegressionLoss::new_epsilon_band(0.3).unwrap();
        for alpha_s in [0.0, 1.0] {
            let homo =
                PacSgpObjective::new(&k, x.as_ref(), &y, 4, alpha_s, l, sharp(BoundKind::Kl))
                    .unwrap();
            let ph = NegSparseObjective::pack(&k, 0.07, z0().as_ref());
            let (want_v, want_g) = homo.value_and_gradient(&ph).unwrap();
            let want = homo.terms(&ph).unwrap();
            let het = objective(x.as_ref(), &y, &k, true, alpha_s, BoundKind::Kl);
            let p = het.pack(&k, &[0.07; 25], z0().as_ref());
            let got = het.terms(&p).unwrap();
            assert_eq!(got, want, "α_s = {alpha_s}");
            let (v, g) = het.value_and_gradient(&p).unwrap();
            assert_eq!(v, want_v);
            let nk = k.n_params();
            assert_eq!(&g[..nk], &want_g[..nk]);
            let s: f64 = g[nk..nk + 25].iter().sum();
            assert!((s - want_g[nk]).abs() < 1e-12 * (1.0 + want_g[nk].abs()));
            assert_eq!(&g[nk + 25..], &want_g[nk + 1..]);

            let noise: Vec<f64> = (0..25).map(|i| 0.01 + 0.05 * (i % 7) as f64).collect();
            let p = het.pack(&k, &noise, z0().as_ref());
            let t = het.terms(&p).unwrap();
            let spec = CertificateSpec::new(
                0.05,
                ConfidenceTerm::Sharp,
                vec![PenaltyTerm {
                    what: "test".into(),
                    nats: 3.0,
                }],
            );
            let post = het.posterior_at(&p).unwrap();
            let c =
                Certificate::of_posterior(&post, x.as_ref(), &y, &GibbsLoss::Regression(l), &spec)
                    .unwrap();
            assert!((c.kl - t.kl).abs() < 1e-10, "{} vs {}", c.kl, t.kl);
            assert!((c.empirical_risk - t.empirical_risk).abs() < 1e-10);
            assert!((c.bound - t.bound).abs() < 1e-10);
        }
    }

    /// With θ held (not a parameter), a coarse hyperparameter prior still prices the fixed θ:
    /// at equal noises the terms are those of PAC-SGP with θ free at the same point, whose
    /// bound charges the prior's surrogate there, and above the bound without the prior.
    #[test]
    fn a_held_theta_keeps_its_hyperparameter_prior_price() {
        let (x, y) = toy(25);
        let k = Kernel::se_ard(&[0.9, 1.1], 1.2);
        let l = RegressionLoss::new_epsilon_band(0.3).unwrap();
        let priced = sharp(BoundKind::Kl)
            .with_hyper_prior(crate::prior::HyperPrior::gaussian(), &k)
            .unwrap();
        let homo = PacSgpObjective::new(&k, x.as_ref(), &y, 4, 1.0, l, priced.clone()).unwrap();
        let want = homo
            .terms(&NegSparseObjective::pack(&k, 0.07, z0().as_ref()))
            .unwrap();
        let het = PacSgpHeteroObjective::new(homo, false);
        let got = het
            .terms(&het.pack(&k, &[0.07; 25], z0().as_ref()))
            .unwrap();
        assert_eq!(got, want);
        let plain = objective(x.as_ref(), &y, &k, false, 1.0, BoundKind::Kl);
        let unpriced = plain
            .terms(&plain.pack(&k, &[0.07; 25], z0().as_ref()))
            .unwrap();
        assert!(
            got.bound > unpriced.bound,
            "{} vs {}",
            got.bound,
            unpriced.bound
        );
    }

    /// KL of Q against the prior N(0, K_uu) on u by the dense Gaussian formula, independent of
    /// the whitened algebra: `Σ = K_uu (K_uu + F Λ⁻¹ Fᵀ)⁻¹ K_uu`, `a = Σ K_uu⁻¹ F Λ⁻¹ y`.
    #[test]
    fn kl_matches_the_dense_gaussian_kl() {
        let (x, y) = toy(18);
        let k = Kernel::se_iso(1.1, 0.8);
        let het = objective(x.as_ref(), &y, &k, false, 1.0, BoundKind::Kl);
        let noise: Vec<f64> = (0..18).map(|i| 0.03 + 0.1 * (i % 4) as f64).collect();
        let z = z0();
        let t = het.terms(&het.pack(&k, &noise, z.as_ref())).unwrap();
        let mut kuu = k.gram(z.as_ref()).unwrap();
        for i in 0..4 {
            kuu[(i, i)] += KUU_JITTER;
        }
        let f = k.cross(z.as_ref(), x.as_ref()).unwrap();
        let ck = Cholesky::factor(kuu.as_ref(), &JitterPolicy::none(), "K_uu").unwrap();
        let kinv = ck.inverse().unwrap();
        let kd = k.diag(x.as_ref());
        let kf = &kinv * &f;
        let lam: Vec<f64> = (0..18)
            .map(|i| {
                let q: f64 = (0..4).map(|a| f[(a, i)] * kf[(a, i)]).sum();
                noise[i] + (kd[i] - q).max(0.0)
            })
            .collect();
        let inv: Vec<f64> = lam.iter().map(|l| 1.0 / l).collect();
        let a_mat = &kuu + linalg::weighted_gram(&f, &inv).unwrap();
        let ca = Cholesky::factor(a_mat.as_ref(), &JitterPolicy::none(), "A").unwrap();
        let sigma = &kuu * ca.inverse().unwrap() * &kuu;
        let fy = linalg::mat_vec(
            &f,
            &inv.iter().zip(&y).map(|(a, b)| a * b).collect::<Vec<_>>(),
        );
        let mean = linalg::mat_vec(&(&kuu * ca.inverse().unwrap()), &fy);
        let kl = crate::posterior::dense_gaussian_kl(&mean, &sigma, &[0.0; 4], &kuu).unwrap();
        assert!((kl - t.kl).abs() < 1e-8, "{kl} vs {}", t.kl);
    }

    /// Freeing the per-point noises never certifies worse than the PAC-SGP it starts from.
    #[test]
    fn heteroscedastic_fit_is_never_looser_than_pac_sgp() {
        let (x, y) = toy(60);
        let st = PacSgpSettings {
            m: 5,
            alpha_s: 1.0,
            loss: RegressionLoss::new_epsilon_band(0.3).unwrap(),
            delta: DEFAULT_DELTA,
            kind: BoundKind::Kl,
            seed: 1,
            init: InducingInit::KMeans,
            max_iter: 100,
            pretrain: None,
        };
        let levers = BoundLevers::default();
        let k = Kernel::se_iso(1.0, 1.0);
        let base = fit_pac_sgp_with(&k, 0.1, x.as_ref(), &y, &st, &levers).unwrap();
        let fit = free_point_noise(base, x.as_ref(), &y, &st, levers.term, 100).unwrap();
        let base = fit.homoscedastic.certificate.bound;
        assert!(
            fit.certificate.bound <= base + 1e-9,
            "{} vs {base}",
            fit.certificate.bound
        );
        assert_eq!(
            fit.certificate.penalty,
            fit.homoscedastic.certificate.penalty
        );
    }
}
