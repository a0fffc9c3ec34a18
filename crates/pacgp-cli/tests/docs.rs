//! The README and the user guide (`docs/`) stay true:
//! - every relative link (README, CHANGELOG, GLOSSARY, docs) names a file that exists, and
//!   an anchor into a Markdown file names one of its headings;
//! - every guide page is reachable from the README and listed in `docs/SUMMARY.md`;
//! - each example marked `<!-- checked by crates/pacgp-cli/tests/docs.rs … -->` runs: the
//!   `pacgp` commands of its `sh` block run (in a scratch folder whose `data/` is the
//!   repository's, with the dev-profile binary), and every figure of the `text` block after it
//!   — a number with a decimal point, other than a time in seconds — is printed by them;
//! - every other `pacgp` example of the README and the guide runs too (exit 0), unless it is
//!   a synopsis (`a|b`, `[--flag]`) or listed in `NOT_RUN` with why (long runs, generated
//!   files);
//! - the command-line reference `docs/cli.md` is clap's help as it is now (regenerate it with
//!   `PACGP_BLESS_DOCS=1 cargo test -p pacgp-cli --test docs`);
//! - the README is short, starts with the two commands (the test command is the one CI runs)
//!   and holds no lab-notebook items (dates, paths outside the repository, issue numbers).

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The README and every page of the guide: where the examples are.
fn readme_and_guide() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    files.extend(guide_pages());
    files
}

/// Every Markdown file of the guide, recursively.
fn guide_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo().join("docs"), &mut out);
    out.sort();
    out
}

/// The files whose links are checked.
fn checked_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "CHANGELOG.md", "GLOSSARY.md"]
        .iter()
        .map(|f| repo().join(f))
        .collect();
    files.extend(guide_pages());
    files
}

/// Lines outside fenced code blocks, with inline code spans removed.
fn prose(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                kept.push_str(part);
            }
        }
        out.push(kept);
    }
    out
}

/// The targets of inline links `[text](target)` in prose.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            out.push(tail[..end].trim().to_string());
            rest = &tail[end..];
        }
    }
    out
}

/// The anchor a heading gets (GitHub's and mdBook's rule for these headings): lower case,
/// letters, digits, `-` and `_` kept, spaces made `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' | '-' => Some('-'),
            '_' => Some('_'),
            c if c.is_alphanumeric() => Some(c.to_lowercase().next().unwrap()),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> HashSet<String> {
    prose(text)
        .iter()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| slug(h.trim_start_matches('#')))
        .collect()
}

/// Local targets of a file's links, resolved (path, anchor).
fn local_links(file: &Path) -> Vec<(String, PathBuf, Option<String>)> {
    let dir = file.parent().unwrap();
    link_targets(&read(file))
        .into_iter()
        .filter(|t| !t.contains("://") && !t.starts_with("mailto:"))
        .map(|t| {
            let (path, anchor) = match t.split_once('#') {
                Some((p, a)) => (p.to_string(), Some(a.to_string())),
                None => (t.clone(), None),
            };
            let resolved = if path.is_empty() {
                file.to_path_buf()
            } else {
                dir.join(&path)
            };
            (t, resolved, anchor)
        })
        .collect()
}

