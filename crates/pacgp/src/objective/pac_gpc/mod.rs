//! PAC-GPC: a GP classifier trained by its PAC-Bayes bound (issue 15 item 4; beyond seed 004,
//! which names it as future work). The bound `kl⁻¹(R_S(Q), (KL(Q‖P) + penalty + conf)/N)` on the
//! Gibbs 0-1 error (docs/math.md §7.1) is minimised over the posterior's free parameters and,
//! optionally, the kernel's θ (snapped onto the PAC grid afterwards, penalty `T·ln L`).
//!
//! The posterior family is the site form on the sample's latent values (docs/math.md §7.3–7.4)
//! against a Gaussian prior `N(m₀, K₀)` on them:
//!
//! `q(f) = N(m₀ + K₀α, Σ)`, `Σ = (K₀⁻¹ + Π)⁻¹`, `Π = diag(π)`,
//!
//! parametrised by the mean weights α and `ln π`. At fixed Π this is the family `N(Σν̃, Σ)` of
//! free site means and precisions (`ν̃ = α + Π(K₀α)`, a bijection), so nothing is lost; α keeps
//! the mean linear in the parameters. With `B = I + Π½K₀Π½` (Cholesky `L`),
//!
//! `KL(q‖N(m₀,K₀)) = ½[ln det B + tr B⁻¹ + αᵀK₀α − N]` (docs/math.md §7.4),
//!
//! marginals `μ = m₀ + K₀α`, `v_i = [K₀ − VᵀV]_ii` with `V = L⁻¹Π½K₀`, and Gibbs errors
//! `e_i = Φ(−y_i(μ_i + b)/√(λ⁻² + v_i))` (λ⁻² = 0 for the noise-free latent classifier).
//!
//! Gradients (derived here; checked against central differences in the tests): with
//! `w_q = ∂B/∂R_S / N`, `w_c = ∂B/∂C / N`, per-point `g_μ = ∂e/∂μ`, `g_v = ∂e/∂v`,
//! - `∂/∂α = K₀(w_q g_μ + w_c α)`;
//! - `∂/∂π_i = Σ_j Σ_ij² (½w_c π_j − w_q g_v,j)` (from `∂Σ/∂π_i = −Σe_ie_iᵀΣ` and
//!   `∂KL/∂π_i = ½(ΣΠΣ)_ii`);
//! - `∂/∂K₀ = G = w_c·½(R − DA²D + ααᵀ) + w_q[½(g_μαᵀ + αg_μᵀ) + P diag(g_v) Pᵀ]` with
//!   `D = Π½`, `A = B⁻¹`, `R = DAD`, `P = I − RK₀` (`∂Σ = Pᵀ ∂K₀ P`, `∂ln det B = tr(R ∂K₀)`,
//!   `∂tr B⁻¹ = −tr(DA²D ∂K₀)`), contracted with `∂K/∂θ` when `K₀ = K_θ(X, X)`, `m₀ = 0`.
//!
//! Cost per evaluation: a Cholesky and a few N×N products, `O(N³)`.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, BoundValue, ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::error::{Error, Result};
use crate::inference::laplace::{laplace, LaplaceConfig};
use crate::inference::{check_classification, ClassifierFit};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::gibbs_error_point;
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, Objective, OptimReport, Restarts};
use crate::posterior::prior::ROUND_OFF;
use crate::posterior::{Covariance, GaussianKlTerms, GaussianPosterior, Marginals, Prior, PriorAt};
use crate::select::Menu;
use crate::special::normal_pdf;

use super::bound::{BoundObjective, LatentFamily, MinimisedBound, RiskAndKl};

mod fit;
mod objective;
pub use fit::*;
pub use objective::*;

/// Box for the site log-precisions `ln π_i`: from "no information" (`π = 1.5e-8`) to a site
/// that pins the latent value (`π = 1.2e6`); the floor also makes Laplace's `W ≈ 0` finite.
pub const LN_SITE_PRECISION: (f64, f64) = (-18.0, 14.0);

/// The free parameters of a site-form posterior: mean weights α and site log-precisions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteParams {
    /// Mean weights: `μ = m₀ + K₀α`.
    pub alpha: Vec<f64>,
    /// `ln π_i`.
    pub ln_pi: Vec<f64>,
}

