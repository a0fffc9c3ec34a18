//! ADF and IVM (seed 003 §3): equivalence with exact GP regression under a Gaussian
//! likelihood, ADF = EP's first sweep for the probit, the IVM posterior's KL against the dense
//! Gaussian KL, the greedy selection rule against a brute-force re-derivation, the
//! pseudo-likelihood and probit-noise gradients against finite differences, ML-II rounds,
//! seed 003 §3.4's illustrative example, and typed errors.

mod common;

use faer::Mat;
use pacgp::gradcheck::{assert_derivative_close, assert_gradient_close, Tolerance};
use pacgp::inference::ep::{ep, EpConfig, EpSchedule};
use pacgp::inference::ivm::ml2::{
    ivm_ml2, probit_noise_ln_z, IvmMl2Config, IvmPseudoLikelihood, ProbitNoiseObjective,
};
use pacgp::inference::ivm::{adf, adf_sites, ivm, ivm_sites, AdfConfig, IvmConfig};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::linalg::{Cholesky, JitterPolicy};
use pacgp::optim::Objective;
use pacgp::posterior::Covariance;
use pacgp::regression::exact::{ExactGp, NegLogMarginalLikelihood};
use pacgp::Error;

fn toy(n: usize) -> (Mat<f64>, Vec<f64>) {
    common::toy_shifted(n, 0.01)
}

fn test_inputs() -> Mat<f64> {
    Mat::from_fn(7, 2, |i, j| -1.3 + 0.41 * i as f64 + 0.2 * j as f64)
}

fn sites_of(fit: &pacgp::inference::ClassifierFit) -> &[f64] {
    match &fit.posterior.cov {
        Covariance::Sites { sqrt_pi, .. } => sqrt_pi,
        _ => panic!("ADF/IVM end in site form"),
    }
}

/// A fixed non-trivial permutation of 0..n.
fn permutation(n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    p.sort_by_key(|&i| (i * 13 + 5) % n);
    p
}

/// STYLE.md habit 3: with a Gaussian likelihood and every point included, ADF (any order)
/// and IVM reproduce exact GP regression: predictions, ln evidence, KL.
#[test]
fn gaussian_likelihood_with_full_active_set_reproduces_exact_regression() {
    let (x, y) = toy(30);
    let y: Vec<f64> = y
        .iter()
        .enumerate()
        .map(|(i, v)| v + 0.1 * (i % 3) as f64)
        .collect();
    let k = Kernel::se_ard(&[0.9, 1.4], 1.3);
    let exact = ExactGp::fit(k.clone(), 0.2, x.clone(), y.clone(), &JitterPolicy::none()).unwrap();
    let xs = test_inputs();
    let want = exact.predict(xs.as_ref()).unwrap();
    let want_kl = exact.posterior().unwrap().kl_to_prior().unwrap();
    let lik = Likelihood::Gaussian { variance: 0.2 };
    let order = permutation(30);
    let a = adf(&k, &lik, x.as_ref(), &y, &order, &AdfConfig::default()).unwrap();
    assert_eq!(a.basis_indices.as_deref(), Some(&order[..]));
    let v = ivm(&k, &lik, x.as_ref(), &y, &IvmConfig::new(30)).unwrap();
    for fit in [&a, &v] {
        let p = fit.posterior.predict(xs.as_ref()).unwrap();
        for t in 0..xs.nrows() {
            assert!((p.mean[t] - want.mean[t]).abs() < 1e-8, "mean {t}");
            assert!((p.var[t] - want.latent_var[t]).abs() < 1e-8, "var {t}");
        }
        let lml = exact.log_marginal_likelihood();
        assert!((fit.ln_evidence.unwrap() - lml).abs() < 1e-8, "ln Z");
        assert!(
            (fit.posterior.kl_to_prior().unwrap() - want_kl).abs() < 1e-8,
            "KL"
        );
    }
}

