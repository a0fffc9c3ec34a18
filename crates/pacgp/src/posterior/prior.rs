//! The prior of a posterior: the GP prior `GP(0, k)`, or a conditioned prior — a GP posterior
//! used as the prior, as the data-dependent split prior does (`P_A`, the posterior of part A of
//! the sample; a covariance scale t or mean scale s is the posterior's own, e.g. the posterior of
//! the prior `t·k`). Every posterior is its prior updated at a basis set, so prediction and
//! `KL(Q‖P)` need only the prior's mean and covariance functions, written here once. (The
//! SVM's posterior, the prior shifted to mean `μ·f_SVM`, is the GP prior updated with zero site
//! precisions: [`super::GaussianPosterior::shifted`].)

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use super::GaussianPosterior;
use crate::error::{Error, Result};
use crate::kernel::Kernel;

/// A Gaussian-process prior.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prior {
    /// `GP(0, k)`.
    Gp(Kernel),
    /// The mean and covariance of a posterior (over the GP prior of its kernel).
    Conditioned(Box<GaussianPosterior>),
}

impl From<Kernel> for Prior {
    fn from(k: Kernel) -> Self {
        Prior::Gp(k)
    }
}

/// A prior's mean and covariance at a set of inputs, `N(m₀, K₀)` on the latent values there:
/// `(0, K_θ(X, X))` for the GP prior, `(μ_A(X), K_A(X, X))` for a prior conditioned on part A
/// of a split. What every objective over latent values at a sample starts from.
#[derive(Clone, Debug)]
pub struct PriorAt {
    /// Prior mean `m₀`.
    pub mean: Vec<f64>,
    /// Prior covariance `K₀` (symmetric positive definite).
    pub cov: Mat<f64>,
    /// `η`, a bound on the round-off in `K₀` ([`ROUND_OFF`] times the kernel's scale). A
    /// bound-minimising objective charges `½η‖α‖²` on top of the KL (as if `K₀` were
    /// `K₀ + ηI`), so the optimiser cannot buy KL in directions where the computed `K₀` is
    /// numerically singular or indefinite (huge α for a negligible mean).
    pub round_off: f64,
}

/// `η` of [`PriorAt::round_off`] relative to the largest prior variance the covariance was
/// computed from.
pub const ROUND_OFF: f64 = 1e-8;

impl PriorAt {
    /// Number of latent values.
    pub fn len(&self) -> usize {
        self.mean.len()
    }

    /// Whether the prior has no latent values.
    pub fn is_empty(&self) -> bool {
        self.mean.is_empty()
    }
}

impl Prior {
    /// A copy whose conditioning posterior goes through [`GaussianPosterior::try_clone`].
    pub fn try_clone(&self) -> Result<Self> {
        Ok(match self {
            Prior::Gp(k) => Prior::Gp(k.clone()),
            Prior::Conditioned(p) => Prior::Conditioned(Box::new(p.try_clone()?)),
        })
    }

    /// The prior's mean and covariance at the rows of `x` (inputs of the prior's kernel,
    /// already checked), with the round-off of a covariance computed from its kernel.
    pub fn at(&self, x: MatRef<'_, f64>) -> Result<PriorAt> {
        let cov = self.gram_at(x)?;
        let scale = match self {
            Prior::Gp(_) => (0..cov.nrows()).map(|i| cov[(i, i)]).fold(0.0, f64::max),
            // A conditioned covariance is a difference of matrices of the kernel's scale.
            Prior::Conditioned(_) => self.variance_scale(x),
        };
        Ok(PriorAt {
            mean: self.mean_at(x)?,
            cov,
            round_off: ROUND_OFF * scale,
        })
    }

    /// The prior that is the posterior `on`.
    pub fn conditioned(on: GaussianPosterior) -> Self {
        Prior::Conditioned(Box::new(on))
    }

    /// The kernel the prior is built on (a conditioned prior: its posterior's).
    pub fn kernel(&self) -> &Kernel {
        match self {
            Prior::Gp(k) => k,
            Prior::Conditioned(on) => on.kernel(),
        }
    }

    /// The rows of `x` must be inputs of the prior's kernel (count of columns, finite).
    fn check(&self, x: MatRef<'_, f64>) -> Result<()> {
        self.kernel().check_input_dim(x.ncols())?;
        crate::data::check_finite(x, "prior inputs")
    }

    /// The prior mean at the rows of `x`.
    pub fn mean(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        self.check(x)?;
        self.mean_at(x)
    }

    /// The prior covariance `k_P(x_i, z_j)`.
    pub fn cross(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check(x)?;
        self.check(z)?;
        self.cross_at(x, z)
    }

    /// The prior variances `k_P(x_i, x_i)`.
    pub fn diag(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        self.check(x)?;
        self.diag_at(x)
    }

    /// The prior covariance matrix of the rows of `x` (symmetric).
    pub fn gram(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check(x)?;
        self.gram_at(x)
    }

    /// The largest variance of the kernel the prior is built on at the rows of `x`: the scale
    /// of the round-off in a covariance computed from it.
    pub fn variance_scale(&self, x: MatRef<'_, f64>) -> f64 {
        self.kernel().diag(x).into_iter().fold(0.0, f64::max)
    }

    /// [`Prior::mean`] on inputs already checked.
    pub(crate) fn mean_at(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        Ok(match self {
            Prior::Gp(_) => vec![0.0; x.nrows()],
            Prior::Conditioned(on) => on.predict_at(x)?.mean,
        })
    }

    /// [`Prior::cross`] on inputs already checked.
    pub(crate) fn cross_at(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        match self {
            Prior::Gp(k) => k.cross(x, z),
            Prior::Conditioned(on) => on.covariance_at(x, z),
        }
    }

    /// [`Prior::diag`] on inputs already checked.
    pub(crate) fn diag_at(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        Ok(match self {
            Prior::Gp(k) => k.diag(x),
            Prior::Conditioned(on) => on.predict_at(x)?.var,
        })
    }

    /// [`Prior::gram`] on inputs already checked.
    pub(crate) fn gram_at(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        match self {
            Prior::Gp(k) => k.gram(x),
            Prior::Conditioned(on) => on.covariance_gram_at(x),
        }
    }

    /// Consistency of a prior read from a file: a conditioned prior is conditioned on a
    /// posterior over the GP prior of its kernel (one level of conditioning).
    pub(crate) fn validate(&self) -> Result<()> {
        if let Prior::Conditioned(on) = self {
            if !matches!(on.prior, Prior::Gp(_)) {
                return Err(Error::Numerical {
                    what: "stored posterior",
                    message: "a conditioned prior is conditioned on a GP posterior".into(),
                });
            }
            on.validate()?;
        }
        Ok(())
    }
}
