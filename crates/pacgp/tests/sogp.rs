//! Sparse online GP (Csató–Opper; seed 003 §3.2, §3.3.2): method equivalence with exact GP
//! regression under a Gaussian likelihood (no deletions, one sweep; also with a duplicated
//! point taking the reduced update), ADF equivalence with a tiny dense ADF oracle under the
//! probit (docs/math.md §7.4), consistency of α, C, Q through deletions, the dense covariance form
//! of the shared posterior against explicit dense formulas, typed errors, and certificates
//! on breast cancer.

mod common;
use common::inverse_and_ln_det;

use faer::Mat;
use pacgp::bounds::ConfidenceTerm;
use pacgp::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss};
use pacgp::inference::sogp::{sogp, Sogp, SogpConfig, SweepOrder, UpdateKind};
use pacgp::inference::ClassifierFit;
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::linalg::{Cholesky, JitterPolicy};
use pacgp::loss::gibbs_error_classification;
use pacgp::posterior::{Covariance, GaussianPosterior};
use pacgp::regression::exact::ExactGp;
use pacgp::selective::{
    area_under_risk_coverage, confidence, predicted_labels, risk_coverage, ConfidenceScore,
};
use pacgp::Error;

/// Inputs uniform on [−2, 2]² (seeded), labels from a smooth boundary with a little
/// label noise.
fn toy(n: usize) -> (Mat<f64>, Vec<f64>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
    let x: Mat<f64> = Mat::from_fn(n, 2, |_, _| rng.gen_range(-2.0..2.0));
    let y = common::toy_labels(&x);
    (x, y)
}

fn test_inputs() -> Mat<f64> {
    Mat::from_fn(7, 2, |i, j| -1.3 + 0.41 * i as f64 + 0.23 * j as f64)
}

/// No deletions, no projections, one sweep.
fn full_cfg(n: usize) -> SogpConfig {
    SogpConfig {
        max_basis: n + 5,
        novelty_tol: 0.0,
        sweeps: 1,
        jitter: JitterPolicy::none(),
    }
}

fn row(x: &Mat<f64>, i: usize) -> Vec<f64> {
    (0..x.ncols()).map(|j| x[(i, j)]).collect()
}

/// Dense oracle for the posterior over f_B: mean at xs, variance at xs and
/// KL(N(Kα, Σ) ‖ N(0, K)), all by explicit inverses and determinants.
fn dense_oracle(
    kernel: &Kernel,
    basis: &Mat<f64>,
    alpha: &[f64],
    sigma: &Mat<f64>,
    xs: &Mat<f64>,
) -> (Vec<f64>, Vec<f64>, f64) {
    let kb = kernel.gram(basis.as_ref()).unwrap();
    let (kinv, ln_det_k) = inverse_and_ln_det(&kb);
    let (_, ln_det_s) = inverse_and_ln_det(sigma);
    let r = &kinv - &kinv * sigma * &kinv; // seed 003 eq. 3
    let ksb = kernel.cross(xs.as_ref(), basis.as_ref()).unwrap();
    let prior = kernel.diag(xs.as_ref());
    let m = basis.nrows();
    let mean = (0..xs.nrows())
        .map(|t| (0..m).map(|i| ksb[(t, i)] * alpha[i]).sum())
        .collect();
    let var = (0..xs.nrows())
        .map(|t| {
            let mut q = 0.0;
            for i in 0..m {
                for j in 0..m {
                    q += ksb[(t, i)] * r[(i, j)] * ksb[(t, j)];
                }
            }
            prior[t] - q
        })
        .collect();
    let ks = &kinv * sigma;
    let tr: f64 = (0..m).map(|i| ks[(i, i)]).sum();
    let ka = &kb * pacgp::linalg::col_from_slice(alpha);
    let quad: f64 = (0..m).map(|i| alpha[i] * ka[(i, 0)]).sum();
    let kl = 0.5 * (tr + quad - m as f64 + ln_det_k - ln_det_s);
    (mean, var, kl)
}

