//! A data-dependent prior for GP classifiers (issue 15 item 1; docs/math.md §9.3.3): split
//! the sample into a part A (fraction F) and a part B by the library's one sample split
//! ([`SampleSplit`]; part A must hold both classes, else a clear refusal).
//! On A alone: the input scaler, θ by ML-II (Laplace evidence) and the Laplace posterior
//! `P_A`, a GP with mean `μ_A(x)` and covariance `k_A(x, x')`. The bound is then about B only:
//!
//! `R(Q) ≤ kl⁻¹(R_{S_B}(Q), (KL(Q‖P_A) + ln|F| + conf(N_B))/N_B)`,
//!
//! where Q is `P_A` updated by Gaussian sites on B: on `f_B`, `q = N(μ_A(X_B) + K_Aα, (K_A⁻¹ + Π)⁻¹)`
//! with `K_A = k_A(X_B, X_B)`; elsewhere Q shares `P_A`'s conditional given `f_B`, so
//! `KL(Q‖P_A) = KL(q ‖ N(μ_A(X_B), K_A))` (generic Gaussian KL on `f_B`, closed form in
//! [`crate::objective::pac_gpc`]). The sites start at the Laplace posterior of B under that prior
//! (Newton with a non-zero prior mean) and are optimised for the bound (PAC-GPC against `P_A`).
//! θ is free (chosen on A); a fraction fixed in advance costs nothing, the best of the menu
//! {0.3, 0.5, 0.7} costs `ln 3`. With [`SplitPriorConfig::catoni`] the inequality is Catoni's
//! (docs/math.md §9.1) at a λ fixed without B: given, the best of a grid fixed in advance
//! (`ln 5`), or estimated on A alone (a nested split of A: `P_{A₁}` with θ_A, the sites of A₂
//! optimised against it, λ optimal for A₂'s Gibbs error and `(KL + penalty + ln(1/δ))/N_B`).
//! The same nested split of A picks, at no charge, the prior's covariance scale t and mean
//! scale s (`GP(s·μ_A, t·k_A)`) and its kernel structure among several (e.g. SE-ARD and SE
//! iso, θ of each by ML-II on A); `P_A` may be the EP posterior instead of Laplace's. With
//! [`SplitPriorConfig::both_directions`] the parts' roles are also swapped and the lower of
//! the two certificates kept, a union bound over both directions (`ln 2` more).
//!
//! Q is returned as the shared [`GaussianPosterior`] with basis `A ∪ B`: the prior GP times the
//! Laplace sites of A and the sites of B, whose marginals on B are those of q.

use faer::{Mat, MatRef};

use crate::bounds::{
    catoni_optimal_lambda, BoundKind, BoundTarget, CatoniLambda, ConfidenceTerm, CATONI_GRID,
};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::data::{Dataset, SampleSplit, Standardizer};
use crate::error::{Error, Result};
use crate::inference::ep::ep;
use crate::inference::evidence::{fit_ep_ml2, fit_laplace_ml2, ClassifierMlConfig};
use crate::inference::laplace::{laplace, LaplaceConfig};
use crate::inference::Problem;
use crate::kernel::{start, Kernel};
use crate::likelihood::Likelihood;
use crate::objective::bound::MinimisedBound;
use crate::posterior::{Covariance, GaussianPosterior, Prior, PriorAt};

use crate::select::Menu;

use super::pac_gpc::{optimise_sites, PacGpcConfig, SiteEvaluation, SiteParams};

pub use crate::objective::gp_split::{SplitFraction, SPLIT_FRACTIONS as FRACTION_MENU};

mod fit;
mod part_a;
pub use fit::*;
pub use part_a::*;

