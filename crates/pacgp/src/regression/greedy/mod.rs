//! Zhang's sparse GP regression in the dual (seed 002): the ridge/GP objective written over
//! dual weights `α` and minimised with few non-zero weights by greedy, κ-greedy or random
//! selection of the basis, with the `O(1/k)` approximation bound of Theorem 3.1.
//!
//! The objectives (seed 002 §2), over the Gram matrix `K = [k(x_i, x_j)]` and `w = Σ_i α_i x_i`:
//! - primal (eq. 1 with eq. 2 inserted, eq. 7): `R(α) = (1/2n)‖Kα − y‖² + (λ/2) αᵀKα`;
//! - dual (eq. 5): `Q(α) = Σ_i λ(−(λn/2)α_i² + α_i y_i) − (λ/2) αᵀKα`;
//! - both are optimal at `α̂ = (K + λnI)⁻¹y` (eq. 4) with `R(ŵ) = Q(α̂)` (Lemma 2.1);
//! - `ΔR(α) = R(α) − R(ŵ)`, `ΔQ(α) = Q(α̂) − Q(α)`.
//!
//! **λ and the GP noise.** `R` averages the squared error over the n points, so `n/σ²·R` is
//! the negative log posterior of `w ~ N(0, I)` (prior covariance `k`) under noise `σ²` exactly
//! when `σ² = nλ`: Zhang's λ is `σ²/n`, and the minimiser of `R` over any basis S is the
//! subset-of-regressors (DTC) posterior mean with noise `σ² = nλ` (see [`regressor`]).
//!
//! The algorithms (seed 002 §3.1; costs with `O(1)` kernel evaluations, Table 1):
//! - [`Algorithm::Greedy`] (Algorithm 1): every point is a candidate at every step;
//! - [`Algorithm::Random`] (Algorithm 2): a uniform random basis, refit exactly;
//! - [`Algorithm::KappaGreedy`] (Algorithm 3): κ uniform random candidates at every step.
//!
//! Two ways to take a greedy step ([`Update`]): the paper's `w^k = β w^{k−1} + α x_{i_k}`
//! (a two-parameter fit, `O(n)` per candidate) and an exact refit of every weight on the
//! grown basis (a Cholesky append, `O(kn)` per candidate; Table 1's costs). Both keep the bound
//! of Theorem 3.1, since the refit is at least as low as the rescaled step on the same basis.

/// Training points that `greedy-sparse`'s ML-II sees before the greedy selection (a seeded
/// subset).
pub const GREEDY_ML2_POINTS: usize = 1000;
/// Up to this N `greedy-sparse` runs the full greedy Algorithm 1; beyond it κ-greedy with
/// κ = [`GREEDY_KAPPA`].
pub const GREEDY_FULL_UP_TO: usize = 2000;
/// Candidates κ-greedy draws at each step: 59, so that with probability 0.95 one of them is
/// among the best 5% of the rows (`1 − 0.95⁵⁹ > 0.95`).
pub const GREEDY_KAPPA: usize = 59;

pub mod objective;
pub mod regressor;
pub mod select;
pub(crate) mod subset;

pub use objective::{
    dense_solution, dual_objective, duality_gap, lemma_2_3_lower_bound, primal_objective,
    theorem_3_1_bound, DenseSolution, DualityGap,
};

pub use regressor::{check_inducing_count, greedy_inducing, GreedySparseConfig, GreedySparseGp};
pub use select::{select, Algorithm, GreedyConfig, Selection, StopReason, StopRule, Update};

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::regression::exact::check_regression_inputs;

/// Theorem 3.1 for one run: `M`, `R(0)`, `λ` and, at every k, the achieved ΔR and the bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Theorem31 {
    /// `M = max_i √k(x_i, x_i)`.
    pub max_norm: f64,
    /// `R(0) = ‖y‖²/(2n)`.
    pub r_zero: f64,
    /// λ.
    pub lambda: f64,
    /// One row per k = 0, 1, ….
    pub rows: Vec<BoundRow>,
}

/// The achieved `ΔR(k)` beside `R(0)(M² + λ)²/(λ²k + (M² + λ)²)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundRow {
    /// Number of steps k.
    pub k: usize,
    /// `ΔR(w^k)`.
    pub delta_r: f64,
    /// Theorem 3.1's bound at k.
    pub bound: f64,
}

/// One regularised least-squares problem of seed 002 (eq. 1 in kernel form): a kernel,
/// inputs, targets and Zhang's λ, with the kernel diagonal and `‖y‖²` computed once.
#[derive(Clone, Debug)]
pub struct GreedyProblem<'a> {
    kernel: &'a Kernel,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    lambda: f64,
    kdiag: Vec<f64>,
    gram: Option<Mat<f64>>,
}

