//! Unit tests of `crate::certificate::deployed`, in a file of their own beside the code.

use super::*;
use crate::posterior::Marginals;

/// A small xorshift generator: the tests' random posteriors, the same on every run.
fn uniform(state: &mut u64) -> f64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// The pointwise inequalities of the module doc on random means, variances (within κ of
/// the prior's), labels, scales, thresholds and biases: wherever the mean errs, Gibbs risk
/// plus two draws' disagreement ≥ 1 and margin risk ≥ `Φ(t/√κ)`; for a regressor's
/// ε-band miss of the mean, band risk at `ε − γ` plus spread beyond γ ≥ 1.
#[test]
fn the_pointwise_inequalities_hold_on_random_posteriors() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut u = move || uniform(&mut state);
    let one = |mean: f64, var: f64| Marginals {
        mean: vec![mean],
        var: vec![var],
    };
    for _ in 0..20_000 {
        let (mu, k, kappa) = (4.0 * u() - 2.0, 0.5 + 2.0 * u(), 1.0 + u());
        let v = (0.001 + u()) * kappa * k;
        let y = if u() < 0.5 { -1.0 } else { 1.0 };
        let (c, t, b) = (1.0 + 10.0 * u(), 3.0 * u(), u() - 0.5);
        let (m, mc) = (one(mu, v), one(c * mu, v));
        let err = f64::from(y * (mu + b) <= 0.0);
        let gibbs = loss::gibbs_error_classification(&[y], &mc, c * b, None).unwrap();
        let pair = loss::disagreement_classification(&mc, c * b).unwrap();
        assert!(gibbs + pair >= err - 1e-12, "{mu} {v} {y} {c} {b}");
        let gamma = [t * k.sqrt()];
        let margin = loss::margin_error_classification(&[y], &mc, c * b, &gamma).unwrap();
        assert!(margin >= err * normal_cdf(t / kappa.sqrt()) - 1e-12);
        let (target, eps, r) = (4.0 * u() - 2.0, 0.1 + u(), u());
        let inner = RegressionLoss::new_epsilon_band((1.0 - r) * eps).unwrap();
        let band = loss::gibbs_risk_regression(&[target], &m, &inner).unwrap();
        let spread = loss::spread_risk(&m, &[r * eps]).unwrap();
        assert!(band + spread >= f64::from((target - mu).abs() > eps) - 1e-12);
    }
}

/// Wherever a majority vote errs, each form's pointwise loss reaches its divisor: on
/// random vote probabilities over 2–6 classes, with the vote the most probable class,
/// `1 − p_y ≥ ½`, `(1 − p_y) + (1 − Σ p_j²) ≥ 1` and `(1 − p_y)² ≥ ¼`.
#[test]
fn the_majority_vote_inequalities_hold_on_random_votes() {
    let mut state = 0x5851_f42d_4c95_7f2d_u64;
    let mut u = move || uniform(&mut state);
    for _ in 0..20_000 {
        let k = 2 + (5.0 * u()) as usize;
        let w: Vec<f64> = (0..k).map(|_| u().powi(3)).collect();
        let total: f64 = w.iter().sum();
        let p: Vec<f64> = w.iter().map(|v| v / total).collect();
        let vote = (0..k).fold(0, |b, j| if p[j] > p[b] { j } else { b });
        let y = ((k as f64) * u()) as usize;
        if vote == y {
            continue;
        }
        let miss = 1.0 - p[y];
        let disagree = 1.0 - p.iter().map(|v| v * v).sum::<f64>();
        assert!(miss >= 0.5 - 1e-12, "{p:?} {y}");
        assert!(miss + disagree >= 1.0 - 1e-12, "{p:?} {y}");
        assert!(miss * miss >= 0.25 - 1e-12, "{p:?} {y}");
    }
}

