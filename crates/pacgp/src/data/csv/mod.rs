//! CSV files: the text read into a table of cells (`parse`: header or none, delimiter
//! sniffing, line numbers), the loading of a training file (target and dropped columns, fitting
//! its [`InputCoding`]; here) and of later files for a saved model (applying it; `model`).

use std::path::Path;

use super::{
    shown, Categorical, ClassLabels, CodingOptions, Dataset, InputCoding, LabelMap, MissingCells,
    MissingPolicy, Table, TableError, TrainingLabels, UnknownCategory,
};
use crate::error::{Error, Result};

mod model;
mod parse;

pub use model::*;
pub use parse::headerless_names;
pub(super) use parse::{parse_table, read_text, Header};

/// Which column holds the target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TargetSpec {
    /// The last column (default).
    #[default]
    Last,
    /// By header name.
    Name(String),
    /// By 0-based index.
    Index(usize),
}

impl TargetSpec {
    /// Parse a CLI value: a number is an index, anything else a name.
    pub fn parse(s: &str) -> Self {
        match s.parse::<usize>() {
            Ok(i) => TargetSpec::Index(i),
            Err(_) => TargetSpec::Name(s.to_string()),
        }
    }
}

/// Options for [`load_csv`] and [`read_training`].
#[derive(Clone, Debug, Default)]
pub struct CsvOptions {
    /// Target column.
    pub target: TargetSpec,
    /// Columns to ignore (by name).
    pub drop_columns: Vec<String>,
    /// Missing-value policy.
    pub missing: MissingPolicy,
    /// Read `y`/`yes` as +1 and `n`/`no` as −1 in input columns (yes/no attributes such as votes).
    pub yes_no: bool,
    /// Which input columns are categorical (one-hot coded with the training vocabulary).
    pub categorical: Categorical,
    /// What a category unseen in training becomes in later files.
    pub unknown_category: UnknownCategory,
    /// The cells read as missing (default: [`MISSING_CELLS`](crate::vocabulary::MISSING_CELLS)).
    pub missing_cells: MissingCells,
    /// The most distinct values a categorical column may have (`None`: the default,
    /// [`DEFAULT_MAX_CATEGORIES`](crate::data::DEFAULT_MAX_CATEGORIES)).
    pub max_categories: Option<usize>,
    /// The file has no header line: columns are named x1…xD and y (the last).
    pub no_header: bool,
    /// Classification: the label coded +1 (default: the second in sorted order).
    pub positive: Option<String>,
}

impl CsvOptions {
    /// The options of the input coding.
    pub fn coding(&self) -> CodingOptions {
        CodingOptions {
            yes_no: self.yes_no,
            missing: self.missing,
            missing_cells: self.missing_cells.clone(),
            categorical: self.categorical.clone(),
            unknown_category: self.unknown_category,
            max_categories: self.max_categories,
        }
    }
}

/// Column indices: (features, target).
fn layout(t: &Table, opts: &CsvOptions) -> Result<(Vec<usize>, usize)> {
    let target = match &opts.target {
        TargetSpec::Last => t.header.len() - 1,
        TargetSpec::Name(n) => t.column(n)?,
        TargetSpec::Index(i) if *i < t.header.len() => *i,
        TargetSpec::Index(i) => {
            return Err(Error::ColumnNotFound {
                name: format!("#{i}"),
                available: t.header.join(", "),
            })
        }
    };
    let dropped: Vec<usize> = opts
        .drop_columns
        .iter()
        .map(|n| t.column(n))
        .collect::<Result<_>>()?;
    if dropped.contains(&target) {
        return Err(TableError::DroppedTarget {
            column: shown(&t.header[target]),
        }
        .into());
    }
    let features: Vec<usize> = (0..t.header.len())
        .filter(|j| *j != target && !dropped.contains(j))
        .collect();
    if features.is_empty() {
        let target = shown(&t.header[target]);
        if !dropped.is_empty() {
            return Err(TableError::OnlyTargetLeft {
                path: t.source.clone(),
                dropped: dropped.iter().map(|&j| shown(&t.header[j])).collect(),
                target,
            }
            .into());
        }
        return Err(Error::Csv {
            path: t.source.clone(),
            line: 1,
            message: format!("no input columns: the header has only the target column '{target}'"),
        });
    }
    Ok((features, target))
}

/// A finite regression target; the error names line and column, and points at the classifiers.
fn parse_target(source: &str, line: u64, column: &str, cell: &str) -> Result<f64> {
    let bad = |message| Error::Csv {
        path: source.to_string(),
        line,
        message,
    };
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(bad(format!(
            "column '{}': '{}' is not finite",
            shown(column),
            shown(cell)
        ))),
        Err(_) => Err(TableError::TargetNotNumber {
            path: source.to_string(),
            line,
            column: shown(column),
            cell: shown(cell),
        }
        .into()),
    }
}

