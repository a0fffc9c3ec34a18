//! The README's examples run as written and print the figures quoted next to them (issue 11,
//! item 6). Each command is first found, word for word, in README.md (the paragraphs are
//! marked `<!-- README example, run by crates/pacgp-cli/tests/readme.rs … -->`); each figure is
//! read from the README after a fixed anchor text and compared with what the command printed,
//! to the README's rounding. Commands run in a scratch folder with `data/` linked to the
//! repository's, so `m.json` and `out/` land there; `pacgp` is the dev-profile binary.
//!
//! The quick examples run by default (≈ 40 s in the dev profile); SOGP's breast-cancer figures
//! (683 leave-one-out refits, ≈ 2 min) run with
//! `cargo test -p pacgp-cli --test readme -- --ignored`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md with every run of whitespace (line breaks included) made one space.
fn readme() -> String {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A scratch folder whose `data` is the repository's `data/`.
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo().join("data"), dir.path().join("data")).unwrap();
    dir
}

/// Run a README command (it must appear in the README exactly) in `dir`; its stdout.
fn run(dir: &Path, command: &str) -> String {
    assert!(
        readme().contains(command),
        "the README no longer shows `{command}`"
    );
    exec(dir, command)
}

/// Run a `pacgp …` command line in `dir`; its stdout (the command must succeed).
fn exec(dir: &Path, command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "pacgp");
    let out = Command::new(env!("CARGO_BIN_EXE_pacgp"))
        .args(&words[1..])
        .current_dir(dir)
        .output()
        .expect("run pacgp");
    assert!(
        out.status.success(),
        "`{command}`: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A decimal figure as written, with its number of decimals.
#[derive(Clone, Copy, Debug)]
struct Figure {
    value: f64,
    decimals: i32,
}

/// The decimal numbers (with a '.') in `text`, in order; `after` (if any) must directly
/// precede each one (e.g. "≤ ").
fn decimals_in(text: &str, after: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let len = rest[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len() - start);
        let token = rest[start..start + len].trim_end_matches('.');
        // A version such as 1.9.1 is not a figure.
        if let (Some((_, frac)), Ok(value)) = (token.split_once('.'), token.parse()) {
            if rest[..start].ends_with(after) {
                out.push(Figure {
                    value,
                    decimals: frac.len() as i32,
                });
            }
        }
        rest = &rest[start + len..];
    }
    out
}

/// The first `n` decimal figures after `anchor` in the README (each directly after `after`).
fn quoted(anchor: &str, after: &str, n: usize) -> Vec<Figure> {
    let text = readme();
    let at = text
        .find(anchor)
        .unwrap_or_else(|| panic!("README has no '{anchor}'"));
    let figs = decimals_in(&text[at + anchor.len()..], after);
    assert!(figs.len() >= n, "fewer than {n} figures after '{anchor}'");
    figs[..n].to_vec()
}

/// The figure `after` introduces in printed output (the first decimal after it).
fn printed(output: &str, after: &str) -> f64 {
    printed_n(output, after, 1)[0]
}

/// The first `n` decimal figures after `after` in printed output.
fn printed_n(output: &str, after: &str, n: usize) -> Vec<f64> {
    let at = output
        .find(after)
        .unwrap_or_else(|| panic!("'{after}' not in:\n{output}"));
    let figs: Vec<f64> = decimals_in(&output[at + after.len()..], "")
        .iter()
        .map(|f| f.value)
        .collect();
    assert!(figs.len() >= n, "fewer than {n} figures after '{after}'");
    figs[..n].to_vec()
}

/// The quoted figure is the printed value rounded to the README's decimals (the printed
/// value itself rounded to `printed_decimals`).
fn agrees(what: &str, quoted: Figure, printed: f64, printed_decimals: i32) {
    let half = |d: i32| 0.5 * 10f64.powi(-d);
    let tol = half(quoted.decimals) + half(printed_decimals) + 1e-12;
    assert!(
        (quoted.value - printed).abs() <= tol,
        "{what}: the README says {} but the command prints {printed}",
        quoted.value
    );
}

#[test]
fn boston_pac_gp_bound_and_loo() {
    let dir = sandbox();
    run(
        dir.path(),
        "pacgp fit --data data/boston-housing/boston.csv --method pac-gp --epsilon 3 --out m.json",
    );
    let out = run(
        dir.path(),
        "pacgp certify --model m.json --data data/boston-housing/boston.csv",
    );
    let bound = quoted("prints a bound of ", "", 1)[0];
    agrees("boston bound", bound, printed(&out, "at most "), 4);
    let loo = quoted("more than $3k (δ = 0.01), with LOO error ", "", 1)[0];
    agrees("boston LOO", loo, printed(&out, "error of the mean "), 4);
}

const BREAST_CANCER: &str = "pacgp fit --data data/breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv --drop sample_code_number --method";
const BC_CERTIFY: &str =
    "pacgp certify --model m.json --data data/breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv";

