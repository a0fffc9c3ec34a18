//! One module per subcommand; this file dispatches and holds what they share (loading data
//! and models, output paths, progress, printing a certificate).

use std::path::Path;

use anyhow::Result;
use pacgp::data::{
    self, Categorical, CsvOptions, Dataset, MissingCells, MissingPolicy, TargetRead, TargetSpec,
};
use pacgp::model::FittedModel;

use crate::cli::*;

mod demo;
mod fit;
mod outputs;
mod report;
mod split;
mod use_model;

pub(crate) use crate::output::spinner;

/// Dispatch a parsed command line.
pub fn run(args: Cli) -> Result<()> {
    match args.command {
        Command::Fit(a) => fit::fit(a),
        Command::Predict(a) => use_model::predict(a),
        Command::Evaluate(a) => use_model::evaluate(a),
        Command::Certify(a) => use_model::certify(a),
        Command::Report(a) => report::report(a),
        Command::Reproduce(a) => crate::reproduce::reproduce(a),
        Command::Demo(a) => demo::demo(a),
        Command::Split(a) => split::split(a),
    }
}

/// Read the training file (fitting its input coding) and say on stderr what the coding did.
pub(crate) fn load_training(
    a: &DataArgs,
    target: impl Into<data::TargetKind>,
) -> Result<data::Training> {
    let t = data::read_training(&a.data, &csv_options(a)?, target)?;
    for note in &t.notes {
        eprintln!("note: {note}");
    }
    Ok(t)
}

/// A file read for a saved model: the data set of the rows kept, their file lines, and the
/// lines the model's `--missing drop` left out.
pub(crate) struct ModelData {
    pub(crate) data: Dataset,
    pub(crate) lines: Vec<u64>,
    pub(crate) dropped: Vec<u64>,
}

/// Inputs (and, if `need_target`, targets) of `path` read as the model's training file was
/// (its columns, categories, fills); `unknown` overrides the stored unknown-category rule.
pub(crate) fn load_for_model(
    m: &FittedModel,
    path: &Path,
    need_target: bool,
    unknown: Option<data::UnknownCategory>,
) -> Result<ModelData> {
    let mut coding = m.input_coding.clone();
    if let Some(u) = unknown {
        coding.unknown_category = u;
    }
    let target = match (need_target, m.task.labels(), m.classes()) {
        (false, _, _) => TargetRead::Skip(&m.target_name),
        (true, _, Some(classes)) => TargetRead::Classes(&m.target_name, classes),
        (true, Some(labels), None) => TargetRead::Labels(&m.target_name, labels),
        (true, None, None) => TargetRead::Number(&m.target_name),
    };
    let r = data::read_for_model(path, &coding, &m.feature_names, target)?;
    let n = r.x.nrows();
    let data = Dataset::with_names(
        r.x,
        r.y.unwrap_or_else(|| vec![0.0; n]),
        m.feature_names.clone(),
        m.target_name.clone(),
    )?;
    Ok(ModelData {
        data,
        lines: r.lines,
        dropped: r.dropped,
    })
}

/// Say on stderr how many rows the model's `--missing drop` left out of `path`.
pub(crate) fn note_dropped(d: &ModelData, path: &Path, what: &str) {
    if d.dropped.is_empty() {
        return;
    }
    let shown: Vec<String> = d.dropped.iter().take(5).map(|l| l.to_string()).collect();
    let more = if d.dropped.len() > 5 { ", …" } else { "" };
    eprintln!(
        "note: {} of {} rows of {} have a missing value and were left out, as in training (--missing drop; lines {}{more}){what}",
        d.dropped.len(),
        d.dropped.len() + d.lines.len(),
        path.display(),
        shown.join(", ")
    );
}

pub(crate) fn load_model(path: &Path) -> Result<FittedModel> {
    Ok(FittedModel::load(path)?)
}

