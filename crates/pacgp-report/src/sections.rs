//! The page's sections, each a piece of markup from the report's content.

use pacgp::bounds::ConfidenceTerm;
use pacgp::metrics::ReliabilityBin;
use pacgp::model::report::{
    ConfusionMatrix, Lengthscale, ModelReport, RegressionPoint, RiskCoverage, TaskKind, TestReport,
    INTERVAL_LEVEL,
};
use pacgp::model::JointCertificate;
use pacgp::model::{CertificateReport, DeployedBound};

use crate::svg::{bars, heatmap, Bar, Cell, Chart};
use crate::{escape, field_id, number, plain_number, shown, test_deployed_error, test_gibbs_risk};

/// The risk the certificates bound, in words.
fn risk_words(c: &CertificateReport) -> String {
    match c.epsilon {
        Some(eps) => format!(
            "the ε-band risk (ε = {eps}: the probability of missing the target by more than ε)"
        ),
        None => "the classification error".into(),
    }
}

/// The first certificate's headline: the Gibbs bound, the deployed bound, leave-one-out.
pub(crate) fn headline(r: &ModelReport) -> String {
    let Some(c) = r.certificates.first() else {
        return "<p class=\"note\">No certificate.</p>".into();
    };
    let k = &c.certificate;
    let mut s = String::from("<section class=\"headline\">");
    s.push_str(&format!(
        "<div class=\"card gibbs\"><div class=\"who\">Gibbs predictor · PAC-Bayes certificate</div><div class=\"big\">≤ {}</div><div>{} on new data, with probability ≥ 1 − {} over the training sample (N = {}). Covers: {}.</div></div>",
        number("headline-certificate-value", k.bound, 4),
        escape(&risk_words(c)),
        k.delta,
        k.n,
        escape(&k.predictor)
    ));
    if let Some(d) = &c.deployed {
        s.push_str(&format!(
            "<div class=\"card deployed\"><div class=\"who\">Deployed predictor · {}</div><div class=\"big\">≤ {}</div><div>Covers: {}; with probability ≥ 1 − {}.</div></div>",
            bound_words(d.bound),
            number("headline-deployed-value", d.value, 4),
            escape(&d.predictor.to_string()),
            d.delta
        ));
    }
    if let Some(e) = c.loo_error {
        s.push_str(&format!(
            "<div class=\"card loo\"><div class=\"who\">Leave-one-out · estimate, no guarantee</div><div class=\"big\">{}</div><div>{}</div></div>",
            number("loo-error", e, 4),
            escape(loo_words(c))
        ));
    }
    s.push_str("</section>");
    s
}

/// All outputs of a multi-output model certified at once: each output's bound at δ/K (one
/// column per ε) and the mean of the K bounds, which bounds the outputs' mean risk.
pub(crate) fn joint(j: &JointCertificate) -> String {
    let k = j.outputs.len();
    let epsilons: Vec<Option<f64>> = j
        .outputs
        .first()
        .map(|o| o.certificates.iter().map(|c| c.epsilon).collect())
        .unwrap_or_default();
    let eps_words = |e: &Option<f64>| e.map_or("bound".to_string(), |v| format!("ε = {v}"));
    let mut s = format!(
        "<section class=\"joint\"><h2>All {k} outputs at once</h2><p>Each output's Gibbs certificate taken at δ/{k} = {} (a union bound over the outputs), so that with probability ≥ 1 − {} over the training sample every bound below holds together; their mean bounds the mean over the outputs of the ε-band Gibbs risk. Each output's own certificate, at δ, is in its section.</p><table><tr><th>output</th>",
        shown(j.delta_per_output, 6),
        j.delta
    );
    for e in &epsilons {
        s.push_str(&format!("<th class=\"n\">{}</th>", escape(&eps_words(e))));
    }
    s.push_str("</tr>");
    for (i, o) in j.outputs.iter().enumerate() {
        s.push_str(&format!("<tr><td><code>{}</code></td>", escape(&o.target)));
        for (e, c) in o.certificates.iter().enumerate() {
            let id = field_id(&format!("joint-{}", i + 1), e, "value");
            s.push_str(&format!(
                "<td class=\"n\">{}</td>",
                number(&id, c.certificate.bound, 4)
            ));
        }
        s.push_str("</tr>");
    }
    s.push_str("<tr><th>mean</th>");
    for (e, m) in j.mean_bound.iter().enumerate() {
        let id = field_id("joint-mean", e, "value");
        s.push_str(&format!("<th class=\"n\">{}</th>", number(&id, *m, 4)));
    }
    s.push_str("</tr></table></section>");
    s
}

