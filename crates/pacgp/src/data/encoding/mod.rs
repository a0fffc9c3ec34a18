//! Input encoding: how a table's text cells become the model's numeric inputs. Text
//! (categorical) columns are coded with the training vocabulary — one-hot, or ±1 for a
//! column of two categories (scikit-learn's `OneHotEncoder(drop="if_binary")`) — missing
//! cells are refused, drop their row, read as 0 or filled with the training mean
//! (scikit-learn's `SimpleImputer`), and a column with no observed value is left out.
//!
//! The coding is fitted once on the training table ([`InputCoding::fit`], `fit`: which
//! columns are categorical, their vocabulary, the fills of missing cells), stored with the
//! model (`FittedModel::input_coding`) and applied by the same code to every later table
//! ([`InputCoding::apply`], `apply`: which rows the missing-value policy keeps, the code of
//! each cell), so `certify` on the training file rebuilds exactly the training rows and
//! `predict`/`evaluate` read new files as the training file was read.

use faer::Mat;
use serde::{Deserialize, Serialize};

use super::{shown, TableError};
use crate::error::{Error, Result};

mod apply;
mod fit;

/// What to do with a missing cell (`?`, empty, `NA`, `NaN` as text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingPolicy {
    /// Fail, naming line and column (default).
    #[default]
    Reject,
    /// Skip rows with a missing value in any column used (inputs or target).
    DropRows,
    /// Read a missing input as 0 (an all-zero code in a categorical column); a missing target
    /// still fails.
    Zero,
    /// Fill a missing input with its column's mean over the training rows (for a categorical
    /// column, the training frequency of each category); a missing target still fails.
    Mean,
}

/// What to do with a category the training data did not have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownCategory {
    /// A typed error naming the column and the value (default).
    #[default]
    Error,
    /// Code it as all zeros (0 in a two-category column), as if no category were known.
    Ignore,
}

/// Which input columns are categorical (a fitting option; the result is stored per column).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Categorical {
    /// None: a cell that is not a number is an error naming every such column (default).
    #[default]
    None,
    /// Every input column with a cell that is not a number (nor missing).
    Auto,
    /// These columns, by name, whatever their cells (e.g. a numeric code).
    Named(Vec<String>),
}

impl Categorical {
    /// The categorical columns a user names: none, `auto`, or column names (not both).
    pub fn from_words(words: &[String]) -> std::result::Result<Self, TableError> {
        match words {
            [] => Ok(Categorical::None),
            [auto] if auto == "auto" => Ok(Categorical::Auto),
            names if names.iter().any(|n| n == "auto") => Err(TableError::CategoricalAutoAndNames),
            names => Ok(Categorical::Named(names.to_vec())),
        }
    }
}

/// The most inputs a categorical column becomes unless a cap is given
/// ([`CodingOptions::max_categories`]): a column of more distinct values is refused, not
/// one-hot coded (an identifier, a free-text or a time column would otherwise become
/// thousands of inputs).
pub const DEFAULT_MAX_CATEGORIES: usize = 50;

pub use crate::vocabulary::MissingCells;

/// The options [`InputCoding::fit`] takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodingOptions {
    /// The most distinct values a categorical column may have to be one-hot coded (`None`:
    /// [`DEFAULT_MAX_CATEGORIES`]); a column with more is a [`TableError::TooManyCategories`].
    pub max_categories: Option<usize>,
    /// Read `y`/`yes` as +1 and `n`/`no` as −1 in numeric columns.
    pub yes_no: bool,
    /// Missing-value policy.
    pub missing: MissingPolicy,
    /// The cells read as missing.
    pub missing_cells: MissingCells,
    /// Which columns are categorical.
    pub categorical: Categorical,
    /// What a later unseen category becomes.
    pub unknown_category: UnknownCategory,
}

/// A table of text cells as read from a file or handed over by Python: the encoding's input.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Where it came from, for messages (a path, or `X`).
    pub source: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows: the 1-based line in the source (the header is line 1) and the trimmed cells.
    pub rows: Vec<(u64, Vec<String>)>,
}

