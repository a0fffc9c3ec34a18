//! `fit --method pac-gpc` and `--prior split:F` for classifiers, end to end: the stored bound
//! is the one `certify` recomputes (pac-gpc, and the split prior from the record in the model
//! file, also with Catoni's λ and the prior scale fixed on part A, and for another δ), and bad
//! flags are errors.

use std::path::{Path, PathBuf};

mod common;
use common::{ok, pacgp, s, words};

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
    serde_json::from_str(&ok(&pacgp(&args))).unwrap()
}

/// `certify --loo none --json` on crabs with extra flags.
fn certify(model: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "certify",
        "--model",
        s(model),
        "--data",
        "data/crabs/crabs.csv",
        "--loo",
        "none",
        "--json",
    ];
    args.extend(extra);
    serde_json::from_str(&ok(&pacgp(&args))).unwrap()
}

/// `certify` of the split-prior model `model` that the fit `f` wrote: the stored bound within
/// 1e-9, on part B's rows; returns the certificate.
fn certify_reproduces_split_fit(model: &Path, f: &serde_json::Value) -> serde_json::Value {
    let c = certify(model, &[]);
    let b = f["objective"].as_f64().unwrap();
    assert!(
        (c["bound"].as_f64().unwrap() - b).abs() < 1e-9,
        "{c} vs {b}"
    );
    assert_eq!(c["n"], f["split_prior"]["n_b"]);
    c
}

#[test]
fn pac_gpc_and_split_prior_bounds_are_recomputed_by_certify() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("g.json");
    let f = fit(&["--method", "pac-gpc"], &m);
    let stored = f["objective"].as_f64().unwrap();
    // `--loo auto`, the default: pac-gpc's leave-one-out is its sites' cavities.
    let c: serde_json::Value = serde_json::from_slice(
        &pacgp(&[
            "certify",
            "--model",
            s(&m),
            "--data",
            "data/crabs/crabs.csv",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        (c["bound"].as_f64().unwrap() - stored).abs() < 1e-12,
        "{c} vs {stored}"
    );
    let loo = c["loo_error"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&loo), "{c}");
    assert_eq!(c["loo_estimator"], "cavity", "{c}");
    // Exact refits are refused (exit 2): each would train the bound again.
    let o = pacgp(&[
        "certify",
        "--model",
        s(&m),
        "--data",
        "data/crabs/crabs.csv",
        "--loo",
        "exact",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("pac-gpc's leave-one-out is its sites' cavities"),
        "{err}"
    );
    // Its bound is below the Laplace classifier's chosen the same way.
    let l = fit(&["--method", "laplace"], &dir.path().join("l.json"));
    assert!(stored < l["objective"].as_f64().unwrap());

    let sp = dir.path().join("s.json");
    let f = fit(&["--method", "laplace", "--prior", "split:auto"], &sp);
    let b = f["objective"].as_f64().unwrap();
    assert!(b > 0.0 && b < 1.0);
    certify_reproduces_split_fit(&sp, &f);
    assert!(f["split_prior"]["lambda"].is_null());

    // Catoni's λ and the prior scale fixed on part A: certify uses the stored λ by default,
    // reproduces the bound, and recomputes it at another δ (same KL and risk, lower bound).
    let cs = dir.path().join("c.json");
    let f = fit(
        &words("--method pac-gpc --prior split:0.5 --bound catoni --prior-scale auto --seed 3"),
        &cs,
    );
    let b = f["objective"].as_f64().unwrap();
    let lambda = f["split_prior"]["lambda"].as_f64().unwrap();
    assert!(lambda > 0.0 && f["split_prior"]["prior_scale"].as_f64().unwrap() <= 1.0);
    let c = certify_reproduces_split_fit(&cs, &f);
    assert!(c.to_string().contains("catoni"), "{c}");
    let loose = certify(&cs, &["--delta", "0.05"]);
    assert_eq!(loose["kl"], c["kl"]);
    assert_eq!(loose["empirical_risk"], c["empirical_risk"]);
    assert!(loose["bound"].as_f64().unwrap() < b);
    // The kernel structure chosen on part A and both directions (`ln 6` with split:auto):
    // certify reproduces the bound and its penalty.
    let ks = dir.path().join("k.json");
    let f = fit(
        &words("--method pac-gpc --prior split:auto --bound catoni --prior-kernel auto --both-directions --seed 5"),
        &ks,
    );
    assert_eq!(f["split_prior"]["menu"], 6);
    let c = certify_reproduces_split_fit(&ks, &f);
    assert!(
        (c["penalty"].as_f64().unwrap() - 6f64.ln()).abs() < 1e-12,
        "{c}"
    );
    // Another sample (one label flipped) is refused.
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/crabs/crabs.csv"),
    )
    .unwrap();
    let flipped = dir.path().join("flipped.csv");
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[1] = match lines[1].strip_suffix(",B") {
        Some(rest) => format!("{rest},O"),
        None => format!("{},B", lines[1].strip_suffix(",O").unwrap()),
    };
    std::fs::write(&flipped, lines.join("\n")).unwrap();
    let o = pacgp(&["certify", "--model", s(&cs), "--data", s(&flipped)]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("training"));
    let x = dir.path().join("x.json");
    for bad in [
        vec!["--method", "ep", "--prior", "split:0.5"],
        vec!["--method", "laplace", "--prior", "split:1.5"],
        words("--method pac-gpc --select ml2"),
        words("--method laplace --bound catoni"),
        words("--method pac-gpc --prior-scale auto"),
        words("--method pac-gpc --prior split:0.5 --prior-scale 0"),
        words("--method ep --bound catoni"),
        words("--method pac-gpc --both-directions"),
        words("--method laplace --prior-kernel auto"),
        words("--method ep --prior split:0.5 --both-directions"),
        words("--method pac-gpc --prior split:0.5 --bound maurer"),
    ] {
        let mut args = vec!["fit"];
        args.extend(CRABS);
        args.extend(bad.iter().copied());
        args.extend(["--out", s(&x)]);
        assert!(!pacgp(&args).status.success(), "{bad:?}");
    }
}

