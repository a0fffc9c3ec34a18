//! Bounded losses and their Gibbs risks under a Gaussian marginal `f(x) ~ N(μ, v)`
//! (docs/math.md §4 for regression, §7.1 for classification), with derivatives in μ and v.

use serde::{Deserialize, Serialize};

use crate::data::standardised_length;
use crate::error::{Error, Result};
use crate::posterior::Marginals;
use crate::special::{normal_cdf, normal_pdf};

/// A bounded regression loss with accuracy ε.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "loss", rename_all = "snake_case")]
pub enum RegressionLoss {
    /// `1{|y − ŷ| > ε}` (paper §2.1).
    EpsilonBand {
        /// Half-width ε of the band.
        epsilon: f64,
    },
    /// `1 − exp(−(y − ŷ)²/ε²)` (paper App. C).
    DistanceSensitive {
        /// Scale ε.
        epsilon: f64,
    },
}

/// Per-point Gibbs risk and its derivatives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointRisk {
    /// `r = E_{f~N(μ,v)} ℓ(y, f)`.
    pub risk: f64,
    /// `∂r/∂μ`.
    pub d_mean: f64,
    /// `∂r/∂v`.
    pub d_var: f64,
}

impl RegressionLoss {
    /// Validate ε.
    pub fn new_epsilon_band(epsilon: f64) -> Result<Self> {
        check_epsilon(epsilon)?;
        Ok(RegressionLoss::EpsilonBand { epsilon })
    }

    /// The ε-band loss of an ε in target units, on targets divided by their standard
    /// deviation `y_sd` (the loss every fit objective and certificate evaluates): the one
    /// place ε becomes standardised units.
    pub fn band_in_standard_units(epsilon: f64, y_sd: f64) -> Result<Self> {
        Self::new_epsilon_band(standardised_length(epsilon, y_sd))
    }

    /// The ε of the loss.
    pub fn epsilon(&self) -> f64 {
        match self {
            RegressionLoss::EpsilonBand { epsilon }
            | RegressionLoss::DistanceSensitive { epsilon } => *epsilon,
        }
    }

    /// Gibbs risk at one point with latent marginal `N(mean, var)` (docs/math.md §4.1–4.2).
    pub fn point_risk(&self, y: f64, mean: f64, var: f64) -> PointRisk {
        let v = var.max(1e-300);
        match *self {
            RegressionLoss::EpsilonBand { epsilon } => {
                // r = Φ(−a) + Φ(b), a = (y + ε − μ)/s, b = (y − ε − μ)/s
                let s = v.sqrt();
                let a = (y + epsilon - mean) / s;
                let b = (y - epsilon - mean) / s;
                let (pa, pb) = (normal_pdf(a), normal_pdf(b));
                PointRisk {
                    risk: (normal_cdf(-a) + normal_cdf(b)).min(1.0),
                    d_mean: (pa - pb) / s,
                    d_var: (a * pa - b * pb) / (2.0 * v),
                }
            }
            RegressionLoss::DistanceSensitive { epsilon } => {
                let d = y - mean;
                let w = epsilon * epsilon + 2.0 * v;
                let keep = (epsilon / w.sqrt()) * (-d * d / w).exp();
                PointRisk {
                    risk: 1.0 - keep,
                    d_mean: -keep * 2.0 * d / w,
                    d_var: keep * (1.0 / w - 2.0 * d * d / (w * w)),
                }
            }
        }
    }

    /// The loss of a deterministic prediction (the "Bayes" predictor uses the mean).
    pub fn deterministic(&self, y: f64, prediction: f64) -> f64 {
        match *self {
            RegressionLoss::EpsilonBand { epsilon } => f64::from((y - prediction).abs() > epsilon),
            RegressionLoss::DistanceSensitive { epsilon } => {
                1.0 - (-(y - prediction).powi(2) / (epsilon * epsilon)).exp()
            }
        }
    }
}

/// An ε-band's ε (target units): positive and finite.
pub(crate) fn check_epsilon(epsilon: f64) -> Result<()> {
    if !(epsilon > 0.0 && epsilon.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "epsilon",
            value: epsilon,
            reason: "must be positive and finite",
        });
    }
    Ok(())
}

