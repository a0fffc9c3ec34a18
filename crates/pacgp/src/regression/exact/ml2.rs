//! Type-II maximum likelihood of the exact GP's hyperparameters: the negative log marginal
//! likelihood as an objective, its bounds, and the fits (one target, or several targets sharing a
//! kernel, with a subsample start).

use super::*;

/// Settings of [`fit_ml2`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MlConfig {
    /// Seeded random restarts around the start (none by default).
    pub restarts: Restarts,
    /// Optimiser settings.
    pub lbfgs: LbfgsConfig,
    /// Jitter policy for `K + σ²I`.
    pub jitter: JitterPolicy,
    /// Box for kernel θ (ln space), as scikit-learn's default (1e-5, 1e5).
    pub theta_bounds: (f64, f64),
    /// Box for ln σ²; the lower end is the noise floor.
    pub ln_noise_bounds: (f64, f64),
    /// Optimise θ inside this grid's range and snap it onto the grid afterwards (a model that
    /// can be certified), or leave θ where ML-II does.
    pub snap: Option<HyperGrid>,
    /// The observation noise: σ² fitted (from the start given to [`fit_ml2`]) or kept, and
    /// known per-row variances.
    #[serde(default)]
    pub noise: RowNoise,
    /// Optimise first on a subsample of this many rows, drawn with the restarts' seed, then
    /// on all rows from there (`None`, or at least N rows: no warm start).
    #[serde(default)]
    pub pretrain: Option<usize>,
}

/// An exact GP's observation noise `λᵢ = σ² + aᵢ` as ML-II treats it: σ² a parameter
/// (`fixed: None`) or kept at a value, and `known` variances `aᵢ` (scikit-learn's `alpha`;
/// empty: none) that are never fitted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RowNoise {
    /// σ² kept at this value (≥ 0) instead of fitted.
    pub fixed: Option<f64>,
    /// Known variances added on the diagonal, one per row (empty: none).
    pub known: Vec<f64>,
}

impl Default for MlConfig {
    fn default() -> Self {
        Self {
            restarts: Restarts::default(),
            lbfgs: LbfgsConfig::default(),
            jitter: JitterPolicy::default(),
            theta_bounds: boxes::LN_THETA,
            ln_noise_bounds: boxes::LN_NOISE,
            snap: None,
            noise: RowNoise::default(),
            pretrain: None,
        }
    }
}

/// `−ln p(y | X, θ, σ²)` over `[θ…, ln σ²]`, the ML-II objective.
pub struct NegLogMarginalLikelihood<'a> {
    kernel: Kernel,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    jitter: JitterPolicy,
    /// The noise: with σ² kept fixed the parameters are `[θ…]` alone.
    noise: RowNoise,
    /// The `N × N` matrices one evaluation leaves to the next.
    pool: Pool,
    /// More targets at the same inputs that share θ and σ² (their evidences are added).
    shared: Vec<&'a [f64]>,
}

impl<'a> NegLogMarginalLikelihood<'a> {
    /// The objective for `kernel`'s structure on data `(x, y)`.
    pub fn new(kernel: &Kernel, x: MatRef<'a, f64>, y: &'a [f64], jitter: JitterPolicy) -> Self {
        Self {
            kernel: kernel.clone(),
            x,
            y,
            jitter,
            noise: RowNoise::default(),
            pool: Pool::default(),
            shared: Vec::new(),
        }
    }

    /// The summed objective `−Σₖ ln p(yₖ | X, θ, σ²)` of this target and `more` at the same
    /// inputs, all sharing θ and σ²: one factor of `C` per evaluation for every target.
    pub fn with_shared_targets(mut self, more: Vec<&'a [f64]>) -> Self {
        self.shared = more;
        self
    }

    /// The same objective with the observation noise `noise` (σ² kept fixed: parameters
    /// `[θ…]`; known per-row variances added on the diagonal).
    pub fn with_noise(mut self, noise: RowNoise) -> Self {
        self.noise = noise;
        self
    }

    /// The model at parameters `p = [θ…, ln σ²]` (`[θ…]` with σ² fixed).
    pub fn model_at(&self, p: &[f64]) -> Result<ExactGp> {
        Ok(self.model_and_gram_at(p)?.0)
    }

    /// [`Self::model_at`] and its noise-free Gram matrix.
    fn model_and_gram_at(&self, p: &[f64]) -> Result<(ExactGp, Mat<f64>)> {
        let mut k = self.kernel.clone();
        let nk = k.n_params();
        k.set_params(&p[..nk])?;
        let sigma2 = self.noise.fixed.unwrap_or_else(|| p[nk].exp());
        ExactGp::fit_keeping_gram(
            k,
            (sigma2, self.noise.known.clone()),
            self.x.to_owned(),
            self.y.to_vec(),
            &self.jitter,
            &self.pool,
        )
    }
}

impl Objective for NegLogMarginalLikelihood<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_params() + usize::from(self.noise.fixed.is_none())
    }
    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (m, gram) = self.model_and_gram_at(p)?;
        let alphas: Vec<Vec<f64>> = self.shared.iter().map(|y| m.chol.solve_vec(y)).collect();
        let value = -m.log_marginal_likelihood()
            - (self.shared.iter().zip(&alphas))
                .map(|(y, a)| m.lml_of(y, a))
                .sum::<f64>();
        let g = m
            .lml_gradient_on(Some(gram), &self.pool, &alphas)?
            .into_iter()
            .take(self.dim())
            .map(|v| -v)
            .collect();
        self.pool.give(m.chol.into_storage());
        Ok((value, g))
    }
}