#[test]
fn every_relative_link_resolves() {
    let mut bad = Vec::new();
    for file in checked_files() {
        for (target, path, anchor) in local_links(&file) {
            if !path.exists() {
                bad.push(format!("{}: ({target}) does not exist", file.display()));
                continue;
            }
            if let Some(a) = anchor {
                if path.extension().is_some_and(|x| x == "md")
                    && !anchors(&read(&path)).contains(&a)
                {
                    bad.push(format!("{}: ({target}) names no heading", file.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn every_guide_page_is_reachable_from_the_readme_and_in_the_summary() {
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut todo = vec![repo().join("README.md")];
    while let Some(file) = todo.pop() {
        let file = file.canonicalize().unwrap();
        if !seen.insert(file.clone()) {
            continue;
        }
        for (_, path, _) in local_links(&file) {
            if path.extension().is_some_and(|x| x == "md") && path.exists() {
                todo.push(path);
            }
        }
    }
    let summary = repo().join("docs/SUMMARY.md");
    let listed: BTreeSet<PathBuf> = local_links(&summary)
        .into_iter()
        .map(|(_, p, _)| p.canonicalize().unwrap())
        .collect();
    for page in guide_pages() {
        let page = page.canonicalize().unwrap();
        assert!(
            seen.contains(&page),
            "{} is not reachable from README.md",
            page.display()
        );
        if page != summary {
            assert!(
                listed.contains(&page),
                "{} is not in docs/SUMMARY.md",
                page.display()
            );
        }
    }
    for name in [
        "getting-started",
        "certificates",
        "epsilon-delta",
        "regression",
        "classification",
        "svm",
        "sparse",
        "tighter",
        "python",
        "dask",
        "cli",
        "model-file",
        "reproduce/index",
        "performance",
        "math",
        "test-vectors",
    ] {
        assert!(
            repo().join(format!("docs/{name}.md")).exists(),
            "docs/{name}.md"
        );
    }
}

/// The figures of a text: numbers with a decimal point (a leading minus kept), other than a
/// time in seconds ("1.26 s").
fn figures(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit()
            || (i > 0 && (chars[i - 1].is_ascii_digit() || chars[i - 1] == '.'))
        {
            i += 1;
            continue;
        }
        let start = if i > 0 && chars[i - 1] == '-' {
            i - 1
        } else {
            i
        };
        let mut j = i;
        while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
            j += 1;
        }
        let token: String = chars[start..j].iter().collect::<String>();
        let token = token.trim_end_matches('.').to_string();
        let seconds: String = chars[j..chars.len().min(j + 2)].iter().collect();
        if token.contains('.') && seconds != " s" {
            out.push(token);
        }
        i = j;
    }
    out
}

/// The `sh` block and the `text` block after each checked-example marker of `file`.
fn checked_examples(file: &Path) -> Vec<(String, String)> {
    let text = read(file);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("<!-- checked by crates/pacgp-cli/tests/docs.rs") {
        rest = &rest[at..];
        let block = |s: &str, info: &str| -> (String, usize) {
            let open = format!("```{info}\n");
            let start = s
                .find(&open)
                .unwrap_or_else(|| panic!("{}: no ```{info} block after a marker", file.display()))
                + open.len();
            let len = s[start..].find("```").unwrap();
            (s[start..start + len].to_string(), start + len + 3)
        };
        let (commands, after) = block(rest, "sh");
        let (output, end) = block(&rest[after..], "text");
        out.push((commands, output));
        rest = &rest[after + end..];
    }
    out
}

/// Run a checked example's commands in a scratch folder; their stdout, joined.
fn run_example(commands: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo().join("data"), dir.path().join("data")).unwrap();
    let mut printed = String::new();
    for line in commands
        .replace("\\\n", " ")
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let line = line.split(" #").next().unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], "pacgp", "{line}");
        let out = Command::new(env!("CARGO_BIN_EXE_pacgp"))
            .args(&words[1..])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{line}`: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        printed.push_str(&String::from_utf8(out.stdout).unwrap());
    }
    printed
}

#[test]
fn checked_examples_print_their_figures() {
    let files = readme_and_guide();
    let mut n = 0;
    for file in files {
        for (commands, quoted) in checked_examples(&file) {
            let printed: HashSet<String> = figures(&run_example(&commands)).into_iter().collect();
            for f in figures(&quoted) {
                assert!(
                    printed.contains(&f),
                    "{}: the example quotes {f}, which its commands no longer print",
                    file.display()
                );
            }
            n += 1;
        }
    }
    assert!(n >= 3, "only {n} checked examples found");
}

/// Every file under `data/` that a command of the README or the guide names exists (the
/// interval guide's example fitted `data/boston-housing/train.csv`, which never existed); a
/// command's own outputs in the same block (`--out`, `--out-train`, `--out-test`) count.
#[test]
fn every_shipped_file_an_example_names_exists() {
    let files = readme_and_guide();
    let mut named = 0;
    for file in files {
        let text = read(&file);
        for block in text.split("```").skip(1).step_by(2) {
            let words: Vec<&str> = block.split_whitespace().collect();
            let made: Vec<&str> = words
                .windows(2)
                .filter(|w| w[0].starts_with("--out"))
                .map(|w| w[1])
                .collect();
            for w in words
                .iter()
                .map(|w| w.trim_matches(|c| "\"'`,;:()".contains(c)))
            {
                if w.starts_with("data/") && !made.contains(&w) {
                    named += 1;
                    assert!(
                        repo().join(w).exists(),
                        "{}: an example names {w}, which is not in the repository",
                        file.display()
                    );
                }
            }
        }
    }
    assert!(named > 10, "only {named} shipped files named");
}