/// The majority vote's certificate is the least of its three forms, each recomputed here
/// from the kl-inverse bound with the spec's price and `ln 3`.
#[test]
fn the_majority_vote_certificate_is_the_least_form() {
    use crate::bounds::ConfidenceTerm;
    use crate::special::kl_inverse;
    let spec = CertificateSpec::new(0.05, ConfidenceTerm::Maurer, vec![]);
    let (n, kl) = (400, 12.5);
    let price = 3f64.ln();
    let kl_bound = |risk: f64, kl: f64, delta: f64| {
        let c = (kl + price + (2.0 * (n as f64).sqrt() / delta).ln()) / n as f64;
        kl_inverse(risk, c)
    };
    for risks in [
        VoteRisks {
            gibbs: 0.10,
            tandem: 0.02,
            disagreement: 0.15,
        },
        VoteRisks {
            gibbs: 0.20,
            tandem: 0.15,
            disagreement: 0.05,
        },
        VoteRisks {
            gibbs: 0.05,
            tandem: 0.04,
            disagreement: 0.30,
        },
    ] {
        let c = derandomised_majority_vote(&risks, kl, (n, 12), &spec).unwrap();
        let forms = [
            2.0 * kl_bound(risks.gibbs, kl, 0.05),
            kl_bound(risks.gibbs, kl, 0.025) + kl_bound(risks.disagreement, 2.0 * kl, 0.025),
            4.0 * kl_bound(risks.tandem, 2.0 * kl, 0.05),
        ];
        let least = forms.iter().cloned().fold(1.0, f64::min);
        assert!((c.value - least).abs() < 1e-12, "{} vs {forms:?}", c.value);
        assert_eq!(c.predictor, DeployedPredictor::PredictedClass);
        assert_eq!((c.n, c.errors), (n, 12));
        assert_eq!(c.derandomised.unwrap().grid, 3);
    }
    let risks = VoteRisks {
        gibbs: 0.1,
        tandem: 0.02,
        disagreement: 0.1,
    };
    assert!(derandomised_majority_vote(&risks, kl, (10, 11), &spec).is_err());
}

/// The C-bound on random Gaussian votes (Lacasse et al. 2007; Germain et al. 2015): on
/// 200 random populations of 40 points (means, variances, labels, a bias), K = 64 draws
/// of `f` per point form a vote of K voters; its error never exceeds `c_bound` of its
/// Gibbs risk and its disagreement (two draws of the K, with replacement, differ), which
/// equals Cantelli's `1 − (E M)²/E M²` on the margins `M = 1 − 2·(fraction erring)`; and
/// the population's closed forms (`Φ`) give `R(sgn(μ + b)) ≤ c_bound(R(G), d)`.
#[test]
fn the_c_bound_holds_on_random_gaussian_votes() {
    let mut state = 0x1234_5678_9abc_def1_u64;
    let mut u = move || uniform(&mut state);
    let (points, k) = (40, 64);
    for _ in 0..200 {
        let b = u() - 0.5;
        let (mut vote_err, mut gibbs, mut pair, mut m1, mut m2) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let (mut mean, mut var, mut y) = (vec![], vec![], vec![]);
        for _ in 0..points {
            let (mu, v) = (4.0 * u() - 2.0, 0.01 + 2.0 * u());
            let label = if u() < 0.7 { mu.signum() } else { -mu.signum() };
            let wrong = (0..k)
                .filter(|_| {
                    let (a, c) = (u().max(1e-300), u());
                    let z = (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * c).cos();
                    label * (mu + v.sqrt() * z + b) <= 0.0
                })
                .count() as f64
                / k as f64;
            vote_err += f64::from(wrong >= 0.5);
            gibbs += wrong;
            pair += 2.0 * wrong * (1.0 - wrong);
            m1 += 1.0 - 2.0 * wrong;
            m2 += (1.0 - 2.0 * wrong).powi(2);
            mean.push(mu);
            var.push(v);
            y.push(label);
        }
        let p = points as f64;
        let (vote_err, gibbs, pair) = (vote_err / p, gibbs / p, pair / p);
        let bound = c_bound(gibbs, pair);
        assert!(vote_err <= bound + 1e-12, "{vote_err} > {bound}");
        if gibbs < 0.5 {
            let cantelli = 1.0 - (m1 / p).powi(2) / (m2 / p);
            assert!((bound - cantelli).abs() < 1e-12, "{bound} vs {cantelli}");
        }
        let m = Marginals { mean, var };
        let deployed = loss::bayes_error_classification(&y, &m, b).unwrap();
        let r = loss::gibbs_error_classification(&y, &m, b, None).unwrap();
        let d = loss::disagreement_classification(&m, b).unwrap();
        assert!(
            deployed <= c_bound(r, d) + 1e-12,
            "{deployed} > C({r}, {d})"
        );
    }
    assert_eq!(c_bound(0.5, 0.1), 1.0);
    assert!((c_bound(0.1, 0.1) - (1.0 - 0.64 / 0.8)).abs() < 1e-15);
}

