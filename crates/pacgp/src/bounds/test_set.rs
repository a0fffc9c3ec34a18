//! The test-set bound (Langford 2005, "Tutorial on practical prediction theory for
//! classification", JMLR 6, Th. 3.3): k errors of a fixed predictor on n rows drawn i.i.d. and
//! never used to choose it bound its true error rate p by the binomial tail inversion
//!
//! ```text
//! p̄(k, n, δ) = max { p : P(Binomial(n, p) ≤ k) ≥ δ },
//! ```
//!
//! which holds with probability ≥ 1 − δ over the n rows. It is the one-sided Clopper–Pearson
//! upper limit, the quantile of `Beta(k + 1, n − k)` at `1 − δ`, and exact: no Hoeffding or kl
//! relaxation. `p̄ = 1` when `k = n`, `p̄ = 1 − δ^{1/n}` when `k = 0`.
//!
//! Computed by bisection on `p`, the binomial CDF summed in log space with `ln Γ`
//! ([`ln_binomial_cdf`]), O(k) per step.

use crate::error::{Error, Result};

/// `ln P(Binomial(n, p) ≤ k) = ln Σ_{i=0..k} C(n, i) pⁱ (1 − p)^{n−i}`, each term by `ln Γ`
/// and summed by log-sum-exp, so that the tails far below `f64::MIN_POSITIVE` keep their
/// digits. `0` (probability 1) when `k ≥ n`; `p` must lie in [0, 1].
pub fn ln_binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    if k >= n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return f64::NEG_INFINITY;
    }
    let (nf, ln_p, ln_q) = (n as f64, p.ln(), (-p).ln_1p());
    let ln_fact_n = libm::lgamma(nf + 1.0);
    let term = |i: usize| {
        let (i_f, rest) = (i as f64, (n - i) as f64);
        ln_fact_n - libm::lgamma(i_f + 1.0) - libm::lgamma(rest + 1.0) + i_f * ln_p + rest * ln_q
    };
    let top = (0..=k).map(term).fold(f64::NEG_INFINITY, f64::max);
    top + (0..=k).map(|i| (term(i) - top).exp()).sum::<f64>().ln()
}

/// The binomial tail inversion `p̄(k, n, δ)` of the module docs: the largest true error rate
/// under which `k` or fewer errors in `n` independent trials still have probability `≥ δ`.
/// An error for `n = 0`, `k > n` or δ outside (0, 1).
///
/// `k = 0` has the closed form `1 − δ^{1/n} = −expm1(ln δ / n)`; otherwise bisection on
/// `p ∈ [k/n, 1]` (the CDF falls as p grows, and at `p = k/n` it is at least about ½ > δ for
/// any δ < ½; for larger δ the lower end moves to 0) until the interval is within a few ulps of
/// its upper end.
pub fn binomial_tail_inversion(k: usize, n: usize, delta: f64) -> Result<f64> {
    if n == 0 {
        return Err(Error::Empty {
            what: "held-out sample of the test-set bound",
        });
    }
    if k > n {
        return Err(Error::InvalidParameter {
            name: "held-out errors",
            value: k as f64,
            reason: "must be at most the number of held-out rows",
        });
    }
    super::check_delta(delta)?;
    if k == n {
        return Ok(1.0);
    }
    let ln_delta = delta.ln();
    if k == 0 {
        return Ok(-(ln_delta / n as f64).exp_m1());
    }
    // Invariant: CDF(lo) ≥ δ > CDF(hi).
    let mut lo = if delta < 0.5 {
        k as f64 / n as f64
    } else {
        0.0
    };
    if ln_binomial_cdf(k, n, lo) < ln_delta {
        lo = 0.0;
    }
    let mut hi = 1.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi || hi - lo <= 4.0 * f64::EPSILON * hi {
            break;
        }
        if ln_binomial_cdf(k, n, mid) >= ln_delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CDF at hand values: P(Bin(3, ½) ≤ 1) = ½, P(Bin(4, 0.1) ≤ 0) = 0.9⁴.
    #[test]
    fn cdf_at_hand_values() {
        assert!((ln_binomial_cdf(1, 3, 0.5).exp() - 0.5).abs() < 1e-15);
        assert!((ln_binomial_cdf(0, 4, 0.1).exp() - 0.9f64.powi(4)).abs() < 1e-15);
        assert_eq!(ln_binomial_cdf(4, 4, 0.3), 0.0);
    }

    /// n = 1, k = 0: P(no error) = 1 − p ≥ δ gives p̄ = 1 − δ.
    #[test]
    fn one_row_without_error_is_one_minus_delta() {
        assert!((binomial_tail_inversion(0, 1, 0.05).unwrap() - 0.95).abs() < 1e-15);
        assert_eq!(binomial_tail_inversion(1, 1, 0.05).unwrap(), 1.0);
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(binomial_tail_inversion(0, 0, 0.05).is_err());
        assert!(binomial_tail_inversion(3, 2, 0.05).is_err());
        assert!(binomial_tail_inversion(1, 2, 0.0).is_err());
        assert!(binomial_tail_inversion(1, 2, 1.0).is_err());
        assert!(binomial_tail_inversion(1, 2, f64::NAN).is_err());
    }
}
