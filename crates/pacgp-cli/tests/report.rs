//! `pacgp report`: the page is written, well formed (every element closed, XHTML-style),
//! self-contained (no http(s) reference, no script, nothing to fetch), and its headline
//! numbers are `certify --json`'s and `evaluate --json`'s for the same model, for a classifier
//! (Laplace on Ripley's set), a regressor (gpr on part of boston) and multi-class models
//! (one-vs-rest and softmax Laplace on iris, with their confusion matrix and top-label
//! reliability), with and without a test file; a grouped kernel's relevance chart has one bar
//! per table column; an output that names an input is refused before anything is computed.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{certify, evaluate, fit, iris_split, ok, pacgp, repo, s, RIPLEY};

/// The element with `id`: its `data-value` (the exact number) and its text (as read).
fn number(html: &str, id: &str) -> (f64, String) {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element with id {id}"));
    let rest = &html[at..];
    let value = rest
        .split("data-value=\"")
        .nth(1)
        .and_then(|v| v.split('"').next())
        .unwrap_or_else(|| panic!("{id} has no data-value"));
    let text = rest[rest.find('>').unwrap() + 1..]
        .split('<')
        .next()
        .unwrap()
        .to_string();
    (value.parse().unwrap(), text)
}

/// The page's value for `id` equals `expected` exactly, and it reads as `expected` rounded
/// to `digits` decimals.
fn shows(html: &str, id: &str, expected: f64, digits: usize) {
    let (value, text) = number(html, id);
    assert_eq!(value, expected, "{id}");
    assert_eq!(text, format!("{expected:.digits$}"), "{id} as shown");
}

/// Every element is closed in order (void elements written `<x/>`), comments and the
/// doctype aside: the page parses as XML as well as HTML.
fn check_well_formed(html: &str) {
    let mut open: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let end = after.find('>').expect("an unclosed tag");
        let tag = &after[..end];
        rest = &after[end + 1..];
        if tag.starts_with('!') {
            assert!(tag.starts_with("!DOCTYPE"), "unexpected <{tag}>");
            continue;
        }
        assert!(!tag.contains('<'), "a '<' inside the tag <{tag}>");
        if let Some(name) = tag.strip_prefix('/') {
            let top = open
                .pop()
                .unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(top, name, "</{name}> closes <{top}>");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap().to_string();
            open.push(name);
        }
    }
    assert!(open.is_empty(), "left open: {open:?}");
}

/// Nothing on the page is fetched: no network reference, no script, no external resource.
fn check_self_contained(html: &str) {
    for needle in [
        "http://", "https://", "<script", "<link", "<img", "src=", "@import", "url(",
    ] {
        assert!(!html.contains(needle), "the page holds '{needle}'");
    }
}

/// Write the report on `model` (with `test` if given) and check it is a proper page.
fn report(dir: &Path, model: &Path, train: &str, test: Option<&str>, name: &str) -> String {
    let out = dir.join(name);
    let mut args = vec![
        "report",
        "--model",
        s(model),
        "--data",
        train,
        "--out",
        s(&out),
    ];
    if let Some(t) = test {
        args.extend(["--test", t]);
    }
    let said = ok(&pacgp(&args));
    assert!(said.starts_with("wrote "), "{said}");
    let html = std::fs::read_to_string(&out).unwrap();
    check_well_formed(&html);
    check_self_contained(&html);
    html
}

/// The certificate's headline numbers on the page are certify's.
fn check_certificate(html: &str, cert: &Value) {
    let f = |k: &str| cert[k].as_f64().unwrap();
    shows(html, "certificate-value", f("bound"), 4);
    shows(html, "certificate-empirical-risk", f("empirical_risk"), 4);
    shows(html, "certificate-kl", f("kl"), 2);
    shows(html, "certificate-penalty", f("penalty"), 2);
    // δ and N as they were given: 0.01, 250.
    for (id, key) in [("certificate-delta", "delta"), ("certificate-n", "n")] {
        let (value, text) = number(html, id);
        assert_eq!(value, f(key), "{id}");
        assert_eq!(text, f(key).to_string(), "{id} as shown");
    }
    shows(html, "loo-error", f("loo_error"), 4);
    let deployed = cert["deployed"]["value"].as_f64().unwrap();
    shows(html, "deployed-value", deployed, 4);
    assert!(html.contains("Gibbs predictor") && html.contains("Deployed predictor"));
}