fn dense_posterior(
    kernel: &Kernel,
    basis: &Mat<f64>,
    alpha: &[f64],
    sigma: &Mat<f64>,
) -> GaussianPosterior {
    let kb = kernel.gram(basis.as_ref()).unwrap();
    GaussianPosterior::dense(
        kernel.clone(),
        basis.clone(),
        alpha.to_vec(),
        Cholesky::factor(kb.as_ref(), &JitterPolicy::none(), "K").unwrap(),
        Cholesky::factor(sigma.as_ref(), &JitterPolicy::none(), "Σ").unwrap(),
    )
}

fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol,
        "{what}: {a} vs {b} (diff {:e})",
        (a - b).abs()
    );
}

#[test]
fn dense_form_matches_explicit_formulas_and_the_site_form() {
    let (x, y) = toy(12);
    let kernel = Kernel::se_ard(&[0.9, 1.4], 1.3);
    let xs = test_inputs();
    // A general SPD Σ (no diagonal-site structure): Σ = K − K(K + A)⁻¹K with a dense A.
    let kb = kernel.gram(x.as_ref()).unwrap();
    let g = Mat::from_fn(12, 12, |i, j| 0.1 * (((i + 2 * j) % 5) as f64 - 2.0));
    let a = &g * g.transpose() + Mat::<f64>::identity(12, 12) * faer::Scale(0.3);
    let (inv, _) = inverse_and_ln_det(&(&kb + &a));
    let sigma = &kb - &kb * &inv * &kb;
    let alpha: Vec<f64> = (0..12).map(|i| (i as f64 * 0.7).cos()).collect();
    let post = dense_posterior(&kernel, &x, &alpha, &sigma);
    let got = post.predict(xs.as_ref()).unwrap();
    let (mean, var, kl) = dense_oracle(&kernel, &x, &alpha, &sigma, &xs);
    for t in 0..xs.nrows() {
        assert_close(got.mean[t], mean[t], 1e-10, "mean");
        assert_close(got.var[t], var[t], 1e-9, "variance");
    }
    assert_close(
        post.kl_to_prior().unwrap(),
        kl,
        1e-8 * kl.abs().max(1.0),
        "KL",
    );
    // Model-file round trip keeps the form.
    let back: GaussianPosterior =
        serde_json::from_str(&serde_json::to_string(&post).unwrap()).unwrap();
    assert_eq!(back.predict(xs.as_ref()).unwrap(), got);

    // The site form's Σ = (K⁻¹ + I/σ²)⁻¹ = K − K(K + σ²I)⁻¹K written densely gives the same
    // predictions and KL as the site form itself.
    let exact = ExactGp::fit(kernel.clone(), 0.3, x.clone(), y, &JitterPolicy::none()).unwrap();
    let sites = exact.posterior().unwrap();
    let noise = Mat::from_fn(12, 12, |i, j| if i == j { 0.3 } else { 0.0 });
    let (inv, _) = inverse_and_ln_det(&(&kb + &noise));
    let sigma = &kb - &kb * &inv * &kb;
    let dense = dense_posterior(&kernel, &x, &sites.alpha, &sigma);
    let (p, q) = (
        dense.predict(xs.as_ref()).unwrap(),
        sites.predict(xs.as_ref()).unwrap(),
    );
    for t in 0..xs.nrows() {
        assert_close(p.mean[t], q.mean[t], 1e-12, "mean vs site form");
        assert_close(p.var[t], q.var[t], 1e-9, "variance vs site form");
    }
    assert_close(
        dense.kl_to_prior().unwrap(),
        sites.kl_to_prior().unwrap(),
        1e-8,
        "KL vs site form",
    );
}