/// The breast-cancer classifiers in the README's order: the method's flags as the README
/// shows them.
const CLASSIFIERS: [&str; 7] = [
    "laplace",
    "ep",
    "mean-field --kappa 0.02 --input-noise 0.3",
    "sogp --active-set 40",
    "ivm --active-set 50",
    "laplace --select ml2 --kernel se",
    "ep --select ml2 --kernel se",
];

/// Fit classifier `i` of [`CLASSIFIERS`] and certify it as the README does: the latent
/// bound, the noisy one, and (for the first five) the leave-one-out error.
fn breast_cancer(i: usize) {
    let dir = sandbox();
    let method = CLASSIFIERS[i];
    let flags = method.split_once(' ').map_or("", |(_, f)| f);
    if !flags.is_empty() {
        assert!(readme().contains(flags), "README shows no `{flags}`");
    }
    // The README writes the method as "…" and names each method's flags beside its figure.
    assert!(readme().contains(&format!("{BREAST_CANCER} … --out m.json")));
    exec(
        dir.path(),
        &format!("{BREAST_CANCER} {method} --out m.json"),
    );
    assert!(readme().contains("then `pacgp certify --model m.json --data` the same file"));
    let latent = exec(dir.path(), BC_CERTIFY);
    assert!(readme().contains("`certify --predictor noisy`"));
    let noisy = exec(dir.path(), &format!("{BC_CERTIFY} --predictor noisy"));
    let latent_q = quoted("the latent classifier `sign(f + b)` is: ", "≤ ", 7)[i];
    agrees(method, latent_q, printed(&latent, "at most "), 4);
    let noisy_q = quoted("the default before this version) gets ", "", 7)[i];
    agrees(method, noisy_q, printed(&noisy, "at most "), 4);
    if i < 5 {
        let loo_q = quoted(
            "puts the fast leave-one-out error beside the bound: ",
            "",
            5,
        )[i];
        agrees(method, loo_q, printed(&latent, "leave-one-out error ("), 4);
    }
}

#[test]
fn breast_cancer_laplace_and_ep() {
    breast_cancer(0);
    breast_cancer(1);
}

#[test]
fn breast_cancer_mean_field_and_ivm() {
    breast_cancer(2);
    breast_cancer(4);
}

#[test]
fn breast_cancer_ml2() {
    breast_cancer(5);
    breast_cancer(6);
}

/// SOGP's leave-one-out is 683 refits; run with `-- --ignored`.
#[test]
#[ignore]
fn breast_cancer_sogp() {
    breast_cancer(3);
}

#[test]
fn breast_cancer_svm_bound_and_loo() {
    let dir = sandbox();
    run(dir.path(), &format!("{BREAST_CANCER} svm --out m.json"));
    assert!(readme().contains("`certify --loo both` gives"));
    let out = exec(dir.path(), &format!("{BC_CERTIFY} --loo both"));
    let bound = quoted("keeps the best and certifies a Gibbs error ≤ ", "", 1)[0];
    agrees("SVM bound", bound, printed(&out, "at most "), 4);
    let loo = quoted("gives LR-LOO = exact LOO = ", "", 1)[0];
    agrees("SVM LR-LOO", loo, printed(&out, "leave-one-out error ("), 4);
    agrees("SVM exact LOO", loo, printed(&out, "(N refits): "), 4);
}

#[test]
fn zhang_sparse_figures() {
    let dir = sandbox();
    let out = run(dir.path(), "pacgp reproduce zhang-sparse");
    let r = quoted("**R(ŵ) = ", "", 2);
    let p = printed_n(&out, "R(ŵ) = ", 2);
    agrees("R(ŵ)", r[0], p[0], 3);
    agrees("R(ŵ) sd", r[1], p[1], 3);
    let d0 = quoted("and ΔR(0) = ", "", 2);
    let p = printed_n(&out, "ΔR(0) = ", 2);
    agrees("ΔR(0)", d0[0], p[0], 3);
    agrees("ΔR(0) sd", d0[1], p[1], 3);
    // The table: greedy, κ-greedy, random as printed; the bound from the JSON it writes.
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/zhang-sparse.json")).unwrap(),
    )
    .unwrap();
    let header = "| k | greedy | κ-greedy | random | Theorem 3.1 bound |";
    let table = quoted(header, "", 16);
    for (r, k) in [10, 50, 100, 200].into_iter().enumerate() {
        let row = &table[4 * r..4 * r + 4];
        assert!(readme().contains(&format!("| {k} | {:.3} |", row[0].value)));
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&k.to_string()))
            .unwrap();
        let cols: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .map(|c| c.parse().unwrap())
            .collect();
        for c in 0..3 {
            agrees(&format!("ΔR({k}) column {c}"), row[c], cols[c], 4);
        }
        let bound = json["curves"]["greedy"]["theorem_3_1_bound"][k]
            .as_f64()
            .unwrap();
        agrees(&format!("bound at k = {k}"), row[3], bound, 15);
    }
}
