//! Catoni's bound at a λ fixed without the bound's sample (docs/math.md §9.1): the grid of λ
//! fixed in advance, how λ is chosen, the bound, its partials and the λ that minimises it.

use super::*;

/// Catoni's grid of λ fixed in advance (docs/math.md §9.1): five values geometric in
/// [0.3, 3]; choosing among them by the bound costs `ln 5`.
pub const CATONI_GRID: [f64; 5] = [
    0.3,
    0.533_483_823_011_676_8,
    0.948_683_298_050_513_8,
    1.687_023_975_571_047_2,
    3.0,
];

/// How Catoni's λ is fixed without the bound's sample (docs/math.md §9.1, §9.3.3).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CatoniLambda {
    /// One λ fixed in advance (no charge).
    Fixed(f64),
    /// The best of [`CATONI_GRID`] by the bound, charged `ln 5`.
    Grid,
    /// The λ optimal for risk and KL estimated on part A of a split alone
    /// ([`catoni_optimal_lambda`] of a nested split of A; no charge).
    FromPartA,
}

/// Catoni's bound for a fixed λ (docs/math.md §9.1; Catoni 2007, Th. 1.2.6):
/// `(1 − exp(−λq − c))/(1 − e^{−λ})`, capped at 1, with `c = (KL + penalty + ln(1/δ))/N`.
pub fn catoni_bound(q: f64, c: f64, lambda: f64) -> f64 {
    catoni_with_partials(q, c, lambda).0
}

/// Catoni's bound with its partial derivatives `(B, ∂B/∂q, ∂B/∂c)`:
/// `∂B/∂q = λe^{−λq−c}/(1 − e^{−λ})`, `∂B/∂c = e^{−λq−c}/(1 − e^{−λ})` (0 where capped).
pub fn catoni_with_partials(q: f64, c: f64, lambda: f64) -> (f64, f64, f64) {
    let denom = -(-lambda).exp_m1();
    let b = -(-lambda * q - c).exp_m1() / denom;
    if b >= 1.0 {
        return (1.0, 0.0, 0.0);
    }
    let d_c = (-lambda * q - c).exp() / denom;
    (b, lambda * d_c, d_c)
}

/// The λ at which Catoni's bound is lowest for empirical risk `q` and complexity `c`
/// (Legendre duality, docs/math.md §9.1): `λ* = ln(p(1 − q)/(q(1 − p)))` with `p = kl⁻¹(q, c)`;
/// there Catoni's bound equals `kl⁻¹(q, c)`. Only valid as a certificate's λ if `q` and `c` do not
/// come from the bound's sample (e.g. estimates from part A of a split). Kept in [1e-3, 1e3].
pub fn catoni_optimal_lambda(q: f64, c: f64) -> f64 {
    let p = kl_inverse(q, c);
    let q = q.clamp(1e-12, 1.0 - 1e-12);
    let p = p.clamp(q, 1.0 - 1e-12);
    ((p * (1.0 - q)) / (q * (1.0 - p))).ln().clamp(1e-3, 1e3)
}
