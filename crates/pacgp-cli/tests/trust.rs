//! A tool that never lies: certificates only on the sample they hold for, model files that are
//! validated on load (a bad one is exit 2 with a message, never a panic or a wrong answer), and
//! the sparse and PAC models fitted and certified end to end.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{assert_written, certify, certify_with, fit, json, pacgp, repo, reproduce_json, s};

fn exit2(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

const SNELSON: &str = "data/snelson-1d/snelson_train.csv";

fn fit_snelson(dir: &Path, method: &str, extra: &[&str]) -> PathBuf {
    let model = dir.join(format!("{method}.json"));
    let mut args = vec![
        "fit", "--data", SNELSON, "--method", method, "--kernel", "se", "--out",
    ];
    args.push(s(&model));
    args.extend_from_slice(extra);
    args.push("--json");
    json(&pacgp(&args));
    model
}

/// A certificate on anything but the training sample is refused: a different file of the
/// same size, a doubled file, or the test file.
#[test]
fn certify_refuses_data_that_is_not_the_training_sample() {
    let dir = tempfile::tempdir().unwrap();
    let model = fit_snelson(dir.path(), "gpr", &["--epsilon", "0.3"]);
    let good = certify(&model, SNELSON);
    assert_eq!(good["n"], 200);
    // Same rows in another order: still the training sample.
    let text = std::fs::read_to_string(repo().join(SNELSON)).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1..].reverse();
    let shuffled = dir.path().join("reversed.csv");
    std::fs::write(&shuffled, lines.join("\n")).unwrap();
    let again = certify(&model, s(&shuffled));
    // The same bound up to the order of summation.
    let (b0, b1) = (
        good["bound"].as_f64().unwrap(),
        again["bound"].as_f64().unwrap(),
    );
    assert!((b0 - b1).abs() < 1e-12, "{b0} vs {b1}");
    assert_eq!(again["loo_error"], good["loo_error"]);
    // One target changed: refused.
    let mut changed: Vec<String> = text.lines().map(str::to_string).collect();
    let cells: Vec<&str> = changed[5].split(',').collect();
    let y: f64 = cells[1].parse().unwrap();
    changed[5] = format!("{},{}", cells[0], y + 0.5);
    let edited = dir.path().join("edited.csv");
    std::fs::write(&edited, changed.join("\n")).unwrap();
    exit2(
        &pacgp(&["certify", "--model", s(&model), "--data", s(&edited)]),
        "not the model's training sample",
    );
    // Doubled: refused (N differs).
    let doubled = dir.path().join("doubled.csv");
    let body: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(
        &doubled,
        format!("{}\n{}\n{}", lines[0], body.join("\n"), body.join("\n")),
    )
    .unwrap();
    exit2(
        &pacgp(&["certify", "--model", s(&model), "--data", s(&doubled)]),
        "400 rows",
    );
}

/// Several ε at once pay `ln k` more each; the certificate names its predictor and ε.
#[test]
fn several_epsilons_pay_ln_k_and_name_the_predictor() {
    let dir = tempfile::tempdir().unwrap();
    let model = fit_snelson(dir.path(), "gpr", &["--epsilon", "0.3"]);
    let one = certify(&model, SNELSON);
    let three = certify_with(&model, SNELSON, &["--epsilon", "0.3,0.5,1.0"]);
    let certs = three["certificates"].as_array().unwrap();
    assert_eq!(certs.len(), 3);
    let extra = certs[0]["penalty"].as_f64().unwrap() - one["penalty"].as_f64().unwrap();
    assert!((extra - 3f64.ln()).abs() < 1e-12, "{extra}");
    assert_eq!(certs[0]["epsilon"], 0.3);
    assert!(certs[0]["bound"].as_f64().unwrap() > one["bound"].as_f64().unwrap());
    // A wider band is easier to hit.
    assert!(certs[2]["bound"].as_f64().unwrap() < certs[0]["bound"].as_f64().unwrap());
    assert!(one["predictor"]
        .as_str()
        .unwrap()
        .contains("Gibbs regressor"));
    assert!(one["penalty_terms"].as_array().unwrap().len() == 1);
}

