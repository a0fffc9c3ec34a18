//! `report`: one self-contained HTML page on a saved model (rendered by `pacgp-report`, the
//! same page Python's `pacgp.report` writes).

use anyhow::Result;
use pacgp::model::CertifyOptions;

use super::{check_output_path, load_for_model, load_model, note_dropped, spinner};
use crate::cli::ReportArgs;

pub(super) fn report(a: ReportArgs) -> Result<()> {
    let mut inputs = vec![("--model", a.model.as_path()), ("--data", a.data.as_path())];
    if let Some(test) = &a.test {
        inputs.push(("--test", test.as_path()));
    }
    check_output_path(&a.out, &inputs)?;
    let model = load_model(&a.model)?;
    if model.output_members().is_ok() {
        return super::outputs::report(&a, &model, &title_of(&a));
    }
    let train = load_for_model(&model, &a.data, true, None)?;
    note_dropped(&train, &a.data, "");
    let test = match &a.test {
        Some(path) => {
            let t = load_for_model(&model, path, true, a.unknown_category)?;
            note_dropped(&t, path, "");
            Some(t.data)
        }
        None => None,
    };
    // The certificates are certify's with its defaults: the model's own ε, δ and predictor.
    let opts = CertifyOptions {
        loo: a.loo,
        ..Default::default()
    };
    let pb = spinner(&format!(
        "certifying {} on {} points for the report",
        model.method(),
        train.data.n()
    ));
    let content = model.report(&train.data, test.as_ref(), &opts);
    pb.finish_and_clear();
    let content = content?;
    crate::output::write(&a.out, &pacgp_report::render(&content, &title_of(&a)))?;
    let first = content.certificates.first().map(|c| c.certificate.bound);
    out!(
        "wrote {} (Gibbs certificate {})",
        a.out.display(),
        first.map_or("–".into(), |b| format!("{b:.4}"))
    );
    Ok(())
}

/// The page's title: the model file's name.
fn title_of(a: &ReportArgs) -> String {
    a.model
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| a.model.display().to_string())
}
