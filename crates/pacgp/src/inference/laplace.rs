//! Laplace approximation for GP classification (GPML Alg. 3.1 and 3.2), Newton's method in
//! the stable `B = I + W½KW½` form with step halving; any log-concave likelihood.

use faer::{Mat, MatRef};

use super::{check_classification, ClassifierFit, ConvergenceReport, ConvergenceStatus};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::{Covariance, GaussianPosterior};

/// Settings of [`laplace`].
#[derive(Clone, Copy, Debug)]
pub struct LaplaceConfig {
    /// Maximum Newton steps.
    pub max_iter: usize,
    /// Stop when the objective Ψ(f) changes by less than this.
    pub tol: f64,
}

impl Default for LaplaceConfig {
    fn default() -> Self {
        Self {
            max_iter: 100,
            tol: 1e-10,
        }
    }
}

/// Ψ(f) = −½ aᵀf + Σ ln p(y_i|f_i) with f = K a (GPML eq. 3.12).
fn psi(lik: &Likelihood, y: &[f64], a: &[f64], f: &[f64]) -> f64 {
    -0.5 * linalg::dot(a, f)
        + y.iter()
            .zip(f)
            .map(|(y, f)| lik.ln_p_derivs(*y, *f).ln_p)
            .sum::<f64>()
}

/// Find the posterior mode and return the Laplace posterior (sites `π = W`, `α = ∇ln p(f̂)`).
pub fn laplace(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &LaplaceConfig,
) -> Result<ClassifierFit> {
    lik.require_derivatives("Laplace")?;
    check_classification(x, y, lik)?;
    kernel.check_input_dim(x.ncols())?;
    let n = y.len();
    let k = kernel.gram(x);
    let mv = |a: &[f64]| linalg::col_to_vec((&k * linalg::col_from_slice(a)).as_ref());
    let (mut a, mut f) = (vec![0.0; n], vec![0.0; n]);
    let mut obj = psi(lik, y, &a, &f);
    let (mut status, mut iterations, mut change, mut jitter) =
        (ConvergenceStatus::MaxIterations, 0, f64::INFINITY, 0.0f64);
    for it in 0..cfg.max_iter {
        iterations = it + 1;
        // GPML Alg. 3.1 l. 4–8: Newton direction in the a = K⁻¹f parametrisation.
        let d: Vec<_> = (0..n).map(|i| lik.ln_p_derivs(y[i], f[i])).collect();
        let sw: Vec<f64> = d.iter().map(|d| (-d.d2).max(0.0).sqrt()).collect();
        let b_mat = Mat::from_fn(n, n, |i, j| {
            sw[i] * k[(i, j)] * sw[j] + if i == j { 1.0 } else { 0.0 }
        });
        let l = Cholesky::factor(b_mat.as_ref(), &JitterPolicy::default(), "I + W½KW½")?;
        jitter = jitter.max(l.jitter());
        let b: Vec<f64> = (0..n).map(|i| sw[i] * sw[i] * f[i] + d[i].d1).collect();
        let kb = mv(&b);
        let swkb: Vec<f64> = (0..n).map(|i| sw[i] * kb[i]).collect();
        let sol = l.solve_vec(&swkb);
        let a_new: Vec<f64> = (0..n).map(|i| b[i] - sw[i] * sol[i]).collect();
        // Step halving on Ψ along a_new − a (the full step can overshoot far from the mode).
        let mut step = 1.0;
        let (mut a_try, mut f_try, mut obj_try);
        loop {
            a_try = a
                .iter()
                .zip(&a_new)
                .map(|(a0, a1)| a0 + step * (a1 - a0))
                .collect::<Vec<_>>();
            f_try = mv(&a_try);
            obj_try = psi(lik, y, &a_try, &f_try);
            if obj_try >= obj - 1e-12 * obj.abs() || step < 1e-6 {
                break;
            }
            step *= 0.5;
        }
        change = (obj_try - obj).abs();
        a = a_try;
        f = f_try;
        obj = obj_try;
        if change < cfg.tol {
            status = ConvergenceStatus::Converged;
            break;
        }
    }
    // Posterior at the mode (GPML Alg. 3.2): sites √W and L of B; mean weights ∇ln p(f̂).
    let d: Vec<_> = (0..n).map(|i| lik.ln_p_derivs(y[i], f[i])).collect();
    let sw: Vec<f64> = d.iter().map(|d| (-d.d2).max(0.0).sqrt()).collect();
    let b_mat = Mat::from_fn(n, n, |i, j| {
        sw[i] * k[(i, j)] * sw[j] + if i == j { 1.0 } else { 0.0 }
    });
    let l = Cholesky::factor(b_mat.as_ref(), &JitterPolicy::default(), "I + W½KW½")?;
    jitter = jitter.max(l.jitter());
    let ln_evidence = psi(lik, y, &a, &f) - 0.5 * l.ln_det();
    let alpha: Vec<f64> = d.iter().map(|d| d.d1).collect();
    let posterior = GaussianPosterior {
        kernel: kernel.clone(),
        basis: x.to_owned(),
        alpha,
        cov: Covariance::Sites {
            sqrt_pi: sw,
            chol_b: l,
        },
    };
    Ok(ClassifierFit {
        posterior,
        ln_evidence: Some(ln_evidence),
        basis_indices: None,
        report: ConvergenceReport {
            status,
            iterations,
            final_change: change,
            jitter_used: jitter,
            notes: vec![],
        },
    })
}
