//! End-to-end tests of the issue-15 levers on the command line: `fit --prior split:…`,
//! `--hyper-prior`, `--xi`; `certify` reproduces the bound stored at fit time (also from the
//! training rows in another order); options that do not apply exit with status 2.

use std::path::Path;

mod common;
use common::{
    assert_reproduce_rejects_unknown_dataset, certify_with, fails, json, pacgp, repo,
    reproduce_json, s, words,
};

const DATA: &str = "data/snelson-1d/snelson_train.csv";

/// Fit with `extra` options, then certify (default options and rows reversed): both give the
/// fit's objective; returns the certificate.
fn fit_and_certify(dir: &Path, extra: &[&str]) -> serde_json::Value {
    fit_and_certify_method(dir, "pac-gp", extra)
}

/// [`fit_and_certify`] with another `--method`.
fn fit_and_certify_method(dir: &Path, method: &str, extra: &[&str]) -> serde_json::Value {
    let model = dir.join("m.json");
    let mut args = vec!["fit", "--data", DATA, "--kernel", "se", "--method", method];
    args.extend_from_slice(&["--epsilon", "0.5", "--out", s(&model), "--json"]);
    args.extend_from_slice(extra);
    let fit = json(&pacgp(&args));
    let cert = certify_with(&model, DATA, &["--loo", "none"]);
    let (b, want) = (
        cert["bound"].as_f64().unwrap(),
        fit["objective"].as_f64().unwrap(),
    );
    assert!((b - want).abs() < 1e-12, "certify {b} vs fit {want}");
    // The same rows in reverse order: the split is made on the rows' canonical order.
    let text = std::fs::read_to_string(repo().join(DATA)).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1..].reverse();
    let rev = dir.join("rev.csv");
    std::fs::write(&rev, lines.join("\n") + "\n").unwrap();
    let again = certify_with(&model, s(&rev), &["--loo", "none"]);
    assert!((again["bound"].as_f64().unwrap() - b).abs() < 1e-12);
    cert
}

/// The certificates of `split:auto` and of `split:0.5 --xi sharp` on the 200 points: part B
/// of 140, 100 or 60 points with `ln 3` for the menu; 100 points, no penalty and the sharp
/// constant for the fixed fraction.
fn assert_menu_and_fixed_split(menu: &serde_json::Value, fixed: &serde_json::Value) {
    let n = menu["n"].as_u64().unwrap();
    assert!([140, 100, 60].contains(&n), "N_B = {n}");
    assert!((menu["penalty"].as_f64().unwrap() - 3f64.ln()).abs() < 1e-12);
    assert_eq!(fixed["n"].as_u64().unwrap(), 100);
    assert_eq!(fixed["penalty"].as_f64().unwrap(), 0.0);
    assert_eq!(fixed["confidence_term"], "sharp");
}

#[test]
fn split_prior_model_certifies_on_part_b_and_reproduces_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let cert = fit_and_certify(dir.path(), &["--prior", "split:auto", "--seed", "3"]);
    let fixed = fit_and_certify(dir.path(), &["--prior", "split:0.5", "--xi", "sharp"]);
    assert_menu_and_fixed_split(&cert, &fixed);
}

/// PAC-SGP with the sparse split prior (VFE with M = 10 on part A): `certify` rebuilds Q from
/// the stored P_A and split and reproduces the bound on part B, also from reversed rows.
#[test]
fn sparse_split_prior_model_certifies_on_part_b_and_reproduces_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let extra = ["--inducing", "10", "--prior", "split:auto", "--seed", "3"];
    let cert = fit_and_certify_method(dir.path(), "pac-sgp", &extra);
    let what = cert["penalty_terms"][0]["what"].as_str().unwrap();
    assert!(what.contains("VFE posterior (M = 10)"), "{what}");
    let extra = ["--inducing", "10", "--prior", "split:0.5", "--xi", "sharp"];
    let fixed = fit_and_certify_method(dir.path(), "pac-sgp", &extra);
    assert_menu_and_fixed_split(&cert, &fixed);
}

