//! Input encoding: how a table's text cells become the model's numeric inputs. Text
//! (categorical) columns are coded with the training vocabulary — one-hot, or ±1 for a
//! column of two categories (scikit-learn's `OneHotEncoder(drop="if_binary")`) — missing
//! cells are refused, drop their row, read as 0 or filled with the training mean
//! (scikit-learn's `SimpleImputer`), and a column with no observed value is left out.
//!
//! The coding is fitted once on the training table ([`InputCoding::fit`]), stored with the
//! model (`FittedModel::input_coding`) and applied by the same code to every later table
//! ([`InputCoding::apply`]), so `certify` on the training file rebuilds exactly the training
//! rows and `predict`/`evaluate` read new files as the training file was read.

use faer::Mat;
use serde::{Deserialize, Serialize};

use super::{shown, Moments, TableError};
use crate::error::{Error, Result};

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

/// The options [`InputCoding::fit`] takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodingOptions {
    /// Read `y`/`yes` as +1 and `n`/`no` as −1 in numeric columns.
    pub yes_no: bool,
    /// Missing-value policy.
    pub missing: MissingPolicy,
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

/// A missing cell: empty, `?`, `NA`, `N/A`, `NaN` (as written in R, pandas and UCI files).
pub fn is_missing(cell: &str) -> bool {
    matches!(cell, "" | "?" | "NA" | "N/A" | "na" | "NaN" | "nan")
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

    /// Fit the coding on the training table: `inputs` are the input columns (indices into
    /// its header) and `target` the target column, whose missing cells drop their row under
    /// [`MissingPolicy::DropRows`] and are an error otherwise. Columns with no observed value
    /// are left out (with a note); the vocabulary and the means come from the rows kept.
    pub fn fit(
        table: &Table,
        inputs: &[usize],
        target: Option<usize>,
        opts: &CodingOptions,
    ) -> Result<FittedCoding> {
        let mut notes = Vec::new();
        let (inputs, empty): (Vec<usize>, Vec<usize>) = inputs
            .iter()
            .partition(|&&j| table.rows.iter().any(|(_, r)| !is_missing(&r[j])));
        if !empty.is_empty() {
            notes.push(format!(
                "left out {} with no observed value",
                column_list(table, &empty)
            ));
        }
        if inputs.is_empty() {
            return Err(Error::Csv {
                path: table.source.clone(),
                line: 1,
                message: "no input columns: every input column is empty".into(),
            });
        }
        let mut coding = InputCoding {
            yes_no: opts.yes_no,
            missing: opts.missing,
            unknown_category: opts.unknown_category,
            ..Default::default()
        };
        coding.columns = inputs
            .iter()
            .map(|&j| ColumnCoding::Number {
                name: table.header[j].clone(),
                fill: None,
            })
            .collect();
        let rows = coding.kept_rows(table, &inputs, target)?;
        let categorical = categorical_columns(table, &inputs, &rows, opts)?;
        for (c, &j) in coding.columns.iter_mut().zip(&inputs) {
            if categorical.contains(&j) {
                let levels = sorted_levels(
                    rows.iter()
                        .map(|&i| table.rows[i].1[j].as_str())
                        .filter(|c| !is_missing(c)),
                );
                *c = ColumnCoding::Category {
                    name: table.header[j].clone(),
                    levels,
                    fill: None,
                };
            }
        }
        if !categorical.is_empty() {
            notes.push(category_note(&coding.columns));
        }
        coding.fit_fills(table, &inputs, &rows, &mut notes)?;
        if rows.len() < table.rows.len() {
            notes.push(format!(
                "left out {} of {} rows with a missing value",
                table.rows.len() - rows.len(),
                table.rows.len()
            ));
        }
        Ok(FittedCoding { coding, notes })
    }

    /// The fill of each column under [`MissingPolicy::Zero`] or [`MissingPolicy::Mean`],
    /// from the training rows `rows`.
    fn fit_fills(
        &mut self,
        table: &Table,
        inputs: &[usize],
        rows: &[usize],
        notes: &mut Vec<String>,
    ) -> Result<()> {
        let policy = self.missing;
        if !matches!(policy, MissingPolicy::Zero | MissingPolicy::Mean) {
            return Ok(());
        }
        let (yes_no, unknown) = (self.yes_no, self.unknown_category);
        let mut filled = Vec::new();
        for (c, &j) in self.columns.iter_mut().zip(inputs) {
            let cells: Vec<(u64, &str)> = rows
                .iter()
                .map(|&i| (table.rows[i].0, table.rows[i].1[j].as_str()))
                .filter(|(_, cell)| !is_missing(cell))
                .collect();
            let n_missing = rows.len() - cells.len();
            let width = c.width();
            let mut codes = Mat::<f64>::zeros(cells.len(), width);
            for (i, (line, cell)) in cells.iter().enumerate() {
                encode_cell(
                    c,
                    &table.source,
                    *line,
                    cell,
                    yes_no,
                    unknown,
                    &mut codes,
                    i,
                    0,
                )?;
            }
            let fill: Vec<f64> = match policy {
                MissingPolicy::Mean => (0..width)
                    .map(|k| Moments::of(codes.col_as_slice(k)).mean)
                    .collect(),
                _ => vec![0.0; width],
            };
            if n_missing > 0 {
                filled.push(format!("{} ({n_missing})", shown(c.name())));
            }
            match c {
                ColumnCoding::Number { fill: f, .. } => *f = Some(fill[0]),
                ColumnCoding::Category { fill: f, .. } => *f = Some(fill),
            }
        }
        if !filled.is_empty() {
            let how = match policy {
                MissingPolicy::Mean => "the training mean",
                _ => "0",
            };
            notes.push(format!(
                "missing cells read as {how}: {}",
                filled.join(", ")
            ));
        }
        Ok(())
    }

    /// Indices of the rows the policy keeps: under [`MissingPolicy::DropRows`] those with no
    /// missing input (of `inputs`) or target; otherwise every row, a missing target failing.
    fn kept_rows(
        &self,
        table: &Table,
        inputs: &[usize],
        target: Option<usize>,
    ) -> Result<Vec<usize>> {
        let drop = self.missing_policy() == MissingPolicy::DropRows;
        let mut rows = Vec::with_capacity(table.rows.len());
        for (i, (line, r)) in table.rows.iter().enumerate() {
            if let Some(t) = target.filter(|&t| is_missing(&r[t])) {
                if !drop {
                    return Err(TableError::MissingTarget {
                        line: *line,
                        column: shown(&table.header[t]),
                    }
                    .into());
                }
                continue;
            }
            if drop && inputs.iter().any(|&j| is_missing(&r[j])) {
                continue;
            }
            rows.push(i);
        }
        if rows.is_empty() {
            return Err(TableError::NoCompleteRows {
                path: table.source.clone(),
            }
            .into());
        }
        Ok(rows)
    }

    /// Code a table with this coding: find the columns by name, keep the rows the missing
    /// policy keeps (`target`'s missing cells count under [`MissingPolicy::DropRows`]), and
    /// code every cell of them.
    pub fn apply(
        &self,
        table: &Table,
        features: &[String],
        target: Option<usize>,
    ) -> Result<Encoded> {
        let columns = self.columns_for(features);
        let idx: Vec<usize> = columns
            .iter()
            .map(|c| table.column(c.name()))
            .collect::<Result<_>>()?;
        let rows = self.kept_rows(table, &idx, target)?;
        let width: usize = columns.iter().map(ColumnCoding::width).sum();
        let mut x = Mat::<f64>::zeros(rows.len(), width);
        let unknown = self.unknown_category;
        let missing = self.missing_policy();
        for (out, &i) in rows.iter().enumerate() {
            let (line, cells) = &table.rows[i];
            let mut at = 0;
            for (c, &j) in columns.iter().zip(&idx) {
                let cell = cells[j].as_str();
                if is_missing(cell) {
                    let fill = match c {
                        ColumnCoding::Number { fill, .. } => fill.map(|v| vec![v]),
                        ColumnCoding::Category { fill, .. } => fill.clone(),
                    };
                    // Old files with `missing_as_zero` have no stored fill: 0 then.
                    let fill = fill
                        .or_else(|| (missing == MissingPolicy::Zero).then(|| vec![0.0; c.width()]));
                    let Some(fill) = fill else {
                        return Err(TableError::MissingValue {
                            line: *line,
                            column: shown(c.name()),
                        }
                        .into());
                    };
                    for (k, v) in fill.into_iter().enumerate() {
                        x[(out, at + k)] = v;
                    }
                } else {
                    encode_cell(
                        c,
                        &table.source,
                        *line,
                        cell,
                        self.yes_no,
                        unknown,
                        &mut x,
                        out,
                        at,
                    )?;
                }
                at += c.width();
            }
        }
        let kept: std::collections::HashSet<usize> = rows.iter().copied().collect();
        let dropped = (0..table.rows.len())
            .filter(|i| !kept.contains(i))
            .collect();
        Ok(Encoded { x, rows, dropped })
    }
}

