//! Standardisation of inputs and regression targets with training statistics.
//!
//! Means and standard deviations are computed on the values divided by a power of two
//! near the column's largest magnitude, so no intermediate can overflow (a cell of 1e155
//! squared would); scaling by a power of two is exact, so for ordinary data the results are
//! bit-identical to the direct formulas. A constant input column is kept unscaled (sd taken
//! as 1, as scikit-learn's `StandardScaler` does) and reported in
//! [`Standardizer::constant`]; a constant target is an error naming it.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Largest target standard deviation accepted, 2^500 ≈ 3.3e150: predictive variances in the
/// target's units are sd² times a standardised variance, and sd² ≤ 2^1000 leaves a factor
/// 2^24 ≈ 1.7e7 below f64's largest value for them and for sums of squared errors.
pub const MAX_TARGET_SD: f64 = 3.273_390_607_896_142e150;

/// Mean and population standard deviation of one column, and whether it is constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    /// Mean.
    pub mean: f64,
    /// Population standard deviation (divisor N).
    pub sd: f64,
    /// True when the variance is within rounding error of zero (scikit-learn's
    /// `_is_constant_feature`: var ≤ N·ε·var + (N·|mean|·ε)²).
    pub constant: bool,
}

impl Moments {
    /// Moments of `v` (non-empty, finite) without overflow: computed on `v / s` with `s` the
    /// power of two at or below max |v|, so every intermediate is at most 2N in magnitude.
    pub fn of(v: &[f64]) -> Self {
        let n = v.len() as f64;
        let s = power_of_two_below(v.iter().fold(0.0_f64, |a, x| a.max(x.abs())));
        let mz = v.iter().map(|x| x / s).sum::<f64>() / n;
        let vz = v.iter().map(|x| (x / s - mz).powi(2)).sum::<f64>() / n;
        let eps = f64::EPSILON;
        Self {
            mean: mz * s,
            sd: vz.sqrt() * s,
            constant: vz <= n * eps * vz + (n * mz.abs() * eps).powi(2),
        }
    }
}

/// 2^⌊log₂ a⌋ for a normal positive `a` (exact: the exponent bits alone), else 1.
fn power_of_two_below(a: f64) -> f64 {
    if a.is_finite() && a >= f64::MIN_POSITIVE {
        f64::from_bits(a.to_bits() & 0x7ff0_0000_0000_0000)
    } else {
        1.0
    }
}

/// `(x − mean)/sd` without an intermediate overflow: when `x − mean` overflows (both huge,
/// opposite signs) the halves are subtracted instead. Non-finite only if the result is.
fn standardise(x: f64, mean: f64, sd: f64) -> f64 {
    let d = x - mean;
    if d.is_finite() {
        d / sd
    } else {
        2.0 * ((0.5 * x - 0.5 * mean) / sd)
    }
}

/// An input column left unscaled because it is constant in the training data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConstantInput {
    /// 0-based position among the inputs.
    pub index: usize,
    /// Column name.
    pub name: String,
    /// Its value in the training data.
    pub value: f64,
}

/// Per-column affine standardisation `(x − mean)/sd`, fitted on training data only
/// (population standard deviation, as scikit-learn's `StandardScaler`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standardizer {
    /// Column means.
    pub mean: Vec<f64>,
    /// Column standard deviations (population); 1 for a constant column.
    pub sd: Vec<f64>,
    /// Columns constant in the training data, kept unscaled (sd 1): they carry no
    /// information for a model fitted on this data. See [`Standardizer::notes`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constant: Vec<ConstantInput>,
}

impl Standardizer {
    /// Fit on `x`; a constant column gets sd 1 and is listed in [`Standardizer::constant`].
    pub fn fit(x: MatRef<'_, f64>, names: &[String]) -> Result<Self> {
        let n = x.nrows();
        if n == 0 {
            return Err(Error::Empty {
                what: "training inputs",
            });
        }
        let mut out = Self {
            mean: Vec::with_capacity(x.ncols()),
            sd: Vec::with_capacity(x.ncols()),
            constant: Vec::new(),
        };
        for j in 0..x.ncols() {
            let col: Vec<f64> = (0..n).map(|i| x[(i, j)]).collect();
            let m = Moments::of(&col);
            out.mean.push(m.mean);
            if m.constant {
                out.sd.push(1.0);
                out.constant.push(ConstantInput {
                    index: j,
                    name: names.get(j).cloned().unwrap_or_else(|| format!("#{j}")),
                    value: col[0],
                });
            } else {
                out.sd.push(m.sd);
            }
        }
        Ok(out)
    }

