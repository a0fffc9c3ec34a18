//! Naive mean field's linear-response leave-one-out functions at any input: seed 001
//! eqs. 17.41–17.42 read at a new x instead of at `x_l`, as [`crate::svm::loo::SvmLooFunctions`]
//! reads eqs. 17.29/17.31 for the SVM.
//!
//! **Derivation** (the argument of §17.5, applied to the mean-field equations). With
//! `k = K + vI` on the training points, removing example l sets `α_l → 0`; every other
//! strength answers to its cavity field `h_j = ⟨f_j⟩ − k_jj y_j α_j` through eq. 17.40, to first
//! order `y_j δα_j = −λ_j δ⟨f_j⟩` with `λ_j = 1/Ω_j` (eq. 17.42 in its general-κ form,
//! [`super::mean_field_response`]). With `u = y ∘ δα` (`u_l = −y_l α_l`) the fields move by
//! `δ⟨f⟩ = k u` (eq. 17.35), so `u_{∖l} = −Λ(I + k_{∖l}Λ)⁻¹ k_{∖l,l} u_l`, and at any x
//!
//! `f^{\l}(x) − f(x) = u_l [k(x, x_l) − k_{x,∖l} Λ(I + k_{∖l}Λ)⁻¹ k_{∖l,l}] = u_l Σ(x, x_l)/(1 − λ_l s_l)`,
//!
//! where `Σ(x, X) = k_xX (I + ΛK)⁻¹` is the covariance of a Gaussian with prior `k` and site
//! precisions Λ on every example, `s_l = Σ_ll`, and the division removes site l from it (a
//! rank-one downdate; `λ_l = 0` divides by 1). At `x = x_l` (with `k_ll` noisy) this is
//! eq. 17.41: `y_l f^{\l}(x_l) = y_l⟨f_l⟩ − α_l s_l/(1 − λ_l s_l)`. At a new x the cross-kernel
//! is noise-free (the input noise is per example), and so is `f(x) = Σ_j k(x, x_j) y_j α_j`;
//! at a training input read as a new one the two noise terms cancel, and the function gives
//! eq. 17.41's value again. One LU of `I + KΛ` serves both (`O(N³)`); each input then costs a
//! solve, `O(N²)`.

use faer::{Mat, MatRef};

use super::linear_response::{check_len, response, solution_diagonal};
use super::LooClassification;
use crate::error::{Error, Result};
use crate::inference::mean_field::{noisy_gram, MeanFieldFit};
use crate::kernel::Kernel;
use crate::linalg::Lu;

/// The linear-response leave-one-out functions `f^{\l}(x)` of a naive mean-field fit (module
/// doc): its training margins (eq. 17.41, what `certify` reports) and their shifts at any x.
pub struct MeanFieldLooFunctions {
    kernel: Kernel,
    /// The training inputs (the posterior's basis).
    x: Mat<f64>,
    /// `y_l α_l`, the signed embedding strengths (eq. 17.35).
    strengths: Vec<f64>,
    /// `λ_l = 1/Ω_l` (eq. 17.42).
    lambda: Vec<f64>,
    /// `s_l = [(I + KΛ)⁻¹K]_ll`.
    s: Vec<f64>,
    /// The factor of `I + KΛ`.
    lu: Lu,
    /// `y_l f^{\l}(x_l)` (eq. 17.41).
    margins: Vec<f64>,
}

impl MeanFieldLooFunctions {
    /// The leave-one-out functions of `mf`, trained on the labels `y`: one LU of `I + KΛ`.
    /// Memory: `K` and the factor (both `N × N`, fallible); the diagonal's solve overwrites `K`
    /// by blocks of columns.
    pub fn new(mf: &MeanFieldFit, y: &[f64]) -> Result<Self> {
        check_len(mf, y)?;
        let post = &mf.fit.posterior;
        let mut kn = noisy_gram(post.kernel(), post.basis.as_ref(), mf.input_noise)?;
        let lambda = response(mf, &kn, y)?;
        let n = y.len();
        let m = crate::memory::try_from_fn(n, n, "I + KΛ", |i, j| {
            kn[(i, j)] * lambda[j] + if i == j { 1.0 } else { 0.0 }
        })?;
        let lu = Lu::factor(m, "I + KΛ")?;
        let s = solution_diagonal(&lu, &mut kn)?;
        let margins: Vec<f64> = (0..n)
            .map(|i| {
                // seed 001 eq. 17.41
                y[i] * mf.mean_activation[i] - mf.alpha_mf[i] * s[i] / (1.0 - lambda[i] * s[i])
            })
            .collect();
        if let Some(i) = margins.iter().position(|m| !m.is_finite()) {
            return Err(Error::Numerical {
                what: "mean-field linear-response LOO",
                message: format!("non-finite LOO margin at example {i} (singular Ω + K)"),
            });
        }
        Ok(Self {
            kernel: post.kernel().clone(),
            x: post.basis.clone(),
            strengths: y.iter().zip(&mf.alpha_mf).map(|(y, a)| y * a).collect(),
            lambda,
            s,
            lu,
            margins,
        })
    }

    /// The margins `y_l f^{\l}(x_l)` at the training inputs (eq. 17.41).
    pub fn training_margins(&self) -> &[f64] {
        &self.margins
    }

    /// `f^{\l}(x_j) − f(x_j)` for every training example l (row) and input `x_j` of `xs`
    /// (column): `−y_l α_l [(I + KΛ)⁻¹k_X(x_j)]_l/(1 − λ_l s_l)` (module doc). `O(N²)` per input.
    pub fn shifts(&self, xs: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let cross = self.kernel.cross(self.x.as_ref(), xs)?;
        let mut w = self.lu.solve(cross.as_ref(), "(I + KΛ)⁻¹k(X, x)")?;
        for l in 0..w.nrows() {
            let scale = -self.strengths[l] / (1.0 - self.lambda[l] * self.s[l]);
            for j in 0..w.ncols() {
                w[(l, j)] *= scale;
            }
        }
        Ok(w)
    }
}

/// Linear-response leave-one-out estimate for naive mean field (seed 001 eqs. 17.41–17.42):
///
/// `y_i f_i^{\i} = y_i⟨f_i⟩ − {1/[(Ω + K)⁻¹]_ii − Ω_i} α_i`,
///
/// evaluated without dividing by Ω (which is infinite where α_i does not respond) through the
/// Woodbury identity `1/[(Ω + K)⁻¹]_ii − Ω_i = s_i/(1 − λ_i s_i)` with `Λ = Ω⁻¹` and
/// `s_i = [(K⁻¹ + Λ)⁻¹]_ii = [(I + KΛ)⁻¹K]_ii` (one LU, `O(N³)`; `K` here is `K + vI`):
/// the training margins of [`MeanFieldLooFunctions`]. `y` must be the labels the fit was
/// trained on.
pub fn mean_field_loo(mf: &MeanFieldFit, y: &[f64]) -> Result<LooClassification> {
    let functions = MeanFieldLooFunctions::new(mf, y)?;
    Ok(LooClassification::from_margins(
        functions.training_margins().to_vec(),
        0,
    ))
}
