//! A regressor's joint predictive at several inputs: the covariance of new observations
//! between test points and seeded draws from it (scikit-learn's `predict(return_cov=True)` and
//! `sample_y`), in the target's units; and before any data, the GP prior's predictive
//! ([`PriorPredictive`], scikit-learn's `predict` and `sample_y` on an unfitted regressor).

use faer::{Mat, MatRef};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::FittedModel;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{Cholesky, JitterPolicy};
use crate::posterior::Prior;

impl FittedModel {
    /// Predictive mean and joint covariance of new observations at raw inputs, in the
    /// target's units: `sd²·(K** − k*ᵀRk* + σ²I)` (the latent covariance of
    /// [`crate::posterior::GaussianPosterior::covariance`] at `(x, x)`, made exactly symmetric, plus the noise on the diagonal;
    /// its diagonal is `predict_regression`'s `noisy_var`).
    pub fn predict_regression_cov(&self, x: MatRef<'_, f64>) -> Result<(Vec<f64>, Mat<f64>)> {
        let (noise, ys) = self.regression_parts()?;
        let xs = self.standardised_inputs(x)?;
        let mean = self.posterior()?.predict(xs.as_ref())?.mean;
        let mut cov = self.posterior()?.covariance(xs.as_ref(), xs.as_ref())?;
        symmetrise(&mut cov);
        for i in 0..cov.nrows() {
            cov[(i, i)] += noise;
        }
        // In place: a second N*×N* matrix is what a large test set cannot afford.
        let s2 = ys.unscale_var(1.0);
        for j in 0..cov.ncols() {
            cov.col_as_slice_mut(j).iter_mut().for_each(|c| *c *= s2);
        }
        Ok((mean.iter().map(|m| ys.unscale_mean(*m)).collect(), cov))
    }

    /// `n_samples` joint draws of new observations at raw inputs (one column per draw, one
    /// row per input), `mean + L z` with `L Lᵀ` the predictive covariance and `z` standard
    /// normal from a ChaCha8 generator seeded by `seed`; with the jitter the factor needed.
    pub fn sample_regression(
        &self,
        x: MatRef<'_, f64>,
        n_samples: usize,
        seed: u64,
    ) -> Result<(Mat<f64>, f64)> {
        let (mean, cov) = self.predict_regression_cov(x)?;
        draw_joint(&mean, cov.as_ref(), n_samples, seed)
    }
}

/// The predictive of new observations under the GP prior alone, before any data:
/// `y ~ N(0, K_θ(X, X) + σ²I)` at the inputs as given (no standardisation: nothing has been
/// seen to standardise by). What scikit-learn's `GaussianProcessRegressor` predicts before
/// `fit`, with σ² its kernel's `WhiteKernel` level (0 without one).
#[derive(Clone, Debug)]
pub struct PriorPredictive {
    /// The GP prior `GP(0, k_θ)`.
    prior: Prior,
    /// Observation noise variance σ² added to every new observation.
    noise_variance: f64,
}

impl PriorPredictive {
    /// The prior predictive of `kernel` (at its θ) with noise variance σ² (finite, ≥ 0).
    pub fn new(kernel: Kernel, noise_variance: f64) -> Result<Self> {
        if !(noise_variance.is_finite() && noise_variance >= 0.0) {
            return Err(Error::InvalidParameter {
                name: "noise_variance",
                value: noise_variance,
                reason: "must be finite and non-negative",
            });
        }
        Ok(Self {
            prior: Prior::Gp(kernel),
            noise_variance,
        })
    }

    /// Mean (0) and variance `k(x, x) + σ²` of a new observation at each row of `x`.
    pub fn mean_var(&self, x: MatRef<'_, f64>) -> Result<(Vec<f64>, Vec<f64>)> {
        let var = self.prior.diag(x)?;
        let noisy = var.iter().map(|v| v + self.noise_variance).collect();
        Ok((self.prior.mean(x)?, noisy))
    }

    /// Mean (0) and joint covariance `K(X, X) + σ²I` of new observations at the rows of `x`.
    pub fn mean_cov(&self, x: MatRef<'_, f64>) -> Result<(Vec<f64>, Mat<f64>)> {
        let mut cov = self.prior.gram(x)?;
        symmetrise(&mut cov);
        for i in 0..cov.nrows() {
            cov[(i, i)] += self.noise_variance;
        }
        Ok((self.prior.mean(x)?, cov))
    }

    /// `n_samples` seeded joint draws at the rows of `x`, as
    /// [`FittedModel::sample_regression`] draws from a fitted model's predictive.
    pub fn sample(
        &self,
        x: MatRef<'_, f64>,
        n_samples: usize,
        seed: u64,
    ) -> Result<(Mat<f64>, f64)> {
        let (mean, cov) = self.mean_cov(x)?;
        draw_joint(&mean, cov.as_ref(), n_samples, seed)
    }
}

/// `n_samples` joint draws from `N(mean, cov)` (one column per draw): `mean + L z` with
/// `L Lᵀ = cov` (jitter as the default policy needs, returned) and `z` standard normal from a
/// ChaCha8 generator seeded by `seed`, drawn column by column so that a draw does not depend
/// on how many follow it.
fn draw_joint(
    mean: &[f64],
    cov: MatRef<'_, f64>,
    n_samples: usize,
    seed: u64,
) -> Result<(Mat<f64>, f64)> {
    let chol = Cholesky::factor(cov, &JitterPolicy::default(), "predictive covariance")?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = mean.len();
    // Draws column by column, so a draw does not depend on how many follow it.
    let mut z = crate::memory::try_zeros(n, n_samples, "standard normal draws")?;
    for j in 0..n_samples {
        for i in 0..n {
            z[(i, j)] = StandardNormal.sample(&mut rng);
        }
    }
    let lz = crate::linalg::try_product(chol.l(), z.as_ref(), "L z of the joint draws")?;
    let draws =
        crate::memory::try_from_fn(n, n_samples, "joint draws", |i, j| mean[i] + lz[(i, j)])?;
    Ok((draws, chol.jitter()))
}

/// `(C + Cᵀ)/2` in place: the covariance is symmetric up to round-off; a factor and the draws
/// want it exactly so.
fn symmetrise(c: &mut Mat<f64>) {
    for j in 0..c.ncols() {
        for i in 0..j {
            let v = 0.5 * (c[(i, j)] + c[(j, i)]);
            (c[(i, j)], c[(j, i)]) = (v, v);
        }
    }
}