/// Settings of [`fit_classifier_split_prior`].
#[derive(Clone, Debug)]
pub struct SplitPriorConfig {
    /// The fraction of part A.
    pub fraction: SplitFraction,
    /// Seed of the sample split ([`SampleSplit`]).
    pub seed: u64,
    /// Optimise the sites of B for the bound (else: the Laplace posterior of B under `P_A`).
    pub optimise_sites: bool,
    /// δ, confidence term, bound form, optimiser and Laplace settings (the grid is unused).
    pub bound: PacGpcConfig,
    /// ML-II on A.
    pub ml: ClassifierMlConfig,
    /// Catoni's bound with λ fixed without B instead of the kl bound of `bound.term`.
    pub catoni: Option<CatoniLambda>,
    /// Scales t of the prior's covariance (`P_A = GP(μ_A, t·k_A)`, any t is a prior fixed
    /// by A); with more than one, the nested split of A picks the one whose estimated
    /// certificate is lowest (no charge). Default `[1.0]`.
    pub prior_scales: Vec<f64>,
    /// Other kernel structures for ML-II on A besides the given one (e.g. SE iso beside
    /// SE-ARD); the nested split of A picks the kernel (no charge). Default none.
    pub alt_kernels: Vec<Kernel>,
    /// Scales s of the prior's mean (`P_A = GP(s·μ_A, t·k_A)`), picked with t by the nested
    /// split of A (no charge). Default `[1.0]`.
    pub mean_scales: Vec<f64>,
    /// EP instead of Laplace for `P_A` (and for `P_{A₁}` of the nested split).
    pub ep_prior: bool,
    /// Also certify with the parts' roles swapped (B's prior from the other part) and keep
    /// the lower certificate: a union bound over the two directions, `ln 2` more.
    pub both_directions: bool,
}

/// The prior-scale menu of the `split-prior+catoni+scale` row: t ∈ {1, ½, ¼, ⅛, 1/16}.
pub const PRIOR_SCALES: [f64; 5] = [1.0, 0.5, 0.25, 0.125, 0.0625];

impl SplitPriorConfig {
    /// The menu of fractions, seed 0, sites optimised, the PAC-GPC defaults (δ = [`crate::bounds::DEFAULT_DELTA`]).
    pub fn new(fraction: SplitFraction, seed: u64) -> Self {
        Self {
            fraction,
            seed,
            optimise_sites: true,
            bound: PacGpcConfig::default(),
            ml: ClassifierMlConfig::default(),
            catoni: None,
            prior_scales: vec![1.0],
            alt_kernels: Vec::new(),
            mean_scales: vec![1.0],
            ep_prior: false,
            both_directions: false,
        }
    }
}

/// A classifier certified with a data-dependent prior.
#[derive(Clone, Debug)]
pub struct SplitPriorFit {
    /// Q on standardised inputs (basis `A ∪ B`, site form).
    pub posterior: GaussianPosterior,
    /// The scaler fitted on part A.
    pub x_scaler: Standardizer,
    /// The certificate on part B.
    pub certificate: Certificate,
    /// The certificate of the Laplace posterior of B under `P_A` (the sites' start).
    pub laplace_certificate: Certificate,
    /// The fraction used.
    pub fraction: f64,
    /// Row indices of part A and part B.
    pub part_a: Vec<usize>,
    /// Row indices of part B (the bound's sample).
    pub part_b: Vec<usize>,
    /// Catoni's λ of the certificate, if Catoni's bound was used.
    pub lambda: Option<f64>,
    /// The scale t of the prior's covariance.
    pub prior_scale: f64,
    /// The scale s of the prior's mean.
    pub mean_scale: f64,
    /// The kernel of `P_A` (θ by ML-II on A; on A's standardised inputs).
    pub prior_kernel: Kernel,
    /// Where ML-II on A started, when the wide start moved it ([`PartAPrior::start_note`]).
    pub start_note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::laplace::laplace;
    use crate::linalg::{self, Cholesky, JitterPolicy};

    fn toy(n: usize) -> Dataset {
        let (x, y) = crate::objective::toy::classes(n);
        Dataset::new(x, y).unwrap()
    }

