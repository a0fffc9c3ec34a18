//! `svgp`, `pac-svgp`: the sparse variational GP classifier ([`crate::svgp`]) on standardised
//! inputs, as a probit classification model whose certificate `certify` recomputes from the
//! stored posterior (θ priced by the PAC grid).

use super::MethodFit;
use faer::Mat;

use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::inference::{ConvergenceReport, ConvergenceStatus};
use crate::kernel::{start, Kernel};
use crate::model::split_classifier::ClassifierSplitRecord;
use crate::model::{FitReport, FittedModel};
use crate::objective::gp_split::SplitFraction;
use crate::optim::OptimReport;
use crate::plan::svgp_settings;
use crate::spec::{CheckedFitSpec, SvgpSpec};
use crate::svgp::fit::{svgp_likelihood, whitened_posterior};
use crate::svgp::split::fit_svgp_split_prior;
use crate::svgp::{fit_svgp, SvgpCriterionSpec, SvgpSettings, SvgpTerms, WhitenedQ};

use super::classifier_task;

/// Fit a checked `svgp` / `pac-svgp` spec on ±1 labels.
impl MethodFit for SvgpSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, labels: LabelMap) -> Result<FittedModel> {
        let kernel = Kernel::from_spec(&self.kernel, train.d())?;
        if let Some(fraction) = self.split {
            return svgp_split(spec, self, train, labels, &kernel, fraction);
        }
        let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
        let x = x_scaler.transform(train.x.as_ref())?;
        let st = svgp_settings(spec, self, train.n());
        // Sharded fits keep the kernel's own start (docs/dask.md).
        let (kernel, start_note) =
            start::wide_start_noted(kernel, x.as_ref(), spec.seed, "leaves q(u) at the prior");
        let fit = fit_svgp(&kernel, x.as_ref(), &train.y, &st)?;
        let jitter_used = fit.posterior.cov.jitter();
        let objective = match st.criterion {
            SvgpCriterionSpec::Elbo => fit.terms.value,
            SvgpCriterionSpec::Bound { .. } => fit.certificate.bound,
        };
        let mut report = svgp_report(
            &st,
            (objective, fit.terms.kl),
            TRAINED_TOGETHER,
            jitter_used,
            fit.report,
        );
        report.notes.extend(start_note);
        let task = classifier_task(fit.posterior, svgp_likelihood(st.link), labels, None);
        Ok(FittedModel::assemble(spec, train, x_scaler, task, report))
    }
}

/// `pac-svgp` with a split prior ([`crate::svgp::split`]): Q on part B against part A's
/// posterior, the input scaler part A's, and the split's record for `certify`.
fn svgp_split(
    spec: &CheckedFitSpec,
    s: &SvgpSpec,
    train: &Dataset,
    labels: LabelMap,
    kernel: &Kernel,
    fraction: SplitFraction,
) -> Result<FittedModel> {
    let st = svgp_settings(spec, s, train.n());
    let fit = fit_svgp_split_prior(kernel, train, &st, fraction)?;
    let record = ClassifierSplitRecord {
        fraction: fit.fraction,
        menu: fraction.candidates()?.len(),
        swapped: false,
        seed: st.seed,
        n_a: fit.split.part_a.len(),
        n_b: fit.split.part_b.len(),
        kernel_a: fit.split.prior.kernel.clone(),
        prior_scale: 1.0,
        mean_scale: 1.0,
        lambda: None,
        term: st.term,
        legacy_row_order: None,
    };
    let jitter_used = fit.posterior.cov.jitter();
    let trained = format!(
        "split prior: θ, Z and q_A(u) by the evidence lower bound on part A ({} rows), q(u) alone by the bound on part B ({} rows), KL(q‖q_A)",
        fit.split.part_a.len(),
        fit.split.part_b.len(),
    );
    let mut report = svgp_report(
        &st,
        (fit.certificate.bound, fit.terms.kl),
        &trained,
        jitter_used,
        fit.report,
    );
    report.notes.extend(fit.split.start_note);
    let lik = svgp_likelihood(st.link);
    let task = classifier_task(fit.posterior, lik, labels, Some(Box::new(record)));
    Ok(FittedModel::assemble(
        spec,
        train,
        fit.split.x_scaler,
        task,
        report,
    ))
}

