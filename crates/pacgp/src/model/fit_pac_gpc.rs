//! Fitting pipeline of PAC-GPC, the GP classifier trained by its PAC-Bayes bound
//! ([`crate::objective::pac_gpc`]): inputs standardised, θ chosen on the grid or among the
//! fixed candidates, the certificate of the result stored with the model.

use crate::bounds::ConfidenceTerm;
use crate::certificate::GibbsClassifier;
use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::inference::{ConvergenceReport, ConvergenceStatus};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::objective::gpc_split::{fit_split_prior, SplitPriorConfig};
use crate::objective::pac_gpc::{fit_pac_gpc, PacGpcConfig, PacGpcTheta};
use crate::optim::Termination;

use super::fit_classifier::classifier_candidates;
use super::split_classifier::ClassifierSplitRecord;
use super::usage::GibbsPredictor;
use super::{sample_digest, FitReport, FittedModel, Task, FORMAT};

/// Options of [`fit_pac_gpc_model`].
#[derive(Clone, Debug)]
pub struct PacGpcOptions {
    /// Likelihood of the Laplace warm start and of the model's class probabilities.
    pub likelihood: Likelihood,
    /// Kernel θ by joint optimisation from this kernel, snapped onto the grid (`T·ln L`);
    /// `None`: the best of [`classifier_candidates`] (`ln 9`).
    pub kernel: Option<Kernel>,
    /// The Gibbs classifier whose bound is minimised and stored.
    pub predictor: GibbsPredictor,
    /// δ, confidence term, bound form, grid, optimiser.
    pub config: PacGpcConfig,
}

impl PacGpcOptions {
    /// Probit likelihood, candidate kernels, latent predictor, δ and the confidence term given.
    pub fn new(delta: f64, term: ConfidenceTerm) -> Self {
        Self {
            likelihood: Likelihood::probit(),
            kernel: None,
            predictor: GibbsPredictor::Latent,
            config: PacGpcConfig {
                delta,
                term,
                ..Default::default()
            },
        }
    }
}

/// Train PAC-GPC on a labelled sample (±1 labels) and return the model with its certificate.
pub fn fit_pac_gpc_model(
    train: &Dataset,
    labels: LabelMap,
    opts: &PacGpcOptions,
) -> Result<FittedModel> {
    crate::data::check_binary_labels(&train.y)?;
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let theta = match &opts.kernel {
        Some(k) => PacGpcTheta::Grid(k.clone()),
        None => PacGpcTheta::Candidates(classifier_candidates(x.ncols())),
    };
    let classifier = match opts.predictor {
        GibbsPredictor::Latent => GibbsClassifier::latent(&opts.likelihood),
        GibbsPredictor::Noisy => GibbsClassifier::noisy(&opts.likelihood),
    };
    let fit = fit_pac_gpc(
        &theta,
        &opts.likelihood,
        x.as_ref(),
        &train.y,
        classifier,
        &opts.config,
    )?;
    let jitter_used = fit.posterior.cov.jitter();
    Ok(FittedModel {
        format: FORMAT.into(),
        input_coding: Default::default(),
        method: "pac-gpc".into(),
        feature_names: train.feature_names.clone(),
        target_name: train.target_name.clone(),
        n_train: train.n(),
        x_scaler,
        posterior: fit.posterior,
        task: Task::Classification {
            likelihood: opts.likelihood,
            labels,
            input_noise: 0.0,
            split_prior: None,
        },
        epsilon: None,
        report: FitReport {
            objective: Some(fit.certificate.bound),
            objective_name: "pac_bayes_bound_gibbs_error".into(),
            jitter_used,
            theta_on_grid: true,
            choices: fit.certificate.penalty_terms,
            penalty: None,
            inference: Some(ConvergenceReport {
                status: match fit.report.termination {
                    Termination::GradientTolerance | Termination::CostTolerance => {
                        ConvergenceStatus::Converged
                    }
                    _ => ConvergenceStatus::MaxIterations,
                },
                iterations: fit.report.iterations as usize,
                final_change: 0.0,
                jitter_used,
                notes: vec![format!(
                    "sites optimised from Laplace (bound {:.6} → {:.6}): {}",
                    fit.laplace_certificate.bound, fit.certificate.bound, fit.report.message
                )],
            }),
            optimiser: Some(fit.report),
        },
        training_digest: Some(sample_digest(train)),
        seed: 0,
    })
}

/// Options of [`fit_split_prior_model`].
#[derive(Clone, Debug)]
pub struct SplitPriorOptions {
    /// Likelihood of ML-II and Laplace on both parts.
    pub likelihood: Likelihood,
    /// Kernel structure and start of ML-II on part A.
    pub kernel: Kernel,
    /// The Gibbs classifier whose bound is certified.
    pub predictor: GibbsPredictor,
    /// Fraction, seed, whether the sites of B are optimised (`pac-gpc`) or Laplace's, δ.
    pub config: SplitPriorConfig,
}

/// A classifier certified with the data-dependent prior of a seeded split
/// ([`crate::objective::gpc_split`]): method `pac-gpc` when the sites of part B are optimised
/// for the bound, else `laplace`. The stored objective is the split certificate's bound on
/// part B; the model keeps the split's record, from which `certify` reproduces that
/// certificate (recomputed for another δ or confidence term).
pub fn fit_split_prior_model(
    train: &Dataset,
    labels: LabelMap,
    opts: &SplitPriorOptions,
) -> Result<FittedModel> {
    let classifier = match opts.predictor {
        GibbsPredictor::Latent => GibbsClassifier::latent(&opts.likelihood),
        GibbsPredictor::Noisy => GibbsClassifier::noisy(&opts.likelihood),
    };
    let fit = fit_split_prior(
        &opts.kernel,
        &opts.likelihood,
        train,
        classifier,
        &opts.config,
    )?;
    let record = ClassifierSplitRecord::of(&fit, &opts.config, train)?;
    let jitter_used = fit.posterior.cov.jitter();
    let method = if opts.config.optimise_sites {
        "pac-gpc"
    } else {
        "laplace"
    };
    Ok(FittedModel {
        format: FORMAT.into(),
        input_coding: Default::default(),
        method: method.into(),
        feature_names: train.feature_names.clone(),
        target_name: train.target_name.clone(),
        n_train: train.n(),
        x_scaler: fit.x_scaler,
        posterior: fit.posterior,
        task: Task::Classification {
            likelihood: opts.likelihood,
            labels,
            input_noise: 0.0,
            split_prior: Some(Box::new(record)),
        },
        epsilon: None,
        report: FitReport {
            objective: Some(fit.certificate.bound),
            objective_name: format!(
                "pac_bayes_bound_gibbs_error_split_prior (on part B: {} of {} points)",
                fit.part_b.len(),
                train.n()
            ),
            jitter_used,
            theta_on_grid: false,
            choices: fit.certificate.penalty_terms,
            penalty: None,
            inference: None,
            optimiser: None,
        },
        training_digest: Some(sample_digest(train)),
        seed: opts.config.seed,
    })
}