impl SiteParams {
    /// The sites of a site-form posterior (Laplace, EP) over its basis, `ln π` clamped into
    /// [`LN_SITE_PRECISION`] (Laplace's `W` underflows to 0 on confident points).
    pub fn of_posterior(post: &GaussianPosterior) -> Result<Self> {
        let Covariance::Sites { sqrt_pi, .. } = &post.cov else {
            return Err(Error::Unsupported(
                "PAC-GPC warm-starts from a site-form posterior (Laplace or EP)".into(),
            ));
        };
        Ok(Self {
            alpha: post.alpha.clone(),
            ln_pi: sqrt_pi
                .iter()
                .map(|s| (2.0 * s.max(1e-300).ln()).clamp(LN_SITE_PRECISION.0, LN_SITE_PRECISION.1))
                .collect(),
        })
    }

    /// `[α; ln π]`.
    pub fn stacked(&self) -> Vec<f64> {
        self.alpha.iter().chain(&self.ln_pi).copied().collect()
    }

    /// Sites from `[α; ln π]`.
    pub fn from_stacked(p: &[f64]) -> Self {
        let n = p.len() / 2;
        Self {
            alpha: p[..n].to_vec(),
            ln_pi: p[n..].to_vec(),
        }
    }

    /// `√π_i`.
    pub fn sqrt_pi(&self) -> Vec<f64> {
        self.ln_pi.iter().map(|l| (0.5 * l).exp()).collect()
    }
}

/// The site-form posterior `q` against a latent prior, evaluated on the sample.
pub struct SiteEvaluation {
    /// `√π`.
    pub sqrt_pi: Vec<f64>,
    /// Cholesky of `B = I + Π½K₀Π½`.
    pub chol_b: Cholesky,
    /// `V = L⁻¹Π½K₀`.
    v: Mat<f64>,
    /// Marginals of `q` on the sample.
    pub marginals: Marginals,
    /// `KL(q‖N(m₀, K₀))`.
    pub kl: f64,
}

impl SiteEvaluation {
    /// Factor `B`, form the marginals and the KL (module doc).
    pub fn new(prior: &PriorAt, sites: &SiteParams) -> Result<Self> {
        let n = prior.len();
        if sites.alpha.len() != n || sites.ln_pi.len() != n || prior.cov.nrows() != n {
            return Err(Error::ShapeMismatch {
                what: "PAC-GPC sites",
                expected: format!("{n} mean weights and precisions"),
                found: format!("{} and {}", sites.alpha.len(), sites.ln_pi.len()),
            });
        }
        let k0 = &prior.cov;
        let sqrt_pi = sites.sqrt_pi();
        let chol_b = Cholesky::factor_filled(
            n,
            linalg::fill_site_b(k0, &sqrt_pi, 0.0),
            None,
            &JitterPolicy::default(),
            "I + Π½K₀Π½ of PAC-GPC",
        )?;
        let mut v = linalg::try_clone(k0.as_ref(), "V = L_B⁻¹Π½K₀")?;
        for j in 0..n {
            for i in 0..n {
                v[(i, j)] *= sqrt_pi[i];
            }
        }
        chol_b.solve_lower_in_place(v.as_mut());
        let reduction = linalg::col_sq_norms(&v);
        let k_alpha = linalg::mat_vec(k0, &sites.alpha);
        let mean: Vec<f64> = prior
            .mean
            .iter()
            .zip(&k_alpha)
            .map(|(m, k)| m + k)
            .collect();
        let var = (0..n)
            .map(|i| (k0[(i, i)] - reduction[i]).max(0.0))
            .collect();
        // docs/math.md §7.4 with K → K₀ and β → α: ½[ln det B + tr B⁻¹ + αᵀK₀α − N].
        let quad = linalg::dot(&sites.alpha, &k_alpha);
        let kl = GaussianKlTerms::site_form(chol_b.inverse_trace()?, quad, n, chol_b.ln_det()).kl();
        Ok(Self {
            sqrt_pi,
            chol_b,
            v,
            marginals: Marginals { mean, var },
            kl,
        })
    }

    /// The posterior covariance `Σ = K₀ − VᵀV` on the sample.
    fn sigma(&self, k0: &Mat<f64>) -> Result<Mat<f64>> {
        let mut s = linalg::try_product(self.v.transpose(), self.v.as_ref(), "Σ = K₀ − VᵀV")?;
        linalg::subtract_from(k0.as_ref(), &mut s);
        let n = s.nrows();
        for j in 0..n {
            for i in 0..j {
                s[(i, j)] = s[(j, i)];
            }
        }
        Ok(s)
    }
}