    /// Catoni's λ "from part A" is a function of part A and N_B alone: the fit's λ is the
    /// nested estimate computed from part A's rows (standardised by A's scaler, θ_A) and N_B,
    /// which never sees part B. The certificate is Catoni's closed form at that λ with
    /// `ln(1/δ)` and no charge; the grid picks one of its five λ and charges `ln 5`.
    #[test]
    fn catoni_lambda_from_part_a_ignores_part_b() {
        let d = toy(60);
        let lik = Likelihood::probit();
        let c = GibbsClassifier::latent(&lik);
        let mut cfg = SplitPriorConfig::new(SplitFraction::Fixed(0.5), 3);
        cfg.bound.lbfgs.max_iter = 40;
        cfg.catoni = Some(CatoniLambda::FromPartA);
        let k = Kernel::se_iso(1.0, 1.0);
        let fit = fit_classifier_split_prior(&k, &lik, &d, c, &cfg).unwrap();
        let lambda = fit.lambda.expect("Catoni's λ");
        let pa = part_a_prior(&k, &lik, &d, c, 0.5, false, 0.0, &cfg).unwrap();
        assert_eq!((&pa.part_a, &pa.part_b), (&fit.part_a, &fit.part_b));
        let a = d.subset(&pa.part_a);
        let xa = pa.x_scaler.transform(a.x.as_ref()).unwrap();
        let kernels_a = [pa.kernel.clone()];
        let nested =
            nested_estimate(&cfg, &kernels_a, (&xa, &a.y, &lik), c, pa.part_b.len(), 0.0).unwrap();
        assert_eq!(pa.lambda(), Some(lambda));
        assert_eq!(nested.lambda(), lambda);
        let cert = &fit.certificate;
        assert_eq!(cert.penalty, 0.0);
        assert_eq!(cert.confidence_term, ConfidenceTerm::Catoni { lambda });
        let cx = (cert.kl + 100f64.ln()) / cert.n as f64;
        let want = crate::bounds::catoni_bound(cert.empirical_risk, cx, lambda);
        assert!(
            (cert.bound - want).abs() < 1e-14,
            "{} vs {want}",
            cert.bound
        );
        cfg.catoni = Some(CatoniLambda::Grid);
        let g = fit_classifier_split_prior(&k, &lik, &d, c, &cfg).unwrap();
        assert!(CATONI_GRID.contains(&g.lambda.unwrap()));
        assert!((g.certificate.penalty - 5f64.ln()).abs() < 1e-12);
    }

    /// A part A that holds one class is refused with a line saying so (the split is not
    /// stratified: that would tie part B's labels to part A's).
    #[test]
    fn a_one_class_part_a_is_refused_clearly() {
        let mut d = toy(20);
        for (i, y) in d.y.iter_mut().enumerate() {
            *y = if i < 3 { -1.0 } else { 1.0 };
        }
        let seed = (0..100)
            .find(|&s| {
                let (a, _) = SampleSplit::new(0.2, s).parts(&d).unwrap();
                a.iter().all(|&i| d.y[i] == 1.0)
            })
            .expect("a seed whose part A is one class");
        let lik = Likelihood::probit();
        let cfg = SplitPriorConfig::new(SplitFraction::Fixed(0.2), seed);
        let k = Kernel::se_iso(1.0, 1.0);
        let err = fit_classifier_split_prior(&k, &lik, &d, GibbsClassifier::latent(&lik), &cfg)
            .unwrap_err();
        assert!(err.to_string().contains("holds only one class"), "{err}");
    }

    /// The scaled prior `GP(μ_A, t·k_A)`: at new inputs its mean is `P_A`'s and its
    /// covariance t times `P_A`'s; the nested split picks a scale of the menu.
    #[test]
    fn scaled_prior_scales_the_covariance_only() {
        let d = toy(30);
        let xs = d.subset(&(0..10).collect::<Vec<_>>());
        let lik = Likelihood::probit();
        let fit = laplace(
            &Kernel::se_iso(0.9, 1.5),
            &lik,
            d.x.as_ref(),
            &d.y,
            &Default::default(),
        )
        .unwrap();
        let on = |p: GaussianPosterior| Prior::conditioned(p).at(xs.x.as_ref()).unwrap();
        let base = on(fit.posterior.clone());
        let t = 0.3;
        let scaled = on(scaled_prior(&fit.posterior, t).unwrap());
        for i in 0..10 {
            assert!((scaled.mean[i] - base.mean[i]).abs() < 1e-10);
            for j in 0..10 {
                let want = t * base.cov[(i, j)];
                assert!((scaled.cov[(i, j)] - want).abs() < 1e-10);
            }
        }
        assert!(scaled_prior(&fit.posterior, 0.0).is_err());
        let s = 1.7;
        let both = on(scaled_prior_with_mean(&fit.posterior, t, s).unwrap());
        for i in 0..10 {
            assert!((both.mean[i] - s * base.mean[i]).abs() < 1e-10);
            assert!((both.cov[(i, i)] - t * base.cov[(i, i)]).abs() < 1e-10);
        }
        let mut cfg = SplitPriorConfig::new(SplitFraction::Fixed(0.5), 1);
        cfg.bound.lbfgs.max_iter = 30;
        cfg.prior_scales = PRIOR_SCALES.to_vec();
        let c = GibbsClassifier::latent(&lik);
        let s =
            fit_classifier_split_prior(&Kernel::se_iso(1.0, 1.0), &lik, &toy(60), c, &cfg).unwrap();
        assert!(PRIOR_SCALES.contains(&s.prior_scale));
        assert_eq!(s.certificate.penalty, 0.0);
    }

