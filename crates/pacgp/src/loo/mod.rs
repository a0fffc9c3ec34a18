//! Leave-one-out estimates for every model, through one interface.
//!
//! - [`cavity`]: the cavity LOO written once against the shared posterior's site form
//!   (exact GP = GPML eq. 5.12, EP = LOO-EP, Laplace = LA-LOO of Vehtari et al. 2016, IVM), and
//!   the rank-one cavity of sparse regression (exact at fixed Z);
//! - [`closed_form`]: exact GP regression's closed form (GPML §5.4.2), its gradient and the
//!   LOO-CV objective;
//! - [`linear_response`]: naive mean field's linear-response LOO (seed 001 eqs. 17.41–17.42),
//!   and [`mean_field_functions`]: the same read at any input (jackknife+ sets);
//! - [`downdate`]: LOO predictions at new inputs by a rank-one downdate, of GP regression and
//!   of a classifier's Gaussian sites (Laplace, EP, IVM's active set, pac-gpc's trained
//!   sites): what jackknife+ needs
//!   ([`crate::conformal`]);
//! - [`inducing`]: the sparse variational classifier's, its rows' rank-one sites removed from
//!   `q(u)` (docs/math.md eqs. 12.6–12.7), at the training rows and at any input;
//! - [`softmax`]: the softmax Laplace posterior's, its rows' K-dimensional sites removed
//!   (docs/math.md eq. 10.1), at the training rows and at any input;
//! - [`refit`]: exact LOO by refitting any model, parallel and warm-started.
//!
//! [`classifier_loo`] and [`regression_loo`] are the entry points (`certify --loo
//! approx|exact|both`): a [`LooMode`] in, approximate and/or exact estimates out.
//! Classifier decisions are the model's own, `sgn(μ_{−i} + b)` with the probit's bias b.

use faer::MatRef;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::inference::mean_field::{MeanFieldConfig, MeanFieldFit};
use crate::inference::{ApproxLooKind, ClassifierFit, InferenceMethod};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::posterior::GaussianPosterior;
use crate::regression::exact::ExactGp;
use crate::regression::sparse::SparseGp;

pub mod cavity;
pub mod closed_form;
pub mod downdate;
pub mod inducing;
pub mod linear_response;
pub mod mean_field_functions;
pub mod refit;
pub mod softmax;