/// Box constraints `[θ…, ln σ²]` from the config (`[θ…]` with σ² fixed).
pub fn param_bounds(n_kernel: usize, cfg: &MlConfig) -> Vec<(f64, f64)> {
    let mut b = vec![cfg.theta_bounds; n_kernel];
    if cfg.noise.fixed.is_none() {
        b.push(cfg.ln_noise_bounds);
    }
    b
}

/// ML-II: maximise the log marginal likelihood over kernel θ and ln σ² with L-BFGS from
/// `kernel_init`/`noise_init` plus seeded restarts (the one driver, [`optim::drive`]); θ is
/// snapped onto `cfg.snap` if given. Returns the model at the parameters used and the report.
pub fn fit_ml2(
    kernel_init: &Kernel,
    noise_init: f64,
    x: Mat<f64>,
    y: Vec<f64>,
    cfg: &MlConfig,
) -> Result<(ExactGp, OptimReport)> {
    let fit = fit_ml2_shared(kernel_init, noise_init, x, vec![y], cfg)?;
    let MlFit {
        mut models, report, ..
    } = fit;
    Ok((models.swap_remove(0), report))
}

/// What [`fit_ml2_shared`] found: one model per target, the optimiser's report on all rows and,
/// with `cfg.pretrain`, its report on the subsample it started from.
pub struct MlFit {
    /// One model per target, all at the same θ and σ².
    pub models: Vec<ExactGp>,
    /// The optimiser's report on all rows.
    pub report: OptimReport,
    /// The warm start on a subsample, where there was one.
    pub pretraining: Option<optim::Pretraining>,
}

/// [`fit_ml2`] of K ≥ 1 targets at the same inputs sharing θ and σ², which maximise the sum
/// of their log marginal likelihoods (scikit-learn's multi-output `GaussianProcessRegressor`):
/// one model per target, all with the same `C` and its factor. With `cfg.pretrain` the search
/// starts on a seeded subsample ([`optim::drive_warm`]): an evaluation there costs `(k/N)³` of
/// one on all rows.
pub fn fit_ml2_shared(
    kernel_init: &Kernel,
    noise_init: f64,
    x: Mat<f64>,
    ys: Vec<Vec<f64>>,
    cfg: &MlConfig,
) -> Result<MlFit> {
    let Some((first, more)) = ys.split_first() else {
        return Err(Error::Empty { what: "targets" });
    };
    for y in &ys {
        check_regression_inputs(x.as_ref(), y)?;
    }
    check_noise(noise_init)?;
    kernel_init.check_input_dim(x.ncols())?;
    let obj = NegLogMarginalLikelihood::new(kernel_init, x.as_ref(), first, cfg.jitter)
        .with_noise(cfg.noise.clone())
        .with_shared_targets(more.iter().map(Vec::as_slice).collect());
    let sub = cfg
        .pretrain
        .and_then(|k| crate::data::split::subsample(first.len(), k, cfg.restarts.seed))
        .map(|rows| SubsampleProblem::draw(x.as_ref(), &ys, &cfg.noise, &rows));
    let warm_obj = sub.as_ref().map(|s| s.objective(kernel_init, cfg.jitter));
    let warm = warm_obj.as_ref().map(|o| optim::WarmStart {
        objective: o,
        rows: o.y.len(),
        of: first.len(),
    });
    let mut x0 = kernel_init.params();
    if cfg.noise.fixed.is_none() {
        x0.push(noise_init.ln());
    }
    let snap = GridSnap::leading(cfg.snap, kernel_init.n_params());
    let (min, pretraining) = optim::drive_warm(
        &obj,
        warm.as_ref(),
        &x0,
        param_bounds(kernel_init.n_params(), cfg),
        &cfg.lbfgs,
        &cfg.lbfgs,
        &cfg.restarts,
        snap.as_ref(),
    )?;
    let model = obj.model_at(&min.params)?;
    let mut models = Vec::with_capacity(ys.len());
    for y in more {
        models.push(model.with_targets(y.clone())?);
    }
    models.insert(0, model);
    Ok(MlFit {
        models,
        report: min.report,
        pretraining,
    })
}

/// The rows of a warm start's subsample: inputs, every target and the known noise on them.
struct SubsampleProblem {
    x: Mat<f64>,
    ys: Vec<Vec<f64>>,
    noise: RowNoise,
}

impl SubsampleProblem {
    /// `rows` of `x`, of every target in `ys` and of the known per-row noise.
    fn draw(x: MatRef<'_, f64>, ys: &[Vec<f64>], noise: &RowNoise, rows: &[usize]) -> Self {
        let pick = |v: &[f64]| rows.iter().map(|&i| v[i]).collect::<Vec<f64>>();
        Self {
            x: linalg::select_rows(x, rows),
            ys: ys.iter().map(|y| pick(y)).collect(),
            noise: RowNoise {
                fixed: noise.fixed,
                known: if noise.known.is_empty() {
                    Vec::new()
                } else {
                    pick(&noise.known)
                },
            },
        }
    }

    /// The ML-II objective on these rows, every target's evidence summed.
    fn objective<'a>(
        &'a self,
        kernel: &Kernel,
        jitter: JitterPolicy,
    ) -> NegLogMarginalLikelihood<'a> {
        let (first, more) = self
            .ys
            .split_first()
            .expect("at least one target is checked");
        NegLogMarginalLikelihood::new(kernel, self.x.as_ref(), first, jitter)
            .with_noise(self.noise.clone())
            .with_shared_targets(more.iter().map(Vec::as_slice).collect())
    }
}