/// STYLE.md habit 3: ADF in an order equals EP's first sweep in the same order (EP sweeps
/// 0..n, so it runs on the rows permuted into ADF's order).
#[test]
fn adf_equals_the_first_ep_sweep_in_the_same_order() {
    let (x, y) = toy(40);
    let k = Kernel::se_iso(1.1, 2.0);
    let lik = Likelihood::probit_with(1.4, 0.3).unwrap();
    let order = permutation(40);
    let a = adf(&k, &lik, x.as_ref(), &y, &order, &AdfConfig::default()).unwrap();
    let xp = Mat::from_fn(40, 2, |r, c| x[(order[r], c)]);
    let yp: Vec<f64> = order.iter().map(|&i| y[i]).collect();
    let one = EpConfig {
        max_sweeps: 1,
        damping: 1.0,
        schedule: EpSchedule::Sequential,
        ..Default::default()
    };
    let e = ep(&k, &lik, xp.as_ref(), &yp, &one).unwrap();
    let (sa, se) = (sites_of(&a), sites_of(&e));
    for r in 0..40 {
        assert!((sa[r] - se[r]).abs() < 1e-9 * (1.0 + se[r]), "√π {r}");
        let (aa, ae) = (a.posterior.alpha[r], e.posterior.alpha[r]);
        assert!((aa - ae).abs() < 1e-9 * (1.0 + ae.abs()), "α {r}");
    }
    let (pa, pe) = (
        a.posterior.predict(x.as_ref()).unwrap(),
        e.posterior.predict(x.as_ref()).unwrap(),
    );
    for i in 0..40 {
        assert!((pa.mean[i] - pe.mean[i]).abs() < 1e-9);
        assert!((pa.var[i] - pe.var[i]).abs() < 1e-9);
    }
    // A second EP sweep moves away from ADF: the comparison above is not vacuous.
    let two = EpConfig {
        max_sweeps: 2,
        ..Default::default()
    };
    let e2 = ep(&k, &lik, xp.as_ref(), &yp, &two).unwrap();
    let moved = (0..40)
        .map(|r| (sites_of(&e2)[r] - se[r]).abs())
        .fold(0.0, f64::max);
    assert!(
        moved > 1e-4,
        "second sweep changed the sites by only {moved}"
    );
}

/// Generic Gaussian KL `½[tr(K⁻¹Σ) + aᵀK⁻¹a − d + ln det K − ln det Σ]` from dense matrices.
fn dense_gaussian_kl(kb: &Mat<f64>, sigma: &Mat<f64>, a: &[f64]) -> f64 {
    let d = a.len();
    let ck = Cholesky::factor(kb.as_ref(), &JitterPolicy::none(), "K").unwrap();
    let cs = Cholesky::factor(sigma.as_ref(), &JitterPolicy::none(), "Σ").unwrap();
    let kinv = ck.inverse().unwrap();
    let tr: f64 = (0..d)
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .map(|(i, j)| kinv[(i, j)] * sigma[(j, i)])
        .sum();
    let ka = ck.solve_vec(a);
    let quad: f64 = a.iter().zip(&ka).map(|(p, q)| p * q).sum();
    0.5 * (tr + quad - d as f64 + ck.ln_det() - cs.ln_det())
}

/// The IVM posterior's KL equals the dense Gaussian KL of `N(K_I β, (K_I⁻¹ + Π)⁻¹)` to the
/// prior `N(0, K_I)` (docs/math.md §7.4).
#[test]
fn ivm_kl_equals_the_dense_gaussian_kl_on_the_active_set() {
    let (x, y) = toy(80);
    let k = Kernel::se_iso(0.8, 1.5);
    let lik = Likelihood::probit_with(2.0, -0.1).unwrap();
    let fit = ivm(&k, &lik, x.as_ref(), &y, &IvmConfig::new(15)).unwrap();
    let idx = fit.basis_indices.clone().unwrap();
    assert_eq!(idx.len(), 15);
    let xb = Mat::from_fn(15, 2, |r, c| x[(idx[r], c)]);
    let kb = k.gram(xb.as_ref()).unwrap();
    let sw = sites_of(&fit);
    let kinv = Cholesky::factor(kb.as_ref(), &JitterPolicy::none(), "K")
        .unwrap()
        .inverse()
        .unwrap();
    let prec = Mat::from_fn(15, 15, |i, j| {
        kinv[(i, j)] + if i == j { sw[i] * sw[i] } else { 0.0 }
    });
    let sigma = Cholesky::factor(prec.as_ref(), &JitterPolicy::none(), "K⁻¹ + Π")
        .unwrap()
        .inverse()
        .unwrap();
    let a: Vec<f64> = (0..15)
        .map(|i| (0..15).map(|j| kb[(i, j)] * fit.posterior.alpha[j]).sum())
        .collect();
    let want = dense_gaussian_kl(&kb, &sigma, &a);
    let got = fit.posterior.kl_to_prior().unwrap();
    assert!(want > 0.1, "KL {want} too small to test");
    assert!((got - want).abs() < 1e-7 * want, "KL {got} vs dense {want}");
}