/// The classifier LOO tests' sample: distinct 2-d inputs (a scrambled grid, shifted along the
/// row index, so K is invertible) with labels of a noisy linear rule.
#[cfg(test)]
fn toy_classes(n: usize) -> (faer::Mat<f64>, Vec<f64>) {
    let x = faer::Mat::from_fn(n, 2, |i, j| {
        ((i * 17 + j * 29) % 41) as f64 / 20.0 - 1.0 + 0.013 * i as f64
    });
    let y = (0..n)
        .map(|i| {
            let s = x[(i, 0)] + 0.5 * x[(i, 1)] + 0.2 * ((i % 5) as f64 - 2.0);
            if s > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

pub use cavity::{site_cavities, sparse_gp_loo, training_cavities, LatentLoo};
pub use closed_form::{exact_gp_loo, exact_gp_loo_gradient, NegLooLogPredictive};
pub use downdate::{LooAtPoints, LooDowndate, TrainingLoo};
pub use inducing::{inducing_site_loo, InducingSiteLoo};
pub use linear_response::mean_field_response;
pub use mean_field_functions::{mean_field_loo, MeanFieldLooFunctions};
pub use refit::{
    classifier_exact_loo, classifier_refit_posteriors, exact_gp_refit_loo, refit_loo,
    sparse_gp_refit_loo, Refit,
};
pub use softmax::SoftmaxSiteLoo;

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Leave-one-out predictive marginals and their summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LooResult {
    /// `μ_{−i}`: prediction at `x_i` from the other N−1 points.
    pub mean: Vec<f64>,
    /// `σ²_{−i}`: predictive variance of `y_i` (noise included).
    pub var: Vec<f64>,
    /// `Σ_i ln p(y_i | X_{−i}, y_{−i})` (GPML eq. 5.11).
    pub log_predictive: f64,
}

impl LooResult {
    /// Gaussian LOO predictives `N(mean_i, var_i)` of `y` and their log predictive
    /// (GPML eq. 5.11).
    pub fn from_predictive(mean: Vec<f64>, var: Vec<f64>, y: &[f64]) -> Self {
        let log_predictive = (0..y.len())
            .map(|i| -0.5 * var[i].ln() - (y[i] - mean[i]).powi(2) / (2.0 * var[i]) - 0.5 * LN_2PI)
            .sum();
        Self {
            mean,
            var,
            log_predictive,
        }
    }

    /// Mean squared LOO error.
    pub fn mse(&self, y: &[f64]) -> f64 {
        self.mean
            .iter()
            .zip(y)
            .map(|(m, y)| (m - y).powi(2))
            .sum::<f64>()
            / y.len() as f64
    }

    /// ε-band LOO error: the fraction of points whose LOO mean misses `y_i` by more than ε
    /// (ε on the scale of `y`).
    pub fn band_error(&self, y: &[f64], epsilon: f64) -> f64 {
        let misses = self
            .mean
            .iter()
            .zip(y)
            .filter(|(m, y)| (*m - *y).abs() > epsilon)
            .count();
        misses as f64 / y.len().max(1) as f64
    }
}

/// Brute-force LOO: `fit_predict(train_idx, i)` refits on all points but `i` and returns the
/// predictive `(mean, variance)` at point `i`, for every `i` in parallel ([`refit_loo`]).
pub fn exact_loo_by_refit<F>(n: usize, fit_predict: F) -> Result<Vec<(f64, f64)>>
where
    F: Fn(&[usize], usize) -> Result<(f64, f64)> + Sync,
{
    let rows: Vec<usize> = (0..n).collect();
    refit_loo(n, &rows, fit_predict)
}

/// Leave-one-out decisions of a classifier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LooClassification {
    /// Examples whose LOO margin is ≤ 0 (ties count as errors).
    pub errors: usize,
    /// `errors / N`.
    pub rate: f64,
    /// LOO margins `y_i f_i^{\i}`, one per training example.
    pub loo_margins: Vec<f64>,
    /// Refits that stopped at their iteration budget (0 for closed-form estimates).
    pub not_converged: usize,
}

impl LooClassification {
    /// Count errors (margin ≤ 0) from the margins.
    pub fn from_margins(loo_margins: Vec<f64>, not_converged: usize) -> Self {
        let errors = loo_margins.iter().filter(|m| !(**m > 0.0)).count();
        Self {
            errors,
            rate: errors as f64 / loo_margins.len().max(1) as f64,
            loo_margins,
            not_converged,
        }
    }
}

/// Exact leave-one-out for naive mean field: N refits on N − 1 examples (from α = 0, as
/// Algorithm 17.1 starts), each predicting `f^{\i}(x_i) = Σ_{j≠i} k(x_i, x_j) y_j α_j^{\i}`
/// (eq. 17.24; the input noise is per example, so it does not enter `j ≠ i`). Refits that hit
/// the iteration budget are counted in `not_converged`.
pub fn mean_field_exact_loo(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &MeanFieldConfig,
) -> Result<LooClassification> {
    let rows: Vec<usize> = (0..y.len()).collect();
    let method = InferenceMethod::new(*cfg);
    classifier_exact_loo(&method, kernel, lik, x, y, &rows, None)
}

/// Which leave-one-out estimates to compute (`certify --loo approx|exact|both`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LooMode {
    /// The fast approximate estimate only (closed form, cavity or linear response).
    #[default]
    Approx,
    /// Exact LOO by N refits only.
    Exact,
    /// Both.
    Both,
}

impl LooMode {
    fn approx(self) -> bool {
        matches!(self, LooMode::Approx | LooMode::Both)
    }
    fn exact(self) -> bool {
        matches!(self, LooMode::Exact | LooMode::Both)
    }
}

/// How an approximate LOO estimate was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LooEstimator {
    /// Site-form cavities ([`cavity`]): LOO-EP, LA-LOO, IVM's cavities.
    Cavity,
    /// Naive mean field's linear response ([`linear_response`]).
    LinearResponse,
    /// A closed form that is exact at fixed hyperparameters (exact and sparse regression).
    ClosedForm,
    /// Refits: the model has no approximate LOO (SOGP), so the "approximate" estimate is the
    /// exact one.
    Refit,
    /// The sparse variational classifier's rows' sites removed from `q(u)` ([`inducing`]).
    InducingSites,
}

