//! Evidence of the GP classifiers and ML-II: analytic gradients of the Laplace `ln q` and of
//! `ln Z_EP` against central finite differences; both reduce to the exact GP log marginal
//! likelihood (value and gradient) under a Gaussian likelihood; the Laplace evidence and
//! gradient (logistic) equal scikit-learn's `GaussianProcessClassifier` on a fixture
//! (`tests/fixtures/gen_gpc_sklearn.py` → `gpc_sklearn.json`); sequential and parallel EP
//! reach the same fixed point; ML-II optima are stationary and improve on the start.

mod common;
use common::toy;

use faer::Mat;
use pacgp::gradcheck::{assert_gradient_close, Tolerance};
use pacgp::inference::ep::{ep, ep_warm, EpConfig, EpSchedule, EpSites};
use pacgp::inference::evidence::{
    ep_evidence, fit_ep_ml2, fit_laplace_ml2, laplace_evidence, Approximation, ClassifierMlConfig,
    NegLogEvidence,
};
use pacgp::inference::laplace::{laplace, laplace_warm, LaplaceConfig};
use pacgp::inference::Problem;
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::linalg::JitterPolicy;
use pacgp::optim::Objective;
use pacgp::posterior::Covariance;
use pacgp::regression::exact::ExactGp;

const TIGHT_LAPLACE: LaplaceConfig = LaplaceConfig {
    max_iter: 200,
    tol: 1e-14,
};

fn tight_ep(schedule: EpSchedule) -> EpConfig {
    EpConfig {
        max_sweeps: 2000,
        tol: 1e-12,
        damping: if schedule == EpSchedule::Parallel {
            0.7
        } else {
            1.0
        },
        schedule,
    }
}

/// Central differences of `f` at `p` with step h = 1e-5: truncation O(h²·f''') ≈ 1e-10 and
/// round-off ≈ 1e-16·|f|/h ≈ 1e-10 for |f| ~ 10, so 1e-6·(1 + |g|) leaves a wide margin
/// while catching any wrong term.
fn assert_grad_close(f: impl Fn(&[f64]) -> f64, grad: &[f64], p: &[f64], what: &str) {
    let what = format!("{what} at {p:?}");
    assert_gradient_close(f, p, grad, 1e-5, Tolerance::mixed(1e-6), &what);
}

fn kernel_at(p: &[f64]) -> Kernel {
    let mut k = Kernel::se_ard(&[1.0, 1.0], 1.0);
    k.set_params(p).unwrap();
    k
}

