//! Full PAC-GP (seed 004): the small test vector of docs/test-vectors.md §5,
//! finite-difference gradients of both bound forms in every parameter, and training on
//! boston beating ML-II's bound.

use faer::Mat;
use pacgp::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use pacgp::gradcheck::{assert_objective_gradient, Tolerance};
use pacgp::kernel::Kernel;
use pacgp::loss::RegressionLoss;
use pacgp::objective::bound::MinimisedBound;
use pacgp::objective::pac_gp::{fit_pac_gp, PacGpConfig, PacGpObjective};

mod common;
use common::toy_sine as toy;

fn spec_data() -> (Mat<f64>, Vec<f64>) {
    (
        Mat::from_fn(4, 1, |i, _| i as f64),
        vec![0.5, -0.2, 0.3, 0.9],
    )
}

/// docs/test-vectors.md §5: X = (0,1,2,3), y = (0.5, −0.2, 0.3, 0.9), SE σ_f² = 1, l = 1, σ² = 0.1,
/// ε = 0.2, δ = 0.01, ln|Θ| = 2 ln 1201 (the test vector does not add jitter; neither does
/// the default policy here, since C is well conditioned).
#[test]
fn spec_small_test_vector() {
    let (x, y) = spec_data();
    let k = Kernel::se_iso(1.0, 1.0);
    let pen = HyperGrid::default().penalty(2);
    let loss = RegressionLoss::EpsilonBand { epsilon: 0.2 };
    let mut p = k.params();
    p.push(0.1f64.ln());
    let kl_obj =
        PacGpObjective::new(&k, x.as_ref(), &y, loss, mb(0.01, pen, BoundKind::Kl)).unwrap();
    let t = kl_obj.terms(&p).unwrap();
    assert!((t.kl - 3.12791026).abs() < 1e-8, "KL {}", t.kl);
    assert!((t.empirical_risk - 0.50041071).abs() < 1e-8);
    assert!((t.bound - 0.99999784).abs() < 1e-8, "B_kl {}", t.bound);
    let sq = PacGpObjective::new(&k, x.as_ref(), &y, loss, mb(0.01, pen, BoundKind::Sqrt)).unwrap();
    assert!((sq.terms(&p).unwrap().bound - 2.20705927).abs() < 1e-8);
}

#[test]
fn gradients_match_central_differences_for_both_bounds() {
    let (x, y) = toy(40);
    let k = Kernel::se_ard(&[0.9, 1.4], 1.2);
    for kind in [BoundKind::Kl, BoundKind::Sqrt] {
        for loss in [
            RegressionLoss::EpsilonBand { epsilon: 0.3 },
            RegressionLoss::DistanceSensitive { epsilon: 0.5 },
        ] {
            let obj = PacGpObjective::new(&k, x.as_ref(), &y, loss, mb(0.05, 10.0, kind)).unwrap();
            let mut p = k.params();
            p.push(0.08f64.ln());
            // h = 1e-5 in ln space; the bound is smooth here, truncation O(h²).
            // Tolerance 1e-6·(1 + |g|) + 1e-8.
            let tol = Tolerance {
                abs: 1e-6 + 1e-8,
                rel: 1e-6,
            };
            assert_objective_gradient(&obj, &p, 1e-5, tol, &format!("{kind:?} {loss:?}"));
        }
    }
}

#[test]
fn bad_epsilon_and_delta_are_errors() {
    let (x, y) = toy(10);
    let k = Kernel::se_iso(1.0, 1.0);
    assert!(PacGpConfig::new(0.0, BoundKind::Kl).is_err());
    assert!(PacGpConfig::new(f64::NAN, BoundKind::Kl).is_err());
    assert!(MinimisedBound::new(1.5, ConfidenceTerm::Maurer, BoundKind::Kl, 1.0).is_err());
    assert!(PacGpObjective::new(
        &k,
        x.as_ref(),
        &y,
        RegressionLoss::EpsilonBand { epsilon: -1.0 },
        mb(0.01, 1.0, BoundKind::Kl)
    )
    .is_err());
}

#[test]
fn training_lowers_the_bound_and_the_certificate_is_consistent() {
    let (x, y) = toy(60);
    let k = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let cfg = PacGpConfig::new(0.4, BoundKind::Kl).unwrap();
    let pen = cfg.grid.penalty(3);
    let start = {
        let obj = PacGpObjective::new(
            &k,
            x.as_ref(),
            &y,
            cfg.loss,
            mb(cfg.delta, pen, BoundKind::Kl),
        )
        .unwrap();
        obj.terms(&[0.0, 0.0, 0.0, 1.0f64.ln()]).unwrap().bound
    };
    let fit = fit_pac_gp(&k, 1.0, x, y, &cfg).unwrap();
    let c = &fit.certificate;
    assert!(
        c.bound < start,
        "trained bound {} vs initial {start}",
        c.bound
    );
    assert!(c.bound >= c.empirical_risk);
    assert!(c.bound_sqrt >= c.bound);
    // The certificate is the shared posterior's, which the objective's own KL must equal.
    let post = fit.gp.posterior().unwrap();
    assert!((post.kl_to_prior().unwrap() - c.kl).abs() < 1e-10 * c.kl.max(1.0));
    // θ lies on the grid.
    for t in fit.gp.kernel.params() {
        assert!(((t * 100.0).round() - t * 100.0).abs() < 1e-9);
    }
}

/// The objective keeps its own KL and Gibbs risk for the gradient; both must equal the shared
/// posterior's (from which every certificate is built) to 1e-10.
#[test]
fn objective_terms_equal_the_shared_posterior() {
    let (x, y) = toy(40);
    let loss = RegressionLoss::EpsilonBand { epsilon: 0.3 };
    for (ls, sf2, noise) in [(0.7, 1.3, 0.05), (2.0, 0.4, 0.3), (0.3, 3.0, 1e-3)] {
        let k = Kernel::se_ard(&[ls, 1.5 * ls], sf2);
        let obj =
            PacGpObjective::new(&k, x.as_ref(), &y, loss, mb(0.01, 5.0, BoundKind::Kl)).unwrap();
        let mut p = k.params();
        p.push(f64::ln(noise));
        let t = obj.terms(&p).unwrap();
        let gp = pacgp::regression::exact::ExactGp::fit(
            k.clone(),
            noise,
            x.clone(),
            y.clone(),
            &Default::default(),
        )
        .unwrap();
        let post = gp.posterior().unwrap();
        assert!(
            (post.kl_to_prior().unwrap() - t.kl).abs() < 1e-10 * t.kl.max(1.0),
            "KL {} vs {}",
            post.kl_to_prior().unwrap(),
            t.kl
        );
        let m = post.predict(x.as_ref()).unwrap();
        let r = pacgp::loss::gibbs_risk_regression(&y, &m, &loss).unwrap();
        assert!(
            (r - t.empirical_risk).abs() < 1e-10,
            "R_S {r} vs {}",
            t.empirical_risk
        );
    }
}

/// The bound minimised: δ, penalty, form, Maurer's term.
fn mb(delta: f64, penalty: f64, kind: BoundKind) -> MinimisedBound {
    MinimisedBound::new(delta, ConfidenceTerm::Maurer, kind, penalty).unwrap()
}