/// An approximate classifier LOO estimate and how it was made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApproxLoo {
    /// Cavity, linear response, or refits where the model has no approximation.
    pub estimator: LooEstimator,
    /// The LOO margins and error count.
    pub loo: LooClassification,
}

/// Leave-one-out estimates of a classifier (error = margin ≤ 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassifierLoo {
    /// The approximate estimate (with `LooMode::Approx | Both`).
    pub approx: Option<ApproxLoo>,
    /// Exact LOO by warm-started refits (with `LooMode::Exact | Both`).
    pub exact: Option<LooClassification>,
}

/// The approximate estimate the method has: cavities for the site-form methods (Laplace,
/// EP, IVM), linear response for mean field, `None` for SOGP (refits only).
fn approximate_classifier_loo(
    method: &InferenceMethod,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    fit: &ClassifierFit,
) -> Result<Option<ApproxLoo>> {
    match method.approximate_loo() {
        ApproxLooKind::LinearResponse => {
            let mf = mean_field_parts(fit, lik, y, method.input_noise())?;
            Ok(Some(ApproxLoo {
                estimator: LooEstimator::LinearResponse,
                loo: mean_field_loo(&mf, y)?,
            }))
        }
        ApproxLooKind::RefitsOnly => Ok(None),
        ApproxLooKind::SiteCavities => Ok(Some(cavity_loo(&training_cavities(fit, x)?, lik, y))),
    }
}

/// The cavity estimate from the latent cavities at the training rows: margins
/// `y_i(μ_{−i} + b)` with the likelihood's bias b.
fn cavity_loo(cav: &LatentLoo, lik: &Likelihood, y: &[f64]) -> ApproxLoo {
    let bias = lik.bias_and_slope().0;
    let margins = (0..y.len()).map(|i| y[i] * (cav.mean[i] + bias)).collect();
    ApproxLoo {
        estimator: LooEstimator::Cavity,
        loo: LooClassification::from_margins(margins, 0),
    }
}

/// The cavity leave-one-out of a site-form posterior over the training rows `y` labels
/// (pac-gpc's sites, trained by its bound: any `(α, π > 0)` is a product of Gaussian sites
/// with means `(α_i + π_i μ_i)/π_i`, so removing site i is the posterior without row i's
/// evidence, not refitted).
pub fn posterior_cavity_loo(
    post: &GaussianPosterior,
    lik: &Likelihood,
    y: &[f64],
) -> Result<ApproxLoo> {
    let cav = site_cavities(post)?;
    if cav.mean.len() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "labels for the cavity leave-one-out",
            expected: format!("{} labels (the posterior's basis)", cav.mean.len()),
            found: format!("{}", y.len()),
        });
    }
    Ok(cavity_loo(&cav, lik, y))
}

/// The mean-field quantities of a naive mean-field fit with input noise v, read back
/// from its posterior: `α_mf = y ∘ α`, `⟨f⟩ = (K + vI)(y ∘ α_mf) = Kα + vα`.
pub(crate) fn mean_field_parts(
    fit: &ClassifierFit,
    lik: &Likelihood,
    y: &[f64],
    input_noise: f64,
) -> Result<MeanFieldFit> {
    let Likelihood::FlipNoise { kappa } = *lik else {
        return Err(Error::Unsupported(format!(
            "naive mean field's LOO needs the flip-noise likelihood, not {}",
            lik.name()
        )));
    };
    let post = &fit.posterior;
    if post.alpha.len() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "labels for the mean-field LOO",
            expected: format!("{} labels", post.alpha.len()),
            found: format!("{}", y.len()),
        });
    }
    let v = input_noise;
    let k_alpha = crate::linalg::mat_vec(&post.kernel().gram(post.basis.as_ref())?, &post.alpha);
    Ok(MeanFieldFit {
        fit: fit.clone(),
        alpha_mf: y.iter().zip(&post.alpha).map(|(y, a)| y * a).collect(),
        mean_activation: (0..y.len())
            .map(|i| k_alpha[i] + v * post.alpha[i])
            .collect(),
        kappa,
        input_noise: v,
    })
}