#[test]
fn classifier_report_shows_certify_and_evaluate_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("laplace.json");
    let (train, test) = RIPLEY;
    ok(&fit(train, &model, &["--method", "laplace"]));
    let cert = certify(&model, train);
    let eval = evaluate(&model, test);

    let without = report(dir.path(), &model, train, None, "plain.html");
    check_certificate(&without, &cert);
    assert!(!without.contains("id=\"test-n\""));
    assert!(!without.contains("id=\"reliability\""));
    // The bound chose among isotropic kernels: one lengthscale, no relevance chart.
    assert!(without.contains("<code>ln_lengthscale</code>"));
    assert!(!without.contains("id=\"relevances\""));

    let with = report(dir.path(), &model, train, Some(test), "test.html");
    check_certificate(&with, &cert);
    shows(&with, "test-n", 1000.0, 0);
    shows(
        &with,
        "test-gibbs-risk",
        eval["gibbs_risk"].as_f64().unwrap(),
        4,
    );
    shows(
        &with,
        "test-error-rate",
        eval["error_rate"].as_f64().unwrap(),
        4,
    );
    shows(
        &with,
        "test-log-loss",
        eval["log_loss"].as_f64().unwrap(),
        4,
    );
    for figure in ["reliability", "risk-coverage"] {
        assert!(with.contains(&format!("id=\"{figure}\"")), "{figure}");
    }
    assert!(!with.contains("id=\"predicted-vs-actual\""));
}

/// The first `rows` data rows of boston after `skip`, with the header, as a file in `dir`.
fn boston_part(dir: &Path, name: &str, skip: usize, rows: usize) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("data/boston-housing/boston.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let body: Vec<&str> = lines.skip(skip).take(rows).collect();
    let path = dir.join(name);
    std::fs::write(&path, format!("{header}\n{}\n", body.join("\n"))).unwrap();
    path
}

#[test]
fn regressor_report_shows_certify_and_evaluate_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let train = boston_part(dir.path(), "train.csv", 0, 150);
    let test = boston_part(dir.path(), "test.csv", 150, 60);
    let model = dir.path().join("gpr.json");
    ok(&fit(
        s(&train),
        &model,
        &["--method", "gpr", "--epsilon", "3"],
    ));
    let cert = certify(&model, s(&train));
    let eval = evaluate(&model, s(&test));

    let without = report(dir.path(), &model, s(&train), None, "plain.html");
    check_certificate(&without, &cert);
    assert!(without.contains("ε = 3"));
    // gpr's default SE-ARD kernel: one relevance bar per input of boston's 13.
    assert!(without.contains("id=\"relevances\""));
    assert_eq!(without.matches("class=\"relevance\"").count(), 13);
    assert!(!without.contains("id=\"predicted-vs-actual\""));

    let with = report(dir.path(), &model, s(&train), Some(s(&test)), "test.html");
    check_certificate(&with, &cert);
    shows(&with, "test-n", 60.0, 0);
    for (id, key) in [
        ("test-gibbs-risk", "gibbs_risk"),
        ("test-mean-risk", "bayes_risk"),
        ("test-rmse", "rmse"),
        ("test-nlpd", "nlpd"),
        ("test-coverage", "coverage_95"),
    ] {
        shows(&with, id, eval[key].as_f64().unwrap(), 4);
    }
    assert!(with.contains("id=\"predicted-vs-actual\""));
    // One interval bar and one dot per test row.
    assert_eq!(with.matches("class=\"interval\"").count(), 60);
    assert!(!with.contains("id=\"reliability\""));
}

