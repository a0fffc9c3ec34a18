//! The same data, options and seed give byte-identical model files whatever the thread count
//! (issue 11, item 4): every parallel reduction in the library sums in a fixed order.
//!
//! The data sets have about 300 rows so that the parallel paths (faer's matrix-vector products
//! above 256 × 256, the chunked gradient contractions) are exercised on two threads.

use std::path::Path;
use std::process::Command;

mod common;
use common::repo;

/// The header and every `step`-th data row from `offset` (at most `rows` of them) of a shipped
/// CSV, written to `out`.
fn subset(rel: &str, step: usize, offset: usize, rows: usize, out: &Path) {
    let text = std::fs::read_to_string(repo().join(rel)).unwrap();
    let mut lines = text.lines();
    let mut kept = vec![lines.next().unwrap()];
    kept.extend(lines.skip(offset).step_by(step).take(rows));
    std::fs::write(out, kept.join("\n") + "\n").unwrap();
}

/// Fit with `--threads threads` and return the model file's bytes.
fn fit(threads: &str, data: &Path, method: &[&str], out: &Path) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_pacgp"))
        .args(["--threads", threads, "fit", "--data"])
        .arg(data)
        .args(["--method"])
        .args(method)
        .args(["--seed", "7", "--out"])
        .arg(out)
        .output()
        .expect("run pacgp");
    assert!(
        o.status.success(),
        "{method:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read(out).unwrap()
}

/// One thread, two threads and two threads again give the same bytes.
fn same_bytes_on_any_thread_count(data: &Path, method: &[&str], dir: &Path) {
    let one = fit("1", data, method, &dir.join("one.json"));
    let two = fit("2", data, method, &dir.join("two.json"));
    let again = fit("2", data, method, &dir.join("again.json"));
    assert!(one == two, "{method:?}: --threads 1 and --threads 2 differ");
    assert!(two == again, "{method:?}: two runs with --threads 2 differ");
}

#[test]
fn regression_fits_are_byte_identical_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("boston300.csv");
    subset("data/boston-housing/boston.csv", 1, 0, 300, &data);
    for method in [
        &["gpr"][..],
        &["vfe", "--inducing", "20"],
        &["fitc", "--inducing", "20"],
        &["pac-gp", "--epsilon", "3"],
        &["pac-sgp", "--epsilon", "3", "--inducing", "20"],
    ] {
        same_bytes_on_any_thread_count(&data, method, dir.path());
    }
}

#[test]
fn classifier_fits_are_byte_identical_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("ripley333.csv");
    // synth_te.csv is sorted by class: every third row keeps both classes.
    subset("data/ripley-synth/synth_te.csv", 3, 1, 333, &data);
    for method in [&["laplace"][..], &["ep"]] {
        same_bytes_on_any_thread_count(&data, method, dir.path());
    }
}
