//! Naive mean field for GP classification (Opper & Winther, seed 001 §17.6, Algorithm 17.1),
//! with output (flip) noise κ and input noise v.
//!
//! **Model.** Labels `y_i ∈ {±1}`, likelihood `κ + (1 − 2κ)Θ(y f)` (seed 001 eq. 17.17,
//! [`Likelihood::FlipNoise`]); Gaussian input noise of variance v is folded into the prior on
//! the training points, `K + vI` (eq. 17.16; equivalently the probit `Φ(yf/√v)` likelihood on the
//! noise-free process, eq. 17.15). Below `k_ij` denotes `(K + vI)_ij`.
//!
//! **Mean field equations.** The posterior mean activation is `⟨f_i⟩ = Σ_j k_ij y_j α_j`
//! (eq. 17.35) with embedding strengths (eq. 17.40)
//!
//! `α_i = (1/√k_ii) (1 − 2κ) D(z_i) / (κ + (1 − 2κ) Φ(z_i))`,
//! `z_i = y_i (⟨f_i⟩ − k_ii y_i α_i)/√k_ii`,
//!
//! which is `y_i ∂ln Z_i/∂m_i` for the tilted moments `Z_i` of the likelihood at the naive
//! cavity `N(m_i, k_ii)`, `m_i = ⟨f_i⟩ − k_ii y_i α_i`. The equations are solved by the
//! parallel iteration of Algorithm 17.1 from `α = 0` with learning rate η (start 0.05,
//! `η ← 1.1η` when the error `Σ_i δα_i²` went down since the last step, `η ← η/2` otherwise;
//! the rate is adapted before it is applied), stopping when `max_i δα_i² < ftol`. Cost
//! `O(N²)` per iteration (one product with `K + vI`).
//!
//! **Gaussian Q for the certificate** (docs/math.md §7.5). Naive mean field gives means but no
//! covariance. We attach the covariance its own cavities imply: the tilted moments at the
//! cavity `N(m_i, k_ii)` give `d1 = ∂ln Z/∂m`, `d2 = ∂²ln Z/∂m²`; the EP/ADF site algebra gives
//! a Gaussian site on the noisy value `f_i + ξ_i` of precision `π̃_i = −d2/(1 + d2 k_ii)`.
//! Integrating out `ξ_i ~ N(0, v)` turns it into a site on the noise-free `f_i` of precision
//! `π_i = π̃_i/(1 + v π̃_i) = −d2/(1 + d2 K_ii)` (for v = 0 the two agree). The posterior is
//! the shared [`GaussianPosterior`] over the noise-free latent f, with
//! `α = y ∘ α_mf` (so its mean is `Σ_j k(x, x_j) y_j α_j`, eq. 17.35) and
//! `Covariance::Sites { √π, chol(I + Π½ K Π½) }`. At a training point its mean is the
//! noise-free `⟨f_i⟩ − v y_i α_i`, i.e. the mean-field `⟨f_i⟩` when v = 0. A site precision
//! that comes out negative or non-finite (possible for κ > 0, where ln Z is not concave) is
//! set to 0 and counted in the report's notes. The certified hypothesis is `sgn f`; κ is part
//! of the data model only ([`Likelihood::bias_and_slope`] is `(0, None)`). A fitted model's
//! class probabilities at new inputs add v to the latent variance (the new label sees
//! `f + ξ` too).

use faer::{Mat, MatRef};

use super::{check_classification, ClassifierFit, ConvergenceReport, ConvergenceStatus};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::{Likelihood, TiltedMoments};
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::GaussianPosterior;

mod method;
pub use method::MeanFieldSpec;

/// Settings of [`mean_field`] (defaults: seed 001 Algorithm 17.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanFieldConfig {
    /// Input-noise variance v ≥ 0 added to the Gram diagonal (seed 001 eq. 17.16).
    pub input_noise: f64,
    /// Initial learning rate η (seed: 0.05).
    pub learning_rate: f64,
    /// Stop when `max_i |δα_i|² < ftol` (seed: 1e-5).
    pub ftol: f64,
    /// Iteration budget; running out is reported as `MaxIterations`, not an error.
    pub max_iter: usize,
}

impl Default for MeanFieldConfig {
    fn default() -> Self {
        Self {
            input_noise: 0.0,
            learning_rate: 0.05,
            ftol: 1e-5,
            max_iter: 1000,
        }
    }
}

impl MeanFieldConfig {
    /// Typed errors for v < 0, η ≤ 0, ftol ≤ 0 (or non-finite) and a zero budget.
    pub fn validate(&self) -> Result<()> {
        let bad = |name, value, reason| {
            Err(Error::InvalidParameter {
                name,
                value,
                reason,
            })
        };
        if !(self.input_noise >= 0.0 && self.input_noise.is_finite()) {
            return bad(
                "input noise variance v",
                self.input_noise,
                "must be ≥ 0 and finite",
            );
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return bad(
                "mean-field learning rate",
                self.learning_rate,
                "must be positive and finite",
            );
        }
        if !(self.ftol > 0.0 && self.ftol.is_finite()) {
            return bad("mean-field ftol", self.ftol, "must be positive and finite");
        }
        if self.max_iter == 0 {
            return bad("mean-field max_iter", 0.0, "must be at least 1");
        }
        Ok(())
    }
}