/// The assembled C-bound of a vote against a hand computation: the Gibbs risk's
/// kl-inverse at δ/2 with KL, the disagreement's kl-inverse from below (`kl_inverse_lower`,
/// checked on its own in `special`) at δ/2 with 2·KL, both priced `ln 4` (the enlarged grid),
/// in `1 − (1 − 2r̄)²/(1 − 2d̲)`; the other forms are the certificate's recomputed at `ln 4`.
#[test]
fn the_majority_vote_c_bound_is_the_hand_computation() {
    use crate::bounds::ConfidenceTerm;
    use crate::special::{kl_inverse, kl_inverse_lower};
    let spec = CertificateSpec::new(0.05, ConfidenceTerm::Maurer, vec![]);
    let (n, kl) = (400, 6.0);
    let price = 4f64.ln();
    let complexity =
        |kl: f64, delta: f64| (kl + price + (2.0 * (n as f64).sqrt() / delta).ln()) / n as f64;
    let risks = VoteRisks {
        gibbs: 0.08,
        tandem: 0.03,
        disagreement: 0.12,
    };
    let forms = majority_vote_forms_with_c_bound(&risks, kl, (n, 9), &spec).unwrap();
    let c = forms.last().unwrap();
    let parts = c.derandomised.as_ref().unwrap();
    assert_eq!((parts.form, parts.grid), (DerandomisedForm::CBound, 4));
    let r_up = kl_inverse(0.08, complexity(kl, 0.025));
    let d_low = kl_inverse_lower(2.0 * (0.08 - 0.03), complexity(2.0 * kl, 0.025));
    let want = 1.0 - (1.0 - 2.0 * r_up).powi(2) / (1.0 - 2.0 * d_low);
    assert!((c.value - want).abs() < 1e-9, "{} vs {want}", c.value);
    assert!((parts.second_bound.unwrap() - d_low).abs() < 1e-9);
    assert_eq!(parts.second_risk, Some(2.0 * (0.08 - 0.03)));
    let first = 2.0 * kl_inverse(0.08, complexity(kl, 0.05));
    assert!((forms[0].value - first).abs() < 1e-9);
    // The certificate's grid is priced ln 3 and holds no C-bound.
    let cert = derandomised_majority_vote(&risks, kl, (n, 9), &spec).unwrap();
    assert_ne!(cert.derandomised.unwrap().form, DerandomisedForm::CBound);
}

/// The closed forms against Monte Carlo draws: two draws' disagreement, the margin risk and
/// the spread (2·10⁵ draws: a standard error below 1.2e-3).
#[test]
fn closed_forms_match_monte_carlo() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut u = move || uniform(&mut state);
    let mut normal = move || {
        let (a, b) = (u().max(1e-300), u());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    };
    let (mu, v, b, y, gamma) = (0.3, 0.64, -0.1, -1.0, 0.4);
    let m = Marginals {
        mean: vec![mu],
        var: vec![v],
    };
    let draws = 200_000;
    let (mut disagree, mut margin, mut spread) = (0.0, 0.0, 0.0);
    for _ in 0..draws {
        let (f, g) = (mu + v.sqrt() * normal(), mu + v.sqrt() * normal());
        disagree += f64::from((f + b > 0.0) != (g + b > 0.0));
        margin += f64::from(y * (f + b) <= gamma);
        spread += f64::from((f - mu).abs() >= gamma);
    }
    let n = draws as f64;
    let close = |mc: f64, exact: f64| assert!((mc / n - exact).abs() < 5e-3, "{mc} vs {exact}");
    close(disagree, loss::disagreement_classification(&m, b).unwrap());
    close(
        margin,
        loss::margin_error_classification(&[y], &m, b, &[gamma]).unwrap(),
    );
    close(spread, loss::spread_risk(&m, &[gamma]).unwrap());
}

/// The derandomised regressor certificate is for the ε-band loss: given the band it certifies
/// (at least its Bayes predictor's error on the sample), given the distance-sensitive loss it is
/// refused with a typed error, not computed from a loss it does not bound.
#[test]
fn the_derandomised_regressor_takes_the_epsilon_band_only() {
    use crate::bounds::ConfidenceTerm;
    use crate::kernel::Kernel;
    use crate::posterior::GaussianPosterior;
    let n = 40;
    let x = faer::Mat::from_fn(n, 1, |i, _| i as f64 / 10.0);
    let y: Vec<f64> = (0..n).map(|i| (i as f64 / 10.0).sin()).collect();
    let alpha: Vec<f64> = (0..n).map(|i| ((i % 5) as f64 - 2.0) / 20.0).collect();
    let q = GaussianPosterior::shifted(Kernel::se_iso(0.5, 1.0), x.clone(), alpha).unwrap();
    let family = MeanScaled::on_sample(q, x.as_ref()).unwrap();
    let sample = DerandomisedSample {
        family: &family,
        y: &y,
    };
    let spec = CertificateSpec::new(0.05, ConfidenceTerm::Maurer, Vec::new());
    let band = RegressionLoss::new_epsilon_band(0.5).unwrap();
    let certificate = derandomised_regressor(&sample, &band, 0.5, &spec).unwrap();
    let errors = loss::bayes_risk_regression(&y, family.unit_marginals(), &band).unwrap();
    let (value, rate) = (certificate.value, certificate.error_rate);
    assert!((rate - errors).abs() < 1e-12, "{certificate:?}");
    assert!(value >= rate && value <= 1.0, "{certificate:?}");
    let other = RegressionLoss::DistanceSensitive { epsilon: 0.5 };
    let e = derandomised_regressor(&sample, &other, 0.5, &spec).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
}