/// The command-line reference as clap prints it now.
fn cli_reference() -> String {
    let help = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_pacgp"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let mut page = String::from(
        "# Command-line reference\n\n\
         <!-- Generated from `pacgp … --help` by crates/pacgp-cli/tests/docs.rs; do not edit.\n     \
         Regenerate: PACGP_BLESS_DOCS=1 cargo test -p pacgp-cli --test docs -->\n\n\
         Every command prints one JSON object on stdout with `--json`; messages go to stderr. Exit\n\
         status: 0 on success, 2 for bad input (one line on stderr naming the problem), 1 for a\n\
         numerical failure. Options take negative numbers as values (`--delta -1` is an error\n\
         from the check of δ, not from the parser).\n\n## pacgp\n\n```text\n",
    );
    page.push_str(&help(&["--help"]));
    page.push_str("```\n");
    for sub in [
        "fit",
        "predict",
        "evaluate",
        "certify",
        "report",
        "split",
        "reproduce",
        "demo",
    ] {
        page.push_str(&format!("\n## pacgp {sub}\n\n```text\n"));
        page.push_str(&help(&[sub, "--help"]));
        page.push_str("```\n");
    }
    page
}

/// δ's default is set once, in the library (`bounds::DEFAULT_DELTA`); the help of `fit
/// --delta` and `certify --delta`, which shows it to users, must say that value.
#[test]
fn the_help_shows_the_librarys_delta_default() {
    let d = pacgp::bounds::DEFAULT_DELTA;
    let page = cli_reference();
    let delta_help = |section: &str| -> String {
        let start = page.find(&format!("## pacgp {section}\n")).unwrap();
        let rest = &page[start..];
        let at = rest.find("--delta <DELTA>").unwrap();
        rest[at..].lines().nth(1).unwrap().to_string()
    };
    assert!(delta_help("fit").ends_with(&format!("[default: {d}]")));
    assert!(delta_help("certify").contains(&format!("δ, {d} unless fitted")));
}

#[test]
fn cli_reference_is_clap_help_as_it_is_now() {
    let path = repo().join("docs/cli.md");
    let now = cli_reference();
    if std::env::var_os("PACGP_BLESS_DOCS").is_some() {
        std::fs::write(&path, &now).unwrap();
    }
    assert!(
        read(&path) == now,
        "docs/cli.md differs from `pacgp … --help`: regenerate it with \
         PACGP_BLESS_DOCS=1 cargo test -p pacgp-cli --test docs"
    );
}

#[test]
fn the_readme_is_short_and_starts_with_the_two_commands() {
    let readme = read(&repo().join("README.md"));
    assert!(
        readme.lines().count() <= 250,
        "README.md has {} lines",
        readme.lines().count()
    );
    let first = readme
        .split("```sh\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    assert_eq!(
        first, "cargo run --release -p pacgp-cli -- demo\nscripts/test.sh\n",
        "the README starts with the demo and the test command"
    );
    assert!(read(&repo().join(".ci/run"))
        .lines()
        .any(|l| l.trim() == "scripts/test.sh"));
    let lower = readme.to_lowercase();
    for item in [
        "seed 00",
        "issue ",
        "../",
        "load average",
        "late 20",
        "todo",
    ] {
        assert!(!lower.contains(item), "the README holds '{item}'");
    }
    // No dates (yyyy-mm-dd).
    let b = readme.as_bytes();
    let date = (0..b.len().saturating_sub(9)).find(|&i| {
        let d = |k: usize| b[i + k].is_ascii_digit();
        d(0) && d(1)
            && d(2)
            && d(3)
            && b[i + 4] == b'-'
            && d(5)
            && d(6)
            && b[i + 7] == b'-'
            && d(8)
            && d(9)
    });
    assert!(date.is_none(), "the README holds a date near byte {date:?}");
}

/// Examples of the README and the guide that no test runs, by page and the start of their
/// block's first `pacgp` line, with why (issue 43: every example in the guide runs in a test
/// or says here why not). A synopsis — a line with alternatives `a|b` or options in brackets
/// `[--flag]` — is a form, not a command, and needs no entry.
const NOT_RUN: &[(&str, &str, &str)] = &[
    (
        "docs/getting-started.md",
        "pacgp --help",
        "the block installs the binary with cargo; `--help` is docs/cli.md, checked by \
         cli_reference_is_clap_help_as_it_is_now",
    ),
    (
        "docs/performance.md",
        "pacgp --threads 2 fit --data synth_clf_large_n100000.csv",
        "a measured run: minutes on a generated 100 000-row file",
    ),
    (
        "docs/performance.md",
        "pacgp fit --data synth_1e6.csv.gz",
        "a measured run: a quarter of an hour on a generated 10⁶-row file",
    ),
    (
        "docs/reproduce/svgp-real.md",
        "pacgp --threads 2 fit --data kin40k_train.csv",
        "a measured run: minutes on the tables `scripts/svgp_real_peers.py csvs` writes",
    ),
    (
        "docs/reproduce/",
        "pacgp reproduce",
        "an experiment's run: seconds to hours each, writing tables and figures; six run \
         small in tests/cli.rs, tighter.rs, trust.rs and svgp_real.rs (ivm-selection-2d, \
         zhang-kin40k, tighter-bounds, opper-winther, zhang-sparse and svgp-real, --quick)",
    ),
];

