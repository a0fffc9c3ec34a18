//! Approximate log marginal likelihoods of the GP classifiers and their gradients, the
//! objective of ML-II (type-II maximum likelihood) over the kernel θ and, for the probit,
//! ln λ and b.
//!
//! - Laplace (GPML Alg. 5.1, eqs. 5.20–5.24): `∂ ln q/∂θ_j = ½ aᵀC_ja − ½ tr(R C_j) +
//!   s₂ᵀ(I − KR)C_j a` with `C_j = ∂K/∂θ_j`, `R = W½B⁻¹W½`, `s₂ = ½ diag(Σ) ∘ ∇³ln p`.
//!   Both terms are contractions `Σ_ij G_ij ∂K_ij/∂θ_j` with one `G = ½(aaᵀ − R) + sym(u aᵀ)`,
//!   `u = (I − RK)s₂`, so all θ cost one pass over the kernel. (GPML prints s₂ with a minus
//!   sign; with `W = −∇∇ln p` the derivative of `−½ ln|B|` w.r.t. `f̂_i` is `+½ Σ_ii ∇³_i`,
//!   which is what scikit-learn computes and what the finite-difference tests confirm.)
//!   Likelihood parameters φ: explicit `Σ ∂ln p_i/∂φ + ½ Σ_i Σ_ii ∂(∇²ln p_i)/∂φ` plus the
//!   implicit `s₂ᵀ ∂f̂/∂φ` with `∂f̂/∂φ = Σ ∂(∇ln p)/∂φ` (differentiate `f̂ = K∇ln p(f̂)`).
//! - EP (GPML eq. 5.27): `∂ ln Z_EP/∂θ_j = ½ tr((bbᵀ − S̃½B⁻¹S̃½) C_j)` with `b = α`, sites
//!   held fixed (valid at convergence: `ln Z_EP` is stationary in the sites there);
//!   `∂/∂φ = Σ_i ∂ln Ẑ_i/∂φ` at fixed cavities.
//!
//! Cost per evaluation: the inference itself, one `B⁻¹` (≈ 2N³/3 flops) and one gradient
//! contraction over the kernel (`O(N² D)`).
//!
//! - `ml2`: ML-II, the evidence maximised by the driver.

mod ml2;

pub use ml2::{fit_ep_ml2, fit_laplace_ml2, ClassifierMl2, ClassifierMlConfig};

use std::cell::RefCell;

use faer::{Mat, MatRef};

use super::ep::{self, EpConfig, EpSites};
use super::laplace::{self, mat_vec, LaplaceConfig, LaplaceMode};
use super::{ClassifierFit, Problem};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::optim::Objective;
use crate::special::inv_mills_ratio;

/// An approximate log evidence and its gradient.
#[derive(Clone, Debug, PartialEq)]
pub struct EvidenceGradient {
    /// `ln q(y|X,θ)` (Laplace) or `ln Z_EP`.
    pub ln_evidence: f64,
    /// `∂/∂θ_k` for every kernel hyperparameter (ln space, [`Kernel::params`] order).
    pub kernel: Vec<f64>,
    /// `[∂/∂ln λ, ∂/∂b]` for the probit likelihood; empty for the others.
    pub likelihood: Vec<f64>,
}

/// `R v` with `R = W½ B⁻¹ W½` (`= (K + W⁻¹)⁻¹`), from `B⁻¹`, without forming `R`.
fn r_times(binv: &Mat<f64>, sw: &[f64], v: &[f64]) -> Vec<f64> {
    let swv: Vec<f64> = sw.iter().zip(v).map(|(s, v)| s * v).collect();
    let t = mat_vec(binv, &swv);
    sw.iter().zip(&t).map(|(s, t)| s * t).collect()
}

/// Overwrite `B⁻¹` with the contraction weights
/// `G_ij = ½(a_i a_j − √W_i [B⁻¹]_ij √W_j) + ½(u_i a_j + a_i u_j)` (columns in parallel), so
/// that no further `N × N` matrix is allocated per evaluation.
fn binv_into_weights(binv: &mut Mat<f64>, sw: &[f64], a: &[f64], u: Option<&[f64]>) {
    use rayon::prelude::*;
    binv.as_mut()
        .par_col_iter_mut()
        .enumerate()
        .for_each(|(j, col)| {
            let col = col
                .try_as_col_major_mut()
                .expect("an owned matrix has contiguous columns")
                .as_slice_mut();
            for (i, g) in col.iter_mut().enumerate() {
                let mut v = 0.5 * (a[i] * a[j] - sw[i] * *g * sw[j]);
                if let Some(u) = u {
                    v += 0.5 * (u[i] * a[j] + a[i] * u[j]);
                }
                *g = v;
            }
        });
}