/// Seed 003 §3.3.1 re-derived by brute force: at every step, the posterior after the points
/// chosen so far (an independent ADF fit, marginals via the shared posterior's `predict`)
/// scores every other point by `−½ ln(1 − ν ζ)`; IVM must pick the (lowest-index) maximum.
#[test]
fn ivm_selects_the_point_of_largest_entropy_reduction() {
    let (x, y) = toy(40);
    let k = Kernel::se_iso(0.7, 1.8);
    let lik = Likelihood::probit();
    let d = 8;
    let (fit, sites) = ivm_sites(&k, &lik, x.as_ref(), &y, &IvmConfig::new(d)).unwrap();
    let chosen = fit.basis_indices.unwrap();
    // Under the prior every point has the same score (stationary kernel, b = 0): the tie
    // goes to the lowest index.
    assert_eq!(chosen[0], 0);
    for step in 0..d {
        let (mean, var) = if step == 0 {
            (vec![0.0; 40], k.diag(x.as_ref()))
        } else {
            let prev = adf(
                &k,
                &lik,
                x.as_ref(),
                &y,
                &chosen[..step],
                &AdfConfig::default(),
            )
            .unwrap();
            let m = prev.posterior.predict(x.as_ref()).unwrap();
            (m.mean, m.var)
        };
        let scores: Vec<f64> = (0..40)
            .map(|i| {
                if chosen[..step].contains(&i) {
                    return f64::NEG_INFINITY;
                }
                let t = lik.tilted_moments(y[i], mean[i], var[i]).unwrap();
                -0.5 * (t.d2 * var[i]).ln_1p()
            })
            .collect();
        let best = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let first = scores.iter().position(|s| *s == best).unwrap();
        let pick = chosen[step];
        assert!(
            pick == first || scores[pick] >= best - 1e-10,
            "step {step}: IVM chose {pick} (score {}), best is {first} ({best})",
            scores[pick]
        );
        assert!((sites[step].entropy_reduction - scores[pick]).abs() < 1e-9);
    }
    // Entropy reductions of the selected points are positive.
    assert!(sites.iter().all(|s| s.entropy_reduction > 0.0));
}

/// IVM's posterior is ADF over its active set in selection order.
#[test]
fn ivm_equals_adf_over_its_active_set() {
    let (x, y) = toy(60);
    let k = Kernel::se_ard(&[0.8, 1.2], 1.4);
    let lik = Likelihood::probit_with(1.2, 0.2).unwrap();
    let v = ivm(&k, &lik, x.as_ref(), &y, &IvmConfig::new(12)).unwrap();
    let idx = v.basis_indices.clone().unwrap();
    let a = adf(&k, &lik, x.as_ref(), &y, &idx, &AdfConfig::default()).unwrap();
    assert_eq!(a.basis_indices.as_deref(), Some(&idx[..]));
    for r in 0..12 {
        assert!((v.posterior.alpha[r] - a.posterior.alpha[r]).abs() < 1e-12);
        assert!((sites_of(&v)[r] - sites_of(&a)[r]).abs() < 1e-12);
    }
    assert!((v.ln_evidence.unwrap() - a.ln_evidence.unwrap()).abs() < 1e-12);
}

