//! The shared table of bad table-reading options
//! (`crates/pacgp/tests/fixtures/bad_table_options.json`, also read by Python's
//! `test_bad_table_options.py`): `pacgp fit` on the fixture's table, written as a CSV file,
//! refuses each case with exit 2, the library's words for the problem and the flag the user
//! typed for the option.

use serde_json::Value;

mod common;
use common::{refuses_case, repo};

/// The command line's flag for a library option name (written out here so the test does not
/// trust `words::CliWording`).
fn flag(option: &str) -> String {
    format!("--{}", option.replace('_', "-"))
}

/// `--flag=value` arguments for the options of a case (a list is comma separated).
fn args(options: &serde_json::Map<String, Value>) -> Vec<String> {
    options
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{}={s}", flag(k)),
            Value::Array(items) => {
                let words: Vec<&str> = items.iter().map(|i| i.as_str().unwrap()).collect();
                format!("{}={}", flag(k), words.join(","))
            }
            other => format!("{}={other}", flag(k)),
        })
        .collect()
}

/// The fixture's table as CSV text.
fn csv(table: &Value) -> String {
    let line = |cells: &Value| {
        let cells: Vec<&str> = cells
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        cells.join(",") + "\n"
    };
    let mut text = line(&table["header"]);
    for row in table["rows"].as_array().unwrap() {
        text.push_str(&line(row));
    }
    text
}

#[test]
fn every_bad_table_option_is_refused_with_the_flag_named() {
    let fixture = repo().join("crates/pacgp/tests/fixtures/bad_table_options.json");
    let table: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("table.csv");
    std::fs::write(&data, csv(&table["table"])).unwrap();
    let out = dir.path().join("m.json");
    for case in table["cases"].as_array().unwrap() {
        let mut a: Vec<String> = ["fit", "--method", "laplace", "--data"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.push(data.to_str().unwrap().into());
        a.extend(["--out".into(), out.to_str().unwrap().into()]);
        a.extend(args(case["options"].as_object().unwrap()));
        refuses_case(&a, case, &flag(case["option"].as_str().unwrap()));
        assert!(!out.exists());
    }
}