/// How a training file's target column is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// Real numbers (regression).
    Number,
    /// Exactly two labels, coded −1/+1 (binary classifiers).
    TwoLabels,
    /// Two labels coded −1/+1, or K ≥ 3 classes coded by their index `0..K` (a binary
    /// classifier's spec becomes one-vs-rest on more than two classes).
    AnyLabels,
    /// K ≥ 2 classes coded by their index (the multi-class methods).
    Classes,
}

/// `true` is a binary classifier's target (two labels), `false` a regression target.
impl From<bool> for TargetKind {
    fn from(classify: bool) -> Self {
        if classify {
            TargetKind::TwoLabels
        } else {
            TargetKind::Number
        }
    }
}

/// A training file as read: the data set, its labels (classification), the fitted input
/// coding and what the coding did (one sentence each).
#[derive(Clone, Debug)]
pub struct Training {
    /// Inputs (coded) and targets (±1 for two labels, class indices for K classes).
    pub data: Dataset,
    /// The two labels (binary classification).
    pub labels: Option<LabelMap>,
    /// The K classes (multi-class classification).
    pub classes: Option<ClassLabels>,
    /// How the file's cells became the inputs: store it with the model.
    pub coding: InputCoding,
    /// What the coding encoded, filled in or left out.
    pub notes: Vec<String>,
}

impl Training {
    /// The labels to fit with ([`crate::fit::fit`]'s third argument).
    pub fn training_labels(&self) -> TrainingLabels {
        match (&self.labels, &self.classes) {
            (_, Some(c)) => TrainingLabels::Classes(c.clone()),
            (Some(l), None) => TrainingLabels::Binary(l.clone()),
            (None, None) => TrainingLabels::None,
        }
    }
}

/// The table of a training file, its first line the header unless `opts.no_header`.
fn read_table(path: &Path, opts: &CsvOptions) -> Result<parse::RawTable> {
    let mode = if opts.no_header {
        Header::None
    } else {
        Header::First
    };
    parse_table(path, &read_text(path)?, mode)
}

/// Read a training file: fit its input coding ([`InputCoding::fit`]) and code it; the target
/// as numbers, or as labels ([`TargetKind`]; `opts.positive` is +1 of two labels).
pub fn read_training(
    path: impl AsRef<Path>,
    opts: &CsvOptions,
    target: impl Into<TargetKind>,
) -> Result<Training> {
    let target_kind = target.into();
    let path = path.as_ref();
    let raw = read_table(path, opts)?;
    let t = &raw.table;
    let (features, target) = layout(t, opts)?;
    if !matches!(target_kind, TargetKind::Number) {
        refuse_labels_read_as_missing(t, target, &opts.missing_cells)?;
    }
    let fitted = InputCoding::fit(t, &features, Some(target), &opts.coding())?;
    let mut coding = fitted.coding;
    if opts.no_header {
        coding.headerless = Some(t.header.clone());
    }
    let names = coding.input_names();
    let enc = coding.apply(t, &names, Some(target))?;
    let cell = |i: usize| (t.rows[i].0, t.rows[i].1[target].as_str());
    let cells: Vec<&str> = enc.rows.iter().map(|&i| cell(i).1).collect();
    let (y, labels, classes) = match target_kind {
        TargetKind::Number => {
            if opts.positive.is_some() {
                return Err(TableError::PositiveForNumbers.into());
            }
            let y = enc
                .rows
                .iter()
                .map(|&i| parse_target(&t.source, cell(i).0, &t.header[target], cell(i).1))
                .collect::<Result<_>>()?;
            (y, None, None)
        }
        TargetKind::AnyLabels if distinct_count(&cells) > 2 => class_targets(&cells, opts)?,
        TargetKind::Classes => class_targets(&cells, opts)?,
        TargetKind::TwoLabels | TargetKind::AnyLabels => {
            let mut map = LabelMap::from_cells(&cells)?;
            if let Some(p) = &opts.positive {
                map = map.with_positive(p)?;
            }
            let y = cells.iter().map(|c| map.encode(c)).collect::<Result<_>>()?;
            (y, Some(map), None)
        }
    };
    let data = Dataset::with_names(enc.x, y, names, t.header[target].clone())?;
    Ok(Training {
        data,
        labels,
        classes,
        coding,
        notes: fitted.notes,
    })
}

/// A training file with K ≥ 2 real target columns (multi-output regression), as read: each
/// output's data set on the same inputs, the input coding and its notes.
#[derive(Clone, Debug)]
pub struct OutputsTraining {
    /// The outputs, in the order the targets were named.
    pub outputs: super::Outputs,
    /// How the file's cells became the inputs (every other target column left out).
    pub coding: InputCoding,
    /// What the coding encoded, filled in or left out.
    pub notes: Vec<String>,
}

