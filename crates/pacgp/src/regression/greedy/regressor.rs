//! The fitted greedy model as a GP regressor: a basis chosen by [`mod@super::select`], all
//! weights refit exactly on it, and the shared [`GaussianPosterior`] so prediction, KL and
//! the PAC-Bayes certificate apply unchanged.
//!
//! With `σ² = nλ` (module doc of [`super`]), minimising `R` over a basis S gives
//! `α_S = (K_SN K_NS + σ²K_SS)⁻¹K_SN y`, which is exactly the mean weight vector of the
//! subset-of-regressors / DTC posterior with inducing inputs `Z = X_S` and noise `σ²`
//! (docs/math.md §3.2 with `Λ = σ²I`). The posterior is built in the whitened precision form that
//! [`crate::regression::sparse::SparseGp::posterior`] uses:
//! `L Lᵀ = K_SS`, `V = L⁻¹K_SN`, `B = I + VVᵀ/σ²`, `α = L⁻ᵀB⁻¹Vy/σ²`, `O(k²n)`.

use faer::{Mat, MatRef};

use super::select::{select, Algorithm, GreedyConfig, Selection, Update};
use super::subset::SubsetFit;
use super::GreedyProblem;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::GaussianPosterior;

/// Settings of [`GreedySparseGp::fit`]: how the basis is chosen and when to stop (a basis
/// size k via `StopRule::Steps`, or a target ΔR via `StopRule::DeltaR`).
pub type GreedySparseConfig = GreedyConfig;

/// A GP regressor whose dual weights are non-zero only on a greedily chosen basis.
#[derive(Clone, Debug)]
pub struct GreedySparseGp {
    /// Covariance function.
    pub kernel: Kernel,
    /// GP noise variance `σ² = nλ`.
    pub noise_variance: f64,
    /// Indices of the basis points in the training set, in order of entry.
    pub basis_index: Vec<usize>,
    /// Basis inputs `X_S` (k×D).
    pub basis: Mat<f64>,
    /// Weights refit on the basis: `μ(x) = k(x, X_S)ᵀα`.
    pub alpha: Vec<f64>,
    /// `R` at the refit weights (with `λ = σ²/n`).
    pub objective: f64,
    /// The selection run (its path `R(w^k)` is that of the algorithm's own iterates).
    pub selection: Selection,
}

impl GreedySparseGp {
    /// Choose a basis on `(x, y)` with `cfg` and refit every weight on it, for the GP with
    /// kernel `kernel` and noise variance `σ²` (Zhang's `λ = σ²/n`).
    pub fn fit(
        kernel: &Kernel,
        noise_variance: f64,
        x: MatRef<'_, f64>,
        y: &[f64],
        cfg: &GreedySparseConfig,
    ) -> Result<Self> {
        if !(noise_variance > 0.0 && noise_variance.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "noise_variance",
                value: noise_variance,
                reason: "must be positive and finite",
            });
        }
        let lambda = noise_variance / y.len().max(1) as f64;
        let problem = GreedyProblem::new(kernel, x, y, lambda)?;
        let selection = select(&problem, cfg)?;
        let (basis_index, alpha, objective) =
            refit(&problem, &selection, cfg.algorithm, cfg.update)?;
        let basis = Mat::from_fn(basis_index.len(), x.ncols(), |a, t| x[(basis_index[a], t)]);
        Ok(Self {
            kernel: kernel.clone(),
            noise_variance,
            basis_index,
            basis,
            alpha,
            objective,
            selection,
        })
    }

    /// Number of basis points k.
    pub fn n_basis(&self) -> usize {
        self.basis_index.len()
    }

    /// Predictive mean `k(x, X_S)ᵀα` at the rows of `x`.
    pub fn predict_mean(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        if x.ncols() != self.basis.ncols() {
            return Err(Error::ShapeMismatch {
                what: "prediction inputs",
                expected: format!("{} columns", self.basis.ncols()),
                found: format!("{} columns", x.ncols()),
            });
        }
        crate::data::check_finite(x, "prediction inputs")?;
        let kxs = self.kernel.cross(x, self.basis.as_ref())?;
        Ok(linalg::mat_vec(&kxs, &self.alpha))
    }

    /// The subset-of-regressors (DTC) posterior on the basis with noise `σ²`, whose mean is
    /// this model's prediction (see the module doc). `K_SS` gets jitter only if its Cholesky
    /// needs it; the amount is reported by `cov.jitter()`.
    pub fn posterior(&self, x: MatRef<'_, f64>, y: &[f64]) -> Result<GaussianPosterior> {
        crate::regression::exact::check_regression_inputs(x, y)?;
        if x.ncols() != self.basis.ncols() {
            return Err(Error::ShapeMismatch {
                what: "training inputs",
                expected: format!("{} columns", self.basis.ncols()),
                found: format!("{} columns", x.ncols()),
            });
        }
        let kss = self.kernel.gram(self.basis.as_ref())?;
        let chol_kuu = Cholesky::factor(kss.as_ref(), &JitterPolicy::default(), "K_SS")?;
        let mut v = self.kernel.cross(self.basis.as_ref(), x)?; // K_SN
        chol_kuu.solve_lower_in_place(v.as_mut());
        let s2 = self.noise_variance;
        let mut b = linalg::weighted_gram(&v, &vec![1.0 / s2; x.nrows()])?;
        for i in 0..b.nrows() {
            b[(i, i)] += 1.0;
        }
        let chol_b = Cholesky::factor(b.as_ref(), &JitterPolicy::default(), "I + VVᵀ/σ²")?;
        let gamma: Vec<f64> = linalg::mat_vec(&v, y).iter().map(|g| g / s2).collect();
        let alpha = chol_kuu.solve_upper_vec(&chol_b.solve_vec(&gamma));
        Ok(GaussianPosterior::whitened(
            self.kernel.clone(),
            self.basis.clone(),
            alpha,
            chol_kuu,
            chol_b,
        ))
    }
}