fn check_marginals(y: &[f64], m: &Marginals) -> Result<()> {
    if y.is_empty() {
        return Err(Error::Empty {
            what: "sample for the Gibbs risk",
        });
    }
    if m.mean.len() != y.len() || m.var.len() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "marginals vs targets",
            expected: format!("{}", y.len()),
            found: format!("{}", m.mean.len()),
        });
    }
    Ok(())
}

/// Mean Gibbs risk `R_S(Q) = (1/N) Σ r(y_i; μ_i, v_i)` of a regression loss (docs/math.md §4).
pub fn gibbs_risk_regression(
    y: &[f64],
    marginals: &Marginals,
    loss: &RegressionLoss,
) -> Result<f64> {
    Ok(gibbs_loss_sum_regression(y, marginals, loss)? / y.len() as f64)
}

/// The Gibbs regressor's loss summed over the sample (the numerator of
/// [`gibbs_risk_regression`], for a sample in parts).
pub fn gibbs_loss_sum_regression(
    y: &[f64],
    marginals: &Marginals,
    loss: &RegressionLoss,
) -> Result<f64> {
    band_loss_sum(y, marginals, loss, |y, mean, var| {
        loss.point_risk(y, mean, var).risk
    })
}

/// Mean loss of the posterior-mean ("Bayes") predictor (docs/math.md §4.3).
pub fn bayes_risk_regression(
    y: &[f64],
    marginals: &Marginals,
    loss: &RegressionLoss,
) -> Result<f64> {
    let sum = band_loss_sum(y, marginals, loss, |y, mean, _| loss.deterministic(y, mean))?;
    Ok(sum / y.len() as f64)
}

/// `Σ_i point(y_i, μ_i, v_i)` over the sample, once `loss`'s ε and the marginals' shape are
/// checked: the sum every ε-band risk of a Gaussian predictor is a mean of.
fn band_loss_sum(
    y: &[f64],
    marginals: &Marginals,
    loss: &RegressionLoss,
    point: impl Fn(f64, f64, f64) -> f64,
) -> Result<f64> {
    check_epsilon(loss.epsilon())?;
    check_marginals(y, marginals)?;
    Ok((0..y.len())
        .map(|i| point(y[i], marginals.mean[i], marginals.var[i]))
        .sum())
}

/// Per-point Gibbs error of the classifier `sgn(f + b)` (optionally with probit noise of
/// slope λ inside the stochastic predictor): `Φ(−y(μ + b)/√(λ⁻² + v))` (docs/math.md §7.1).
pub fn gibbs_error_point(
    y: f64,
    mean: f64,
    var: f64,
    bias: f64,
    probit_lambda: Option<f64>,
) -> f64 {
    let noise = probit_lambda.map_or(0.0, |l| 1.0 / (l * l));
    let s = (noise + var).sqrt();
    if s == 0.0 {
        return f64::from(y * (mean + bias) <= 0.0);
    }
    // Φ itself (erfc keeps its relative accuracy in the lower tail): the risk of a menu of
    // certificates is this function at every point for every candidate.
    normal_cdf(-y * (mean + bias) / s)
}

/// Mean Gibbs error on ±1 labels (docs/math.md §7.1).
pub fn gibbs_error_classification(
    y: &[f64],
    marginals: &Marginals,
    bias: f64,
    probit_lambda: Option<f64>,
) -> Result<f64> {
    Ok(gibbs_error_sum_classification(y, marginals, bias, probit_lambda)? / y.len() as f64)
}

/// The Gibbs classifier's errors summed over the sample (the numerator of
/// [`gibbs_error_classification`], for a sample in parts).
pub fn gibbs_error_sum_classification(
    y: &[f64],
    marginals: &Marginals,
    bias: f64,
    probit_lambda: Option<f64>,
) -> Result<f64> {
    check_marginals(y, marginals)?;
    Ok((0..y.len())
        .map(|i| {
            gibbs_error_point(
                y[i],
                marginals.mean[i],
                marginals.var[i],
                bias,
                probit_lambda,
            )
        })
        .sum())
}

