//! One-dimensional quadrature of the vote probabilities of K independent Gaussian class
//! scores `s_k ~ N(m_k, σ_k²)`:
//!
//! `P(argmax_k s_k = j) = ∫ φ(z) Π_{k≠j} Φ((m_j + σ_j z − m_k)/σ_k) dz`
//!
//! (condition on `s_j = m_j + σ_j z`; the others are independent). The integrand is
//! `φ(z) F(z)` with `F` a product of probits rising with z; the factor of class k rises over a
//! width `σ_k/σ_j` in z. The log integrand is concave with curvature ≥ 1 and its peak z*
//! chooses the rule:
//!
//! - no factor steeper than [`GH_MAX_STEEPNESS`] (`σ_j ≤ 2σ_k` for every k) and z* within
//!   [`GH_MAX_PEAK`] of 0 (told by the slope's signs at ±2, no search): the fixed 64-node
//!   Gauss–Hermite rule, its terms evaluated from the heaviest node outwards and stopped where
//!   the rest cannot reach 3e-16 of the sum; within 1e-12 of the exact integral with one factor
//!   near the limit, 3e-9 with several;
//! - no steep factor and z* further out (a small vote probability, far in the fixed rule's
//!   thin tail): the same rule moved to z* and scaled to the integrand's width there
//!   (adaptive Gauss–Hermite, Liu & Pierce 1994), within 1e-10 relative of the adaptive
//!   integral below on random scores (a test), for ~64 integrand evaluations, not hundreds;
//! - steeper factors (a class whose score is far less spread than class j's, or a score with
//!   no spread at all, where the fixed rule errs by 1e-3 at a ratio of 8): adaptive
//!   Gauss–Kronrod (G7/K15) on the 12 units either side of z* (holding all but e^{−72} of
//!   the mass), to an absolute 1e-13 of the peak-scaled integrand, with a factor of zero
//!   spread turned into the lower limit `lo` it imposes.
//!
//! All are done in log space (`ln Φ` from [`crate::special::ln_normal_cdf`]), so a vote
//! probability of 1e-300 is still its own number.

use std::sync::OnceLock;

use crate::special::{
    inv_mills_ratio, ln_normal_cdf, ln_normal_pdf, normal_cdf_curvature, LN_SQRT_2PI,
};

/// Number of Gauss–Hermite nodes.
pub const GH_NODES: usize = 64;

/// Largest `σ_j/σ_k` integrated by Gauss–Hermite (error ~1e-12 at 64 nodes for one factor
/// at the limit, ~3e-9 for several).
pub const GH_MAX_STEEPNESS: f64 = 2.0;

/// Gauss–Hermite is used only when the integrand peaks within this distance of 0, where
/// its nodes are dense (a tiny vote probability peaks far out, in the rule's thin tail).
pub const GH_MAX_PEAK: f64 = 2.0;

/// Half-width around the integrand's peak integrated by Gauss–Kronrod.
const PEAK_HALF_WIDTH: f64 = 12.0;

/// Gauss–Hermite nodes whose term is bounded below `e^{−40}` of the largest are left out.
const PRUNE_LN_GAP: f64 = 40.0;

/// Nodes `z_i` and ln-weights of the probabilists' Gauss–Hermite rule
/// `∫ φ(z) f(z) dz ≈ Σ w_i f(z_i)` ([`GH_NODES`] nodes, Σ w_i = 1).
pub fn gauss_hermite() -> &'static (Vec<f64>, Vec<f64>) {
    static RULE: OnceLock<(Vec<f64>, Vec<f64>)> = OnceLock::new();
    RULE.get_or_init(|| hermite_rule(GH_NODES))
}

