//! Sparse PAC-GP: the small vectors of docs/test-vectors.md §6, agreement with the shared
//! posterior, and finite-difference gradients in θ, ln σ² and Z for FITC and VFE forms and
//! both bounds.

use faer::Mat;
use pacgp::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use pacgp::gradcheck::{assert_objective_gradient, Tolerance};
use pacgp::kernel::Kernel;
use pacgp::loss::{gibbs_risk_regression, RegressionLoss};
use pacgp::objective::bound::MinimisedBound;
use pacgp::objective::pac_sgp::{fit_pac_sgp, PacSgpObjective};
use pacgp::regression::inducing_init::InducingInit;
use pacgp::regression::sparse::{NegSparseObjective, SparseGp, SparseMethod};

mod common;
use common::toy_sine as toy;

/// docs/test-vectors.md §6 (sparse): Z = (0.5, 2.5); VFE form KL 2.03026590, R_S 0.75771403; FITC form
/// KL 1.11999846, R_S 0.77446545 (ε = 0.2). K_uu carries 1e-6 jitter here, the vectors none.
#[test]
fn spec_small_vectors() {
    let x = Mat::from_fn(4, 1, |i, _| i as f64);
    let y = vec![0.5, -0.2, 0.3, 0.9];
    let z = Mat::from_fn(2, 1, |a, _| 0.5 + 2.0 * a as f64);
    let k = Kernel::se_iso(1.0, 1.0);
    let p = NegSparseObjective::pack(&k, 0.1, z.as_ref());
    let loss = RegressionLoss::EpsilonBand { epsilon: 0.2 };
    let pen = HyperGrid::default().penalty(2);
    for (alpha_s, kl, rs) in [(0.0, 2.03026590, 0.75771403), (1.0, 1.11999846, 0.77446545)] {
        let obj = objective(&k, &x, &y, 2, alpha_s, loss, mb(0.01, pen, BoundKind::Kl));
        let t = obj.terms(&p).unwrap();
        assert!((t.kl - kl).abs() < 1e-5, "α_s={alpha_s}: KL {}", t.kl);
        assert!(
            (t.empirical_risk - rs).abs() < 1e-5,
            "α_s={alpha_s}: R_S {}",
            t.empirical_risk
        );
    }
}

#[test]
fn terms_agree_with_the_shared_posterior() {
    let (x, y) = toy(30);
    let z = Mat::from_fn(5, 2, |a, t| -1.5 + 0.7 * a as f64 + 0.3 * t as f64);
    let k = Kernel::se_ard(&[0.8, 1.3], 1.4);
    let loss = RegressionLoss::EpsilonBand { epsilon: 0.3 };
    for (alpha_s, method) in [(0.0, SparseMethod::Vfe), (1.0, SparseMethod::Fitc)] {
        let obj = objective(&k, &x, &y, 5, alpha_s, loss, mb(0.01, 10.0, BoundKind::Kl));
        let t = obj
            .terms(&NegSparseObjective::pack(&k, 0.07, z.as_ref()))
            .unwrap();
        let post = SparseGp {
            kernel: k.clone(),
            noise_variance: 0.07,
            z: z.clone(),
            method,
        }
        .posterior(x.as_ref(), &y)
        .unwrap();
        assert!(
            (post.kl_to_prior().unwrap() - t.kl).abs() < 1e-10 * t.kl.max(1.0),
            "{method:?} KL {} vs {}",
            post.kl_to_prior().unwrap(),
            t.kl
        );
        let r = gibbs_risk_regression(&y, &post.predict(x.as_ref()).unwrap(), &loss).unwrap();
        assert!((r - t.empirical_risk).abs() < 1e-10, "{method:?} R_S");
    }
}

#[test]
fn gradients_match_central_differences() {
    let (x, y, k, p) = common::sparse_gradient_point();
    for alpha_s in [0.0, 1.0] {
        for kind in [BoundKind::Kl, BoundKind::Sqrt] {
            let obj = objective(
                &k,
                &x,
                &y,
                4,
                alpha_s,
                RegressionLoss::EpsilonBand { epsilon: 0.3 },
                mb(0.05, 10.0, kind),
            );
            // h = 1e-6; values O(1): rounding ≈ 1e-10/h, truncation O(h²).
            assert_objective_gradient(
                &obj,
                &p,
                1e-6,
                Tolerance::mixed(1e-5),
                &format!("α_s={alpha_s} {kind:?}"),
            );
        }
    }
}

#[test]
fn training_gives_a_consistent_certificate_and_bad_input_errors() {
    let (x, y) = toy(80);
    let k = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let loss = RegressionLoss::EpsilonBand { epsilon: 0.4 };
    let fit = fit_pac_sgp(
        &k,
        1.0,
        x.as_ref(),
        &y,
        6,
        1.0,
        loss,
        0.01,
        BoundKind::Kl,
        0,
        InducingInit::KMeans,
        200,
    )
    .unwrap();
    let c = &fit.certificate;
    assert!(c.bound >= c.empirical_risk && c.bound < 1.0, "{c:?}");
    let post = fit.gp.posterior_with_alpha(x.as_ref(), &y, 1.0).unwrap();
    assert!((post.kl_to_prior().unwrap() - c.kl).abs() < 1e-12 * c.kl.max(1.0));
    assert!(PacSgpObjective::new(
        &k,
        x.as_ref(),
        &y,
        0,
        1.0,
        loss,
        mb(0.01, 1.0, BoundKind::Kl)
    )
    .is_err());
    assert!(PacSgpObjective::new(
        &k,
        x.as_ref(),
        &y,
        81,
        1.0,
        loss,
        mb(0.01, 1.0, BoundKind::Kl)
    )
    .is_err());
    assert!(MinimisedBound::new(0.0, ConfidenceTerm::Maurer, BoundKind::Kl, 1.0).is_err());
    assert!(PacSgpObjective::new(
        &k,
        x.as_ref(),
        &y,
        5,
        1.0,
        RegressionLoss::EpsilonBand { epsilon: 0.0 },
        mb(0.01, 1.0, BoundKind::Kl)
    )
    .is_err());
}

/// The PAC-SGP objective of `k` on `(x, y)` with `m` inducing inputs.
fn objective<'a>(
    k: &Kernel,
    x: &'a Mat<f64>,
    y: &'a [f64],
    m: usize,
    alpha_s: f64,
    loss: RegressionLoss,
    bound: MinimisedBound,
) -> PacSgpObjective<'a> {
    PacSgpObjective::new(k, x.as_ref(), y, m, alpha_s, loss, bound).unwrap()
}

/// The bound minimised: δ, penalty, form, Maurer's term.
fn mb(delta: f64, penalty: f64, kind: BoundKind) -> MinimisedBound {
    MinimisedBound::new(delta, ConfidenceTerm::Maurer, kind, penalty).unwrap()
}
