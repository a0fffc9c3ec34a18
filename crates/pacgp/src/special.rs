//! Special functions with good tails: `ln Φ`, the inverse Mills ratio, softplus, and the
//! binary KL divergence with its upper inverse (docs/math.md §1).

use std::f64::consts::{FRAC_1_SQRT_2, PI};

pub(crate) const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Standard normal density φ(x).
pub fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x - LN_SQRT_2PI).exp()
}

/// ln φ(x).
pub fn ln_normal_pdf(x: f64) -> f64 {
    -0.5 * x * x - LN_SQRT_2PI
}

/// Standard normal CDF Φ(x) = ½ erfc(−x/√2) (relative accuracy kept in the lower tail).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x * FRAC_1_SQRT_2)
}

/// Mills ratio `Φ(−t)/φ(t)` for `t ≥ 8` by its continued fraction
/// `1/(t + 1/(t + 2/(t + 3/(t + …))))`, evaluated backwards (converged to machine precision).
fn mills_ratio_large(t: f64) -> f64 {
    1.0 / (t + mills_tail(t))
}

/// The continued fraction's tail `c(t) = 1/(t + 2/(t + 3/(t + …)))` for `t ≥ 8`, so that the
/// Mills ratio is `1/(t + c)`: split off, it gives `φ(−t)/Φ(−t) − t = c` without cancellation.
fn mills_tail(t: f64) -> f64 {
    let mut f = t;
    for k in (2..=80).rev() {
        f = t + k as f64 / f;
    }
    1.0 / f
}

/// ln Φ(x), accurate in both tails: ln Φ(−40) = −804.6084420137538, not −∞.
pub fn ln_normal_cdf(x: f64) -> f64 {
    if x < -8.0 {
        ln_normal_pdf(x) + mills_ratio_large(-x).ln()
    } else if x > 2.0 {
        // Φ(x) = 1 − Φ(−x) with Φ(−x) < 0.023: log1p keeps the digits (ln of Φ(x) itself
        // loses ε/Φ(−x) relative, 8e-10 at x = 5).
        (-normal_cdf(-x)).ln_1p()
    } else {
        normal_cdf(x).ln()
    }
}

/// Inverse Mills ratio `φ(x)/Φ(x)`, stable as x → −∞ (where it behaves like −x).
pub fn inv_mills_ratio(x: f64) -> f64 {
    if x < -8.0 {
        1.0 / mills_ratio_large(-x)
    } else {
        (ln_normal_pdf(x) - ln_normal_cdf(x)).exp()
    }
}

/// The probit's curvature `−(ln Φ)''(x) = r(x + r)`, `r = φ(x)/Φ(x)`, in (0, 1). For x < −8
/// the factor x + r cancels (r ≈ −x): there, with t = −x, `r = t + c` and `x + r = c`, c the
/// Mills ratio's continued-fraction tail, so `r(x + r) = (t + c)c` keeps every digit
/// (→ 1 − 1/x² as x → −∞, where `r * (x + r)` in f64 gives 0 or a wrong sign).
pub fn normal_cdf_curvature(x: f64) -> f64 {
    if x < -8.0 {
        let c = mills_tail(-x);
        (-x + c) * c
    } else {
        let r = inv_mills_ratio(x);
        r * (x + r)
    }
}

/// Softplus `ln(1 + eˣ)` without overflow or loss of digits.
pub fn log1p_exp(x: f64) -> f64 {
    if x > 35.0 {
        x + (-x).exp()
    } else if x < -35.0 {
        x.exp()
    } else {
        x.exp().ln_1p()
    }
}

/// Logistic sigmoid `1/(1 + e⁻ˣ)`.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// Binary KL divergence `kl(q‖p)` (docs/math.md §1.1), with `0 ln 0 = 0` and `+∞` when p ∈ {0,1} ≠ q.
pub fn binary_kl(q: f64, p: f64) -> f64 {
    let term = |a: f64, b: f64| -> f64 {
        if a <= 0.0 {
            0.0
        } else if b <= 0.0 {
            f64::INFINITY
        } else {
            a * (a / b).ln()
        }
    };
    // Second term as (1−q)(log1p(−q) − log1p(−p)) for precision at small q, p.
    let second = if q >= 1.0 {
        0.0
    } else if p >= 1.0 {
        f64::INFINITY
    } else {
        (1.0 - q) * ((-q).ln_1p() - (-p).ln_1p())
    };
    term(q, p) + second
}

