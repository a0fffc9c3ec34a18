//! The prior of a posterior: the GP prior `GP(0, k)`, or a conditioned prior — a GP posterior
//! used as the prior, as the data-dependent split prior does (`P_A`, the posterior of part A
//! of the sample, with its covariance scaled by t and its mean by s: `GP(s·μ_A, t·k_A)`).
//! Every posterior is its prior updated at a basis set, so prediction and `KL(Q‖P)` need only
//! the prior's mean and covariance functions, written here once. (The SVM's posterior, the
//! prior shifted to mean `μ·f_SVM`, is the GP prior updated with zero site precisions:
//! [`super::GaussianPosterior::shifted`].)

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
    /// `GP(s·μ_A, t·k_A)`: the mean and covariance of the posterior `on`, scaled.
    Conditioned {
        /// The posterior used as the prior (over the GP prior of its kernel).
        on: Box<GaussianPosterior>,
        /// The covariance scale t > 0.
        scale: f64,
        /// The mean scale s.
        mean_scale: f64,
    },
}

impl From<Kernel> for Prior {
    fn from(k: Kernel) -> Self {
        Prior::Gp(k)
    }
}

impl Prior {
    /// The conditioned prior `GP(s·μ, t·k_Q)` of the posterior `on`.
    pub fn conditioned(on: GaussianPosterior, scale: f64, mean_scale: f64) -> Result<Self> {
        if !(scale > 0.0 && scale.is_finite() && mean_scale.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "conditioned prior scale",
                value: scale,
                reason: "the covariance scale must be positive and finite, the mean scale finite",
            });
        }
        Ok(Prior::Conditioned {
            on: Box::new(on),
            scale,
            mean_scale,
        })
    }

    /// The kernel the prior is built on (a conditioned prior: its posterior's).
    pub fn kernel(&self) -> &Kernel {
        match self {
            Prior::Gp(k) => k,
            Prior::Conditioned { on, .. } => on.kernel(),
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

    /// [`Prior::mean`] on inputs already checked.
    pub(crate) fn mean_at(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        match self {
            Prior::Gp(_) => vec![0.0; x.nrows()],
            Prior::Conditioned { on, mean_scale, .. } => {
                let m = on.predict_at(x).mean;
                m.into_iter().map(|v| mean_scale * v).collect()
            }
        }
    }

    /// [`Prior::cross`] on inputs already checked.
    pub(crate) fn cross_at(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Mat<f64> {
        match self {
            Prior::Gp(k) => k.cross(x, z),
            Prior::Conditioned { on, scale, .. } => {
                let mut c = on.covariance_at(x, z);
                for j in 0..c.ncols() {
                    for i in 0..c.nrows() {
                        c[(i, j)] *= scale;
                    }
                }
                c
            }
        }
    }

    /// [`Prior::diag`] on inputs already checked.
    pub(crate) fn diag_at(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        match self {
            Prior::Gp(k) => k.diag(x),
            Prior::Conditioned { on, scale, .. } => on
                .predict_at(x)
                .var
                .into_iter()
                .map(|v| scale * v)
                .collect(),
        }
    }

    /// [`Prior::gram`] on inputs already checked.
    pub(crate) fn gram_at(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        match self {
            Prior::Gp(k) => k.gram(x),
            Prior::Conditioned { .. } => {
                let mut c = self.cross_at(x, x);
                for j in 0..c.ncols() {
                    for i in 0..j {
                        let v = 0.5 * (c[(i, j)] + c[(j, i)]);
                        c[(i, j)] = v;
                        c[(j, i)] = v;
                    }
                }
                c
            }
        }
    }

    /// Consistency of a prior read from a file: a conditioned prior's scales, and its
    /// posterior over the GP prior of its kernel (one level of conditioning).
    pub(crate) fn validate(&self) -> Result<()> {
        if let Prior::Conditioned {
            on,
            scale,
            mean_scale,
        } = self
        {
            if !(*scale > 0.0 && scale.is_finite() && mean_scale.is_finite()) {
                return Err(Error::Numerical {
                    what: "stored posterior",
                    message: format!(
                        "conditioned prior scales t = {scale}, s = {mean_scale} (t must be positive, both finite)"
                    ),
                });
            }
            if !matches!(on.prior, Prior::Gp(_)) {
                return Err(Error::Numerical {
                    what: "stored posterior",
                    message: "a conditioned prior is conditioned on a GP posterior".into(),
                });
            }
        }
        Ok(())
    }
}