/// Mean margin error of the Gibbs classifier `sgn(f + b)` at thresholds `γ_i`:
/// `(1/N) Σ P[y_i(f_i + b) ≤ γ_i] = (1/N) Σ Φ((γ_i − y_i(μ_i + b))/√v_i)` (docs/math.md §7.6;
/// the first term of the derandomised bound, [`crate::certificate::deployed`]).
pub fn margin_error_classification(
    y: &[f64],
    marginals: &Marginals,
    bias: f64,
    gamma: &[f64],
) -> Result<f64> {
    check_marginals(y, marginals)?;
    check_thresholds(gamma, y.len())?;
    let point = |i: usize| {
        let (gap, v) = (
            gamma[i] - y[i] * (marginals.mean[i] + bias),
            marginals.var[i],
        );
        if v > 0.0 {
            normal_cdf(gap / v.sqrt())
        } else {
            f64::from(gap >= 0.0)
        }
    };
    Ok((0..y.len()).map(point).sum::<f64>() / y.len() as f64)
}

/// Mean spread risk of the centred posterior `h = f − μ` at thresholds `γ_i`:
/// `(1/N) Σ P[|h_i| ≥ γ_i] = (1/N) Σ 2Φ(−γ_i/√v_i)` (docs/math.md §7.6; the second term of
/// a regressor's derandomised bound).
pub fn spread_risk(marginals: &Marginals, gamma: &[f64]) -> Result<f64> {
    let n = check_unlabelled(marginals)?;
    check_thresholds(gamma, n)?;
    let point = |(g, v): (&f64, &f64)| {
        if *v > 0.0 {
            2.0 * normal_cdf(-g / v.sqrt())
        } else {
            f64::from(*g <= 0.0)
        }
    };
    Ok(gamma.iter().zip(&marginals.var).map(point).sum::<f64>() / n as f64)
}

/// Mean disagreement of two independent draws of the classifier `sgn(f + b)`:
/// `(1/N) Σ P[sgn(f_i + b) ≠ sgn(f'_i + b)] = (1/N) Σ 2Φ(z_i)Φ(−z_i)`, `z = (μ + b)/√v`
/// (docs/math.md §7.6; the second term of a classifier's derandomised bound).
pub fn disagreement_classification(marginals: &Marginals, bias: f64) -> Result<f64> {
    let n = check_unlabelled(marginals)?;
    let point = |(m, v): (&f64, &f64)| {
        if *v > 0.0 {
            let z = (m + bias) / v.sqrt();
            2.0 * normal_cdf(z) * normal_cdf(-z)
        } else {
            0.0
        }
    };
    Ok(marginals
        .mean
        .iter()
        .zip(&marginals.var)
        .map(point)
        .sum::<f64>()
        / n as f64)
}

/// Marginals of a loss that needs no labels: as many variances as means, at least one; their
/// count.
fn check_unlabelled(marginals: &Marginals) -> Result<usize> {
    let n = marginals.mean.len();
    if marginals.var.len() != n || n == 0 {
        return Err(Error::ShapeMismatch {
            what: "marginals of an unlabelled loss",
            expected: format!("{n} variances, at least one"),
            found: format!("{}", marginals.var.len()),
        });
    }
    Ok(n)
}

/// Thresholds of a margin or spread loss: one per row, finite and non-negative.
fn check_thresholds(gamma: &[f64], n: usize) -> Result<()> {
    if gamma.len() != n {
        return Err(Error::ShapeMismatch {
            what: "thresholds of a margin loss",
            expected: format!("{n}"),
            found: format!("{}", gamma.len()),
        });
    }
    match gamma.iter().find(|g| !(g.is_finite() && **g >= 0.0)) {
        Some(&g) => Err(Error::InvalidParameter {
            name: "margin threshold",
            value: g,
            reason: "must be finite and non-negative",
        }),
        None => Ok(()),
    }
}