const THETAS: [[f64; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [1.1, -0.4, 0.6],
    [-0.8, 0.5, 0.2],
    [2.3, 0.3, -0.5],
];

#[test]
fn laplace_gradient_matches_finite_differences() {
    let (x, y) = toy(30);
    for lik in [
        Likelihood::Logistic,
        Likelihood::probit_with(1.3, 0.2).unwrap(),
    ] {
        for th in THETAS {
            let (_, g) = laplace_evidence(
                Problem::new(&kernel_at(&th), &lik, x.as_ref(), &y),
                &TIGHT_LAPLACE,
                None,
            )
            .unwrap();
            let value = |t: &[f64]| {
                laplace(&kernel_at(t), &lik, x.as_ref(), &y, &TIGHT_LAPLACE)
                    .unwrap()
                    .ln_evidence
                    .unwrap()
            };
            assert_grad_close(value, &g.kernel, &th, &format!("Laplace θ, {lik:?}"));
            if let Likelihood::Probit { lambda, bias } = lik {
                let value = |q: &[f64]| {
                    let l = Likelihood::probit_with(q[0].exp(), q[1]).unwrap();
                    laplace(&kernel_at(&th), &l, x.as_ref(), &y, &TIGHT_LAPLACE)
                        .unwrap()
                        .ln_evidence
                        .unwrap()
                };
                assert_grad_close(
                    value,
                    &g.likelihood,
                    &[lambda.ln(), bias],
                    "Laplace ln λ, b",
                );
            } else {
                assert!(g.likelihood.is_empty());
            }
        }
    }
}

#[test]
fn ep_gradient_matches_finite_differences() {
    let (x, y) = toy(30);
    let lik = Likelihood::probit_with(1.3, 0.2).unwrap();
    let cfg = tight_ep(EpSchedule::Sequential);
    for th in THETAS {
        let (fit, _, g) = ep_evidence(
            Problem::new(&kernel_at(&th), &lik, x.as_ref(), &y),
            &cfg,
            None,
        )
        .unwrap();
        assert_eq!(fit.ln_evidence, Some(g.ln_evidence));
        let value = |t: &[f64]| {
            ep(&kernel_at(t), &lik, x.as_ref(), &y, &cfg)
                .unwrap()
                .ln_evidence
                .unwrap()
        };
        assert_grad_close(value, &g.kernel, &th, "EP θ");
        let value = |q: &[f64]| {
            let l = Likelihood::probit_with(q[0].exp(), q[1]).unwrap();
            ep(&kernel_at(&th), &l, x.as_ref(), &y, &cfg)
                .unwrap()
                .ln_evidence
                .unwrap()
        };
        assert_grad_close(value, &g.likelihood, &[1.3f64.ln(), 0.2], "EP ln λ, b");
    }
}

/// With `N(y; f, σ²)` both approximations are exact: value and θ-gradient equal GPML
/// eqs. 2.30 and 5.9 of exact regression.
#[test]
fn gaussian_likelihood_evidence_and_gradient_are_exact() {
    let (x, y) = toy(30);
    let yr: Vec<f64> = y
        .iter()
        .enumerate()
        .map(|(i, v)| v + 0.3 * (i as f64 * 0.7).sin())
        .collect();
    for th in THETAS {
        let k = kernel_at(&th);
        let exact =
            ExactGp::fit(k.clone(), 0.3, x.clone(), yr.clone(), &JitterPolicy::none()).unwrap();
        let (lml, grad) = (
            exact.log_marginal_likelihood(),
            exact.lml_gradient().unwrap(),
        );
        let lik = Likelihood::Gaussian { variance: 0.3 };
        let (_, gl) = laplace_evidence(
            Problem::new(&k, &lik, x.as_ref(), &yr),
            &LaplaceConfig::default(),
            None,
        )
        .unwrap();
        let (_, _, ge) = ep_evidence(
            Problem::new(&k, &lik, x.as_ref(), &yr),
            &EpConfig::default(),
            None,
        )
        .unwrap();
        let par = ep(
            &k,
            &lik,
            x.as_ref(),
            &yr,
            &EpConfig {
                schedule: EpSchedule::Parallel,
                ..EpConfig::default()
            },
        )
        .unwrap();
        assert!((par.ln_evidence.unwrap() - lml).abs() < 1e-8, "parallel EP");
        for (g, name) in [(&gl, "Laplace"), (&ge, "EP")] {
            assert!(
                (g.ln_evidence - lml).abs() < 1e-8,
                "{name}: {} vs exact {lml}",
                g.ln_evidence
            );
            for t in 0..3 {
                assert!(
                    (g.kernel[t] - grad[t]).abs() < 1e-8 * (1.0 + grad[t].abs()),
                    "{name} gradient {t}: {} vs exact {}",
                    g.kernel[t],
                    grad[t]
                );
            }
        }
    }
}

fn fixture() -> serde_json::Value {
    common::fixture("gpc_sklearn.json")
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn fixture_data(fx: &serde_json::Value) -> (Mat<f64>, Vec<f64>) {
    let rows: Vec<Vec<f64>> = fx["x"].as_array().unwrap().iter().map(floats).collect();
    let x = Mat::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j]);
    (x, floats(&fx["y"]))
}

/// scikit-learn 1.9.1's Laplace GPC (logistic, C·RBF-ARD): same `ln q` to 1e-6 and the same
/// gradient at four θ; our ML-II optimum is at least as good as scikit-learn's.
#[test]
fn laplace_logistic_matches_scikit_learn() {
    let fx = fixture();
    let (x, y) = fixture_data(&fx);
    let lik = Likelihood::Logistic;
    let kernel = |t: &[f64]| {
        let mut k = Kernel::se_ard(&[1.0; 3], 1.0);
        k.set_params(t).unwrap();
        k
    };
    for ev in fx["evaluations"].as_array().unwrap() {
        let th = floats(&ev["theta"]);
        let (want, want_grad) = (ev["lml"].as_f64().unwrap(), floats(&ev["grad"]));
        let (_, g) = laplace_evidence(
            Problem::new(&kernel(&th), &lik, x.as_ref(), &y),
            &LaplaceConfig::default(),
            None,
        )
        .unwrap();
        assert!(
            (g.ln_evidence - want).abs() < 1e-6,
            "θ {th:?}: {} vs scikit-learn {want}",
            g.ln_evidence
        );
        for t in 0..4 {
            assert!(
                (g.kernel[t] - want_grad[t]).abs() < 1e-6 * (1.0 + want_grad[t].abs()),
                "θ {th:?} gradient {t}: {} vs scikit-learn {}",
                g.kernel[t],
                want_grad[t]
            );
        }
    }
    let r = fit_laplace_ml2(
        Problem::new(&kernel(&[0.0; 4]), &lik, x.as_ref(), &y),
        &ClassifierMlConfig::default(),
    )
    .unwrap();
    let (ours, theirs) = (r.fit.ln_evidence.unwrap(), fx["ml2_lml"].as_f64().unwrap());
    assert!(
        ours >= theirs - 1e-4,
        "ML-II ln q {ours} vs scikit-learn {theirs}"
    );
}

