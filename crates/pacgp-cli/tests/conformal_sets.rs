//! `fit --intervals jackknife+` on a classifier and `predict --set`: the `set` column is the
//! library's jackknife+ sets of the same model file (recomputed here through the library), the
//! statement names jackknife+ and its 1 − 2α (laplace, IVM over its active set, the SVM, naive
//! mean field, one-vs-rest SVMs on iris), and a family without a closed-form leave-one-out is
//! refused with exit 2, naming split-conformal.

mod common;
use common::{fails, fit, json, ok, pacgp, s, RIPLEY};

use pacgp::data::{read_training, CsvOptions, TargetKind};
use pacgp::model::FittedModel;

/// `fit` with jackknife+ sets by `method` (and `extra` options) on Ripley's training set, then
/// `predict --set 0.9` on its test set ([`sets_on`]).
fn sets_from_the_command_line(method: &str, score: &str, extra: &[&str]) {
    sets_on(RIPLEY, 250, method, score, extra);
}

/// `fit` with jackknife+ sets by `method` (and `extra` options) on `data.0` (`n` rows), then
/// `predict --set 0.9` on `data.1`: the sets are the library's of the model file, labelled
/// jackknife+ with its 1 − 2α, and they hold at least 80% of the labels of `data.1`.
fn sets_on(data: (&str, &str), n: usize, method: &str, score: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let mut args = vec![
        "--method",
        method,
        "--intervals",
        "jackknife+",
        "--interval-score",
        score,
        "--seed",
        "3",
    ];
    args.extend_from_slice(extra);
    ok(&fit(data.0, &model, &args));
    let out = json(&pacgp(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        data.1,
        "--set",
        "0.9",
        "--json",
    ]));
    let sets = &out["sets"];
    assert_eq!(sets["method"], "jackknife+", "{method}: {sets}");
    assert_eq!(sets["score"], score);
    assert!((sets["guaranteed_coverage"].as_f64().unwrap() - 0.8).abs() < 1e-12);
    assert_eq!(sets["n_scores"], n);

    let m = FittedModel::load(&model).unwrap();
    let test = read_training(
        common::repo().join(data.1),
        &CsvOptions::default(),
        TargetKind::Classes,
    )
    .unwrap();
    let want = m
        .predict_sets(test.data.x.as_ref(), 0.1)
        .unwrap()
        .joined("|");
    let got: Vec<&str> = out["set"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(got, want, "{method}");
    let labels = test.classes.unwrap().labels;
    let covered = got
        .iter()
        .zip(&test.data.y)
        .filter(|(set, y)| set.split('|').any(|l| l == labels[**y as usize]))
        .count();
    assert!(
        covered as f64 / got.len() as f64 >= 0.8,
        "{method}: {covered} of {}",
        got.len()
    );
}

#[test]
fn jackknife_sets_from_the_command_line() {
    sets_from_the_command_line("laplace", "aps", &[]);

    // SOGP's posterior is in dense form (no sites): refused before any data.
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let err = fails(
        &[
            "fit",
            "--data",
            RIPLEY.0,
            "--method",
            "sogp",
            "--intervals",
            "jackknife+",
            "--out",
            s(&model),
        ],
        2,
    );
    assert!(err.contains("split-conformal"), "{err}");
    assert!(err.contains("laplace, ep or ivm"), "{err}");
}

/// IVM's sites cover its active set: its jackknife+ sets from the command line as laplace's.
#[test]
fn ivm_jackknife_sets_from_the_command_line() {
    sets_from_the_command_line("ivm", "lac", &["--active-set", "60"]);
}

/// The binary SVM's linear-response leave-one-out: its jackknife+ sets from the command line
/// as laplace's.
#[test]
fn svm_jackknife_sets_from_the_command_line() {
    sets_from_the_command_line("svm", "aps", &[]);
}

/// Naive mean field's linear-response leave-one-out at any input: its jackknife+ sets from the
/// command line as laplace's.
#[test]
fn mean_field_jackknife_sets_from_the_command_line() {
    sets_from_the_command_line("mean-field", "lac", &[]);
}

/// One-vs-rest SVMs on iris (3 classes, 150 rows; the sets of the training inputs): the
/// members' linear-response leave-one-out functions, combined by their vote.
#[test]
fn one_vs_rest_svm_jackknife_sets_from_the_command_line() {
    let iris = ("data/iris/iris.csv", "data/iris/iris.csv");
    sets_on(iris, 150, "svm", "aps", &[]);
}