/// The physicists' rule for `∫ e^{−x²} f(x) dx` by Newton's method on the orthonormal
/// Hermite recurrence (Numerical Recipes `gauher`), rescaled to `φ`: `z = √2 x`,
/// `w = w_x/√π`.
pub(crate) fn hermite_rule(n: usize) -> (Vec<f64>, Vec<f64>) {
    let pim4 = std::f64::consts::PI.powf(-0.25);
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    let m = n.div_ceil(2);
    let nf = n as f64;
    let mut z = 0.0;
    for i in 0..m {
        // Initial guesses for the largest roots, then from the previous ones.
        z = match i {
            0 => (2.0 * nf + 1.0).sqrt() - 1.85575 * (2.0 * nf + 1.0).powf(-1.0 / 6.0),
            1 => z - 1.14 * nf.powf(0.426) / z,
            2 => 1.86 * z - 0.86 * x[0],
            3 => 1.91 * z - 0.91 * x[1],
            _ => 2.0 * z - x[i - 2],
        };
        let mut pp = 0.0;
        for _ in 0..100 {
            let (mut p1, mut p2) = (pim4, 0.0);
            for j in 0..n {
                let p3 = p2;
                p2 = p1;
                let jf = j as f64;
                p1 = z * (2.0 / (jf + 1.0)).sqrt() * p2 - (jf / (jf + 1.0)).sqrt() * p3;
            }
            pp = (2.0 * nf).sqrt() * p2;
            let z1 = z;
            z = z1 - p1 / pp;
            if (z - z1).abs() <= 1e-15 * z.abs().max(1.0) {
                break;
            }
        }
        x[i] = z;
        x[n - 1 - i] = -z;
        w[i] = 2.0 / (pp * pp);
        w[n - 1 - i] = w[i];
    }
    let sqrt_pi = std::f64::consts::PI.sqrt();
    let nodes = x.iter().map(|x| std::f64::consts::SQRT_2 * x).collect();
    let ln_w = w.iter().map(|w| (w / sqrt_pi).ln()).collect();
    (nodes, ln_w)
}

/// Gauss–Kronrod G7/K15 nodes on [−1, 1] (QUADPACK `qk15`): the positive half, 0 last.
const XGK: [f64; 8] = [
    0.991_455_371_120_812_6,
    0.949_107_912_342_758_5,
    0.864_864_423_359_769_1,
    0.741_531_185_599_394_4,
    0.586_087_235_467_691_1,
    0.405_845_151_377_397_2,
    0.207_784_955_007_898_5,
    0.0,
];
/// Kronrod weights of [`XGK`].
const WGK: [f64; 8] = [
    0.022_935_322_010_529_22,
    0.063_092_092_629_978_55,
    0.104_790_010_322_250_2,
    0.140_653_259_715_525_9,
    0.169_004_726_639_267_9,
    0.190_350_578_064_785_4,
    0.204_432_940_075_298_9,
    0.209_482_141_084_727_8,
];
/// Gauss weights of the 7-point rule, at `XGK[1]`, `XGK[3]`, `XGK[5]`, `XGK[7]`.
const WG: [f64; 4] = [
    0.129_484_966_168_869_7,
    0.279_705_391_489_276_7,
    0.381_830_050_505_118_9,
    0.417_959_183_673_469_4,
];

/// K15 and G7 estimates of `∫_a^b f`.
fn kronrod(f: &impl Fn(f64) -> f64, a: f64, b: f64) -> (f64, f64) {
    let c = 0.5 * (a + b);
    let h = 0.5 * (b - a);
    let fc = f(c);
    let (mut k, mut g) = (WGK[7] * fc, WG[3] * fc);
    for i in 0..7 {
        let s = f(c - h * XGK[i]) + f(c + h * XGK[i]);
        k += WGK[i] * s;
        if i % 2 == 1 {
            g += WG[i / 2] * s;
        }
    }
    (k * h, g * h)
}

/// `∫_a^b f` by adaptive bisection until `|K15 − G7|` is below the interval's share of `tol`
/// (at most 40 levels deep).
fn adaptive(f: &impl Fn(f64) -> f64, a: f64, b: f64, tol: f64) -> f64 {
    let mut total = 0.0;
    let mut stack = vec![(a, b, tol, 0u32)];
    while let Some((a, b, tol, depth)) = stack.pop() {
        let (k, g) = kronrod(f, a, b);
        if (k - g).abs() <= tol || depth >= 40 {
            total += k;
        } else {
            let m = 0.5 * (a + b);
            stack.push((a, m, 0.5 * tol, depth + 1));
            stack.push((m, b, 0.5 * tol, depth + 1));
        }
    }
    total
}

