//! Wide tables (issue 43, items 4 and 9): the default kernel on one-hot inputs ties the
//! lengthscales of each categorical column's indicators, records the groups in the model
//! file and prices one hyperparameter per column; missing-value tokens can be set, are
//! stored with the model, and a label equal to one is never dropped silently.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{pacgp, read_json, run_ok, s, write_data};

/// Run and require failure; stderr.
fn fails(args: &[&str]) -> String {
    let out = pacgp(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{args:?} succeeded: {err}");
    err
}

/// The arguments of `fit` on `data` with `extra` options, saving to `model`.
fn fit_args<'a>(data: &'a str, extra: &[&'a str], model: &'a Path) -> Vec<&'a str> {
    let mut args = vec!["fit", "--data", data];
    args.extend(extra);
    args.extend(["--out", s(model)]);
    args
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
    write_data(dir, "colour.csv", &text)
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
    let (_, err) = run_ok(&fit_args(&data, &["--categorical", "auto"], &model));
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
        let (out, _) = run_ok(&[
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
    let (predicted, _) = run_ok(&["predict", "--model", s(&model), "--data", &data]);
    assert_eq!(predicted.lines().count(), 41, "{predicted}");

    let ard = dir.path().join("ard.json");
    let options = ["--categorical", "auto", "--kernel", "se-ard"];
    let (_, err) = run_ok(&fit_args(&data, &options, &ard));
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
    run_ok(&fit_args(s(&data), &["--categorical", "auto"], &model));
    assert_eq!(
        read_json(&model)["spec"]["method"]["options"]["kernel"],
        "se-ard"
    );
}

/// 40 rows of two inputs and a label `yes` or `NA` (a class literally named NA), 20 each.
fn na_class_table(dir: &Path) -> String {
    let mut text = String::from("a,b,label\n");
    for i in 0..40 {
        let (a, b) = ((i % 7) as f64 / 3.0, ((i * 5) % 11) as f64 / 5.0);
        let label = if a + b > 2.0 { "yes" } else { "NA" };
        text += &format!("{a:.3},{b:.3},{label}\n");
    }
    write_data(dir, "na_class.csv", &text)
}

/// A class named `NA` is not dropped by `--missing drop`: the fit is refused, naming the
/// label, how many rows have it and the `--na-values` that keeps it; with `--na-values ''`
/// it is a class, the model stores the cells read as missing, and `certify` and `predict`
/// read the training file the same way (all 40 rows).
#[test]
fn a_class_named_na_is_refused_not_dropped_and_kept_with_na_values() {
    let dir = tempfile::tempdir().unwrap();
    let data = na_class_table(dir.path());
    let model = dir.path().join("m.json");
    let options = ["--method", "laplace", "--missing", "drop"];
    let err = fails(&fit_args(&data, &options, &model));
    let count = na_class_rows(&data);
    assert!(
        err.contains(&format!("{count} rows (the first at line"))
            && err.contains("the label 'NA'")
            && err.contains("--na-values ',?,N/A,na,NaN,nan'"),
        "{err}"
    );
    assert!(!model.exists());
    let options = ["--method", "laplace", "--na-values", ""];
    let (summary, _) = run_ok(&fit_args(&data, &options, &model));
    assert!(summary.contains("'NA' → −1, 'yes' → +1"), "{summary}");
    let file = read_json(&model);
    assert_eq!(
        file["input_coding"]["missing_cells"],
        serde_json::json!([""])
    );
    assert_eq!(file["n_train"], 40);
    let (certificate, _) = run_ok(&["certify", "--model", s(&model), "--data", &data, "--json"]);
    let certificate: Value = serde_json::from_str(certificate.trim()).unwrap();
    assert_eq!(certificate["n"], 40, "{certificate}");
    let (predicted, _) = run_ok(&["predict", "--model", s(&model), "--data", &data]);
    assert_eq!(predicted.lines().count(), 41, "{predicted}");
}

/// How many rows of the table written by [`na_class_table`] have the label `NA`.
fn na_class_rows(data: &str) -> usize {
    std::fs::read_to_string(data)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with(",NA"))
        .count()
}

/// `--na-values -` makes `-` the only missing cell: a numeric column with `-` cells is filled
/// (`--missing mean`) instead of refused as text, the model stores `["-"]`, and a later file
/// is read with it (its `-` filled, its `NA` not a missing value but a bad number).
#[test]
fn na_values_set_the_missing_cells_of_training_and_later_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("x,y\n");
    for i in 0..30 {
        let x = if i % 6 == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", i as f64 * 0.1)
        };
        text += &format!("{x},{:.3}\n", (i as f64 * 0.2).sin());
    }
    let data = dir.path().join("dash.csv");
    std::fs::write(&data, text).unwrap();
    let model = dir.path().join("m.json");
    let refused = fails(&fit_args(s(&data), &["--missing", "mean"], &model));
    assert!(refused.contains("'-'"), "{refused}");
    let options = ["--missing", "mean", "--na-values", "-"];
    run_ok(&fit_args(s(&data), &options, &model));
    assert_eq!(
        read_json(&model)["input_coding"]["missing_cells"],
        serde_json::json!(["-"])
    );
    let later = dir.path().join("later.csv");
    std::fs::write(&later, "x,y\n-,0.5\n1.0,0.2\n").unwrap();
    let (predicted, _) = run_ok(&["predict", "--model", s(&model), "--data", s(&later)]);
    assert_eq!(predicted.lines().count(), 3, "{predicted}");
    std::fs::write(&later, "x,y\nNA,0.5\n").unwrap();
    let err = fails(&["predict", "--model", s(&model), "--data", s(&later)]);
    assert!(err.contains("NA"), "{err}");
}

/// 120 rows of `inputs` numeric columns `x0…` (a fixed hash of row and column, no randomness)
/// and a target `y` of the first two.
fn numeric_table(dir: &Path, inputs: usize) -> String {
    let names: Vec<String> = (0..inputs).map(|t| format!("x{t}")).collect();
    let mut text = format!("{},y\n", names.join(","));
    for i in 0..120 {
        let row: Vec<f64> = (0..inputs)
            .map(|t| {
                let h = ((i as f64 * 12.9898 + t as f64 * 78.233).sin() * 43_758.545).fract();
                (h - 0.5) * 3.0
            })
            .collect();
        let y = (1.5 * row[0]).sin() + 0.5 * row[1];
        let cells: Vec<String> = row.iter().map(|v| format!("{v:.4}")).collect();
        text += &format!("{},{y:.4}\n", cells.join(","));
    }
    write_data(dir, &format!("numeric{inputs}.csv"), &text)
}

/// `fit --method vfe` on 25 inputs says where the lengthscales started (the median distance,
/// as gpr's note does); on 20 inputs it starts at 1 and says nothing.
#[test]
fn a_wide_vfe_fit_notes_its_start_at_the_median_distance() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("vfe.json");
    let wide = numeric_table(dir.path(), 25);
    let (_, err) = run_ok(&fit_args(
        &wide,
        &["--method", "vfe", "--inducing", "20"],
        &model,
    ));
    let note = "note: lengthscales started at ";
    let tail = "the median distance between the 25 standardised inputs of the rows";
    assert!(err.contains(note) && err.contains(tail), "{err}");
    let narrow = numeric_table(dir.path(), 20);
    let (_, err) = run_ok(&fit_args(
        &narrow,
        &["--method", "vfe", "--inducing", "20"],
        &model,
    ));
    assert!(!err.contains(note), "{err}");
}