/// Central differences with step h; the error of the estimate is O(h²·f''') ≈ 1e-10 here,
/// so a relative tolerance of 1e-6 leaves a wide margin above it and round-off (1e-16/h).
fn assert_grad_close(obj: &dyn Objective, at: &[f64], tol: f64) {
    let (_, g) = obj.value_and_gradient(at).unwrap();
    let f = |p: &[f64]| obj.value(p).unwrap();
    assert_gradient_close(f, at, &g, 1e-5, Tolerance::mixed(tol), "objective");
}

/// At the θ the sites were made with, the pseudo-likelihood is ADF's `Σ ln Z_j`; its
/// gradient matches central differences at several θ.
#[test]
fn pseudo_likelihood_equals_adf_ln_z_and_its_gradient_matches_fd() {
    let (x, y) = toy(70);
    let k = Kernel::se_ard(&[0.9, 1.3], 1.6);
    let lik = Likelihood::probit_with(1.5, 0.1).unwrap();
    let (fit, sites) = ivm_sites(&k, &lik, x.as_ref(), &y, &IvmConfig::new(20)).unwrap();
    let obj = IvmPseudoLikelihood::new(&k, x.as_ref(), &sites, JitterPolicy::default()).unwrap();
    let v = obj.value(&k.params()).unwrap();
    let want = fit.ln_evidence.unwrap();
    assert!(
        (-v - want).abs() < 1e-9 * (1.0 + want.abs()),
        "{v} vs {want}"
    );
    for shift in [[0.0, 0.0, 0.0], [0.4, -0.3, 0.2], [-0.5, 0.3, -0.6]] {
        let th: Vec<f64> = k.params().iter().zip(shift).map(|(a, b)| a + b).collect();
        assert_grad_close(&obj, &th, 1e-6);
    }
}

/// With Gaussian sites and every point included, the pseudo-likelihood is the exact log
/// marginal likelihood at every θ, gradient included.
#[test]
fn gaussian_pseudo_likelihood_is_the_exact_marginal_likelihood() {
    let (x, y) = toy(25);
    let y: Vec<f64> = y
        .iter()
        .enumerate()
        .map(|(i, v)| 0.5 * v + 0.05 * i as f64)
        .collect();
    let k = Kernel::se_ard(&[0.9, 1.4], 1.3);
    let lik = Likelihood::Gaussian { variance: 0.3 };
    let (_, sites) = ivm_sites(&k, &lik, x.as_ref(), &y, &IvmConfig::new(25)).unwrap();
    let obj = IvmPseudoLikelihood::new(&k, x.as_ref(), &sites, JitterPolicy::none()).unwrap();
    let exact = NegLogMarginalLikelihood::new(&k, x.as_ref(), &y, JitterPolicy::none());
    for th in [vec![0.1, -0.2, 0.5], vec![-0.4, 0.6, -0.3]] {
        let (v, g) = obj.value_and_gradient(&th).unwrap();
        let mut p = th.clone();
        p.push(0.3f64.ln());
        let (ve, ge) = exact.value_and_gradient(&p).unwrap();
        assert!((v - ve).abs() < 1e-8, "{v} vs {ve}");
        for i in 0..3 {
            assert!(
                (g[i] - ge[i]).abs() < 1e-8,
                "grad {i}: {} vs {}",
                g[i],
                ge[i]
            );
        }
    }
}

/// Seed 003 §4.3.2's ∂/∂b and ∂/∂λ (and the [b, ln λ] objective) against central differences.
#[test]
fn probit_noise_gradients_match_fd() {
    let (x, y) = toy(50);
    let k = Kernel::se_iso(1.0, 2.0);
    let lik = Likelihood::probit_with(1.3, -0.2).unwrap();
    let (_, sites) = ivm_sites(&k, &lik, x.as_ref(), &y, &IvmConfig::new(15)).unwrap();
    let h = 1e-6;
    for (lambda, bias) in [(1.3, -0.2), (0.6, 0.4), (3.0, 0.0)] {
        let (_, db, dl) = probit_noise_ln_z(lambda, bias, &y, &sites);
        let ln_z_of_b = |b: f64| probit_noise_ln_z(lambda, b, &y, &sites).0;
        let ln_z_of_lambda = |l: f64| probit_noise_ln_z(l, bias, &y, &sites).0;
        assert_derivative_close(ln_z_of_b, bias, db, h, Tolerance::mixed(1e-6), "∂/∂b");
        assert_derivative_close(
            ln_z_of_lambda,
            lambda,
            dl,
            h,
            Tolerance::mixed(1e-6),
            "∂/∂λ",
        );
    }
    let obj = ProbitNoiseObjective::new(&y, &sites).unwrap();
    assert_grad_close(&obj, &[0.3, 0.2], 1e-6);
    // At the λ, b the sites were made with, Σ ln Z_j is the IVM's ln evidence.
    let (v, _, _) = probit_noise_ln_z(1.3, -0.2, &y, &sites);
    let total: f64 = sites.iter().map(|s| s.ln_z).sum();
    assert!((v - total).abs() < 1e-12);
}

