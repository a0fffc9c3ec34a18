//! PAC-GP with heteroscedastic posterior noise (docs/math.md §9.4.2): PAC-GP's bound
//! minimised over θ and per-point noises for the posterior's mean (`λ_m,i`) and covariance
//! (`λ_v,i`), free posterior parameters (not charged). The posterior, its KL and the
//! gradients are `crate::regression::point_noise`'s; with every `λ = σ²` it is
//! [`super::pac_gp`]'s objective (checked in the tests).

use faer::{Mat, MatRef};

use crate::bounds::BoundValue;
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::optim::{self, boxes, GridSnap, OptimReport, Restarts};
use crate::posterior::GaussianPosterior;

use super::bound::{BoundObjective, LatentFamily, MinimisedBound, RiskAndKl};
use super::pac_gp::{fit_pac_gp, PacGpConfig};
use crate::regression::point_noise::PointNoiseEval;

/// PAC-GP's family with per-point posterior noise over `[θ…; ln λ_m; ln λ_v]` (θ only when
/// free).
pub struct PacGpHeteroFamily<'a> {
    kernel: Kernel,
    free_theta: bool,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    loss: RegressionLoss,
}

/// The PAC-GP objective with per-point posterior noise: the bound over [`PacGpHeteroFamily`].
pub type PacGpHeteroObjective<'a> = BoundObjective<PacGpHeteroFamily<'a>>;

impl<'a> BoundObjective<PacGpHeteroFamily<'a>> {
    /// The bound for `kernel` on `(x, y)`; θ is a parameter when `free_theta`, else fixed.
    pub fn new(
        kernel: &Kernel,
        free_theta: bool,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        loss: RegressionLoss,
        bound: MinimisedBound,
    ) -> Result<Self> {
        super::check_full_gp_sample(kernel, x, y)?;
        let family = PacGpHeteroFamily {
            kernel: kernel.clone(),
            free_theta,
            x,
            y,
            loss,
        };
        Ok(Self::over(family, bound))
    }
}

impl PacGpHeteroFamily<'_> {
    fn kernel_at(&self, p: &[f64]) -> Result<Kernel> {
        let mut k = self.kernel.clone();
        if self.free_theta {
            k.set_params(&p[..k.n_params()])?;
        }
        Ok(k)
    }

    /// The Gram matrix at `p` and the posterior's terms.
    fn gram_and_terms(&self, p: &[f64]) -> Result<(Mat<f64>, PointNoiseEval)> {
        let n = self.y.len();
        let nt = self.n_theta();
        let k = self.kernel_at(p)?.gram(self.x)?;
        let lm: Vec<f64> = p[nt..nt + n].iter().map(|l| l.exp()).collect();
        let lv: Vec<f64> = p[nt + n..].iter().map(|l| l.exp()).collect();
        let e = PointNoiseEval::new(&k, self.y, self.y, (lm, lv, 1.0), Some(&self.loss))?;
        Ok((k, e))
    }

    /// The posterior at `p` in the shared site form (`Π = Λ_v⁻¹`, `α = C_m⁻¹y`).
    pub fn posterior_at(&self, p: &[f64]) -> Result<GaussianPosterior> {
        let (k, e) = self.gram_and_terms(p)?;
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

/// One evaluation of [`PacGpHeteroFamily`]: the Gram matrix and the posterior's terms.
pub struct PacGpHeteroEvaluation(Mat<f64>, PointNoiseEval);

impl LatentFamily for PacGpHeteroFamily<'_> {
    type Evaluation = PacGpHeteroEvaluation;

    fn dim(&self) -> usize {
        self.n_theta() + 2 * self.y.len()
    }

    fn sample_size(&self) -> usize {
        self.y.len()
    }

    fn n_theta(&self) -> usize {
        if self.free_theta {
            self.kernel.n_params()
        } else {
            0
        }
    }

    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, Self::Evaluation)> {
        let (k, e) = self.gram_and_terms(p)?;
        Ok((RiskAndKl::new(e.risk, e.kl), PacGpHeteroEvaluation(k, e)))
    }

    fn pull_back(&self, p: &[f64], ev: Self::Evaluation, b: &BoundValue) -> Result<Vec<f64>> {
        let PacGpHeteroEvaluation(k, e) = ev;
        let n = self.y.len();
        let nf = n as f64;
        let (d_q, d_c) = (b.d_risk, b.d_complexity);
        let (wq, wc) = (d_q / nf, d_c / nf);
        let (alpha, pm, lv) = (&e.alpha, &e.p, &e.lv);
        let (h, u) = e.adjoints();
        let mut grad = Vec::with_capacity(self.dim());
        if self.free_theta {
            // P diag(d) P with d = w_q λ_v² g_v − ½ w_c λ_v, plus the rank-two and P terms.
            let d: Vec<f64> = (0..n)
                .map(|i| wq * lv[i] * lv[i] * e.g_v[i] - 0.5 * wc * lv[i])
                .collect();
            let mut g = linalg::weighted_gram(pm, &d)?;
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
        Ok(grad)
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
    let bound = MinimisedBound::new(cfg.delta, cfg.term, cfg.kind, cfg.grid.penalty(nk))?;
    let obj = |k: &Kernel, free| {
        PacGpHeteroObjective::new(k, free, x.as_ref(), &y, cfg.loss, bound.clone())
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
        Some(&GridSnap::decimal(cfg.grid, nk)),
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
    let posterior = obj(&kernel, false)?.family().posterior_at(&m2.params)?;
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
        homoscedastic_posterior: base.gp.posterior()?,
        report: m2.report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::{BoundKind, ConfidenceTerm};
    use crate::gradcheck::{assert_objective_gradient, Tolerance};
    use crate::objective::pac_gp::PacGpObjective;

    /// The tests' bound: δ = 0.05, Maurer's term, 2 nats.
    fn bound(kind: BoundKind) -> MinimisedBound {
        MinimisedBound::new(0.05, ConfidenceTerm::Maurer, kind, 2.0).unwrap()
    }

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
        let obj =
            PacGpHeteroObjective::new(&k, true, x.as_ref(), &y, l, bound(BoundKind::Kl)).unwrap();
        let mut p = k.params();
        p.extend((0..24).map(|i| -2.0 + 0.15 * i as f64));
        assert_objective_gradient(
            &obj,
            &p,
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
        let homo = PacGpObjective::new(&k, x.as_ref(), &y, l, bound(BoundKind::Kl)).unwrap();
        let mut ph = k.params();
        ph.push(s2.ln());
        let want = homo.terms(&ph).unwrap();
        let het =
            PacGpHeteroObjective::new(&k, false, x.as_ref(), &y, l, bound(BoundKind::Kl)).unwrap();
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
        let post = het.family().posterior_at(&p).unwrap();
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
