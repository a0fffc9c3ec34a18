//! One module per subcommand; this file dispatches and holds what they share (loading data
//! and models, output paths, progress, printing a certificate).

use std::path::Path;

use anyhow::Result;
use pacgp::data::{self, CsvOptions, Dataset, MissingPolicy, TargetSpec};
use pacgp::model::FittedModel;

use crate::cli::*;

mod demo;
mod fit;
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
        Command::Reproduce(a) => crate::reproduce::reproduce(a),
        Command::Demo(a) => demo::demo(a),
        Command::Split(a) => split::split(a),
    }
}

pub(crate) fn load_training(a: &DataArgs) -> Result<Dataset> {
    Ok(data::load_csv(&a.data, &csv_options(a))?)
}

/// Inputs (and, if present, targets) of `path` in the model's column order.
pub(crate) fn load_for_model(m: &FittedModel, path: &Path, need_target: bool) -> Result<Dataset> {
    if let (true, Some(labels)) = (need_target, m.task.labels()) {
        let (x, y) = data::load_columns_labelled(
            path,
            &m.feature_names,
            &m.target_name,
            labels,
            m.input_coding,
        )?;
        return Ok(Dataset::with_names(
            x,
            y,
            m.feature_names.clone(),
            m.target_name.clone(),
        )?);
    }
    let target = need_target.then_some(m.target_name.as_str());
    let (x, y) = data::load_columns(path, &m.feature_names, target, m.input_coding)?;
    let n = x.nrows();
    Ok(Dataset::with_names(
        x,
        y.unwrap_or_else(|| vec![0.0; n]),
        m.feature_names.clone(),
        m.target_name.clone(),
    )?)
}

pub(crate) fn load_model(path: &Path) -> Result<FittedModel> {
    Ok(FittedModel::load(path)?)
}

pub(crate) fn csv_options(a: &DataArgs) -> CsvOptions {
    CsvOptions {
        target: a
            .target
            .as_deref()
            .map(TargetSpec::parse)
            .unwrap_or_default(),
        drop_columns: a.drop.clone(),
        missing: if a.drop_missing {
            MissingPolicy::DropRows
        } else if a.missing_as_zero {
            MissingPolicy::Zero
        } else {
            MissingPolicy::Reject
        },
        yes_no: a.yes_no,
    }
}

/// Refuse an output path whose folder does not exist, before any long work is done.
pub(crate) fn check_output_path(path: &Path) -> Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = parent {
        if !dir.is_dir() {
            return Err(pacgp::Error::Unsupported(format!(
                "cannot write {}: folder {} does not exist",
                path.display(),
                dir.display()
            ))
            .into());
        }
    }
    if path.is_dir() {
        return Err(pacgp::Error::Unsupported(format!(
            "cannot write {}: it is a folder",
            path.display()
        ))
        .into());
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
    out!("  bounded predictor: {}", k.predictor);
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
    Ok(())
}