fn sites_of(fit: &pacgp::inference::ClassifierFit) -> Vec<f64> {
    let Covariance::Sites { sqrt_pi, .. } = &fit.posterior.cov else {
        panic!("site form")
    };
    sqrt_pi.clone()
}

#[test]
fn sequential_and_parallel_ep_reach_the_same_fixed_point() {
    let (x, y) = toy(40);
    let k = Kernel::se_iso(0.8, 3.0);
    let lik = Likelihood::probit_with(1.0, -0.1).unwrap();
    let seq = ep(&k, &lik, x.as_ref(), &y, &tight_ep(EpSchedule::Sequential)).unwrap();
    let par = ep(&k, &lik, x.as_ref(), &y, &tight_ep(EpSchedule::Parallel)).unwrap();
    for fit in [&seq, &par] {
        assert_eq!(
            fit.report.status,
            pacgp::inference::ConvergenceStatus::Converged
        );
    }
    let (a, b) = (sites_of(&seq), sites_of(&par));
    for i in 0..40 {
        assert!((a[i] - b[i]).abs() < 1e-8, "√τ̃_{i}: {} vs {}", a[i], b[i]);
        assert!(
            (seq.posterior.alpha[i] - par.posterior.alpha[i]).abs() < 1e-8,
            "α_{i}"
        );
    }
    assert!((seq.ln_evidence.unwrap() - par.ln_evidence.unwrap()).abs() < 1e-9);
    // Damping outside (0, 1] is a typed error.
    assert!(ep(
        &k,
        &lik,
        x.as_ref(),
        &y,
        &EpConfig {
            damping: 0.0,
            ..EpConfig::default()
        }
    )
    .is_err());
}

#[test]
fn warm_starts_reach_the_cold_fixed_point() {
    let (x, y) = toy(30);
    let lik = Likelihood::probit();
    // A nearby θ, as between two ML-II evaluations.
    let near: Vec<f64> = THETAS[1].iter().map(|t| t + 0.05).collect();
    let (k0, k1) = (kernel_at(&THETAS[1]), kernel_at(&near));
    let cold = laplace(&k1, &lik, x.as_ref(), &y, &TIGHT_LAPLACE).unwrap();
    let prev = laplace(&k0, &lik, x.as_ref(), &y, &TIGHT_LAPLACE).unwrap();
    let f_prev = prev.posterior.predict(x.as_ref()).unwrap().mean;
    let warm = laplace_warm(&k1, &lik, x.as_ref(), &y, &TIGHT_LAPLACE, &f_prev).unwrap();
    assert!(warm.report.iterations < cold.report.iterations);
    assert!((cold.ln_evidence.unwrap() - warm.ln_evidence.unwrap()).abs() < 1e-10);
    assert!(laplace_warm(&k1, &lik, x.as_ref(), &y, &TIGHT_LAPLACE, &[0.0; 3]).is_err());
    let mut bad = f_prev.clone();
    bad[0] = f64::NAN;
    assert!(laplace_warm(&k1, &lik, x.as_ref(), &y, &TIGHT_LAPLACE, &bad).is_err());
    let cfg = tight_ep(EpSchedule::Sequential);
    let cold = ep(&k1, &lik, x.as_ref(), &y, &cfg).unwrap();
    let (_, sites) = ep_warm(&k0, &lik, x.as_ref(), &y, &cfg, &EpSites::flat(30)).unwrap();
    let (warm, _) = ep_warm(&k1, &lik, x.as_ref(), &y, &cfg, &sites).unwrap();
    assert!(warm.report.iterations < cold.report.iterations);
    assert!((cold.ln_evidence.unwrap() - warm.ln_evidence.unwrap()).abs() < 1e-9);
    let bad = EpSites {
        tau: vec![-1.0; 30],
        nu: vec![0.0; 30],
    };
    assert!(ep_warm(&k1, &lik, x.as_ref(), &y, &cfg, &bad).is_err());
}

