//! Standardisation of inputs and regression targets with training statistics.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Per-column affine standardisation `(x − mean)/sd`, fitted on training data only
/// (population standard deviation, as scikit-learn's `StandardScaler`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standardizer {
    /// Column means.
    pub mean: Vec<f64>,
    /// Column standard deviations (population).
    pub sd: Vec<f64>,
}

impl Standardizer {
    /// Fit on `x`; a constant column is an error naming it.
    pub fn fit(x: MatRef<'_, f64>, names: &[String]) -> Result<Self> {
        let n = x.nrows();
        if n == 0 {
            return Err(Error::Empty {
                what: "training inputs",
            });
        }
        let mut mean = vec![0.0; x.ncols()];
        let mut sd = vec![0.0; x.ncols()];
        for j in 0..x.ncols() {
            let m = (0..n).map(|i| x[(i, j)]).sum::<f64>() / n as f64;
            let v = (0..n).map(|i| (x[(i, j)] - m).powi(2)).sum::<f64>() / n as f64;
            if !(v.sqrt() > 1e-12 * m.abs().max(1.0)) {
                return Err(Error::ConstantColumn {
                    column: names.get(j).cloned().unwrap_or_else(|| format!("#{j}")),
                });
            }
            mean[j] = m;
            sd[j] = v.sqrt();
        }
        Ok(Self { mean, sd })
    }

    /// `(x − mean)/sd`; errors if the column count differs.
    pub fn transform(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if x.ncols() != self.mean.len() {
            return Err(Error::ShapeMismatch {
                what: "input columns",
                expected: format!("{}", self.mean.len()),
                found: format!("{}", x.ncols()),
            });
        }
        Ok(Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
            (x[(i, j)] - self.mean[j]) / self.sd[j]
        }))
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
    /// Fit on training targets; a constant target is an error.
    pub fn fit(y: &[f64]) -> Result<Self> {
        if y.is_empty() {
            return Err(Error::Empty {
                what: "training targets",
            });
        }
        let n = y.len() as f64;
        let mean = y.iter().sum::<f64>() / n;
        let sd = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        if !(sd > 1e-12 * mean.abs().max(1.0)) {
            return Err(Error::ConstantColumn {
                column: "target".into(),
            });
        }
        Ok(Self { mean, sd })
    }

    /// The identity scaler (mean 0, sd 1).
    pub fn identity() -> Self {
        Self { mean: 0.0, sd: 1.0 }
    }

    /// Targets on the standardised scale.
    pub fn transform(&self, y: &[f64]) -> Vec<f64> {
        y.iter().map(|v| (v - self.mean) / self.sd).collect()
    }

    /// A mean back in target units.
    pub fn unscale_mean(&self, m: f64) -> f64 {
        m * self.sd + self.mean
    }

    /// A variance back in target units.
    pub fn unscale_var(&self, v: f64) -> f64 {
        v * self.sd * self.sd
    }

    /// A length in target units (e.g. ε) on the standardised scale.
    pub fn scale_length(&self, l: f64) -> f64 {
        l / self.sd
    }
}
