//! `svgp`, `pac-svgp`: the sparse variational GP classifier ([`crate::svgp`]) on standardised
//! inputs, as a probit classification model whose certificate `certify` recomputes from the
//! stored posterior (θ priced by the PAC grid).

use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::inference::{ConvergenceReport, ConvergenceStatus};
use crate::kernel::Kernel;
use crate::model::{FitReport, FittedModel, Task};
use crate::spec::{CheckedFitSpec, SvgpSpec, DEFAULT_BASIS};
use crate::svgp::fit::{svgp_likelihood, DEFAULT_MAX_ITER, DEFAULT_STEPS};
use crate::svgp::{fit_svgp, SvgpCriterionSpec, SvgpSettings};

/// The library's settings of a checked spec's sparse variational classifier.
pub fn svgp_settings(spec: &CheckedFitSpec, s: &SvgpSpec, n: usize) -> SvgpSettings {
    let criterion = match s.bound {
        None => SvgpCriterionSpec::Elbo,
        Some(kind) => SvgpCriterionSpec::Bound { kind },
    };
    let m = s.inducing.unwrap_or(DEFAULT_BASIS.min(n));
    let mut st = SvgpSettings::new(m, criterion, spec.delta, spec.seed);
    st.term = spec.confidence_term();
    st.init = s.inducing_init;
    // A batch of every row is the full objective: L-BFGS, as the spec's note promises.
    st.batch = s.batch.filter(|&b| b < n);
    let default_iter = match s.batch {
        None => DEFAULT_MAX_ITER,
        Some(_) => DEFAULT_STEPS,
    };
    st.max_iter = s.schedule.max_iter.unwrap_or(default_iter);
    st
}

/// Fit a checked `svgp` / `pac-svgp` spec on ±1 labels.
pub fn svgp(
    spec: &CheckedFitSpec,
    s: &SvgpSpec,
    train: &Dataset,
    labels: LabelMap,
) -> Result<FittedModel> {
    let kernel = Kernel::from_spec(&s.kernel, train.d())?;
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let st = svgp_settings(spec, s, train.n());
    let fit = fit_svgp(&kernel, x.as_ref(), &train.y, &st)?;
    let jitter_used = fit.posterior.cov.jitter();
    let status = match fit.report.converged() {
        true => ConvergenceStatus::Converged,
        false => ConvergenceStatus::MaxIterations,
    };
    let (objective_name, objective) = match st.criterion {
        SvgpCriterionSpec::Elbo => ("negative_elbo_per_point", fit.terms.value),
        SvgpCriterionSpec::Bound { .. } => ("pac_bayes_bound_gibbs_error", fit.certificate.bound),
    };
    let report = FitReport {
        objective: Some(objective),
        objective_name: objective_name.into(),
        jitter_used,
        inference: Some(ConvergenceReport {
            status,
            iterations: fit.report.iterations as usize,
            final_change: 0.0,
            jitter_used,
            notes: vec![format!(
                "{} inducing inputs, KL(q(u)‖p(u)) {:.2} nats, θ, Z and q(u) trained together: {}",
                st.m, fit.terms.kl, fit.report.message
            )],
        }),
        optimiser: Some(fit.report),
        ..Default::default()
    };
    let task = Task::Classification {
        likelihood: svgp_likelihood(),
        labels,
        input_noise: 0.0,
        split_prior: None,
    };
    Ok(FittedModel::assemble(
        spec,
        train,
        x_scaler,
        fit.posterior,
        task,
        report,
    ))
}