/// The probit classifier's certificate is about the latent `sgn f` by default (tighter than
/// the noisy one for the same posterior); `--predictor noisy` gives the other.
#[test]
fn classifier_certificate_names_its_gibbs_classifier() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("ep.json");
    let data = "data/ripley-synth/synth_tr.csv";
    json(&fit(data, &model, &["--method", "ep", "--json"]));
    let latent = certify(&model, data);
    let noisy = certify_with(&model, data, &["--predictor", "noisy"]);
    assert!(latent["predictor"]
        .as_str()
        .unwrap()
        .starts_with("Gibbs classifier sign(f(x) + 0)"));
    assert!(noisy["predictor"].as_str().unwrap().contains("xi"));
    assert!(latent["empirical_risk"].as_f64() < noisy["empirical_risk"].as_f64());
    assert_eq!(latent["kl"], noisy["kl"]);
    exit2(
        &pacgp(&[
            "certify",
            "--model",
            s(&model),
            "--data",
            "data/ripley-synth/synth_te.csv",
        ]),
        "not the model's training sample",
    );
}

/// An edit of a model file's JSON.
type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;

/// Edit one field of a saved model file.
fn edit(model: &Path, out: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(out, serde_json::to_string(&v).unwrap()).unwrap();
}

/// Damaged model files are exit 2 with the reason, never a panic or a silently wrong answer.
#[test]
fn damaged_model_files_are_rejected_on_load() {
    let dir = tempfile::tempdir().unwrap();
    let gpr = fit_snelson(dir.path(), "gpr", &["--epsilon", "0.3"]);
    let vfe = fit_snelson(dir.path(), "vfe", &["--inducing", "10"]);
    let bad = dir.path().join("bad.json");
    let cases: Vec<(&Path, Edit, &str)> = vec![
        (
            &gpr,
            Box::new(|v| v["task"]["noise_variance"] = (-1.0).into()),
            "noise variance",
        ),
        (
            &gpr,
            Box::new(|v| v["task"]["y_scaler"]["sd"] = (-1.0).into()),
            "target scaler",
        ),
        (
            &gpr,
            Box::new(|v| v["x_scaler"]["sd"][0] = 0.0.into()),
            "input scaler",
        ),
        (
            &gpr,
            Box::new(|v| {
                v["posterior"]["alpha"]
                    .as_array_mut()
                    .unwrap()
                    .pop()
                    .map(|_| ())
                    .unwrap()
            }),
            "mean weights",
        ),
        (
            &gpr,
            Box::new(|v| v["spec"]["method"]["options"]["epsilon"] = (-0.3).into()),
            "epsilon",
        ),
        (
            &vfe,
            Box::new(|v| {
                let c = &mut v["posterior"]["cov"]["chol_b"]["l"];
                c["nrows"] = 3.into();
                c["ncols"] = 3.into();
                c["data"] = serde_json::json!([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
            }),
            "factor",
        ),
    ];
    for (model, f, needle) in cases {
        edit(model, &bad, f);
        for cmd in ["predict", "certify"] {
            exit2(
                &pacgp(&[cmd, "--model", s(&bad), "--data", SNELSON]),
                needle,
            );
        }
    }
}

/// Every regression method fits, saves, reloads and certifies from the command line.
#[test]
fn sparse_and_pac_models_fit_and_certify() {
    let dir = tempfile::tempdir().unwrap();
    for (method, extra) in [
        ("vfe", vec!["--inducing", "15", "--epsilon", "0.3"]),
        ("fitc", vec!["--inducing", "15", "--epsilon", "0.3"]),
        ("pac-gp", vec!["--epsilon", "0.3"]),
        ("pac-sgp", vec!["--inducing", "10", "--epsilon", "0.3"]),
        (
            "greedy-sparse",
            vec!["--inducing", "20", "--epsilon", "0.3"],
        ),
    ] {
        let model = fit_snelson(dir.path(), method, &extra);
        let c = certify(&model, SNELSON);
        let bound = c["bound"].as_f64().unwrap();
        assert!(
            bound > c["empirical_risk"].as_f64().unwrap() && bound < 1.0,
            "{method}: {c}"
        );
        assert_eq!(c["n"], 200, "{method}");
        let m = pacgp::model::FittedModel::load(&model).unwrap();
        assert_eq!(m.method().to_string(), method);
        // The stored objective of a PAC model is the certificate's bound itself.
        if method.starts_with("pac") {
            let stored = m.report.objective.unwrap();
            assert!(
                (stored - bound).abs() < 1e-12,
                "{method}: {stored} vs {bound}"
            );
        }
    }
}

/// Options that do not apply to the chosen method are errors, not ignored.
#[test]
fn options_that_do_not_apply_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let ripley = "data/ripley-synth/synth_tr.csv";
    let cases: [(&[&str], &str); 8] = [
        (
            &["--data", SNELSON, "--likelihood", "logistic"],
            "--likelihood applies to laplace",
        ),
        (
            &["--data", SNELSON, "--kappa", "0.1"],
            "--kappa applies to mean-field",
        ),
        (
            &["--data", SNELSON, "--method", "vfe", "--restarts", "2"],
            "--restarts applies to gpr",
        ),
        (
            &["--data", SNELSON, "--inducing", "5"],
            "--inducing applies to",
        ),
        (
            &["--data", SNELSON, "--method", "vfe", "--bound", "kl"],
            "--bound applies to",
        ),
        (
            &["--data", ripley, "--method", "laplace", "--epsilon", "1"],
            "--epsilon applies to regression",
        ),
        (
            &[
                "--data",
                ripley,
                "--method",
                "mean-field",
                "--kernel",
                "matern52-ard",
            ],
            "--kernel applies to laplace, ep and ivm (ML-II from the given kernel)",
        ),
        (
            &["--data", ripley, "--method", "ep", "--active-set", "10"],
            "--active-set applies to ivm and sogp",
        ),
    ];
    for (args, needle) in cases {
        let mut a = vec!["fit", "--out", s(&out)];
        a.extend_from_slice(args);
        exit2(&pacgp(&a), needle);
        assert!(!out.exists(), "no model written for {args:?}");
    }
}

/// The output path is checked before any fitting; a small file gets an inducing set of N.
#[test]
fn output_path_checked_first_and_defaults_fit_small_files() {
    let dir = tempfile::tempdir().unwrap();
    exit2(
        &pacgp(&["fit", "--data", SNELSON, "--out", "no/such/folder/m.json"]),
        "does not exist",
    );
    let small = dir.path().join("small.csv");
    let text = std::fs::read_to_string(repo().join(SNELSON)).unwrap();
    let head: Vec<&str> = text.lines().take(41).collect();
    std::fs::write(&small, head.join("\n")).unwrap();
    let model = dir.path().join("vfe.json");
    let out = fit(s(&small), &model, &["--method", "vfe", "--json"]);
    json(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("inducing inputs (basis points) is set to N = 40"),
        "{err}"
    );
}

/// `predict | head -1` ends quietly: exit 0, no panic.
#[test]
fn a_closed_stdout_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let model = fit_snelson(dir.path(), "gpr", &[]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_pacgp"))
        .args(["predict", "--model", s(&model), "--data", SNELSON])
        .current_dir(repo())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before anything is read
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `demo` finds the shipped data from any working directory.
#[test]
fn demo_runs_from_another_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pacgp"))
        .args(["demo", "--json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let v = json(&out);
    assert_eq!(v["demo"].as_array().unwrap().len(), 4);
}

/// `certify --loo both` reports the approximate and the exact (refit) LOO error for a
/// classifier and a sparse regressor; they agree closely.
#[test]
fn certify_reports_approximate_and_exact_loo_for_every_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = "data/ripley-synth/synth_tr.csv";
    for method in ["laplace", "ep", "ivm"] {
        let model = dir.path().join(format!("{method}.json"));
        let mut args = vec![
            "fit",
            "--data",
            data,
            "--method",
            method,
            "--out",
            s(&model),
            "--json",
        ];
        if method == "ivm" {
            args.extend(["--active-set", "60"]);
        }
        json(&pacgp(&args));
        let c = certify_with(&model, data, &["--loo", "both"]);
        let (a, e) = (
            c["loo_error"].as_f64().unwrap(),
            c["loo_exact_error"].as_f64().unwrap(),
        );
        // max(1, 0.5% of N) decisions of 250.
        assert!(
            (a - e).abs() <= 1.5 / 250.0,
            "{method}: approx {a} vs exact {e}"
        );
        assert!(c["loo_estimator"].is_string(), "{method}: {c}");
    }
    let vfe = fit_snelson(dir.path(), "vfe", &["--inducing", "10", "--epsilon", "0.3"]);
    let c = certify_with(&vfe, SNELSON, &["--loo", "both"]);
    // Sparse regression's rank-one cavity is exact at fixed (θ, σ², Z).
    assert_eq!(c["loo_error"], c["loo_exact_error"], "{c}");
}

/// `reproduce opper-winther --quick` writes Table 17.1 (CSV, JSON) and Fig. 17.2 (CSV, SVG);
/// at the seed's selected point both SVM solvers give the same LOO and CV figures.
#[test]
fn reproduce_opper_winther_quick_writes_table_and_figure() {
    let dir = tempfile::tempdir().unwrap();
    let v = reproduce_json(dir.path(), &["opper-winther", "--quick"]);
    let t = v["table"].as_array().unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(t[0]["loo_approx"], t[1]["loo_approx"]);
    assert_eq!(t[0]["cv_error"], t[1]["cv_error"]);
    // Within ±0.01 of the seed's 10-fold CV error 0.0307.
    assert!((t[0]["cv_error"].as_f64().unwrap() - 0.0307).abs() <= 0.01);
    let files = [
        "opper-winther-table-17-1.csv",
        "opper-winther-figure-17-2.csv",
        "opper-winther-figure-17-2.svg",
        "opper-winther.json",
    ];
    assert_written(dir.path(), &files);
}

/// `reproduce zhang-sparse --quick --json` prints `r_hat`, `delta_r0` and per algorithm the
/// mean ΔR(k) with Theorem 3.1's bound at each k; greedy ≤ κ-greedy ≤ random for k ≥ 10.
#[test]
fn reproduce_zhang_sparse_quick_prints_curves_and_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let v = reproduce_json(dir.path(), &["zhang-sparse", "--quick"]);
    assert!(v["r_hat"]["mean"].as_f64().unwrap() > 0.0);
    let curve = |alg: &str, what: &str| -> Vec<f64> {
        v["curves"][alg][what]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let (g, kg, r) = (
        curve("greedy", "mean_delta_r"),
        curve("kappa-greedy", "mean_delta_r"),
        curve("random", "mean_delta_r"),
    );
    for k in 10..g.len() {
        assert!(g[k] <= kg[k] && kg[k] <= r[k], "k = {k}");
        for alg in ["greedy", "kappa-greedy", "random"] {
            assert!(curve(alg, "mean_delta_r")[k] <= curve(alg, "theorem_3_1_bound")[k]);
        }
    }
    let files = [
        "zhang-sparse.csv",
        "zhang-sparse-figure-1.svg",
        "zhang-sparse-figure-3.svg",
    ];
    assert_written(dir.path(), &files);
}

/// `fit --method svm` gives a certified SVM: decision values and labels from `predict`, its
/// linear-response LOO equal to exact refits within one example, options of other methods
/// refused.
#[test]
fn svm_fits_predicts_and_certifies() {
    let dir = tempfile::tempdir().unwrap();
    let data = "data/breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv";
    let model = dir.path().join("svm.json");
    json(&fit(
        data,
        &model,
        &["--drop", "sample_code_number", "--method", "svm", "--json"],
    ));
    let c = certify_with(&model, data, &["--loo", "both"]);
    let bound = c["bound"].as_f64().unwrap();
    assert!(
        bound < 0.5 && bound > c["empirical_risk"].as_f64().unwrap(),
        "{c}"
    );
    let (a, e) = (
        c["loo_error"].as_f64().unwrap(),
        c["loo_exact_error"].as_f64().unwrap(),
    );
    assert!(
        (a - e).abs() <= 1.0 / 683.0 + 1e-12,
        "LR-LOO {a} vs exact {e}"
    );
    let p = json(&pacgp(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        data,
        "--json",
    ]));
    let dec = p["decision"].as_array().unwrap();
    let lab = p["label"].as_array().unwrap();
    for (d, l) in dec.iter().zip(lab) {
        let want = if d.as_f64().unwrap() >= 0.0 { "4" } else { "2" };
        assert_eq!(l.as_str().unwrap(), want);
    }
    exit2(
        &fit(data, &model, &["--method", "svm", "--kappa", "0.1"]),
        "--kappa applies to",
    );
    exit2(
        &fit(data, &model, &["--method", "laplace", "--c", "1"]),
        "--c applies to svm",
    );
}

/// `--bias true` fits the seed's SVM with a free bias: it predicts (labels = sign of the
/// decision value with b) and has a LOO, but `certify` refuses it with the reason.
#[test]
fn svm_with_a_fitted_bias_predicts_but_is_not_certified() {
    let dir = tempfile::tempdir().unwrap();
    let data = "data/ripley-synth/synth_tr.csv";
    let model = dir.path().join("svm-bias.json");
    json(&fit(
        data,
        &model,
        &["--method", "svm", "--bias", "true", "--c", "10", "--json"],
    ));
    let p = json(&pacgp(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        data,
        "--json",
    ]));
    let (dec, lab) = (
        p["decision"].as_array().unwrap(),
        p["label"].as_array().unwrap(),
    );
    let pos = lab
        .iter()
        .zip(dec)
        .find(|(_, d)| d.as_f64().unwrap() > 0.0)
        .map(|(l, _)| l.clone())
        .unwrap();
    for (d, l) in dec.iter().zip(lab) {
        assert_eq!(d.as_f64().unwrap() > 0.0, *l == pos);
    }
    exit2(
        &pacgp(&["certify", "--model", s(&model), "--data", data]),
        "has no certificate",
    );
    let e = json(&pacgp(&[
        "evaluate",
        "--model",
        s(&model),
        "--data",
        data,
        "--json",
    ]));
    assert!(e["error_rate"].as_f64().unwrap() < 0.2, "{e}");
}
