//! The multi-class Laplace approximation with the softmax likelihood (Rasmussen & Williams
//! 2006, GPML §3.5, Alg. 3.3 for the mode, Alg. 3.4 for predictions), C latent functions
//! `f_c ~ GP(0, k)` with one shared kernel.
//!
//! Notation (GPML §3.5): `f` stacks the C vectors `f_c ∈ ℝⁿ` class by class; `K =
//! diag(K_c)` is block diagonal; `π = softmax(f)` per point; `D = diag(π)`; `Π` stacks the
//! `diag(π_c)` vertically, so `W = −∇∇ ln p(y|f) = D − ΠΠᵀ`, which couples the classes at
//! each point. With `B_c = I + D_c½ K D_c½ = L_c L_cᵀ`, `E_c = D_c½ B_c⁻¹ D_c½`
//! (`= (K + D_c⁻¹)⁻¹`) and `M Mᵀ = Σ_c E_c`:
//!
//! - **Newton step** (Alg. 3.3 l. 5–12): `b = W f + y − π`, `c = E K b`,
//!   `a = b − c + E R (M Mᵀ)⁻¹ Rᵀ c` (`R` stacks C identities), `f = K a`; i.e.
//!   `a = b − 𝓡 K b` with `𝓡 = W(I + KW)⁻¹ = E − E R (MMᵀ)⁻¹ Rᵀ E`.
//! - **log determinant**: `|I + KW| = Π_c |B_c| · |Σ_c E_c|` (the determinant lemma on
//!   `K⁻¹ + D − DRRᵀD` with `Σ_c π_c = 1`, which makes `I − RᵀD(K⁻¹ + D)⁻¹DR = RᵀER`), so
//!   `ln q(y|X,θ) = Ψ(f̂) − ½ Σ_c ln|B_c| − ½ ln|MMᵀ|` (GPML eq. 3.44 with its log
//!   determinant written out; the `|MMᵀ|` factor is not in Alg. 3.3's `z`, and the
//!   finite-difference and dense tests here need it).
//! - **posterior** (Alg. 3.4): `μ_c(x) = k(x)ᵀ(y_c − π̂_c)`, and the C×C covariance
//!   `Σ(x)_{cc'} = δ_cc' (k(x,x) − k(x)ᵀE_c k(x)) + (M⁻¹E_c k(x))ᵀ(M⁻¹E_{c'} k(x))`, which
//!   couples the classes (`posterior`).
//!
//! Cost: `O(C n³)` per Newton step (a Cholesky and an inverse per class) and for the evidence
//! gradient ([`evidence`]).

pub mod evidence;
pub(crate) mod posterior;

use faer::Mat;

use super::{ConvergenceReport, ConvergenceStatus};
use crate::error::{Error, Result};
use crate::linalg::{self, Cholesky, JitterPolicy};

pub use posterior::SoftmaxPosterior;

/// Settings of the Newton iteration for the mode.
#[derive(Clone, Copy, Debug)]
pub struct SoftmaxConfig {
    /// Maximum Newton steps.
    pub max_iter: usize,
    /// Stop after a full Newton step that changed Ψ(f) by less than this.
    pub tol: f64,
}

impl Default for SoftmaxConfig {
    fn default() -> Self {
        Self {
            max_iter: 100,
            tol: 1e-6,
        }
    }
}

/// `π = softmax(f)` at every point (class-major `f[c][i]`), with `ln Σ_c exp f_ic`.
pub(crate) fn softmax(f: &[Vec<f64>]) -> (Vec<Vec<f64>>, Vec<f64>) {
    let (c, n) = (f.len(), f[0].len());
    let mut pi = vec![vec![0.0; n]; c];
    let mut lse = vec![0.0; n];
    for i in 0..n {
        let m = (0..c).map(|k| f[k][i]).fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = (0..c).map(|k| (f[k][i] - m).exp()).sum();
        lse[i] = m + s.ln();
        for k in 0..c {
            pi[k][i] = (f[k][i] - lse[i]).exp();
        }
    }
    (pi, lse)
}

/// One-hot targets `y_c` (class-major) from class indices.
pub(crate) fn one_hot(y: &[usize], classes: usize) -> Vec<Vec<f64>> {
    (0..classes)
        .map(|c| y.iter().map(|&k| f64::from(k == c)).collect())
        .collect()
}

/// `Ψ(f) = −½ aᵀf + yᵀf − Σ_i ln Σ_c exp f_ic` (GPML eq. 3.42 with `f = K a`).
fn psi(y: &[usize], a: &[Vec<f64>], f: &[Vec<f64>]) -> f64 {
    let (_, lse) = softmax(f);
    let quad: f64 = a.iter().zip(f).map(|(a, f)| linalg::dot(a, f)).sum();
    let fit: f64 = y.iter().enumerate().map(|(i, &k)| f[k][i] - lse[i]).sum();
    -0.5 * quad + fit
}

