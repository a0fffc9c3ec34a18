//! Sparse GP regression with M inducing inputs Z (docs/math.md §3.2–3.3): FITC, VFE (Titsias) and
//! DTC, and the power-EP family between them (`α_s`), each with its own training objective,
//! analytic gradients in kernel θ, ln σ² and Z, and its own posterior (VFE/DTC: `Λ = σ²I`;
//! FITC: `Λ = σ²I + diag(K_ff − Q_ff)`), all in O(N M²).
//!
//! Shared algebra (docs/math.md §3.2): `L Lᵀ = K_uu`, `V = L⁻¹K_uf`, `q_i = ‖V_{:,i}‖²`,
//! `B = I + VΛ⁻¹Vᵀ`, `γ = VΛ⁻¹y`; `ln N(y | 0, Q_ff + Λ)` by Woodbury.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::bounds::HyperGrid;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg;
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, OptimReport, Search};
use crate::posterior::GaussianPosterior;
use crate::regression::exact::check_regression_inputs;
use crate::regression::inducing_init::{initial_inducing_with_targets, InducingInit};
use crate::regression::row_blocks::Streaming;
use crate::regression::whitened_blocks::{whitened_sums, SparseData};

mod objective;
use objective::objective_and_gradient;
pub use objective::NegSparseObjective;

/// Which sparse approximation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SparseMethod {
    /// Titsias' variational free energy: `ln N(y|0, Q_ff + σ²I) − tr(K_ff − Q_ff)/(2σ²)`.
    Vfe,
    /// Fully independent training conditional: `ln N(y|0, Q_ff + diag(K_ff − Q_ff) + σ²I)`.
    Fitc,
    /// Deterministic training conditional: `ln N(y|0, Q_ff + σ²I)`.
    Dtc,
}

impl SparseMethod {
    /// `α_s` of the posterior's `Λ = σ² + α_s·diag(K_ff − Q_ff)` (docs/math.md §3.2, eq. 11).
    pub fn alpha_s(self) -> f64 {
        match self {
            SparseMethod::Fitc => 1.0,
            SparseMethod::Vfe | SparseMethod::Dtc => 0.0,
        }
    }
}

pub use super::whitened_blocks::KUU_JITTER;

/// A sparse GP at fixed (θ, σ², Z).
#[derive(Clone, Debug)]
pub struct SparseGp {
    /// Covariance function.
    pub kernel: Kernel,
    /// Noise variance σ².
    pub noise_variance: f64,
    /// Inducing inputs (M×D).
    pub z: Mat<f64>,
    /// Which approximation (decides the training objective and the posterior's Λ).
    pub method: SparseMethod,
}

fn check_sparse(x: MatRef<'_, f64>, y: &[f64], z: MatRef<'_, f64>, noise: f64) -> Result<()> {
    check_regression_inputs(x, y)?;
    if z.nrows() == 0 {
        return Err(Error::InvalidParameter {
            name: "number of inducing points M",
            value: 0.0,
            reason: "must be at least 1",
        });
    }
    if z.nrows() > x.nrows() {
        return Err(Error::InvalidParameter {
            name: "number of inducing points M",
            value: z.nrows() as f64,
            reason: "must not exceed N",
        });
    }
    if z.ncols() != x.ncols() {
        return Err(Error::ShapeMismatch {
            what: "inducing inputs",
            expected: format!("{} columns", x.ncols()),
            found: format!("{}", z.ncols()),
        });
    }
    crate::data::check_finite(z, "inducing inputs")?;
    if !(noise > 0.0 && noise.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "noise_variance",
            value: noise,
            reason: "must be positive and finite",
        });
    }
    Ok(())
}

impl SparseGp {
    /// The method's training objective (log marginal likelihood or ELBO) at these parameters.
    pub fn objective(&self, x: MatRef<'_, f64>, y: &[f64]) -> Result<f64> {
        check_sparse(x, y, self.z.as_ref(), self.noise_variance)?;
        Ok(objective_and_gradient(
            &self.kernel,
            self.noise_variance,
            self.method,
            x,
            self.z.as_ref(),
            y,
            &Streaming::default(),
            false,
        )?
        .0)
    }

    /// The posterior with `Λ = σ² + α_s diag(K_ff − Q_ff)` (docs/math.md §3.2, eq. 11), in whitened
    /// precision form: `α = L⁻ᵀB⁻¹γ`.
    pub fn posterior_with_alpha(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        alpha_s: f64,
    ) -> Result<GaussianPosterior> {
        check_sparse(x, y, self.z.as_ref(), self.noise_variance)?;
        if !(0.0..=1.0).contains(&alpha_s) {
            return Err(Error::InvalidParameter {
                name: "alpha_s",
                value: alpha_s,
                reason: "must lie in [0, 1]",
            });
        }
        let data = SparseData::new(&self.kernel, x, y, self.z.as_ref(), &Streaming::default());
        let f = whitened_sums(&data, &|_| self.noise_variance, alpha_s, 0)?;
        let binv_gamma = f.l_b.solve_vec(&f.gamma);
        let alpha = f.l_uu.solve_upper_vec(&binv_gamma);
        Ok(GaussianPosterior::whitened(
            self.kernel.clone(),
            self.z.clone(),
            alpha,
            f.l_uu,
            f.l_b,
        ))
    }