/// A naive mean-field fit: the shared classifier fit plus the mean-field quantities.
#[derive(Clone, Debug)]
pub struct MeanFieldFit {
    /// Posterior (Gaussian Q built from the mean-field cavities), report, no evidence.
    pub fit: ClassifierFit,
    /// The seed's embedding strengths `α_i ≥ 0` (eq. 17.40).
    pub alpha_mf: Vec<f64>,
    /// Mean activations `⟨f_i⟩ = Σ_j (K + vI)_ij y_j α_j` of the (noisy) process (eq. 17.35).
    pub mean_activation: Vec<f64>,
    /// Flip probability κ of the likelihood.
    pub kappa: f64,
    /// Input-noise variance v that was added to the Gram diagonal.
    pub input_noise: f64,
}

/// κ of a flip-noise likelihood (validated), or a typed error for any other likelihood.
fn flip_kappa(lik: &Likelihood) -> Result<f64> {
    match *lik {
        Likelihood::FlipNoise { kappa } => {
            Likelihood::flip_noise(kappa)?;
            Ok(kappa)
        }
        _ => Err(Error::Unsupported(format!(
            "naive mean field (seed 001) is implemented for the flip-noise/step likelihood, not {}",
            lik.name()
        ))),
    }
}

/// `K + vI` (seed 001 eq. 17.16).
pub(crate) fn noisy_gram(kernel: &Kernel, x: MatRef<'_, f64>, v: f64) -> Result<Mat<f64>> {
    let mut k = kernel.gram(x)?;
    for i in 0..k.nrows() {
        k[(i, i)] += v;
    }
    Ok(k)
}

/// Tilted moments at the naive cavity `N(⟨f_i⟩ − k_ii y_i α_i, k_ii)` (seed 001 eq. 17.39–17.40).
pub(crate) fn cavity_moments(
    lik: &Likelihood,
    y: f64,
    mean: f64,
    k_ii: f64,
    alpha: f64,
) -> Result<TiltedMoments> {
    lik.tilted_moments(y, mean - k_ii * y * alpha, k_ii)
}

/// `⟨f⟩ = K (y ∘ α)` (seed 001 eq. 17.35).
fn activations(kn: &Mat<f64>, y: &[f64], alpha: &[f64]) -> Vec<f64> {
    let ya: Vec<f64> = y.iter().zip(alpha).map(|(y, a)| y * a).collect();
    linalg::mat_vec(kn, &ya)
}

/// Outcome of the Algorithm 17.1 iteration.
struct Solution {
    alpha: Vec<f64>,
    status: ConvergenceStatus,
    iterations: usize,
    max_sq_change: f64,
    learning_rate: f64,
}

/// Seed 001 Algorithm 17.1 on the (noisy) Gram matrix `kn`, from `alpha0` (tabula rasa
/// `α = 0` when `None`).
fn iterate(
    kn: &Mat<f64>,
    y: &[f64],
    lik: &Likelihood,
    cfg: &MeanFieldConfig,
    alpha0: Option<&[f64]>,
) -> Result<Solution> {
    let n = y.len();
    let mut alpha = alpha0.map_or_else(|| vec![0.0; n], <[f64]>::to_vec);
    let mut eta = cfg.learning_rate;
    let mut prev_err = f64::INFINITY;
    let mut delta = vec![0.0; n];
    for it in 1..=cfg.max_iter {
        let f = activations(kn, y, &alpha);
        for i in 0..n {
            // seed 001 Alg. 17.1: δα_i = α_i(z_i) − α_i, α_i(z) = y_i ∂ln Z/∂m (eq. 17.40).
            let t = cavity_moments(lik, y[i], f[i], kn[(i, i)], alpha[i])?;
            delta[i] = y[i] * t.d1 - alpha[i];
        }
        let err: f64 = delta.iter().map(|d| d * d).sum();
        let max_sq = delta.iter().fold(0.0f64, |m, d| m.max(d * d));
        if !err.is_finite() {
            return Err(Error::Numerical {
                what: "naive mean field",
                message: format!("non-finite update at iteration {it}"),
            });
        }
        // seed 001 §17.6: η ← 1.1η if the error Σ|δα|² decreased, else η ← η/2.
        eta = if err < prev_err { 1.1 * eta } else { 0.5 * eta };
        prev_err = err;
        for (a, d) in alpha.iter_mut().zip(&delta) {
            *a += eta * d;
        }
        if max_sq < cfg.ftol {
            return Ok(Solution {
                alpha,
                status: ConvergenceStatus::Converged,
                iterations: it,
                max_sq_change: max_sq,
                learning_rate: eta,
            });
        }
        if it == cfg.max_iter {
            return Ok(Solution {
                alpha,
                status: ConvergenceStatus::MaxIterations,
                iterations: it,
                max_sq_change: max_sq,
                learning_rate: eta,
            });
        }
    }
    unreachable!("max_iter ≥ 1 is validated")
}