/// Leave-one-out of a fitted GP classifier: `fit` is `method`'s fit with likelihood `lik`
/// on `(x, y)`. Approximate: cavities (Laplace, EP, IVM) or linear response (mean field);
/// SOGP has none and takes its refits (`LooEstimator::Refit`). Exact: N refits, warm-started
/// from `fit` where the method allows, in parallel.
pub fn classifier_loo(
    method: &InferenceMethod,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    fit: &ClassifierFit,
    mode: LooMode,
) -> Result<ClassifierLoo> {
    crate::inference::check_classification(x, y, lik)?;
    let mut approx = if mode.approx() {
        approximate_classifier_loo(method, lik, x, y, fit)?
    } else {
        None
    };
    let needs_refits = mode.exact() || (mode.approx() && approx.is_none());
    let exact = if needs_refits {
        let rows: Vec<usize> = (0..y.len()).collect();
        let kernel = &fit.posterior.kernel();
        Some(classifier_exact_loo(
            method,
            kernel,
            lik,
            x,
            y,
            &rows,
            Some(fit),
        )?)
    } else {
        None
    };
    if mode.approx() && approx.is_none() {
        approx = exact.clone().map(|loo| ApproxLoo {
            estimator: LooEstimator::Refit,
            loo,
        });
    }
    Ok(ClassifierLoo {
        approx,
        exact: if mode.exact() { exact } else { None },
    })
}

/// A fitted GP regressor at fixed hyperparameters, with what its LOO needs.
#[derive(Clone, Copy, Debug)]
pub enum RegressionModel<'a> {
    /// Exact GP regression (holds its training data).
    Exact(&'a ExactGp),
    /// Sparse GP regression (VFE/FITC/DTC) at fixed `(θ, σ², Z)` on `(x, y)`.
    Sparse {
        /// The sparse model.
        gp: &'a SparseGp,
        /// Training inputs.
        x: MatRef<'a, f64>,
        /// Training targets.
        y: &'a [f64],
    },
}

/// One regression LOO estimate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegressionLoo {
    /// LOO predictive means and variances (noise included) and the log predictive.
    pub loo: LooResult,
    /// ε-band LOO error: fraction of `|μ_{−i} − y_i| > ε`.
    pub band_error: f64,
    /// Refits that did not converge (0: regression refits are closed-form).
    pub not_converged: usize,
}

/// Leave-one-out estimates of a regressor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegressionLooReport {
    /// Closed form (exact at fixed hyperparameters; sparse: at fixed Z).
    pub approx: Option<RegressionLoo>,
    /// N refits at fixed hyperparameters.
    pub exact: Option<RegressionLoo>,
}

/// Leave-one-out of a GP regressor at fixed hyperparameters, with the ε-band error for
/// `epsilon` (on the scale of the model's targets). Approximate: GPML eq. 5.12 (exact GP) or
/// the rank-one cavity (sparse), both exact at fixed parameters; exact: N refits.
pub fn regression_loo(
    model: RegressionModel<'_>,
    epsilon: f64,
    mode: LooMode,
) -> Result<RegressionLooReport> {
    crate::loss::check_epsilon(epsilon)?;
    let y = match model {
        RegressionModel::Exact(gp) => gp.y(),
        RegressionModel::Sparse { y, .. } => y,
    };
    let rows: Vec<usize> = (0..y.len()).collect();
    let summarise = |loo: LooResult| RegressionLoo {
        band_error: loo.band_error(y, epsilon),
        loo,
        not_converged: 0,
    };
    let approx = if mode.approx() {
        Some(summarise(match model {
            RegressionModel::Exact(gp) => exact_gp_loo(gp)?,
            RegressionModel::Sparse { gp, x, y } => sparse_gp_loo(gp, x, y)?,
        }))
    } else {
        None
    };
    let exact = if mode.exact() {
        Some(summarise(match model {
            RegressionModel::Exact(gp) => exact_gp_refit_loo(gp, &rows)?,
            RegressionModel::Sparse { gp, x, y } => sparse_gp_refit_loo(gp, x, y, &rows)?,
        }))
    } else {
        None
    };
    Ok(RegressionLooReport { approx, exact })
}