/// The reading options the data arguments ask for.
pub(crate) fn csv_options(a: &DataArgs) -> Result<CsvOptions> {
    let categorical = Categorical::from_words(&a.categorical).map_err(pacgp::Error::from)?;
    let missing = match (a.missing, a.drop_missing, a.missing_as_zero) {
        (Some(m), ..) => m,
        (None, true, _) => MissingPolicy::DropRows,
        (None, _, true) => MissingPolicy::Zero,
        (None, false, false) => MissingPolicy::Reject,
    };
    Ok(CsvOptions {
        target: a
            .target
            .as_deref()
            .map(TargetSpec::parse)
            .unwrap_or_default(),
        drop_columns: a.drop.clone(),
        missing,
        yes_no: a.yes_no,
        categorical,
        unknown_category: a.unknown_category.unwrap_or_default(),
        max_categories: a.max_categories,
        missing_cells: a
            .na_values
            .as_ref()
            .map(|cells| MissingCells::new(cells.iter().map(|c| c.trim())))
            .unwrap_or_default(),
        no_header: a.no_header,
        positive: a.positive.clone(),
    })
}

/// The targets of `--target a,b,…` when it names more than one (multi-output regression).
pub(crate) fn several_targets(a: &DataArgs) -> Option<Vec<TargetSpec>> {
    let given = a.target.as_deref()?;
    let targets: Vec<TargetSpec> = given
        .split(',')
        .map(|t| TargetSpec::parse(t.trim()))
        .collect();
    (targets.len() > 1).then_some(targets)
}

/// An output path error (exit status 2).
fn cannot_write(path: &Path, why: String) -> anyhow::Error {
    pacgp::Error::Unsupported(format!("cannot write {}: {why}", path.display())).into()
}

/// Before any long work: refuse an output that names one of the `inputs` (it would be
/// overwritten), a missing folder or a folder as the path, and check that the folder takes a
/// new file (a temporary one beside it, created and removed) and an existing file can be
/// opened for writing.
pub(crate) fn check_output_path(path: &Path, inputs: &[(&str, &Path)]) -> Result<()> {
    for (flag, input) in inputs {
        if data::same_file(path, input) {
            return Err(cannot_write(
                path,
                format!("it is the {flag} file, which would be overwritten; choose another output"),
            ));
        }
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(cannot_write(
            path,
            format!("folder {} does not exist", dir.display()),
        ));
    }
    if path.is_dir() {
        return Err(cannot_write(path, "it is a folder".into()));
    }
    match std::fs::metadata(path) {
        // A device or pipe (/dev/null, /dev/stdout): opening it for writing is the test.
        Ok(meta) if !meta.is_file() => {
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| cannot_write(path, e.to_string()))?;
        }
        // An existing file: it must open for writing (without truncating it here).
        Ok(_) => {
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| cannot_write(path, e.to_string()))?;
        }
        Err(_) => {
            let probe = dir.join(format!(".pacgp-write-check-{}", std::process::id()));
            std::fs::File::create(&probe).map_err(|e| {
                cannot_write(
                    path,
                    format!("cannot create a file in {}: {e}", dir.display()),
                )
            })?;
            let _ = std::fs::remove_file(&probe);
        }
    }
    Ok(())
}

/// The Pinsker (sqrt) form of a bound, which can exceed 1; then it is shown as it is with a
/// note that it says nothing (a risk is at most 1), rather than clipped silently.
fn pinsker_text(b: f64) -> String {
    if b > 1.0 {
        format!("{b:.4}, above 1 so it says nothing; the kl bound above is never looser")
    } else {
        format!("{b:.4}")
    }
}

/// A share of δ as it was meant (0.009, not 0.009000000000000001): 12 significant digits.
fn shown_delta(d: f64) -> String {
    format!("{}", format!("{d:.12e}").parse::<f64>().unwrap_or(d))
}

