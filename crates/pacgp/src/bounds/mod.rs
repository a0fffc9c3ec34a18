//! PAC-Bayes bounds on the Gibbs risk (docs/math.md §2): Maurer's kl form (paper eq. 4–5), Seeger's
//! `ln((N+1)/δ)` constant, the sharp `ln(ξ(N)/δ)` constant (docs/math.md §9.1), Catoni's
//! bound with a λ fixed without the bound's sample (docs/math.md §9.1), the Pinsker ("sqrt")
//! variant (§2.5), the hyperparameter grid and its union-bound penalty `ln|Θ|` (§2.4), and the
//! test-set bound on a held-out sample by binomial tail inversion ([`binomial_tail_inversion`]).
//! Certificates are assembled from these in [`crate::certificate`].

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::special::{kl_inverse, kl_inverse_lower};

mod catoni;
mod grid;
mod test_set;
/// Default confidence δ of every bound a fit trains, selects by or stores (written once: the
/// fit spec, the methods' configurations and the certificates read it from here).
pub const DEFAULT_DELTA: f64 = 0.01;

pub use catoni::*;
pub use grid::*;
pub use test_set::*;

/// Which inequality turns (empirical risk, complexity) into a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundKind {
    /// `kl⁻¹(R_S, C)` (paper eq. 5).
    Kl,
    /// `R_S + √(C/2)` (Pinsker; always ≥ the kl form, may exceed 1).
    Sqrt,
}

/// The confidence term of the complexity (and, for Catoni's, the inequality that uses it).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfidenceTerm {
    /// `ln(2√N/δ)` (Maurer 2004; PAC-GP paper and code). Never worse than Seeger's.
    Maurer,
    /// `ln((N+1)/δ)` (Seeger 2002, seed 003).
    Seeger,
    /// `ln(ξ(N)/δ)` with the exact `ξ(N)` that Maurer bounds by `2√N` (docs/math.md §9.1);
    /// valid wherever Maurer's is, ≈ 0.45 nats smaller.
    Sharp,
    /// Catoni's bound at a λ fixed without the bound's sample (docs/math.md §9.1):
    /// `R ≤ (1 − exp(−λR_S − C))/(1 − e^{−λ})` with the confidence term `ln(1/δ)` in `C`.
    /// Both bound kinds give this form (it has no Pinsker relaxation); a λ chosen from a grid
    /// fixed in advance pays `ln|Λ|` as a penalty term.
    Catoni {
        /// λ > 0, fixed before the bound's sample is seen (e.g. on part A of a split).
        lambda: f64,
    },
}

impl ConfidenceTerm {
    /// The term's value for sample size `n` and confidence `delta`.
    pub fn value(self, n: usize, delta: f64) -> f64 {
        match self {
            ConfidenceTerm::Maurer => (2.0 * (n as f64).sqrt() / delta).ln(),
            ConfidenceTerm::Seeger => ((n as f64 + 1.0) / delta).ln(),
            ConfidenceTerm::Sharp => ln_xi(n) - delta.ln(),
            ConfidenceTerm::Catoni { .. } => -delta.ln(),
        }
    }

    /// Catoni's λ, if this is Catoni's bound.
    pub fn catoni_lambda(self) -> Option<f64> {
        match self {
            ConfidenceTerm::Catoni { lambda } => Some(lambda),
            _ => None,
        }
    }
}

/// One-sided lower confidence limit at level `1 − δ` of the expected risk from a held-out
/// mean `risk` of `n` independent losses in [0, 1]: `kl⁻¹_low(risk, ln(1/δ)/n)` (Hoeffding
/// 1963, Th. 1: `P(r̂ ≤ p − t) ≤ exp(−n·kl(p − t‖p))`). A certificate is contradicted by the
/// held-out sample only if this limit exceeds it; the raw mean scatters by ≈ √(p(1−p)/n).
pub fn held_out_lower_limit(risk: f64, n: usize, delta: f64) -> Result<f64> {
    if n == 0 {
        return Err(Error::Empty {
            what: "held-out sample",
        });
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(Error::InvalidParameter {
            name: "delta",
            value: delta,
            reason: "must lie in (0, 1)",
        });
    }
    Ok(kl_inverse_lower(risk, -delta.ln() / n as f64))
}

