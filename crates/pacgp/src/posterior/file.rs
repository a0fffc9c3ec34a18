//! The on-disk form of a [`GaussianPosterior`]: the site form's `N×N` factor is not stored
//! but refactored on load; a GP prior is stored as its kernel.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use super::{Covariance, GaussianPosterior, Prior};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky};

/// On-disk form of a [`GaussianPosterior`]. The site form stores `√π` and the jitter of
/// `chol(B)`, not the `N×N` factor: at N = 2000 that is 53 MB of JSON against one
/// `N³/3` factorisation of `B = I + Π½K_BΠ½ + jitter·I` when the file is read. Files that
/// hold `chol_b` (written before) are read as they are.
///
/// The prior is `prior` (a kernel's GP prior, or a conditioned prior holding its posterior);
/// a file with only `kernel` holds the GP prior of that kernel.
#[derive(Serialize, Deserialize)]
pub(super) struct PosteriorFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) prior: Option<Prior>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) kernel: Option<Kernel>,
    #[serde(with = "linalg::serde_mat")]
    pub(super) basis: Mat<f64>,
    pub(super) alpha: Vec<f64>,
    pub(super) cov: CovarianceFile,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case")]
pub(super) enum CovarianceFile {
    Sites {
        sqrt_pi: Vec<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chol_b: Option<Cholesky>,
        #[serde(default)]
        jitter: f64,
    },
    WhitenedPrecision {
        chol_kuu: Cholesky,
        chol_b: Cholesky,
    },
    Dense {
        chol_kb: Cholesky,
        chol_sigma: Cholesky,
    },
}

impl From<GaussianPosterior> for PosteriorFile {
    fn from(p: GaussianPosterior) -> Self {
        let cov = match p.cov {
            Covariance::Sites { sqrt_pi, chol_b } => CovarianceFile::Sites {
                sqrt_pi,
                jitter: chol_b.jitter(),
                chol_b: None,
            },
            Covariance::WhitenedPrecision { chol_kuu, chol_b } => {
                CovarianceFile::WhitenedPrecision { chol_kuu, chol_b }
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => CovarianceFile::Dense {
                chol_kb,
                chol_sigma,
            },
        };
        // A GP prior is written as its kernel (the common case reads as before).
        let (prior, kernel) = match p.prior {
            Prior::Gp(k) => (None, Some(k)),
            other => (Some(other), None),
        };
        Self {
            prior,
            kernel,
            basis: p.basis,
            alpha: p.alpha,
            cov,
        }
    }
}

impl TryFrom<PosteriorFile> for GaussianPosterior {
    type Error = String;
    fn try_from(f: PosteriorFile) -> std::result::Result<Self, String> {
        let m = f.basis.nrows();
        if f.alpha.len() != m {
            return Err(format!(
                "posterior has {} mean weights for {m} basis points",
                f.alpha.len()
            ));
        }
        let prior = match (f.prior, f.kernel) {
            (Some(p), None) => p,
            (None, Some(k)) => Prior::Gp(k),
            _ => return Err("a posterior holds either its prior or its kernel".into()),
        };
        prior.validate().map_err(|e| e.to_string())?;
        // The kernel must fit the basis before it is evaluated on it (refactoring the sites).
        let kernel = prior.kernel();
        kernel
            .check_input_dim(f.basis.ncols())
            .map_err(|e| e.to_string())?;
        if kernel.params().iter().any(|t| !t.is_finite()) {
            return Err("a kernel hyperparameter is not finite".into());
        }
        if let Prior::Conditioned(on) = &prior {
            if on.basis.ncols() != f.basis.ncols() {
                return Err("the conditioned prior's inputs are not the basis's".into());
            }
        }
        crate::data::check_finite(f.basis.as_ref(), "stored basis").map_err(|e| e.to_string())?;
        let cov = match f.cov {
            CovarianceFile::Sites {
                sqrt_pi,
                chol_b,
                jitter,
            } => {
                if sqrt_pi.len() != m {
                    return Err(format!(
                        "posterior has {} site precisions for {m} basis points",
                        sqrt_pi.len()
                    ));
                }
                let chol_b = match chol_b {
                    Some(c) => c,
                    None => refactor_sites(&prior, f.basis.as_ref(), &sqrt_pi, jitter)
                        .map_err(|e| e.to_string())?,
                };
                Covariance::Sites { sqrt_pi, chol_b }
            }
            CovarianceFile::WhitenedPrecision { chol_kuu, chol_b } => {
                Covariance::WhitenedPrecision { chol_kuu, chol_b }
            }
            CovarianceFile::Dense {
                chol_kb,
                chol_sigma,
            } => Covariance::Dense {
                chol_kb,
                chol_sigma,
            },
        };
        let post = Self {
            prior,
            basis: f.basis,
            alpha: f.alpha,
            cov,
        };
        post.validate().map_err(|e| e.to_string())?;
        Ok(post)
    }
}

/// A stored Cholesky factor must be `m×m`, finite, with a positive diagonal.
pub(super) fn check_factor(c: &Cholesky, m: usize, what: &str) -> std::result::Result<(), String> {
    let l = c.l();
    if l.nrows() != m || l.ncols() != m {
        return Err(format!(
            "{what} factor is {}×{} for {m} basis points",
            l.nrows(),
            l.ncols()
        ));
    }
    for j in 0..m {
        if !(l[(j, j)] > 0.0) {
            return Err(format!("{what} factor has a non-positive pivot at {j}"));
        }
        for i in j..m {
            if !l[(i, j)].is_finite() {
                return Err(format!(
                    "{what} factor has a non-finite entry at ({i}, {j})"
                ));
            }
        }
    }
    Ok(())
}

/// `chol(I + Π½K_BΠ½ + jitter·I)`, the site form's factor, rebuilt with the jitter it had
/// (`K_B` the prior's covariance at the basis).
fn refactor_sites(
    prior: &Prior,
    basis: MatRef<'_, f64>,
    sqrt_pi: &[f64],
    jitter: f64,
) -> Result<Cholesky> {
    if !(jitter >= 0.0 && jitter.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "stored jitter",
            value: jitter,
            reason: "must be finite and non-negative",
        });
    }
    let k = prior.gram_at(basis)?;
    let chol = Cholesky::factor_filled(
        sqrt_pi.len(),
        linalg::fill_site_b(&k, sqrt_pi, jitter),
        None,
        &linalg::JitterPolicy::none(),
        "I + Π½K_BΠ½ of a stored posterior",
    )?;
    Ok(Cholesky::from_lower(chol.into_storage(), jitter))
}
