//! Unit tests of `crate::inference::sogp`, in a file of their own beside the code.

use super::*;

/// The longest run of digits in `s`.
fn longest_digit_run(s: &str) -> usize {
    s.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// A marginal mean that has run away (−3·10²¹⁹, the one of issue 43's credit table) makes
/// ln Z = −∞: the error is the user's to act on, prints its numbers in short form and says
/// what to try (it printed the 220-digit mean in full, as a plain numerical failure).
#[test]
fn runaway_moments_are_a_short_breakdown_with_advice() {
    let lik = Likelihood::probit();
    let mut state = Sogp::new(&Kernel::se_iso(1.0, 1.0), &lik, &SogpConfig::default()).unwrap();
    let p = Probe {
        k: Vec::new(),
        kxx: 1.0,
        ck: Vec::new(),
        mean: -3.006_648_802_014_267_4e219,
        var: 1.0,
    };
    let e = state.moments(1.0, &p).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NumericalBreakdown {
                what: "SOGP tilted moments",
                ..
            }
        ),
        "{e:?}"
    );
    let m = e.to_string();
    assert!(longest_digit_run(&m) <= 20, "{m}");
    for part in ["ln Z = -inf", "-3.0066e219", "outliers", "laplace"] {
        assert!(m.contains(part), "{m} lacks {part}");
    }
}

/// Deleting the newest basis vector right after its full update is exactly the reduced
/// update (Csató–Opper 2002: the reduced update is the projection of the full one).
#[test]
fn deleting_the_newest_vector_equals_the_reduced_update() {
    let kernel = Kernel::se_iso(0.8, 1.5);
    let lik = Likelihood::probit_with(1.4, 0.1).unwrap();
    let cfg = SogpConfig {
        novelty_tol: 0.0,
        max_basis: 50,
        ..Default::default()
    };
    let mut a = Sogp::new(&kernel, &lik, &cfg).unwrap();
    for i in 0..6 {
        let x = [0.5 * i as f64, (i as f64).sin()];
        a.update(&x, if i % 2 == 0 { 1.0 } else { -1.0 }, i)
            .unwrap();
    }
    let mut b = a.clone();
    let x = [1.1, 0.3];
    a.full_update(&x, -1.0, 6).unwrap();
    a.delete(6).unwrap();
    assert!(a.delete(6).is_err());
    b.reduced_update(&x, -1.0).unwrap();
    let tol = 1e-10;
    for i in 0..6 {
        assert!((a.alpha()[i] - b.alpha()[i]).abs() < tol);
        for j in 0..6 {
            assert!((a.c()[(i, j)] - b.c()[(i, j)]).abs() < tol);
            assert!((a.q()[(i, j)] - b.q()[(i, j)]).abs() < tol * 1e2);
        }
    }
}

/// After full updates and deletions at every position (first, middle, newest), the kept
/// factor still satisfies `L Lᵀ = K_B` of the current basis (recomputed from the inputs)
/// and is lower triangular with a positive diagonal.
#[test]
fn the_cholesky_factor_follows_growth_and_deletions() {
    let kernel = Kernel::se_iso(0.9, 1.3);
    let cfg = SogpConfig {
        novelty_tol: 0.0,
        max_basis: 50,
        ..Default::default()
    };
    let mut state = Sogp::new(&kernel, &Likelihood::probit(), &cfg).unwrap();
    for i in 0..9 {
        let x = [0.4 * i as f64, (1.7 * i as f64).cos()];
        state
            .full_update(&x, if i % 3 == 0 { 1.0 } else { -1.0 }, i)
            .unwrap();
    }
    for j in [0, 3, 6] {
        state.delete(j).unwrap();
        let kb = kernel.gram(state.basis_matrix().as_ref()).unwrap();
        let l = state.chol.as_ref();
        let m = state.n_basis();
        for a in 0..m {
            assert!(l[(a, a)] > 0.0);
            for b in 0..m {
                if b > a {
                    assert_eq!(l[(a, b)], 0.0);
                }
                let llt: f64 = (0..m).map(|t| l[(a, t)] * l[(b, t)]).sum();
                assert!(
                    (llt - kb[(a, b)]).abs() < 1e-12,
                    "{a} {b}: {llt} vs {}",
                    kb[(a, b)]
                );
            }
        }
    }
}
