//! The shared table of bad fit options (`crates/pacgp/tests/fixtures/bad_specs.json`, also read
//! by Python's `test_bad_specs.py`): `pacgp fit` refuses each with exit 2 before reading any
//! data, with the library's words for the problem and the flag the user typed for the option.

use serde_json::Value;

mod common;
use common::{refuses_case, repo};

/// The command line's flag for a library option name (the same table as `words::CliWording`,
/// written out here so the test does not trust it).
fn flag(option: &str) -> String {
    match option {
        "snap" => "--no-snap".into(),
        other => format!("--{}", other.replace('_', "-")),
    }
}

/// `--flag=value` arguments for the options of a case (`snap: false` is `--no-snap`).
fn args(options: &serde_json::Map<String, Value>) -> Vec<String> {
    options
        .iter()
        .map(|(k, v)| match (k.as_str(), v) {
            ("snap", Value::Bool(false)) => "--no-snap".to_string(),
            ("both_directions", Value::Bool(true)) => "--both-directions".to_string(),
            (_, Value::String(s)) => format!("{}={s}", flag(k)),
            (_, other) => format!("{}={other}", flag(k)),
        })
        .collect()
}

#[test]
fn every_bad_spec_is_refused_with_the_flag_named() {
    let table: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("crates/pacgp/tests/fixtures/bad_specs.json"))
            .unwrap(),
    )
    .unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("m.json");
    for case in table["cases"].as_array().unwrap() {
        let method = case["method"].as_str().unwrap();
        let mut a = vec![
            "fit".to_string(),
            "--data".into(),
            // No such file: every case must be refused before any data is read.
            "no-such-file.csv".into(),
            "--method".into(),
            method.into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        a.extend(args(case["options"].as_object().unwrap()));
        let err = refuses_case(&a, case, &flag(case["option"].as_str().unwrap()));
        assert!(
            !err.contains("no-such-file"),
            "{a:?}: data read first: {err}"
        );
        assert!(!out.exists());
    }
}