    /// Both directions of a fixed half split: the certificate is about one half, the other
    /// half is the prior's, the price is `ln 2`; the nested split of A picks the kernel among
    /// the two structures and a mean scale of the menu, at no charge.
    #[test]
    fn both_directions_pay_ln_2_and_swap_the_halves() {
        let d = toy(60);
        let lik = Likelihood::probit();
        let c = GibbsClassifier::latent(&lik);
        let mut cfg = SplitPriorConfig::new(SplitFraction::Fixed(0.5), 2);
        cfg.bound.lbfgs.max_iter = 30;
        cfg.catoni = Some(CatoniLambda::FromPartA);
        let k = Kernel::se_ard(&[1.0, 1.0], 1.0);
        let one = fit_classifier_split_prior(&k, &lik, &d, c, &cfg).unwrap();
        cfg.both_directions = true;
        cfg.alt_kernels = vec![Kernel::se_iso(1.0, 1.0)];
        cfg.mean_scales = vec![1.0, 2.0];
        let two = fit_classifier_split_prior(&k, &lik, &d, c, &cfg).unwrap();
        assert_eq!(one.certificate.penalty, 0.0);
        assert!((two.certificate.penalty - 2f64.ln()).abs() < 1e-12);
        assert!(two.part_b == one.part_b || two.part_b == one.part_a);
        let mut all: Vec<usize> = two.part_a.iter().chain(&two.part_b).copied().collect();
        all.sort();
        assert_eq!(all, (0..60).collect::<Vec<_>>());
        assert!([1.0, 2.0].contains(&two.mean_scale));
        assert_eq!(one.mean_scale, 1.0);
        assert_eq!(one.prior_kernel.n_params(), 3);
    }

    /// With a zero prior mean, Newton with the offset is plain Laplace; with a non-zero one
    /// the sites satisfy the mode's stationarity `α = ∇ln p(y | m₀ + K₀α)`.
    #[test]
    fn newton_with_prior_mean_finds_the_mode() {
        let d = toy(30);
        let k = Kernel::se_iso(1.0, 2.0);
        let lik = Likelihood::probit();
        let cfg = LaplaceConfig {
            tol: 1e-12,
            ..Default::default()
        };
        let plain = laplace(&k, &lik, d.x.as_ref(), &d.y, &cfg).unwrap();
        let zero = Prior::Gp(k.clone()).at(d.x.as_ref()).unwrap();
        let s = laplace_with_prior_mean(&zero, &lik, &d.y, &cfg).unwrap();
        for i in 0..30 {
            assert!((s.alpha[i] - plain.posterior.alpha[i]).abs() < 1e-8);
        }
        let shifted = PriorAt {
            mean: (0..30).map(|i| 0.1 * i as f64 - 1.5).collect(),
            ..zero
        };
        let s = laplace_with_prior_mean(&shifted, &lik, &d.y, &cfg).unwrap();
        let f = linalg::mat_vec(&shifted.cov, &s.alpha);
        for i in 0..30 {
            let g = lik.ln_p_derivs(d.y[i], shifted.mean[i] + f[i]).d1;
            assert!((g - s.alpha[i]).abs() < 1e-7, "{i}: {g} vs {}", s.alpha[i]);
        }
    }