/// The deployed certificate's inequality in words.
fn bound_words(b: DeployedBound) -> &'static str {
    match b {
        DeployedBound::Derandomised => "derandomised PAC-Bayes bound",
        DeployedBound::BinomialTail => "test-set bound on held-out rows",
    }
}

/// What the leave-one-out error is of.
fn loo_words(c: &CertificateReport) -> &'static str {
    match c.epsilon {
        Some(_) => "ε-band error of the leave-one-out posterior mean (the deployed predictor)",
        None => "error of the leave-one-out label (the deployed predictor)",
    }
}

/// One certificate: its statement, its parts as pictures, its prices, the deployed bound.
pub(crate) fn certificate(c: &CertificateReport, i: usize, test: Option<&TestReport>) -> String {
    let k = &c.certificate;
    let id = |f: &str| field_id("certificate", i, f);
    let heading = match c.epsilon {
        Some(eps) => format!("The certificate at ε = {eps}"),
        None => "The certificate".into(),
    };
    let mut s = format!("<section><h2>{}</h2>", escape(&heading));
    s.push_str(&format!(
        "<p><b>Gibbs predictor.</b> With probability ≥ 1 − {} over the training sample, {} of the Gibbs predictor on new data is at most {}.</p><p class=\"note\">Bounded predictor: {}. Confidence term: {}.</p>",
        plain_number(&id("delta"), k.delta),
        escape(&risk_words(c)),
        number(&id("value"), k.bound, 4),
        escape(&k.predictor),
        escape(&term_words(k.confidence_term))
    ));
    s.push_str(&format!(
        "<table><tr><th>part</th><th class=\"n\">value</th><th>what it is</th></tr>\
<tr><td>empirical risk</td><td class=\"n\">{}</td><td>the Gibbs predictor's risk on the N training rows</td></tr>\
<tr><td>KL(Q‖P)</td><td class=\"n\">{}</td><td>nats: how far the data moved the posterior Q from the prior P</td></tr>\
<tr><td>penalty</td><td class=\"n\">{}</td><td>nats: the price of every choice made from the data</td></tr>\
<tr><td>N</td><td class=\"n\">{}</td><td>training rows the bound is about</td></tr>\
<tr><td>complexity c</td><td class=\"n\">{}</td><td>(KL + penalty + confidence)/N</td></tr>{}</table>",
        number(&id("empirical-risk"), k.empirical_risk, 4),
        number(&id("kl"), k.kl, 2),
        number(&id("penalty"), k.penalty, 2),
        plain_number(&id("n"), k.n as f64),
        number(&id("complexity"), k.complexity, 4),
        pinsker_row(c, i),
    ));
    s.push_str(&risk_picture(c, test));
    s.push_str(&nats_picture(c));
    if !k.penalty_terms.is_empty() {
        s.push_str("<h3>What the penalty pays for</h3><table><tr><th>choice</th><th class=\"n\">nats</th></tr>");
        for t in &k.penalty_terms {
            s.push_str(&format!(
                "<tr><td>{}</td><td class=\"n\">{}</td></tr>",
                escape(&t.what),
                shown(t.nats, 2)
            ));
        }
        s.push_str("</table>");
    }
    if let Some(d) = &c.deployed {
        s.push_str(&format!(
            "<h3>Deployed predictor</h3><p><b>{}.</b> With probability ≥ 1 − {}, its risk on new data is at most {} ({} errors in {} rows, {}). With the Gibbs certificate, both hold with probability ≥ 1 − {}.</p>",
            escape(&capitalise(&d.predictor.to_string())),
            d.delta,
            number(&field_id("deployed", i, "value"), d.value, 4),
            d.errors,
            d.n,
            number(&field_id("deployed", i, "error-rate"), d.error_rate, 4),
            d.joint_delta
        ));
    }
    s.push_str("</section>");
    s
}

