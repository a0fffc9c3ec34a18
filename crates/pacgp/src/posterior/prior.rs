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
#[derive(Clone, Debug, Serialize, Deserialize)]
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

impl Prior {
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
        Ok(self.mean_at(x))
    }

    /// The prior covariance `k_P(x_i, z_j)`.
    pub fn cross(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check(x)?;
        self.check(z)?;
        Ok(self.cross_at(x, z))
    }

    /// The prior variances `k_P(x_i, x_i)`.
    pub fn diag(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        self.check(x)?;
        Ok(self.diag_at(x))
    }

    /// The prior covariance matrix of the rows of `x` (symmetric).
    pub fn gram(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check(x)?;
        Ok(self.gram_at(x))
    }

    /// The largest variance of the kernel the prior is built on at the rows of `x`: the scale
    /// of the round-off in a covariance computed from it.
    pub fn variance_scale(&self, x: MatRef<'_, f64>) -> f64 {
        self.kernel().diag(x).into_iter().fold(0.0, f64::max)
    }

    /// [`Prior::mean`] on inputs already checked.
    pub(crate) fn mean_at(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        match self {
            Prior::Gp(_) => vec![0.0; x.nrows()],
            Prior::Conditioned(on) => on.predict_at(x).mean,
        }
    }

    /// [`Prior::cross`] on inputs already checked.
    pub(crate) fn cross_at(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Mat<f64> {
        match self {
            Prior::Gp(k) => k.cross(x, z),
            Prior::Conditioned(on) => on.covariance_at(x, z),
        }
    }

    /// [`Prior::diag`] on inputs already checked.
    pub(crate) fn diag_at(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        match self {
            Prior::Gp(k) => k.diag(x),
            Prior::Conditioned(on) => on.predict_at(x).var,
        }
    }

    /// [`Prior::gram`] on inputs already checked.
    pub(crate) fn gram_at(&self, x: MatRef<'_, f64>) -> Mat<f64> {
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