/// `diag Σ` with `Σ = (K⁻¹ + W)⁻¹`, in `O(N²)` from `B⁻¹`:
/// - `(1 − [B⁻¹]_ii)/W_i` where `W_i K_ii > 1e-3` (from `Σ = W^{−½}(I − B⁻¹)W^{−½}`);
/// - else `Σ_j K_ij √W_j [B⁻¹]_ji / √W_i` (from `Σ W½ = K W½ B⁻¹`), whose error grows
///   like `1/√W_i` instead of `1/W_i`, where `W_i K_ii > 1e-12`;
/// - else `K_ii − k_iᵀ R k_i` (`O(N²)` per point), which does not cancel there.
///
/// EP's parallel sweeps have `L⁻¹` rather than `B⁻¹` and use the same identity through
/// `ep::sigma_diag_from_sites` (forming `B⁻¹` there would cost each sweep another `N³/3`).
fn sigma_diag(k: &Mat<f64>, binv: &Mat<f64>, sw: &[f64]) -> Vec<f64> {
    let n = sw.len();
    (0..n)
        .map(|i| {
            let w = sw[i] * sw[i];
            let kc = k.col_as_slice(i);
            if w * k[(i, i)] > 1e-3 {
                (1.0 - binv[(i, i)]) / w
            } else if w * k[(i, i)] > 1e-12 {
                // B⁻¹ is symmetric: read column i (contiguous) for row i.
                let col = binv.col_as_slice(i);
                (0..n).map(|j| kc[j] * sw[j] * col[j]).sum::<f64>() / sw[i]
            } else {
                k[(i, i)] - crate::linalg::dot(kc, &r_times(binv, sw, kc))
            }
        })
        .collect()
}

/// Probit partials of `(ln p, ∇ln p, ∇²ln p)` w.r.t. `(ln λ, b)` at one point.
fn probit_lik_partials(lambda: f64, bias: f64, y: f64, f: f64) -> [[f64; 3]; 2] {
    // z = λy(f + b); r = φ/Φ(z); r' = −r(z + r); r'' = −r'(z + r) − r(1 + r').
    let z = lambda * y * (f + bias);
    let r = inv_mills_ratio(z);
    let r1 = -r * (z + r);
    let r2 = -r1 * (z + r) - r * (1.0 + r1);
    let (s, s2, s3) = (lambda * y, lambda * lambda, lambda * lambda * lambda * y);
    [
        // λ∂/∂λ (∂z/∂ln λ = z): ln Φ(z), λy r(z), λ² r'(z).
        [r * z, s * (r + r1 * z), s2 * (2.0 * r1 + r2 * z)],
        // ∂/∂b = ∂/∂f.
        [s * r, s2 * r1, s3 * r2],
    ]
}

/// Gradient of the Laplace evidence at a mode (GPML Alg. 5.1 and §5.5.1).
fn laplace_gradient(p: Problem<'_>, m: &LaplaceMode) -> Result<EvidenceGradient> {
    let Problem { kernel, lik, x, y } = p;
    let n = y.len();
    let k = &m.k;
    let mut binv = m.chol.inverse()?;
    let sd = sigma_diag(k, &binv, &m.sw);
    // Alg. 5.1 l. 7: s₂ = ∂ ln q/∂f̂ (sign: see the module doc).
    let s2: Vec<f64> = (0..n).map(|i| 0.5 * sd[i] * m.derivs[i].d3).collect();
    // u = (I − RK) s₂, so s₂ᵀ(I − KR)C a = uᵀ C a.
    let rks2 = r_times(&binv, &m.sw, &mat_vec(k, &s2));
    let u: Vec<f64> = (0..n).map(|i| s2[i] - rks2[i]).collect();
    // The likelihood-parameter terms need R (as B⁻¹) before it is overwritten.
    let grad_lik = match *lik {
        Likelihood::Probit { lambda, bias } => {
            let parts: Vec<_> = (0..n)
                .map(|i| probit_lik_partials(lambda, bias, y[i], m.f[i]))
                .collect();
            (0..2)
                .map(|p| {
                    let explicit: f64 = (0..n)
                        .map(|i| parts[i][p][0] + 0.5 * sd[i] * parts[i][p][2])
                        .sum();
                    // ∂f̂/∂φ = Σ g, g = ∂∇ln p/∂φ; Σ g = Kg − KRKg.
                    let gv: Vec<f64> = (0..n).map(|i| parts[i][p][1]).collect();
                    let kg = mat_vec(k, &gv);
                    let krkg = mat_vec(k, &r_times(&binv, &m.sw, &kg));
                    let implicit: f64 = (0..n).map(|i| s2[i] * (kg[i] - krkg[i])).sum();
                    explicit + implicit
                })
                .collect()
        }
        _ => vec![],
    };
    // Alg. 5.1 l. 9–12 as one contraction.
    binv_into_weights(&mut binv, &m.sw, &m.a, Some(&u));
    let grad_k = kernel.gram_grad_contract_symmetric(x, binv.as_ref(), Some(k.as_ref()));
    Ok(EvidenceGradient {
        ln_evidence: m.ln_evidence,
        kernel: grad_k,
        likelihood: grad_lik,
    })
}