/// `ln Σ exp(v_i)`.
fn log_sum_exp(v: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = v.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// `ln P(argmax_k s_k = j)` for independent scores `s_k ~ N(mean_k, sd_k²)` (ties, of
/// probability zero unless a spread is zero, count against j). `−∞` when class j cannot win.
pub fn ln_vote_probability(mean: &[f64], sd: &[f64], j: usize) -> f64 {
    debug_assert_eq!(mean.len(), sd.len());
    let Some((factors, lo)) = probit_factors(mean, sd, j) else {
        return f64::NEG_INFINITY;
    };
    if !(sd[j] > 0.0) {
        return ln_probit_product(&factors, 0.0);
    }
    let steep = factors.iter().any(|(a, _)| *a > GH_MAX_STEEPNESS);
    if lo == f64::NEG_INFINITY && !steep {
        // The log integrand ln φ + ln F is concave: its peak z* bounds where the mass lies.
        return if peak_is_central(&factors) {
            ln_gauss_hermite(&factors)
        } else {
            ln_peak_gauss_hermite(&factors)
        };
    }
    ln_gauss_kronrod(&factors, lo)
}

/// Class j's integrand `φ(z) Π_k Φ(a_k z + b_k)` on `z ≥ lo`: the factors `(a_k, b_k) =
/// (σ_j/σ_k, (m_j − m_k)/σ_k)` of the classes with spread, and the step `lo` that classes of
/// zero spread impose (s_j must exceed m_k). `None` when class j cannot win.
fn probit_factors(mean: &[f64], sd: &[f64], j: usize) -> Option<(Vec<(f64, f64)>, f64)> {
    let (mj, sj) = (mean[j], sd[j]);
    let mut lo = f64::NEG_INFINITY;
    let mut factors: Vec<(f64, f64)> = Vec::with_capacity(mean.len());
    for k in (0..mean.len()).filter(|&k| k != j) {
        if sd[k] > 0.0 {
            factors.push((sj / sd[k], (mj - mean[k]) / sd[k]));
        } else if sj > 0.0 {
            lo = lo.max((mean[k] - mj) / sj);
        } else if !(mj > mean[k]) {
            return None;
        }
    }
    Some((factors, lo))
}

/// `ln F(z) = Σ_k ln Φ(a_k z + b_k)`.
fn ln_probit_product(factors: &[(f64, f64)], z: f64) -> f64 {
    factors.iter().map(|(a, b)| ln_normal_cdf(a * z + b)).sum()
}

/// Derivative of the log integrand, `−z + Σ_k a_k φ(a_k z + b_k)/Φ(a_k z + b_k)`: decreasing.
fn log_integrand_slope(factors: &[(f64, f64)], z: f64) -> f64 {
    -z + factors
        .iter()
        .map(|(a, b)| a * inv_mills_ratio(a * z + b))
        .sum::<f64>()
}

/// Curvature of the log integrand, `1 + Σ_k a_k² κ(a_k z + b_k)` with κ the probit's
/// ([`normal_cdf_curvature`]): at least 1.
fn log_integrand_curvature(factors: &[(f64, f64)], z: f64) -> f64 {
    1.0 + factors
        .iter()
        .map(|(a, b)| a * a * normal_cdf_curvature(a * z + b))
        .sum::<f64>()
}

/// Whether the peak lies within [`GH_MAX_PEAK`] of 0, from the slope's signs at the two ends
/// (it decreases through zero at the peak): two evaluations instead of a search.
fn peak_is_central(factors: &[(f64, f64)]) -> bool {
    log_integrand_slope(factors, -GH_MAX_PEAK) >= 0.0
        && log_integrand_slope(factors, GH_MAX_PEAK) <= 0.0
}

/// `ln Σ_i w_i F(z_i)`, the Gauss–Hermite rule, its terms evaluated from the heaviest node
/// outwards and stopped once a weight is below `e^{−`[`PRUNE_LN_GAP`]`}` of the largest term
/// so far (as `F ≤ 1`, the nodes left out hold less than `64 e^{−40} ≈ 3e-16` of the sum),
/// then summed in the nodes' order, the full rule's: the same rounding, so models certified
/// before this pruning certify to the same bits.
fn ln_gauss_hermite(factors: &[(f64, f64)]) -> f64 {
    let (z, ln_w) = gauss_hermite();
    let mut terms = [f64::NEG_INFINITY; GH_NODES];
    let mut top = f64::NEG_INFINITY;
    for &i in heaviest_first() {
        if ln_w[i] < top - PRUNE_LN_GAP {
            break;
        }
        terms[i] = ln_w[i] + ln_probit_product(factors, z[i]);
        top = top.max(terms[i]);
    }
    log_sum_exp(terms.iter().copied())
}

/// The Gauss–Hermite nodes in decreasing order of weight (from the centre outwards).
fn heaviest_first() -> &'static [usize] {
    static ORDER: OnceLock<Vec<usize>> = OnceLock::new();
    ORDER.get_or_init(|| {
        let ln_w = &gauss_hermite().1;
        let mut order: Vec<usize> = (0..ln_w.len()).collect();
        order.sort_by(|&a, &b| ln_w[b].total_cmp(&ln_w[a]));
        order
    })
}

