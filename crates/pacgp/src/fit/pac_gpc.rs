//! The pipelines of the classifiers trained by their bound: PAC-GPC
//! ([`crate::objective::pac_gpc`]) with θ among the fixed candidates or on the grid, and the
//! classifier split prior ([`crate::objective::gpc_split`]) for laplace and pac-gpc.

use super::MethodFit;
use crate::certificate::{GibbsClassifier, GibbsPredictor};
use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::inference::{ConvergenceReport, ConvergenceStatus};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::model::split_classifier::ClassifierSplitRecord;
use crate::model::{FitReport, FittedModel};
use crate::objective::gpc_split::fit_classifier_split_prior;
use crate::objective::pac_gpc::{fit_pac_gpc, PacGpcConfig, PacGpcTheta};
use crate::spec::{CheckedFitSpec, ClassifierHypers, PacGpcSpec, SplitClassifierSpec};

use crate::plan::{classifier_menu, split_config};

/// `pac-gpc`: the sites (and, on the grid, θ) trained by the bound on the Gibbs error, from
/// Laplace; with the split prior, [`split_classifier`].
impl MethodFit for PacGpcSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, labels: LabelMap) -> Result<FittedModel> {
        let lik = Likelihood::named(self.likelihood);
        let theta = match &self.hypers {
            ClassifierHypers::Split(split) => {
                return split_classifier(spec, split, true, lik, self.predictor, train, labels)
            }
            ClassifierHypers::Grid { kernel } => {
                PacGpcTheta::Grid(Kernel::from_spec(kernel, train.d())?)
            }
            ClassifierHypers::Candidates => PacGpcTheta::Candidates(classifier_menu(train.d())),
        };
        let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
        let x = x_scaler.transform(train.x.as_ref())?;
        let config = PacGpcConfig {
            delta: spec.delta,
            ..Default::default()
        };
        let classifier = GibbsClassifier::of(&lik, self.predictor);
        let fit = fit_pac_gpc(&theta, &lik, x.as_ref(), &train.y, classifier, &config)?;
        let jitter_used = fit.posterior.cov.jitter();
        let status = match fit.report.converged() {
            true => ConvergenceStatus::Converged,
            false => ConvergenceStatus::MaxIterations,
        };
        let report = FitReport {
            objective: Some(fit.certificate.bound),
            objective_name: "pac_bayes_bound_gibbs_error".into(),
            jitter_used,
            inference: Some(ConvergenceReport {
                status,
                iterations: fit.report.iterations as usize,
                final_change: 0.0,
                jitter_used,
                notes: vec![format!(
                    "sites optimised from Laplace (bound {:.6} → {:.6}): {}",
                    fit.laplace_certificate.bound, fit.certificate.bound, fit.report.message
                )],
            }),
            optimiser: Some(fit.report),
            ..Default::default()
        };
        let task = super::classifier_task(fit.posterior, lik, labels, None);
        Ok(FittedModel::assemble(spec, train, x_scaler, task, report))
    }
}

/// A classifier certified with the data-dependent prior of a seeded split: `pac-gpc` when
/// the sites of part B are optimised for the bound, else `laplace`. The stored objective is
/// the split certificate's bound on part B; the model keeps the split's record, from which
/// `certify` reproduces that certificate.
pub fn split_classifier(
    spec: &CheckedFitSpec,
    split: &SplitClassifierSpec,
    optimise_sites: bool,
    lik: Likelihood,
    predictor: GibbsPredictor,
    train: &Dataset,
    labels: LabelMap,
) -> Result<FittedModel> {
    let config = split_config(spec, split, optimise_sites);
    let kernel = Kernel::from_spec(&split.kernel, train.d())?;
    let classifier = GibbsClassifier::of(&lik, predictor);
    let fit = fit_classifier_split_prior(&kernel, &lik, train, classifier, &config)?;
    let record = ClassifierSplitRecord::of(&fit, &config, train)?;
    let report = FitReport {
        objective: Some(fit.certificate.bound),
        objective_name: format!(
            "pac_bayes_bound_gibbs_error_split_prior (on part B: {} of {} points)",
            fit.part_b.len(),
            train.n()
        ),
        jitter_used: fit.posterior.cov.jitter(),
        notes: fit.start_note.into_iter().collect(),
        ..Default::default()
    };
    let task = super::classifier_task(fit.posterior, lik, labels, Some(Box::new(record)));
    Ok(FittedModel::assemble(
        spec,
        train,
        fit.x_scaler,
        task,
        report,
    ))
}
