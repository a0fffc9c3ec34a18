//! Linear-response leave-one-out for naive mean field (seed 001 eqs. 17.41–17.42): the
//! change of the other embedding strengths on removing one example, to first order.

use crate::error::{Error, Result};
use crate::inference::mean_field::{cavity_moments, noisy_gram, MeanFieldFit};
use crate::likelihood::Likelihood;
use crate::linalg::Lu;
use faer::reborrow::ReborrowMut;
use faer::Mat;

/// The diagonal matrix Ω of seed 001 eq. 17.42, in its general-κ form
/// `Ω_i = −k_ii − √k_ii / α_i'(z_i) = k_ii (1 − c_i)/c_i` with `c_i = −k_ii ∂²ln Z_i/∂m²`
/// (the response of the embedding function, eq. 17.40, to its cavity field). For κ = 0,
/// `c_i = y_i α_i ⟨f_i⟩` and this is eq. 17.42 as printed. Returned as `λ_i = 1/Ω_i` (finite
/// where Ω_i is infinite, i.e. where α_i does not respond), with `k = K + vI`.
pub fn mean_field_response(mf: &MeanFieldFit, y: &[f64]) -> Result<Vec<f64>> {
    check_len(mf, y)?;
    let kn = noisy_gram(
        mf.fit.posterior.kernel(),
        mf.fit.posterior.basis.as_ref(),
        mf.input_noise,
    )?;
    response(mf, &kn, y)
}

/// One label per embedding strength.
pub(super) fn check_len(mf: &MeanFieldFit, y: &[f64]) -> Result<()> {
    if y.len() != mf.alpha_mf.len() {
        return Err(Error::ShapeMismatch {
            what: "labels for the mean-field LOO",
            expected: format!("{} labels", mf.alpha_mf.len()),
            found: format!("{}", y.len()),
        });
    }
    Ok(())
}

/// `λ_i = 1/Ω_i` of every example (eq. 17.42), from the noisy Gram matrix `kn`.
pub(super) fn response(mf: &MeanFieldFit, kn: &faer::Mat<f64>, y: &[f64]) -> Result<Vec<f64>> {
    let lik = Likelihood::flip_noise(mf.kappa)?;
    (0..y.len())
        .map(|i| {
            let k = kn[(i, i)];
            let t = cavity_moments(&lik, y[i], mf.mean_activation[i], k, mf.alpha_mf[i])?;
            let c = -k * t.d2;
            if !(c < 1.0 && c.is_finite()) {
                return Err(Error::Numerical {
                    what: "mean-field linear response",
                    message: format!("response c = {c:.4e} at example {i} (needs c < 1)"),
                });
            }
            Ok(c / (k * (1.0 - c))) // 1/Ω_i, seed 001 eq. 17.42
        })
        .collect()
}

/// Columns of `K` solved at a time: the solve's work space is `N ×` this many, not `N × N`.
const SOLVE_COLUMNS: usize = crate::linalg::PAR_THRESHOLD;

/// The diagonal of `(I + KΛ)⁻¹K`, solving `k` in place by blocks of [`SOLVE_COLUMNS`]
/// columns (each column's solve is independent of the others).
pub(super) fn solution_diagonal(lu: &Lu, k: &mut Mat<f64>) -> Result<Vec<f64>> {
    let n = k.ncols();
    let mut s = Vec::with_capacity(n);
    for start in (0..n).step_by(SOLVE_COLUMNS) {
        let width = SOLVE_COLUMNS.min(n - start);
        let mut block = k.as_mut().subcols_mut(start, width);
        lu.solve_in_place(block.rb_mut(), "(I + KΛ)⁻¹K")?;
        s.extend((0..width).map(|c| block[(start + c, c)]));
    }
    Ok(s)
}