    /// The identity on `d` inputs (mean 0, sd 1): the inputs as given, for a kernel fixed in
    /// advance (whose lengthscales must not depend on the sample's spread).
    pub fn identity(d: usize) -> Self {
        Self {
            mean: vec![0.0; d],
            sd: vec![1.0; d],
            constant: Vec::new(),
        }
    }

    /// One plain line per constant input column, for the caller to show (the library does
    /// not print).
    pub fn notes(&self) -> Vec<String> {
        self.constant
            .iter()
            .map(|c| {
                format!(
                    "input column '{}' is constant ({}) in the training data: kept unscaled; \
                     it carries no information for this model",
                    c.name, c.value
                )
            })
            .collect()
    }

    /// `(x − mean)/sd`; errors if the column count differs or a value cannot be
    /// represented once standardised.
    pub fn transform(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if x.ncols() != self.mean.len() {
            return Err(Error::ShapeMismatch {
                what: "input columns",
                expected: format!("{}", self.mean.len()),
                found: format!("{}", x.ncols()),
            });
        }
        let z = Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
            standardise(x[(i, j)], self.mean[j], self.sd[j])
        });
        for j in 0..z.ncols() {
            if let Some(i) = (0..z.nrows()).find(|&i| !z[(i, j)].is_finite()) {
                return Err(Error::Unrepresentable {
                    what: format!("input column {}, row {}", j + 1, i + 1),
                    value: x[(i, j)],
                    reason: format!(
                        "it lies more than 1.8e308 training standard deviations ({:e}) from the \
                         training mean ({:e})",
                        self.sd[j], self.mean[j]
                    ),
                });
            }
        }
        Ok(z)
    }

    /// `x·sd + mean`.
    pub fn inverse_transform(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
            x[(i, j)] * self.sd[j] + self.mean[j]
        })
    }
}

/// Standardisation of a regression target; converts means, variances and lengths
/// (such as ε) between the target's units and the standardised scale.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetScaler {
    /// Target mean.
    pub mean: f64,
    /// Target standard deviation (population).
    pub sd: f64,
}

impl TargetScaler {
    /// Fit on training targets; as [`TargetScaler::fit_column`] with the column called
    /// `target`.
    pub fn fit(y: &[f64]) -> Result<Self> {
        Self::fit_column(y, "target")
    }

    /// Fit on the training targets of the column `column`: a constant target is an error
    /// naming it, and so is one whose spread exceeds [`MAX_TARGET_SD`] (its variances in
    /// the target's units would overflow).
    pub fn fit_column(y: &[f64], column: &str) -> Result<Self> {
        if y.is_empty() {
            return Err(Error::Empty {
                what: "training targets",
            });
        }
        let m = Moments::of(y);
        if m.constant {
            return Err(Error::ConstantTarget {
                column: column.to_string(),
                value: y[0],
            });
        }
        if m.sd > MAX_TARGET_SD {
            return Err(Error::Unrepresentable {
                what: format!("the standard deviation of the target column '{column}'"),
                value: m.sd,
                reason: "variances in the target's units (sd² times a standardised variance) \
                         would overflow f64 beyond sd = 2^500 ≈ 3.3e150; divide the target by a \
                         power of ten first"
                    .into(),
            });
        }
        Ok(Self {
            mean: m.mean,
            sd: m.sd,
        })
    }

    /// The identity scaler (mean 0, sd 1).
    pub fn identity() -> Self {
        Self { mean: 0.0, sd: 1.0 }
    }

    /// Targets on the standardised scale.
    pub fn transform(&self, y: &[f64]) -> Vec<f64> {
        y.iter()
            .map(|&v| standardise(v, self.mean, self.sd))
            .collect()
    }

    /// A mean back in target units.
    pub fn unscale_mean(&self, m: f64) -> f64 {
        m * self.sd + self.mean
    }

    /// A variance back in target units.
    pub fn unscale_var(&self, v: f64) -> f64 {
        v * self.sd * self.sd
    }

    /// A length on the standardised scale (e.g. ε chosen in standard deviations) back in
    /// target units: the inverse of [`standardised_length`].
    pub fn unscale_length(&self, l: f64) -> f64 {
        l * self.sd
    }
}

/// A length in target units (ε of the ε-band loss) on the scale of targets divided by `sd`:
/// the one conversion of ε into standardised units (through
/// [`crate::loss::RegressionLoss::band_in_standard_units`]), so that a fit's objective and
/// `certify` (in process or over shards) see the same bits.
pub fn standardised_length(l: f64, sd: f64) -> f64 {
    l / sd
}