/// The confidence term in words.
fn term_words(t: ConfidenceTerm) -> String {
    match t {
        ConfidenceTerm::Maurer => "Maurer's ln(2√N/δ); the bound is kl⁻¹(empirical risk, c)".into(),
        ConfidenceTerm::Seeger => {
            "Seeger's ln((N+1)/δ); the bound is kl⁻¹(empirical risk, c)".into()
        }
        ConfidenceTerm::Sharp => {
            "the sharp ln(ξ(N)/δ); the bound is kl⁻¹(empirical risk, c)".into()
        }
        ConfidenceTerm::Catoni { lambda } => {
            format!("Catoni's bound at λ = {lambda:.4}, with ln(1/δ)")
        }
    }
}

/// The Pinsker form's row (none for Catoni's bound, which has no such form).
fn pinsker_row(c: &CertificateReport, i: usize) -> String {
    let k = &c.certificate;
    if k.confidence_term.catoni_lambda().is_some() {
        return String::new();
    }
    format!(
        "<tr><td>Pinsker form</td><td class=\"n\">{}</td><td>empirical risk + √(c/2), a looser closed form of the same bound</td></tr>",
        number(&field_id("certificate", i, "pinsker"), k.bound_sqrt, 4)
    )
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The certificate's risks on one scale from 0 to 1, each bar named by its predictor: the
/// Gibbs predictor's empirical risk and bound (the gap shaded), the deployed predictor's
/// training error and bound, leave-one-out, and the test risks when a test file was given.
fn risk_picture(c: &CertificateReport, test: Option<&TestReport>) -> String {
    let k = &c.certificate;
    let mut rows = vec![Bar::certificate(
        "Gibbs · certificate",
        (
            k.empirical_risk,
            "gibbs",
            format!("empirical risk {:.4}", k.empirical_risk),
        ),
        (
            k.gap,
            "gibbs-gap",
            format!("price of the guarantee {:.4}", k.gap),
        ),
        k.bound,
    )];
    if let Some(g) = test_gibbs_risk(c, test) {
        rows.push(Bar::one("Gibbs · test risk", g, "test", "test Gibbs risk"));
    }
    if let Some(d) = &c.deployed {
        rows.push(Bar::certificate(
            "Deployed · certificate",
            (
                d.error_rate,
                "deployed",
                format!("error on its rows {:.4}", d.error_rate),
            ),
            (
                d.value - d.error_rate,
                "deployed-gap",
                "price of the guarantee".into(),
            ),
            d.value,
        ));
    }
    if let Some(e) = test_deployed_error(c, test) {
        rows.push(Bar::one("Deployed · test error", e, "test", "test error"));
    }
    if let Some(e) = c.loo_error {
        let label = "Deployed · leave-one-out (estimate)";
        rows.push(Bar::one(label, e, "loo", "leave-one-out"));
    }
    let marks: Vec<(f64, String)> = c
        .majority_rate
        .map(|m| (m, format!("always the most frequent class: {m:.4}")))
        .into_iter()
        .collect();
    format!(
        "<figure>{}<figcaption>Risks on one scale from 0 to 1. Dark: measured on rows (training rows for a certificate); light: what the guarantee adds. Blue: the Gibbs predictor; orange: the deployed predictor (what predict returns); green: test rows; grey: leave-one-out.</figcaption></figure>",
        bars("The certificate's risks by predictor", &rows, 1.0, &marks)
    )
}

/// What the bound pays, in nats: KL, the penalty and the confidence term, whose sum over N
/// is the complexity c.
fn nats_picture(c: &CertificateReport) -> String {
    let k = &c.certificate;
    let confidence = k.confidence_term.value(k.n, k.delta);
    let total = k.kl + k.penalty + confidence;
    let row = Bar {
        label: "KL + penalty + confidence".into(),
        segments: vec![
            (k.kl, "kl", format!("KL(Q‖P) {:.2} nats", k.kl)),
            (
                k.penalty,
                "penalty",
                format!("penalty {:.2} nats", k.penalty),
            ),
            (
                confidence,
                "confidence",
                format!("confidence term {confidence:.2} nats"),
            ),
        ],
        value_text: format!("{total:.1} nats"),
    };
    format!(
        "<figure>{}<figcaption>What the bound pays, in nats: KL(Q‖P) {:.2} (blue), the penalty {:.2} (purple), the confidence term {:.2} (grey). Divided by N = {} it is the complexity c = {:.4}.</figcaption></figure>",
        bars("The certificate's price in nats", &[row], total, &[]),
        k.kl,
        k.penalty,
        confidence,
        k.n,
        k.complexity
    )
}

/// Leave-one-out beside every certificate.
pub(crate) fn leave_one_out(certs: &[CertificateReport]) -> String {
    let any = certs
        .iter()
        .any(|c| c.loo_error.is_some() || c.loo_exact_error.is_some());
    if !any {
        return "<section><h2>Leave-one-out</h2><p class=\"note\">Not computed for this model.</p></section>".into();
    }
    let mut s = String::from("<section><h2>Leave-one-out</h2><p>Each training row predicted by the model refitted without it: an estimate of the deployed predictor's test error, usually close to it; no guarantee.</p><table><tr><th>ε</th><th>estimator</th><th class=\"n\">error</th><th class=\"n\">exact (N refits)</th><th class=\"n\">RMSE</th><th class=\"n\">mean log predictive</th></tr>");
    for c in certs {
        let opt = |v: Option<f64>| shown(v.unwrap_or(f64::NAN), 4);
        let estimator = c
            .loo_estimator
            .map(|e| format!("{e:?}"))
            .unwrap_or_else(|| "–".into());
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            c.epsilon.map_or("–".into(), |e| e.to_string()),
            escape(&estimator),
            opt(c.loo_error),
            opt(c.loo_exact_error),
            opt(c.loo_rmse),
            opt(c.loo_log_predictive)
        ));
    }
    s.push_str("</table></section>");
    s
}