/// The integral by the Gauss–Hermite rule moved to the peak z* and scaled to its width
/// `s = c^{−1/2}` (c: the log integrand's curvature there; Liu & Pierce 1994):
/// `∫ g = s √(2π) g(z*) Σ_i w_i h(u_i)`, `h(u) = g(z* + s u)/g(z*) · e^{u²/2}`, flat to second
/// order at u = 0. For a far peak (a small vote probability) without steep factors; nodes are
/// pruned as in [`ln_gauss_hermite`], with the bound `ln h(u) ≤ (1 − s²) u²/2` that the
/// curvature ≥ 1 gives.
fn ln_peak_gauss_hermite(factors: &[(f64, f64)]) -> f64 {
    let peak = log_integrand_peak(factors);
    let ln_g = |z: f64| ln_normal_pdf(z) + ln_probit_product(factors, z);
    let m = ln_g(peak);
    if m == f64::NEG_INFINITY {
        return m;
    }
    let s = log_integrand_curvature(factors, peak).sqrt().recip();
    let (u, ln_w) = gauss_hermite();
    let mut terms = [f64::NEG_INFINITY; GH_NODES];
    let mut top = f64::NEG_INFINITY;
    for (t, &i) in terms.iter_mut().zip(heaviest_first()) {
        if ln_w[i] + (1.0 - s * s) * 0.5 * u[i] * u[i] < top - PRUNE_LN_GAP {
            continue;
        }
        *t = ln_w[i] + ln_g(peak + s * u[i]) - m + 0.5 * u[i] * u[i];
        top = top.max(*t);
    }
    m + s.ln() + LN_SQRT_2PI + log_sum_exp(terms.iter().copied())
}

/// The integral by adaptive Gauss–Kronrod over the 12 units either side of the peak, cut at
/// `lo` (module doc): for steep factors and steps.
fn ln_gauss_kronrod(factors: &[(f64, f64)], lo: f64) -> f64 {
    let peak = log_integrand_peak(factors).max(lo);
    // Peak-scaled integrand exp(ln φ + ln F − M) over z* ± 12 (curvature ≥ 1, so the rest
    // holds less than e^{−72} of it), cut at the step lo.
    let ln_g = |z: f64| ln_normal_pdf(z) + ln_probit_product(factors, z);
    let m = ln_g(peak);
    if m == f64::NEG_INFINITY {
        return m;
    }
    let a = lo.max(peak - PEAK_HALF_WIDTH);
    let integral = adaptive(&|z| (ln_g(z) - m).exp(), a, peak + PEAK_HALF_WIDTH, 1e-13);
    m + integral.ln()
}

