//! The model file across the in-memory layout where a posterior lives in its task: files
//! written by the earlier layout (multi-class ones with a placeholder posterior at the top
//! level) certify to the same bits; new multi-class files hold no placeholder; a file with an
//! illegal task (two split records, a binary or regression model without its posterior) is
//! refused by name.

mod common;

use std::path::{Path, PathBuf};

use common::{ok, pacgp, s};
use serde_json::Value;

/// The earlier version's files and the samples they were fitted on (see the folder's README).
fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/model_v2")
        .join(name)
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn certify(model: &Path, data: &Path) -> std::process::Output {
    pacgp(&["certify", "--model", s(model), "--data", s(data), "--json"])
}

/// `pacgp fit` on the boston fixture at ε = 3 with `extra` options, written to `out`.
fn fit_boston(out: &Path, extra: &[&str]) {
    let boston = fixture("boston80.csv");
    let mut args = vec![
        "fit",
        "--data",
        s(&boston),
        "--target",
        "MEDV",
        "--epsilon",
        "3",
    ];
    args.extend_from_slice(extra);
    args.extend(["--out", s(out)]);
    ok(&pacgp(&args));
}

/// `certify` of an edited model file on `data` fails; its message.
fn refused(file: &Value, data: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("edited.json");
    std::fs::write(&edited, file.to_string()).unwrap();
    let out = certify(&edited, data);
    assert!(!out.status.success(), "an edited file was certified");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The earlier files and the certificates that version printed for them.
const EARLIER: [(&str, &str); 3] = [
    ("ovr_v2", "iris45.csv"),
    ("softmax_v2", "iris45.csv"),
    ("pacsgp_split_v2", "boston80.csv"),
];

/// `certify --json`'s output for `model` on `data`, and the earlier version's for the same
/// file, without what that version did not compute: the one-vs-rest model's deployed
/// certificate and the softmax model's leave-one-out estimate (both new since; present now).
/// Every other field must have the same bits.
fn certificates(model: &Path, data: &Path, name: &str) -> (Value, Value) {
    let mut got: Value = serde_json::from_str(&ok(&certify(model, data))).unwrap();
    let want = json_file(&fixture(&format!("{name}.cert.json")));
    if want.get("deployed").is_none() && name == "ovr_v2" {
        let deployed = got.as_object_mut().unwrap().remove("deployed").unwrap();
        assert_eq!(deployed["predictor"], "predicted_class", "{name}");
    }
    if want["loo_error"].is_null() && name == "softmax_v2" {
        let fields = got.as_object_mut().unwrap();
        assert_eq!(fields.remove("loo_estimator").unwrap(), "cavity", "{name}");
        let loo = fields.insert("loo_error".into(), Value::Null).unwrap();
        assert!(loo.as_f64().is_some_and(|e| e < 0.1), "{name}: {loo}");
    }
    (got, want)
}

#[test]
fn earlier_model_files_certify_to_the_same_bits() {
    for (model, data) in EARLIER {
        let (got, want) = certificates(&fixture(&format!("{model}.json")), &fixture(data), model);
        assert_eq!(got, want, "{model}: the certificate changed");
    }
}

/// The same JSON up to 1e-12 relative in every number (an optimiser's `final_change` aside):
/// strings, keys, lengths and integers exactly.
fn assert_close_json(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(x), keys(y), "{at}");
            // The last step's size, a convergence diagnostic, is round-off itself.
            for (k, v) in x.iter().filter(|(k, _)| *k != "final_change") {
                assert_close_json(v, &y[k], &format!("{at}/{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                assert_close_json(u, v, &format!("{at}[{i}]"));
            }
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (u, v) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (u - v).abs() <= 1e-12 * u.abs().max(v.abs()),
                "{at}: {u} vs {v}"
            );
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

/// A fresh multi-class fit writes no placeholder posterior, and is the earlier version's fit
/// of the same sample up to 1e-12 relative (the probit's ln Φ gained digits between 2 and 5
/// since, which moves a Laplace fit in its last bits), certified likewise; a binary or
/// regression file keeps its posterior at the top level, where the earlier layout had it.
#[test]
fn multiclass_files_hold_no_placeholder_posterior() {
    let dir = tempfile::tempdir().unwrap();
    let iris = fixture("iris45.csv");
    for (name, extra) in [
        ("ovr_v2", &[][..]),
        ("softmax_v2", &["--multiclass", "softmax"][..]),
    ] {
        let out = dir.path().join(format!("{name}.json"));
        let mut args = vec!["fit", "--data", s(&iris), "--target", "species"];
        args.extend(["--method", "laplace", "--out", s(&out)]);
        args.extend(extra);
        ok(&pacgp(&args));
        let file = json_file(&out);
        assert!(file.get("posterior").is_none(), "{name}: a placeholder");
        let mut earlier = json_file(&fixture(&format!("{name}.json")));
        assert!(earlier.get("posterior").is_some());
        earlier.as_object_mut().unwrap().remove("posterior");
        assert_close_json(&file, &earlier, name);
        let (got, want) = certificates(&out, &iris, name);
        assert_close_json(&got, &want, name);
    }
    let gpr = dir.path().join("gpr.json");
    fit_boston(&gpr, &[]);
    assert!(json_file(&gpr).get("posterior").is_some());
}

/// Both a dense and a sparse split prior's record in one regression task: no version writes
/// it, and `certify` refuses the file naming the two.
#[test]
fn a_regression_task_with_two_split_records_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let boston = fixture("boston80.csv");
    let dense = dir.path().join("dense.json");
    fit_boston(&dense, &["--method", "pac-gp", "--prior", "split:0.5"]);
    let record = json_file(&dense)["task"]["split_prior"].clone();
    assert!(record.is_object());
    let mut both = json_file(&fixture("pacsgp_split_v2.json"));
    both["task"]["split_prior"] = record;
    let err = refused(&both, &boston);
    assert!(
        err.contains("both a split prior and a sparse split prior"),
        "{err}"
    );
}

/// A regression or binary model's file without its posterior is refused, naming what is
/// missing (a multi-class one never needed it).
#[test]
fn a_binary_or_regression_file_without_its_posterior_is_refused() {
    let mut file = json_file(&fixture("pacsgp_split_v2.json"));
    file.as_object_mut().unwrap().remove("posterior");
    let err = refused(&file, &fixture("boston80.csv"));
    assert!(
        err.contains("a regression model file without its posterior"),
        "{err}"
    );
}