/// Write the code of a present `cell` of column `c` into `x[row, at..at + width]`.
fn encode_cell(
    c: &ColumnCoding,
    source: &str,
    line: u64,
    cell: &str,
    yes_no: bool,
    unknown: UnknownCategory,
    x: &mut Mat<f64>,
    row: usize,
    at: usize,
) -> Result<()> {
    match c {
        ColumnCoding::Number { name, .. } => {
            x[(row, at)] = input_number(source, line, name, cell, yes_no)?;
        }
        ColumnCoding::Category { name, levels, .. } => {
            match levels.iter().position(|l| l == cell) {
                Some(k) if levels.len() == 2 => x[(row, at)] = if k == 0 { -1.0 } else { 1.0 },
                Some(k) => x[(row, at + k)] = 1.0,
                None if unknown == UnknownCategory::Ignore => {} // all zeros
                None => {
                    return Err(TableError::UnknownCategory {
                        path: source.to_string(),
                        line,
                        column: shown(name),
                        value: shown(cell),
                        known: levels
                            .iter()
                            .map(|l| shown(l))
                            .collect::<Vec<_>>()
                            .join(", "),
                    }
                    .into())
                }
            }
        }
    }
    Ok(())
}

/// A finite input number; the error names line, column and cell, with the flag that helps.
fn input_number(source: &str, line: u64, column: &str, cell: &str, yes_no: bool) -> Result<f64> {
    let bad = |message: String| Error::Csv {
        path: source.to_string(),
        line,
        message,
    };
    match number(cell, yes_no) {
        Some(v) if v.is_finite() => Ok(v),
        Some(_) => Err(bad(format!(
            "column '{}': '{}' is not finite",
            shown(column),
            shown(cell)
        ))),
        None => Err(bad(format!(
            "column '{}': '{}' is not a number (this column was numeric in the training data)",
            shown(column),
            shown(cell)
        ))),
    }
}

