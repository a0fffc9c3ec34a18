//! The model's and the data's sections: hyperparameters, ARD relevances, the inputs' scaling.

use pacgp::model::report::{Lengthscale, ModelReport};

use crate::svg::{bars, Bar};
use crate::{escape, shown};

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
