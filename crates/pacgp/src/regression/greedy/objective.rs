//! Seed 002's objectives over a full dual vector `α ∈ ℝⁿ` and the dense Gram matrix, the
//! closed-form optimum and the duality-gap bounds of Lemmas 2.2–2.3 — the references the
//! sparse algorithms are measured against. Each costs `O(n²)` (the optimum `O(n³)`).

use faer::Mat;

use crate::error::Result;
use crate::linalg::{self, Cholesky, JitterPolicy};

fn k_times(gram: &Mat<f64>, v: &[f64]) -> Vec<f64> {
    linalg::mat_vec(gram, v)
}

/// `R(α) = (1/2n)‖Kα − y‖² + (λ/2) αᵀKα` (seed 002 eq. 7 in kernel form).
pub fn primal_objective(gram: &Mat<f64>, y: &[f64], lambda: f64, alpha: &[f64]) -> f64 {
    let n = y.len() as f64;
    let f = k_times(gram, alpha);
    let sq: f64 = f.iter().zip(y).map(|(f, y)| (f - y).powi(2)).sum();
    sq / (2.0 * n) + 0.5 * lambda * linalg::dot(alpha, &f)
}

/// `Q(α) = Σ_i λ(−(λn/2)α_i² + α_i y_i) − (λ/2) αᵀKα` (seed 002 eq. 5).
pub fn dual_objective(gram: &Mat<f64>, y: &[f64], lambda: f64, alpha: &[f64]) -> f64 {
    let n = y.len() as f64;
    let f = k_times(gram, alpha);
    let sites: f64 = alpha
        .iter()
        .zip(y)
        .map(|(a, y)| lambda * (-0.5 * lambda * n * a * a + a * y))
        .sum();
    sites - 0.5 * lambda * linalg::dot(alpha, &f)
}

/// The optimum of eqs. 1/5/7: `α̂ = (K + λnI)⁻¹y` (eq. 4), its fit `f̂ = Kα̂` and `R(ŵ)`.
#[derive(Clone, Debug)]
pub struct DenseSolution {
    /// `α̂`.
    pub alpha: Vec<f64>,
    /// `f̂_i = ŵᵀx_i`.
    pub fitted: Vec<f64>,
    /// `R(ŵ) = inf_w R(w)`.
    pub r_hat: f64,
}

impl DenseSolution {
    /// `ΔR(α) = R(α) − R(ŵ)`.
    pub fn delta_r(&self, gram: &Mat<f64>, y: &[f64], lambda: f64, alpha: &[f64]) -> f64 {
        primal_objective(gram, y, lambda, alpha) - self.r_hat
    }

    /// `ΔQ(α) = Q(α̂) − Q(α)`, with `Q(α̂) = R(ŵ)` (Lemma 2.1).
    pub fn delta_q(&self, gram: &Mat<f64>, y: &[f64], lambda: f64, alpha: &[f64]) -> f64 {
        self.r_hat - dual_objective(gram, y, lambda, alpha)
    }
}

/// Solve eq. 4 with one dense Cholesky of `K + λnI` (`O(n³)`).
pub fn dense_solution(gram: &Mat<f64>, y: &[f64], lambda: f64) -> Result<DenseSolution> {
    let n = y.len();
    let mut a = crate::linalg::try_clone(gram.as_ref(), "K + λnI")?;
    for i in 0..n {
        a[(i, i)] += lambda * n as f64;
    }
    let chol = Cholesky::factor(a.as_ref(), &JitterPolicy::none(), "K + λnI")?;
    let alpha = chol.solve_vec(y);
    let fitted = k_times(gram, &alpha);
    let sq: f64 = fitted.iter().zip(y).map(|(f, y)| (f - y).powi(2)).sum();
    let r_hat = sq / (2.0 * n as f64) + 0.5 * lambda * linalg::dot(&alpha, &fitted);
    Ok(DenseSolution {
        alpha,
        fitted,
        r_hat,
    })
}

/// Lemma 2.2 at `w = Σ α_i x_i`: the dual point `α'_i = −(f_i − y_i)/(λn)` built from the
/// residuals, `Q(α')`, and the gap `R(w) − Q(α') = ‖∂R/∂w‖²/(2λ) ≥ ΔR(w)`.
#[derive(Clone, Debug, PartialEq)]
pub struct DualityGap {
    /// `R(w)`.
    pub primal: f64,
    /// `Q(α')` at the residual dual point.
    pub dual_at_residuals: f64,
    /// `‖∂R/∂w‖²/(2λ)` with `∂R/∂w = Σ_i g_i x_i`, `g = (f − y)/n + λα`: an upper bound on
    /// `ΔR(w)` that needs no `R(ŵ)`.
    pub gradient_bound: f64,
}

/// The Lemma 2.2 diagnostics of `α` (see [`DualityGap`]); `O(n²)`.
pub fn duality_gap(gram: &Mat<f64>, y: &[f64], lambda: f64, alpha: &[f64]) -> DualityGap {
    let n = y.len() as f64;
    let f = k_times(gram, alpha);
    let g: Vec<f64> = (0..y.len())
        .map(|i| (f[i] - y[i]) / n + lambda * alpha[i])
        .collect();
    let kg = k_times(gram, &g);
    let residual_dual: Vec<f64> = (0..y.len())
        .map(|i| -(f[i] - y[i]) / (lambda * n))
        .collect();
    DualityGap {
        primal: primal_objective(gram, y, lambda, alpha),
        dual_at_residuals: dual_objective(gram, y, lambda, &residual_dual),
        gradient_bound: linalg::dot(&g, &kg) / (2.0 * lambda),
    }
}

/// Lemma 2.3's lower bound `ΔQ(α) ≥ (1/2n) Σ_i (f̂_i − y_i + λnα_i)²`: a sparse α cannot
/// nearly maximise the dual when many residuals `f̂_i − y_i` are large (why seed 002 works
/// with R, not Q).
pub fn lemma_2_3_lower_bound(fitted_hat: &[f64], y: &[f64], lambda: f64, alpha: &[f64]) -> f64 {
    let n = y.len() as f64;
    (0..y.len())
        .map(|i| (fitted_hat[i] - y[i] + lambda * n * alpha[i]).powi(2))
        .sum::<f64>()
        / (2.0 * n)
}

/// Theorem 3.1: `ΔR(w^k) ≤ R(0)(M² + λ)² / (λ²k + (M² + λ)²)` with `M = max_i ‖x_i‖`
/// (pointwise for Algorithm 1, in expectation for Algorithms 2 and 3).
pub fn theorem_3_1_bound(r_zero: f64, max_norm: f64, lambda: f64, k: usize) -> f64 {
    let c = (max_norm * max_norm + lambda).powi(2);
    r_zero * c / (lambda * lambda * k as f64 + c)
}
