//! The per-point terms of the sparse variational classifier's objectives, as functions of the
//! latent marginal `N(μ, σ²)` at a point with label `y = ±1`, with their derivatives in μ and σ².

use std::sync::OnceLock;

use crate::certificate::GibbsClassifier;
use crate::loss::gibbs_error_point;
use crate::special::{inv_mills_ratio, ln_normal_cdf, normal_cdf_curvature, normal_pdf};

/// Gauss–Hermite nodes of the expected log-likelihood (GPflow's default is 20 as well).
pub const ELL_NODES: usize = 20;

/// Below this variance the expected log-likelihood's σ²-derivative is taken as `½ ∂²/∂μ²`
/// (its limit), where the quadrature's own derivative `Σ w_k ∂ℓ(f_k)·z_k/(2σ)` cancels.
const TINY_VARIANCE: f64 = 1e-12;

/// A term's value and its partials in μ and σ².
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointTerm {
    /// The value.
    pub value: f64,
    /// `∂/∂μ`.
    pub d_mean: f64,
    /// `∂/∂σ²`.
    pub d_var: f64,
}

/// The probabilists' Gauss–Hermite rule of [`ELL_NODES`] nodes: `(z_k, w_k)`, Σ w_k = 1.
fn rule() -> &'static (Vec<f64>, Vec<f64>) {
    static RULE: OnceLock<(Vec<f64>, Vec<f64>)> = OnceLock::new();
    RULE.get_or_init(|| {
        let (z, ln_w) = crate::multiclass::quadrature::hermite_rule(ELL_NODES);
        (z, ln_w.iter().map(|l| l.exp()).collect())
    })
}

/// The link of the Bernoulli likelihood `p(y | f)`: `Φ(y f)` or `σ(y f)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Link {
    /// `Φ(y f)`.
    #[default]
    Probit,
    /// `σ(y f) = 1/(1 + e^{−y f})`.
    Logit,
}

impl Link {
    /// `ln p(y | f)` at `t = y f`, its derivative in t and its second derivative.
    fn ln_lik(self, t: f64) -> (f64, f64, f64) {
        match self {
            Link::Probit => (
                ln_normal_cdf(t),
                inv_mills_ratio(t),
                -normal_cdf_curvature(t),
            ),
            Link::Logit => {
                // ln σ(t) = −softplus(−t), stably; its derivative σ(−t), then −σ(t)σ(−t).
                let ln_sigma = -((-t).max(0.0) + (-t.abs()).exp().ln_1p());
                let s_neg = 1.0 / (1.0 + t.exp());
                (ln_sigma, s_neg, -s_neg * (1.0 - s_neg))
            }
        }
    }
}

/// `E_{f ~ N(μ, σ²)}[ln p(y | f)]` by Gauss–Hermite (eq. 12.3) with the derivatives of the
/// quadrature itself, so that value and gradient agree to rounding:
/// `∂/∂μ = Σ w_k y ℓ'(y f_k)`, `∂/∂σ² = Σ w_k y ℓ'(y f_k) z_k/(2σ)` (ℓ' the inverse Mills ratio
/// for the probit link, `σ(−y f)` for the logit).
pub fn expected_ln_lik(link: Link, y: f64, mean: f64, var: f64) -> PointTerm {
    let (z, w) = rule();
    let sd = var.max(0.0).sqrt();
    let (mut value, mut d_mean, mut d_sd) = (0.0, 0.0, 0.0);
    let mut curvature = 0.0;
    for (zk, wk) in z.iter().zip(w) {
        let t = y * (mean + sd * zk);
        let (l, d1, d2) = link.ln_lik(t);
        value += wk * l;
        d_mean += wk * y * d1;
        d_sd += wk * y * d1 * zk;
        curvature += wk * d2;
    }
    let d_var = if var > TINY_VARIANCE {
        d_sd / (2.0 * sd)
    } else {
        0.5 * curvature
    };
    PointTerm {
        value,
        d_mean,
        d_var,
    }
}

/// `E_{f ~ N(μ, σ²)}[ln Φ(y f)]`: [`expected_ln_lik`] with the probit link.
pub fn expected_ln_probit(y: f64, mean: f64, var: f64) -> PointTerm {
    expected_ln_lik(Link::Probit, y, mean, var)
}

