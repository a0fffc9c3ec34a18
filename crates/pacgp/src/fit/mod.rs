//! What `fit` does, per method: a [`CheckedFitSpec`] and a training sample in, a
//! [`FittedModel`] out. The one entry point is [`fit`]; the CLI and the Python module call it
//! with the spec they mapped their inputs into.
//!
//! - [`regression`]: gpr, vfe/fitc/dtc, pac-gp, pac-sgp (and their split priors), greedy-sparse;
//! - [`classifier`]: laplace, ep, mean-field, ivm, sogp with θ from the candidate menu or the grid;
//! - [`pac_gpc`]: the classifier trained by its bound, and the classifier split prior;
//! - [`svm`]: the certified SVM.

pub mod classifier;
pub mod pac_gpc;
pub mod regression;
pub mod svm;

use crate::data::{Dataset, LabelMap};
use crate::error::{Error, Result};
use crate::model::FittedModel;
use crate::spec::{CheckedFitSpec, Method};

pub use crate::plan::{classifier_candidates, svm_candidates, svm_prior_kernel};

/// Fit `spec` on `data`. For a classifier the targets are ±1 and `labels` names the two
/// classes (`None`: "-1" and "1"); a regression method takes no labels. Data-dependent
/// defaults (a basis size of at most N) are filled in with a note in the model's report.
pub fn fit(spec: &CheckedFitSpec, data: &Dataset, labels: Option<LabelMap>) -> Result<FittedModel> {
    let (spec, notes) = spec.for_sample(data.n())?;
    if spec.is_classifier() {
        crate::data::check_binary_labels(&data.y)?;
    } else if labels.is_some() {
        return Err(Error::Unsupported(format!(
            "{} is a regression method: it takes real targets, not class labels",
            spec.method_name()
        )));
    }
    let labels = labels.unwrap_or_else(LabelMap::signs);
    let mut model = match &spec.method {
        Method::Gpr(s) => regression::gpr(&spec, s, data)?,
        Method::Sparse(s) => regression::sparse(&spec, s, data)?,
        Method::PacGp(s) => regression::pac_gp(&spec, s, data)?,
        Method::PacSgp(s) => regression::pac_sgp(&spec, s, data)?,
        Method::GreedySparse(s) => regression::greedy_sparse(&spec, s, data)?,
        Method::Classifier(c) => classifier::classifier(&spec, c, data, labels)?,
        Method::PacGpc(c) => pac_gpc::pac_gpc(&spec, c, data, labels)?,
        Method::Svm(s) => svm::svm(&spec, s, data, labels)?,
    };
    model.report.notes.splice(0..0, notes);
    Ok(model)
}
