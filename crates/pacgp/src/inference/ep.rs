//! Expectation propagation for GP classification with the probit likelihood (GPML Alg. 3.5),
//! sequential site updates with optional damping, the posterior recomputed stably from the
//! sites after every sweep.
//!
//! Policy for negative site precisions: a site whose cavity precision would be ≤ 0 is left
//! unchanged for that step, and a site precision that would turn negative is clipped to 0;
//! both are counted in the report's notes.

use faer::{Mat, MatRef};

use super::{check_classification, ClassifierFit, ConvergenceReport, ConvergenceStatus};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::{Covariance, GaussianPosterior};

/// Settings of [`ep`].
#[derive(Clone, Copy, Debug)]
pub struct EpConfig {
    /// Maximum sweeps over the data.
    pub max_sweeps: usize,
    /// Stop when no site parameter changes by more than this in a sweep.
    pub tol: f64,
    /// Damping in (0, 1]: new site = damping·proposal + (1 − damping)·old.
    pub damping: f64,
}

impl Default for EpConfig {
    fn default() -> Self {
        Self {
            max_sweeps: 100,
            tol: 1e-8,
            damping: 1.0,
        }
    }
}

/// Stable posterior from sites: `L = chol(I + S̃½KS̃½)`, `V = L⁻¹S̃½K`, `Σ = K − VᵀV`, `μ = Σν̃`.
fn recompute(k: &Mat<f64>, tau: &[f64], nu: &[f64]) -> Result<(Mat<f64>, Vec<f64>, Cholesky)> {
    let n = tau.len();
    let sw: Vec<f64> = tau.iter().map(|t| t.max(0.0).sqrt()).collect();
    let b = Mat::from_fn(n, n, |i, j| {
        sw[i] * k[(i, j)] * sw[j] + if i == j { 1.0 } else { 0.0 }
    });
    let l = Cholesky::factor(b.as_ref(), &JitterPolicy::default(), "I + S̃½KS̃½")?;
    let mut v = Mat::from_fn(n, n, |i, j| sw[i] * k[(i, j)]);
    l.solve_lower_in_place(v.as_mut());
    let sigma = k - v.transpose() * &v;
    let mu = linalg::col_to_vec((&sigma * linalg::col_from_slice(nu)).as_ref());
    Ok((sigma, mu, l))
}

/// Run EP to convergence and return the site-form posterior (`π = τ̃`,
/// `α = (K + S̃⁻¹)⁻¹ S̃⁻¹ν̃ = ν̃ − S̃½ L⁻ᵀL⁻¹ S̃½ K ν̃`).
pub fn ep(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &EpConfig,
) -> Result<ClassifierFit> {
    check_classification(x, y, lik)?;
    kernel.check_input_dim(x.ncols())?;
    lik.tilted_moments(1.0, 0.0, 1.0)?; // rejects likelihoods without closed-form moments
    let n = y.len();
    let k = kernel.gram(x);
    let (mut tau, mut nu) = (vec![0.0; n], vec![0.0; n]);
    let mut sigma = k.clone();
    let mut mu = vec![0.0; n];
    let (mut skipped, mut clipped) = (0usize, 0usize);
    let (mut status, mut sweeps, mut change) = (ConvergenceStatus::MaxIterations, 0, f64::INFINITY);
    for sweep in 0..cfg.max_sweeps {
        sweeps = sweep + 1;
        change = 0.0f64;
        for i in 0..n {
            // GPML Alg. 3.5 l. 6–7: cavity.
            let tau_cav = 1.0 / sigma[(i, i)] - tau[i];
            if tau_cav <= 0.0 {
                skipped += 1;
                continue;
            }
            let nu_cav = mu[i] / sigma[(i, i)] - nu[i];
            let (m_cav, v_cav) = (nu_cav / tau_cav, 1.0 / tau_cav);
            // l. 8: tilted moments; new marginal N(μ̂, σ̂²).
            let t = lik.tilted_moments(y[i], m_cav, v_cav)?;
            let mu_hat = m_cav + v_cav * t.d1;
            let s2_hat = v_cav + v_cav * v_cav * t.d2;
            // l. 9–10: site update, damped.
            let mut tau_new = 1.0 / s2_hat - tau_cav;
            if !(tau_new >= 0.0) {
                clipped += 1;
                tau_new = 0.0;
            }
            let nu_new = if tau_new > 0.0 {
                mu_hat / s2_hat - nu_cav
            } else {
                0.0
            };
            let tau_new = cfg.damping * tau_new + (1.0 - cfg.damping) * tau[i];
            let nu_new = cfg.damping * nu_new + (1.0 - cfg.damping) * nu[i];
            let d_tau = tau_new - tau[i];
            change = change.max(d_tau.abs()).max((nu_new - nu[i]).abs());
            tau[i] = tau_new;
            nu[i] = nu_new;
            // l. 11–12: rank-one update of Σ and μ.
            let c = d_tau / (1.0 + d_tau * sigma[(i, i)]);
            let si: Vec<f64> = (0..n).map(|j| sigma[(j, i)]).collect();
            for col in 0..n {
                for row in 0..n {
                    sigma[(row, col)] -= c * si[row] * si[col];
                }
            }
            mu = linalg::col_to_vec((&sigma * linalg::col_from_slice(&nu)).as_ref());
        }
        // l. 14–16: recompute from the sites to stop round-off from accumulating.
        let (s, m, _) = recompute(&k, &tau, &nu)?;
        sigma = s;
        mu = m;
        if change < cfg.tol {
            status = ConvergenceStatus::Converged;
            break;
        }
    }
    let (_, _, l) = recompute(&k, &tau, &nu)?;
    let sw: Vec<f64> = tau.iter().map(|t| t.max(0.0).sqrt()).collect();
    let knu = linalg::col_to_vec((&k * linalg::col_from_slice(&nu)).as_ref());
    let sol = l.solve_vec(&(0..n).map(|i| sw[i] * knu[i]).collect::<Vec<_>>());
    let alpha: Vec<f64> = (0..n).map(|i| nu[i] - sw[i] * sol[i]).collect();
    let mut notes = Vec::new();
    if skipped > 0 {
        notes.push(format!(
            "{skipped} site updates skipped for a non-positive cavity precision"
        ));
    }
    if clipped > 0 {
        notes.push(format!("{clipped} site precisions clipped to 0"));
    }
    let jitter = l.jitter();
    Ok(ClassifierFit {
        posterior: GaussianPosterior {
            kernel: kernel.clone(),
            basis: x.to_owned(),
            alpha,
            cov: Covariance::Sites {
                sqrt_pi: sw,
                chol_b: l,
            },
        },
        ln_evidence: None,
        basis_indices: None,
        report: ConvergenceReport {
            status,
            iterations: sweeps,
            final_change: change,
            jitter_used: jitter,
            notes,
        },
    })
}
