//! Datasets: the validated [`Dataset`] type, and by job: CSV reading (`csv`), how a
//! table's cells become inputs (`encoding`: categories, missing values), what is wrong with a
//! table or its reading options ([`TableError`], worded by each front end), class labels
//! (`labels`: two, `classes`: K), several real targets at the same inputs (`outputs`), standardisation (`scaling`), the row digest and
//! canonical order (`digest`), seeded splits and k-fold (`split`), whether two paths name
//! one file (`files`).
//!
//! Everything is validated once here (shapes, NaN/inf, missing values, labels) so that
//! the numerical code can assume clean inputs. Every public item of the submodules is
//! re-exported, so `crate::data::X` paths name them directly.

pub(crate) mod classes;
pub(crate) mod csv;
pub(crate) mod digest;
pub(crate) mod encoding;
pub(crate) mod files;
pub(crate) mod labels;
pub(crate) mod outputs;
pub(crate) mod scaling;
pub(crate) mod split;

pub use self::csv::*;
pub use crate::error::{TableError, TableOption};
pub use classes::*;
pub use digest::*;
pub use encoding::*;
pub use files::same_file;
pub use labels::*;
pub use outputs::Outputs;
pub use scaling::*;
pub use split::*;

use faer::{Mat, MatRef};

use crate::error::{Error, Result};

/// Inputs and targets of a supervised problem.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Inputs, one point per row (N×D).
    pub x: Mat<f64>,
    /// Targets (regression), ±1 labels (binary classification) or class indices `0..K`
    /// (multi-class).
    pub y: Vec<f64>,
    /// Names of the input columns.
    pub feature_names: Vec<String>,
    /// Name of the target column.
    pub target_name: String,
}

impl Dataset {
    /// Validate and wrap `x` (N×D) and `y` (N): non-empty, same N, all finite.
    ///
    /// ```
    /// use faer::Mat;
    /// use pacgp::data::Dataset;
    /// use pacgp::Error;
    ///
    /// let x = Mat::from_fn(3, 2, |i, j| (i + j) as f64);
    /// let data = Dataset::new(x.clone(), vec![0.5, 1.0, 1.5])?;
    /// assert_eq!((data.n(), data.d()), (3, 2));
    /// assert_eq!(data.feature_names, ["x0", "x1"]);
    ///
    /// // Refused once, here: a missing target, a NaN.
    /// let short = Dataset::new(x.clone(), vec![0.5, 1.0]);
    /// assert!(matches!(short, Err(Error::ShapeMismatch { .. })));
    /// let nan = Dataset::new(x, vec![0.5, f64::NAN, 1.5]);
    /// assert!(matches!(nan, Err(Error::NonFinite { row: 1, .. })));
    /// # Ok::<(), pacgp::Error>(())
    /// ```
    pub fn new(x: Mat<f64>, y: Vec<f64>) -> Result<Self> {
        let d = x.ncols();
        let names = (0..d).map(|j| format!("x{j}")).collect();
        Self::with_names(x, y, names, "y".into())
    }

    /// As [`Dataset::new`], with column names.
    pub fn with_names(
        x: Mat<f64>,
        y: Vec<f64>,
        feature_names: Vec<String>,
        target_name: String,
    ) -> Result<Self> {
        if x.nrows() == 0 || y.is_empty() {
            return Err(Error::Empty { what: "dataset" });
        }
        if x.ncols() == 0 {
            return Err(Error::Empty {
                what: "input columns",
            });
        }
        if x.nrows() != y.len() {
            return Err(Error::ShapeMismatch {
                what: "inputs vs targets",
                expected: format!("{} targets", x.nrows()),
                found: format!("{}", y.len()),
            });
        }
        if feature_names.len() != x.ncols() {
            return Err(Error::ShapeMismatch {
                what: "feature names",
                expected: format!("{}", x.ncols()),
                found: format!("{}", feature_names.len()),
            });
        }
        check_finite(x.as_ref(), "inputs")?;
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite {
                what: "targets",
                row: i,
                col: 0,
            });
        }
        Ok(Self {
            x,
            y,
            feature_names,
            target_name,
        })
    }

    /// Number of points N.
    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// Input dimension D.
    pub fn d(&self) -> usize {
        self.x.ncols()
    }

    /// The rows of `self` followed by those of `other` (same columns, same target).
    pub fn concat(&self, other: &Dataset) -> Result<Dataset> {
        if other.feature_names != self.feature_names {
            return Err(Error::ShapeMismatch {
                what: "concatenated data sets",
                expected: self.feature_names.join(","),
                found: other.feature_names.join(","),
            });
        }
        let n = self.n();
        let x = Mat::from_fn(n + other.n(), self.d(), |i, j| {
            if i < n {
                self.x[(i, j)]
            } else {
                other.x[(i - n, j)]
            }
        });
        let y = self.y.iter().chain(&other.y).copied().collect();
        Dataset::with_names(x, y, self.feature_names.clone(), self.target_name.clone())
    }

    /// The rows listed in `idx` (in that order).
    pub fn subset(&self, idx: &[usize]) -> Dataset {
        Dataset {
            x: Mat::from_fn(idx.len(), self.d(), |i, j| self.x[(idx[i], j)]),
            y: idx.iter().map(|&i| self.y[i]).collect(),
            feature_names: self.feature_names.clone(),
            target_name: self.target_name.clone(),
        }
    }
}

/// Reject NaN or infinite entries, naming the first one found.
pub fn check_finite(x: MatRef<'_, f64>, what: &'static str) -> Result<()> {
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            if !x[(i, j)].is_finite() {
                return Err(Error::NonFinite {
                    what,
                    row: i,
                    col: j,
                });
            }
        }
    }
    Ok(())
}

/// Most characters of a cell or name echoed in a message.
const SHOWN_CHARS: usize = 40;

/// A cell or column name as echoed in a message: control characters escaped (a NUL byte
/// shows as `\u{0}`) and cut to 40 characters, with the length of what was cut.
pub fn shown(s: &str) -> String {
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k == SHOWN_CHARS {
            out.push_str(&format!("… ({} bytes in all)", s.len()));
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