/// Commands run before a block whose files the page leaves to the reader (`train.csv`,
/// `test.csv`, `new.csv`): shipped data split into them.
const GIVEN: &[(&str, &str, &str)] = &[(
    "docs/getting-started.md",
    "pacgp fit --data train.csv --out model.json",
    "pacgp split --data data/boston-housing/boston.csv --seed 1 --out-train train.csv --out-test test.csv\n\
     pacgp split --data data/boston-housing/boston.csv --seed 2 --out-train rest.csv --out-test new.csv\n",
)];

/// Each `sh` block of `file` that holds a `pacgp` command: its text and whether a
/// checked-example marker precedes it (then `checked_examples_print_their_figures` runs it).
fn command_blocks(file: &Path) -> Vec<(String, bool)> {
    let text = read(file);
    let parts: Vec<&str> = text.split("```").collect();
    let mut out = Vec::new();
    for i in (1..parts.len()).step_by(2) {
        let Some(body) = parts[i].strip_prefix("sh\n") else {
            continue;
        };
        if body.lines().any(|l| l.trim_start().starts_with("pacgp ")) {
            // The prose between the previous block and this one holds its marker, if any.
            let marked = parts[i - 1].contains("checked by crates/pacgp-cli/tests/docs.rs");
            out.push((body.to_string(), marked));
        }
    }
    out
}

/// The block's first `pacgp` line, continuations joined.
fn first_command(block: &str) -> String {
    let joined = block.replace("\\\n", " ");
    let line = joined
        .lines()
        .find(|l| l.trim_start().starts_with("pacgp "))
        .unwrap_or_default();
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether the block is a synopsis: alternatives or bracketed options on a `pacgp` line.
fn is_synopsis(block: &str) -> bool {
    block
        .lines()
        .filter(|l| l.trim_start().starts_with("pacgp "))
        .any(|l| {
            let l = l.split(" #").next().unwrap_or(l);
            l.contains('|') || l.contains(" [")
        })
}

/// Every `pacgp` example of the README and the guide runs (exit 0, in a scratch folder with
/// the shipped `data/`), is a checked example, a synopsis, or is listed in [`NOT_RUN`] with
/// why; and every [`NOT_RUN`] and [`GIVEN`] entry still names an example.
#[test]
fn every_command_example_runs_or_says_why_not() {
    let files = readme_and_guide();
    let (mut ran, mut checked, mut synopses) = (0, 0, 0);
    let mut used = HashSet::new();
    for file in files {
        let page = file
            .strip_prefix(repo())
            .unwrap()
            .to_string_lossy()
            .to_string();
        if page == "docs/cli.md" {
            continue; // clap's help, checked against clap by cli_reference_is_clap_help_as_it_is_now
        }
        for (block, marked) in command_blocks(&file) {
            let first = first_command(&block);
            let entry = |&(p, start, _): &(&str, &str, &str)| {
                page.starts_with(p) && first.starts_with(start)
            };
            if marked {
                checked += 1;
            } else if is_synopsis(&block) {
                synopses += 1;
            } else if let Some(e) = NOT_RUN.iter().find(|e| entry(e)) {
                assert!(!e.2.is_empty());
                used.insert(e.1);
            } else {
                let given = GIVEN.iter().find(|e| entry(e));
                used.extend(given.map(|e| e.1));
                let commands = given.map_or(String::new(), |e| e.2.to_string()) + &block;
                run_example(&commands);
                ran += 1;
            }
        }
    }
    for (p, start, _) in NOT_RUN.iter().chain(GIVEN) {
        assert!(
            used.contains(start),
            "{p}: no example starts `{start}` any more"
        );
    }
    // 8, 8 and 6 when written.
    assert!(
        ran >= 8 && checked >= 8 && synopses >= 5,
        "ran {ran}, checked {checked}, synopses {synopses}"
    );
}
