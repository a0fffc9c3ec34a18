//! `fit --certify-holdout F` and the `"deployed"` object of `certify --json`: the test-set
//! bound on the deployed predictor from the held-out rows, beside the Gibbs certificate at δ/2;
//! another sample, an edited split and a fraction out of range exit with status 2.

mod common;
use common::{certify, fails, fit, ok, pacgp, reproduce_json, s, words};

const DATA: &str = "data/ripley-synth/synth_tr.csv";

#[test]
fn certify_reports_the_deployed_predictor_on_the_holdout() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let opts = words("--method laplace --certify-holdout 0.2 --seed 1");
    ok(&fit(DATA, &model, &opts));
    let c = certify(&model, DATA);
    let d = &c["deployed"];
    assert_eq!(d["predictor"], "posterior_mean_sign", "{c}");
    assert_eq!(d["bound"], "binomial_tail");
    assert_eq!(d["n"], 50); // round(0.2 · 250)
    assert_eq!(c["n"], 200); // the Gibbs certificate is on the fit rows
    assert_eq!(d["delta"], 0.005);
    assert_eq!(d["joint_delta"], 0.01);
    assert_eq!(c["delta"], 0.005);
    let (errors, rate, value) = (
        d["errors"].as_u64().unwrap(),
        d["error_rate"].as_f64().unwrap(),
        d["value"].as_f64().unwrap(),
    );
    assert_eq!(rate, errors as f64 / 50.0);
    assert!(value >= rate && value < 1.0, "{d}");
    assert_eq!(
        value,
        pacgp::bounds::binomial_tail_inversion(errors as usize, 50, 0.005).unwrap()
    );

    // The words say which predictor and how δ is shared.
    let text = ok(&pacgp(&["certify", "--model", s(&model), "--data", DATA]));
    assert!(text.contains("the sign of the posterior mean"), "{text}");
    assert!(text.contains("δ/2"), "{text}");

    // Another sample: the test file, or the training file less its held-out rows' worth.
    let other = pacgp(&[
        "certify",
        "--model",
        s(&model),
        "--data",
        "data/ripley-synth/synth_te.csv",
    ]);
    assert_eq!(other.status.code(), Some(2));

    // An edited seed of the split is refused.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    v["holdout"]["seed"] = 2.into();
    let edited = dir.path().join("edited.json");
    std::fs::write(&edited, v.to_string()).unwrap();
    let out = pacgp(&["certify", "--model", s(&edited), "--data", DATA]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("holdout record"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_fraction_out_of_range_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    for f in ["1.5", "0", "0.001"] {
        let out = fit(
            DATA,
            &model,
            &["--method", "laplace", "--certify-holdout", f],
        );
        assert_eq!(out.status.code(), Some(2), "F = {f}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--certify-holdout"), "F = {f}: {err}");
    }
}

/// `reproduce deployed --holdout F` records F and its holdout fits keep out F of each training
/// part (crabs: 140 training rows, 70 held out at F = 0.5, so no bound on them is below the
/// binomial tail with no error, 1 − 0.005^(1/70)); F outside (0, 1) exits with status 2
/// naming it, before any fit.
#[test]
fn reproduce_deployed_takes_the_holdout_fraction() {
    let dir = tempfile::tempdir().unwrap();
    let args = words("deployed --quick --reps 1 --datasets crabs --holdout 0.5");
    let v = reproduce_json(dir.path(), &args);
    assert_eq!(v["holdout"], 0.5, "{v}");
    let none = 1.0 - 0.005f64.powf(1.0 / 70.0);
    for r in v["rows"].as_array().unwrap() {
        let bound = r["holdout_bound"].as_f64().unwrap();
        assert!(bound >= none - 1e-12 && bound < 1.0, "{r}");
    }
    for f in ["1.5", "0", "-0.2"] {
        let out = dir.path().join(f);
        let err = fails(
            &[
                "reproduce",
                "deployed",
                "--quick",
                "--holdout",
                f,
                "--out",
                s(&out),
            ],
            2,
        );
        assert!(err.contains("holdout"), "{f}: {err}");
        let written = std::fs::read_dir(&out).map_or(0, |d| d.count());
        assert_eq!(written, 0, "{f}: nothing is written before the check");
    }
}
