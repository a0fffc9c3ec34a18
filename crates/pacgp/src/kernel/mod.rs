//! Covariance functions with hyperparameters held as θ = ln(value) in one flat vector.
//!
//! A [`Kernel`] is a plain serialisable tree (base kernels, `Scale`, `Sum`, `Product`).
//! Every kernel gives `gram(X)`, `cross(X, Z)`, `diag(X)` and the derivatives the
//! objectives need, as *contractions* `Σ_ij G_ij ∂K_ij/∂θ_k` so that no N×N derivative
//! matrix is ever stored per hyperparameter.
//!
//! Inputs are faer matrices with one point per row (N×D).

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod composite;
mod dot_product;
mod inducing;
mod matrices;
mod pointwise;
mod spec;
pub mod start;
pub(crate) mod stationary;

pub use stationary::{Profile, PRODUCT_DISTANCE_INPUTS};

/// A covariance function. Parameters are stored in log space (`ln_*` fields).
///
/// ```
/// use pacgp::prelude::*;
///
/// // σ_f² · exp(−½ Σ_t (x_t − z_t)²/l_t²) at l = (1, 2), σ_f² = 1.5, against the closed form.
/// let k = Kernel::se_ard(&[1.0, 2.0], 1.5);
/// let closed = 1.5 * (-0.5 * (1.0 / 1.0 + 4.0 / 4.0f64)).exp();
/// assert!((k.eval(&[0.0, 0.0], &[1.0, 2.0]) - closed).abs() < 1e-12);
///
/// // From a specification: one lengthscale per input and one signal variance, θ = ln(value).
/// let k = Kernel::from_spec("se-ard", 3)?;
/// assert_eq!(k.n_params(), 4);
/// let x = Mat::from_fn(5, 3, |i, j| (i * 3 + j) as f64 / 7.0);
/// let gram = k.gram(x.as_ref())?;
/// for i in 0..5 {
///     assert!((gram[(i, i)] - k.eval(&[0.0; 3], &[0.0; 3])).abs() < 1e-12);
///     for j in 0..5 {
///         assert_eq!(gram[(i, j)], gram[(j, i)]);
///     }
/// }
/// # Ok::<(), pacgp::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kernel {
    /// Stationary kernel `k(r)` of the scaled distance `r² = Σ_t (x_t − x'_t)²/l_t²` with
    /// unit variance (squared exponential or Matérn); one lengthscale (isotropic), one per
    /// input (ARD), or one per group of consecutive inputs (`groups`).
    Stationary {
        /// Which `k(r)`.
        profile: Profile,
        /// ln of the lengthscale(s): one, one per input, or one per group.
        ln_lengthscale: Vec<f64>,
        /// How many consecutive inputs share each lengthscale, in input order (`None`: one
        /// lengthscale per input, or one for all). The one-hot inputs of one table column
        /// are a group: a column of 25 categories then costs one hyperparameter, not 25.
        /// Absent from model files written before groups existed, and from ungrouped kernels.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        groups: Option<Vec<usize>>,
    },
    /// Linear `Σ_t v_t x_t x'_t` (one shared variance, or one per input).
    Linear {
        /// ln of the variance(s) `v_t`.
        ln_variance: Vec<f64>,
    },
    /// Polynomial `(x·x'/l² + c)^p` with a fixed integer degree.
    Polynomial {
        /// Degree p ≥ 1.
        degree: u32,
        /// ln c (offset).
        ln_offset: f64,
        /// ln l (input scale).
        ln_lengthscale: f64,
    },
    /// Constant `σ²`.
    Constant {
        /// ln σ².
        ln_variance: f64,
    },
    /// `σ² · k(x, x')`.
    Scale {
        /// ln σ².
        ln_variance: f64,
        /// The scaled kernel.
        inner: Box<Kernel>,
    },
    /// `k₁ + k₂`.
    Sum {
        /// First term.
        left: Box<Kernel>,
        /// Second term.
        right: Box<Kernel>,
    },
    /// `k₁ · k₂`.
    Product {
        /// First factor.
        left: Box<Kernel>,
        /// Second factor.
        right: Box<Kernel>,
    },
}

