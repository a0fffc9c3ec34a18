//! The probit's tail functions and tilted moments at extreme arguments (issue 43, item 5):
//! `ln Φ`, `φ/Φ`, the curvature `r(z + r)` for z from −10⁸ to 40, and the tilted moments
//! `(ln Z, ∂ln Z/∂μ, ∂²ln Z/∂μ²)` that EP, ADF/IVM and the sparse online GP use, for means in
//! the thousands and variances up to 10¹², against `fixtures/probit_moments.json` (mpmath at
//! 60 digits, made by `fixtures/gen_probit_moments.py`).

use pacgp::likelihood::Likelihood;
use pacgp::special::{inv_mills_ratio, ln_normal_cdf, normal_cdf_curvature};
use serde_json::Value;

mod common;

fn fixture() -> Value {
    common::fixture("probit_moments.json")
}

fn field(case: &Value, name: &str) -> f64 {
    case[name].as_f64().unwrap()
}

/// The bar: 1e-10 relative. The f64 argument z itself carries half an ulp, which
/// moves ln Φ ≈ −z²/2 by about one ulp relative, far inside it.
const REL: f64 = 1e-10;

/// Below this magnitude a reference is subnormal or zero in f64 (φ/Φ at z = 38.5 is 5e-323)
/// and only its absolute size can be checked.
const TINY: f64 = 1e-290;

/// `got` equals `want` to [`REL`] relative, or both are below [`TINY`].
fn assert_close(got: f64, want: f64, what: &str) {
    assert!(got.is_finite(), "{what}: {got} is not finite");
    let err = (got - want).abs();
    assert!(
        err <= REL * want.abs() || (want.abs() < TINY && got.abs() < TINY),
        "{what}: {got:e} vs {want:e} (relative {:.2e})",
        err / want.abs()
    );
}

/// `ln Φ`, `φ/Φ` and the curvature match the reference at every fixture point, from the far
/// lower tail (where the curvature's `z + r` cancels completely in plain f64) to the upper.
#[test]
fn tail_functions_match_mpmath() {
    let tails = fixture()["tails"].as_array().unwrap().clone();
    assert!(tails.len() >= 20);
    for case in &tails {
        let z = field(case, "z");
        assert_close(
            ln_normal_cdf(z),
            field(case, "ln_cdf"),
            &format!("ln Φ({z})"),
        );
        assert_close(
            inv_mills_ratio(z),
            field(case, "ratio"),
            &format!("φ/Φ({z})"),
        );
        assert_close(
            normal_cdf_curvature(z),
            field(case, "curvature"),
            &format!("r(z + r) at {z}"),
        );
    }
}

/// The probit's tilted moments (GPML eq. 3.82) match the reference for means in the
/// thousands, variances from 0 to 10¹² and both labels.
#[test]
fn probit_tilted_moments_match_mpmath() {
    let lik = Likelihood::probit();
    let moments = fixture()["moments"].as_array().unwrap().clone();
    assert!(moments.len() >= 10);
    for case in &moments {
        let (y, mu, var) = (field(case, "y"), field(case, "mu"), field(case, "var"));
        let t = lik.tilted_moments(y, mu, var).unwrap();
        let at = format!("y = {y}, μ = {mu}, v = {var}");
        assert_close(t.ln_z, field(case, "ln_z"), &format!("ln Z at {at}"));
        assert_close(t.d1, field(case, "d1"), &format!("∂ln Z/∂μ at {at}"));
        assert_close(t.d2, field(case, "d2"), &format!("∂²ln Z/∂μ² at {at}"));
    }
}

/// On a dense grid z ∈ [−40, 40] and far beyond (to −10³⁰⁰, where z² overflows but the
/// curvature does not), the curvature is finite and in [0, 1] (1 − 1/z² rounds to 1 far out), and −(ln Φ)'' agrees with a
/// central difference of φ/Φ (r' = −r(z + r)) where that difference is well conditioned.
#[test]
fn curvature_is_in_range_and_the_derivative_of_the_ratio() {
    let grid = (0..=8000).map(|i| -40.0 + i as f64 * 0.01);
    let far = [-1e300, -1e200, -3e219, -1e20, -1e10];
    for z in grid.chain(far) {
        let c = normal_cdf_curvature(z);
        assert!(
            c.is_finite() && (0.0..=1.0).contains(&c),
            "curvature {c} at {z:e}"
        );
        assert!(inv_mills_ratio(z).is_finite(), "φ/Φ at {z:e}");
    }
    // h = 1e-4: the central difference's error is h²·r'''/6 ≲ 2e-9 on |z| ≤ 40, and its
    // rounding ≈ ε·r/h ≲ 1e-10; 1e-7 relative covers both where r' is not tiny.
    let h = 1e-4;
    for i in 0..=160 {
        let z = -40.0 + i as f64 * 0.3;
        let want = normal_cdf_curvature(z);
        if want < 1e-6 {
            continue;
        }
        let fd = -(inv_mills_ratio(z + h) - inv_mills_ratio(z - h)) / (2.0 * h);
        assert!((fd - want).abs() <= 1e-7 * want, "z = {z}: {fd} vs {want}");
    }
}

/// A runaway mean (−3·10²¹⁹, the credit table's) keeps the derivatives finite and of the right
/// sign (∂²ln Z/∂μ² in [−1/s², 0)): only ln Z, which is −z²/2 beyond f64's range, is −∞.
#[test]
fn moments_at_a_runaway_mean_keep_finite_derivatives() {
    let t = Likelihood::probit()
        .tilted_moments(1.0, -3.0e219, 1.0)
        .unwrap();
    assert_eq!(t.ln_z, f64::NEG_INFINITY);
    assert!(t.d1.is_finite() && t.d1 > 0.0, "{t:?}");
    assert!(t.d2 < 0.0 && t.d2 >= -0.5, "{t:?}");
}
