//! Unit tests of `crate::experiments::tighter_bounds`, in a file of their own beside the code.

use super::*;

fn row(lever: Lever, rep: usize, bound: f64, test_gibbs: f64) -> TighterRow {
    TighterRow {
        dataset: "d".into(),
        kernel: KernelChoice::SeIso,
        lever: lever.name().into(),
        rep,
        bound,
        train_gibbs: 0.0,
        test_gibbs,
        test_mse: 1.0,
        n_test: 100,
        kl: 2.0,
        penalty: 3.0,
        n_bound: 10,
        fraction: 0.0,
        seconds: 0.0,
    }
}

/// Means, standard errors, the per-split relative bound and the worst excess, by hand.
#[test]
fn summary_by_hand() {
    let rows = vec![
        row(Lever::Reference, 0, 0.4, 0.1),
        row(Lever::SplitPrior, 0, 0.2, 0.15),
        row(Lever::Reference, 1, 0.5, 0.2),
        row(Lever::SplitPrior, 1, 0.4, 0.1),
    ];
    let s = summarise(&rows);
    assert_eq!(s.len(), 2);
    let split = &s[1];
    assert_eq!(split.lever, "split-prior");
    assert!((split.bound - 0.3).abs() < 1e-15);
    // sd of {0.2, 0.4} is √0.02, se = √0.02/√2 = 0.1.
    assert!((split.bound_se - 0.1).abs() < 1e-12);
    // rel = mean(0.2/0.4 − 1, 0.4/0.5 − 1) = mean(−0.5, −0.2) = −0.35.
    assert!((split.rel_to_reference + 0.35).abs() < 1e-12);
    assert!((split.worst_test_minus_bound + 0.05).abs() < 1e-12);
    // The 99% lower limits of 0.15 and 0.1 on 100 points, kl⁻¹_low(·, ln(100)/100).
    let low = |r: f64| crate::special::kl_inverse_lower(r, 100f64.ln() / 100.0);
    let want = (low(0.15) - 0.2).max(low(0.1) - 0.4);
    assert!((split.worst_test_lower_minus_bound - want).abs() < 1e-15);
    assert!(want < split.worst_test_minus_bound);
    assert_eq!(s[0].rel_to_reference, 0.0);
}
