//! One self-contained HTML page per model: what `pacgp report` and Python's `pacgp.report`
//! write. The content is the library's [`ModelReport`] (every number computed there, by the
//! functions `certify`, `evaluate` and `predict` use); this crate only lays it out — inline
//! CSS, inline SVG, no scripts, no fonts or images to fetch — so that the page opens anywhere
//! without a network.
//!
//! The headline numbers carry stable ids, each element holding the value rounded for reading
//! and, in `data-value`, the exact value (Rust's shortest round-trip form), so that a test or
//! a script can read them back from the rendered page: `certificate-value` (the Gibbs
//! certificate's bound), `certificate-empirical-risk`, `certificate-kl`,
//! `certificate-penalty`, `certificate-delta`, `certificate-n`, `deployed-value` (the
//! deployed predictor's certificate), `loo-error`, and on a test file `test-n`,
//! `test-gibbs-risk`, `test-error-rate` or `test-rmse`. With several certificates (several ε)
//! the k-th after the first has `certificate-k-value`, `deployed-k-value`, and so on. Ids are
//! unique on a page: the headline's copies of the first certificate's bounds are
//! `headline-certificate-value` and `headline-deployed-value`. On a
//! multi-output model ([`render_outputs`]) output j's (from 1) are `output-j-certificate-value`
//! and so on, and the joint certificate's are `joint-j-value` (output j at δ/K, the first ε)
//! and `joint-mean-value` (the mean of the K bounds).
//!
//! The markup is XHTML-compatible (every element closed, void elements self-closed, text
//! escaped), so an XML parser reads it as well as a browser does.

use pacgp::model::report::{ModelReport, OutputsReport, TaskKind, TestReport};
use pacgp::model::CertificateReport;

mod sections;
mod svg;

/// The page's style: system fonts only, nothing fetched.
const STYLE: &str = include_str!("report.css");

/// The report page on `report`, titled `title` (e.g. the model file's name).
pub fn render(report: &ModelReport, title: &str) -> String {
    let what = format!(
        "{} · {} · {} training rows",
        escape(&report.method),
        escape(&task_words(&report.task)),
        report.data.n
    );
    page(title, &what, &body(report))
}

/// The report page on a multi-output model: all outputs certified at once first, then each
/// output's report as a single-target model's, its ids prefixed `output-j-` (j from 1).
pub fn render_outputs(report: &OutputsReport, title: &str) -> String {
    let Some(first) = report.outputs.first() else {
        return page(title, "no outputs", "");
    };
    let targets: Vec<&str> = report
        .outputs
        .iter()
        .map(|o| o.data.target.as_str())
        .collect();
    let what = format!(
        "{} · regression of {} outputs ({}) · {} training rows",
        escape(&first.method),
        targets.len(),
        escape(&targets.join(", ")),
        first.data.n
    );
    let mut content = sections::joint(&report.joint);
    for (j, output) in report.outputs.iter().enumerate() {
        content.push_str(&format!(
            "<section class=\"output\" id=\"output-{}\"><h2 class=\"output\">Output <code>{}</code></h2>{}</section>",
            j + 1,
            escape(&output.data.target),
            body(output).replace(" id=\"", &format!(" id=\"output-{}-", j + 1))
        ));
    }
    page(title, &what, &content)
}

/// A whole page: the title, a line on what the model is, and its sections.
fn page(title: &str, what: &str, content: &str) -> String {
    let mut page = String::with_capacity(64 * 1024 + content.len());
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>");
    page.push_str(
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>",
    );
    page.push_str(&escape(&format!("pacgp report: {title}")));
    page.push_str("</title><style>");
    page.push_str(STYLE);
    page.push_str("</style></head><body>");
    page.push_str(&format!(
        "<header><h1>pacgp report: {}</h1><p class=\"sub\">{what} · pacgp {}</p></header>",
        escape(title),
        env!("CARGO_PKG_VERSION")
    ));
    page.push_str(content);
    page.push_str("<footer>Written by <code>pacgp report</code>. Every number on this page is computed by the pacgp library, by the functions <code>certify</code>, <code>evaluate</code> and <code>predict</code> use, and names the predictor it is about.</footer>");
    page.push_str("</body></html>\n");
    page
}