impl Kernel {
    /// `σ_f² · SE-ARD` with the given lengthscales and signal variance (values, not logs).
    pub fn se_ard(lengthscales: &[f64], signal_variance: f64) -> Self {
        Kernel::Scale {
            ln_variance: signal_variance.ln(),
            inner: Box::new(Kernel::Stationary {
                profile: Profile::SquaredExponential,
                ln_lengthscale: lengthscales.iter().map(|l| l.ln()).collect(),
                groups: None,
            }),
        }
    }

    /// `σ_f² · SE` with one isotropic lengthscale.
    pub fn se_iso(lengthscale: f64, signal_variance: f64) -> Self {
        Self::se_ard(&[lengthscale], signal_variance)
    }

    /// `σ² · k` for a stationary profile with the given lengthscales and variance.
    pub fn stationary(profile: Profile, lengthscales: &[f64], signal_variance: f64) -> Self {
        Kernel::Scale {
            ln_variance: signal_variance.ln(),
            inner: Box::new(Kernel::Stationary {
                profile,
                ln_lengthscale: lengthscales.iter().map(|l| l.ln()).collect(),
                groups: None,
            }),
        }
    }

    /// Number of hyperparameters in θ.
    pub fn n_params(&self) -> usize {
        match self {
            Kernel::Stationary { ln_lengthscale, .. } => ln_lengthscale.len(),
            Kernel::Linear { ln_variance } => ln_variance.len(),
            Kernel::Polynomial { .. } => 2,
            Kernel::Constant { .. } => 1,
            Kernel::Scale { inner, .. } => 1 + inner.n_params(),
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.n_params() + right.n_params()
            }
        }
    }

    /// θ, the ln-space hyperparameters, in a fixed depth-first order.
    pub fn params(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.n_params());
        self.push_params(&mut out);
        out
    }

    fn push_params(&self, out: &mut Vec<f64>) {
        match self {
            Kernel::Stationary { ln_lengthscale, .. } => out.extend_from_slice(ln_lengthscale),
            Kernel::Linear { ln_variance } => out.extend_from_slice(ln_variance),
            Kernel::Polynomial {
                ln_offset,
                ln_lengthscale,
                ..
            } => {
                out.push(*ln_offset);
                out.push(*ln_lengthscale);
            }
            Kernel::Constant { ln_variance } => out.push(*ln_variance),
            Kernel::Scale { ln_variance, inner } => {
                out.push(*ln_variance);
                inner.push_params(out);
            }
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.push_params(out);
                right.push_params(out);
            }
        }
    }

    /// Set θ (same order as [`Kernel::params`]).
    pub fn set_params(&mut self, theta: &[f64]) -> Result<()> {
        if theta.len() != self.n_params() {
            return Err(Error::ShapeMismatch {
                what: "kernel hyperparameters",
                expected: format!("{}", self.n_params()),
                found: format!("{}", theta.len()),
            });
        }
        if let Some(bad) = theta.iter().find(|t| !t.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "kernel hyperparameter (ln space)",
                value: *bad,
                reason: "must be finite",
            });
        }
        self.take_params(theta);
        Ok(())
    }

    fn take_params(&mut self, theta: &[f64]) -> usize {
        match self {
            Kernel::Stationary {
                ln_lengthscale: v, ..
            }
            | Kernel::Linear { ln_variance: v } => {
                let n = v.len();
                v.copy_from_slice(&theta[..n]);
                n
            }
            Kernel::Polynomial {
                ln_offset,
                ln_lengthscale,
                ..
            } => {
                *ln_offset = theta[0];
                *ln_lengthscale = theta[1];
                2
            }
            Kernel::Constant { ln_variance } => {
                *ln_variance = theta[0];
                1
            }
            Kernel::Scale { ln_variance, inner } => {
                *ln_variance = theta[0];
                1 + inner.take_params(&theta[1..])
            }
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                let a = left.take_params(theta);
                a + right.take_params(&theta[a..])
            }
        }
    }

    /// Names of the hyperparameters, e.g. `ln_signal_variance`, `ln_lengthscale[2]`.
    pub fn param_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.push_names("", &mut out);
        out
    }

    fn push_names(&self, prefix: &str, out: &mut Vec<String>) {
        match self {
            Kernel::Stationary {
                ln_lengthscale: v, ..
            }
            | Kernel::Linear { ln_variance: v } => {
                let base = if matches!(self, Kernel::Linear { .. }) {
                    "ln_variance"
                } else {
                    "ln_lengthscale"
                };
                if v.len() == 1 {
                    out.push(format!("{prefix}{base}"));
                } else {
                    for i in 0..v.len() {
                        out.push(format!("{prefix}{base}[{i}]"));
                    }
                }
            }
            Kernel::Polynomial { .. } => {
                out.push(format!("{prefix}ln_offset"));
                out.push(format!("{prefix}ln_lengthscale"));
            }
            Kernel::Constant { .. } => out.push(format!("{prefix}ln_variance")),
            Kernel::Scale { inner, .. } => {
                out.push(format!("{prefix}ln_signal_variance"));
                inner.push_names(prefix, out);
            }
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.push_names(&format!("{prefix}0."), out);
                right.push_names(&format!("{prefix}1."), out);
            }
        }
    }

    /// Check that the kernel accepts inputs with `d` columns.
    pub fn check_input_dim(&self, d: usize) -> Result<()> {
        match self {
            Kernel::Stationary {
                ln_lengthscale: v,
                groups: Some(sizes),
                ..
            } => check_groups(v, sizes, d),
            Kernel::Stationary {
                ln_lengthscale: v, ..
            }
            | Kernel::Linear { ln_variance: v } => {
                if v.len() != 1 && v.len() != d {
                    return Err(Error::ShapeMismatch {
                        what: "ARD parameters vs input columns",
                        expected: format!("1 or {d}"),
                        found: format!("{}", v.len()),
                    });
                }
                Ok(())
            }
            Kernel::Polynomial { degree, .. } => {
                if *degree == 0 {
                    return Err(Error::InvalidParameter {
                        name: "polynomial degree",
                        value: 0.0,
                        reason: "must be at least 1",
                    });
                }
                Ok(())
            }
            Kernel::Constant { .. } => Ok(()),
            Kernel::Scale { inner, .. } => inner.check_input_dim(d),
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.check_input_dim(d)?;
                right.check_input_dim(d)
            }
        }
    }

    /// The parts of `σ²·k(r)` or a bare stationary kernel: these take the fast parallel paths
    /// of [`stationary`].
    fn stationary_parts(&self) -> Option<StationaryParts<'_>> {
        let (variance, scaled, body) = match self {
            Kernel::Scale { ln_variance, inner } => (ln_variance.exp(), true, inner.as_ref()),
            other => (1.0, false, other),
        };
        match body {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
                groups,
            } => Some(StationaryParts {
                variance,
                scaled,
                profile: *profile,
                ln_l: per_input(ln_lengthscale, groups.as_deref()),
                groups: groups.as_deref(),
            }),
            _ => None,
        }
    }
}

