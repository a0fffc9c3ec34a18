//! Selective classification (seed 003 §4.4): accept the test points the classifier is most
//! confident about, reject the rest, and trace the risk–coverage curve.
//!
//! Points are ordered by decreasing confidence; accepting the top `k` gives coverage `k/N`
//! and risk = errors among the accepted / `k`. Confidences from a GP posterior are
//! `|μ + b| / σ` with `σ² = v + λ⁻²` for the probit `Φ(λy(f + b))` (the Gibbs error of
//! docs/math.md §7.1 is `Φ(−|μ + b|/σ)` for the predicted label, so this orders by it) or `σ² = v`
//! otherwise, or plain `|μ + b|`; any other score (e.g. an SVM margin `|f(x)|`) can be
//! passed directly to [`risk_coverage`].
//!
//! **Ties.** Points with equal confidence are accepted or rejected together: the curve has
//! one point per distinct confidence value, so it does not depend on the input order.

use crate::error::{Error, Result};
use crate::likelihood::Likelihood;
use crate::posterior::Marginals;

/// Which confidence to compute from latent marginals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfidenceScore {
    /// `|μ + b| / σ`, `σ² = v + λ⁻²` (probit) or `v` (seed 003 §4.4's ratio).
    MeanOverStd,
    /// `|μ + b|`.
    AbsMean,
}

/// Bias b and the extra variance `λ⁻²` of the likelihood's noise (0 for non-probit).
fn bias_and_noise(lik: &Likelihood) -> (f64, f64) {
    let (b, lambda) = lik.bias_and_slope();
    (b, lambda.map_or(0.0, |l| 1.0 / (l * l)))
}

/// Predicted labels `sgn(μ + b)` (docs/math.md §7.2: the Bayes classifier), `+1` at exactly 0.
pub fn predicted_labels(marg: &Marginals, lik: &Likelihood) -> Vec<f64> {
    let (b, _) = bias_and_noise(lik);
    marg.mean
        .iter()
        .map(|m| if m + b >= 0.0 { 1.0 } else { -1.0 })
        .collect()
}

/// Confidence of every point from its latent marginal. A zero σ gives `+∞` (or 0 when
/// `μ + b = 0` too), never NaN.
pub fn confidence(marg: &Marginals, lik: &Likelihood, score: ConfidenceScore) -> Vec<f64> {
    let (b, noise) = bias_and_noise(lik);
    marg.mean
        .iter()
        .zip(&marg.var)
        .map(|(m, v)| {
            let a = (m + b).abs();
            match score {
                ConfidenceScore::AbsMean => a,
                ConfidenceScore::MeanOverStd => {
                    let s = (v.max(0.0) + noise).sqrt();
                    if a == 0.0 {
                        0.0
                    } else if s == 0.0 {
                        f64::INFINITY
                    } else {
                        a / s
                    }
                }
            }
        })
        .collect()
}