/// Print a certificate on the deployed predictor: the test-set bound on held-out rows, or
/// the derandomised bound on the training sample with its parts.
fn print_deployed(d: &pacgp::model::DeployedCertificate) -> Result<()> {
    use pacgp::certificate::deployed::DerandomisedForm;
    let risk = match d.epsilon {
        Some(eps) => format!("the ε-band risk (ε = {eps})"),
        None => "the error rate".into(),
    };
    let Some(p) = &d.derandomised else {
        out!(
            "with probability ≥ 1 − {} over the held-out rows, {risk} of the deployed predictor, {}, on new data is at most {:.4}",
            shown_delta(d.delta),
            d.predictor,
            d.value
        );
        out!(
            "  test-set bound (binomial tail inversion): {} errors in {} held-out rows ({:.4}); union bound: the Gibbs certificates share δ/2 and the held-out bounds δ/2, so all hold together with probability ≥ 1 − {}",
            d.errors,
            d.n,
            d.error_rate,
            shown_delta(d.joint_delta)
        );
        return Ok(());
    };
    out!(
        "deployed predictor, {}: with probability ≥ 1 − {}, {risk} on new data is at most {:.4} (training sample: {} errors in {}, {:.4})",
        d.predictor,
        shown_delta(d.delta),
        d.value,
        d.errors,
        d.n,
        d.error_rate
    );
    // A two-term form's parts: the first risk bounded above, the second above (a sum) or
    // below (the C-bound's disagreement), each at δ/2.
    let first = |name: String| {
        format!(
            "{name} {:.4} ≤ {:.4} (KL {:.2})",
            p.risk, p.risk_bound, p.kl
        )
    };
    let second = |name: &str, side: &str| {
        format!(
            "{name} {:.4} {side} {:.4} (KL {:.2})",
            p.second_risk.unwrap_or(f64::NAN),
            p.second_bound.unwrap_or(f64::NAN),
            p.second_kl.unwrap_or(f64::NAN)
        )
    };
    let how = match p.form {
        DerandomisedForm::Disagreement => format!(
            "{} + {}, each at δ/2",
            first(format!("Gibbs risk (mean scaled by c = {})", p.scale)),
            second("disagreement of two draws", "≤"),
        ),
        DerandomisedForm::Spread => format!(
            "{} + {}, each at δ/2",
            first(format!("band risk at (1 − {})ε", p.margin)),
            second("spread beyond that margin", "≤"),
        ),
        DerandomisedForm::Divided => format!(
            "margin risk (t = {}, mean scaled by c = {}) {:.4} ≤ {:.4} (KL {:.2}), divided by Φ(t/√κ) = {:.4}",
            p.margin,
            p.scale,
            p.risk,
            p.risk_bound,
            p.kl,
            p.divisor.unwrap_or(f64::NAN)
        ),
        DerandomisedForm::FirstOrder => format!(
            "Gibbs risk {:.4} ≤ {:.4} (KL {:.2}), times 2 (where the majority vote errs, a draw errs with probability ≥ ½)",
            p.risk, p.risk_bound, p.kl
        ),
        DerandomisedForm::Tandem => format!(
            "tandem risk (two draws both err) {:.4} ≤ {:.4} (KL of the pair {:.2}), times 4",
            p.risk, p.risk_bound, p.kl
        ),
        DerandomisedForm::CBound => format!(
            "C-bound 1 − (1 − 2r)²/(1 − 2d) of {} and {}, each at δ/2",
            first(format!("the Gibbs risk (mean scaled by c = {}) r:", p.scale)),
            second("the disagreement of two draws d:", "≥"),
        ),
    };
    out!(
        "  derandomised PAC-Bayes bound: {how}; each choice priced {:.2} nats (grid of {}); with the Gibbs certificate, both hold with probability ≥ 1 − {}",
        p.penalty,
        p.grid,
        shown_delta(d.joint_delta)
    );
    Ok(())
}