/// What the fit without a split prior trains, and the KL it reports.
const TRAINED_TOGETHER: &str = "θ, Z and q(u) trained together, KL(q(u)‖p(u))";

/// The fit report: the objective minimised (the negative ELBO per point, or the bound) and
/// the KL, what was trained (ending with the KL's name) and the optimiser's report.
fn svgp_report(
    st: &SvgpSettings,
    (objective, kl): (f64, f64),
    trained: &str,
    jitter_used: f64,
    optimiser: OptimReport,
) -> FitReport {
    let status = match optimiser.converged() {
        true => ConvergenceStatus::Converged,
        false => ConvergenceStatus::MaxIterations,
    };
    let objective_name = match st.criterion {
        SvgpCriterionSpec::Elbo => "negative_elbo_per_point",
        SvgpCriterionSpec::Bound { .. } => "pac_bayes_bound_gibbs_error",
    };
    FitReport {
        objective: Some(objective),
        objective_name: objective_name.into(),
        jitter_used,
        inference: Some(ConvergenceReport {
            status,
            iterations: optimiser.iterations as usize,
            final_change: 0.0,
            jitter_used,
            notes: vec![format!(
                "{} inducing inputs, {trained} {kl:.2} nats: {}",
                st.m, optimiser.message
            )],
        }),
        optimiser: Some(optimiser),
        ..Default::default()
    }
}

/// Everything the model file of a sparse variational classifier trained outside the
/// in-process pipeline (over data shards) holds: parameters on standardised inputs, θ on the
/// grid.
#[derive(Clone, Debug)]
pub struct SvgpModelParts {
    /// The checked svgp / pac-svgp spec.
    pub spec: CheckedFitSpec,
    /// The settings it was trained with (criterion, M).
    pub settings: SvgpSettings,
    /// Kernel at the trained θ (on the grid).
    pub kernel: Kernel,
    /// Inducing inputs (standardised inputs).
    pub z: Mat<f64>,
    /// q(v).
    pub q: WhitenedQ,
    /// The objective's terms at these parameters.
    pub terms: SvgpTerms,
    /// Input standardisation (training statistics).
    pub x_scaler: Standardizer,
    /// The two labels.
    pub labels: LabelMap,
    /// Input column names.
    pub feature_names: Vec<String>,
    /// Label column name.
    pub target_name: String,
    /// Sample size N.
    pub n: usize,
    /// The optimiser's report.
    pub optimiser: OptimReport,
}

/// The model file of `parts`: the same posterior, task and report an in-process fit writes
/// for these parameters (the sample's digest is not stored: the rows were never in one
/// process), so `certify` on the training sample, `predict` and `evaluate` read it unchanged.
pub fn svgp_model_from_parts(parts: SvgpModelParts) -> Result<FittedModel> {
    if let Some(grid) = parts.spec.grid() {
        crate::model::price::check_on_grid(&parts.kernel, &grid)?;
    }
    let q = parts.q.with_positive_diagonal();
    let posterior = whitened_posterior(&parts.kernel, parts.z, &q)?;
    let jitter_used = posterior.cov.jitter();
    let mut report = svgp_report(
        &parts.settings,
        (parts.terms.value, parts.terms.kl),
        TRAINED_TOGETHER,
        jitter_used,
        parts.optimiser,
    );
    report
        .notes
        .push("fitted from sharded sums; the training sample's digest is not stored".into());
    Ok(FittedModel {
        format: crate::model::FORMAT.into(),
        spec: parts.spec,
        input_coding: Default::default(),
        feature_names: parts.feature_names,
        target_name: parts.target_name,
        n_train: parts.n,
        holdout: None,
        duplicates: None,
        training_digest: None,
        x_scaler: parts.x_scaler,
        task: classifier_task(
            posterior,
            svgp_likelihood(parts.settings.link),
            parts.labels,
            None,
        ),
        report,
        sets: None,
        svm_solution: None,
    })
}