/// The maximiser of the concave `ln φ(z) + Σ_k ln Φ(a_k z + b_k)`: Newton's method on its
/// decreasing derivative [`log_integrand_slope`], kept inside a bracket that bisection
/// shrinks whenever a Newton step would leave it (a handful of steps, not ~45 bisections).
fn log_integrand_peak(factors: &[(f64, f64)]) -> f64 {
    let slope = |z: f64| log_integrand_slope(factors, z);
    let (mut lo, mut hi) = (-1.0, 1.0);
    while slope(lo) < 0.0 && lo > -1e6 {
        lo *= 2.0;
    }
    while slope(hi) > 0.0 && hi < 1e6 {
        hi *= 2.0;
    }
    let mut z = 0.0;
    for _ in 0..100 {
        let d = slope(z);
        if d > 0.0 {
            lo = z;
        } else {
            hi = z;
        }
        let newton = z + d / log_integrand_curvature(factors, z);
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        let tol = 1e-12 * (1.0 + z.abs());
        if (next - z).abs() < tol || hi - lo < tol {
            return next;
        }
        z = next;
    }
    z
}

/// `ln P(argmax_k s_k = j)` for every class j.
pub fn ln_vote_probabilities(mean: &[f64], sd: &[f64]) -> Vec<f64> {
    (0..mean.len())
        .map(|j| ln_vote_probability(mean, sd, j))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::normal_cdf;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn hermite_rule_integrates_moments() {
        let (z, ln_w) = gauss_hermite();
        let w: Vec<f64> = ln_w.iter().map(|l| l.exp()).collect();
        let moment = |p: i32| -> f64 { z.iter().zip(&w).map(|(z, w)| w * z.powi(p)).sum() };
        assert!((moment(0) - 1.0).abs() < 1e-13, "{}", moment(0));
        assert!(moment(1).abs() < 1e-13);
        assert!((moment(2) - 1.0).abs() < 1e-12);
        assert!((moment(4) - 3.0).abs() < 1e-11);
        assert!((moment(8) - 105.0).abs() < 1e-9);
    }

    #[test]
    fn kronrod_integrates_polynomials_and_the_normal_density() {
        let (k, _) = kronrod(&|x: f64| x.powi(10), 0.0, 1.0);
        assert!((k - 1.0 / 11.0).abs() < 1e-15);
        let p = adaptive(&|z| crate::special::normal_pdf(z), -1.0, 2.0, 1e-14);
        assert!((p - (normal_cdf(2.0) - normal_cdf(-1.0))).abs() < 1e-13);
    }

    /// Two classes: `P(s_1 > s_0) = Φ((m_1 − m_0)/√(σ_0² + σ_1²))`, smooth and steep alike.
    #[test]
    fn two_classes_match_the_closed_form() {
        for &(m0, m1, s0, s1) in &[
            (0.0f64, 0.0f64, 1.0f64, 1.0f64),
            (0.3, -0.2, 1.0, 0.7),
            (1.5, 0.0, 0.2, 3.0),
            (0.0, 0.1, 3.0, 0.05),
            (-4.0, 4.0, 0.5, 0.5),
            (30.0, 0.0, 1.0, 1.0),
        ] {
            let want = normal_cdf((m1 - m0) / (s0 * s0 + s1 * s1).sqrt());
            let got = ln_vote_probability(&[m0, m1], &[s0, s1], 1).exp();
            assert!(
                (got - want).abs() < 1e-11,
                "{m0} {m1} {s0} {s1}: {got} vs {want}"
            );
            let ln_want = ln_normal_cdf((m1 - m0) / (s0 * s0 + s1 * s1).sqrt());
            let ln_got = ln_vote_probability(&[m0, m1], &[s0, s1], 1);
            assert!((ln_got - ln_want).abs() < 1e-9 * ln_want.abs().max(1.0));
        }
    }

    /// Random scores of 2 to 6 classes, spreads within the Gauss–Hermite steepness (means
    /// far enough apart that many vote probabilities are tiny, their peaks far out).
    fn random_scores(rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>) {
        let k = rng.gen_range(2..=6);
        let mean = (0..k).map(|_| rng.gen_range(-8.0..8.0)).collect();
        let sd = (0..k)
            .map(|_| rng.gen_range(-0.69..0.69f64).exp())
            .collect();
        (mean, sd)
    }

    /// The Gauss–Hermite paths against adaptive Gauss–Kronrod, the rule every far peak was
    /// integrated by before: moved to the peak, ln P within 1e-10 (P within 1e-10 relative
    /// however small), central peaks included; the fixed rule at a central peak (pruned), P
    /// within its 1e-8 absolute (its error grows to ~3e-9 as `σ_j/σ_k` nears 2).
    #[test]
    fn hermite_paths_match_kronrod_on_random_scores() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let (mut central, mut far) = (0, 0);
        for _ in 0..3000 {
            let (mean, sd) = random_scores(&mut rng);
            let fast = ln_vote_probabilities(&mean, &sd);
            for (j, &got) in fast.iter().enumerate() {
                let (factors, lo) = probit_factors(&mean, &sd, j).unwrap();
                if factors.iter().any(|(a, _)| *a > GH_MAX_STEEPNESS) {
                    continue;
                }
                let want = ln_gauss_kronrod(&factors, lo);
                let moved = ln_peak_gauss_hermite(&factors);
                assert!((moved - want).abs() < 1e-10, "{mean:?} {sd:?} class {j}");
                let close = if peak_is_central(&factors) {
                    central += 1;
                    (got.exp() - want.exp()).abs() < 1e-8
                } else {
                    far += 1;
                    (got - want).abs() < 1e-10
                };
                assert!(close, "{mean:?} {sd:?} class {j}: {got} vs {want}");
            }
        }
        assert!(central > 1000 && far > 1000, "{central} central, {far} far");
    }

    /// The pruned Gauss–Hermite sum against every node's: the nodes left out are below 3e-16
    /// of the sum.
    #[test]
    fn pruned_hermite_matches_every_node() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (z, ln_w) = gauss_hermite();
        for _ in 0..2000 {
            let (mean, sd) = random_scores(&mut rng);
            for j in 0..mean.len() {
                let (factors, _) = probit_factors(&mean, &sd, j).unwrap();
                let every =
                    log_sum_exp((0..z.len()).map(|i| ln_w[i] + ln_probit_product(&factors, z[i])));
                let pruned = ln_gauss_hermite(&factors);
                assert!(
                    (pruned - every).abs() < 1e-14 * every.abs().max(1.0),
                    "{pruned} vs {every}"
                );
            }
        }
    }

    /// Newton's peak against plain bisection on the slope.
    #[test]
    fn newton_peak_matches_bisection() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..500 {
            let (mean, sd) = random_scores(&mut rng);
            let (factors, _) = probit_factors(&mean, &sd, 0).unwrap();
            let (mut lo, mut hi) = (-1e3, 1e3);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if log_integrand_slope(&factors, mid) > 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let peak = log_integrand_peak(&factors);
            assert!(
                (peak - lo).abs() < 1e-9 * (1.0 + lo.abs()),
                "{peak} vs {lo}"
            );
        }
    }

    #[test]
    fn zero_spread_scores_are_steps() {
        // Class 1 has no spread: class 0 wins when s_0 > 0.5.
        let p = ln_vote_probability(&[0.0, 0.5], &[1.0, 0.0], 0).exp();
        assert!((p - normal_cdf(-0.5)).abs() < 1e-12, "{p}");
        // Both without spread: a deterministic argmax.
        assert_eq!(ln_vote_probability(&[1.0, 0.5], &[0.0, 0.0], 0), 0.0);
        assert_eq!(
            ln_vote_probability(&[1.0, 0.5], &[0.0, 0.0], 1),
            f64::NEG_INFINITY
        );
    }
}