    /// The method's own posterior (VFE/DTC: `α_s = 0`; FITC: `α_s = 1`).
    pub fn posterior(&self, x: MatRef<'_, f64>, y: &[f64]) -> Result<GaussianPosterior> {
        self.posterior_with_alpha(x, y, self.method.alpha_s())
    }
}

/// Settings of [`train_sparse`].
#[derive(Clone, Debug)]
pub struct SparseConfig {
    /// Initial inducing inputs.
    pub init: InducingInit,
    /// Seed of the initialisation.
    pub seed: u64,
    /// Optimiser settings.
    pub lbfgs: LbfgsConfig,
    /// Box for kernel θ (ln space).
    pub theta_bounds: (f64, f64),
    /// Optimise θ inside this grid's range and snap it onto the grid afterwards.
    pub snap: Option<HyperGrid>,
    /// Optimise first on a seeded subsample of this many rows ([`optim::drive_warm`]).
    pub pretrain: Option<usize>,
}

impl Default for SparseConfig {
    fn default() -> Self {
        Self {
            init: InducingInit::KMeans,
            seed: 0,
            lbfgs: LbfgsConfig {
                max_iter: 300,
                ..Default::default()
            },
            theta_bounds: boxes::LN_THETA,
            snap: None,
            pretrain: None,
        }
    }
}

impl SparseConfig {
    /// How the parameters `[ln θ…, ln σ², vec(Z)]` of `nk` kernel parameters and `m` inducing
    /// inputs on `d` inputs are searched; the sharded fit ([`crate::fit::sharded`]) searches
    /// the same way.
    pub fn search(&self, nk: usize, m: usize, d: usize) -> Search {
        let mut bounds = vec![self.theta_bounds; nk];
        bounds.push(boxes::LN_NOISE);
        bounds.extend(std::iter::repeat_n(boxes::FREE, m * d));
        Search {
            bounds,
            snap: GridSnap::leading(self.snap, nk),
            lbfgs: self.lbfgs.clone(),
            warm_lbfgs: SparseConfig::default().lbfgs,
        }
    }
}

/// Train θ (within `cfg.theta_bounds`, ln space, snapped onto `cfg.snap` if given), σ² and Z
/// by maximising the method's objective with the one driver ([`optim::drive`]).
pub fn train_sparse(
    kernel_init: &Kernel,
    noise_init: f64,
    x: MatRef<'_, f64>,
    y: &[f64],
    m: usize,
    method: SparseMethod,
    cfg: &SparseConfig,
) -> Result<(SparseGp, OptimReport, Option<optim::Pretraining>)> {
    let z0 = initial_inducing_with_targets(kernel_init, noise_init, x, y, m, cfg.init, cfg.seed)?;
    check_sparse(x, y, z0.as_ref(), noise_init)?;
    kernel_init.check_input_dim(x.ncols())?;
    let obj = NegSparseObjective::new(kernel_init, method, x, y, m);
    let sub = PretrainRows::draw(x, y, cfg.pretrain, cfg.seed);
    let warm_obj = sub
        .as_ref()
        .map(|s| NegSparseObjective::new(kernel_init, method, s.x.as_ref(), &s.y, m));
    let warm = warm_obj.as_ref().map(|o| optim::WarmStart {
        objective: o,
        rows: o.y.len(),
        of: y.len(),
    });
    let p0 = NegSparseObjective::pack(kernel_init, noise_init, z0.as_ref());
    let search = cfg.search(kernel_init.n_params(), m, x.ncols());
    let (min, pretraining) = search.minimise(&obj, warm.as_ref(), &p0)?;
    let (kernel, noise_variance, z) = obj.unpack(&min.params)?;
    Ok((
        SparseGp {
            kernel,
            noise_variance,
            z,
            method,
        },
        min.report,
        pretraining,
    ))
}

/// The rows of a warm start's seeded subsample ([`crate::data::split::subsample`]).
pub struct PretrainRows {
    /// Their inputs.
    pub x: Mat<f64>,
    /// Their targets.
    pub y: Vec<f64>,
}

impl PretrainRows {
    /// `k` rows drawn with `seed`, or `None` without a warm start or when `k ≥ N`.
    pub fn draw(x: MatRef<'_, f64>, y: &[f64], k: Option<usize>, seed: u64) -> Option<Self> {
        let rows = crate::data::split::subsample(y.len(), k?, seed)?;
        Some(Self {
            x: linalg::select_rows(x, &rows),
            y: rows.iter().map(|&i| y[i]).collect(),
        })
    }
}