/// The categorical columns among `inputs`: those named, or with `Auto` those holding a cell
/// that is not a number; without either, text in any column is an error naming them all.
fn categorical_columns(
    table: &Table,
    inputs: &[usize],
    rows: &[usize],
    opts: &CodingOptions,
) -> Result<Vec<usize>> {
    let first_text = |j: usize| {
        rows.iter().map(|&i| &table.rows[i]).find(|(_, r)| {
            let c = r[j].as_str();
            !is_missing(c) && number(c, opts.yes_no).is_none()
        })
    };
    let named: Vec<usize> = match &opts.categorical {
        Categorical::Named(names) => names
            .iter()
            .map(|n| {
                let j = table.column(n)?;
                if inputs.contains(&j) {
                    Ok(j)
                } else {
                    Err(TableError::CategoricalNotInput { column: shown(n) }.into())
                }
            })
            .collect::<Result<_>>()?,
        _ => Vec::new(),
    };
    let text: Vec<(usize, u64, String)> = inputs
        .iter()
        .filter(|j| !named.contains(j))
        .filter_map(|&j| first_text(j).map(|(line, r)| (j, *line, r[j].clone())))
        .collect();
    if opts.categorical == Categorical::Auto {
        return Ok(inputs
            .iter()
            .copied()
            .filter(|j| named.contains(j) || text.iter().any(|t| t.0 == *j))
            .collect());
    }
    if text.is_empty() {
        return Ok(named);
    }
    let mut found: Vec<String> = text
        .iter()
        .take(3)
        .map(|(j, line, cell)| {
            format!(
                "'{}' ('{}' at line {line})",
                shown(&table.header[*j]),
                shown(cell)
            )
        })
        .collect();
    if text.len() > 3 {
        found.push(format!("… ({} columns in all)", text.len()));
    }
    let names: Vec<String> = text.iter().map(|t| shown(&table.header[t.0])).collect();
    Err(TableError::TextColumns {
        path: table.source.clone(),
        found: found.join(", "),
        names,
    }
    .into())
}

/// `column 'a'` or `columns 'a', 'b'`.
fn column_list(table: &Table, cols: &[usize]) -> String {
    let names: Vec<String> = cols
        .iter()
        .map(|&j| format!("'{}'", shown(&table.header[j])))
        .collect();
    let s = if cols.len() == 1 { "" } else { "s" };
    format!("column{s} {}", names.join(", "))
}

/// "encoded as categories: sex (F → −1, M → +1), colour (3 levels, one input each)".
fn category_note(columns: &[ColumnCoding]) -> String {
    let parts: Vec<String> = columns
        .iter()
        .filter_map(|c| match c {
            ColumnCoding::Category { name, levels, .. } if levels.len() == 2 => Some(format!(
                "{} ({} → −1, {} → +1)",
                shown(name),
                shown(&levels[0]),
                shown(&levels[1])
            )),
            ColumnCoding::Category { name, levels, .. } => {
                let many = if levels.len() > 30 {
                    " — an identifier? leave the column out"
                } else {
                    ""
                };
                Some(format!(
                    "{} ({} categories, one input each{many})",
                    shown(name),
                    levels.len()
                ))
            }
            ColumnCoding::Number { .. } => None,
        })
        .collect();
    format!("encoded as categories: {}", parts.join(", "))
}