/// The Gibbs classifier's 0-1 risk at a point, `Φ(−y(μ + b)/s)` with `s² = σ² + λ⁻²` (eq. 12.4;
/// the value is [`gibbs_error_point`]'s, bit for bit), and its derivatives
/// `∂/∂μ = −y φ(t)/s`, `∂/∂σ² = φ(t)·t/(2s²)` at `t = y(μ + b)/s` (0 where s = 0).
pub fn gibbs_risk(classifier: &GibbsClassifier, y: f64, mean: f64, var: f64) -> PointTerm {
    let value = gibbs_error_point(y, mean, var, classifier.bias, classifier.noise_slope);
    let noise = classifier.noise_slope.map_or(0.0, |l| 1.0 / (l * l));
    let s2 = noise + var;
    if !(s2 > 0.0) {
        return PointTerm {
            value,
            d_mean: 0.0,
            d_var: 0.0,
        };
    }
    let s = s2.sqrt();
    let t = y * (mean + classifier.bias) / s;
    let phi = normal_pdf(t);
    PointTerm {
        value,
        d_mean: -y * phi / s,
        d_var: phi * t / (2.0 * s2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::normal_cdf;

    /// Central differences of both terms in μ and σ² (h = 1e-6: truncation ≈ 1e-12, rounding
    /// ≈ 1e-10), and the expected log-likelihood at σ² = 0 is ln Φ(yμ) with ½ ∂²/∂μ² as slope.
    #[test]
    fn terms_match_central_differences() {
        let probit = GibbsClassifier {
            bias: 0.0,
            noise_slope: None,
        };
        let noisy = GibbsClassifier {
            bias: 0.3,
            noise_slope: Some(1.0),
        };
        let h = 1e-6;
        for &(y, mu, v) in &[
            (1.0, 0.3, 0.5),
            (-1.0, 2.0, 0.01),
            (1.0, -4.0, 3.0),
            (-1.0, -0.2, 1e-3),
        ] {
            let terms: [&dyn Fn(f64, f64) -> PointTerm; 4] = [
                &|m, v| expected_ln_probit(y, m, v),
                &|m, v| expected_ln_lik(Link::Logit, y, m, v),
                &|m, v| gibbs_risk(&probit, y, m, v),
                &|m, v| gibbs_risk(&noisy, y, m, v),
            ];
            for f in terms {
                let p = f(mu, v);
                let dm = (f(mu + h, v).value - f(mu - h, v).value) / (2.0 * h);
                let dv = (f(mu, v + h).value - f(mu, v - h).value) / (2.0 * h);
                assert!(
                    (p.d_mean - dm).abs() < 1e-7,
                    "{y} {mu} {v}: {} {dm}",
                    p.d_mean
                );
                assert!(
                    (p.d_var - dv).abs() < 1e-7,
                    "{y} {mu} {v}: {} {dv}",
                    p.d_var
                );
            }
        }
        let at_zero = expected_ln_probit(1.0, 0.4, 0.0);
        assert!((at_zero.value - normal_cdf(0.4).ln()).abs() < 1e-14);
        let r = inv_mills_ratio(0.4);
        assert!((at_zero.d_var - 0.5 * (-r * (0.4 + r))).abs() < 1e-14);
        // The logit link at σ² = 0: ln σ(yμ), slope ½ ∂²/∂μ² = −½σ(μ)σ(−μ); far in the tails
        // ln σ stays finite and exact (−t for t ≪ 0, −e^{−t} for t ≫ 0).
        let sigma = |t: f64| 1.0 / (1.0 + (-t).exp());
        let at_zero = expected_ln_lik(Link::Logit, -1.0, 0.4, 0.0);
        assert!((at_zero.value - sigma(-0.4).ln()).abs() < 1e-15);
        assert!((at_zero.d_var + 0.5 * sigma(0.4) * sigma(-0.4)).abs() < 1e-15);
        assert_eq!(expected_ln_lik(Link::Logit, 1.0, -800.0, 0.0).value, -800.0);
        let far = expected_ln_lik(Link::Logit, 1.0, 40.0, 0.0).value;
        assert!((far + (-40.0f64).exp()).abs() < 1e-30);
    }

    /// The quadrature against an adaptive integral of `ln Φ(yf) N(f; μ, σ²)` (the 64-node
    /// rule, converged to 1e-12 here).
    #[test]
    fn expected_log_likelihood_matches_a_finer_rule() {
        let (z, ln_w) = crate::multiclass::quadrature::gauss_hermite();
        for &(y, mu, v) in &[(1.0f64, 0.5f64, 0.8f64), (-1.0, 1.5, 2.0), (1.0, -1.0, 0.1)] {
            let fine: f64 = z
                .iter()
                .zip(ln_w)
                .map(|(z, lw)| lw.exp() * ln_normal_cdf(y * (mu + v.sqrt() * z)))
                .sum();
            let ours = expected_ln_probit(y, mu, v).value;
            assert!((ours - fine).abs() < 1e-8, "{y} {mu} {v}: {ours} {fine}");
            let fine_logit: f64 = z
                .iter()
                .zip(ln_w)
                .map(|(z, lw)| -lw.exp() * (-y * (mu + v.sqrt() * z)).exp().ln_1p())
                .sum();
            let ours = expected_ln_lik(Link::Logit, y, mu, v).value;
            assert!(
                (ours - fine_logit).abs() < 1e-8,
                "logit {y} {mu} {v}: {ours} {fine_logit}"
            );
        }
    }
}
