//! `fit --intervals jackknife+` on a classifier and `predict --set`: the `set` column is the
//! library's jackknife+ sets of the same model file (recomputed here through the library), the
//! statement names jackknife+ and its 1 − 2α (laplace, IVM over its active set, pac-gpc's
//! trained sites, the SVM, naive mean field, svgp, one-vs-rest SVMs on iris), and a family
//! without a closed-form leave-one-out or with a split prior is refused with exit 2, naming
//! split-conformal; a model file with an edited site precision is refused by `predict --set`.

mod common;
use common::{fails, fit, json, ok, pacgp, s, RIPLEY};

use pacgp::data::{read_training, CsvOptions, TargetKind};
use pacgp::model::FittedModel;

/// `fit` with jackknife+ sets by `method` (and `extra` options) on Ripley's training set, then
/// `predict --set 0.9` on its test set ([`sets_on`]); the folder holding the model file `m.json`.
fn sets_from_the_command_line(method: &str, score: &str, extra: &[&str]) -> tempfile::TempDir {
    sets_on(RIPLEY, 250, method, score, extra)
}

/// `fit` with jackknife+ sets by `method` (and `extra` options) on `data.0` (`n` rows), then
/// `predict --set 0.9` on `data.1`: the sets are the library's of the model file, labelled
/// jackknife+ with its 1 − 2α, and they hold at least 80% of the labels of `data.1`. Returns
/// the folder holding the model file `m.json`.
fn sets_on(
    data: (&str, &str),
    n: usize,
    method: &str,
    score: &str,
    extra: &[&str],
) -> tempfile::TempDir {
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
    dir
}

#[test]
fn jackknife_sets_from_the_command_line() {
    sets_from_the_command_line("laplace", "aps", &[]);

    // Cross-validation sets are not available for classifiers: refused before any data.
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let err = fails(
        &[
            "fit",
            "--data",
            RIPLEY.0,
            "--method",
            "laplace",
            "--intervals",
            "cv+",
            "--out",
            s(&model),
        ],
        2,
    );
    assert!(err.contains("split-conformal"), "{err}");
    assert!(err.contains("cross-validation sets"), "{err}");
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

/// svgp's and pac-svgp's rows' sites removed from q(u): their jackknife+ sets from the command
/// line as laplace's, and `certify --json` names that leave-one-out (`inducing_sites`);
/// pac-svgp with a split prior is refused jackknife+ (exit 2, naming split-conformal).
#[test]
fn svgp_jackknife_sets_from_the_command_line() {
    for (method, score) in [("svgp", "lac"), ("pac-svgp", "aps")] {
        let dir = sets_from_the_command_line(method, score, &["--inducing", "20"]);
        let model = dir.path().join("m.json");
        let cert = json(&pacgp(&[
            "certify",
            "--model",
            s(&model),
            "--data",
            RIPLEY.0,
            "--json",
        ]));
        assert_eq!(cert["loo_estimator"], "inducing_sites", "{method}: {cert}");
        let loo = cert["loo_error"].as_f64().unwrap();
        assert!(loo > 0.0 && loo < 0.25, "{method}: {cert}");
    }
    let dir = tempfile::tempdir().unwrap();
    let err = fails(
        &[
            "fit",
            "--data",
            RIPLEY.0,
            "--method",
            "pac-svgp",
            "--prior",
            "split:0.5",
            "--intervals",
            "jackknife+",
            "--out",
            s(&dir.path().join("p.json")),
        ],
        2,
    );
    assert!(err.contains("split-conformal"), "{err}");
}

/// SOGP's jackknife+ sets from the command line: `predict --set` refits it without each of
/// the 250 training rows (its leave-one-out is refits), labelled and checked as laplace's.
#[test]
fn sogp_jackknife_sets_from_the_command_line() {
    sets_from_the_command_line("sogp", "lac", &[]);
}

/// One-vs-rest SVMs on iris (3 classes, 150 rows; the sets of the training inputs): the
/// members' linear-response leave-one-out functions, combined by their vote.
#[test]
fn one_vs_rest_svm_jackknife_sets_from_the_command_line() {
    let iris = ("data/iris/iris.csv", "data/iris/iris.csv");
    sets_on(iris, 150, "svm", "aps", &[]);
}

/// pac-gpc's bound-trained sites are a site form: its jackknife+ sets from the command line as
/// laplace's (the site downdate). `predict --set` refuses the model file with a site precision
/// edited to 0 (no downdate), and `fit` refuses jackknife+ with a split prior (exit 2: its
/// posterior is fitted on part B only), naming split-conformal.
#[test]
fn pac_gpc_jackknife_sets_from_the_command_line() {
    let dir = sets_from_the_command_line("pac-gpc", "lac", &[]);
    let model = dir.path().join("m.json");
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    file["posterior"]["cov"]["sqrt_pi"][7] = serde_json::json!(0.0);
    let edited = dir.path().join("edited.json");
    std::fs::write(&edited, file.to_string()).unwrap();
    let out = pacgp(&[
        "predict",
        "--model",
        s(&edited),
        "--data",
        RIPLEY.1,
        "--set",
        "0.9",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "an edited model file gave sets");
    assert!(err.contains("site precision"), "{err}");

    let err = fails(
        &[
            "fit",
            "--data",
            RIPLEY.0,
            "--method",
            "pac-gpc",
            "--prior",
            "split:0.5",
            "--intervals",
            "jackknife+",
            "--out",
            s(&dir.path().join("split.json")),
        ],
        2,
    );
    assert!(err.contains("--prior"), "{err}");
    assert!(err.contains("split-conformal"), "{err}");
}