/// How one input column of the table is coded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ColumnCoding {
    /// A number (yes/no as ±1 with [`InputCoding::yes_no`]): one input.
    Number {
        /// Column name.
        name: String,
        /// The value of a missing cell ([`MissingPolicy::Zero`] or [`MissingPolicy::Mean`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fill: Option<f64>,
    },
    /// A category from the training vocabulary `levels` (sorted): two levels are one input,
    /// −1 for the first and +1 for the second; otherwise one input per level (one-hot).
    Category {
        /// Column name.
        name: String,
        /// The categories seen in training, sorted (numbers numerically).
        levels: Vec<String>,
        /// The code of a missing cell, one value per input ([`MissingPolicy::Zero`]: zeros;
        /// [`MissingPolicy::Mean`]: the training mean of the code).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fill: Option<Vec<f64>>,
    },
}

impl ColumnCoding {
    /// The table column's name.
    pub fn name(&self) -> &str {
        match self {
            ColumnCoding::Number { name, .. } | ColumnCoding::Category { name, .. } => name,
        }
    }

    /// How many model inputs the column becomes.
    pub fn width(&self) -> usize {
        match self {
            ColumnCoding::Number { .. } => 1,
            ColumnCoding::Category { levels, .. } if levels.len() == 2 => 1,
            ColumnCoding::Category { levels, .. } => levels.len(),
        }
    }

    /// The names of the inputs it becomes: the column's own name for a number, `name=level`
    /// for a category (the +1 level of a two-category column).
    pub fn input_names(&self) -> Vec<String> {
        match self {
            ColumnCoding::Number { name, .. } => vec![name.clone()],
            ColumnCoding::Category { name, levels, .. } if levels.len() == 2 => {
                vec![format!("{name}={}", levels[1])]
            }
            ColumnCoding::Category { name, levels, .. } => {
                levels.iter().map(|l| format!("{name}={l}")).collect()
            }
        }
    }
}

/// How a table's cells become the model's inputs: fitted on the training table, stored with
/// the model, applied identically to every later table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InputCoding {
    /// `y`/`yes` → +1, `n`/`no` → −1 in numeric columns.
    #[serde(default)]
    pub yes_no: bool,
    /// Missing-value policy.
    #[serde(default)]
    pub missing: MissingPolicy,
    /// The cells read as missing, in training and every later file (the default ones in
    /// files written before they could be set, and not stored when they are the default).
    #[serde(default, skip_serializing_if = "MissingCells::is_default")]
    pub missing_cells: MissingCells,
    /// Model files written before [`InputCoding::missing`] existed say `missing_as_zero`.
    #[serde(default, skip_serializing)]
    missing_as_zero: bool,
    /// What an unseen category becomes.
    #[serde(default)]
    pub unknown_category: UnknownCategory,
    /// The table's input columns, in the order their inputs appear. Empty in model files
    /// written before it existed: then every input is the number in the column of its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<ColumnCoding>,
    /// The names given to the columns of a training file without a header line (`--no-header`:
    /// x1…xD, y); a later file whose first line is all numbers is read with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headerless: Option<Vec<String>>,
}

/// A fitted coding with what fitting found, for the user.
#[derive(Clone, Debug)]
pub struct FittedCoding {
    /// The coding.
    pub coding: InputCoding,
    /// What was encoded, filled in or left out, one sentence each.
    pub notes: Vec<String>,
}

/// Rows of a table coded as model inputs.
#[derive(Clone, Debug)]
pub struct Encoded {
    /// The inputs, one row per kept table row.
    pub x: Mat<f64>,
    /// Indices (into the table's rows) of the rows kept, in table order.
    pub rows: Vec<usize>,
    /// Indices of the rows left out by [`MissingPolicy::DropRows`].
    pub dropped: Vec<usize>,
}

/// A missing cell by default: one of [`crate::vocabulary::MISSING_CELLS`] (empty, `?`, `NA`,
/// `N/A`, `NaN`, as written in R, pandas and UCI files); see [`MissingCells`].
pub fn is_missing(cell: &str) -> bool {
    crate::vocabulary::MISSING_CELLS.contains(&cell)
}

/// An ISO 8601 date or date-time as pandas and databases write it: `2013-01-01`, optionally
/// followed by `T` or a space and `05:15`, `05:15:00`, `05:15:00.123`, and a zone `Z` or
/// `+01:00`. Such a column is refused as a category ([`TableError::DateColumn`]).
pub(crate) fn is_iso_datetime(cell: &str) -> bool {
    let b = cell.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let date = b.len() >= 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10);
    if !date {
        return false;
    }
    let rest = &b[10..];
    if rest.is_empty() {
        return true;
    }
    let time = rest.len() >= 6
        && matches!(rest[0], b'T' | b' ')
        && digits(11..13)
        && rest[3] == b':'
        && digits(14..16);
    time && rest[6..]
        .iter()
        .all(|c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b'Z' | b'+' | b'-'))
}