/// Laplace fit, its log evidence `ln q(y|X,θ)` and the gradient in θ (and probit ln λ, b);
/// Newton starts from the mode `f0` of a nearby fit when given (see
/// [`laplace::laplace_warm`]).
pub fn laplace_evidence(
    p: Problem<'_>,
    cfg: &LaplaceConfig,
    f0: Option<&[f64]>,
) -> Result<(ClassifierFit, EvidenceGradient)> {
    let (fit, grad, _) = laplace_evidence_with_mode(p, cfg, f0)?;
    Ok((fit, grad))
}

/// [`laplace_evidence`] that also returns the mode `f̂`, for the next warm start.
fn laplace_evidence_with_mode(
    p: Problem<'_>,
    cfg: &LaplaceConfig,
    f0: Option<&[f64]>,
) -> Result<(ClassifierFit, EvidenceGradient, Vec<f64>)> {
    let m = laplace::mode(p, cfg, f0)?;
    let grad = laplace_gradient(p, &m)?;
    let f = m.f.clone();
    Ok((m.into_fit(p.kernel, p.x), grad, f))
}

/// EP fit, `ln Z_EP` and its gradient in θ (and probit ln λ, b), EP started from `init`
/// (flat sites if `None`). Returns the final sites for the next warm start. The gradient
/// is that of the converged `ln Z_EP`: run EP to a tight `cfg.tol`.
pub fn ep_evidence(
    p: Problem<'_>,
    cfg: &EpConfig,
    init: Option<&EpSites>,
) -> Result<(ClassifierFit, EpSites, EvidenceGradient)> {
    let Problem { kernel, lik, x, y } = p;
    let run = ep::run(p, cfg, init)?;
    let ln_evidence = run.ln_evidence.ok_or_else(|| Error::Numerical {
        what: "EP log evidence",
        message: "a final cavity precision is not positive".into(),
    })?;
    let sw: Vec<f64> = run.sites.tau.iter().map(|t| t.max(0.0).sqrt()).collect();
    // GPML eq. 5.27: ½ tr((bbᵀ − S̃½B⁻¹S̃½) ∂K/∂θ), b = α; B⁻¹ from the L⁻¹ of the final
    // marginals when the parallel sweeps computed it.
    let mut g = match &run.post.l_inv {
        Some(l_inv) => crate::linalg::inverse_from_l_inverse(l_inv)?,
        None => run.post.chol.inverse()?,
    };
    binv_into_weights(&mut g, &sw, &run.post.alpha, None);
    let grad_k = kernel.gram_grad_contract_symmetric(x, g.as_ref(), Some(run.k.as_ref()));
    let grad_lik = match *lik {
        Likelihood::Probit { lambda, bias } => {
            let cav = ep::cavities(&run.sites, &run.post.mu, &run.post.var);
            let mut out = vec![0.0; 2];
            for (i, c) in cav.iter().enumerate() {
                let (m, v) = c.expect("cavities are positive when ln Z_EP is defined");
                // ln Ẑ_i = ln Φ(z), z = y(m + b)/s, s² = λ⁻² + v.
                let s2 = 1.0 / (lambda * lambda) + v;
                let s = s2.sqrt();
                let z = y[i] * (m + bias) / s;
                let r = inv_mills_ratio(z);
                out[0] += r * z / (lambda * lambda * s2);
                out[1] += y[i] * r / s;
            }
            out
        }
        _ => vec![],
    };
    let (fit, sites) = run.into_fit(kernel, x);
    Ok((
        fit,
        sites,
        EvidenceGradient {
            ln_evidence,
            kernel: grad_k,
            likelihood: grad_lik,
        },
    ))
}

/// Which approximation an ML-II objective uses, with its settings.
#[derive(Clone, Copy, Debug)]
pub enum Approximation {
    /// Laplace (GPML §3.4).
    Laplace(LaplaceConfig),
    /// Expectation propagation (GPML §3.6).
    Ep(EpConfig),
}