/// Test metrics and the figure that fits the task.
pub(crate) fn test(t: &TestReport, task: &TaskKind) -> String {
    let e = &t.evaluation;
    let mut s = format!(
        "<section><h2>On the test file</h2><p>{} test rows (not used by the certificate; its numbers hold without them).</p><table><tr><th>metric</th><th class=\"n\">value</th><th>predictor</th></tr>",
        plain_number("test-n", e.n as f64)
    );
    let mut row = |name: &str, id: &str, v: Option<f64>, who: &str| {
        if let Some(v) = v {
            s.push_str(&format!(
                "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                escape(name),
                number(id, v, 4),
                escape(who)
            ));
        }
    };
    let gibbs = match e.epsilon {
        Some(eps) => format!("Gibbs risk (ε = {eps})"),
        None => "Gibbs error".into(),
    };
    row(&gibbs, "test-gibbs-risk", e.gibbs_risk, "Gibbs");
    row(
        "error rate",
        "test-error-rate",
        e.error_rate,
        "deployed (predict's label)",
    );
    row(
        "log loss",
        "test-log-loss",
        e.log_loss,
        "predict's probabilities",
    );
    let mean_risk = match e.epsilon {
        Some(eps) => format!("ε-band error of the mean (ε = {eps})"),
        None => "Bayes classifier error".into(),
    };
    if e.epsilon.is_some() {
        row(
            &mean_risk,
            "test-mean-risk",
            e.bayes_risk,
            "deployed (posterior mean)",
        );
    }
    row("RMSE", "test-rmse", e.rmse, "deployed (posterior mean)");
    row("MAE", "test-mae", e.mae, "deployed (posterior mean)");
    row("NLPD", "test-nlpd", e.nlpd, "predictive distribution");
    row(
        "95% coverage",
        "test-coverage",
        e.coverage_95,
        "Gaussian 95% interval",
    );
    s.push_str("</table>");
    if let Some(bins) = &t.reliability {
        s.push_str(&reliability(bins, task));
    }
    if let Some(rc) = &t.risk_coverage {
        s.push_str(&risk_coverage(rc, e.error_rate));
    }
    if let Some(points) = &t.regression {
        s.push_str(&predicted_vs_actual(points));
    }
    if let Some(m) = &t.confusion {
        s.push_str(&confusion(m));
        s.push_str(
            "<p class=\"note\">The risk–coverage curve is drawn for binary classifiers.</p>",
        );
    }
    s.push_str("</section>");
    s
}

