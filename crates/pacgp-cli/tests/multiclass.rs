//! The multi-class classifiers from the command line: fit, predict, evaluate and certify on
//! iris and wine agree with the library's own calls on the saved model; the softmax Laplace's
//! certificate names its sampling; bad combinations exit with status 2 and a clear message.

use std::process::Output;

mod common;
use common::{certify, certify_with, fit, json, ok, pacgp, predict_csv, repo, s, words};

fn fails_with(out: &Output, words: &[&str]) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for w in words {
        assert!(err.contains(w), "'{w}' not in: {err}");
    }
}

#[test]
fn iris_one_vs_rest_fit_predict_evaluate_certify() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let out = fit(
        "data/iris/iris.csv",
        &model,
        &["--method", "laplace", "--json"],
    );
    let fit = json(&out);
    assert_eq!(fit["method"], "laplace");
    assert_eq!(fit["multiclass"], "one-vs-rest");
    assert_eq!(
        fit["classes"],
        serde_json::json!(["setosa", "versicolor", "virginica"])
    );
    assert_eq!(fit["class_kernels"].as_array().unwrap().len(), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("one-vs-rest"));
    let m = pacgp::model::FittedModel::load(&model).unwrap();

    // predict: one probability column per class and the label; the library's numbers.
    let text = predict_csv(&model, "data/iris/iris.csv", &dir.path().join("p.csv"));
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "p_setosa,p_versicolor,p_virginica,label"
    );
    let t = pacgp::data::read_training(
        repo().join("data/iris/iris.csv"),
        &Default::default(),
        pacgp::data::TargetKind::Classes,
    )
    .unwrap();
    let p = m.predict_classes(t.data.x.as_ref()).unwrap();
    for (i, l) in lines.enumerate() {
        let cells: Vec<&str> = l.split(',').collect();
        let probs: Vec<f64> = cells[..3].iter().map(|c| c.parse().unwrap()).collect();
        assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(probs[1], p.probabilities[(i, 1)]);
        assert_eq!(cells[3], m.classes().unwrap().decode(p.labels[i]));
    }

    // evaluate and certify: the library's figures on the reloaded model.
    let e = json(&pacgp(&[
        "evaluate",
        "--model",
        s(&model),
        "--data",
        "data/iris/iris.csv",
        "--json",
    ]));
    let lib = m.evaluate(&t.data, None).unwrap();
    assert_eq!(e["gibbs_risk"].as_f64(), lib.gibbs_risk);
    assert_eq!(e["error_rate"].as_f64(), lib.error_rate);
    let c = certify(&model, "data/iris/iris.csv");
    let lib = m.certify(&t.data, &Default::default()).unwrap().remove(0);
    assert_eq!(c["bound"].as_f64(), Some(lib.certificate.bound));
    assert_eq!(c["loo_error"].as_f64(), lib.loo_error);
    assert!((c["penalty"].as_f64().unwrap() - 3.0 * 9f64.ln()).abs() < 1e-12);
    let text = ok(&pacgp(&[
        "certify",
        "--model",
        s(&model),
        "--data",
        "data/iris/iris.csv",
    ]));
    assert!(text.contains("argmax_k"), "{text}");

    // A test file with a label the model has not seen.
    let odd = dir.path().join("odd.csv");
    std::fs::write(
        &odd,
        "sepal_length,sepal_width,petal_length,petal_width,species\n5,3,1,0.2,lotus\n",
    )
    .unwrap();
    fails_with(
        &pacgp(&["evaluate", "--model", s(&model), "--data", s(&odd)]),
        &["lotus"],
    );
}

#[test]
fn wine_softmax_certificate_names_its_sampling() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let fit = json(&fit(
        "data/wine/wine.csv",
        &model,
        &words("--method laplace --multiclass softmax --seed 3 --json"),
    ));
    assert_eq!(fit["multiclass"], "softmax");
    assert_eq!(fit["classes"], serde_json::json!(["0", "1", "2"]));
    // The softmax model's leave-one-out is its sites removed: `certify` prints it by
    // default, and asking for an exact one is an error that says what to do.
    let certify_wine = |extra: &[&str]| {
        let mut args = vec![
            "certify",
            "--model",
            s(&model),
            "--data",
            "data/wine/wine.csv",
        ];
        args.extend_from_slice(extra);
        pacgp(&args)
    };
    let plain = ok(&certify_wine(&[]));
    assert!(plain.contains("leave-one-out"), "{plain}");
    fails_with(
        &certify_wine(&["--loo", "exact"]),
        &["leave-one-out", "loo approx"],
    );
    let c = certify_with(&model, "data/wine/wine.csv", &["--loo", "none"]);
    // Seeded by the sample (the model records it), not by --seed 3.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(c["sampled_risk"]["seed"], saved["task"]["sampling_seed"]);
    assert_ne!(c["sampled_risk"]["seed"], 3);
    assert_eq!(c["sampled_risk"]["draws_per_point"], 1000);
    assert_eq!(c["bound"].as_f64(), fit["objective"].as_f64());
    let text = ok(&certify_wine(&["--loo", "none"]));
    assert!(text.contains("δ − δ_s = 0.009"), "{text}");
    let p = ok(&pacgp(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        "data/wine/wine.csv",
    ]));
    assert!(p.starts_with("p_0,p_1,p_2,label\n"), "{p}");
}

#[test]
fn bad_multiclass_combinations_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let fit = |extra: &[&str]| {
        let mut args = vec!["fit", "--data", "data/iris/iris.csv", "--out", s(&model)];
        args.extend_from_slice(extra);
        pacgp(&args)
    };
    fails_with(
        &fit(&["--method", "ep", "--multiclass", "softmax"]),
        &["--multiclass", "laplace"],
    );
    fails_with(
        &fit(&["--method", "laplace", "--positive", "setosa"]),
        &["--positive", "3 classes"],
    );
    fails_with(
        &fit(&["--method", "gpr", "--multiclass", "one-vs-rest"]),
        &["--multiclass"],
    );
    fails_with(
        &fit(&words(
            "--method laplace --multiclass one-vs-rest --prior split:0.5",
        )),
        &["--prior"],
    );
    fails_with(
        &fit(&["--method", "laplace", "--multiclass", "two-ways"]),
        &["--multiclass", "one-vs-rest"],
    );
}