/// `cell` as a number: ±1 for yes/no with `yes_no`, else a parsed f64 (not necessarily finite).
fn number(cell: &str, yes_no: bool) -> Option<f64> {
    if yes_no {
        match cell.to_ascii_lowercase().as_str() {
            "y" | "yes" => return Some(1.0),
            "n" | "no" => return Some(-1.0),
            _ => {}
        }
    }
    cell.parse().ok()
}

/// Distinct values sorted as numbers when all are numbers, else as text.
pub(crate) fn sorted_levels<'a>(cells: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut levels: Vec<&str> = cells.collect();
    levels.sort_unstable();
    levels.dedup();
    let numeric: Option<Vec<f64>> = levels.iter().map(|c| c.parse::<f64>().ok()).collect();
    if let Some(v) = numeric {
        let mut order: Vec<usize> = (0..levels.len()).collect();
        order.sort_by(|&a, &b| v[a].total_cmp(&v[b]).then(levels[a].cmp(levels[b])));
        return order.into_iter().map(|i| levels[i].to_string()).collect();
    }
    levels.into_iter().map(str::to_string).collect()
}

impl Table {
    /// What the coding assumes of a table, checked where one comes in (a file, Python or a
    /// library caller): each column name once (reading by name would use the first) and
    /// every row as wide as the header.
    pub fn check(&self) -> Result<()> {
        check_unique_names(&self.source, &self.header)?;
        match self.rows.iter().find(|(_, r)| r.len() != self.header.len()) {
            Some((line, r)) => Err(Error::Csv {
                path: self.source.clone(),
                line: *line,
                message: format!(
                    "{} fields, but the header has {}",
                    r.len(),
                    self.header.len()
                ),
            }),
            None => Ok(()),
        }
    }

    /// Column indices a caller passes (inputs, target) must be the table's.
    pub(crate) fn check_indices(&self, columns: impl IntoIterator<Item = usize>) -> Result<()> {
        match columns.into_iter().find(|&j| j >= self.header.len()) {
            Some(j) => Err(Error::ShapeMismatch {
                what: "table column index",
                expected: format!("below the table's {} columns", self.header.len()),
                found: j.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Result<usize> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::ColumnNotFound {
                name: shown(name),
                available: self
                    .header
                    .iter()
                    .map(|h| shown(h))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// The first repeated header name, as a typed error naming it and both positions.
pub(crate) fn check_unique_names(path: &str, header: &[String]) -> Result<()> {
    for (second, name) in header.iter().enumerate() {
        if let Some(first) = header[..second].iter().position(|h| h == name) {
            return Err(Error::DuplicateColumn {
                path: path.to_string(),
                name: shown(name),
                first: first + 1,
                second: second + 1,
            });
        }
    }
    Ok(())
}

impl InputCoding {
    /// The missing-value policy, reading old files' `missing_as_zero`.
    pub fn missing_policy(&self) -> MissingPolicy {
        if self.missing_as_zero {
            MissingPolicy::Zero
        } else {
            self.missing
        }
    }

    /// The coding of the table columns behind the model inputs `features`: the stored
    /// columns, or (files written before they were stored) one number column per input.
    pub fn columns_for(&self, features: &[String]) -> Vec<ColumnCoding> {
        if !self.columns.is_empty() {
            return self.columns.clone();
        }
        let fill = (self.missing_policy() == MissingPolicy::Zero).then_some(0.0);
        features
            .iter()
            .map(|name| ColumnCoding::Number {
                name: name.clone(),
                fill,
            })
            .collect()
    }

    /// The model inputs' names, in order.
    pub fn input_names(&self) -> Vec<String> {
        self.columns.iter().flat_map(|c| c.input_names()).collect()
    }

    /// How many consecutive model inputs each table column became, in input order (one for a
    /// number or a two-category column, one per level for a one-hot column); empty for a
    /// coding without stored columns.
    pub fn input_groups(&self) -> Vec<usize> {
        self.columns.iter().map(ColumnCoding::width).collect()
    }

    /// A stored coding must give exactly the model's inputs (checked when a model loads).
    pub fn check(&self, features: &[String]) -> Result<()> {
        if self.columns.is_empty() || self.input_names() == features {
            return Ok(());
        }
        Err(Error::ShapeMismatch {
            what: "input coding",
            expected: features.join(","),
            found: self.input_names().join(","),
        })
    }
}

#[cfg(test)]
mod tests;
