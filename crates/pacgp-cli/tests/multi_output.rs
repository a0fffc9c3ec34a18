//! `fit --target a,b`: one regressor per output on the same inputs. Each output's predictions,
//! metrics and certificate are those of a single-target fit of its column with the other
//! target dropped; the joint certificate is each output's at δ/K, with their mean.

mod common;

use common::*;

const BOSTON: &str = "data/boston-housing/boston.csv";

/// `fit` on boston with `args`, refused (exit 2) before writing `model`: its message.
fn refused(args: &[&str], model: &std::path::Path) -> String {
    let fixed = ["fit", "--data", BOSTON, "--out", s(model)];
    fails(&[&fixed[..], args].concat(), 2)
}

/// `predict --json` of `model` on boston.
fn predicted(model: &std::path::Path) -> serde_json::Value {
    json(&pacgp(&[
        "predict",
        "--model",
        s(model),
        "--data",
        BOSTON,
        "--json",
    ]))
}

#[test]
fn each_output_is_the_fit_of_its_column_alone() {
    let dir = tempfile::tempdir().unwrap();
    let joint = dir.path().join("joint.json");
    let out = ok(&fit(BOSTON, &joint, &["--target", "MEDV,LSTAT"]));
    assert!(out.contains("2 outputs"), "{out}");
    assert!(
        out.contains("output 'MEDV'") && out.contains("output 'LSTAT'"),
        "{out}"
    );
    let p = predicted(&joint);
    let c = certify_with(&joint, BOSTON, &["--epsilon", "2"]);
    let e = json(&pacgp(&[
        "evaluate",
        "--model",
        s(&joint),
        "--data",
        BOSTON,
        "--epsilon",
        "2",
        "--json",
    ]));
    for (j, (target, other)) in [("MEDV", "LSTAT"), ("LSTAT", "MEDV")]
        .into_iter()
        .enumerate()
    {
        let alone = dir.path().join(format!("{target}.json"));
        ok(&fit(BOSTON, &alone, &["--target", target, "--drop", other]));
        let q = predicted(&alone);
        assert_eq!(p["outputs"][j]["target"], target);
        assert_eq!(p["outputs"][j]["mean"], q["mean"], "{target}");
        let single = certify_with(&alone, BOSTON, &["--epsilon", "2"]);
        let mine = &c["outputs"][j];
        assert_eq!(mine["target"], target);
        assert_eq!(
            mine["certificates"][0]["bound"], single["bound"],
            "{target}"
        );
        assert_eq!(mine["certificates"][0]["loo_error"], single["loo_error"]);
        // The joint certificate: the same risk and KL at δ/2.
        let joint_one = &c["joint"]["outputs"][j]["certificates"][0];
        assert_eq!(joint_one["kl"], single["kl"]);
        assert_eq!(joint_one["delta"].as_f64().unwrap(), 0.005);
        assert!(joint_one["bound"].as_f64() > single["bound"].as_f64());
        let eval = json(&pacgp(&[
            "evaluate",
            "--model",
            s(&alone),
            "--data",
            BOSTON,
            "--epsilon",
            "2",
            "--json",
        ]));
        assert_eq!(e["outputs"][j]["rmse"], eval["rmse"], "{target}");
        assert_eq!(e["outputs"][j]["target"], target);
    }
    let bounds: Vec<f64> = (0..2)
        .map(|j| {
            c["joint"]["outputs"][j]["certificates"][0]["bound"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let mean = c["joint"]["mean_bound"][0].as_f64().unwrap();
    assert!((mean - (bounds[0] + bounds[1]) / 2.0).abs() < 1e-15);
    // The CSV has each output's columns under its name.
    let csv = ok(&pacgp(&[
        "predict",
        "--model",
        s(&joint),
        "--data",
        BOSTON,
        "--interval",
        "0.9",
    ]));
    assert!(
        csv.starts_with(
            "MEDV_mean,MEDV_latent_var,MEDV_noisy_var,MEDV_lower,MEDV_upper,LSTAT_mean,"
        ),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 507);
}

#[test]
fn a_classifier_or_a_bound_without_epsilon_is_refused_per_output() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let e = refused(&["--target", "MEDV,CHAS", "--method", "laplace"], &model);
    assert!(e.contains("regression method"), "{e}");
    let e = refused(&["--target", "MEDV,LSTAT", "--method", "pac-gp"], &model);
    assert!(e.contains("--epsilon"), "{e}");
    let e = refused(&["--target", "MEDV,NOPE"], &model);
    assert!(e.contains("NOPE"), "{e}");
    assert!(!model.exists());
}

/// `--shared-kernel`: one θ and σ² for both outputs (in the file and the fit's notes), each
/// output still certified; a holdout or a method without a shared kernel is refused.
#[test]
fn outputs_share_one_kernel_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("shared.json");
    let out = ok(&fit(
        BOSTON,
        &model,
        &["--target", "MEDV,LSTAT", "--shared-kernel"],
    ));
    assert!(out.contains("one kernel shared"), "{out}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let members = file["task"]["members"].as_array().unwrap();
    let kernel = |m: &serde_json::Value| {
        (
            m["posterior"]["kernel"].clone(),
            m["task"]["noise_variance"].clone(),
        )
    };
    assert!(kernel(&members[0]).0.is_object(), "{}", members[0]["task"]);
    assert_eq!(kernel(&members[0]), kernel(&members[1]));
    let c = certify_with(&model, BOSTON, &["--epsilon", "2"]);
    for j in 0..2 {
        let b = c["outputs"][j]["certificates"][0]["bound"]
            .as_f64()
            .unwrap();
        assert!(b > 0.0 && b < 1.0, "{c}");
    }
    let e = refused(
        &words("--target MEDV,LSTAT --shared-kernel --certify-holdout 0.2"),
        &model,
    );
    assert!(e.contains("held out"), "{e}");
    let e = refused(
        &words("--target MEDV,LSTAT --shared-kernel --method vfe"),
        &model,
    );
    assert!(e.contains("--shared-kernel"), "{e}");
}

/// A category the fit never saw: refused by default, coded as none with
/// `--unknown-category ignore`, in `evaluate` on a multi-output model as on one target's.
#[test]
fn evaluate_on_several_targets_takes_the_unknown_category_policy() {
    let dir = tempfile::tempdir().unwrap();
    let rows = |colours: &[&str]| -> String {
        let mut t = String::from("x,colour,a,b\n");
        for i in 0..30 {
            let x = i as f64 / 10.0;
            let c = colours[i % colours.len()];
            let shift = if c == "red" { 1.0 } else { 0.0 };
            t += &format!("{x},{c},{},{}\n", x.sin() + shift, 2.0 * x - shift);
        }
        t
    };
    let (train, test) = (dir.path().join("train.csv"), dir.path().join("test.csv"));
    std::fs::write(&train, rows(&["red", "blue"])).unwrap();
    std::fs::write(&test, rows(&["red", "green"])).unwrap();
    let model = dir.path().join("m.json");
    ok(&fit(
        s(&train),
        &model,
        &["--target", "a,b", "--categorical", "colour"],
    ));
    let evaluate = ["evaluate", "--model", s(&model), "--data", s(&test)];
    let e = fails(&evaluate, 2);
    assert!(e.contains("green"), "{e}");
    let out = ok(&pacgp(
        &[&evaluate[..], &["--unknown-category", "ignore"]].concat(),
    ));
    assert!(
        out.contains("output 'a'") && out.contains("output 'b'"),
        "{out}"
    );
}