    /// Q, `P_A` updated on B, has q's marginals on B; `P_A`'s mean and covariance at B equal
    /// those of the Laplace posterior on A; the site evaluation's KL and Q's `KL(Q‖P_A)`
    /// equal the dense Gaussian KL `KL(N(m_q, S_q) ‖ N(μ_A, K_A))` with `S_q` and `K_A` the B
    /// blocks of the full site form over A ∪ B computed by dense inverses.
    #[test]
    fn kl_against_the_part_a_prior_matches_brute_force() {
        let d = toy(24);
        let (xa, xb) = (
            d.subset(&(0..12).collect::<Vec<_>>()),
            d.subset(&(12..24).collect::<Vec<_>>()),
        );
        let k = Kernel::se_iso(0.9, 1.5);
        let lik = Likelihood::probit();
        let fit_a = laplace(&k, &lik, xa.x.as_ref(), &xa.y, &Default::default()).unwrap();
        let prior = Prior::conditioned(fit_a.posterior.clone());
        let latent = prior.at(xb.x.as_ref()).unwrap();
        let pa = fit_a.posterior.predict(xb.x.as_ref()).unwrap();
        for i in 0..12 {
            assert!((latent.cov[(i, i)] - pa.var[i]).abs() < 1e-12);
            assert!((latent.mean[i] - pa.mean[i]).abs() < 1e-12);
        }
        let sites = SiteParams {
            alpha: (0..12).map(|i| 0.2 * (i as f64).sin()).collect(),
            ln_pi: (0..12).map(|i| 0.4 * i as f64 - 2.0).collect(),
        };
        let e = SiteEvaluation::new(&latent, &sites).unwrap();
        let q = posterior_on_b(&prior, xb.x.as_ref(), &sites, &e).unwrap();
        let m = q.predict(xb.x.as_ref()).unwrap();
        for i in 0..12 {
            assert!((m.mean[i] - e.marginals.mean[i]).abs() < 1e-10);
            assert!((m.var[i] - e.marginals.var[i]).abs() < 1e-10);
        }
        assert!((q.kl_to_prior().unwrap() - e.kl).abs() < 1e-10);
        // Brute force: the full 24×24 site form over A ∪ B, Σ = (K⁻¹ + Π)⁻¹, with Π the sites
        // of A (Laplace's) and of B, its B block against the prior's B block (K_A computed as
        // (K⁻¹ + Π_A)⁻¹ restricted to B); the mean of q on B from P_A's mean and K_A α_B.
        let none = JitterPolicy::none();
        let full = Mat::from_fn(24, 2, |i, j| {
            if i < 12 {
                xa.x[(i, j)]
            } else {
                xb.x[(i - 12, j)]
            }
        });
        let mut kfull = k.gram(full.as_ref()).unwrap();
        for i in 0..24 {
            kfull[(i, i)] += 1e-10;
        }
        let kinv = Cholesky::factor(kfull.as_ref(), &none, "K")
            .unwrap()
            .inverse()
            .unwrap();
        let Covariance::Sites { sqrt_pi: sa, .. } = &fit_a.posterior.cov else {
            panic!()
        };
        let sqrt_pi: Vec<f64> = sa.iter().cloned().chain(sites.sqrt_pi()).collect();
        let block = |pi_b: bool| -> Mat<f64> {
            let mut p = kinv.clone();
            for i in 0..24 {
                if i < 12 || pi_b {
                    p[(i, i)] += sqrt_pi[i] * sqrt_pi[i];
                }
            }
            let s = Cholesky::factor(p.as_ref(), &none, "P")
                .unwrap()
                .inverse()
                .unwrap();
            Mat::from_fn(12, 12, |i, j| s[(12 + i, 12 + j)])
        };
        let (sq, ka) = (block(true), block(false));
        let ma = &latent.mean;
        let ka_alpha = linalg::mat_vec(&ka, &sites.alpha);
        let mq: Vec<f64> = (0..12).map(|i| ma[i] + ka_alpha[i]).collect();
        let ka_inv = Cholesky::factor(ka.as_ref(), &none, "KA")
            .unwrap()
            .inverse()
            .unwrap();
        let dm: Vec<f64> = (0..12).map(|i| mq[i] - ma[i]).collect();
        let quad = linalg::dot(&dm, &linalg::mat_vec(&ka_inv, &dm));
        let tr = linalg::trace_of_product(ka_inv.as_ref(), sq.as_ref());
        let ld = |m: &Mat<f64>| Cholesky::factor(m.as_ref(), &none, "x").unwrap().ln_det();
        let want = 0.5 * (tr + quad - 12.0 + ld(&ka) - ld(&sq));
        assert!((e.kl - want).abs() < 1e-6, "{} vs {want}", e.kl);
        // The dense route inverts K (24 close points, ridge 1e-10): round-off ≈ 1e-7 here.
        for i in 0..12 {
            assert!(
                (ka[(i, i)] - pa.var[i]).abs() < 2e-6,
                "{} vs {}",
                ka[(i, i)],
                pa.var[i]
            );
        }
    }
}