/// One model's sections: the headline, each certificate, leave-one-out, the test file, the
/// model and the data.
fn body(report: &ModelReport) -> String {
    let mut s = sections::headline(report);
    for (i, c) in report.certificates.iter().enumerate() {
        s.push_str(&sections::certificate(c, i, report.test.as_ref()));
    }
    s.push_str(&sections::leave_one_out(&report.certificates));
    if let Some(test) = &report.test {
        s.push_str(&sections::test(test, &report.task));
    }
    s.push_str(&sections::model(report));
    s.push_str(&sections::data(report));
    s
}

/// The task in words.
fn task_words(task: &TaskKind) -> String {
    match task {
        TaskKind::Regression => "regression".into(),
        TaskKind::BinaryClassification { negative, positive } => {
            format!("binary classification ({negative} / {positive}, {positive} coded +1)")
        }
        TaskKind::MultiClass { classes } => {
            format!("classification into {} classes", classes.len())
        }
    }
}

/// The id of a field of the k-th certificate (from 0): `base-field` for the first,
/// `base-(k+1)-field` for the others.
fn field_id(base: &str, k: usize, field: &str) -> String {
    if k == 0 {
        format!("{base}-{field}")
    } else {
        format!("{base}-{}-{field}", k + 1)
    }
}

/// A number as the page shows it: rounded to `digits` decimals for reading, exact in
/// `data-value`, and addressable by `id`.
fn number(id: &str, v: f64, digits: usize) -> String {
    format!(
        "<span class=\"num\" id=\"{}\" data-value=\"{v}\">{}</span>",
        escape(id),
        shown(v, digits)
    )
}

/// A number shown as it was given (δ = 0.01, N = 250), exact in `data-value` too.
fn plain_number(id: &str, v: f64) -> String {
    format!(
        "<span class=\"num\" id=\"{}\" data-value=\"{v}\">{v}</span>",
        escape(id)
    )
}

/// A number rounded to `digits` decimals (`–` for a missing one).
fn shown(v: f64, digits: usize) -> String {
    if v.is_finite() {
        format!("{v:.digits$}")
    } else {
        "–".into()
    }
}

/// Text escaped for HTML and XML content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The Gibbs risk a certificate's test counterpart is: `evaluate`'s Gibbs risk, for the same
/// ε when the certificate is a regressor's.
fn test_gibbs_risk(c: &CertificateReport, test: Option<&TestReport>) -> Option<f64> {
    let e = &test?.evaluation;
    (c.epsilon == e.epsilon).then_some(e.gibbs_risk).flatten()
}

/// What the deployed predictor's test error is: the error rate of predict's labels, or the
/// ε-band error of the posterior mean at the certificate's ε.
fn test_deployed_error(c: &CertificateReport, test: Option<&TestReport>) -> Option<f64> {
    let e = &test?.evaluation;
    match c.epsilon {
        Some(_) => (c.epsilon == e.epsilon).then_some(e.bayes_risk).flatten(),
        None => e.error_rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
    }

    #[test]
    fn numbers_keep_their_exact_value() {
        let s = number("certificate-value", 0.314_159_265_358_979_3, 4);
        assert_eq!(
            s,
            "<span class=\"num\" id=\"certificate-value\" data-value=\"0.3141592653589793\">0.3142</span>"
        );
        assert_eq!(field_id("certificate", 0, "value"), "certificate-value");
        assert_eq!(field_id("certificate", 2, "kl"), "certificate-3-kl");
        assert_eq!(shown(f64::NAN, 4), "–");
    }
}