#[test]
fn gaussian_likelihood_without_deletions_reproduces_exact_regression() {
    let (x, y) = toy(30);
    let kernel = Kernel::se_ard(&[0.9, 1.4], 1.3);
    let exact = common::exact_fit(&kernel, 0.2, &x, &y);
    let xs = test_inputs();
    let lik = Likelihood::Gaussian { variance: 0.2 };
    for order in [SweepOrder::Natural, SweepOrder::Shuffled { seed: 7 }] {
        let fit = sogp(&kernel, &lik, x.as_ref(), &y, &full_cfg(30), &order).unwrap();
        let idx = fit.basis_indices.as_ref().unwrap();
        assert_eq!(idx.len(), 30, "every point is a basis vector");
        // Sequential ADF normalisers multiply to p(y) exactly for a Gaussian likelihood.
        assert_reproduces_exact(&fit, &exact, &xs);
        assert_close(
            fit.posterior.kl_to_prior().unwrap(),
            exact.posterior().unwrap().kl_to_prior().unwrap(),
            1e-8,
            "KL",
        );
        assert_eq!(fit.report.jitter_used, 0.0);
    }
}

#[test]
fn a_duplicated_point_takes_the_reduced_update_and_still_matches_exact_regression() {
    let (x0, y0) = toy(20);
    // Row 20 repeats the input of row 7 with its own target.
    let x = Mat::from_fn(21, 2, |i, j| x0[(if i == 20 { 7 } else { i }, j)]);
    let mut y = y0.clone();
    y.push(0.35);
    let kernel = Kernel::se_ard(&[0.9, 1.4], 1.3);
    let lik = Likelihood::Gaussian { variance: 0.2 };
    let cfg = SogpConfig {
        novelty_tol: 1e-6,
        ..full_cfg(21)
    };
    let mut state = Sogp::new(&kernel, &lik, &cfg).unwrap();
    for i in 0..21 {
        let kind = state.update(&row(&x, i), y[i], i).unwrap();
        let want = if i == 20 {
            UpdateKind::Reduced
        } else {
            UpdateKind::Full
        };
        assert_eq!(kind, want, "point {i}");
    }
    assert_eq!(state.n_basis(), 20);
    assert_eq!(state.stats().reduced_updates, 1);

    let fit = sogp(&kernel, &lik, x.as_ref(), &y, &cfg, &SweepOrder::Natural).unwrap();
    assert_eq!(fit.basis_indices.as_ref().unwrap().len(), 20);
    assert!(!fit.basis_indices.as_ref().unwrap().contains(&20));
    let exact = common::exact_fit(&kernel, 0.2, &x, &y);
    assert_reproduces_exact(&fit, &exact, &test_inputs());
}

/// A Gaussian-likelihood fit is exact regression: its latent mean and variance at `xs` and its
/// ln evidence are `exact`'s, to 1e-8.
fn assert_reproduces_exact(fit: &ClassifierFit, exact: &ExactGp, xs: &Mat<f64>) {
    assert_predicts_as_exact(fit, exact, xs);
    assert_close(
        fit.ln_evidence.unwrap(),
        exact.log_marginal_likelihood(),
        1e-8,
        "ln evidence",
    );
}

/// `fit`'s latent mean and variance at `xs` are `exact`'s, to 1e-8.
fn assert_predicts_as_exact(fit: &ClassifierFit, exact: &ExactGp, xs: &Mat<f64>) {
    let (p, want) = (
        fit.posterior.predict(xs.as_ref()).unwrap(),
        exact.predict(xs.as_ref()).unwrap(),
    );
    for t in 0..xs.nrows() {
        assert_close(p.mean[t], want.mean[t], 1e-8, "mean");
        assert_close(p.var[t], want.latent_var[t], 1e-8, "variance");
    }
}

