//! One-dimensional quadrature of the vote probabilities of K independent Gaussian class
//! scores `s_k ~ N(m_k, σ_k²)`:
//!
//! `P(argmax_k s_k = j) = ∫ φ(z) Π_{k≠j} Φ((m_j + σ_j z − m_k)/σ_k) dz`
//!
//! (condition on `s_j = m_j + σ_j z`; the others are independent). The integrand is
//! `φ(z) F(z)` with `F` a product of probits rising with z; the factor of class k rises over a
//! width `σ_k/σ_j` in z. When no factor is steeper than [`GH_MAX_STEEPNESS`] (`σ_j ≤ 2σ_k`
//! for every k), a 64-node Gauss–Hermite rule is exact to about 1e-12; steeper factors (a
//! class whose score is far less spread than class j's, or a score with no spread at all)
//! make it inaccurate (1e-3 at a ratio of 8), and so does an integrand whose mass lies far
//! out in the rule's thin tail (a vote probability of 1e-100 peaks near z = 15). Those
//! integrals are done by adaptive Gauss–Kronrod (G7/K15) on the 12 units either side of the
//! integrand's peak (the log integrand is concave with curvature ≥ 1, so that holds all but
//! e^{−72} of it), to an absolute 1e-13 of the peak-scaled integrand, with a factor of zero
//! spread turned into the lower limit `lo` it imposes. Both are done in log space (`ln Φ`
//! from [`crate::special::ln_normal_cdf`]), so a vote probability of 1e-300 is still its own
//! number.

use std::sync::OnceLock;

use crate::special::{inv_mills_ratio, ln_normal_cdf, ln_normal_pdf};

/// Number of Gauss–Hermite nodes.
pub const GH_NODES: usize = 64;

/// Largest `σ_j/σ_k` integrated by Gauss–Hermite (error below 1e-12 at 64 nodes).
pub const GH_MAX_STEEPNESS: f64 = 2.0;

/// Gauss–Hermite is used only when the integrand peaks within this distance of 0, where
/// its nodes are dense (a tiny vote probability peaks far out, in the rule's thin tail).
pub const GH_MAX_PEAK: f64 = 2.0;

/// Half-width around the integrand's peak integrated by Gauss–Kronrod.
const PEAK_HALF_WIDTH: f64 = 12.0;

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
    let (mj, sj) = (mean[j], sd[j]);
    // Steps from scores of zero spread: s_j must exceed m_k.
    let mut lo = f64::NEG_INFINITY;
    let mut factors: Vec<(f64, f64)> = Vec::with_capacity(mean.len());
    for k in (0..mean.len()).filter(|&k| k != j) {
        if sd[k] > 0.0 {
            // Φ(a z + b), a = σ_j/σ_k, b = (m_j − m_k)/σ_k.
            factors.push((sj / sd[k], (mj - mean[k]) / sd[k]));
        } else if sj > 0.0 {
            lo = lo.max((mean[k] - mj) / sj);
        } else if !(mj > mean[k]) {
            return f64::NEG_INFINITY;
        }
    }
    let ln_f = |z: f64| -> f64 { factors.iter().map(|(a, b)| ln_normal_cdf(a * z + b)).sum() };
    if !(sj > 0.0) {
        return ln_f(0.0);
    }
    // The log integrand ln φ + ln F is concave: its peak z* bounds where the mass lies.
    let peak = log_integrand_peak(&factors).max(lo);
    let steep = factors.iter().any(|(a, _)| *a > GH_MAX_STEEPNESS);
    if lo == f64::NEG_INFINITY && !steep && peak.abs() <= GH_MAX_PEAK {
        let (z, ln_w) = gauss_hermite();
        return log_sum_exp((0..z.len()).map(|i| ln_w[i] + ln_f(z[i])));
    }
    // Peak-scaled integrand exp(ln φ + ln F − M) over z* ± 12 (curvature ≥ 1, so the rest
    // holds less than e^{−72} of it), cut at the step lo.
    let ln_g = |z: f64| ln_normal_pdf(z) + ln_f(z);
    let m = ln_g(peak);
    if m == f64::NEG_INFINITY {
        return m;
    }
    let a = lo.max(peak - PEAK_HALF_WIDTH);
    let integral = adaptive(&|z| (ln_g(z) - m).exp(), a, peak + PEAK_HALF_WIDTH, 1e-13);
    m + integral.ln()
}

/// The maximiser of the concave `ln φ(z) + Σ_k ln Φ(a_k z + b_k)`, by bisection on its
/// decreasing derivative `−z + Σ_k a_k φ(a_k z + b_k)/Φ(a_k z + b_k)`.
fn log_integrand_peak(factors: &[(f64, f64)]) -> f64 {
    let slope = |z: f64| -> f64 {
        -z + factors
            .iter()
            .map(|(a, b)| a * inv_mills_ratio(a * z + b))
            .sum::<f64>()
    };
    let (mut lo, mut hi) = (-1.0, 1.0);
    while slope(lo) < 0.0 && lo > -1e6 {
        lo *= 2.0;
    }
    while slope(hi) > 0.0 && hi < 1e6 {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if slope(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * (1.0 + mid.abs()) {
            break;
        }
    }
    0.5 * (lo + hi)
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
