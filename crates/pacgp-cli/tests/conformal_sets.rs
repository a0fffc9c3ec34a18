//! `fit --intervals jackknife+` on a classifier and `predict --set`: the `set` column is the
//! library's jackknife+ sets of the same model file (recomputed here through the library), the
//! statement names jackknife+ and its 1 − 2α (laplace, IVM over its active set, the SVM), and a
//! family without Gaussian sites is refused with exit 2, naming split-conformal.

mod common;
use common::{fails, fit, json, ok, pacgp, s, RIPLEY};

use pacgp::data::{read_training, CsvOptions, TargetKind};
use pacgp::model::FittedModel;

/// `fit` with jackknife+ sets by `method` (and `extra` options), then `predict --set 0.9`:
/// the sets are the library's of the model file, labelled jackknife+ with its 1 − 2α, and they
/// hold at least 80% of Ripley's test labels.
fn sets_from_the_command_line(method: &str, score: &str, extra: &[&str]) {
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
    ok(&fit(RIPLEY.0, &model, &args));
    let out = json(&pacgp(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        RIPLEY.1,
        "--set",
        "0.9",
        "--json",
    ]));
    let sets = &out["sets"];
    assert_eq!(sets["method"], "jackknife+", "{method}: {sets}");
    assert_eq!(sets["score"], score);
    assert!((sets["guaranteed_coverage"].as_f64().unwrap() - 0.8).abs() < 1e-12);
    assert_eq!(sets["n_scores"], 250);

    let m = FittedModel::load(&model).unwrap();
    let test = read_training(
        common::repo().join(RIPLEY.1),
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
    let covered = got
        .iter()
        .zip(&test.data.y)
        .filter(|(set, y)| {
            set.split('|')
                .any(|l| l == if **y > 0.0 { "1" } else { "0" })
        })
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