/// ML-II with the probit slope and bias: the optimum is stationary (projected gradient
/// near zero) and its evidence beats the start, for Laplace and EP; the objective's
/// gradient (warm-started inner solves) matches finite differences.
#[test]
fn ml2_optimum_is_stationary_and_better_than_the_start() {
    let (x, y) = toy(40);
    let lik = Likelihood::probit_with(1.0, 0.0).unwrap();
    let k0 = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let cfg = ClassifierMlConfig {
        fit_likelihood: true,
        laplace: TIGHT_LAPLACE,
        ep: tight_ep(EpSchedule::Sequential),
        ..Default::default()
    };
    let start_lap = laplace(&k0, &lik, x.as_ref(), &y, &cfg.laplace)
        .unwrap()
        .ln_evidence
        .unwrap();
    let start_ep = ep(&k0, &lik, x.as_ref(), &y, &cfg.ep)
        .unwrap()
        .ln_evidence
        .unwrap();
    let lap = fit_laplace_ml2(Problem::new(&k0, &lik, x.as_ref(), &y), &cfg).unwrap();
    let epr = fit_ep_ml2(Problem::new(&k0, &lik, x.as_ref(), &y), &cfg).unwrap();
    for (r, start, name) in [(&lap, start_lap, "Laplace"), (&epr, start_ep, "EP")] {
        let got = r.fit.ln_evidence.unwrap();
        assert!(got > start + 1e-3, "{name}: {got} vs start {start}");
        let g: Vec<f64> = r
            .gradient
            .kernel
            .iter()
            .chain(&r.gradient.likelihood)
            .copied()
            .collect();
        let bounds: Vec<(f64, f64)> = vec![cfg.theta_bounds; 3]
            .into_iter()
            .chain([cfg.ln_lambda_bounds, cfg.bias_bounds])
            .collect();
        for (k, (gk, (lo, hi))) in g.iter().zip(&bounds).enumerate() {
            let p = r.report.params[k];
            let at_bound = (p <= *lo && *gk < 0.0) || (p >= *hi && *gk > 0.0);
            assert!(
                at_bound || gk.abs() < 1e-3,
                "{name}: gradient {k} = {gk} at {:?} ({:?})",
                r.report.params,
                r.report.termination
            );
        }
    }
    let obj = NegLogEvidence::new(
        Problem::new(&k0, &lik, x.as_ref(), &y),
        Approximation::Laplace(TIGHT_LAPLACE),
        true,
    )
    .unwrap();
    let p = [0.3, -0.2, 0.1, 0.2, 0.1];
    let (_, g) = obj.value_and_gradient(&p).unwrap();
    assert_grad_close(|q| obj.value(q).unwrap(), &g, &p, "objective");
    assert!(NegLogEvidence::new(
        Problem::new(&k0, &Likelihood::Logistic, x.as_ref(), &y),
        Approximation::Laplace(TIGHT_LAPLACE),
        true
    )
    .is_err());
}

/// The default parallel schedule starts undamped; with a large signal variance its second
/// sweep overshoots, the damping is halved (and reported), and it still reaches the
/// sequential fixed point.
#[test]
fn undamped_parallel_ep_halves_its_damping_when_it_overshoots() {
    let (x, y) = toy(40);
    let k = Kernel::se_iso(0.8, 100.0);
    let lik = Likelihood::probit();
    let seq = ep(&k, &lik, x.as_ref(), &y, &tight_ep(EpSchedule::Sequential)).unwrap();
    let cfg = EpConfig {
        tol: 1e-12,
        max_sweeps: 2000,
        ..EpConfig::default()
    };
    assert_eq!(cfg.damping, 1.0);
    let par = ep(&k, &lik, x.as_ref(), &y, &cfg).unwrap();
    assert_eq!(
        par.report.status,
        pacgp::inference::ConvergenceStatus::Converged
    );
    assert!(
        par.report
            .notes
            .iter()
            .any(|n| n.contains("damping halved")),
        "{:?}",
        par.report.notes
    );
    let (a, b) = (sites_of(&seq), sites_of(&par));
    for i in 0..40 {
        assert!((a[i] - b[i]).abs() < 1e-8, "√τ̃_{i}: {} vs {}", a[i], b[i]);
    }
    assert!((seq.ln_evidence.unwrap() - par.ln_evidence.unwrap()).abs() < 1e-9);
}

/// EP ML-II with the default settings (site tolerance following the gradient, 1e-3 to
/// 3e-2) finds the optimum that ML-II with tightly converged EP (1e-12) finds.
#[test]
fn ep_ml2_with_the_forcing_tolerance_finds_the_tight_optimum() {
    let (x, y) = toy(60);
    let lik = Likelihood::probit();
    let k0 = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let loose = ClassifierMlConfig::default();
    let tight = ClassifierMlConfig {
        ep: EpConfig {
            tol: 1e-12,
            max_sweeps: 2000,
            ..EpConfig::default()
        },
        ..Default::default()
    };
    let a = fit_ep_ml2(Problem::new(&k0, &lik, x.as_ref(), &y), &loose).unwrap();
    let b = fit_ep_ml2(Problem::new(&k0, &lik, x.as_ref(), &y), &tight).unwrap();
    let (za, zb) = (a.fit.ln_evidence.unwrap(), b.fit.ln_evidence.unwrap());
    assert!((za - zb).abs() < 1e-4, "ln Z_EP {za} vs {zb}");
    for (p, q) in a.report.params.iter().zip(&b.report.params) {
        assert!(
            (p - q).abs() < 1e-2,
            "θ {:?} vs {:?}",
            a.report.params,
            b.report.params
        );
    }
}