/// The factors of the Laplace posterior at one π: `chol(B_c)`, `E_c` and `chol(Σ_c E_c)`.
#[derive(Clone, Debug)]
pub struct Coupling {
    /// `√π_c` per class.
    pub sqrt_pi: Vec<Vec<f64>>,
    /// `L_c = chol(I + D_c½ K D_c½)` per class.
    pub chol_b: Vec<Cholesky>,
    /// `E_c = D_c½ B_c⁻¹ D_c½` per class (dense, symmetric).
    pub e: Vec<Mat<f64>>,
    /// `M = chol(Σ_c E_c)`.
    pub chol_m: Cholesky,
}

impl Coupling {
    /// The factors at class probabilities `pi` (class-major) for the prior covariance `k`.
    pub fn at(k: &Mat<f64>, pi: &[Vec<f64>]) -> Result<Self> {
        let n = k.nrows();
        let sqrt_pi: Vec<Vec<f64>> = pi
            .iter()
            .map(|p| p.iter().map(|v| v.max(0.0).sqrt()).collect())
            .collect();
        let mut chol_b = Vec::with_capacity(pi.len());
        let mut e = Vec::with_capacity(pi.len());
        let mut sum = crate::memory::try_zeros(n, n, "the softmax Laplace's Σ_c E_c")?;
        for s in &sqrt_pi {
            let chol = Cholesky::factor_filled(
                n,
                linalg::fill_site_b(k, s, 0.0),
                None,
                &JitterPolicy::default(),
                "I + D_c½KD_c½",
            )?;
            let mut ec = chol.inverse()?;
            for j in 0..n {
                for i in 0..n {
                    ec[(i, j)] *= s[i] * s[j];
                }
            }
            sum += &ec;
            chol_b.push(chol);
            e.push(ec);
        }
        let chol_m = Cholesky::factor(sum.as_ref(), &JitterPolicy::default(), "Σ_c E_c")?;
        Ok(Self {
            sqrt_pi,
            chol_b,
            e,
            chol_m,
        })
    }

    /// `ln |I + K W| = Σ_c ln|B_c| + ln|Σ_c E_c|` (module doc).
    pub fn ln_det_i_kw(&self) -> f64 {
        self.chol_b.iter().map(Cholesky::ln_det).sum::<f64>() + self.chol_m.ln_det()
    }

    /// Largest jitter any factor needed.
    pub fn jitter(&self) -> f64 {
        self.chol_b
            .iter()
            .map(Cholesky::jitter)
            .fold(self.chol_m.jitter(), f64::max)
    }

    /// `𝓡 v` with `𝓡 = W(I + KW)⁻¹ = E − E R (MMᵀ)⁻¹ Rᵀ E` (class-major vectors).
    pub fn r_times(&self, v: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let ev: Vec<Vec<f64>> = self
            .e
            .iter()
            .zip(v)
            .map(|(e, v)| linalg::mat_vec(e, v))
            .collect();
        let t = self.chol_m.solve_vec(&sum_classes(&ev));
        self.e
            .iter()
            .zip(ev)
            .map(|(e, ev)| {
                let et = linalg::mat_vec(e, &t);
                ev.iter().zip(&et).map(|(a, b)| a - b).collect()
            })
            .collect()
    }
}

/// `Σ_c v_c`.
fn sum_classes(v: &[Vec<f64>]) -> Vec<f64> {
    let mut s = vec![0.0; v[0].len()];
    for vc in v {
        for (a, b) in s.iter_mut().zip(vc) {
            *a += b;
        }
    }
    s
}

/// Everything at the mode that the posterior and the evidence gradient need.
#[derive(Clone, Debug)]
pub struct SoftmaxMode {
    /// The shared prior covariance `K` of the training inputs.
    pub k: Mat<f64>,
    /// Class indices of the training points.
    pub y: Vec<usize>,
    /// `a = K⁻¹ f̂` per class (`= y_c − π̂_c` at the mode).
    pub a: Vec<Vec<f64>>,
    /// The mode `f̂` per class.
    pub f: Vec<Vec<f64>>,
    /// `π̂ = softmax(f̂)` per class.
    pub pi: Vec<Vec<f64>>,
    /// The factors at `π̂`.
    pub coupling: Coupling,
    /// `ln q(y|X,θ) = Ψ(f̂) − ½ ln|I + KW|`.
    pub ln_evidence: f64,
    /// How Newton went.
    pub report: ConvergenceReport,
}

/// The full Newton step's `a` from `f` (GPML Alg. 3.3 l. 5–11): `b = Wf + y − π`,
/// `a = b − 𝓡 K b`; with the factors at `f` for the caller to reuse.
fn newton_a(k: &Mat<f64>, y1: &[Vec<f64>], f: &[Vec<f64>]) -> Result<(Vec<Vec<f64>>, Coupling)> {
    let (pi, _) = softmax(f);
    let coupling = Coupling::at(k, &pi)?;
    let n = k.nrows();
    // (D − ΠΠᵀ) f: π_c ∘ f_c − π_c ∘ Σ_c' π_c' ∘ f_c'.
    let pf: Vec<f64> = (0..n)
        .map(|i| (0..f.len()).map(|c| pi[c][i] * f[c][i]).sum())
        .collect();
    let b: Vec<Vec<f64>> = (0..f.len())
        .map(|c| {
            (0..n)
                .map(|i| pi[c][i] * (f[c][i] - pf[i]) + y1[c][i] - pi[c][i])
                .collect()
        })
        .collect();
    let kb: Vec<Vec<f64>> = b.iter().map(|b| linalg::mat_vec(k, b)).collect();
    let rkb = coupling.r_times(&kb);
    let a = b
        .iter()
        .zip(&rkb)
        .map(|(b, r)| b.iter().zip(r).map(|(b, r)| b - r).collect())
        .collect();
    Ok((a, coupling))
}