/// `σ²·k(r)` (or `k(r)` alone) taken apart for the fast paths of [`stationary`], which see
/// one lengthscale, or one per input: a grouped kernel's lengthscales are repeated over
/// their groups there, and the per-input gradients summed back ([`StationaryParts::fold`]).
pub(super) struct StationaryParts<'a> {
    /// σ² (1 for a bare stationary kernel).
    pub variance: f64,
    /// Whether σ² is a hyperparameter (a `Scale` around the stationary kernel).
    pub scaled: bool,
    /// Which `k(r)`.
    pub profile: Profile,
    /// ln l: one, or one per input.
    pub ln_l: std::borrow::Cow<'a, [f64]>,
    /// The group sizes of a grouped kernel.
    pub groups: Option<&'a [usize]>,
}

impl StationaryParts<'_> {
    /// The points of `x` over their lengthscales, point by point ([`stationary::scaled_rows`]).
    pub fn rows(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        stationary::scaled_rows(x, &self.ln_l)
    }

    /// The points of `x` over their lengthscales, input by input ([`stationary::scaled_cols`]).
    pub fn cols(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        stationary::scaled_cols(x, &self.ln_l)
    }

    /// A gradient `[∂/∂ln σ² (if scaled), ∂/∂ln l_t per input …]` in θ's order: the
    /// per-input lengthscale derivatives of a group summed into the group's (chain rule:
    /// every input of the group has `ln l_t = ln l_g`).
    pub fn fold(&self, grad: Vec<f64>) -> Vec<f64> {
        let Some(sizes) = self.groups else {
            return grad;
        };
        let head = usize::from(self.scaled);
        let mut out = grad[..head].to_vec();
        out.extend(sum_over_groups(&grad[head..], sizes));
        out
    }
}

