//! Likelihoods `p(y | f)` for binary GP classification (labels y ∈ {−1, +1}), all in log
//! space with good tails:
//! - Laplace needs `ln p(y|f)` and its first three f-derivatives ([`LogLikDerivs`]);
//! - EP needs the tilted moments of `N(f; μ, v)·p(y|f)` ([`TiltedMoments`]);
//! - naive mean field (seed 001) uses the tilted moments of the flip-noise step likelihood.
//!
//! Input noise (seed 001 eqs. 17.12, 17.15–17.16) is not a likelihood of its own here: a
//! Gaussian input noise of variance v turns the step `Θ(yf)` into the probit `Φ(yf/√v)` on
//! the noise-free process, which is the same model as the step likelihood on the noisy
//! process `f + ξ` with covariance `K + vI` on the training points. Mean field takes the
//! second form (`MeanFieldConfig::input_noise`); [`Likelihood::tilted_moments`] of
//! [`Likelihood::heaviside`] at variance `var + v` equals that of `Likelihood::probit_with(1/√v, 0)`
//! at `var` (tested).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::special::{
    inv_mills_ratio, ln_normal_cdf, ln_normal_pdf, log1p_exp, normal_cdf, normal_cdf_curvature,
    sigmoid,
};

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
    /// Output (label-flip) noise `κ + (1 − 2κ)Θ(y f)` (seed 001 eq. 17.17); κ = 0 is the
    /// noise-free step `Θ(y f)` of eq. 17.1. A step function: tilted moments only, no
    /// derivatives (not for Laplace). The certified hypothesis is `sgn f`; κ lives only in
    /// the likelihood.
    FlipNoise {
        /// Flip probability κ ∈ [0, ½).
        kappa: f64,
    },
}

impl Likelihood {
    /// The likelihood a fit spec names by its link (standard probit or logistic).
    pub fn named(link: crate::vocabulary::LikelihoodName) -> Self {
        match link {
            crate::vocabulary::LikelihoodName::Probit => Likelihood::probit(),
            crate::vocabulary::LikelihoodName::Logistic => Likelihood::Logistic,
        }
    }

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

    /// Flip-noise likelihood `κ + (1 − 2κ)Θ(y f)` (seed 001 eq. 17.17), validated: κ ∈ [0, ½).
    pub fn flip_noise(kappa: f64) -> Result<Self> {
        if !((0.0..0.5).contains(&kappa)) {
            return Err(Error::InvalidParameter {
                name: "flip probability kappa",
                value: kappa,
                reason: "must lie in [0, 0.5)",
            });
        }
        Ok(Likelihood::FlipNoise { kappa })
    }

    /// Re-check the constructors' constraints (for values read from a file).
    pub fn validate(&self) -> Result<()> {
        match *self {
            Likelihood::Probit { lambda, bias } => Self::probit_with(lambda, bias).map(|_| ()),
            Likelihood::FlipNoise { kappa } => Self::flip_noise(kappa).map(|_| ()),
            Likelihood::Gaussian { variance } if !(variance > 0.0 && variance.is_finite()) => {
                Err(Error::InvalidParameter {
                    name: "Gaussian likelihood variance",
                    value: variance,
                    reason: "must be positive and finite",
                })
            }
            _ => Ok(()),
        }
    }

    /// The noise-free step likelihood `Θ(y f)` (seed 001 eq. 17.1): flip noise with κ = 0.
    pub fn heaviside() -> Self {
        Likelihood::FlipNoise { kappa: 0.0 }
    }