/// `x + t (z − x)` for class-major vectors.
fn lerp(x: &[Vec<f64>], z: &[Vec<f64>], t: f64) -> Vec<Vec<f64>> {
    x.iter()
        .zip(z)
        .map(|(x, z)| x.iter().zip(z).map(|(x, z)| x + t * (z - x)).collect())
        .collect()
}

/// Newton's method for the mode of the softmax posterior (GPML Alg. 3.3) on the prior
/// covariance `k` and class indices `y` of `classes` classes, with step halving on Ψ. With
/// `f0` (a mode at nearby hyperparameters) the first step is taken from `f0` and kept when
/// it beats `a = 0`.
pub fn find_mode(
    k: Mat<f64>,
    y: &[usize],
    classes: usize,
    cfg: &SoftmaxConfig,
    f0: Option<&[Vec<f64>]>,
) -> Result<SoftmaxMode> {
    let n = y.len();
    if k.nrows() != n || classes < 2 || y.iter().any(|&c| c >= classes) {
        return Err(Error::ShapeMismatch {
            what: "softmax Laplace problem",
            expected: format!("{n}×{n} kernel, {n} labels in 0..{classes}, at least 2 classes"),
            found: format!("{}×{} kernel", k.nrows(), k.ncols()),
        });
    }
    let y1 = one_hot(y, classes);
    let (mut a, mut f) = (vec![vec![0.0; n]; classes], vec![vec![0.0; n]; classes]);
    let mut obj = psi(y, &a, &f);
    let mut jitter = 0.0f64;
    let warm_steps = usize::from(f0.is_some());
    if let Some(f0) = f0 {
        if f0.len() != classes
            || f0
                .iter()
                .any(|v| v.len() != n || v.iter().any(|x| !x.is_finite()))
        {
            return Err(Error::ShapeMismatch {
                what: "softmax Laplace warm start",
                expected: format!("{classes} classes × {n} finite values"),
                found: format!("{} classes", f0.len()),
            });
        }
        let (a1, c) = newton_a(&k, &y1, f0)?;
        jitter = c.jitter();
        let f1: Vec<Vec<f64>> = a1.iter().map(|a| linalg::mat_vec(&k, a)).collect();
        let obj1 = psi(y, &a1, &f1);
        if obj1 > obj {
            (a, f, obj) = (a1, f1, obj1);
        }
    }
    let (mut status, mut iterations, mut change) =
        (ConvergenceStatus::MaxIterations, 0, f64::INFINITY);
    for it in 0..cfg.max_iter {
        iterations = warm_steps + it + 1;
        let (a_new, c) = newton_a(&k, &y1, &f)?;
        jitter = jitter.max(c.jitter());
        let f_new: Vec<Vec<f64>> = a_new.iter().map(|a| linalg::mat_vec(&k, a)).collect();
        let mut step = 1.0;
        let (mut a_try, mut f_try, mut obj_try);
        loop {
            a_try = lerp(&a, &a_new, step);
            f_try = lerp(&f, &f_new, step);
            obj_try = psi(y, &a_try, &f_try);
            if obj_try >= obj - 1e-12 * obj.abs() || step < 1e-6 {
                break;
            }
            step *= 0.5;
        }
        change = (obj_try - obj).abs();
        (a, f, obj) = (a_try, f_try, obj_try);
        if change < cfg.tol && step == 1.0 {
            status = ConvergenceStatus::Converged;
            break;
        }
    }
    // The factors at f̂ itself (ln|I + KW| is not stationary in f).
    let (pi, _) = softmax(&f);
    let coupling = Coupling::at(&k, &pi)?;
    jitter = jitter.max(coupling.jitter());
    let ln_evidence = obj - 0.5 * coupling.ln_det_i_kw();
    if !ln_evidence.is_finite() {
        return Err(Error::Numerical {
            what: "softmax Laplace log evidence",
            message: format!("non-finite value {ln_evidence}"),
        });
    }
    Ok(SoftmaxMode {
        k,
        y: y.to_vec(),
        a,
        f,
        pi,
        coupling,
        ln_evidence,
        report: ConvergenceReport {
            status,
            iterations,
            final_change: change,
            jitter_used: jitter,
            notes: vec![],
        },
    })
}

/// Class indices from targets coded `0..K` as numbers (checked: whole, in range).
pub fn class_indices(y: &[f64], classes: usize) -> Result<Vec<usize>> {
    crate::multiclass::check_labels(y, classes)?;
    Ok(y.iter().map(|v| *v as usize).collect())
}

#[cfg(test)]
mod tests;
