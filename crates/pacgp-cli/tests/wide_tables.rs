//! Wide tables (issue 43, item 4): the default kernel on one-hot inputs ties the
//! lengthscales of each categorical column's indicators, records the groups in the model
//! file and prices one hyperparameter per column.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{pacgp, s};

/// Run and require success; stdout and stderr.
fn ok(args: &[&str]) -> (String, String) {
    let out = pacgp(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?}: {err}");
    (String::from_utf8(out.stdout).unwrap(), err)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// 40 rows of `x` (a number), `colour` (three levels) and `y = x + effect(colour) + noise`,
/// written without randomness (the noise is a fixed pattern).
fn colour_table(dir: &Path) -> String {
    let mut text = String::from("x,colour,y\n");
    for i in 0..40 {
        let x = (i as f64 * 0.37).sin() * 2.0;
        let (colour, effect) = [("red", -1.0), ("green", 0.5), ("blue", 1.2)][i % 3];
        let noise = ((i * 7) % 5) as f64 * 0.02 - 0.04;
        text += &format!("{x:.4},{colour},{:.4}\n", x + effect + noise);
    }
    let path = dir.join("colour.csv");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The count in the certificate's grid price, "T kernel hyperparameters on the grid …".
fn priced_hyperparameters(certificate: &Value) -> u64 {
    let terms = certificate["penalty_terms"]
        .as_array()
        .expect("penalty terms");
    let what = terms
        .iter()
        .filter_map(|t| t["what"].as_str())
        .find(|w| w.contains("kernel hyperparameters on the grid"))
        .unwrap_or_else(|| panic!("no grid term in {certificate}"));
    what.split_whitespace().next().unwrap().parse().unwrap()
}

/// `fit --categorical auto` with no kernel: the three-level column's indicators share one
/// lengthscale, the model file records the groups (spec and kernel), `certify` rebuilds the
/// same kernel from the file and prices σ² and two lengthscales, where `--kernel se-ard`
/// prices σ² and four.
#[test]
fn default_kernel_gives_a_one_hot_column_one_lengthscale() {
    let dir = tempfile::tempdir().unwrap();
    let data = colour_table(dir.path());
    let model = dir.path().join("grouped.json");
    let (_, err) = ok(&[
        "fit",
        "--data",
        &data,
        "--categorical",
        "auto",
        "--out",
        s(&model),
    ]);
    assert!(err.contains("note: kernel: se-groups(1,3)"), "{err}");
    let file = read_json(&model);
    assert_eq!(
        file["spec"]["method"]["options"]["kernel"],
        "se-groups(1,3)"
    );
    let kernel = &file["posterior"]["kernel"]["inner"];
    assert_eq!(kernel["groups"], serde_json::json!([1, 3]), "{kernel}");
    assert_eq!(kernel["ln_lengthscale"].as_array().unwrap().len(), 2);
    let certify = |model: &Path| {
        let (out, _) = ok(&[
            "certify",
            "--model",
            s(model),
            "--data",
            &data,
            "--epsilon",
            "0.5",
            "--json",
        ]);
        serde_json::from_str::<Value>(out.trim()).unwrap()
    };
    assert_eq!(priced_hyperparameters(&certify(&model)), 3);
    let (predicted, _) = ok(&["predict", "--model", s(&model), "--data", &data]);
    assert_eq!(predicted.lines().count(), 41, "{predicted}");

    let ard = dir.path().join("ard.json");
    let (_, err) = ok(&[
        "fit",
        "--data",
        &data,
        "--categorical",
        "auto",
        "--kernel",
        "se-ard",
        "--out",
        s(&ard),
    ]);
    assert!(!err.contains("note: kernel:"), "{err}");
    assert_eq!(
        read_json(&ard)["spec"]["method"]["options"]["kernel"],
        "se-ard"
    );
    assert_eq!(priced_hyperparameters(&certify(&ard)), 5);
}

/// A table whose text columns each become one input (two categories, ±1) keeps the default
/// `se-ard`: only one-hot columns change the default.
#[test]
fn two_category_columns_keep_one_lengthscale_per_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("x,side,y\n");
    for i in 0..30 {
        let side = ["left", "right"][i % 2];
        text += &format!("{},{side},{}\n", i as f64 * 0.1, (i as f64 * 0.3).cos());
    }
    let data = dir.path().join("sides.csv");
    std::fs::write(&data, text).unwrap();
    let model = dir.path().join("m.json");
    ok(&[
        "fit",
        "--data",
        s(&data),
        "--categorical",
        "auto",
        "--out",
        s(&model),
    ]);
    assert_eq!(
        read_json(&model)["spec"]["method"]["options"]["kernel"],
        "se-ard"
    );
}