    /// `Ok` if [`Likelihood::ln_p_derivs`] is defined (smooth likelihoods); a typed
    /// [`Error::Unsupported`] naming `method` for the step likelihood.
    pub fn require_derivatives(&self, method: &str) -> Result<()> {
        match self {
            Likelihood::FlipNoise { .. } => Err(Error::Unsupported(format!(
                "{method} needs the derivatives of ln p(y|f), which the step (flip-noise) \
                 likelihood does not have: use EP or mean field"
            ))),
            _ => Ok(()),
        }
    }

    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            Likelihood::Probit { .. } => "probit",
            Likelihood::Logistic => "logistic",
            Likelihood::Gaussian { .. } => "gaussian",
            Likelihood::FlipNoise { .. } => "flip_noise",
        }
    }

    /// `ln p(y|f)` and three f-derivatives (GPML Table 3.1 / eq. 3.15–3.16, plus d3).
    ///
    /// For the step likelihood the derivatives are 0 wherever they exist (`y f ≠ 0`); no method
    /// may rely on them ([`Likelihood::require_derivatives`] rejects it), the arm only gives
    /// `ln p` (with `Θ(0) = ½`).
    pub fn ln_p_derivs(&self, y: f64, f: f64) -> LogLikDerivs {
        match *self {
            Likelihood::Probit { lambda, bias } => {
                // z = λ y (f + b); r = φ(z)/Φ(z); d/dz ln Φ = r, r' = −r(z + r), r'' = −r'(z + r) − r(1 + r').
                let z = lambda * y * (f + bias);
                let r = inv_mills_ratio(z);
                let r1 = -normal_cdf_curvature(z);
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
            Likelihood::FlipNoise { kappa } => {
                // seed 001 eq. 17.17
                let step = match (y * f).partial_cmp(&0.0) {
                    Some(std::cmp::Ordering::Greater) => 1.0,
                    Some(std::cmp::Ordering::Less) => 0.0,
                    _ => 0.5,
                };
                LogLikDerivs {
                    ln_p: (kappa + (1.0 - 2.0 * kappa) * step).ln(),
                    d1: 0.0,
                    d2: 0.0,
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
                // ∂²/∂μ² = −r(z + r)/s², the curvature taken in its stable form (far tail).
                Ok(TiltedMoments {
                    ln_z: ln_normal_cdf(z),
                    d1: y * inv_mills_ratio(z) / s,
                    d2: -normal_cdf_curvature(z) / (s * s),
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
            Likelihood::FlipNoise { kappa } => flip_noise_tilted(kappa, y, mu, var),
        }
    }

    /// Predictive class probability `p(y = +1 | x)` for a latent marginal `N(μ, v)`:
    /// exact for the probit; MacKay's probit approximation `σ(μ/√(1 + πv/8))` for the logistic.
    /// Φ is `normal_cdf` itself (libm's erfc), not `exp(ln Φ)`: a probability needs no log
    /// space, and glibc's exp and log ran these loops slower on two threads than on one on
    /// the performance page's machine F.
    pub fn predictive_positive(&self, mu: f64, var: f64) -> f64 {
        match *self {
            Likelihood::Probit { lambda, bias } => {
                normal_cdf((mu + bias) / (1.0 / (lambda * lambda) + var).sqrt())
            }
            Likelihood::Logistic => sigmoid(mu / (1.0 + std::f64::consts::PI * var / 8.0).sqrt()),
            Likelihood::Gaussian { variance } => normal_cdf(mu / (variance + var).sqrt()),
            Likelihood::FlipNoise { kappa } => {
                // ∫ N(f; μ, v) [κ + (1−2κ)Θ(f)] df; a point mass (v = 0) gives the step itself.
                let phi = if var > 0.0 {
                    normal_cdf(mu / var.sqrt())
                } else if mu > 0.0 {
                    1.0
                } else if mu < 0.0 {
                    0.0
                } else {
                    0.5
                };
                kappa + (1.0 - 2.0 * kappa) * phi
            }
        }
    }

    /// Bias b and probit slope λ that enter the Gibbs error (docs/math.md §7.1); none for logistic.
    /// Flip noise: (0, None), the Gibbs classifier certified is `sgn f`; κ lives only in the
    /// likelihood (it is label noise of the data model, not part of the hypothesis).
    pub fn bias_and_slope(&self) -> (f64, Option<f64>) {
        match *self {
            Likelihood::Probit { lambda, bias } => (bias, Some(lambda)),
            Likelihood::Logistic | Likelihood::Gaussian { .. } | Likelihood::FlipNoise { .. } => {
                (0.0, None)
            }
        }
    }
}

/// Tilted moments of `N(f; μ, v)·[κ + (1 − 2κ)Θ(y f)]` in log space (seed 001 eqs. 17.17,
/// 17.39): `Z = κ + (1 − 2κ)Φ(z)`, `z = yμ/√v`; with `r = (1 − 2κ)φ(z)/Z`,
/// `∂ln Z/∂μ = y r/√v` and `∂²ln Z/∂μ² = −r(z + r)/v`.
fn flip_noise_tilted(kappa: f64, y: f64, mu: f64, var: f64) -> Result<TiltedMoments> {
    if !(var > 0.0 && var.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "tilted-moment variance",
            value: var,
            reason: "the step likelihood needs a positive finite Gaussian variance",
        });
    }
    let s = var.sqrt();
    let z = y * mu / s;
    let ln_phi = ln_normal_cdf(z);
    let (ln_z, r) = if kappa == 0.0 {
        (ln_phi, inv_mills_ratio(z))
    } else {
        // ln(κ + (1−2κ)Φ(z)) as a log-sum-exp of ln κ and ln(1−2κ) + ln Φ(z).
        let (a, b) = (kappa.ln(), (1.0 - 2.0 * kappa).ln() + ln_phi);
        let (hi, lo) = if a > b { (a, b) } else { (b, a) };
        let ln_z = hi + (lo - hi).exp().ln_1p();
        (
            ln_z,
            ((1.0 - 2.0 * kappa).ln() + ln_normal_pdf(z) - ln_z).exp(),
        )
    };
    // κ = 0 is the probit's limit: its curvature in the stable form (r ≈ −z in the far tail).
    let curvature = if kappa == 0.0 {
        normal_cdf_curvature(z)
    } else {
        r * (z + r)
    };
    Ok(TiltedMoments {
        ln_z,
        d1: y * r / s,
        d2: -curvature / var,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradcheck::{assert_gradients_close, central_difference, Tolerance};

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
                    let at = |g: f64| lik.ln_p_derivs(y, g);
                    let tol = Tolerance::mixed(1e-6);
                    let what = format!("{lik:?} at y = {y}, f = {f}: (d1, d2, d3)");
                    let numeric = [
                        central_difference(|g| at(g).ln_p, f, h),
                        central_difference(|g| at(g).d1, f, h),
                        central_difference(|g| at(g).d2, f, h),
                    ];
                    assert_gradients_close(&[d.d1, d.d2, d.d3], &numeric, tol, &what);
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
            let at = |m: f64| lik.tilted_moments(y, m, v).unwrap();
            let numeric = [
                central_difference(|m| at(m).ln_z, mu, h),
                central_difference(|m| at(m).d1, mu, h),
            ];
            let what = format!("probit tilted (d1, d2) at ({y}, {mu}, {v})");
            assert_gradients_close(&[t.d1, t.d2], &numeric, Tolerance::absolute(1e-6), &what);
        }
        // Far tail: finite and close to the asymptote ln Φ(z) ≈ −z²/2.
        let t = Likelihood::probit()
            .tilted_moments(1.0, -60.0, 1.0)
            .unwrap();
        assert!(t.ln_z.is_finite() && t.ln_z < -800.0 && t.d1.is_finite());
        assert!(Likelihood::Logistic.tilted_moments(1.0, 0.0, 1.0).is_err());
        assert!(Likelihood::probit_with(0.0, 0.0).is_err());
    }

    /// Midpoint quadrature of `∫ N(f; μ, v) p(y|f) df` split at f = 0 (where the step jumps),
    /// so the rule sees a smooth integrand on each piece.
    fn quadrature_z(lik: &Likelihood, y: f64, mu: f64, v: f64) -> f64 {
        let s = v.sqrt();
        let (lo, hi) = (mu - 14.0 * s, mu + 14.0 * s);
        let piece = |a: f64, b: f64| -> f64 {
            if b <= a {
                return 0.0;
            }
            let n = 200_000;
            let dx = (b - a) / n as f64;
            (0..n)
                .map(|i| {
                    let f = a + (i as f64 + 0.5) * dx;
                    crate::special::normal_pdf((f - mu) / s) / s
                        * lik.ln_p_derivs(y, f).ln_p.exp()
                        * dx
                })
                .sum()
        };
        piece(lo, hi.min(0.0)) + piece(lo.max(0.0), hi)
    }

    #[test]
    fn flip_noise_tilted_moments_match_quadrature_and_derivatives() {
        for kappa in [0.0, 0.02, 0.2] {
            let lik = Likelihood::flip_noise(kappa).unwrap();
            for &(y, mu, v) in &[
                (1.0, 0.3, 0.8),
                (-1.0, 1.5, 2.0),
                (1.0, -4.0, 0.5),
                (-1.0, -0.7, 1.3),
            ] {
                let t = lik.tilted_moments(y, mu, v).unwrap();
                // Midpoint rule, error O(dx²) per smooth piece: 1e-9 relative is ample.
                let z = quadrature_z(&lik, y, mu, v);
                assert!(
                    (t.ln_z - z.ln()).abs() < 1e-8,
                    "ln Z κ={kappa} {y} {mu} {v}"
                );
                // Central differences, h = 1e-5: truncation ~h²·|d³| ≈ 1e-10, round-off ~1e-11.
                let h = 1e-5;
                let at = |m: f64| lik.tilted_moments(y, m, v).unwrap();
                let numeric = [
                    central_difference(|m| at(m).ln_z, mu, h),
                    central_difference(|m| at(m).d1, mu, h),
                ];
                let what = format!("flip noise κ={kappa} (d1, d2) at ({y}, {mu}, {v})");
                assert_gradients_close(&[t.d1, t.d2], &numeric, Tolerance::mixed(1e-6), &what);
                // The tilted variance v + v²·d2 is a variance.
                assert!(v + v * v * t.d2 > 0.0);
            }
        }
    }

    #[test]
    fn flip_noise_tails_are_finite() {
        // κ = 0: ln Z = ln Φ(−40) exactly (the reference value of special.rs).
        let t = Likelihood::heaviside()
            .tilted_moments(1.0, -40.0, 1.0)
            .unwrap();
        assert!((t.ln_z - (-804.608_442_013_753_8)).abs() < 1e-9);
        assert!(t.d1.is_finite() && t.d1 > 39.0 && t.d2.is_finite());
        // κ > 0: the floor κ takes over, the gradient vanishes instead of blowing up.
        let t = Likelihood::flip_noise(0.1)
            .unwrap()
            .tilted_moments(-1.0, 60.0, 1.0)
            .unwrap();
        assert!((t.ln_z - 0.1f64.ln()).abs() < 1e-12 && t.d1.abs() < 1e-300);
        let t = Likelihood::flip_noise(0.1)
            .unwrap()
            .tilted_moments(1.0, 60.0, 1.0)
            .unwrap();
        assert!((t.ln_z - 0.9f64.ln()).abs() < 1e-15 && t.d1 == 0.0); // Z → 1 − κ
    }

    #[test]
    fn heaviside_on_the_noisy_process_is_the_probit() {
        // seed 001 eqs. 17.15–17.16: Θ(y(f + ξ)), ξ ~ N(0, v), equals Φ(y f/√v).
        let v: f64 = 1.3;
        let probit = Likelihood::probit_with(1.0 / v.sqrt(), 0.0).unwrap();
        for &(y, mu, var) in &[(1.0, 0.4, 0.7), (-1.0, 2.0, 0.1), (1.0, -9.0, 3.0)] {
            let a = Likelihood::heaviside()
                .tilted_moments(y, mu, var + v)
                .unwrap();
            let b = probit.tilted_moments(y, mu, var).unwrap();
            assert!((a.ln_z - b.ln_z).abs() < 1e-13 * (1.0 + b.ln_z.abs()));
            assert!((a.d1 - b.d1).abs() < 1e-13 * (1.0 + b.d1.abs()));
            assert!((a.d2 - b.d2).abs() < 1e-13 * (1.0 + b.d2.abs()));
        }
    }

    #[test]
    fn flip_noise_validation_and_conventions() {
        for bad in [-0.1, 0.5, 0.7, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                Likelihood::flip_noise(bad),
                Err(Error::InvalidParameter { .. })
            ));
        }
        let lik = Likelihood::flip_noise(0.1).unwrap();
        assert!(matches!(
            lik.require_derivatives("Laplace"),
            Err(Error::Unsupported(_))
        ));
        assert!(Likelihood::probit().require_derivatives("Laplace").is_ok());
        assert!(lik.tilted_moments(1.0, 0.0, 0.0).is_err());
        assert_eq!(lik.bias_and_slope(), (0.0, None));
        assert!((lik.ln_p_derivs(1.0, 2.0).ln_p - 0.9f64.ln()).abs() < 1e-15);
        assert!((lik.ln_p_derivs(1.0, -2.0).ln_p - 0.1f64.ln()).abs() < 1e-15);
        // Predictive: κ + (1−2κ)Φ(μ/√v); the step itself for a point mass.
        let p = lik.predictive_positive(0.5, 0.25);
        let want = 0.1 + 0.8 * crate::special::normal_cdf(1.0);
        assert!((p - want).abs() < 1e-15);
        assert_eq!(lik.predictive_positive(-1.0, 0.0), 0.1);
        assert_eq!(Likelihood::heaviside().predictive_positive(0.0, 0.0), 0.5);
    }
}
