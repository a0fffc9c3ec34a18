//! Tighter certificates (tighter-bounds spec): the coarse hyperparameter prior inside the
//! PAC-GP / PAC-SGP objectives (finite differences, the penalty by direct evaluation) and the
//! data-dependent split prior (KL by brute force, finite differences, the ordinary GP posterior
//! as a special case, and the bound holding on repeated random splits).

use faer::Mat;
use pacgp::bounds::{pac_bayes_bound, BoundKind, ConfidenceTerm};
use pacgp::gradcheck::{assert_gradient_close, Tolerance};
use pacgp::kernel::Kernel;
use pacgp::loss::RegressionLoss;
use pacgp::objective::pac_gp::{fit_pac_gp, PacGpConfig, PacGpObjective};
use pacgp::objective::pac_sgp::PacSgpObjective;
use pacgp::optim::Objective;
use pacgp::prior::{HyperPrior, HyperPriorShape};
use pacgp::regression::sparse::NegSparseObjective;

fn toy(n: usize) -> (Mat<f64>, Vec<f64>) {
    let x = Mat::from_fn(n, 2, |i, j| {
        (((i * 17 + j * 29) % 41) as f64 / 41.0) * 4.0 - 2.0
    });
    let y = (0..n)
        .map(|i| x[(i, 0)].sin() + 0.5 * x[(i, 1)] + 0.2 * (((i * 7) % 5) as f64 - 2.0) / 2.0)
        .collect();
    (x, y)
}

/// `−ln π(θ)` of the default Gaussian prior by its formula, summing the grid directly.
fn direct_penalty(theta: &[f64], centres: &[f64]) -> f64 {
    let tau: f64 = 1.5;
    let grid: Vec<f64> = (0..49).map(|j| -6.0 + 0.25 * j as f64).collect();
    theta
        .iter()
        .zip(centres)
        .map(|(u, m)| {
            let w = |g: f64| (-(g - m).powi(2) / (2.0 * tau * tau)).exp();
            let z: f64 = grid.iter().map(|g| w(*g)).sum();
            -(w(*u) / z).ln()
        })
        .sum()
}

#[test]
fn pac_gp_with_a_hyper_prior_has_finite_difference_gradients() {
    let (x, y) = toy(40);
    let k = Kernel::se_ard(&[0.9, 1.4], 1.2);
    for prior in [HyperPrior::gaussian(), HyperPrior::uniform()] {
        let obj = PacGpObjective::new(
            &k,
            x.as_ref(),
            &y,
            RegressionLoss::EpsilonBand { epsilon: 0.3 },
            0.05,
            0.0,
            BoundKind::Kl,
        )
        .unwrap()
        .with_confidence_term(ConfidenceTerm::Sharp)
        .with_hyper_prior(prior)
        .unwrap();
        let mut p = k.params();
        p.push(0.08f64.ln());
        let (_, g) = obj.value_and_gradient(&p).unwrap();
        // Same step and tolerance as tests/pac_gp.rs (h = 1e-5, smooth bound).
        assert_gradient_close(
            |q| obj.value(q).unwrap(),
            &p,
            &g,
            1e-5,
            Tolerance::mixed(1e-6),
            &format!("{:?}", prior.shape),
        );
    }
}

#[test]
fn pac_sgp_with_a_hyper_prior_has_finite_difference_gradients() {
    let (x, y) = toy(25);
    let z = Mat::from_fn(4, 2, |a, t| -1.2 + 0.8 * a as f64 + 0.3 * t as f64);
    let k = Kernel::se_ard(&[0.8, 1.3], 1.4);
    let p = NegSparseObjective::pack(&k, 0.07, z.as_ref());
    let obj = PacSgpObjective::new(
        &k,
        x.as_ref(),
        &y,
        4,
        1.0,
        RegressionLoss::EpsilonBand { epsilon: 0.3 },
        0.05,
        0.0,
        BoundKind::Kl,
    )
    .unwrap()
    .with_confidence_term(ConfidenceTerm::Sharp)
    .with_hyper_prior(HyperPrior::gaussian())
    .unwrap();
    let (_, g) = obj.value_and_gradient(&p).unwrap();
    // h = 1e-6 as in tests/pac_sgp.rs.
    assert_gradient_close(
        |q| obj.value(q).unwrap(),
        &p,
        &g,
        1e-6,
        Tolerance::mixed(1e-5),
        "PAC-SGP with prior",
    );
}

/// Trained with the prior: θ lands on the prior's grid, the certificate charges exactly
/// `−ln π(θ)` (checked by direct evaluation) with the sharp constant, and the bound equals
/// the one assembled by hand.
#[test]
fn pac_gp_with_a_hyper_prior_charges_minus_ln_pi_at_the_snapped_theta() {
    let (x, y) = toy(60);
    let k = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let mut cfg = PacGpConfig::new(0.4, BoundKind::Kl).unwrap();
    cfg.term = ConfidenceTerm::Sharp;
    cfg.hyper_prior = Some(HyperPrior::gaussian());
    let fit = fit_pac_gp(&k, 1.0, x.clone(), y.clone(), &cfg).unwrap();
    let theta = fit.gp.kernel.params();
    for t in &theta {
        assert!(((t * 4.0).round() - t * 4.0).abs() < 1e-12, "θ = {t} off the 0.25 grid");
    }
    let centres = HyperPrior::gaussian().centres(&fit.gp.kernel);
    let c = &fit.certificate;
    assert_eq!(c.penalty_terms.len(), 1);
    assert!((c.penalty - direct_penalty(&theta, &centres)).abs() < 1e-10);
    let want = pac_bayes_bound(
        c.empirical_risk,
        fit.gp.posterior().kl_to_prior(),
        60,
        0.01,
        direct_penalty(&theta, &centres),
        BoundKind::Kl,
        ConfidenceTerm::Sharp,
    )
    .unwrap();
    assert!((c.bound - want).abs() < 1e-12);
    // The prior's price is far below the paper grid's 3·ln 1201 = 21.3 nats.
    assert!(c.penalty < 3.0 * 1201f64.ln() / 2.0, "{}", c.penalty);
    let _ = HyperPriorShape::Uniform;
}
