//! Unit tests of `crate::bounds`, in a file of their own beside the code.

use super::*;

/// The PAC-Bayes lower bound is `kl⁻¹_low` of the complexity: against scipy's
/// `brentq(lambda x: kl(q‖x) − C, 1e-15, q)` (values computed once with scipy 1.x) and an
/// independent bisection here; Catoni's is `1 −` Catoni's bound on `1 − R_S`.
#[test]
fn the_lower_bound_matches_scipy_and_a_bisection() {
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
        let target = BoundTarget::new(delta, ConfidenceTerm::Maurer, BoundKind::Kl, penalty);
        let low = target.unwrap().lower(risk, k, n).unwrap();
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
    let target = BoundTarget::new(0.01, term, BoundKind::Kl, 0.0).unwrap();
    let low = target.lower(0.2, 3.0, 200).unwrap();
    let c = complexity(3.0, 200, 0.01, 0.0, term);
    assert!((low - (1.0 - catoni_bound(0.8, c, 2.0))).abs() < 1e-12);
    assert!(target.lower(1.2, 3.0, 200).is_err());
    assert!(BoundTarget::new(0.01, term, BoundKind::Kl, f64::INFINITY).is_err());
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
            assert!((t.at_with(r, kl, n, 1.0).value - t.at(r, kl + 1.0, n).value).abs() < 1e-14);
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
            ConfidenceTerm::Seeger.value(n, 0.05) >= ConfidenceTerm::Maurer.value(n, 0.05) - 1e-15
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