/// Reliability diagram: mean predicted p(y = +1) against the observed frequency per bin, or
/// for a multi-class model the top-label one.
fn reliability(bins: &[ReliabilityBin], task: &TaskKind) -> String {
    let positive = match task {
        TaskKind::BinaryClassification { positive, .. } => positive.as_str(),
        TaskKind::MultiClass { .. } => return top_label_reliability(bins),
        TaskKind::Regression => "+1",
    };
    let chart = reliability_chart(bins, "observed");
    let y_label = format!("observed frequency of {positive}");
    format!(
        "<figure id=\"reliability\">{}<figcaption>Reliability of predict's probability p(y = {}) on the test rows, in {} equal bins (dot area: rows in the bin). On the dashed diagonal the probabilities are calibrated.</figcaption></figure>",
        chart.finish("Reliability diagram", &format!("predicted p(y = {positive})"), &y_label),
        escape(positive),
        bins.len()
    )
}

/// The reliability points: a dot per non-empty bin (area: its rows) joined by a line, on the
/// diagonal where calibrated.
fn reliability_chart(bins: &[ReliabilityBin], what: &str) -> Chart {
    let mut chart = Chart::new((0.0, 1.0), (0.0, 1.0));
    chart.line((0.0, 0.0), (1.0, 1.0), "diagonal");
    let filled: Vec<&ReliabilityBin> = bins.iter().filter(|b| b.count > 0).collect();
    let points: Vec<(f64, f64)> = filled
        .iter()
        .map(|b| (b.mean_predicted, b.observed))
        .collect();
    chart.polyline(&points, "curve");
    let most = filled.iter().map(|b| b.count).max().unwrap_or(1) as f64;
    for b in &filled {
        let r = 3.0 + 6.0 * (b.count as f64 / most).sqrt();
        let tip = format!(
            "[{:.1}, {:.1}): {} rows, predicted {:.3}, {what} {:.3}",
            b.lower, b.upper, b.count, b.mean_predicted, b.observed
        );
        chart.dot((b.mean_predicted, b.observed), r, "point", &tip);
    }
    chart
}

/// Top-label reliability diagram of a multi-class model: predict's largest class probability
/// against the share of rows its class is right on, per bin.
fn top_label_reliability(bins: &[ReliabilityBin]) -> String {
    let chart = reliability_chart(bins, "accuracy");
    format!(
        "<figure id=\"reliability\">{}<figcaption>Top-label reliability on the test rows: the confidence of predict's class (its probability, the largest of the row's class probabilities) against the share of rows whose predicted class is right, in {} equal bins (dot area: rows in the bin). On the dashed diagonal the confidence is calibrated.</figcaption></figure>",
        chart.finish(
            "Top-label reliability diagram",
            "confidence (probability of the predicted class)",
            "accuracy"
        ),
        bins.len()
    )
}

