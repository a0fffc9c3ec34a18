//! The test file's section: its metrics and the figure that fits the task.

use pacgp::metrics::ReliabilityBin;
use pacgp::model::report::{
    ConfusionMatrix, RegressionPoint, RiskCoverage, TaskKind, TestReport, INTERVAL_LEVEL,
};

use crate::svg::{heatmap, Cell, Chart};
use crate::{escape, number, plain_number};

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