/// Per-point Gibbs error and its derivatives `(e, ∂e/∂μ, ∂e/∂v)` (docs/math.md §7.1).
fn point_error(y: f64, mu: f64, v: f64, c: &GibbsClassifier) -> (f64, f64, f64) {
    let e = gibbs_error_point(y, mu, v, c.bias, c.noise_slope);
    let s2 = c.noise_slope.map_or(0.0, |l| 1.0 / (l * l)) + v;
    if s2 <= 0.0 {
        return (e, 0.0, 0.0);
    }
    let s = s2.sqrt();
    let u = -y * (mu + c.bias) / s;
    let phi = normal_pdf(u);
    (e, -y * phi / s, -phi * u / (2.0 * s2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradcheck::{assert_objective_gradient, Tolerance};

    fn toy(n: usize) -> (Mat<f64>, Vec<f64>) {
        crate::objective::toy::classes(n)
    }

    /// The tests' bound: δ = 0.05, the kl form, 3 nats, under `term`.
    fn spec_with(term: ConfidenceTerm) -> MinimisedBound {
        MinimisedBound::new(0.05, term, BoundKind::Kl, 3.0).unwrap()
    }

    fn spec() -> MinimisedBound {
        spec_with(ConfidenceTerm::Maurer)
    }

    fn start(n: usize) -> Vec<f64> {
        let mut p = vec![0.3, 0.2];
        p.extend((0..n).map(|i| 0.3 * ((i * 5 % 7) as f64 - 3.0)));
        p.extend((0..n).map(|i| ((i * 3 % 5) as f64 - 2.0) * 0.7));
        p
    }

    /// The analytic gradient in θ, α and ln π (latent and noisy classifiers, kl and Catoni
    /// bounds) matches central differences.
    #[test]
    fn gradient_matches_central_differences() {
        let (x, y) = toy(14);
        let k = Kernel::se_iso(1.0, 1.0);
        for classifier in [
            GibbsClassifier {
                bias: 0.0,
                noise_slope: None,
            },
            GibbsClassifier {
                bias: 0.1,
                noise_slope: Some(1.5),
            },
        ] {
            // The kl bound and Catoni's (λ = 2) alike.
            for term in [
                ConfidenceTerm::Maurer,
                ConfidenceTerm::Catoni { lambda: 2.0 },
            ] {
                let b = spec_with(term);
                let obj = PacGpcObjective::with_kernel(&k, x.as_ref(), &y, classifier, b).unwrap();
                let p = start(14);
                assert_objective_gradient(&obj, &p, 1e-6, Tolerance::mixed(1e-6), "PAC-GPC");
            }
        }
    }

    /// The whitened objective's gradient matches central differences and its value is the
    /// plain objective's at `α = L⁻ᵀw`.
    #[test]
    fn whitened_gradient_matches_central_differences() {
        let (x, y) = toy(14);
        // A large round-off charge, so its gradient is checked too.
        let prior = PriorAt {
            round_off: 0.3,
            ..Prior::Gp(Kernel::se_iso(1.0, 1.0)).at(x.as_ref()).unwrap()
        };
        let c = GibbsClassifier {
            bias: 0.0,
            noise_slope: None,
        };
        let chol_k = Cholesky::factor(prior.cov.as_ref(), &JitterPolicy::default(), "K").unwrap();
        let plain = PacGpcObjective::with_prior(prior.clone(), &y, c, spec()).unwrap();
        let obj = Whitened {
            inner: PacGpcObjective::with_prior(prior, &y, c, spec()).unwrap(),
            chol_k,
        };
        let q = start(14)[2..].to_vec();
        let p = obj.whiten(&q);
        assert!((obj.value(&p).unwrap() - plain.value(&q).unwrap()).abs() < 1e-9);
        let t = plain.terms(&q).unwrap();
        assert!(
            obj.value(&p).unwrap() > t.bound + 1e-6,
            "the charge is in the value"
        );
        assert_objective_gradient(&obj, &p, 1e-6, Tolerance::mixed(1e-6), "whitened PAC-GPC");
    }

    /// The objective's KL and Gibbs risk equal the certificate of the posterior it describes.
    #[test]
    fn terms_equal_the_certificate_of_the_posterior() {
        let (x, y) = toy(20);
        let k = Kernel::se_iso(1.0, 1.0);
        let c = GibbsClassifier {
            bias: 0.0,
            noise_slope: None,
        };
        let obj = PacGpcObjective::with_kernel(&k, x.as_ref(), &y, c, spec()).unwrap();
        let p = start(20);
        let t = obj.terms(&p).unwrap();
        let post = obj.posterior_at(&p).unwrap();
        let cert_spec = CertificateSpec::new(
            0.05,
            ConfidenceTerm::Maurer,
            vec![PenaltyTerm {
                what: "test".into(),
                nats: 3.0,
            }],
        );
        let cert = Certificate::of_posterior(
            &post,
            x.as_ref(),
            &y,
            &GibbsLoss::Classification(c),
            &cert_spec,
        )
        .unwrap();
        assert!((cert.kl - t.kl).abs() < 1e-10, "{} vs {}", cert.kl, t.kl);
        assert!((cert.empirical_risk - t.empirical_risk).abs() < 1e-10);
        assert!((cert.bound - t.bound).abs() < 1e-10);
        // The minimised value adds only the round-off charge ½η‖α‖² to the KL.
        assert!(obj.value(&p).unwrap() >= t.bound);
        assert!(obj.value(&p).unwrap() - t.bound < 1e-6);
    }

    /// The KL equals the generic Gaussian KL of `N(m₀ + K₀α, (K₀⁻¹ + Π)⁻¹)` to `N(m₀, K₀)`
    /// computed with dense inverses, for a prior with non-zero mean.
    #[test]
    fn kl_matches_the_dense_gaussian_kl() {
        let (x, _) = toy(9);
        let mut cov = Kernel::se_iso(0.8, 1.3).gram(x.as_ref()).unwrap();
        for i in 0..9 {
            cov[(i, i)] += 0.1;
        }
        let prior = PriorAt {
            mean: (0..9).map(|i| 0.2 * i as f64 - 0.5).collect(),
            cov,
            round_off: 0.0,
        };
        let sites = SiteParams {
            alpha: (0..9).map(|i| 0.3 * (i as f64).cos()).collect(),
            ln_pi: (0..9).map(|i| 0.5 * i as f64 - 2.0).collect(),
        };
        let e = SiteEvaluation::new(&prior, &sites).unwrap();
        let none = JitterPolicy::none();
        let kinv = Cholesky::factor(prior.cov.as_ref(), &none, "K")
            .unwrap()
            .inverse()
            .unwrap();
        let mut prec = kinv.clone();
        for i in 0..9 {
            prec[(i, i)] += sites.ln_pi[i].exp();
        }
        let sigma = Cholesky::factor(prec.as_ref(), &none, "P")
            .unwrap()
            .inverse()
            .unwrap();
        let ln_det_k = Cholesky::factor(prior.cov.as_ref(), &none, "K")
            .unwrap()
            .ln_det();
        let ln_det_s = Cholesky::factor(sigma.as_ref(), &none, "S")
            .unwrap()
            .ln_det();
        let d = linalg::mat_vec(&prior.cov, &sites.alpha);
        let quad = linalg::dot(&d, &linalg::mat_vec(&kinv, &d));
        let tr = linalg::trace_of_product(kinv.as_ref(), sigma.as_ref());
        let want = 0.5 * (tr + quad - 9.0 + ln_det_k - ln_det_s);
        assert!((e.kl - want).abs() < 1e-9, "{} vs {want}", e.kl);
        for i in 0..9 {
            assert!((e.marginals.var[i] - sigma[(i, i)]).abs() < 1e-10);
            assert!((e.marginals.mean[i] - prior.mean[i] - d[i]).abs() < 1e-12);
        }
    }

    /// Training from Laplace never ends above the Laplace certificate at the same θ, with
    /// either way of choosing θ; the certificate is that of the returned posterior.
    #[test]
    fn pac_gpc_is_never_looser_than_laplace_at_the_same_theta() {
        let (x, y) = toy(40);
        let lik = Likelihood::probit();
        let c = GibbsClassifier::latent(&lik);
        let cfg = PacGpcConfig {
            lbfgs: LbfgsConfig {
                max_iter: 150,
                ..Default::default()
            },
            ..Default::default()
        };
        for theta in [
            PacGpcTheta::Grid(Kernel::se_iso(1.0, 2.0)),
            PacGpcTheta::Candidates(crate::select::Menu::charged(
                vec![Kernel::se_iso(0.7, 1.0), Kernel::se_iso(1.4, 4.0)],
                "kernel",
            )),
        ] {
            let fit = fit_pac_gpc(&theta, &lik, x.as_ref(), &y, c, &cfg).unwrap();
            assert!(
                fit.certificate.bound <= fit.laplace_certificate.bound + 1e-12,
                "{} vs {}",
                fit.certificate.bound,
                fit.laplace_certificate.bound
            );
            assert!(fit.certificate.bound < 0.999 * fit.laplace_certificate.bound);
            let again = certificate_of(
                &fit.posterior,
                x.as_ref(),
                &y,
                c,
                &cfg,
                &PenaltyTerm {
                    what: "same".into(),
                    nats: fit.certificate.penalty,
                },
            )
            .unwrap();
            assert_eq!(again.bound, fit.certificate.bound);
        }
    }
}