/// `ln ξ(N)`, `ξ(N) = Σ_{k=0..N} C(N,k) (k/N)^k (1 − k/N)^{N−k}` (Maurer 2004;
/// docs/math.md §9.1), summed in log space with `ln Γ`; O(N). `ξ(N) ≤ 2√N`, `ξ(N) ≈ √(πN/2)`.
pub fn ln_xi(n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let nf = n as f64;
    let ln_fact_n = libm::lgamma(nf + 1.0);
    // 0·ln 0 = 0: the k = 0 and k = N terms are exactly 1.
    let xlnx = |a: f64, p: f64| if a == 0.0 { 0.0 } else { a * p.ln() };
    let terms: Vec<f64> = (0..=n)
        .map(|k| {
            let (kf, rest) = (k as f64, (n - k) as f64);
            ln_fact_n - libm::lgamma(kf + 1.0) - libm::lgamma(rest + 1.0)
                + xlnx(kf, kf / nf)
                + xlnx(rest, rest / nf)
        })
        .collect();
    let top = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()
}

/// Validate the bound's inputs.
fn check(empirical_risk: f64, kl: f64, n: usize, delta: f64, penalty: f64) -> Result<()> {
    if n == 0 {
        return Err(Error::Empty {
            what: "sample for the PAC-Bayes bound",
        });
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(Error::InvalidParameter {
            name: "delta",
            value: delta,
            reason: "must lie in (0, 1)",
        });
    }
    if !(0.0..=1.0).contains(&empirical_risk) {
        return Err(Error::InvalidParameter {
            name: "empirical risk",
            value: empirical_risk,
            reason: "must lie in [0, 1]",
        });
    }
    if !(kl >= -1e-9) {
        return Err(Error::InvalidParameter {
            name: "KL",
            value: kl,
            reason: "must be non-negative",
        });
    }
    if !(penalty >= 0.0) {
        return Err(Error::InvalidParameter {
            name: "penalty",
            value: penalty,
            reason: "must be non-negative",
        });
    }
    Ok(())
}

/// Complexity `C = (KL + penalty + confidence)/N` (docs/math.md §2.3, eq. 5).
pub fn complexity(kl: f64, n: usize, delta: f64, penalty: f64, term: ConfidenceTerm) -> f64 {
    (kl.max(0.0) + penalty + term.value(n, delta)) / n as f64
}

/// Upper bound on the true Gibbs risk holding with probability ≥ 1 − δ
/// (docs/math.md §2.2–2.3, eqs. 4–5; §2.5).
pub fn pac_bayes_bound(
    empirical_risk: f64,
    kl: f64,
    n: usize,
    delta: f64,
    penalty: f64,
    kind: BoundKind,
    term: ConfidenceTerm,
) -> Result<f64> {
    check(empirical_risk, kl, n, delta, penalty)?;
    check_term(term)?;
    let c = complexity(kl, n, delta, penalty, term);
    Ok(bound_and_partials(empirical_risk, c, kind, term).0)
}

/// Lower bound on the true risk of a loss in [0, 1] holding with probability ≥ 1 − δ: the
/// upper bound [`pac_bayes_bound`] on the complementary loss `1 − ℓ`, whose empirical risk is
/// `1 − R_S`, subtracted from 1. For the kl form this is `kl⁻¹_low(R_S, C)`, the least p with
/// `kl(R_S‖p) ≤ C` (kl is symmetric under q, p → 1 − q, 1 − p); the C-bound's disagreement
/// term needs it (Germain et al. 2015, PAC-Bound 1).
pub fn pac_bayes_lower_bound(
    empirical_risk: f64,
    kl: f64,
    n: usize,
    delta: f64,
    penalty: f64,
    kind: BoundKind,
    term: ConfidenceTerm,
) -> Result<f64> {
    check(empirical_risk, kl, n, delta, penalty)?;
    let upper = pac_bayes_bound(1.0 - empirical_risk, kl, n, delta, penalty, kind, term)?;
    Ok((1.0 - upper).max(0.0))
}

/// Catoni's λ must be positive and finite.
fn check_term(term: ConfidenceTerm) -> Result<()> {
    match term.catoni_lambda() {
        Some(l) if !(l > 0.0 && l.is_finite()) => Err(Error::InvalidParameter {
            name: "Catoni λ",
            value: l,
            reason: "must be positive and finite",
        }),
        _ => Ok(()),
    }
}