/// Confusion matrix of predict's classes on the test rows: counts, each row shaded by its
/// share of the class's rows.
fn confusion(m: &ConfusionMatrix) -> String {
    let cells: Vec<Vec<Cell>> = m
        .counts
        .iter()
        .zip(&m.classes)
        .map(|(row, actual)| {
            let total: usize = row.iter().sum();
            row.iter()
                .zip(&m.classes)
                .map(|(&count, predicted)| {
                    let share = count as f64 / total.max(1) as f64;
                    Cell {
                        shade: share,
                        text: count.to_string(),
                        tip: format!(
                            "{count} of {total} rows of {actual} predicted {predicted} ({:.1}%)",
                            100.0 * share
                        ),
                    }
                })
                .collect()
        })
        .collect();
    let n: usize = m.counts.iter().flatten().sum();
    format!(
        "<figure id=\"confusion-matrix\">{}<figcaption>Confusion matrix of predict's class on the test rows: each row a true class, each column the class predicted; the counts, shaded by their share of the row (the class's recall on the diagonal). Off the diagonal: {} of {} rows, the error rate above.</figcaption></figure>",
        heatmap(
            "Confusion matrix",
            (&m.classes, &m.classes),
            ("true class", "predicted class"),
            &cells
        ),
        m.errors(),
        n
    )
}

/// Risk–coverage curve of predict's labels, the most confident accepted first.
fn risk_coverage(rc: &RiskCoverage, overall: Option<f64>) -> String {
    let top = rc
        .curve
        .iter()
        .map(|p| p.1)
        .fold(0.0f64, f64::max)
        .max(overall.unwrap_or(0.0));
    let mut chart = Chart::new((0.0, 1.0), (0.0, top.max(0.01) * 1.05));
    if let Some(o) = overall {
        chart.line((0.0, o), (1.0, o), "overall");
    }
    chart.polyline(&rc.curve, "curve");
    format!(
        "<figure id=\"risk-coverage\">{}<figcaption>Selective classification on the test rows: accept the rows predict is most confident about (score {}) and reject the rest; the error rate of predict's labels among the accepted (solid) against the share accepted. Dashed: the error rate on all rows.</figcaption></figure>",
        chart.finish("Risk–coverage curve", "coverage (share of rows accepted)", "error rate among the accepted"),
        escape(&rc.score)
    )
}

/// Predicted means with their 95% intervals against the targets.
fn predicted_vs_actual(points: &[RegressionPoint]) -> String {
    let lo = points
        .iter()
        .flat_map(|p| [p.actual, p.lower])
        .fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .flat_map(|p| [p.actual, p.upper])
        .fold(f64::NEG_INFINITY, f64::max);
    let mut chart = Chart::new((lo, hi), (lo, hi));
    chart.line((lo, lo), (hi, hi), "diagonal");
    for p in points {
        chart.line((p.actual, p.lower), (p.actual, p.upper), "interval");
    }
    for p in points {
        let tip = format!(
            "target {:.4}, mean {:.4}, interval [{:.4}, {:.4}]",
            p.actual, p.mean, p.lower, p.upper
        );
        chart.dot((p.actual, p.mean), 2.5, "point", &tip);
    }
    format!(
        "<figure id=\"predicted-vs-actual\">{}<figcaption>Predict's mean (dots) and its central {:.0}% Gaussian predictive interval (bars, noise included: the interval evaluate's coverage counts) against each test row's target. On the dashed diagonal the mean is exact.</figcaption></figure>",
        chart.finish("Predicted against actual", "target", "predicted mean"),
        100.0 * INTERVAL_LEVEL
    )
}