/// Every `count` text of the confusion-matrix figure, row by row (K² of them for K classes).
fn confusion_counts(html: &str, k: usize) -> Vec<Vec<usize>> {
    let at = html
        .find("id=\"confusion-matrix\"")
        .expect("a confusion matrix");
    let figure = &html[at..at + html[at..].find("</figure>").unwrap()];
    let counts: Vec<usize> = figure
        .split("<text class=\"count")
        .skip(1)
        .map(|t| {
            t[t.find('>').unwrap() + 1..t.find('<').unwrap()]
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(counts.len(), k * k);
    counts.chunks(k).map(<[usize]>::to_vec).collect()
}

/// The `(rows, accuracy)` of each dot of the top-label reliability diagram, from its tooltip
/// (`[a, b): N rows, predicted p, accuracy A`).
fn reliability_dots(html: &str) -> Vec<(usize, f64)> {
    let at = html
        .find("id=\"reliability\"")
        .expect("a reliability diagram");
    let figure = &html[at..at + html[at..].find("</figure>").unwrap()];
    figure
        .split("<circle class=\"point\"")
        .skip(1)
        .map(|c| {
            let tip = &c[c.find("<title>").unwrap() + 7..c.find("</title>").unwrap()];
            let rows = tip.split("): ").nth(1).unwrap().split(' ').next().unwrap();
            let accuracy = tip.rsplit("accuracy ").next().unwrap();
            (rows.parse().unwrap(), accuracy.parse().unwrap())
        })
        .collect()
}

#[test]
fn multiclass_report_shows_evaluate_numbers_a_confusion_matrix_and_top_label_reliability() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = iris_split(dir.path());
    let (train, test) = (s(&train), s(&test));
    // The test file's classes, counted by hand from iris.csv's layout: 50 rows per species,
    // every 5th fitted on, so 40 of each to test; class names as the data spells them.
    let classes = ["setosa", "versicolor", "virginica"];
    for (name, extra) in [
        ("one-vs-rest", vec!["--method", "laplace"]),
        (
            "softmax",
            vec!["--method", "laplace", "--multiclass", "softmax"],
        ),
    ] {
        let model = dir.path().join(format!("{name}.json"));
        ok(&fit(train, &model, &extra));
        let cert = certify(&model, train);
        let eval = evaluate(&model, test);
        let html = report(
            dir.path(),
            &model,
            train,
            Some(test),
            &format!("{name}.html"),
        );
        shows(
            &html,
            "certificate-value",
            cert["bound"].as_f64().unwrap(),
            4,
        );
        shows(&html, "certificate-kl", cert["kl"].as_f64().unwrap(), 2);
        if let Some(loo) = cert["loo_error"].as_f64() {
            shows(&html, "loo-error", loo, 4);
        }
        if let Some(d) = cert["deployed"]["value"].as_f64() {
            shows(&html, "deployed-value", d, 4);
        }
        shows(&html, "test-n", 120.0, 0);
        for (id, key) in [
            ("test-gibbs-risk", "gibbs_risk"),
            ("test-error-rate", "error_rate"),
            ("test-log-loss", "log_loss"),
        ] {
            shows(&html, id, eval[key].as_f64().unwrap(), 4);
        }
        // The matrix: 40 rows of each class, its errors evaluate's error rate (not zero here).
        let counts = confusion_counts(&html, 3);
        for row in &counts {
            assert_eq!(row.iter().sum::<usize>(), 40, "{name}: {counts:?}");
        }
        let errors: usize = (0..3)
            .flat_map(|i| (0..3).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| counts[i][j])
            .sum();
        assert!(errors > 0, "{name}: {counts:?}");
        assert_eq!(
            errors as f64 / 120.0,
            eval["error_rate"].as_f64().unwrap(),
            "{name}"
        );
        for class in classes {
            assert_eq!(
                html.matches(&format!(">{class}</text>")).count(),
                2,
                "{class}"
            );
        }
        // Top-label reliability: its dots hold every test row, and their accuracies (3
        // decimals) add up to the rows predicted right.
        assert!(html.contains("Top-label reliability diagram"));
        let dots = reliability_dots(&html);
        assert_eq!(dots.iter().map(|d| d.0).sum::<usize>(), 120, "{name}");
        let right: f64 = dots.iter().map(|&(n, a)| n as f64 * a).sum();
        assert!(
            (right - (120 - errors) as f64).abs() <= 0.0005 * 120.0,
            "{name}: {right}"
        );
        assert!(!html.contains("id=\"risk-coverage\""));
    }
}

#[test]
fn grouped_kernel_report_has_one_relevance_bar_per_table_column() {
    let dir = tempfile::tempdir().unwrap();
    let train = boston_part(dir.path(), "train.csv", 0, 150);
    let model = dir.path().join("gpr.json");
    // RAD as a category: one-hot inputs, so the default kernel is se-groups(…) with one
    // lengthscale per table column.
    ok(&fit(
        s(&train),
        &model,
        &["--method", "gpr", "--epsilon", "3", "--categorical", "RAD"],
    ));
    let html = report(dir.path(), &model, s(&train), None, "grouped.html");
    let text = std::fs::read_to_string(&train).unwrap();
    let mut lines = text.lines();
    let columns: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rad = columns.iter().position(|c| *c == "RAD").unwrap();
    let mut levels: Vec<&str> = lines.map(|l| l.split(',').nth(rad).unwrap()).collect();
    levels.sort_unstable();
    levels.dedup();
    assert!(levels.len() > 2, "{levels:?}");
    // The model file's lengthscales, one per group, and its group sizes.
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let inner = &m["posterior"]["kernel"]["inner"];
    let ln_l: Vec<f64> = inner["ln_lengthscale"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let inputs = &columns[..columns.len() - 1];
    assert_eq!(ln_l.len(), inputs.len());
    assert_eq!(inner["groups"][rad], levels.len());

    let at = html.find("id=\"relevances\"").expect("a relevance chart");
    let figure = &html[at..at + html[at..].find("</figure>").unwrap()];
    let labels: Vec<&str> = figure
        .split("<text class=\"barlabel\"")
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find('<').unwrap()])
        .collect();
    assert_eq!(labels, inputs);
    let tips: Vec<&str> = figure
        .split("<rect class=\"relevance\"")
        .skip(1)
        .map(|r| &r[r.find("<title>").unwrap() + 7..r.find("</title>").unwrap()])
        .collect();
    for (j, tip) in tips.iter().enumerate() {
        let mut expected = format!("lengthscale {:.4}", ln_l[j].exp());
        if j == rad {
            expected += &format!(", shared by {} inputs", levels.len());
        }
        assert_eq!(*tip, expected, "{}", inputs[j]);
    }
}

#[test]
fn report_refuses_an_output_that_names_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let train = RIPLEY.0;
    ok(&fit(train, &model, &["--method", "laplace"]));
    let before = std::fs::read(&model).unwrap();
    let out = pacgp(&[
        "report",
        "--model",
        s(&model),
        "--data",
        train,
        "--out",
        s(&model),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("it is the --model file"), "{err}");
    assert_eq!(std::fs::read(&model).unwrap(), before);
    let test = dir.path().join("t.csv");
    std::fs::copy(repo().join(RIPLEY.1), &test).unwrap();
    let args = [
        "report",
        "--model",
        s(&model),
        "--data",
        train,
        "--test",
        s(&test),
        "--out",
        s(&test),
    ];
    let out = pacgp(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("it is the --test file"));
}

#[test]
fn report_refuses_a_sample_that_is_not_the_training_sample() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let out = dir.path().join("r.html");
    let (train, test) = RIPLEY;
    ok(&fit(train, &model, &["--method", "laplace"]));
    let run = pacgp(&[
        "report",
        "--model",
        s(&model),
        "--data",
        test,
        "--out",
        s(&out),
    ]);
    assert_eq!(
        run.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!out.exists());
}
