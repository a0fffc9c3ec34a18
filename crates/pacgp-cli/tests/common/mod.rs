//! What the CLI's test files share: the repository root, running the built `pacgp` there, a
//! path as text, a run that must succeed (its stdout as text or JSON), one that must fail, and
//! the fit / certify / evaluate calls most tests start from.
// Each test file is its own crate and uses only part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Ripley's synthetic two-class set: its training and test files (relative to the root).
pub const RIPLEY: (&str, &str) = (
    "data/ripley-synth/synth_tr.csv",
    "data/ripley-synth/synth_te.csv",
);

/// Writes `text` to the file `name` in `dir`; its path as text.
pub fn write_data(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// A command line's words, split at white space: option lists written as on the command line.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The repository root (the shipped data's paths are relative to it).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the built `pacgp` with `args` in the repository root.
pub fn pacgp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pacgp"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run pacgp")
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Requires success; returns stdout.
pub fn ok(out: &Output) -> String {
    ok_in("pacgp", out)
}

/// Requires success, naming `case` and quoting stderr when it fails; returns stdout.
pub fn ok_in(case: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Runs `pacgp args…` and requires success, quoting the arguments and stderr when it fails;
/// returns stdout and stderr.
pub fn run_ok(args: &[&str]) -> (String, String) {
    ok_with_stderr(&format!("{args:?}"), &pacgp(args))
}

/// [`ok_in`] returning stdout and stderr.
pub fn ok_with_stderr(case: &str, out: &Output) -> (String, String) {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{case}: {err}");
    (String::from_utf8(out.stdout.clone()).unwrap(), err)
}

/// The JSON file at `path` (a model file), parsed.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Requires success and exactly one JSON object on one line (what `--json` prints); returns it.
pub fn json(out: &Output) -> serde_json::Value {
    json_in("pacgp", out)
}

/// [`json`], naming `case` when the run fails.
pub fn json_in(case: &str, out: &Output) -> serde_json::Value {
    let text = ok_in(case, out);
    let text = text.trim();
    assert_eq!(text.lines().count(), 1, "{case}: one JSON object: {text}");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{case}: {e}: {text}"))
}

/// Runs `pacgp args`, requires exit status `code`; returns stderr.
pub fn fails(args: &[&str], code: i32) -> String {
    let out = pacgp(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    err
}

/// Runs `pacgp args` for one case of a shared table of bad options (a fixture of
/// `crates/pacgp/tests/fixtures/`): exit 2, with the case's words (`says`) and `flag`, the
/// option as the user typed it; returns stderr.
pub fn refuses_case(args: &[String], case: &serde_json::Value, flag: &str) -> String {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&a, 2);
    let says = case["says"].as_str().unwrap();
    assert!(err.contains(says), "{args:?}: '{says}' not in {err}");
    assert!(err.contains(flag), "{args:?}: '{flag}' not in {err}");
    err
}

/// Runs `pacgp reproduce args… --out out --json`, requires success; returns the JSON printed.
pub fn reproduce_json(out: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["reproduce"];
    all.extend_from_slice(args);
    all.extend(["--out", s(out), "--json"]);
    json(&pacgp(&all))
}

/// Asserts that every file of `files` was written to `dir`.
pub fn assert_written(dir: &Path, files: &[&str]) {
    for f in files {
        assert!(dir.join(f).exists(), "{f} not written to {}", dir.display());
    }
}

/// `pacgp reproduce <experiment> --quick --datasets nosuchset` fails, naming the data set.
pub fn assert_reproduce_rejects_unknown_dataset(experiment: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = pacgp(&[
        "reproduce",
        experiment,
        "--quick",
        "--datasets",
        "nosuchset",
        "--out",
        s(dir.path()),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuchset"));
}

/// Runs `pacgp fit --data data --out model` followed by `extra`.
pub fn fit(data: &str, model: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["fit", "--data", data, "--out", s(model)];
    args.extend_from_slice(extra);
    pacgp(&args)
}

/// The certificate `pacgp certify --model model --data data --json` prints (success required).
pub fn certify(model: &Path, data: &str) -> serde_json::Value {
    certify_with(model, data, &[])
}

/// [`certify`] with the options `extra` added.
pub fn certify_with(model: &Path, data: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["certify", "--model", s(model), "--data", data, "--json"];
    args.extend_from_slice(extra);
    json(&pacgp(&args))
}

/// The scores `pacgp evaluate --model model --data data --json` prints (success required).
pub fn evaluate(model: &Path, data: &str) -> serde_json::Value {
    json(&pacgp(&[
        "evaluate",
        "--model",
        s(model),
        "--data",
        data,
        "--json",
    ]))
}

/// Runs `pacgp predict --model model --data data --out out` (success required); returns the
/// CSV text it wrote.
pub fn predict_csv(model: &Path, data: &str, out: &Path) -> String {
    let args = [
        "predict",
        "--model",
        s(model),
        "--data",
        data,
        "--out",
        s(out),
    ];
    ok(&pacgp(&args));
    std::fs::read_to_string(out).unwrap()
}

/// Runs `pacgp split --data data --test-fraction 0.2 --seed 7` followed by `extra` (on
/// boston: 405 training rows and 101 test rows, by default written next to `data`).
pub fn split_seed_7(data: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "split",
        "--data",
        s(data),
        "--test-fraction",
        "0.2",
        "--seed",
        "7",
    ];
    args.extend_from_slice(extra);
    pacgp(&args)
}

/// Boston copied into `dir` and split there by [`split_seed_7`] (success required): the copy's
/// path, with `boston.train.csv` and `boston.test.csv` next to it.
pub fn split_boston(dir: &Path) -> PathBuf {
    let data = dir.join("boston.csv");
    std::fs::copy(repo().join("data/boston-housing/boston.csv"), &data).unwrap();
    ok(&split_seed_7(&data, &[]));
    data
}

/// Every 5th row of iris (30 rows, 10 per species) to fit on, the other 120 to test on.
pub fn iris_split(dir: &Path) -> (PathBuf, PathBuf) {
    let text = std::fs::read_to_string(repo().join("data/iris/iris.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let (mut train, mut test) = (vec![header], vec![header]);
    for (i, line) in lines.enumerate() {
        if i % 5 == 0 { &mut train } else { &mut test }.push(line);
    }
    let paths = (dir.join("iris-train.csv"), dir.join("iris-test.csv"));
    std::fs::write(&paths.0, train.join("\n") + "\n").unwrap();
    std::fs::write(&paths.1, test.join("\n") + "\n").unwrap();
    (paths.0, paths.1)
}