/// The model: hyperparameters and the ARD relevances.
pub(crate) fn model(r: &ModelReport) -> String {
    let m = &r.model;
    let mut s = format!(
        "<section><h2>The model</h2><p>Method <code>{}</code>, fitted at δ = {}{}{}.</p>",
        escape(&r.method),
        m.delta,
        m.epsilon.map_or(String::new(), |e| format!(", ε = {e}")),
        m.noise_variance.map_or(String::new(), |v| format!(
            ", noise variance {} (standardised targets)",
            shown(v, 4)
        ))
    );
    if m.hyperparameters.is_empty() {
        s.push_str("<p class=\"note\">Each class has its own hyperparameters (see the model file); the certificate covers them together.</p>");
    } else {
        let heads = ["hyperparameter (θ = ln value)", "θ", "value"];
        let rows = m.hyperparameters.iter().map(|h| {
            let name = format!("<code>{}</code>", escape(&h.name));
            (name, h.ln_value, h.ln_value.exp())
        });
        s.push_str(&name_and_two_numbers(heads, rows));
    }
    if let Some(ls) = &m.lengthscales {
        let relevance: Vec<f64> = ls.iter().map(|l| 1.0 / l.lengthscale).collect();
        let max = relevance.iter().cloned().fold(0.0, f64::max);
        let rows: Vec<Bar> = ls
            .iter()
            .zip(&relevance)
            .map(|(l, &v)| Bar {
                label: l.input.clone(),
                segments: vec![(v, "relevance", lengthscale_words(l))],
                value_text: format!("{v:.3}"),
            })
            .collect();
        let grouped = if ls.iter().any(|l| l.inputs > 1) {
            " A table column coded as several inputs (one per category) has one lengthscale, shared by its inputs, and one bar."
        } else {
            ""
        };
        s.push_str(&format!(
            "<figure id=\"relevances\">{}<figcaption>ARD relevance of each input, 1/lengthscale on standardised inputs: the longer the bar, the faster the function changes along that input.{grouped}</figcaption></figure>",
            bars("ARD relevances", &rows, max, &[])
        ));
    }
    for note in &m.notes {
        s.push_str(&format!("<p class=\"note\">{}</p>", escape(note)));
    }
    s.push_str("</section>");
    s
}

/// A lengthscale's tooltip: its value, and how many inputs share it.
fn lengthscale_words(l: &Lengthscale) -> String {
    match l.inputs {
        1 => format!("lengthscale {:.4}", l.lengthscale),
        n => format!("lengthscale {:.4}, shared by {n} inputs", l.lengthscale),
    }
}

/// The training data and its encoding.
pub(crate) fn data(r: &ModelReport) -> String {
    let d = &r.data;
    let mut s = format!(
        "<section><h2>The data</h2><p>{} training rows; target <code>{}</code>; missing cells: {}.</p>",
        d.n,
        escape(&d.target),
        escape(&d.missing)
    );
    if let Some(dup) = &d.duplicates {
        if dup.rows > 0 {
            s.push_str(&format!(
                "<p class=\"note\">{} rows repeat an earlier row ({:.1}%): the certificate assumes independent rows.</p>",
                dup.rows,
                100.0 * dup.share
            ));
        }
    }
    let coded: Vec<String> = d
        .columns
        .iter()
        .filter_map(|c| {
            c.categories
                .as_ref()
                .map(|l| format!("{} ({})", c.name, l.join(", ")))
        })
        .collect();
    if !coded.is_empty() {
        s.push_str(&format!(
            "<p>Categorical columns, coded with the training categories: {}.</p>",
            escape(&coded.join("; "))
        ));
    }
    let heads = ["input", "training mean", "training sd"];
    let rows = d.inputs.iter().map(|i| (escape(&i.name), i.mean, i.sd));
    s.push_str(&name_and_two_numbers(heads, rows));
    s.push_str("<p class=\"note\">Inputs are standardised with these training statistics before the kernel sees them.</p></section>");
    s
}

/// An HTML table of a name (HTML already) and two numbers (to four places) per row, under the
/// column heads `heads`, the numbers' columns right-aligned.
fn name_and_two_numbers(
    heads: [&str; 3],
    rows: impl IntoIterator<Item = (String, f64, f64)>,
) -> String {
    let [name, a, b] = heads;
    let mut t =
        format!("<table><tr><th>{name}</th><th class=\"n\">{a}</th><th class=\"n\">{b}</th></tr>");
    for (name, a, b) in rows {
        t.push_str(&format!(
            "<tr><td>{name}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            shown(a, 4),
            shown(b, 4)
        ));
    }
    t.push_str("</table>");
    t
}