#[test]
fn hyper_prior_and_sharp_constant_are_stored_and_reused_by_certify() {
    let dir = tempfile::tempdir().unwrap();
    let cert = fit_and_certify(dir.path(), &["--hyper-prior", "gaussian", "--xi", "sharp"]);
    assert_eq!(cert["confidence_term"], "sharp");
    assert_eq!(cert["n"].as_u64().unwrap(), 200);
    let what = cert["penalty_terms"][0]["what"].as_str().unwrap();
    assert!(what.contains("Gaussian"), "{what}");
    // Far below the paper grid's 2·ln 1201 = 14.18 nats.
    assert!(cert["penalty"].as_f64().unwrap() < 10.0);
}

#[test]
fn levers_that_do_not_apply_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("x.json");
    for args in [
        words("--method pac-sgp-sqrt --epsilon 0.5 --prior split:0.5"),
        words("--method gpr --xi sharp"),
        words("--method gpr --hyper-prior uniform"),
        words("--method pac-gp --epsilon 0.5 --prior split:1.5"),
        words("--method pac-gp --epsilon 0.5 --prior split:auto --hyper-prior gaussian"),
    ] {
        let mut a = vec!["fit", "--data", DATA, "--out", s(&m)];
        a.extend(args.iter());
        fails(&a, 2);
    }
}

// --- classifier rows of `reproduce tighter-bounds` (issue 15 item 6) ---

/// A quick run on crabs alone: CSV and JSON files, five methods on two splits, every bound
/// above the held-out Gibbs error (δ = 0.01), the summary's relative column and worst excess
/// consistent with the rows.
#[test]
fn reproduce_tighter_bounds_writes_the_classifier_rows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let v = reproduce_json(&out, &["tighter-bounds", "--quick", "--datasets", "crabs"]);
    let rows = v["rows"].as_array().unwrap();
    let methods = [
        "laplace-bound",
        "pac-gpc",
        "split-prior",
        "split-prior+catoni",
        "split-prior+catoni+scale",
        "split-prior+catoni+scale+iso",
        "split-prior+catoni+scale+iso+swap",
    ];
    assert_eq!(rows.len(), 2 * methods.len());
    for r in rows {
        let (b, t) = (
            r["bound"].as_f64().unwrap(),
            r["test_gibbs"].as_f64().unwrap(),
        );
        assert!(t <= b && b < 1.0, "{r}");
        assert!(r["test_error"].as_f64().unwrap() <= 1.0);
        assert!(methods.contains(&r["method"].as_str().unwrap()));
        assert_eq!(r["dataset"], "crabs");
    }
    let summary = v["summary"].as_array().unwrap();
    assert_eq!(summary.len(), methods.len());
    for s in summary {
        assert!(s["worst_test_minus_bound"].as_f64().unwrap() <= 0.0);
        let lower = s["worst_test_lower_minus_bound"].as_f64().unwrap();
        assert!(lower <= s["worst_test_minus_bound"].as_f64().unwrap());
        assert!(s["bound_se"].as_f64().unwrap() >= 0.0);
    }
    assert_eq!(summary[0]["rel_to_reference"].as_f64().unwrap(), 0.0);
    let catoni = rows
        .iter()
        .find(|r| r["method"] == "split-prior+catoni")
        .unwrap();
    assert!(catoni["lambda"].as_f64().unwrap() > 0.0);
    // The CSV has a header and one record per row, with the test columns.
    let csv = std::fs::read_to_string(out.join("tighter-bounds-classifiers.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.contains("test_gibbs") && header.contains("test_error"));
    assert_eq!(csv.lines().count(), 1 + rows.len());
    assert!(out.join("tighter-bounds-classifiers-summary.csv").exists());
    assert!(out.join("tighter-bounds-classifiers.json").exists());
    // No regression set was asked for: no regression table.
    assert!(!out.join("tighter-bounds.csv").exists());
}

#[test]
fn reproduce_tighter_bounds_rejects_an_unknown_dataset() {
    assert_reproduce_rejects_unknown_dataset("tighter-bounds");
}