pub use super::WarmStart;

/// Site tolerance per unit of the previous `‖∇ ln Z_EP‖∞` (the forcing term below).
const EP_FORCING: f64 = 1e-2;
/// Loosest site tolerance of an ML-II evaluation.
const EP_TOLERANCE_MAX: f64 = 3e-2;

/// EP's site tolerance within ML-II: `EP_FORCING·‖∇‖∞` of the previous evaluation, between
/// `floor` and [`EP_TOLERANCE_MAX`] — the forcing term of inexact Newton methods
/// (Eisenstat & Walker 1996, SIAM J. Sci. Comput. 17(1)). The gradient's error is first
/// order in the sites' (its noise at the optimum was about 10·tol at n = 2000), so far from
/// the optimum it stays a small fraction of the gradient; the value's error is second
/// order. Near the optimum the tolerance is `floor`.
fn ep_forcing_tolerance(floor: f64, last_gradient_norm: f64) -> f64 {
    (EP_FORCING * last_gradient_norm).clamp(floor, EP_TOLERANCE_MAX.max(floor))
}

/// The last evaluation of an ML-II objective: parameters, fit and gradient.
type Evaluation = (Vec<f64>, ClassifierFit, EvidenceGradient);

/// `−ln q(y|X,θ)` (Laplace) or `−ln Z_EP` over `[θ_kernel…]` or, with the likelihood
/// fitted, `[θ_kernel…, ln λ, b]` (probit only). Each evaluation warm-starts the inference
/// from the previous one's mode or sites.
pub struct NegLogEvidence<'a> {
    kernel: Kernel,
    lik: Likelihood,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    approx: Approximation,
    fit_likelihood: bool,
    warm: RefCell<WarmStart>,
    last: RefCell<Option<Evaluation>>,
}

impl<'a> NegLogEvidence<'a> {
    /// The objective for `kernel`'s and `lik`'s structure on `(x, y)`. With
    /// `fit_likelihood` the probit slope and bias are parameters too (an error for the
    /// other likelihoods). Note that `σ_f²` and λ trade off (`λ f` with `f ~ GP(0, σ²k)` is
    /// `GP(0, λ²σ²k)`), so fitting both leaves a ridge in the objective.
    pub fn new(p: Problem<'a>, approx: Approximation, fit_likelihood: bool) -> Result<Self> {
        let Problem { kernel, lik, x, y } = p;
        super::check_classification(x, y, lik)?;
        kernel.check_input_dim(x.ncols())?;
        if fit_likelihood && !matches!(lik, Likelihood::Probit { .. }) {
            return Err(Error::Unsupported(format!(
                "only the probit's slope and bias can be fitted by ML-II, not the {} likelihood's",
                lik.name()
            )));
        }
        Ok(Self {
            kernel: kernel.clone(),
            lik: *lik,
            x,
            y,
            approx,
            fit_likelihood,
            warm: RefCell::new(WarmStart::None),
            last: RefCell::new(None),
        })
    }

    /// The starting parameter vector.
    pub fn initial_params(&self) -> Vec<f64> {
        let mut p = self.kernel.params();
        if self.fit_likelihood {
            if let Likelihood::Probit { lambda, bias } = self.lik {
                p.extend([lambda.ln(), bias]);
            }
        }
        p
    }

    /// Kernel and likelihood at parameters `p`.
    pub fn model_at(&self, p: &[f64]) -> Result<(Kernel, Likelihood)> {
        if p.len() != self.dim() {
            return Err(Error::ShapeMismatch {
                what: "ML-II parameters",
                expected: format!("{}", self.dim()),
                found: format!("{}", p.len()),
            });
        }
        let nk = self.kernel.n_params();
        let mut k = self.kernel.clone();
        k.set_params(&p[..nk])?;
        let lik = if self.fit_likelihood {
            Likelihood::probit_with(p[nk].exp(), p[nk + 1])?
        } else {
            self.lik
        };
        Ok((k, lik))
    }

    /// `‖∇‖∞` of the objective at the previous evaluation (∞ before the first), for EP's
    /// forcing term.
    fn last_gradient_norm(&self) -> f64 {
        self.last
            .borrow()
            .as_ref()
            .map_or(f64::INFINITY, |(_, _, g)| {
                let lik: &[f64] = if self.fit_likelihood {
                    &g.likelihood
                } else {
                    &[]
                };
                g.kernel
                    .iter()
                    .chain(lik)
                    .fold(0.0, |m: f64, v| m.max(v.abs()))
            })
    }

