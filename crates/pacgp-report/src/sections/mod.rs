//! The page's sections, each a piece of markup from the report's content: the certificates
//! here, the test file's metrics and figures in `held_out`, the model and its data in `model`.

use pacgp::bounds::ConfidenceTerm;
use pacgp::model::report::{ModelReport, TestReport};
use pacgp::model::JointCertificate;
use pacgp::model::{CertificateReport, DeployedBound};

use crate::svg::{bars, Bar};
use crate::{escape, field_id, number, plain_number, shown, test_deployed_error, test_gibbs_risk};

mod held_out;
mod model;

pub(crate) use held_out::test;
pub(crate) use model::{data, model};

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