/// Tiny dense ADF over all training latents in seed 003's own probit formulas (docs/math.md §7.4):
/// `c = y/√(λ⁻² + ζ)`, `u = c(μ_i + b)`, `g = cφ(u)/Φ(u)`, `ν = g(g + uc)`,
/// `μ ← μ + gΣe_i`, `Σ ← Σ − νΣe_ie_iᵀΣ`. Returns (μ, Σ, Σ ln Z).
fn dense_adf(
    k: &Mat<f64>,
    y: &[f64],
    lambda: f64,
    b: f64,
    order: &[usize],
) -> (Vec<f64>, Mat<f64>, f64) {
    let n = y.len();
    let mut sigma = k.clone();
    let mut mu = vec![0.0; n];
    let mut ln_z = 0.0;
    let phi = |u: f64| (-0.5 * u * u).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let cdf = |u: f64| 0.5 * libm::erfc(-u / std::f64::consts::SQRT_2);
    for &i in order {
        let zeta = sigma[(i, i)];
        let c = y[i] / (1.0 / (lambda * lambda) + zeta).sqrt();
        let u = c * (mu[i] + b);
        let g = c * phi(u) / cdf(u);
        let nu = g * (g + u * c);
        ln_z += cdf(u).ln();
        let s: Vec<f64> = (0..n).map(|j| sigma[(j, i)]).collect();
        for j in 0..n {
            mu[j] += g * s[j];
            for l in 0..n {
                sigma[(j, l)] -= nu * s[j] * s[l];
            }
        }
    }
    (mu, sigma, ln_z)
}

#[test]
fn probit_sweep_without_deletions_equals_dense_adf_in_the_same_order() {
    let (x, y) = toy(25);
    let kernel = Kernel::se_iso(0.9, 2.0);
    let (lambda, b) = (1.7, -0.2);
    let lik = Likelihood::probit_with(lambda, b).unwrap();
    let order = pacgp::data::permutation(25, 11);
    let fit = sogp(
        &kernel,
        &lik,
        x.as_ref(),
        &y,
        &full_cfg(25),
        &SweepOrder::Given(order.clone()),
    )
    .unwrap();
    assert_eq!(
        fit.basis_indices.as_ref().unwrap(),
        &order,
        "basis in visiting order"
    );
    let k = kernel.gram(x.as_ref()).unwrap();
    let (mu, sigma, ln_z) = dense_adf(&k, &y, lambda, b, &order);
    // Marginals at the training inputs.
    let m = fit.posterior.predict(x.as_ref()).unwrap();
    for i in 0..25 {
        assert_close(m.mean[i], mu[i], 1e-8, "ADF mean");
        assert_close(m.var[i], sigma[(i, i)], 1e-8, "ADF variance");
    }
    // Σ_B = K_B + K_B C K_B is the ADF covariance (rows in visiting order).
    let Covariance::Dense { chol_sigma, .. } = &fit.posterior.cov else {
        panic!("SOGP ends in the dense form");
    };
    let l = chol_sigma.l();
    let l = Mat::from_fn(25, 25, |i, j| if i >= j { l[(i, j)] } else { 0.0 });
    let sb = &l * l.transpose();
    for a in 0..25 {
        for c in 0..25 {
            assert_close(sb[(a, c)], sigma[(order[a], order[c])], 1e-8, "Σ_B");
        }
    }
    assert_close(fit.ln_evidence.unwrap(), ln_z, 1e-8, "Σ ln Z");
    // KL and test predictions against the dense oracle on the ADF (μ, Σ).
    let sigma_o = Mat::from_fn(25, 25, |a, c| sigma[(order[a], order[c])]);
    let (kinv, _) = inverse_and_ln_det(&kernel.gram(fit.posterior.basis.as_ref()).unwrap());
    let mu_o: Vec<f64> = order.iter().map(|&i| mu[i]).collect();
    let alpha_o =
        pacgp::linalg::col_to_vec((&kinv * pacgp::linalg::col_from_slice(&mu_o)).as_ref());
    let xs = test_inputs();
    let (mean, var, kl) = dense_oracle(&kernel, &fit.posterior.basis, &alpha_o, &sigma_o, &xs);
    let p = fit.posterior.predict(xs.as_ref()).unwrap();
    for t in 0..xs.nrows() {
        assert_close(p.mean[t], mean[t], 1e-7, "test mean");
        assert_close(p.var[t], var[t], 1e-7, "test variance");
    }
    assert_close(
        fit.posterior.kl_to_prior().unwrap(),
        kl,
        1e-6 * kl.max(1.0),
        "KL",
    );
}

