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
    check_sample(n, delta, "held-out sample")?;
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

/// `Ok` for a non-empty sample (`what`, named in the error) and a confidence δ in (0, 1).
fn check_sample(n: usize, delta: f64, what: &'static str) -> Result<()> {
    if n == 0 {
        return Err(Error::Empty { what });
    }
    check_delta(delta)
}

/// `Ok` for a confidence δ in (0, 1), the error naming `delta` otherwise.
pub(crate) fn check_delta(delta: f64) -> Result<()> {
    crate::error::check_open_unit("delta", delta)
}

/// Validate the bound's inputs.
fn check(empirical_risk: f64, kl: f64, n: usize, delta: f64, penalty: f64) -> Result<()> {
    check_sample(n, delta, "sample for the PAC-Bayes bound")?;
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

    /// Lower bound on the true risk of a loss in [0, 1] at empirical risk `risk` and `kl` on
    /// `n` points: the upper bound on the complementary loss `1 − ℓ`, whose empirical risk is
    /// `1 − R_S`, subtracted from 1. For the kl form this is `kl⁻¹_low(R_S, C)`, the least p
    /// with `kl(R_S‖p) ≤ C` (kl is symmetric under q, p → 1 − q, 1 − p); the C-bound's
    /// disagreement term needs it (Germain et al. 2015, PAC-Bound 1).
    pub fn lower(&self, risk: f64, kl: f64, n: usize) -> Result<f64> {
        check(risk, kl, n, self.delta, self.penalty)?;
        Ok((1.0 - self.at(1.0 - risk, kl, n).value).max(0.0))
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
mod tests;