/// Read a training file with several real target columns (by name or index, at least two):
/// each target as [`read_training`] reads one, with the other targets left out of the inputs;
/// the reads must keep the same rows and inputs (a missing cell in one target is refused
/// where it would drop a row of one output only).
pub fn read_outputs(
    path: impl AsRef<Path>,
    opts: &CsvOptions,
    targets: &[TargetSpec],
) -> Result<OutputsTraining> {
    let path = path.as_ref();
    let raw = read_table(path, opts)?;
    let names = targets
        .iter()
        .map(|t| {
            let one = CsvOptions {
                target: t.clone(),
                ..opts.clone()
            };
            Ok(raw.table.header[layout(&raw.table, &one)?.1].clone())
        })
        .collect::<Result<Vec<String>>>()?;
    let reads = names
        .iter()
        .map(|name| {
            let mut one = opts.clone();
            one.target = TargetSpec::Name(name.clone());
            one.drop_columns
                .extend(names.iter().filter(|n| *n != name).cloned());
            read_training(path, &one, TargetKind::Number)
        })
        .collect::<Result<Vec<Training>>>()?;
    let first = &reads[0];
    let notes = first.notes.clone();
    let coding = first.coding.clone();
    if reads
        .iter()
        .any(|r| r.coding != coding || r.data.n() != first.data.n())
    {
        return Err(Error::Unsupported(format!(
            "the target columns {names:?} keep different rows of {} (a missing target cell drops its row for that output only): fill or drop those rows first",
            path.display()
        )));
    }
    let outputs = super::Outputs::from_samples(reads.into_iter().map(|r| r.data).collect())?;
    Ok(OutputsTraining {
        outputs,
        coding,
        notes,
    })
}

/// Class labels that are a missing-value word (`NA`, `nan`, …, or any word of `missing`; not
/// an empty cell or `?`) are refused whatever the missing-value policy: leaving their rows
/// out would delete the class without a word. The error names the label, how many rows have
/// it, and the cells to read as missing without it.
fn refuse_labels_read_as_missing(t: &Table, target: usize, missing: &MissingCells) -> Result<()> {
    let word = |c: &str| missing.contains(c) && !c.is_empty() && c != "?";
    let mut hits = t.rows.iter().filter(|(_, r)| word(&r[target]));
    let Some((line, first)) = hits.next() else {
        return Ok(());
    };
    Err(TableError::LabelReadAsMissing {
        path: t.source.clone(),
        column: shown(&t.header[target]),
        line: *line,
        cell: shown(&first[target]),
        rows: 1 + hits.count(),
        read_as_missing: Box::new(missing.clone()),
    }
    .into())
}

/// Number of distinct cells.
fn distinct_count(cells: &[&str]) -> usize {
    let mut d: Vec<&str> = cells.to_vec();
    d.sort_unstable();
    d.dedup();
    d.len()
}

/// Class-index targets of K classes (`--positive` names one of two labels: refused here).
type ClassTargets = (Vec<f64>, Option<LabelMap>, Option<ClassLabels>);

fn class_targets(cells: &[&str], opts: &CsvOptions) -> Result<ClassTargets> {
    let classes = ClassLabels::from_cells(cells)?;
    if opts.positive.is_some() {
        return Err(TableError::PositiveForClasses {
            k: classes.k(),
            classes: classes.shown_list(),
        }
        .into());
    }
    let y = cells
        .iter()
        .map(|c| classes.encode(c))
        .collect::<Result<_>>()?;
    Ok((y, None, Some(classes)))
}

/// Load a numeric CSV with a header row (`.csv.gz` too) for regression.
///
/// ```
/// use pacgp::data::{load_csv, CsvOptions, TargetSpec};
///
/// let path = std::env::temp_dir().join(format!("pacgp-load-csv-{}.csv", std::process::id()));
/// std::fs::write(&path, "price,rooms,age\n3.5,2,10\n4.0,3,5\n5.5,4,1\n")?;
///
/// // The target is the last column unless named.
/// let opts = CsvOptions { target: TargetSpec::Name("price".into()), ..Default::default() };
/// let data = load_csv(&path, &opts)?;
/// std::fs::remove_file(&path)?;
/// assert_eq!(data.target_name, "price");
/// assert_eq!(data.feature_names, ["rooms", "age"]);
/// assert_eq!(data.y, [3.5, 4.0, 5.5]);
/// assert_eq!(data.x[(2, 1)], 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_csv(path: impl AsRef<Path>, opts: &CsvOptions) -> Result<Dataset> {
    Ok(read_training(path, opts, false)?.data)
}

/// Load a CSV for binary classification: the target may hold any two distinct values
/// (numbers or strings); they become −1 / +1 per [`LabelMap`].
pub fn load_csv_classification(
    path: impl AsRef<Path>,
    opts: &CsvOptions,
) -> Result<(Dataset, LabelMap)> {
    let t = read_training(path, opts, true)?;
    Ok((t.data, t.labels.expect("classification reads a label map")))
}