/// pac-svgp with `--prior split:0.5` (θ, Z and `q_A` by the ELBO on part A, q alone by the
/// bound on part B): `certify` refits part A and recomputes the fit's bound on part B with no
/// price for θ; a model file whose split (seed, fraction, the spec's prior), θ_A or inducing
/// inputs were edited is refused; `split:auto` with the default M (which must fit the
/// smallest part, 60 of crabs' 200 rows at F = 0.3) is priced `ln 3` and recomputed too; the
/// ELBO-trained svgp and a one-vs-rest pac-svgp take no split prior.
#[test]
fn pac_svgp_split_prior_is_recomputed_by_certify() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("sv.json");
    let split = [
        "--prior",
        "split:0.5",
        "--inducing",
        "10",
        "--max-iter",
        "100",
    ];
    let mut args = vec!["--method", "pac-svgp"];
    args.extend(split);
    let f = fit(&args, &m);
    let c = certify_reproduces_split_fit(&m, &f);
    assert_eq!(c["penalty"], 0.0);
    assert_eq!(f["split_prior"]["n_a"], 100);

    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    let edits: [(&str, &[&str], serde_json::Value); 6] = [
        (
            "spec's split",
            &["/spec/method/options/split"],
            serde_json::Value::Null,
        ),
        ("seed", &["/task/split_prior/seed"], 1.into()),
        (
            "seed of spec and record",
            &["/task/split_prior/seed", "/spec/seed"],
            1.into(),
        ),
        ("fraction", &["/task/split_prior/fraction"], 0.3.into()),
        (
            "θ_A",
            &["/task/split_prior/kernel_a/ln_variance"],
            5.0.into(),
        ),
        ("Z", &["/posterior/basis/data/0"], 9.0.into()),
    ];
    let edited = dir.path().join("edited.json");
    for (what, pointers, value) in edits {
        let mut v = model.clone();
        for p in pointers {
            *v.pointer_mut(p).unwrap_or_else(|| panic!("{p}")) = value.clone();
        }
        std::fs::write(&edited, v.to_string()).unwrap();
        let o = pacgp(&[
            "certify",
            "--model",
            s(&edited),
            "--data",
            "data/crabs/crabs.csv",
        ]);
        assert!(!o.status.success(), "an edited {what} was certified");
    }

    let auto = dir.path().join("auto.json");
    let f = fit(
        &[
            "--method",
            "pac-svgp",
            "--prior",
            "split:auto",
            "--max-iter",
            "50",
        ],
        &auto,
    );
    assert_eq!(f["split_prior"]["menu"], 3);
    let c = certify_reproduces_split_fit(&auto, &f);
    assert!(
        (c["penalty"].as_f64().unwrap() - 3f64.ln()).abs() < 1e-12,
        "{c}"
    );

    let x = dir.path().join("x.json");
    for method in [
        &["--method", "svgp"][..],
        &["--method", "pac-svgp", "--multiclass", "one-vs-rest"],
    ] {
        let mut args = vec!["fit"];
        args.extend(CRABS);
        args.extend(method);
        args.extend(split);
        args.extend(["--out", s(&x)]);
        assert!(!pacgp(&args).status.success(), "{method:?}");
    }
}