#[test]
fn deletions_keep_alpha_c_and_q_consistent() {
    let (x, y) = toy(40);
    let kernel = Kernel::se_iso(0.7, 1.0);
    let lik = Likelihood::probit();
    let cfg = SogpConfig {
        max_basis: 10,
        novelty_tol: 0.0,
        sweeps: 1,
        jitter: JitterPolicy::none(),
    };
    let mut state = Sogp::new(&kernel, &lik, &cfg).unwrap();
    let mut deletions = 0;
    for i in 0..40 {
        // Before absorbing the point, check one deletion against the projection formula.
        if state.n_basis() == 10 && i % 5 == 0 {
            check_deletion_is_a_projection(&state, &kernel, (i / 5) % 10);
        }
        if let UpdateKind::FullThenDeleted { .. } = state.update(&row(&x, i), y[i], i).unwrap() {
            deletions += 1;
            // Q equals K_B⁻¹ recomputed from the surviving basis.
            let kb = kernel.gram(state.basis_matrix().as_ref()).unwrap();
            let kinv = Cholesky::factor(kb.as_ref(), &JitterPolicy::none(), "K_B")
                .unwrap()
                .inverse()
                .unwrap();
            for a in 0..10 {
                for c in 0..10 {
                    assert_close(state.q()[(a, c)], kinv[(a, c)], 1e-8, "Q vs K_B⁻¹");
                }
            }
        }
        assert!(state.n_basis() <= 10);
    }
    assert_eq!(deletions, 30);
    assert_eq!(state.stats().deletions, 30);
    // The dense posterior built from (α, C) reproduces the state's own marginals.
    let post = state.posterior().unwrap();
    let xs = test_inputs();
    let p = post.predict(xs.as_ref()).unwrap();
    for t in 0..xs.nrows() {
        let (m, v) = state.marginal(&row(&xs, t));
        assert_close(p.mean[t], m, 1e-10, "mean");
        assert_close(p.var[t], v, 1e-8, "variance");
    }
    // Through the driver: basis of exactly max_basis distinct training rows.
    let fit = sogp(&kernel, &lik, x.as_ref(), &y, &cfg, &SweepOrder::Natural).unwrap();
    let mut idx = fit.basis_indices.clone().unwrap();
    idx.sort_unstable();
    idx.dedup();
    assert_eq!(idx.len(), 10);
    assert!(fit.report.notes.iter().any(|s| s.contains("30 deletions")));
}

