//! A sparse regression model file from given parameters, for models trained outside the
//! library's fitting pipelines (map-reduce over data shards, `pacgp.distributed.fit_sharded`):
//! the same [`FittedModel`] `fit_sparse_model` / `fit_pac_sgp_model` write for those
//! parameters, so predict, certify and pickling work unchanged.

use faer::Mat;

use crate::data::{Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::objective::pac_sgp_sharded::{posterior_from_stats, PacSgpShardStats};
use crate::optim::OptimReport;
use crate::regression::sparse::KUU_JITTER;
use crate::spec::{CheckedFitSpec, Method};

use super::{FitReport, FittedModel, Task, FORMAT};

/// Everything a sparse regression model file holds, given (θ on the spec's grid, σ², Z on the
/// standardised scale, and the posterior's sums over the standardised training data).
#[derive(Clone, Debug)]
pub struct SparseModelParts {
    /// What the fit was: vfe, fitc or pac-sgp with its options (the grid θ lies on, ε).
    pub spec: CheckedFitSpec,
    /// Posterior parametrisation `α_s` of the statistics (1 = FITC, 0 = VFE).
    pub alpha_s: f64,
    /// Kernel at the trained θ.
    pub kernel: Kernel,
    /// Noise variance σ² (standardised scale).
    pub noise_variance: f64,
    /// Inducing inputs (standardised inputs).
    pub z: Mat<f64>,
    /// `Σ V_iV_iᵀ/Λ_i`, `Σ V_iy_i/Λ_i` and N at these parameters with `alpha_s`
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
    /// The training objective at these parameters (ELBO, log marginal likelihood or bound).
    pub objective: f64,
    /// The optimiser's report, if any.
    pub optimiser: Option<OptimReport>,
}

/// The model file for `parts`: a sparse spec (vfe, fitc, pac-sgp on the grid), θ on its grid
/// (as every sparse fit snaps it; `certify` prices it from the spec).
pub fn sparse_model_from_parts(parts: SparseModelParts) -> Result<FittedModel> {
    let objective_name = match &parts.spec.method {
        Method::Sparse(s) if s.approximation != crate::regression::sparse::SparseMethod::Dtc => {
            if s.approximation == crate::regression::sparse::SparseMethod::Vfe {
                "elbo".to_string()
            } else {
                "log_marginal_likelihood".into()
            }
        }
        Method::PacSgp(s) if s.prior == crate::spec::PacPrior::Grid => {
            format!(
                "pac_bayes_bound_{}",
                if s.bound == crate::bounds::BoundKind::Kl {
                    "kl"
                } else {
                    "sqrt"
                }
            )
        }
        _ => {
            return Err(Error::Unsupported(format!(
                "a model from sharded parameters is vfe, fitc or pac-sgp on the grid, not {}",
                parts.spec.method_name()
            )))
        }
    };
    if let Some(grid) = parts.spec.grid() {
        super::price::check_on_grid(&parts.kernel, &grid)?;
    }
    if parts.stats.n == 0 {
        return Err(Error::Empty {
            what: "posterior statistics",
        });
    }
    let posterior = posterior_from_stats(&parts.kernel, parts.z.as_ref(), &parts.stats)?;
    let report = FitReport {
        optimiser: parts.optimiser,
        objective: Some(parts.objective),
        objective_name,
        jitter_used: KUU_JITTER,
        notes: vec![format!(
            "fitted from sharded sums (posterior α_s = {}); the training sample's digest is not stored",
            parts.alpha_s
        )],
        ..Default::default()
    };
    Ok(FittedModel {
        format: FORMAT.into(),
        spec: parts.spec,
        input_coding: Default::default(),
        feature_names: parts.feature_names,
        target_name: parts.target_name,
        n_train: parts.stats.n,
        training_digest: None,
        x_scaler: parts.x_scaler,
        task: Task::Regression {
            posterior,
            noise_variance: parts.noise_variance,
            y_scaler: parts.y_scaler,
            split_prior: None,
            intervals: None,
        },
        report,
        holdout: None,
        sets: None,
        duplicates: None,
        svm_solution: None,
    })
}
