//! `pacgp report` in a real headless browser: Chromium loads the page from a file (no
//! network), lays it out, and the DOM it dumps holds the certificate's numbers as `certify
//! --json` gives them, readable as text; a screenshot of the laid-out page is a real PNG.
//! Skipped, saying why, where no Chromium is installed (`PACGP_CHROMIUM` names a binary).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{certify, fit, iris_split, ok, pacgp, s, words, RIPLEY};

/// The Chromium binary: `PACGP_CHROMIUM`, else the first of the usual names on `PATH`.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PACGP_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|p| p.is_file())
}

/// Run headless Chromium on `page` with `extra` arguments (its own profile in `profile`),
/// killed after two minutes; its stdout.
fn headless(browser: &Path, profile: &Path, page: &Path, extra: &[String]) -> String {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    // Drained while it runs: a DOM larger than the pipe's buffer would block it otherwise.
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes)
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("chromium did not finish in two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (out, err) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(
        status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&err.unwrap())
    );
    String::from_utf8(out.unwrap()).unwrap()
}

/// The text inside the element with `id` in a DOM dump, and its `data-value`.
fn element(dom: &str, id: &str) -> (String, f64) {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("the rendered DOM has no element {id}"));
    let tag_end = at + dom[at..].find('>').unwrap();
    let tag = &dom[..tag_end];
    let value = tag[tag.rfind('<').unwrap()..]
        .split("data-value=\"")
        .nth(1)
        .and_then(|v| v.split('"').next())
        .unwrap_or_else(|| panic!("{id} has no data-value"));
    let text = dom[tag_end + 1..].split('<').next().unwrap().to_string();
    (text, value.parse().unwrap())
}

/// The Chromium binary, or `None` with the reason the test is skipped said on stderr.
fn chromium_or_skip() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        eprintln!(
            "skipped: no chromium binary found on PATH (chromium, chromium-browser, google-chrome) \
             and PACGP_CHROMIUM is not set; install it with `apt-get install -y chromium`"
        );
    }
    found
}

/// `pacgp report` of `model` (fitted on `train`, tested on `test`) rendered by Chromium: the
/// DOM it dumps.
fn rendered(browser: &Path, dir: &Path, model: &Path, train: &str, test: &str) -> String {
    let page = dir.join("report.html");
    ok(&pacgp(&[
        "report",
        "--model",
        s(model),
        "--data",
        train,
        "--test",
        test,
        "--out",
        s(&page),
    ]));
    headless(
        browser,
        &dir.join("profile"),
        &page,
        &["--dump-dom".to_string()],
    )
}

/// The figure `id` survived the browser's parser as an SVG element.
fn has_svg(dom: &str, id: &str) {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no figure {id}"));
    assert!(dom[at..].contains("<svg"), "{id}");
}

#[test]
fn chromium_renders_a_multiclass_a_regression_and_a_multi_output_report() {
    let Some(browser) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = iris_split(dir.path());
    let (train, test) = (s(&train), s(&test));
    let model = dir.path().join("iris.json");
    ok(&fit(train, &model, &["--method", "laplace"]));
    let cert = certify(&model, train);
    let dom = rendered(&browser, dir.path(), &model, train, test);
    let (text, value) = element(&dom, "certificate-value");
    assert_eq!(value, cert["bound"].as_f64().unwrap());
    assert_eq!(text, format!("{value:.4}"));
    for figure in ["confusion-matrix", "reliability"] {
        has_svg(&dom, figure);
    }
    // A regressor: boston's first 300 rows to fit, the rest to test.
    let text = std::fs::read_to_string(common::repo().join("data/boston-housing/boston.csv"));
    let lines: Vec<&str> = text.as_ref().unwrap().lines().collect();
    let (fit_rows, test_rows) = (dir.path().join("b-fit.csv"), dir.path().join("b-test.csv"));
    std::fs::write(&fit_rows, lines[..301].join("\n") + "\n").unwrap();
    let rest = [&lines[..1], &lines[301..]].concat();
    std::fs::write(&test_rows, rest.join("\n") + "\n").unwrap();
    let model = dir.path().join("boston.json");
    ok(&fit(s(&fit_rows), &model, &["--epsilon", "3"]));
    let cert = certify(&model, s(&fit_rows));
    let dom = rendered(&browser, dir.path(), &model, s(&fit_rows), s(&test_rows));
    let (_, value) = element(&dom, "certificate-value");
    assert_eq!(value, cert["bound"].as_f64().unwrap());
    for figure in ["predicted-vs-actual", "relevances"] {
        has_svg(&dom, figure);
    }
    // Two targets with one kernel: the joint certificate, then each output's report.
    let model = dir.path().join("both.json");
    let both = words("--target MEDV,LSTAT --shared-kernel --epsilon 3");
    ok(&fit(s(&fit_rows), &model, &both));
    let cert = certify(&model, s(&fit_rows));
    let dom = rendered(&browser, dir.path(), &model, s(&fit_rows), s(&test_rows));
    let (text, value) = element(&dom, "joint-mean-value");
    assert_eq!(value, cert["joint"]["mean_bound"][0].as_f64().unwrap());
    assert_eq!(text, format!("{value:.4}"));
    for j in 0..2 {
        let id = format!("output-{}-certificate-value", j + 1);
        let own = &cert["outputs"][j]["certificates"][0]["bound"];
        assert_eq!(element(&dom, &id).1, own.as_f64().unwrap(), "{id}");
        let id = format!("joint-{}-value", j + 1);
        let joint = &cert["joint"]["outputs"][j]["certificates"][0]["bound"];
        assert_eq!(element(&dom, &id).1, joint.as_f64().unwrap(), "{id}");
        has_svg(&dom, &format!("output-{}-predicted-vs-actual", j + 1));
    }
    assert!(dom.contains("Output <code>LSTAT</code>"), "{dom}");
}

#[test]
fn chromium_renders_the_report_with_the_certificates_numbers() {
    let Some(browser) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("laplace.json");
    let (train, test) = RIPLEY;
    ok(&fit(train, &model, &["--method", "laplace"]));
    let cert = certify(&model, train);
    let dom = rendered(&browser, dir.path(), &model, train, test);
    let (page, profile) = (dir.path().join("report.html"), dir.path().join("profile"));
    assert!(dom.contains("pacgp report: laplace.json"), "{dom}");
    for (id, expected) in [
        ("certificate-value", cert["bound"].as_f64().unwrap()),
        (
            "certificate-empirical-risk",
            cert["empirical_risk"].as_f64().unwrap(),
        ),
        (
            "deployed-value",
            cert["deployed"]["value"].as_f64().unwrap(),
        ),
        ("loo-error", cert["loo_error"].as_f64().unwrap()),
    ] {
        let (text, value) = element(&dom, id);
        assert_eq!(value, expected, "{id}");
        assert_eq!(text, format!("{expected:.4}"), "{id} as rendered");
    }
    // The figures survived the browser's parser as SVG elements.
    for figure in ["reliability", "risk-coverage"] {
        has_svg(&dom, figure);
    }

    let png = dir.path().join("report.png");
    headless(
        &browser,
        &profile,
        &page,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1000,1400".to_string(),
        ],
    );
    let bytes = std::fs::read(&png).expect("chromium wrote no screenshot");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // A laid-out page with charts, not a blank one (a blank 1000×1400 PNG is a few KB).
    assert!(bytes.len() > 20_000, "screenshot of {} bytes", bytes.len());
}