/// The bound an objective minimises (and a certificate states): δ, the confidence term
/// (Catoni's carries its λ), the form (kl-inverse or Pinsker) and the union-bound penalty in
/// nats. Every objective that trains by a bound holds one and asks it for the value and its
/// partials ([`BoundTarget::at`]), so the sharp ξ(N) and Catoni's bound reach all of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundTarget {
    /// Confidence δ.
    delta: f64,
    /// Confidence constant (Catoni's with λ: Catoni's bound whatever `kind` says).
    term: ConfidenceTerm,
    /// kl-inverse or Pinsker form.
    kind: BoundKind,
    /// Union-bound penalty in nats fixed during the optimisation.
    penalty: f64,
}

/// The bound at one point with its partial derivatives in the empirical risk and in the
/// complexity `C = (KL + penalty + confidence)/N`, so `∂B/∂KL = ∂B/∂penalty = d_complexity/N`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundValue {
    /// The bound.
    pub value: f64,
    /// `∂B/∂R_S`.
    pub d_risk: f64,
    /// `∂B/∂C`.
    pub d_complexity: f64,
}

impl BoundTarget {
    /// A target with its inputs checked: δ in (0, 1), a non-negative finite penalty, Catoni's
    /// λ positive and finite.
    pub fn new(delta: f64, term: ConfidenceTerm, kind: BoundKind, penalty: f64) -> Result<Self> {
        check(0.0, 0.0, 1, delta, penalty)?;
        if !penalty.is_finite() {
            return Err(Error::InvalidParameter {
                name: "penalty",
                value: penalty,
                reason: "must be finite",
            });
        }
        check_term(term)?;
        Ok(Self {
            delta,
            term,
            kind,
            penalty,
        })
    }

    /// Confidence δ.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// The confidence term.
    pub fn term(&self) -> ConfidenceTerm {
        self.term
    }

    /// kl-inverse or Pinsker form.
    pub fn kind(&self) -> BoundKind {
        self.kind
    }

    /// The constant union-bound penalty in nats.
    pub fn penalty(&self) -> f64 {
        self.penalty
    }

    /// The same target under another confidence term (checked as [`BoundTarget::new`]).
    pub fn with_term(&self, term: ConfidenceTerm) -> Result<Self> {
        Self::new(self.delta, term, self.kind, self.penalty)
    }

    /// The complexity `C = (KL + penalty + extra + confidence)/N` (docs/math.md §2.3).
    pub fn complexity(&self, kl: f64, n: usize, extra_penalty: f64) -> f64 {
        complexity(kl, n, self.delta, self.penalty + extra_penalty, self.term)
    }

    /// δ in (0, 1) and Catoni's λ positive and finite: what a fit or a certificate checks
    /// before any work that depends on the data (a split prior's refit of part A).
    pub fn check_confidence(delta: f64, term: ConfidenceTerm) -> Result<()> {
        Self::new(delta, term, BoundKind::Kl, 0.0).map(drop)
    }

    /// The bound at empirical risk `risk` and `kl` on `n` points, with its partials.
    pub fn at(&self, risk: f64, kl: f64, n: usize) -> BoundValue {
        self.at_with(risk, kl, n, 0.0)
    }

    /// [`BoundTarget::at`] with a penalty that depends on the optimised parameters added (a
    /// coarse hyperparameter prior's surrogate `−ln π(θ)`); its derivative is `d_complexity/N`.
    pub fn at_with(&self, risk: f64, kl: f64, n: usize, extra_penalty: f64) -> BoundValue {
        let c = self.complexity(kl.max(0.0), n, extra_penalty);
        let (value, d_risk, d_complexity) = bound_and_partials(risk, c, self.kind, self.term);
        BoundValue {
            value,
            d_risk,
            d_complexity,
        }
    }
}

/// The bound of `kind` under `term` as a function of (q, c) with `(B, ∂B/∂q, ∂B/∂c)`:
/// Catoni's closed form for [`ConfidenceTerm::Catoni`] (either kind), else
/// [`bound_with_partials`].
pub fn bound_and_partials(
    q: f64,
    c: f64,
    kind: BoundKind,
    term: ConfidenceTerm,
) -> (f64, f64, f64) {
    match term.catoni_lambda() {
        Some(lambda) => catoni_with_partials(q, c, lambda),
        None => bound_with_partials(q, c, kind),
    }
}

