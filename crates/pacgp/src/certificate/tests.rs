//! Unit tests of `crate::certificate`, in a file of their own beside the code.

use super::*;
use crate::kernel::Kernel;
use crate::regression::exact::ExactGp;

fn toy() -> (faer::Mat<f64>, Vec<f64>) {
    let x = faer::Mat::from_fn(12, 1, |i, _| i as f64 * 0.4 - 2.0);
    let y = (0..12).map(|i| (i as f64 * 0.4 - 2.0).sin()).collect();
    (x, y)
}

/// The constructor equals the bound assembled by hand from its parts.
#[test]
fn certificate_matches_hand_assembled_bound() {
    let (x, y) = toy();
    let gp = ExactGp::fit(
        Kernel::se_iso(0.8, 1.2),
        0.05,
        x.clone(),
        y.clone(),
        &Default::default(),
    )
    .unwrap();
    let post = gp.posterior().unwrap();
    let l = RegressionLoss::new_epsilon_band(0.2).unwrap();
    let grid = HyperGrid::default();
    let spec = CertificateSpec::new(
        0.01,
        ConfidenceTerm::Maurer,
        vec![PenaltyTerm::grid(&grid, 2), PenaltyTerm::candidates(3, "ε")],
    );
    let c =
        Certificate::of_posterior(&post, x.as_ref(), &y, &GibbsLoss::Regression(l), &spec).unwrap();
    let m = post.predict(x.as_ref()).unwrap();
    let risk = loss::gibbs_risk_regression(&y, &m, &l).unwrap();
    let pen = grid.penalty(2) + 3f64.ln();
    let kl = post.kl_to_prior().unwrap();
    let want = pac_bayes_bound(
        risk,
        kl,
        12,
        0.01,
        pen,
        BoundKind::Kl,
        ConfidenceTerm::Maurer,
    )
    .unwrap();
    assert!((c.bound - want).abs() < 1e-15);
    assert!((c.penalty - pen).abs() < 1e-12);
    assert!(c.bound_sqrt >= c.bound);
    assert!(c.predictor.contains("0.2"));
    assert_eq!(c.penalty_terms.len(), 2);
}

#[test]
fn latent_classifier_is_never_worse_than_the_noisy_one_on_its_sample() {
    let lik = Likelihood::probit_with(1.0, 0.0).unwrap();
    let m = Marginals {
        mean: vec![2.0, -1.0, 0.5],
        var: vec![0.1, 0.3, 0.2],
    };
    let y = [1.0, -1.0, 1.0];
    let a = GibbsLoss::Classification(GibbsClassifier::latent(&lik))
        .empirical_risk(&y, &m)
        .unwrap();
    let b = GibbsLoss::Classification(GibbsClassifier::noisy(&lik))
        .empirical_risk(&y, &m)
        .unwrap();
    assert!(a < b, "{a} vs {b}");
}

#[test]
fn negative_or_nan_kl_is_an_error() {
    let m = Marginals {
        mean: vec![0.0],
        var: vec![1.0],
    };
    let l = GibbsLoss::Regression(RegressionLoss::new_epsilon_band(0.5).unwrap());
    let spec = CertificateSpec::new(0.05, ConfidenceTerm::Seeger, vec![]);
    assert!(Certificate::from_marginals(f64::NAN, &m, &[0.0], &l, &spec).is_err());
    assert!(Certificate::from_marginals(-1.0, &m, &[0.0], &l, &spec).is_err());
    assert!(Certificate::from_marginals(0.0, &m, &[0.0], &l, &spec).is_ok());
}