/// Solve the naive mean-field equations (seed 001 Algorithm 17.1) for the flip-noise
/// likelihood `lik` (κ = 0: [`Likelihood::heaviside`]) with input noise `cfg.input_noise`,
/// and attach the Gaussian Q described in the module doc.
///
/// Errors: a likelihood other than [`Likelihood::FlipNoise`] (`Unsupported`), κ ∉ [0, ½),
/// v < 0 or another bad setting (`InvalidParameter`), labels not ±1 with both classes,
/// non-finite inputs, shape mismatches.
pub fn mean_field(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &MeanFieldConfig,
) -> Result<MeanFieldFit> {
    solve(kernel, lik, x, y, cfg, None)
}

/// [`mean_field`] with Algorithm 17.1 started from the embedding strengths `alpha0` (e.g.
/// those of a fit on a superset of the data, for leave-one-out refits) instead of `α = 0`.
/// `alpha0` must have one finite entry per training point.
pub fn mean_field_warm(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &MeanFieldConfig,
    alpha0: &[f64],
) -> Result<MeanFieldFit> {
    if alpha0.len() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "mean-field warm start",
            expected: format!("{} embedding strengths", y.len()),
            found: format!("{}", alpha0.len()),
        });
    }
    if let Some(&a) = alpha0.iter().find(|a| !a.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "mean-field warm-start strength",
            value: a,
            reason: "must be finite",
        });
    }
    solve(kernel, lik, x, y, cfg, Some(alpha0))
}

fn solve(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &MeanFieldConfig,
    alpha0: Option<&[f64]>,
) -> Result<MeanFieldFit> {
    let kappa = flip_kappa(lik)?;
    cfg.validate()?;
    check_classification(x, y, lik)?;
    kernel.check_input_dim(x.ncols())?;
    let n = y.len();
    let v = cfg.input_noise;
    let kn = noisy_gram(kernel, x, v)?;
    if let Some(i) = (0..n).find(|&i| !(kn[(i, i)] > 0.0)) {
        return Err(Error::InvalidParameter {
            name: "prior variance k_ii + v",
            value: kn[(i, i)],
            reason: "naive mean field needs a positive prior variance at every training point",
        });
    }
    let sol = iterate(&kn, y, lik, cfg, alpha0)?;
    let mean_activation = activations(&kn, y, &sol.alpha);

    // Gaussian Q: site precisions from the mean-field cavities (module doc).
    let mut clipped = 0usize;
    let mut sqrt_pi = vec![0.0; n];
    for i in 0..n {
        let t = cavity_moments(lik, y[i], mean_activation[i], kn[(i, i)], sol.alpha[i])?;
        let k_ii = kn[(i, i)] - v;
        let pi = -t.d2 / (1.0 + t.d2 * k_ii); // EP/ADF site algebra, ξ integrated out
        if pi >= 0.0 && pi.is_finite() {
            sqrt_pi[i] = pi.sqrt();
        } else {
            clipped += 1;
        }
    }
    let mut b = kernel.gram(x)?;
    for j in 0..n {
        for i in 0..n {
            b[(i, j)] *= sqrt_pi[i] * sqrt_pi[j];
        }
        b[(j, j)] += 1.0;
    }
    let chol_b = Cholesky::factor(b.as_ref(), &JitterPolicy::default(), "I + Π½KΠ½")?;

    let mut notes = vec![format!(
        "naive mean field: kappa = {kappa}, input noise v = {v}, final learning rate {:.4}",
        sol.learning_rate
    )];
    if clipped > 0 {
        notes.push(format!(
            "{clipped} site precisions from the mean-field cavities were negative and set to 0"
        ));
    }
    let alpha = y.iter().zip(&sol.alpha).map(|(y, a)| y * a).collect();
    let jitter = chol_b.jitter();
    Ok(MeanFieldFit {
        fit: ClassifierFit {
            posterior: GaussianPosterior::sites(
                kernel.clone(),
                x.to_owned(),
                alpha,
                sqrt_pi,
                chol_b,
            ),
            ln_evidence: None,
            basis_indices: None,
            report: ConvergenceReport {
                status: sol.status,
                iterations: sol.iterations,
                final_change: sol.max_sq_change,
                jitter_used: jitter,
                notes,
            },
        },
        alpha_mf: sol.alpha,
        mean_activation,
        kappa,
        input_noise: v,
    })
}
