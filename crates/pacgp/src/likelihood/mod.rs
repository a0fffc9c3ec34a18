//! Likelihoods `p(y | f)` for binary GP classification (labels y ∈ {−1, +1}), all in log
//! space with good tails:
//! - Laplace needs `ln p(y|f)` and its first three f-derivatives ([`LogLikDerivs`]);
//! - EP needs the tilted moments of `N(f; μ, v)·p(y|f)` ([`TiltedMoments`]).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::special::{inv_mills_ratio, ln_normal_cdf, log1p_exp, sigmoid};

/// `ln p(y|f)` and its first three derivatives with respect to f.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogLikDerivs {
    /// `ln p(y|f)`.
    pub ln_p: f64,
    /// `∂ ln p / ∂f`.
    pub d1: f64,
    /// `∂² ln p / ∂f²` (≤ 0: both likelihoods are log-concave).
    pub d2: f64,
    /// `∂³ ln p / ∂f³`.
    pub d3: f64,
}

/// Tilted moments of `Z = ∫ N(f; μ, v) p(y|f) df`: `ln Z` and its μ-derivatives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TiltedMoments {
    /// `ln Z`.
    pub ln_z: f64,
    /// `∂ ln Z / ∂μ`.
    pub d1: f64,
    /// `∂² ln Z / ∂μ²`.
    pub d2: f64,
}

/// A binary-classification likelihood.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "likelihood", rename_all = "snake_case")]
pub enum Likelihood {
    /// `Φ(λ y (f + b))` (seed 003's probit with slope λ and bias b).
    Probit {
        /// Slope λ > 0.
        lambda: f64,
        /// Bias b.
        bias: f64,
    },
    /// `σ(y f)`.
    Logistic,
    /// `N(y; f, σ²)` for real y: the method-equivalence tests (every approximate method must
    /// reproduce exact GP regression with it).
    Gaussian {
        /// Noise variance σ².
        variance: f64,
    },
}

impl Likelihood {
    /// The standard probit `Φ(y f)`.
    pub fn probit() -> Self {
        Likelihood::Probit {
            lambda: 1.0,
            bias: 0.0,
        }
    }