/// Upper inverse `kl⁻¹(q, c) = max{p ∈ [q,1] : kl(q‖p) ≤ c}` (paper eq. 3, docs/math.md §1.2–1.3),
/// to about 1e-15 absolute: bracketed, safeguarded Newton on the convex `kl(q‖·) − c`.
///
/// The PAC-Bayes bound is `kl⁻¹(empirical risk, complexity)`:
///
/// ```
/// use pacgp::special::{binary_kl, kl_inverse};
///
/// let p = kl_inverse(0.1, 0.05);
/// assert!(p > 0.1 && p < 1.0);
/// assert!((binary_kl(0.1, p) - 0.05).abs() < 1e-12); // on the boundary of the kl ball
/// assert_eq!(kl_inverse(0.1, 0.0), 0.1); // no complexity: the empirical risk itself
/// assert_eq!(kl_inverse(0.0, 1.0), 1.0 - (-1.0f64).exp()); // zero risk: 1 − e^(−c)
/// ```
pub fn kl_inverse(q: f64, c: f64) -> f64 {
    let q = q.clamp(0.0, 1.0);
    if c.is_nan() {
        return f64::NAN;
    }
    if c <= 0.0 {
        return q;
    }
    if q >= 1.0 || c == f64::INFINITY {
        return 1.0;
    }
    if q <= 0.0 {
        return -(-c).exp_m1();
    }
    let mut lo = q;
    let mut hi = (q + (c / 2.0).sqrt())
        .min(q + c + (c * c + 2.0 * q * c).sqrt())
        .min(1.0);
    let top = 1.0 - f64::EPSILON / 2.0;
    if hi >= top {
        hi = top;
        if binary_kl(q, hi) <= c {
            return 1.0; // p* rounds to 1 in double precision
        }
    }
    let mut p = hi;
    for _ in 0..200 {
        let g = binary_kl(q, p) - c;
        if g > 0.0 {
            hi = p;
        } else {
            lo = p;
        }
        if hi - lo < 1e-15 || g.abs() < 1e-15 {
            break;
        }
        let dg = (p - q) / (p * (1.0 - p));
        let newton = p - g / dg;
        p = if dg > 1e-12 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
    }
    p
}

/// Lower inverse `kl⁻¹_low(q, c) = min{p ∈ [0, q] : kl(q‖p) ≤ c}` (the lower counterpart of
/// [`kl_inverse`]; Chernoff's lower confidence limit of a mean with `c = ln(1/δ)/n`), by
/// bisection on the decreasing `kl(q‖·)` over `[0, q]` to about 1e-15 absolute.
pub fn kl_inverse_lower(q: f64, c: f64) -> f64 {
    let q = q.clamp(0.0, 1.0);
    if c.is_nan() {
        return f64::NAN;
    }
    if c <= 0.0 {
        return q;
    }
    if q <= 0.0 {
        return 0.0;
    }
    // kl(q‖lo) > c ≥ kl(q‖hi) throughout (kl(q‖0) = ∞ for q > 0).
    let (mut lo, mut hi) = (0.0, q);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if binary_kl(q, mid) > c {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-15 {
            break;
        }
    }
    hi
}

