//! `reproduce svgp-real --quick` (issue 41, item 6): svgp and pac-svgp on kin40k, pol and
//! MNIST 2 vs 3 through the command line; the table's shape and the sanity of every row.

mod common;
use common::{assert_reproduce_rejects_unknown_dataset, reproduce_json};

/// One row per set and method, in the CSV and the JSON; every certificate within [0, 1] and
/// above its empirical risk; test errors at most chance; MNIST's 784 inputs leave the prior
/// (the wide-input start of the lengthscale).
#[test]
fn reproduce_svgp_real_quick_writes_a_sane_table() {
    let dir = tempfile::tempdir().unwrap();
    let v = reproduce_json(dir.path(), &["svgp-real", "--quick"]);
    let rows = v["rows"].as_array().unwrap();
    let keys: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["dataset"].as_str().unwrap(),
                r["method"].as_str().unwrap(),
            )
        })
        .collect();
    let sets = ["kin40k", "pol", "mnist-2v3"];
    let want: Vec<(&str, &str)> = sets
        .iter()
        .flat_map(|&d| [(d, "svgp"), (d, "pac-svgp")])
        .collect();
    assert_eq!(keys, want);
    for r in rows {
        let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k} in {r}"));
        assert_eq!(
            (f("n_train"), f("n_test"), f("m")),
            (300.0, 300.0, 8.0),
            "{r}"
        );
        assert!(
            f("train_gibbs") <= f("gibbs_bound") && f("gibbs_bound") <= 1.0,
            "{r}"
        );
        assert!(
            f("train_error") <= f("deployed_bound") && f("deployed_bound") <= 1.0,
            "{r}"
        );
        assert!((0.0..=0.5).contains(&f("test_error")), "{r}");
        assert!((0.0..=0.5).contains(&f("test_gibbs")), "{r}");
        assert!(f("test_nlp") > 0.0 && f("kl") >= 0.0, "{r}");
        assert_eq!(r["threshold"].is_null(), r["dataset"] == "mnist-2v3", "{r}");
    }
    let mnist = &rows[4];
    assert_eq!(mnist["kernel"], "se");
    assert!(mnist["kl"].as_f64().unwrap() > 1.0, "{mnist}");
    assert!(mnist["test_error"].as_f64().unwrap() < 0.25, "{mnist}");
    let csv = std::fs::read_to_string(dir.path().join("svgp-real.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for col in [
        "test_error",
        "test_nlp",
        "gibbs_bound",
        "deployed_bound",
        "kl",
    ] {
        assert!(header.split(',').any(|c| c == col), "{header}");
    }
    assert_eq!(csv.lines().count(), 1 + rows.len());
    assert!(dir.path().join("svgp-real.json").exists());
}

#[test]
fn reproduce_svgp_real_rejects_an_unknown_dataset() {
    assert_reproduce_rejects_unknown_dataset("svgp-real");
}
