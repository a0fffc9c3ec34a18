//! The test-set bound by binomial tail inversion against scipy: the Clopper–Pearson upper
//! limit, the `1 − δ` quantile of `Beta(k + 1, n − k)` (`beta.isf(δ, k + 1, n − k)`, which is
//! `beta.ppf(1 − δ, …)` without losing a tiny δ in `1 − δ`), and the binomial CDF, from
//! `fixtures/binomial_tail.json` (made by `fixtures/gen_binomial_tail.py`): k = 0, k = n,
//! n = 1, n up to 10⁶, δ down to 1e-15.

use pacgp::bounds::{binomial_tail_inversion, ln_binomial_cdf};
use serde_json::Value;

mod common;

fn fixture() -> Value {
    common::fixture("binomial_tail.json")
}

fn field(case: &Value, name: &str) -> f64 {
    case[name].as_f64().unwrap()
}

/// A case's `(k, n, third)`: errors, rows and the field named `third` (δ or p).
fn case_of(case: &Value, third: &str) -> (usize, usize, f64) {
    let count = |name| field(case, name) as usize;
    (count("k"), count("n"), field(case, third))
}

/// scipy's `beta.isf` is itself an iterative inversion (Boost's, to a few ulps); the
/// bisection stops within 4 ulps of p̄, and the CDF's `ln Γ` terms carry about one ulp of
/// `ln n!` (≈ 2e-16·n ln n) of absolute error, which moves p̄ by far less than 1e-10 relative
/// at these n (the CDF's slope in p is steep where it crosses δ).
const REL: f64 = 1e-10;

/// The CDF itself carries the `ln Γ` error undamped: ≈ 2e-16·n ln n relative, 3e-10 at
/// n = 10⁵.
fn cdf_tolerance(n: usize) -> f64 {
    let nf = n as f64;
    (4e-16 * nf * nf.ln()).max(1e-14)
}

#[test]
fn inversion_matches_scipy_clopper_pearson() {
    let f = fixture();
    let mut failures = Vec::new();
    for case in f["inversion"].as_array().unwrap() {
        let (k, n, delta) = case_of(case, "delta");
        let want = field(case, "upper");
        let got = binomial_tail_inversion(k, n, delta).unwrap();
        if (got - want).abs() > REL * want {
            failures.push(format!(
                "k = {k}, n = {n}, δ = {delta}: {got} against scipy's {want}"
            ));
        }
        // What the bound is: k or fewer errors still have probability δ at p̄ (not checked
        // within 1e-6 of 1, where p̄ is a few ulps from 1 and 1 − p̄ has no digits left).
        if k < n && want < 1.0 - 1e-6 {
            let at = ln_binomial_cdf(k, n, want).exp();
            if (at - delta).abs() > 1e-7 * delta {
                failures.push(format!(
                    "k = {k}, n = {n}: CDF at scipy's p̄ is {at}, not δ = {delta}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn cdf_matches_scipy() {
    let f = fixture();
    for case in f["cdf"].as_array().unwrap() {
        let (k, n, p) = case_of(case, "p");
        let want = field(case, "cdf");
        let got = ln_binomial_cdf(k, n, p).exp();
        assert!(
            (got - want).abs() <= cdf_tolerance(n) * want,
            "P(Bin({n}, {p}) ≤ {k}) = {got}, scipy {want}"
        );
    }
}

#[test]
fn bound_never_falls_below_the_held_out_error_and_grows_as_delta_shrinks() {
    for (k, n) in [(0, 5), (2, 5), (17, 200), (199, 200)] {
        let mut last = 0.0;
        for delta in [0.5, 0.1, 0.01, 1e-6] {
            let b = binomial_tail_inversion(k, n, delta).unwrap();
            assert!(b >= k as f64 / n as f64, "k = {k}, n = {n}, δ = {delta}");
            assert!(b >= last && b <= 1.0);
            last = b;
        }
    }
}