/// Deleting basis vector j projects k(·, b_j) on the others, `k(·,b_j) ≈ k(·,B_d)ᵀê` with
/// `ê = K_d⁻¹ k(B_d, b_j)`: `α ← α_d + α_j ê`, `C ← C_d + ê c_jᵀ + c_j êᵀ + C_jj ê êᵀ`.
fn check_deletion_is_a_projection(state: &Sogp, kernel: &Kernel, j: usize) {
    let m = state.n_basis();
    let keep: Vec<usize> = (0..m).filter(|&i| i != j).collect();
    let basis = state.basis_matrix();
    let bd = Mat::from_fn(m - 1, basis.ncols(), |a, c| basis[(keep[a], c)]);
    let bj = Mat::from_fn(1, basis.ncols(), |_, c| basis[(j, c)]);
    let kd = kernel.gram(bd.as_ref()).unwrap();
    let kdj = kernel.cross(bd.as_ref(), bj.as_ref()).unwrap();
    let e = Cholesky::factor(kd.as_ref(), &JitterPolicy::none(), "K_d")
        .unwrap()
        .solve(kdj.as_ref());
    let (a_j, c_jj) = (state.alpha()[j], state.c()[(j, j)]);
    let mut deleted = state.clone();
    deleted.delete(j).unwrap();
    for (a, &ia) in keep.iter().enumerate() {
        let want = state.alpha()[ia] + a_j * e[(a, 0)];
        assert_close(deleted.alpha()[a], want, 1e-8, "projected α");
        for (c, &ic) in keep.iter().enumerate() {
            let want = state.c()[(ia, ic)]
                + e[(a, 0)] * state.c()[(j, ic)]
                + state.c()[(ia, j)] * e[(c, 0)]
                + c_jj * e[(a, 0)] * e[(c, 0)];
            assert_close(deleted.c()[(a, c)], want, 1e-8, "projected C");
        }
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    let (x, y) = toy(10);
    let k = Kernel::se_iso(1.0, 1.0);
    let lik = Likelihood::probit();
    let ok = SogpConfig::default();
    let nat = SweepOrder::Natural;
    let run = |x: &Mat<f64>, y: &[f64], cfg: &SogpConfig, order: &SweepOrder, lik: &Likelihood| {
        sogp(&k, lik, x.as_ref(), y, cfg, order)
    };
    assert!(run(&x, &y, &ok, &nat, &lik).is_ok());
    let zero = SogpConfig { max_basis: 0, ..ok };
    assert!(matches!(
        run(&x, &y, &zero, &nat, &lik),
        Err(Error::InvalidParameter {
            name: "max_basis",
            ..
        })
    ));
    let neg = SogpConfig {
        novelty_tol: -1e-3,
        ..ok
    };
    assert!(matches!(
        run(&x, &y, &neg, &nat, &lik),
        Err(Error::InvalidParameter {
            name: "novelty_tol",
            ..
        })
    ));
    let nan_tol = SogpConfig {
        novelty_tol: f64::NAN,
        ..ok
    };
    assert!(matches!(
        run(&x, &y, &nan_tol, &nat, &lik),
        Err(Error::InvalidParameter { .. })
    ));
    let no_sweeps = SogpConfig { sweeps: 0, ..ok };
    assert!(matches!(
        run(&x, &y, &no_sweeps, &nat, &lik),
        Err(Error::InvalidParameter { name: "sweeps", .. })
    ));
    assert!(matches!(
        run(&x, &[1.0; 10], &ok, &nat, &lik),
        Err(Error::NotBinary { .. })
    ));
    let mut xn = x.clone();
    xn[(3, 1)] = f64::NAN;
    assert!(matches!(
        run(&xn, &y, &ok, &nat, &lik),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        run(&x, &y[..9], &ok, &nat, &lik),
        Err(Error::ShapeMismatch { .. })
    ));
    let x3 = Mat::from_fn(10, 3, |i, j| (i + j) as f64);
    let k_ard = Kernel::se_ard(&[1.0, 1.0], 1.0);
    assert!(sogp(&k_ard, &lik, x3.as_ref(), &y, &ok, &nat).is_err());
    assert!(matches!(
        run(&x, &y, &ok, &SweepOrder::Given(vec![0, 10]), &lik),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        run(&x, &y, &ok, &SweepOrder::Given(vec![]), &lik),
        Err(Error::Empty { .. })
    ));
    assert!(matches!(
        run(&x, &y, &ok, &nat, &Likelihood::Logistic),
        Err(Error::Unsupported(_))
    ));
}

/// Seed 003 §4.1 protocol on breast-cancer-wisconsin (100 train / 200 test): SOGP with 30
/// basis vectors gives a non-vacuous certificate above the test Gibbs error, and ordering
/// the test points by |μ/σ| gives a risk-coverage curve whose area is below the full risk.
#[test]
fn breast_cancer_sparse_certificates_hold() {
    let data = common::breast_cancer();
    let reps = 10;
    let mut held = 0;
    let mut summary = Vec::new();
    for rep in 0..reps {
        let (train, test, x, xt) = common::protocol_split(&data, rep);
        let k = Kernel::se_iso(3.0, 4.0);
        let lik = Likelihood::probit();
        let cfg = SogpConfig {
            max_basis: 30,
            sweeps: 1,
            ..Default::default()
        };
        let fit = sogp(
            &k,
            &lik,
            x.as_ref(),
            &train.y,
            &cfg,
            &SweepOrder::Shuffled { seed: rep },
        )
        .unwrap();
        assert_eq!(fit.posterior.n_basis(), 30);
        let (b, lam) = lik.bias_and_slope();
        let train_marg = fit.posterior.predict(x.as_ref()).unwrap();
        let loss = GibbsLoss::Classification(GibbsClassifier::noisy(&lik));
        let spec = CertificateSpec::new(0.01, ConfidenceTerm::Seeger, vec![]);
        let c = Certificate::of_predictions(&fit.posterior, &train_marg, &train.y, &loss, &spec)
            .unwrap();
        let test_marg = fit.posterior.predict(xt.as_ref()).unwrap();
        let test_gibbs = gibbs_error_classification(&test.y, &test_marg, b, lam).unwrap();
        assert!(c.bound < 0.5, "vacuous bound {c:?}");
        if c.bound >= test_gibbs {
            held += 1;
        }
        let pred = predicted_labels(&test_marg, &lik);
        let ratio = confidence(&test_marg, &lik, ConfidenceScore::MeanOverStd);
        let curve = risk_coverage(&test.y, &pred, &ratio).unwrap();
        let aurc = area_under_risk_coverage(&curve);
        let full_risk = curve.last().unwrap().1;
        assert!(
            aurc <= full_risk,
            "AURC {aurc} above the full risk {full_risk}"
        );
        summary.push([c.kl, c.empirical_risk, c.bound, test_gibbs, full_risk, aurc]);
    }
    let mean = |k: usize| summary.iter().map(|s| s[k]).sum::<f64>() / summary.len() as f64;
    eprintln!(
        "SOGP breast cancer (M = 30, {reps} reps): KL {:.2}, train Gibbs {:.4}, bound {:.4}, \
         test Gibbs {:.4}, test error {:.4}, AURC(|μ/σ|) {:.4}",
        mean(0),
        mean(1),
        mean(2),
        mean(3),
        mean(4),
        mean(5)
    );
    assert!(
        held >= reps * 9 / 10,
        "bound above test Gibbs error in {held} of {reps}"
    );
}

/// Plain repeated ADF sweeps count every likelihood term once per sweep: with a Gaussian
/// likelihood of variance σ², s sweeps (no deletions) equal exact regression with noise σ²/s
/// (s observations of the same y), the revisits taking the reduced update.
#[test]
fn repeated_sweeps_count_each_gaussian_observation_once_per_sweep() {
    let (x, y) = toy(15);
    let kernel = Kernel::se_ard(&[0.8, 1.2], 1.1);
    let lik = Likelihood::Gaussian { variance: 0.3 };
    let cfg = SogpConfig {
        sweeps: 3,
        novelty_tol: 1e-9,
        ..full_cfg(15)
    };
    let order = SweepOrder::Shuffled { seed: 5 };
    let fit = sogp(&kernel, &lik, x.as_ref(), &y, &cfg, &order).unwrap();
    assert_eq!(fit.posterior.n_basis(), 15);
    assert!(
        fit.ln_evidence.is_none(),
        "no evidence estimate after several sweeps"
    );
    assert!(fit
        .report
        .notes
        .iter()
        .any(|s| s.contains("15 full updates, 30 reduced updates, 0 deletions")));
    let exact = common::exact_fit(&kernel, 0.1, &x, &y);
    assert_predicts_as_exact(&fit, &exact, &test_inputs());
    // The same seed gives the same fit.
    let again = sogp(&kernel, &lik, x.as_ref(), &y, &cfg, &order).unwrap();
    assert_eq!(again.basis_indices, fit.basis_indices);
    assert_eq!(again.posterior.alpha, fit.posterior.alpha);
}