/// ML-II rounds lower the negative pseudo-likelihood from its starting value and leave the
/// fitted kernel at the last optimiser's parameters.
#[test]
fn ivm_ml2_rounds_improve_the_pseudo_likelihood() {
    let (x, y) = toy(100);
    let k = Kernel::se_iso(3.0, 0.5);
    let lik = Likelihood::probit();
    let mut cfg = IvmMl2Config::new(20, 3);
    cfg.kernel_optim.bounds = Some(vec![(-3.0, 3.0), (-3.0, 3.0)]);
    cfg.learn_noise = true;
    cfg.noise_optim.bounds = Some(vec![(-2.0, 2.0), (-2.0, 2.0)]);
    let r = ivm_ml2(&k, &lik, x.as_ref(), &y, &cfg).unwrap();
    assert_eq!(r.kernel_reports.len(), 3);
    assert_eq!(r.noise_reports.len(), 3);
    // Round 1 starts at the initial θ with the initial selection's sites.
    let (_, sites) = ivm_sites(&k, &lik, x.as_ref(), &y, &cfg.ivm).unwrap();
    let start = IvmPseudoLikelihood::new(&k, x.as_ref(), &sites, JitterPolicy::default())
        .unwrap()
        .value(&k.params())
        .unwrap();
    assert!(
        r.kernel_reports[0].value < start - 1e-3,
        "{} !< {start}",
        r.kernel_reports[0].value
    );
    let last = &r.kernel_reports[2].params;
    assert_eq!(&r.fit.posterior.kernel().params(), last);
    let Likelihood::Probit { lambda, bias } = r.likelihood else {
        panic!("probit")
    };
    assert!((bias - r.noise_reports[2].params[0]).abs() < 1e-15);
    assert!((lambda.ln() - r.noise_reports[2].params[1]).abs() < 1e-12);
    assert_eq!(r.fit.basis_indices.as_ref().unwrap().len(), 20);
}

/// Seed 003 §3.4: three unit Gaussians at (−5,0), (0,0), (5,0), the middle one the other
/// class; RBF with lengthscale 1 and variance 1, probit λ = 1, b = 0, n = 200, |I| = 50. The
/// informative vectors "lie close to the boundary of a certain class" (the decision boundary
/// and the boundary of the support): farther from their component's centre than the data.
#[test]
fn seed_003_illustrative_example_selects_points_near_the_boundary() {
    let n = 200;
    let (x, y) = pacgp::experiments::classification::three_gaussians(n, 3);
    let k = Kernel::se_iso(1.0, 1.0);
    let fit = ivm(
        &k,
        &Likelihood::probit(),
        x.as_ref(),
        &y,
        &IvmConfig::new(50),
    )
    .unwrap();
    // Distance from the centre of the point's own component: large on the boundary of the
    // class's region (towards the decision boundary and at the edge of the support).
    let from_centre = |i: usize| {
        let c = if y[i] > 0.0 {
            0.0
        } else {
            5.0f64.copysign(x[(i, 0)])
        };
        (x[(i, 0)] - c).hypot(x[(i, 1)])
    };
    let active = fit.basis_indices.as_ref().unwrap();
    let mean_active = active.iter().map(|&i| from_centre(i)).sum::<f64>() / 50.0;
    let mean_all = (0..n).map(from_centre).sum::<f64>() / n as f64;
    assert!(
        mean_active > 1.3 * mean_all,
        "active {mean_active} vs all {mean_all}"
    );
    // The certificate ingredients come for free from the shared posterior.
    let m = fit.posterior.predict(x.as_ref()).unwrap();
    let gibbs = pacgp::loss::gibbs_error_classification(&y, &m, 0.0, Some(1.0)).unwrap();
    assert!(gibbs < 0.2, "training Gibbs error {gibbs}");
    assert!(fit.posterior.kl_to_prior().unwrap() > 0.0);
}