/// The bound as a function of (empirical risk q, complexity c) with its partial derivatives
/// `(B, ∂B/∂q, ∂B/∂c)` (paper eq. 14): `kl⁻¹(q, c)` or `q + √(c/2)`. For a complexity with
/// Catoni's confidence term use [`bound_and_partials`].
pub fn bound_with_partials(q: f64, c: f64, kind: BoundKind) -> (f64, f64, f64) {
    match kind {
        BoundKind::Kl => {
            let (dq, dc) = crate::special::kl_inverse_grad(q, c);
            (kl_inverse(q, c), dq, dc)
        }
        BoundKind::Sqrt => (q + (c / 2.0).sqrt(), 1.0, 1.0 / (2.0 * (2.0 * c).sqrt())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PAC-Bayes lower bound is `kl⁻¹_low` of the complexity: against scipy's
    /// `brentq(lambda x: kl(q‖x) − C, 1e-15, q)` (values computed once with scipy 1.x) and an
    /// independent bisection here; Catoni's is `1 −` Catoni's bound on `1 − R_S`.
    #[test]
    fn pac_bayes_lower_bound_matches_scipy_and_a_bisection() {
        let kl = |q: f64, p: f64| {
            let a = if q > 0.0 { q * (q / p).ln() } else { 0.0 };
            let b = if q < 1.0 {
                (1.0 - q) * ((1.0 - q) / (1.0 - p)).ln()
            } else {
                0.0
            };
            a + b
        };
        let ln56 = 56f64.ln();
        for (risk, k, n, delta, penalty, scipy) in [
            (0.12, 8.0, 300, 0.025, ln56, 0.036_020_711_133_449_42),
            (0.30, 20.0, 140, 0.005, ln56 + 1.3, 0.068_982_556_378_238_23),
            (0.02, 2.0, 875, 0.005, 0.0, 0.004_945_813_003_617_818),
        ] {
            let low = pac_bayes_lower_bound(
                risk,
                k,
                n,
                delta,
                penalty,
                BoundKind::Kl,
                ConfidenceTerm::Maurer,
            )
            .unwrap();
            assert!((low - scipy).abs() < 1e-10, "{low} vs {scipy}");
            let c = complexity(k, n, delta, penalty, ConfidenceTerm::Maurer);
            let (mut lo, mut hi) = (0.0, risk);
            while hi - lo > 1e-14 {
                let mid = 0.5 * (lo + hi);
                if kl(risk, mid) > c {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            assert!((low - hi).abs() < 1e-10, "{low} vs bisection {hi}");
            assert!(low < risk);
        }
        let term = ConfidenceTerm::Catoni { lambda: 2.0 };
        let low = pac_bayes_lower_bound(0.2, 3.0, 200, 0.01, 0.0, BoundKind::Kl, term).unwrap();
        let c = complexity(3.0, 200, 0.01, 0.0, term);
        assert!((low - (1.0 - catoni_bound(0.8, c, 2.0))).abs() < 1e-12);
        assert!(pac_bayes_lower_bound(1.2, 3.0, 200, 0.01, 0.0, BoundKind::Kl, term).is_err());
    }

    /// The held-out lower limit covers: for Bernoulli losses (the worst case) with n = 137 and
    /// δ = 0.01, the exact binomial probability that the limit exceeds the true p is ≤ δ.
    #[test]
    fn held_out_lower_limit_has_its_coverage_under_the_binomial() {
        let n = 137;
        let ln_binom = |k: usize, p: f64| {
            let lg = |m: usize| (1..=m).map(|i| (i as f64).ln()).sum::<f64>();
            lg(n) - lg(k) - lg(n - k) + k as f64 * p.ln() + (n - k) as f64 * (-p).ln_1p()
        };
        for &p in &[0.02, 0.05, 0.0845, 0.2, 0.5] {
            let miss: f64 = (0..=n)
                .filter(|&k| held_out_lower_limit(k as f64 / n as f64, n, 0.01).unwrap() > p)
                .map(|k| ln_binom(k, p).exp())
                .sum();
            assert!(miss <= 0.01, "p = {p}: miss {miss}");
            assert!(miss > 1e-5, "p = {p}: the limit is not that loose ({miss})");
        }
        assert!(held_out_lower_limit(0.1, 0, 0.01).is_err());
        assert!(held_out_lower_limit(0.1, 10, 1.0).is_err());
    }

    /// docs/test-vectors.md §7: third-party boston rows (N = 404, δ = 0.01, ln|Θ| = 2 ln 1201).
    #[test]
    fn reproduces_third_party_boston_rows_to_six_digits() {
        let rows = [
            (69.647707, 0.071136, 0.357915, 0.408805),
            (86.492905, 0.050645, 0.356053, 0.417890),
            (103.735985, 0.036916, 0.362068, 0.432148),
            (124.244217, 0.025626, 0.374516, 0.451760),
            (71.965028, 0.120503, 0.434425, 0.462393),
            (103.322943, 0.100206, 0.463217, 0.494792),
            (122.023825, 0.091884, 0.482103, 0.514781),
            (140.128382, 0.087382, 0.503493, 0.535990),
        ];
        let pen = HyperGrid::default().penalty(2);
        assert!((pen - 14.181820).abs() < 5e-7);
        for (kl, rs, bkl, bsq) in rows {
            let a = pac_bayes_bound(
                rs,
                kl,
                404,
                0.01,
                pen,
                BoundKind::Kl,
                ConfidenceTerm::Maurer,
            )
            .unwrap();
            let b = pac_bayes_bound(
                rs,
                kl,
                404,
                0.01,
                pen,
                BoundKind::Sqrt,
                ConfidenceTerm::Maurer,
            )
            .unwrap();
            // Inputs are printed to 6 decimals (±5e-7); ∂B/∂R_S ≤ 1.6 and ∂B/∂KL ≤ 0.01 here,
            // so agreement is expected to ±1 in the 6th decimal.
            assert!((a - bkl).abs() < 1.5e-6, "kl bound {a} vs {bkl}");
            assert!((b - bsq).abs() < 1.5e-6, "sqrt bound {b} vs {bsq}");
        }
    }

    /// The target's partials against central differences in R_S and KL, for both forms, a
    /// sharp constant and Catoni's; an extra penalty moves the value as the KL does.
    #[test]
    fn target_partials_match_central_differences() {
        let h = 1e-6;
        for term in [
            ConfidenceTerm::Maurer,
            ConfidenceTerm::Sharp,
            ConfidenceTerm::Catoni { lambda: 0.8 },
        ] {
            for kind in [BoundKind::Kl, BoundKind::Sqrt] {
                let t = BoundTarget::new(0.05, term, kind, 3.0).unwrap();
                let (r, kl, n) = (0.12, 7.5, 300);
                let b = t.at(r, kl, n);
                let dr = (t.at(r + h, kl, n).value - t.at(r - h, kl, n).value) / (2.0 * h);
                let dk = (t.at(r, kl + h, n).value - t.at(r, kl - h, n).value) / (2.0 * h);
                assert!((b.d_risk - dr).abs() < 1e-6, "{term:?} {kind:?}");
                assert!(
                    (b.d_complexity / n as f64 - dk).abs() < 1e-8,
                    "{term:?} {kind:?}"
                );
                assert!(
                    (t.at_with(r, kl, n, 1.0).value - t.at(r, kl + 1.0, n).value).abs() < 1e-14
                );
                let want = pac_bayes_bound(r, kl, n, 0.05, 3.0, kind, term).unwrap();
                assert!((b.value - want).abs() < 1e-15);
            }
        }
        assert!(BoundTarget::new(1.0, ConfidenceTerm::Maurer, BoundKind::Kl, 0.0).is_err());
        assert!(BoundTarget::new(0.1, ConfidenceTerm::Maurer, BoundKind::Kl, -1.0).is_err());
        let bad = ConfidenceTerm::Catoni { lambda: 0.0 };
        assert!(BoundTarget::new(0.1, bad, BoundKind::Kl, 0.0).is_err());
    }

    #[test]
    fn grid_penalty_and_rounding() {
        let g = HyperGrid::default();
        assert_eq!(g.points_per_param(), 1201.0);
        for (t, want) in [
            (2, 14.181820),
            (9, 63.818188),
            (14, 99.272738),
            (27, 191.454565),
        ] {
            assert!((g.penalty(t) - want).abs() < 5e-6);
        }
        assert_eq!(
            g.round(&[0.123456, -7.3, 6.004, -0.005]),
            vec![0.12, -6.0, 6.0, -0.01]
        );
    }

    /// docs/test-vectors.md §13: ξ(404) = 25.86, ξ(32000) = 224.9 (2√N = 40.20, 357.8).
    #[test]
    fn sharp_constant_matches_the_spec_values() {
        assert!(
            (ln_xi(404).exp() - 25.86).abs() < 0.005,
            "{}",
            ln_xi(404).exp()
        );
        assert!(
            (ln_xi(32000).exp() - 224.9).abs() < 0.05,
            "{}",
            ln_xi(32000).exp()
        );
        for n in [1, 2, 10, 404, 32000] {
            assert!(ln_xi(n) <= (2.0 * (n as f64).sqrt()).ln() + 1e-12);
            let d = ConfidenceTerm::Maurer.value(n, 0.01) - ConfidenceTerm::Sharp.value(n, 0.01);
            assert!(d >= -1e-12, "sharp never looser (n = {n})");
        }
        // ξ(N)/√(πN/2) → 1.
        let r = ln_xi(32000).exp() / (std::f64::consts::PI * 32000.0 / 2.0).sqrt();
        assert!((r - 1.0).abs() < 0.01, "{r}");
    }

    /// ξ(N) by the plain sum in f64 (binomials by products, no ln Γ) for small N.
    #[test]
    fn sharp_constant_equals_the_brute_force_sum() {
        for n in 1..=40usize {
            let nf = n as f64;
            let mut xi = 0.0;
            for k in 0..=n {
                let binom: f64 = (0..k).map(|j| (n - j) as f64 / (j + 1) as f64).product();
                let p = k as f64 / nf;
                xi += binom * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32);
            }
            assert!(
                (ln_xi(n) - xi.ln()).abs() < 1e-12,
                "n = {n}: {} vs {}",
                ln_xi(n).exp(),
                xi
            );
        }
        // ξ(1) = 2 and ξ(2) = 2.5 by hand.
        assert!((ln_xi(1).exp() - 2.0).abs() < 1e-14);
        assert!((ln_xi(2).exp() - 2.5).abs() < 1e-14);
    }

    /// Catoni's closed form at hand-computed values: `(1 − e^{−0.15})/(1 − e^{−1})` and,
    /// through the certificate's entry point, λ = 0.5, q = 0.1, KL = 10, N = 200, δ = 0.01 and
    /// a `ln 5` penalty: `c = (10 + ln 5 + ln 100)/200`.
    #[test]
    fn catoni_closed_form_at_hand_values() {
        assert!((catoni_bound(0.1, 0.05, 1.0) - 0.220_356_736_748_251_6).abs() < 1e-14);
        let term = ConfidenceTerm::Catoni { lambda: 0.5 };
        assert!((term.value(200, 0.01) - 100f64.ln()).abs() < 1e-15);
        for kind in [BoundKind::Kl, BoundKind::Sqrt] {
            let b = pac_bayes_bound(0.1, 10.0, 200, 0.01, 5f64.ln(), kind, term).unwrap();
            assert!((b - 0.312_213_133_550_083_7).abs() < 1e-14, "{b}");
        }
        // Capped at 1 when λq + c > λ; bad λ is an error.
        assert_eq!(catoni_bound(0.9, 2.0, 0.3), 1.0);
        for lambda in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let t = ConfidenceTerm::Catoni { lambda };
            assert!(pac_bayes_bound(0.1, 1.0, 50, 0.05, 0.0, BoundKind::Kl, t).is_err());
        }
    }

    /// Legendre duality (docs/math.md §9.1): minimised over λ, Catoni's bound equals `kl⁻¹(q, c)`
    /// (at `catoni_optimal_lambda` and by a fine λ scan), and it is never below it.
    #[test]
    fn catoni_minimised_over_lambda_is_the_kl_inverse_and_never_below_it() {
        for q in [0.0, 0.01, 0.05, 0.1, 0.3, 0.6] {
            for c in [0.005, 0.02, 0.1, 0.4] {
                let kl = kl_inverse(q, c);
                let scan = (0..=4000)
                    .map(|k| 1e-3 * 1e7f64.powf(k as f64 / 4000.0))
                    .map(|l| catoni_bound(q, c, l))
                    .inspect(|b| assert!(*b >= kl - 1e-12, "q {q} c {c}: {b} < {kl}"))
                    .fold(f64::INFINITY, f64::min);
                assert!(
                    scan - kl < 2e-4 * kl.max(1e-3),
                    "q {q} c {c}: scan {scan} vs {kl}"
                );
                if q > 0.0 && kl < 1.0 {
                    let at = catoni_bound(q, c, catoni_optimal_lambda(q, c));
                    assert!((at - kl).abs() < 1e-9, "q {q} c {c}: {at} vs {kl}");
                }
            }
        }
    }

    /// docs/test-vectors.md §13's table (independent numpy figures, N = 404, δ = 0.01): "oracle λ"
    /// is
    /// `kl⁻¹(q, KL/N + ln(1/δ)/N)`; "Catoni-20" the best of 20 λ geometric in [0.05, 20]
    /// with `ln 20` charged.
    #[test]
    fn catoni_matches_the_spec_table() {
        let grid: Vec<f64> = (0..20)
            .map(|k| 0.05 * 400f64.powf(k as f64 / 19.0))
            .collect();
        for (q, kl_n, catoni20, oracle) in [
            (0.05, 0.01, 0.1202, 0.1081),
            (0.10, 0.03, 0.2187, 0.2074),
            (0.10, 0.30, 0.4685, 0.4629),
            (0.20, 0.10, 0.4311, 0.4228),
            (0.30, 0.30, 0.6893, 0.6851),
        ] {
            let kl = kl_n * 404.0;
            let best = grid
                .iter()
                .map(|&lambda| {
                    let t = ConfidenceTerm::Catoni { lambda };
                    pac_bayes_bound(q, kl, 404, 0.01, 20f64.ln(), BoundKind::Kl, t).unwrap()
                })
                .fold(f64::INFINITY, f64::min);
            assert!(
                (best - catoni20).abs() < 6e-5,
                "{q} {kl_n}: {best} vs {catoni20}"
            );
            let c = complexity(kl, 404, 0.01, 0.0, ConfidenceTerm::Catoni { lambda: 1.0 });
            let at = catoni_bound(q, c, catoni_optimal_lambda(q, c));
            assert!((at - oracle).abs() < 6e-5, "{q} {kl_n}: {at} vs {oracle}");
        }
    }

    /// Catoni's partials match central differences; the grid is geometric in [0.3, 3].
    #[test]
    fn catoni_partials_match_central_differences_and_the_grid_is_geometric() {
        let h = 1e-6;
        for (q, c, l) in [(0.05, 0.03, 0.7), (0.2, 0.1, 2.5), (0.01, 0.2, 1.1)] {
            let (_, dq, dc) = catoni_with_partials(q, c, l);
            let t = ConfidenceTerm::Catoni { lambda: l };
            let (_, dq2, dc2) = bound_and_partials(q, c, BoundKind::Kl, t);
            assert_eq!((dq, dc), (dq2, dc2));
            let fq = (catoni_bound(q + h, c, l) - catoni_bound(q - h, c, l)) / (2.0 * h);
            let fc = (catoni_bound(q, c + h, l) - catoni_bound(q, c - h, l)) / (2.0 * h);
            assert!((dq - fq).abs() < 1e-7 && (dc - fc).abs() < 1e-7);
        }
        for w in CATONI_GRID.windows(2) {
            assert!((w[1] / w[0] - 10f64.powf(0.25)).abs() < 1e-14);
        }
        assert_eq!((CATONI_GRID[0], CATONI_GRID[4]), (0.3, 3.0));
    }

    #[test]
    fn seeger_constant_is_never_tighter_and_bad_inputs_are_errors() {
        for n in [1, 5, 100, 10_000] {
            assert!(
                ConfidenceTerm::Seeger.value(n, 0.05)
                    >= ConfidenceTerm::Maurer.value(n, 0.05) - 1e-15
            );
        }
        let b = |r: f64, kl: f64, n: usize, d: f64| {
            pac_bayes_bound(r, kl, n, d, 0.0, BoundKind::Kl, ConfidenceTerm::Maurer)
        };
        assert!(b(0.1, 1.0, 0, 0.05).is_err());
        assert!(b(0.1, 1.0, 10, 0.0).is_err());
        assert!(b(0.1, 1.0, 10, 1.0).is_err());
        assert!(b(1.5, 1.0, 10, 0.05).is_err());
        assert!(b(0.1, -1.0, 10, 0.05).is_err());
        assert!(b(f64::NAN, 1.0, 10, 0.05).is_err());
    }
}