/// 0-1 error of the Bayes classifier `sgn(μ + b)` (docs/math.md §7.2; ties count as errors).
pub fn bayes_error_classification(y: &[f64], marginals: &Marginals, bias: f64) -> Result<f64> {
    check_marginals(y, marginals)?;
    Ok(y.iter()
        .zip(&marginals.mean)
        .filter(|(y, m)| *y * (*m + bias) <= 0.0)
        .count() as f64
        / y.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradcheck::{assert_derivative_close, Tolerance};

    #[test]
    fn derivatives_match_central_differences() {
        for loss in [
            RegressionLoss::EpsilonBand { epsilon: 0.3 },
            RegressionLoss::DistanceSensitive { epsilon: 0.5 },
        ] {
            for &(y, m, v) in &[(0.2, 0.1, 0.05), (1.0, -0.4, 0.3), (-0.5, 0.9, 0.01)] {
                let r = loss.point_risk(y, m, v);
                let h = 1e-6;
                let of_mean = |mu: f64| loss.point_risk(y, mu, v).risk;
                let of_var = |var: f64| loss.point_risk(y, m, var).risk;
                let what = format!("{loss:?} at ({y}, {m}, {v})");
                assert_derivative_close(of_mean, m, r.d_mean, h, Tolerance::absolute(1e-7), &what);
                assert_derivative_close(of_var, v, r.d_var, h, Tolerance::mixed(1e-6), &what);
            }
        }
    }

    /// Quadrature of E ℓ(y, f) on a fine grid (independent of the closed forms).
    #[test]
    fn closed_forms_match_quadrature() {
        for loss in [
            RegressionLoss::EpsilonBand { epsilon: 0.25 },
            RegressionLoss::DistanceSensitive { epsilon: 0.4 },
        ] {
            let (y, m, v) = (0.3, 0.1, 0.2);
            let s = f64::sqrt(v);
            let n = 400_000;
            let (lo, hi) = (m - 12.0 * s, m + 12.0 * s);
            let h = (hi - lo) / n as f64;
            let mut acc = 0.0;
            for i in 0..n {
                let f = lo + (i as f64 + 0.5) * h;
                acc += loss.deterministic(y, f) * normal_pdf((f - m) / s) / s * h;
            }
            // Midpoint rule: error ≤ h·max density at each of the band's two jumps.
            let tol = 2.0 * h * normal_pdf(0.0) / s + 1e-9;
            assert!(
                (acc - loss.point_risk(y, m, v).risk).abs() < tol,
                "{loss:?}"
            );
        }
    }

    /// docs/test-vectors.md §5: full GP on 4 points, ε = 0.2 → R_S = 0.50041071.
    #[test]
    fn spec_small_vector_empirical_risk() {
        let m = Marginals {
            mean: vec![0.40793267, -0.10909295, 0.27801237, 0.82005092],
            var: vec![0.08583452, 0.07860483, 0.07860483, 0.08583452],
        };
        let y = [0.5, -0.2, 0.3, 0.9];
        let r =
            gibbs_risk_regression(&y, &m, &RegressionLoss::EpsilonBand { epsilon: 0.2 }).unwrap();
        assert!((r - 0.50041071).abs() < 2e-8);
        assert!(RegressionLoss::new_epsilon_band(0.0).is_err());
        assert!(
            gibbs_risk_regression(&y[..2], &m, &RegressionLoss::EpsilonBand { epsilon: 0.2 })
                .is_err()
        );
    }

    #[test]
    fn classification_gibbs_error() {
        assert!((gibbs_error_point(1.0, 0.0, 1.0, 0.0, None) - 0.5).abs() < 1e-15);
        let e = gibbs_error_point(1.0, 1.0, 3.0, 0.0, Some(1.0));
        assert!((e - normal_cdf(-0.5)).abs() < 1e-15);
        assert_eq!(gibbs_error_point(-1.0, 2.0, 0.0, 0.0, None), 1.0);
        let m = Marginals {
            mean: vec![1.0, -1.0, 0.5],
            var: vec![0.1, 0.1, 0.1],
        };
        let y = [1.0, 1.0, -1.0];
        let b = bayes_error_classification(&y, &m, 0.0).unwrap();
        let g = gibbs_error_classification(&y, &m, 0.0, None).unwrap();
        assert!((b - 2.0 / 3.0).abs() < 1e-15 && b <= 2.0 * g);
    }
}