#[test]
fn bad_input_gives_typed_errors() {
    let (x, y) = toy(20);
    let k = Kernel::se_iso(1.0, 1.0);
    let lik = Likelihood::probit();
    let cfg = AdfConfig::default();
    let e = |r: pacgp::Result<pacgp::inference::ClassifierFit>| r.unwrap_err();
    assert!(matches!(
        e(ivm(&k, &lik, x.as_ref(), &y, &IvmConfig::new(0))),
        Error::InvalidParameter { .. }
    ));
    assert!(matches!(
        e(ivm(&k, &lik, x.as_ref(), &y, &IvmConfig::new(21))),
        Error::InvalidParameter { .. }
    ));
    let one_class = vec![1.0; 20];
    assert!(matches!(
        e(ivm(&k, &lik, x.as_ref(), &one_class, &IvmConfig::new(5))),
        Error::NotBinary { .. }
    ));
    assert!(matches!(
        e(adf(&k, &lik, x.as_ref(), &one_class, &[0, 1], &cfg)),
        Error::NotBinary { .. }
    ));
    let mut xn = x.clone();
    xn[(3, 1)] = f64::NAN;
    assert!(matches!(
        e(ivm(&k, &lik, xn.as_ref(), &y, &IvmConfig::new(5))),
        Error::NonFinite { .. }
    ));
    let mut yn = y.clone();
    yn[4] = f64::NAN;
    assert!(matches!(
        e(adf(&k, &lik, x.as_ref(), &yn, &[0, 1], &cfg)),
        Error::NonFinite { .. }
    ));
    assert!(matches!(
        e(ivm(&k, &lik, x.as_ref(), &y[..19], &IvmConfig::new(5))),
        Error::ShapeMismatch { .. }
    ));
    let ard3 = Kernel::se_ard(&[1.0, 1.0, 1.0], 1.0);
    assert!(matches!(
        e(ivm(&ard3, &lik, x.as_ref(), &y, &IvmConfig::new(5))),
        Error::ShapeMismatch { .. }
    ));
    assert!(matches!(
        e(adf(&k, &lik, x.as_ref(), &y, &[], &cfg)),
        Error::Empty { .. }
    ));
    assert!(matches!(
        e(adf(&k, &lik, x.as_ref(), &y, &[0, 20], &cfg)),
        Error::InvalidParameter { .. }
    ));
    assert!(matches!(
        e(adf(&k, &lik, x.as_ref(), &y, &[3, 1, 3], &cfg)),
        Error::InvalidParameter { .. }
    ));
    assert!(matches!(
        e(ivm(
            &k,
            &Likelihood::Logistic,
            x.as_ref(),
            &y,
            &IvmConfig::new(5)
        )),
        Error::Unsupported(_)
    ));
    let mut ml = IvmMl2Config::new(5, 1);
    ml.learn_noise = true;
    let gauss = Likelihood::Gaussian { variance: 0.1 };
    assert!(matches!(
        ivm_ml2(&k, &gauss, x.as_ref(), &y, &ml).unwrap_err(),
        Error::Unsupported(_)
    ));
    assert!(matches!(
        IvmPseudoLikelihood::new(&k, x.as_ref(), &[], JitterPolicy::default()).unwrap_err(),
        Error::Empty { .. }
    ));
    let (_, sites) = adf_sites(&k, &lik, x.as_ref(), &y, &[0, 5], &cfg).unwrap();
    assert!(matches!(
        ProbitNoiseObjective::new(&y[..3], &sites).unwrap_err(),
        Error::ShapeMismatch { .. }
    ));
}
