//! Copied rows (issue 43 item 7), end to end: boston's training rows written four times and
//! fitted with `--intervals jackknife+` used to give 90% intervals 7·10⁻⁵ wide that covered
//! none of the test targets while stating ≥ 0.8; now they cover the test targets as stated
//! and are as wide as the one-copy fit's, and `fit` warns. A pac-gp fit on six copies cannot
//! be repaired (its bound assumes independent rows): `fit` and `certify` warn, and the model
//! file and the certificate carry the count.

use std::path::{Path, PathBuf};

mod common;
use common::{run_ok, s, split_boston};

/// Boston split by `pacgp split` (seed 7: 405 training rows, 101 test rows): the paths of the
/// training file, the test file and the test targets.
fn boston(dir: &Path) -> (PathBuf, PathBuf, Vec<f64>) {
    split_boston(dir);
    let test = dir.join("boston.test.csv");
    let y = std::fs::read_to_string(&test)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    (dir.join("boston.train.csv"), test, y)
}

/// The first `rows` data rows of `from` (all with `None`), each written `copies` times.
fn copied(from: &Path, rows: Option<usize>, copies: usize, to: &Path) {
    let text = std::fs::read_to_string(from).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let body: Vec<&str> = lines.take(rows.unwrap_or(usize::MAX)).collect();
    let mut out = format!("{header}\n");
    for _ in 0..copies {
        for l in &body {
            out.push_str(l);
            out.push('\n');
        }
    }
    std::fs::write(to, out).unwrap();
}

/// Fit gpr with jackknife+ on `train`; `predict --interval 0.9 --json` on `test`: the fit's
/// JSON and stderr, the intervals' mean width and their coverage of `y`, predict's stderr.
fn jackknife_plus(
    dir: &Path,
    train: &Path,
    test: &Path,
    y: &[f64],
) -> (serde_json::Value, String, f64, f64, String) {
    let model = dir.join("m.json");
    let (out, fit_err) = run_ok(&[
        "fit",
        "--data",
        s(train),
        "--method",
        "gpr",
        "--intervals",
        "jackknife+",
        "--out",
        s(&model),
        "--json",
    ]);
    let fitted: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (out, predict_err) = run_ok(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        s(test),
        "--interval",
        "0.9",
        "--json",
    ]);
    let p: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let ends = |k: &str| -> Vec<f64> {
        p[k].as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let (lo, hi) = (ends("lower"), ends("upper"));
    assert_eq!(lo.len(), y.len());
    let n = y.len() as f64;
    let width = lo.iter().zip(&hi).map(|(l, h)| h - l).sum::<f64>() / n;
    let covered = (0..y.len())
        .filter(|&j| lo[j] <= y[j] && y[j] <= hi[j])
        .count() as f64
        / n;
    assert_eq!(
        p["interval"]["guaranteed_coverage"].as_f64(),
        Some(0.8),
        "{p}"
    );
    (fitted, fit_err, width, covered, predict_err)
}

#[test]
fn copied_rows_keep_jackknife_plus_honest_and_warn() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test, y) = boston(dir.path());
    let (fit1, err1, w1, c1, p1) = jackknife_plus(dir.path(), &train, &test, &y);
    assert_eq!(fit1["duplicates"]["rows"], 0);
    assert!(
        !err1.contains("warning:") && !p1.contains("independent rows"),
        "{err1}{p1}"
    );
    let four = dir.path().join("four.csv");
    copied(&train, None, 4, &four);
    let (fit4, err4, w4, c4, p4) = jackknife_plus(dir.path(), &four, &test, &y);
    eprintln!(
        "one copy: width {w1:.4} coverage {c1:.3}; four copies: width {w4:.4} coverage {c4:.3}"
    );
    let d = &fit4["duplicates"];
    assert_eq!(
        (d["n"].as_u64(), d["rows"].as_u64()),
        (Some(1620), Some(1215))
    );
    assert!(
        err4.contains("warning: 1215 of the 1620 rows (75.0%) repeat an earlier row exactly")
            && err4.contains("assume independent rows"),
        "{err4}"
    );
    assert!(p4.contains("assumes independent rows"), "{p4}");
    // The stated ≥ 0.8 holds on the test rows, and the intervals are not collapsed (they were
    // 7·10⁻⁵ wide and covered none when a copy of each left-out row stayed in).
    assert!(c1 >= 0.8 && c4 >= 0.8, "coverage {c1} {c4}");
    assert!(w4 > 0.5 * w1 && w4 < 2.0 * w1, "width {w1} {w4}");
}

/// `fit --method pac-gp --epsilon 3` on `data` into `model`, then `certify --json` of that
/// model on `data` (both must succeed): the fit's stderr, and the certificate's stdout and
/// stderr.
fn pac_gp_fit_and_certify(data: &Path, model: &Path) -> (String, String, String) {
    let fit = [
        "fit",
        "--data",
        s(data),
        "--method",
        "pac-gp",
        "--epsilon",
        "3",
        "--out",
        s(model),
    ];
    let (_, fit_err) = run_ok(&fit);
    let certify = ["certify", "--model", s(model), "--data", s(data), "--json"];
    let (out, cert_err) = run_ok(&certify);
    (fit_err, out, cert_err)
}

#[test]
fn pac_gp_on_copies_warns_at_fit_and_certify_and_carries_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _, _) = boston(dir.path());
    let six = dir.path().join("six.csv");
    copied(&train, Some(60), 6, &six);
    let model = dir.path().join("m.json");
    let (fit_err, out, cert_err) = pac_gp_fit_and_certify(&six, &model);
    assert!(
        fit_err.contains("warning: 300 of the 360 rows (83.3%) repeat an earlier row exactly (60 distinct rows occur more than once)"),
        "{fit_err}"
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(file["duplicates"]["rows"], 300);
    assert_eq!(file["duplicates"]["groups"], 60);
    assert!(
        cert_err.contains("warning: 300 of the 360 rows") && cert_err.contains("certificate"),
        "{cert_err}"
    );
    let cert: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = &cert["duplicates"];
    assert_eq!(
        (d["n"].as_u64(), d["rows"].as_u64(), d["groups"].as_u64()),
        (Some(360), Some(300), Some(60)),
        "{cert}"
    );
    assert!((d["share"].as_f64().unwrap() - 300.0 / 360.0).abs() < 1e-15);
    // One copy: no warning, a count of 0.
    let one = dir.path().join("one.csv");
    copied(&train, Some(60), 1, &one);
    let (fit_err, out, cert_err) = pac_gp_fit_and_certify(&one, &model);
    assert!(!fit_err.contains("warning:"), "{fit_err}");
    assert!(!cert_err.contains("warning:"), "{cert_err}");
    let cert: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(cert["duplicates"]["rows"], 0);
}