    /// The problem on this objective's sample at kernel `kernel` and likelihood `lik`.
    fn at<'p>(&'p self, kernel: &'p Kernel, lik: &'p Likelihood) -> Problem<'p> {
        Problem {
            kernel,
            lik,
            x: self.x,
            y: self.y,
        }
    }

    /// Fit at parameters `p` (warm-started) with the gradient of the log evidence.
    pub fn fit_at(&self, p: &[f64]) -> Result<(ClassifierFit, EvidenceGradient)> {
        let (k, lik) = self.model_at(p)?;
        let mut warm = self.warm.borrow_mut();
        match self.approx {
            Approximation::Laplace(cfg) => {
                let f0 = match &*warm {
                    WarmStart::Laplace(f) => Some(f.as_slice()),
                    _ => None,
                };
                let (fit, g, f) = laplace_evidence_with_mode(self.at(&k, &lik), &cfg, f0)?;
                *warm = WarmStart::Laplace(f);
                Ok((fit, g))
            }
            Approximation::Ep(cfg) => {
                let init = match &*warm {
                    WarmStart::Ep(s) => Some(s),
                    _ => None,
                };
                let cfg = EpConfig {
                    tol: ep_forcing_tolerance(cfg.tol, self.last_gradient_norm()),
                    ..cfg
                };
                let (fit, sites, g) = ep_evidence(self.at(&k, &lik), &cfg, init)?;
                *warm = WarmStart::Ep(sites);
                Ok((fit, g))
            }
        }
    }
}

impl Objective for NegLogEvidence<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_params() + if self.fit_likelihood { 2 } else { 0 }
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (fit, g) = self.fit_at(p)?;
        let mut grad: Vec<f64> = g.kernel.iter().map(|v| -v).collect();
        if self.fit_likelihood {
            grad.extend(g.likelihood.iter().map(|v| -v));
        }
        let value = -g.ln_evidence;
        *self.last.borrow_mut() = Some((p.to_vec(), fit, g));
        Ok((value, grad))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forcing term follows the gradient between the floor and its cap; a floor above
    /// the cap wins.
    #[test]
    fn ep_forcing_tolerance_is_clamped() {
        assert_eq!(ep_forcing_tolerance(1e-3, f64::INFINITY), EP_TOLERANCE_MAX);
        assert_eq!(ep_forcing_tolerance(1e-3, 0.0), 1e-3);
        assert!((ep_forcing_tolerance(1e-3, 0.5) - 5e-3).abs() < 1e-15);
        assert_eq!(ep_forcing_tolerance(0.1, 1.0), 0.1);
    }

    /// Every branch of `sigma_diag` equals `diag((K⁻¹ + W)⁻¹)` computed by a dense inverse.
    #[test]
    fn sigma_diag_matches_the_dense_inverse_in_every_branch() {
        let n = 12;
        let x = Mat::from_fn(n, 2, |i, j| {
            if j == 0 {
                0.4 * i as f64
            } else {
                (i as f64).sin()
            }
        });
        // Any SPD matrix will do: a kernel matrix with a small ridge keeps the reference
        // inverses well conditioned.
        let mut k = Kernel::se_iso(0.9, 2.0).gram(x.as_ref()).unwrap();
        for i in 0..n {
            k[(i, i)] += 0.05;
        }
        // W from 1e-14 (third branch) via 1e-8 (second) to 2 (first).
        let w: Vec<f64> = (0..n)
            .map(|i| 10f64.powi(2 * i as i32 - 14).min(2.0))
            .collect();
        let sw: Vec<f64> = w.iter().map(|w| w.sqrt()).collect();
        let chol = laplace::chol_b_in(&k, &sw, None, "B").unwrap();
        let got = sigma_diag(&k, &chol.inverse().unwrap(), &sw);
        let mut prec =
            crate::linalg::Cholesky::factor(k.as_ref(), &crate::linalg::JitterPolicy::none(), "K")
                .unwrap()
                .inverse()
                .unwrap();
        for i in 0..n {
            prec[(i, i)] += w[i];
        }
        let sigma = crate::linalg::Cholesky::factor(
            prec.as_ref(),
            &crate::linalg::JitterPolicy::none(),
            "K⁻¹ + W",
        )
        .unwrap()
        .inverse()
        .unwrap();
        for i in 0..n {
            assert!(
                (got[i] - sigma[(i, i)]).abs() < 1e-8 * sigma[(i, i)],
                "{i}: {} vs {}",
                got[i],
                sigma[(i, i)]
            );
        }
    }
}