/// One ln-lengthscale per input: a grouped kernel's repeated over each group; otherwise as
/// given (one shared, or one per input).
pub(crate) fn per_input<'a>(
    ln_l: &'a [f64],
    groups: Option<&[usize]>,
) -> std::borrow::Cow<'a, [f64]> {
    match groups {
        None => std::borrow::Cow::Borrowed(ln_l),
        Some(sizes) => std::borrow::Cow::Owned(
            sizes
                .iter()
                .zip(ln_l)
                .flat_map(|(&n, &l)| std::iter::repeat_n(l, n))
                .collect(),
        ),
    }
}

/// Per-input values summed over consecutive groups of the given sizes.
pub(super) fn sum_over_groups(per_input: &[f64], sizes: &[usize]) -> Vec<f64> {
    let mut start = 0;
    sizes
        .iter()
        .map(|&n| {
            let s = per_input[start..start + n].iter().sum();
            start += n;
            s
        })
        .collect()
}

/// A grouped stationary kernel fits `d` inputs: one lengthscale per group, no empty group,
/// the groups covering the inputs exactly.
fn check_groups(ln_l: &[f64], sizes: &[usize], d: usize) -> Result<()> {
    let covered: usize = sizes.iter().sum();
    if sizes.len() != ln_l.len() || sizes.contains(&0) || covered != d {
        return Err(Error::ShapeMismatch {
            what: "lengthscale groups vs input columns",
            expected: format!("non-empty groups covering {d} inputs, one lengthscale each"),
            found: format!(
                "{} groups of sizes summing to {covered}, {} lengthscales",
                sizes.len(),
                ln_l.len()
            ),
        });
    }
    Ok(())
}

/// `Σ_t (x_t − z_t)² / l_t²` with `l = exp(ln_l)` (one shared or one per dimension).
pub(super) fn scaled_sqdist(ln_l: &[f64], x: &[f64], z: &[f64]) -> f64 {
    if ln_l.len() == 1 {
        let inv = (-2.0 * ln_l[0]).exp();
        x.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() * inv
    } else {
        x.iter()
            .zip(z)
            .zip(ln_l)
            .map(|((a, b), l)| (a - b) * (a - b) * (-2.0 * l).exp())
            .sum()
    }
}

/// `x` with each column's mean subtracted.
pub(super) fn centred_columns(x: MatRef<'_, f64>) -> Mat<f64> {
    let n = x.nrows().max(1) as f64;
    let means: Vec<f64> = (0..x.ncols())
        .map(|t| (0..x.nrows()).map(|i| x[(i, t)]).sum::<f64>() / n)
        .collect();
    Mat::from_fn(x.nrows(), x.ncols(), |i, t| x[(i, t)] - means[t])
}

/// Rows of a matrix as contiguous vectors (faer is column-major).
pub fn rows_of(x: MatRef<'_, f64>) -> Vec<Vec<f64>> {
    (0..x.nrows())
        .map(|i| (0..x.ncols()).map(|j| x[(i, j)]).collect())
        .collect()
}