/// Print a certificate and, where computed, the leave-one-out figures beside it.
pub(crate) fn print_certificate(c: &pacgp::model::CertificateReport) -> Result<()> {
    let k = &c.certificate;
    match c.epsilon {
        Some(eps) => out!(
            "with probability ≥ 1 − {} over the training sample, the ε-band Gibbs risk (ε = {eps}) on new data is at most {:.4}",
            k.delta, k.bound
        ),
        None => out!(
            "with probability ≥ 1 − {} over the training sample, the Gibbs classification error on new data is at most {:.4}",
            k.delta, k.bound
        ),
    }
    if let Some(stopped) = &c.stopped_early {
        out!("  {}", stopped.sentence(fit::TIME_LIMIT_FLAG));
    }
    out!("  bounded predictor: {}", k.predictor);
    if let Some(s) = &k.sampled_risk {
        out!(
            "  sampled empirical risk {:.4} from {} draws ({} per point, seed {}); its upper limit {:.4} holds with probability ≥ 1 − {} (δ_s), the bound is taken there at δ − δ_s = {}",
            s.sample_mean,
            s.draws,
            s.draws_per_point,
            s.seed,
            s.upper_limit,
            shown_delta(s.delta_sampling),
            shown_delta(s.delta_bound)
        );
    }
    // Catoni's bound has no Pinsker form: name its λ instead.
    let form = match k.confidence_term.catoni_lambda() {
        Some(lambda) => format!("Catoni's bound at λ = {lambda:.4}"),
        None => format!("Pinsker form: {}", pinsker_text(k.bound_sqrt)),
    };
    out!(
        "  empirical risk {:.4}, KL(Q‖P) {:.2} nats, penalty {:.2} nats, N = {}  ({form})",
        k.empirical_risk,
        k.kl,
        k.penalty,
        k.n,
    );
    if let Some(m) = c.majority_rate {
        out!("  always predicting the most frequent class errs at rate {m:.4} on the training sample");
        if c.beats_majority() == Some(false) {
            out!(
                "  the bound {:.4} is not below {m:.4}: this certificate says the model is no better than always predicting the most frequent class",
                k.bound
            );
        }
    }
    match (c.loo_error, c.loo_log_predictive, c.loo_rmse) {
        (Some(e), Some(lp), Some(r)) => out!("  leave-one-out: ε-band error of the mean {e:.4}, RMSE {r:.4}, mean log predictive {lp:.4}"),
        (Some(e), _, _) => out!(
            "  leave-one-out error ({}): {e:.4}",
            c.loo_estimator
                .and_then(|m| serde_json::to_value(m).ok())
                .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
                .unwrap_or_else(|| "estimate".into())
        ),
        _ => {}
    }
    if let Some(e) = c.loo_exact_error {
        out!("  exact leave-one-out error (N refits): {e:.4}");
    }
    if let Some(d) = &c.deployed {
        print_deployed(d)?;
    }
    Ok(())
}

/// A CSV cell, quoted when it holds a comma, a quote or a line break.
pub(crate) fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// For each row of the file in order, the index of its prediction, or `None` for a row the
/// model's `--missing drop` left out (its output row stays empty, so rows still line up).
pub(crate) fn row_slots(read: &ModelData) -> Vec<Option<usize>> {
    let mut slots: Vec<(u64, Option<usize>)> = read
        .lines
        .iter()
        .enumerate()
        .map(|(i, &l)| (l, Some(i)))
        .chain(read.dropped.iter().map(|&l| (l, None)))
        .collect();
    slots.sort_unstable_by_key(|s| s.0);
    slots.into_iter().map(|s| s.1).collect()
}

/// Values in file-row order, `null` for rows left out.
pub(crate) fn by_row<'a, T: serde::Serialize>(
    slots: &[Option<usize>],
    v: &'a [T],
) -> Vec<Option<&'a T>> {
    slots.iter().map(|s| s.map(|i| &v[i])).collect()
}

/// A regressor's test metrics in two lines, the first after `prefix`.
pub(crate) fn print_regression_metrics(prefix: &str, e: &pacgp::model::Evaluation) -> Result<()> {
    let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
    out!(
        "{prefix}{} test points: RMSE {:.4}  MAE {:.4}  NLPD {:.4}  95% coverage {:.3}",
        e.n,
        f(e.rmse),
        f(e.mae),
        f(e.nlpd),
        f(e.coverage_95)
    );
    if let (Some(eps), Some(g), Some(b)) = (e.epsilon, e.gibbs_risk, e.bayes_risk) {
        let indent = if prefix.is_empty() { "" } else { "  " };
        out!("{indent}ε = {eps}: Gibbs risk {g:.4}, error of the mean predictor {b:.4}");
    }
    Ok(())
}