/// Partial derivatives `(∂kl⁻¹/∂q, ∂kl⁻¹/∂c)` (paper eqs. 12–13), with q and p* clamped to
/// `[1e-8, 1 − 1e-8]` as in the reference code so the gradient stays finite at `R_S = 0`.
pub fn kl_inverse_grad(q: f64, c: f64) -> (f64, f64) {
    if q >= 1.0 {
        return (1.0, 0.0);
    }
    if c == f64::INFINITY {
        return (0.0, 1.0);
    }
    let p = kl_inverse(q, c).clamp(1e-8, 1.0 - 1e-8);
    let qc = q.clamp(1e-8, 1.0 - 1e-8);
    if p <= qc {
        return (1.0, f64::INFINITY);
    }
    let dc = p * (1.0 - p) / (p - qc);
    let dq = dc * (p * (1.0 - qc) / (qc * (1.0 - p))).ln();
    (dq, dc)
}

/// `√(2π)`, exposed for Gaussian normalisers.
pub fn sqrt_2pi() -> f64 {
    (2.0 * PI).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lower inverse: `1 − kl⁻¹(1 − q, c)` (kl is symmetric under q, p → 1 − q, 1 − p),
    /// `e^{−c}` at q = 1 (`kl(1‖p) = −ln p`), 0 at q = 0, and a brute-force scan of
    /// `kl(q‖·)` on a grid of step 1e-6 finds the same smallest p.
    #[test]
    fn kl_inverse_lower_matches_closed_forms_and_a_scan() {
        for &(q, c) in &[
            (0.04, 0.0336),
            (0.3, 0.1),
            (0.5, 2.0),
            (0.9, 0.01),
            (1e-3, 1e-4),
        ] {
            let low = kl_inverse_lower(q, c);
            assert!(
                (low - (1.0 - kl_inverse(1.0 - q, c))).abs() < 1e-12,
                "{q} {c}"
            );
            assert!((binary_kl(q, low) - c).abs() < 1e-9 || low == 0.0);
            let step = 1e-6;
            let scan = (0..=(q / step) as usize)
                .map(|i| i as f64 * step)
                .find(|&p| binary_kl(q, p) <= c)
                .unwrap();
            assert!(
                scan >= low - 1e-12 && scan - low < step + 1e-12,
                "{scan} vs {low}"
            );
        }
        assert!((kl_inverse_lower(1.0, 0.7) - (-0.7f64).exp()).abs() < 1e-14);
        assert_eq!(kl_inverse_lower(0.0, 0.3), 0.0);
        assert_eq!(kl_inverse_lower(0.2, 0.0), 0.2);
        // kl(q‖p) → ∞ as p → 0 for q > 0: the limit stays positive however large c.
        assert!(kl_inverse_lower(0.1, 20.0) > 0.0);
    }

    #[test]
    fn ln_normal_cdf_tails() {
        // References: mpmath (dps = 30): log(ncdf(x)) and npdf(x)/ncdf(x).
        assert!((ln_normal_cdf(-40.0) + 804.608_442_013_753_8).abs() < 1e-12 * 804.6);
        assert!((ln_normal_cdf(-10.0) + 53.231_285_150_512_47).abs() < 1e-12 * 53.2);
        // Continuity across the 8.0 switch.
        let (a, b) = (ln_normal_cdf(-8.0 - 1e-12), ln_normal_cdf(-8.0 + 1e-12));
        assert!((a - b).abs() < 1e-9);
        assert!((ln_normal_cdf(0.0) + std::f64::consts::LN_2).abs() < 1e-15);
        let up = ln_normal_cdf(10.0);
        // mpmath (dps = 40): log1p(-ncdf(-10)).
        assert!(
            (up + 7.619_853_024_160_527e-24).abs() < 1e-13 * 7.62e-24,
            "{up:e}"
        );
        assert!((inv_mills_ratio(-50.0) - 50.019_984_031_905_64).abs() < 1e-12);
    }

    #[test]
    fn kl_inverse_matches_spec_table_and_inverts() {
        let table = [
            (
                0.00,
                [0.001000, 0.009950, 0.048771, 0.095163, 0.393469, 0.632121],
            ),
            (
                0.01,
                [0.015123, 0.031126, 0.078098, 0.127856, 0.424761, 0.654369],
            ),
            (
                0.05,
                [0.060351, 0.086902, 0.149062, 0.206401, 0.502972, 0.711683],
            ),
            (
                0.10,
                [0.113948, 0.147676, 0.220079, 0.282379, 0.574817, 0.763629],
            ),
            (
                0.20,
                [0.218282, 0.260331, 0.343536, 0.409973, 0.685262, 0.839888],
            ),
            (
                0.30,
                [0.320751, 0.367162, 0.454597, 0.521028, 0.771382, 0.894989],
            ),
            (
                0.50,
                [0.522350, 0.570359, 0.654242, 0.712879, 0.897530, 0.964937],
            ),
        ];
        let cs = [0.001, 0.01, 0.05, 0.1, 0.5, 1.0];
        for (q, row) in table {
            for (c, want) in cs.iter().zip(row) {
                let p = kl_inverse(q, *c);
                assert!((p - want).abs() < 5e-7, "q={q} c={c}: {p} vs {want}");
                if q > 0.0 {
                    assert!(
                        (binary_kl(q, p) - c).abs() < 1e-12,
                        "kl(q, p*) = c at q={q} c={c}"
                    );
                }
            }
        }
    }

    #[test]
    fn kl_inverse_edge_cases() {
        assert_eq!(kl_inverse(0.3, 0.0), 0.3);
        assert_eq!(kl_inverse(0.3, -1.0), 0.3);
        assert_eq!(kl_inverse(1.0, 0.5), 1.0);
        assert_eq!(kl_inverse(0.3, f64::INFINITY), 1.0);
        assert!((kl_inverse(0.0, 0.7) - (1.0 - (-0.7f64).exp())).abs() < 1e-16);
        assert_eq!(kl_inverse(0.2, 1e6), 1.0);
        let tiny = kl_inverse(0.2, 1e-14);
        assert!(tiny >= 0.2 && tiny - 0.2 < 1e-6);
        // Monotone in both arguments.
        assert!(kl_inverse(0.2, 0.3) < kl_inverse(0.21, 0.3));
        assert!(kl_inverse(0.2, 0.3) < kl_inverse(0.2, 0.31));
    }

    #[test]
    fn kl_inverse_derivatives_match_spec_and_finite_differences() {
        let (dq, dc) = kl_inverse_grad(0.1, 0.05);
        assert!((kl_inverse(0.1, 0.05) - 0.220_078_6).abs() < 1e-7);
        assert!((dq - 1.332_252_3).abs() < 1e-6 && (dc - 1.429_430_5).abs() < 1e-6);
        let (dq, dc) = kl_inverse_grad(0.3, 0.2);
        assert!((dq - 0.991_125_9).abs() < 1e-6 && (dc - 0.759_082_0).abs() < 1e-6);
        // Central differences, h = 1e-6: truncation ~1e-12, rounding ~1e-9.
        for &(q, c) in &[(0.05, 0.02), (0.4, 0.3), (0.01, 1.5)] {
            let (aq, ac) = kl_inverse_grad(q, c);
            crate::gradcheck::assert_gradient_close(
                |p| kl_inverse(p[0], p[1]),
                &[q, c],
                &[aq, ac],
                1e-6,
                crate::gradcheck::Tolerance::mixed(1e-6),
                &format!("(∂q, ∂c) at {q},{c}"),
            );
        }
    }

    #[test]
    fn binary_kl_conventions() {
        assert_eq!(
            binary_kl(0.0, 0.5),
            -(0.5f64).ln_1p() * 0.0 - (-0.5f64).ln_1p()
        );
        assert_eq!(binary_kl(0.3, 0.3), 0.0);
        assert_eq!(binary_kl(0.3, 1.0), f64::INFINITY);
        assert_eq!(binary_kl(0.3, 0.0), f64::INFINITY);
        assert!((binary_kl(1.0, 0.5) - std::f64::consts::LN_2).abs() < 1e-15);
        assert!((log1p_exp(1000.0) - 1000.0).abs() < 1e-12 && log1p_exp(-1000.0) == 0.0);
        assert!(
            (sigmoid(-800.0)).abs() < 1e-300
                && (sigmoid(2.0) - 0.880_797_077_977_882_3).abs() < 1e-15
        );
    }
}
