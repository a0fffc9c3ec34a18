//! `fit --method pac-gpc` and `--prior split:F` for classifiers, end to end: the stored bound
//! is the one `certify` recomputes (pac-gpc), a split-prior model refuses a certificate it
//! could not recompute, and bad flags are errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pacgp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pacgp"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .expect("run pacgp")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const CRABS: [&str; 6] = [
    "--data",
    "data/crabs/crabs.csv",
    "--target",
    "sp",
    "--drop",
    "sex,index",
];

fn fit(extra: &[&str], out: &Path) -> serde_json::Value {
    let mut args = vec!["fit"];
    args.extend(CRABS);
    args.extend(extra);
    args.extend(["--out", s(out), "--json"]);
    let o = pacgp(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn pac_gpc_bound_is_recomputed_by_certify_and_split_models_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("g.json");
    let f = fit(&["--method", "pac-gpc"], &m);
    let stored = f["objective"].as_f64().unwrap();
    let c: serde_json::Value = serde_json::from_slice(
        &pacgp(&[
            "certify",
            "--model",
            s(&m),
            "--data",
            "data/crabs/crabs.csv",
            "--loo",
            "none",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        (c["bound"].as_f64().unwrap() - stored).abs() < 1e-12,
        "{c} vs {stored}"
    );
    // Its bound is below the Laplace classifier's chosen the same way.
    let l = fit(&["--method", "laplace"], &dir.path().join("l.json"));
    assert!(stored < l["objective"].as_f64().unwrap());

    let sp = dir.path().join("s.json");
    let f = fit(&["--method", "laplace", "--prior", "split:auto"], &sp);
    let b = f["objective"].as_f64().unwrap();
    assert!(b > 0.0 && b < 1.0);
    let o = pacgp(&[
        "certify",
        "--model",
        s(&sp),
        "--data",
        "data/crabs/crabs.csv",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("part B"));
    let x = dir.path().join("x.json");
    for bad in [
        vec!["--method", "ep", "--prior", "split:0.5"],
        vec!["--method", "laplace", "--prior", "split:1.5"],
        vec!["--method", "pac-gpc", "--select", "ml2"],
    ] {
        let mut args = vec!["fit"];
        args.extend(CRABS);
        args.extend(bad.iter().copied());
        args.extend(["--out", s(&x)]);
        assert!(!pacgp(&args).status.success(), "{bad:?}");
    }
}