impl<'a> GreedyProblem<'a> {
    /// Validate `(x, y)` and `λ > 0`; kernel columns are computed on demand.
    pub fn new(kernel: &'a Kernel, x: MatRef<'a, f64>, y: &'a [f64], lambda: f64) -> Result<Self> {
        check_regression_inputs(x, y)?;
        kernel.check_input_dim(x.ncols())?;
        if !(lambda > 0.0 && lambda.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "ridge λ",
                value: lambda,
                reason: "must be positive and finite",
            });
        }
        let kdiag = kernel.diag(x);
        if let Some(i) = kdiag.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(Error::Numerical {
                what: "kernel diagonal",
                message: format!(
                    "k(x_{i}, x_{i}) = {:.4e} is not a finite variance",
                    kdiag[i]
                ),
            });
        }
        Ok(Self {
            kernel,
            x,
            y,
            lambda,
            kdiag,
            gram: None,
        })
    }

    /// The same problem with the full N×N Gram matrix held in memory (`8N²` bytes), which
    /// full greedy selection and the dense diagnostics need.
    /// [`Error::OutOfMemory`] where it cannot be had.
    pub fn with_gram(mut self) -> Result<Self> {
        if self.gram.is_none() {
            self.gram = Some(self.kernel.gram(self.x)?);
        }
        Ok(self)
    }

    /// The same problem with a Gram matrix computed elsewhere (e.g. `XXᵀ` by one dense
    /// product for the linear kernel); it must be N×N and finite.
    pub fn with_precomputed_gram(mut self, gram: Mat<f64>) -> Result<Self> {
        let n = self.n();
        if gram.nrows() != n || gram.ncols() != n {
            return Err(Error::ShapeMismatch {
                what: "precomputed Gram matrix",
                expected: format!("{n}×{n}"),
                found: format!("{}×{}", gram.nrows(), gram.ncols()),
            });
        }
        crate::data::check_finite(gram.as_ref(), "precomputed Gram matrix")?;
        self.kdiag = (0..n).map(|i| gram[(i, i)]).collect();
        self.gram = Some(gram);
        Ok(self)
    }

    /// Theorem 3.1's inputs and its bound beside the achieved `ΔR(k) = r_path[k] − R(ŵ)`
    /// at every k of a path.
    pub fn theorem_3_1(&self, r_path: &[f64], r_hat: f64) -> Theorem31 {
        Theorem31 {
            max_norm: self.max_feature_norm(),
            r_zero: self.r_zero(),
            lambda: self.lambda,
            rows: r_path
                .iter()
                .enumerate()
                .map(|(k, r)| BoundRow {
                    k,
                    delta_r: r - r_hat,
                    bound: self.bound(k),
                })
                .collect(),
        }
    }

    /// The Gram matrix if held.
    pub fn gram(&self) -> Option<&Mat<f64>> {
        self.gram.as_ref()
    }

    /// Number of training points n.
    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// Zhang's regularisation λ (`= σ²/n` for GP noise σ²).
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// Targets y.
    pub fn y(&self) -> &[f64] {
        self.y
    }

    /// Inputs X.
    pub fn x(&self) -> MatRef<'a, f64> {
        self.x
    }

    /// Kernel.
    pub fn kernel(&self) -> &Kernel {
        self.kernel
    }

    /// `k(x_i, x_i)`.
    pub fn kdiag(&self) -> &[f64] {
        &self.kdiag
    }

    /// `R(0) = ‖y‖²/(2n)`, the objective of the empty basis.
    pub fn r_zero(&self) -> f64 {
        crate::linalg::dot(self.y, self.y) / (2.0 * self.n() as f64)
    }

    /// `M = max_i ‖x_i‖` in feature space, `√max_i k(x_i, x_i)` (Theorem 3.1).
    pub fn max_feature_norm(&self) -> f64 {
        self.kdiag.iter().fold(0.0f64, |a, b| a.max(*b)).sqrt()
    }

    /// Theorem 3.1's bound on `ΔR` after k steps, for this problem.
    pub fn bound(&self, k: usize) -> f64 {
        theorem_3_1_bound(self.r_zero(), self.max_feature_norm(), self.lambda, k)
    }

    /// Kernel columns `K_{:,j}` for `j ∈ idx` (N×|idx|), from the Gram matrix when held.
    pub fn columns(&self, idx: &[usize]) -> Result<Mat<f64>> {
        match &self.gram {
            Some(g) => {
                let mut out = crate::memory::try_zeros(self.n(), idx.len(), "kernel columns")?;
                for (c, &j) in idx.iter().enumerate() {
                    out.col_mut(c).copy_from(g.col(j));
                }
                Ok(out)
            }
            None => {
                let z = Mat::from_fn(idx.len(), self.x.ncols(), |c, t| self.x[(idx[c], t)]);
                self.kernel.cross(self.x, z.as_ref())
            }
        }
    }

    /// One kernel column `K_{:,j}`.
    pub fn column(&self, j: usize) -> Result<Vec<f64>> {
        Ok(match &self.gram {
            Some(g) => g.col_as_slice(j).to_vec(),
            None => self.columns(&[j])?.col_as_slice(0).to_vec(),
        })
    }
}