    /// Probit with slope and bias, validated.
    pub fn probit_with(lambda: f64, bias: f64) -> Result<Self> {
        if !(lambda > 0.0 && lambda.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "probit slope lambda",
                value: lambda,
                reason: "must be positive and finite",
            });
        }
        if !bias.is_finite() {
            return Err(Error::InvalidParameter {
                name: "probit bias",
                value: bias,
                reason: "must be finite",
            });
        }
        Ok(Likelihood::Probit { lambda, bias })
    }

    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            Likelihood::Probit { .. } => "probit",
            Likelihood::Logistic => "logistic",
            Likelihood::Gaussian { .. } => "gaussian",
        }
    }

    /// `ln p(y|f)` and three f-derivatives (GPML Table 3.1 / eq. 3.15–3.16, plus d3).
    pub fn ln_p_derivs(&self, y: f64, f: f64) -> LogLikDerivs {
        match *self {
            Likelihood::Probit { lambda, bias } => {
                // z = λ y (f + b); r = φ(z)/Φ(z); d/dz ln Φ = r, r' = −r(z + r), r'' = −r'(z + r) − r(1 + r').
                let z = lambda * y * (f + bias);
                let r = inv_mills_ratio(z);
                let r1 = -r * (z + r);
                let r2 = -r1 * (z + r) - r * (1.0 + r1);
                let s = lambda * y;
                LogLikDerivs {
                    ln_p: ln_normal_cdf(z),
                    d1: s * r,
                    d2: s * s * r1,
                    d3: s * s * s * r2,
                }
            }
            Likelihood::Logistic => {
                // ln σ(yf); d1 = y σ(−yf); d2 = −π(1−π) with π = σ(f); d3 = −π(1−π)(1−2π).
                let p = sigmoid(f);
                LogLikDerivs {
                    ln_p: -log1p_exp(-y * f),
                    d1: y * sigmoid(-y * f),
                    d2: -p * (1.0 - p),
                    d3: -p * (1.0 - p) * (1.0 - 2.0 * p),
                }
            }
            Likelihood::Gaussian { variance } => {
                let r = y - f;
                LogLikDerivs {
                    ln_p: -0.5 * (r * r / variance + (2.0 * std::f64::consts::PI * variance).ln()),
                    d1: r / variance,
                    d2: -1.0 / variance,
                    d3: 0.0,
                }
            }
        }
    }

    /// Tilted moments of `N(f; μ, v)·p(y|f)` (GPML eqs. 3.58, 3.82 for the probit). The
    /// logistic likelihood has none in closed form and is not offered for EP.
    pub fn tilted_moments(&self, y: f64, mu: f64, var: f64) -> Result<TiltedMoments> {
        match *self {
            Likelihood::Probit { lambda, bias } => {
                // ∫ N(f; μ, v) Φ(λy(f + b)) df = Φ(z), z = y(μ + b)/√(λ⁻² + v).
                let s = (1.0 / (lambda * lambda) + var).sqrt();
                let z = y * (mu + bias) / s;
                let r = inv_mills_ratio(z);
                Ok(TiltedMoments {
                    ln_z: ln_normal_cdf(z),
                    d1: y * r / s,
                    d2: -r * (z + r) / (s * s),
                })
            }
            Likelihood::Logistic => Err(Error::Unsupported(
                "EP needs closed-form tilted moments: use the probit likelihood".into(),
            )),
            Likelihood::Gaussian { variance } => {
                let s2 = variance + var;
                let r = y - mu;
                Ok(TiltedMoments {
                    ln_z: -0.5 * (r * r / s2 + (2.0 * std::f64::consts::PI * s2).ln()),
                    d1: r / s2,
                    d2: -1.0 / s2,
                })
            }
        }
    }

    /// Predictive class probability `p(y = +1 | x)` for a latent marginal `N(μ, v)`:
    /// exact for the probit; MacKay's probit approximation `σ(μ/√(1 + πv/8))` for the logistic.
    pub fn predictive_positive(&self, mu: f64, var: f64) -> f64 {
        match *self {
            Likelihood::Probit { lambda, bias } => {
                ln_normal_cdf((mu + bias) / (1.0 / (lambda * lambda) + var).sqrt()).exp()
            }
            Likelihood::Logistic => sigmoid(mu / (1.0 + std::f64::consts::PI * var / 8.0).sqrt()),
            Likelihood::Gaussian { variance } => ln_normal_cdf(mu / (variance + var).sqrt()).exp(),
        }
    }

    /// Bias b and probit slope λ that enter the Gibbs error (spec §7.1); none for logistic.
    pub fn bias_and_slope(&self) -> (f64, Option<f64>) {
        match *self {
            Likelihood::Probit { lambda, bias } => (bias, Some(lambda)),
            Likelihood::Logistic | Likelihood::Gaussian { .. } => (0.0, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_match_finite_differences() {
        let h = 1e-5;
        for lik in [
            Likelihood::probit(),
            Likelihood::probit_with(1.7, -0.3).unwrap(),
            Likelihood::Logistic,
        ] {
            for &y in &[1.0, -1.0] {
                for &f in &[-6.0, -1.3, 0.0, 0.4, 2.5, 9.0] {
                    let d = lik.ln_p_derivs(y, f);
                    let (a, b) = (lik.ln_p_derivs(y, f + h), lik.ln_p_derivs(y, f - h));
                    let tol = |x: f64| 1e-6 * (1.0 + x.abs());
                    assert!(
                        ((a.ln_p - b.ln_p) / (2.0 * h) - d.d1).abs() < tol(d.d1),
                        "{lik:?} d1 at {f}"
                    );
                    assert!(
                        ((a.d1 - b.d1) / (2.0 * h) - d.d2).abs() < tol(d.d2),
                        "{lik:?} d2 at {f}"
                    );
                    assert!(
                        ((a.d2 - b.d2) / (2.0 * h) - d.d3).abs() < tol(d.d3),
                        "{lik:?} d3 at {f}"
                    );
                }
            }
        }
    }

    #[test]
    fn probit_tilted_moments_match_quadrature_and_derivatives() {
        let lik = Likelihood::probit_with(1.3, 0.2).unwrap();
        for &(y, mu, v) in &[(1.0, 0.3, 0.8), (-1.0, 1.5, 2.0), (1.0, -4.0, 0.5)] {
            let t = lik.tilted_moments(y, mu, v).unwrap();
            // Midpoint quadrature of ∫ N(f; μ, v) Φ(λy(f+b)) df.
            let (n, s) = (200_000, f64::sqrt(v));
            let (lo, hi) = (mu - 12.0 * s, mu + 12.0 * s);
            let dx = (hi - lo) / n as f64;
            let z: f64 = (0..n)
                .map(|i| {
                    let f = lo + (i as f64 + 0.5) * dx;
                    crate::special::normal_pdf((f - mu) / s) / s
                        * lik.ln_p_derivs(y, f).ln_p.exp()
                        * dx
                })
                .sum();
            assert!((t.ln_z - z.ln()).abs() < 1e-7, "ln Z");
            let h = 1e-5;
            let (a, b) = (
                lik.tilted_moments(y, mu + h, v).unwrap(),
                lik.tilted_moments(y, mu - h, v).unwrap(),
            );
            assert!(((a.ln_z - b.ln_z) / (2.0 * h) - t.d1).abs() < 1e-6);
            assert!(((a.d1 - b.d1) / (2.0 * h) - t.d2).abs() < 1e-6);
        }
        // Far tail: finite and close to the asymptote ln Φ(z) ≈ −z²/2.
        let t = Likelihood::probit()
            .tilted_moments(1.0, -60.0, 1.0)
            .unwrap();
        assert!(t.ln_z.is_finite() && t.ln_z < -800.0 && t.d1.is_finite());
        assert!(Likelihood::Logistic.tilted_moments(1.0, 0.0, 1.0).is_err());
        assert!(Likelihood::probit_with(0.0, 0.0).is_err());
    }
}