/// The risk–coverage curve: `(coverage, risk)` after accepting every point whose confidence
/// is at least each distinct confidence value, in decreasing order (ties accepted together).
/// A point is an error when `predicted ≠ y`.
pub fn risk_coverage(y: &[f64], predicted: &[f64], confidence: &[f64]) -> Result<Vec<(f64, f64)>> {
    let n = y.len();
    if n == 0 {
        return Err(Error::Empty {
            what: "risk-coverage labels",
        });
    }
    for (what, v) in [("predicted labels", predicted), ("confidences", confidence)] {
        if v.len() != n {
            return Err(Error::ShapeMismatch {
                what,
                expected: format!("{n} values (one per label)"),
                found: format!("{}", v.len()),
            });
        }
    }
    for (what, v) in [
        ("labels", y),
        ("predicted labels", predicted),
        ("confidences", confidence),
    ] {
        let bad = v.iter().position(|c| {
            if what == "confidences" {
                c.is_nan()
            } else {
                !c.is_finite()
            }
        });
        if let Some(row) = bad {
            return Err(Error::NonFinite { what, row, col: 0 });
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| confidence[b].total_cmp(&confidence[a]));
    let mut curve = Vec::new();
    let mut errors = 0usize;
    for (k, &i) in order.iter().enumerate() {
        if predicted[i] != y[i] {
            errors += 1;
        }
        let group_ends = k + 1 == n || confidence[order[k + 1]] != confidence[i];
        if group_ends {
            let accepted = (k + 1) as f64;
            curve.push((accepted / n as f64, errors as f64 / accepted));
        }
    }
    Ok(curve)
}

/// Area under the risk–coverage curve as a step function, `Σ_k (c_k − c_{k−1}) r_k` with
/// `c_0 = 0`; without ties this is the mean risk over the coverages `1/N, …, 1` (AURC).
pub fn area_under_risk_coverage(curve: &[(f64, f64)]) -> f64 {
    let mut prev = 0.0;
    let mut area = 0.0;
    for &(c, r) in curve {
        area += (c - prev) * r;
        prev = c;
    }
    area
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed: sorted by confidence the outcomes are ✓ ✓ ✓ ✗ ✗, so the risks are
    /// 0, 0, 0, 1/4, 2/5 and the area is (0 + 0 + 0 + 0.25 + 0.4)/5 = 0.13.
    #[test]
    fn tiny_example_by_hand() {
        let y = [1.0, 1.0, -1.0, -1.0, 1.0];
        let pred = [1.0, -1.0, -1.0, 1.0, 1.0];
        let conf = [0.9, 0.1, 0.8, 0.5, 0.7];
        let curve = risk_coverage(&y, &pred, &conf).unwrap();
        let want = [(0.2, 0.0), (0.4, 0.0), (0.6, 0.0), (0.8, 0.25), (1.0, 0.4)];
        assert_eq!(curve.len(), want.len());
        for (g, w) in curve.iter().zip(&want) {
            assert!(
                (g.0 - w.0).abs() < 1e-15 && (g.1 - w.1).abs() < 1e-15,
                "{g:?} vs {w:?}"
            );
        }
        assert!((area_under_risk_coverage(&curve) - 0.13).abs() < 1e-15);
    }

    /// When every error is less confident than every correct point, the risk is 0 until
    /// the first error is accepted, then rises.
    #[test]
    fn perfect_ordering_has_zero_risk_until_the_first_error() {
        let n = 20;
        let y = vec![1.0; n];
        let pred: Vec<f64> = (0..n)
            .map(|i| if i % 4 == 0 { -1.0 } else { 1.0 })
            .collect();
        let conf: Vec<f64> = (0..n)
            .map(|i| {
                if pred[i] == y[i] {
                    10.0 + i as f64
                } else {
                    i as f64 * 0.01
                }
            })
            .collect();
        let curve = risk_coverage(&y, &pred, &conf).unwrap();
        let correct = 15;
        for (k, &(c, r)) in curve.iter().enumerate() {
            assert!((c - (k + 1) as f64 / n as f64).abs() < 1e-15);
            if k < correct {
                assert_eq!(r, 0.0);
            } else {
                assert!((r - (k + 1 - correct) as f64 / (k + 1) as f64).abs() < 1e-15);
            }
        }
    }

    /// Tied confidences are accepted together: one curve point per distinct value, and the
    /// curve does not depend on the order of the input.
    #[test]
    fn ties_are_accepted_together_and_order_free() {
        let y = [1.0, 1.0, 1.0, 1.0];
        let pred = [1.0, 1.0, -1.0, 1.0];
        let conf = [0.9, 0.5, 0.5, 0.1];
        let curve = risk_coverage(&y, &pred, &conf).unwrap();
        let want = [(0.25, 0.0), (0.75, 1.0 / 3.0), (1.0, 0.25)];
        assert_eq!(curve.len(), 3);
        for (g, w) in curve.iter().zip(&want) {
            assert!((g.0 - w.0).abs() < 1e-15 && (g.1 - w.1).abs() < 1e-15);
        }
        let area = 0.5 / 3.0 + 0.25 * 0.25;
        assert!((area_under_risk_coverage(&curve) - area).abs() < 1e-15);
        // Swap the two tied points (and permute everything): same curve.
        let perm = [3, 2, 0, 1];
        let (yp, pp, cp): (Vec<f64>, Vec<f64>, Vec<f64>) = (
            perm.iter().map(|&i| y[i]).collect(),
            perm.iter().map(|&i| pred[i]).collect(),
            perm.iter().map(|&i| conf[i]).collect(),
        );
        assert_eq!(risk_coverage(&yp, &pp, &cp).unwrap(), curve);
    }

    #[test]
    fn confidences_from_marginals() {
        let marg = Marginals {
            mean: vec![0.6, -1.2, 0.0, 0.5],
            var: vec![0.44, 3.0, 1.0, 0.0],
        };
        let probit = Likelihood::probit_with(2.0, 0.1).unwrap();
        let c = confidence(&marg, &probit, ConfidenceScore::MeanOverStd);
        // |0.6 + 0.1| / √(0.44 + 1/4) = 0.7 / √0.69.
        assert!((c[0] - 0.7 / 0.69f64.sqrt()).abs() < 1e-15);
        assert!((c[1] - 1.1 / 3.25f64.sqrt()).abs() < 1e-15);
        let gauss = Likelihood::Gaussian { variance: 1.0 };
        let c = confidence(&marg, &gauss, ConfidenceScore::MeanOverStd);
        assert_eq!(c[2], 0.0);
        assert_eq!(c[3], f64::INFINITY);
        assert!((c[1] - 1.2 / 3f64.sqrt()).abs() < 1e-15);
        let a = confidence(&marg, &probit, ConfidenceScore::AbsMean);
        assert!((a[1] - 1.1).abs() < 1e-15);
        assert_eq!(predicted_labels(&marg, &probit), vec![1.0, -1.0, 1.0, 1.0]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            risk_coverage(&[], &[], &[]),
            Err(Error::Empty { .. })
        ));
        assert!(matches!(
            risk_coverage(&[1.0, -1.0], &[1.0], &[0.1, 0.2]),
            Err(Error::ShapeMismatch { .. })
        ));
        assert!(matches!(
            risk_coverage(&[1.0, -1.0], &[1.0, 1.0], &[0.1, f64::NAN]),
            Err(Error::NonFinite { row: 1, .. })
        ));
    }
}