/// The exact refit on the selected basis: the selection's own weights when it refit at every
/// step, otherwise Cholesky appends in order of entry (dependent points are dropped).
fn refit(
    problem: &GreedyProblem<'_>,
    selection: &Selection,
    algorithm: Algorithm,
    update: Update,
) -> Result<(Vec<usize>, Vec<f64>, f64)> {
    let refit_each_step = update == Update::Refit || algorithm == Algorithm::Random;
    if refit_each_step && !selection.basis.is_empty() {
        return Ok((
            selection.basis.clone(),
            selection.alpha.clone(),
            selection.r(),
        ));
    }
    let mut fit = SubsetFit::new(problem.n(), problem.lambda(), problem.r_zero());
    for &j in &selection.basis {
        let c = problem.column(j)?;
        let probe = fit.probe(j, &c, problem.y());
        if probe.is_independent() {
            fit.append(j, c, probe)?;
        }
    }
    if fit.len() == 0 {
        return Err(Error::Numerical {
            what: "greedy sparse GP",
            message: "no basis point decreases the objective (are all targets zero?)".into(),
        });
    }
    Ok((fit.idx.clone(), fit.alpha(), fit.objective()))
}

/// The number of inducing inputs M must lie in `1..=N` (every initialisation takes them from
/// the N training inputs).
pub fn check_inducing_count(m: usize, n: usize) -> Result<()> {
    if m == 0 || m > n {
        return Err(Error::InvalidParameter {
            name: "number of inducing points M",
            value: m as f64,
            reason: "must lie in 1..=N",
        });
    }
    Ok(())
}

/// `m` inducing inputs chosen from the rows of `x` by κ-greedy ΔR selection (Algorithm 3,
/// κ = min([`super::GREEDY_KAPPA`], N), exact refit) for the GP with `kernel` and noise
/// `σ²`; if selection stops early (the basis spans the data), seeded random training inputs
/// fill up to `m`.
pub fn greedy_inducing(
    kernel: &Kernel,
    noise_variance: f64,
    x: MatRef<'_, f64>,
    y: &[f64],
    m: usize,
    seed: u64,
) -> Result<Mat<f64>> {
    check_inducing_count(m, x.nrows())?;
    if !(noise_variance > 0.0 && noise_variance.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "noise_variance",
            value: noise_variance,
            reason: "must be positive and finite",
        });
    }
    let problem = GreedyProblem::new(kernel, x, y, noise_variance / y.len() as f64)?;
    let cfg = GreedyConfig {
        algorithm: Algorithm::KappaGreedy {
            kappa: super::GREEDY_KAPPA.min(x.nrows()),
        },
        update: Update::Refit,
        stop: super::StopRule::Steps { k: m },
        seed,
    };
    let mut idx = select(&problem, &cfg)?.basis;
    for j in crate::data::permutation(x.nrows(), seed) {
        if idx.len() == m {
            break;
        }
        if !idx.contains(&j) {
            idx.push(j);
        }
    }
    Ok(Mat::from_fn(m, x.ncols(), |a, t| x[(idx[a], t)]))
}
