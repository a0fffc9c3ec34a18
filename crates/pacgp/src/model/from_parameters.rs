//! A sparse regression model file from given parameters, for models trained outside the
//! library's fitting pipelines (map-reduce over data shards, `pacgp.distributed.fit_sharded`):
//! the same [`FittedModel`] `fit_sparse_model` / `fit_pac_sgp_model` write for those
//! parameters, so predict, certify and pickling work unchanged.

use faer::Mat;

use crate::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use crate::certificate::PenaltyTerm;
use crate::data::{Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::objective::pac_sgp_sharded::{posterior_from_stats, PacSgpShardStats};
use crate::optim::OptimReport;
use crate::regression::sparse::KUU_JITTER;

use super::{FitReport, FittedModel, Task, FORMAT};

/// Which sparse model, with what its file records of the method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SparseModelKind {
    /// Titsias' VFE (posterior `α_s = 0`), objective the ELBO.
    Vfe,
    /// FITC (posterior `α_s = 1`), objective the log marginal likelihood.
    Fitc,
    /// Sparse PAC-GP (seed 004) with posterior `alpha_s`, trained by the `kind` bound with
    /// this confidence term on the paper's θ grid.
    PacSgp {
        /// kl or sqrt bound.
        kind: BoundKind,
        /// Posterior parametrisation (1 = FITC, 0 = VFE).
        alpha_s: f64,
        /// Confidence constant of the bound.
        term: ConfidenceTerm,
    },
}

impl SparseModelKind {
    /// `α_s` of the model's posterior.
    pub fn alpha_s(&self) -> f64 {
        match self {
            SparseModelKind::Vfe => 0.0,
            SparseModelKind::Fitc => 1.0,
            SparseModelKind::PacSgp { alpha_s, .. } => *alpha_s,
        }
    }
}

/// Everything a sparse regression model file holds, given (θ on the paper's grid, σ², Z on the
/// standardised scale, and the posterior's sums over the standardised training data).
#[derive(Clone, Debug)]
pub struct SparseModelParts {
    /// The method.
    pub kind: SparseModelKind,
    /// Kernel at the trained θ.
    pub kernel: Kernel,
    /// Noise variance σ² (standardised scale).
    pub noise_variance: f64,
    /// Inducing inputs (standardised inputs).
    pub z: Mat<f64>,
    /// `Σ V_iV_iᵀ/Λ_i`, `Σ V_iy_i/Λ_i` and N at these parameters with the kind's `α_s`
    /// ([`crate::objective::pac_sgp_sharded::posterior_shard_stats`]).
    pub stats: PacSgpShardStats,
    /// Input standardisation (training statistics).
    pub x_scaler: Standardizer,
    /// Target standardisation (training statistics).
    pub y_scaler: TargetScaler,
    /// Input column names.
    pub feature_names: Vec<String>,
    /// Target column name.
    pub target_name: String,
    /// ε in target units (required for PAC-SGP).
    pub epsilon: Option<f64>,
    /// The training objective at these parameters (ELBO, log marginal likelihood or bound).
    pub objective: f64,
    /// The optimiser's report, if any.
    pub optimiser: Option<OptimReport>,
    /// Seed of the initialisation.
    pub seed: u64,
}

/// The model file for `parts`; θ must lie on the paper's grid (as every sparse fit snaps it),
/// whose price `T·ln 1201` a PAC-SGP certificate pays.
pub fn sparse_model_from_parts(parts: SparseModelParts) -> Result<FittedModel> {
    let theta = parts.kernel.params();
    let grid = HyperGrid::default();
    if grid.round(&theta) != theta {
        return Err(Error::InvalidParameter {
            name: "kernel θ",
            value: theta
                .iter()
                .copied()
                .find(|t| grid.round(&[*t])[0] != *t)
                .unwrap_or(0.0),
            reason: "must lie on the paper's grid (ln values with two decimals in [−6, 6])",
        });
    }
    if parts.stats.n == 0 {
        return Err(Error::Empty {
            what: "posterior statistics",
        });
    }
    let posterior = posterior_from_stats(&parts.kernel, parts.z.as_ref(), &parts.stats)?;
    let (method, objective_name, choices, term) = match parts.kind {
        SparseModelKind::Vfe => ("vfe", "elbo".to_string(), vec![], None),
        SparseModelKind::Fitc => ("fitc", "log_marginal_likelihood".into(), vec![], None),
        SparseModelKind::PacSgp { kind, term, .. } => {
            if parts.epsilon.is_none() {
                return Err(Error::InvalidParameter {
                    name: "epsilon",
                    value: f64::NAN,
                    reason: "a PAC-SGP model needs the ε it was trained with",
                });
            }
            let (name, suffix) = match kind {
                BoundKind::Kl => ("pac-sgp", "kl"),
                BoundKind::Sqrt => ("pac-sgp-sqrt", "sqrt"),
            };
            let choices = vec![PenaltyTerm::grid(&grid, theta.len())];
            let term = (term != ConfidenceTerm::Maurer).then_some(term);
            (name, format!("pac_bayes_bound_{suffix}"), choices, term)
        }
    };
    let report = FitReport {
        optimiser: parts.optimiser,
        objective: Some(parts.objective),
        objective_name,
        jitter_used: KUU_JITTER,
        theta_on_grid: true,
        choices,
        penalty: None,
        inference: None,
    };
    Ok(FittedModel {
        format: FORMAT.into(),
        input_coding: Default::default(),
        method: method.into(),
        feature_names: parts.feature_names,
        target_name: parts.target_name,
        n_train: parts.stats.n,
        x_scaler: parts.x_scaler,
        posterior,
        task: Task::Regression {
            noise_variance: parts.noise_variance,
            y_scaler: parts.y_scaler,
            split_prior: None,
            sparse_split_prior: None,
            confidence_term: term,
        },
        epsilon: parts.epsilon,
        report,
        training_digest: None,
        seed: parts.seed,
    })
}
