//! CSV reading: header (or none), delimiter sniffing, target and dropped columns, and the
//! loading of a training file (fitting its [`InputCoding`]) and of later files for a saved
//! model (applying it).

use std::io::Read;
use std::ops::Range;
use std::path::Path;

use faer::Mat;

use super::{
    shown, Categorical, ClassLabels, CodingOptions, Dataset, InputCoding, LabelMap, MissingPolicy,
    Table, TableError, TrainingLabels, UnknownCategory,
};
use crate::error::{Error, Result};

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
            categorical: self.categorical.clone(),
            unknown_category: self.unknown_category,
        }
    }
}

/// A parsed CSV: the table of cells, and where each record sits in the text (so that rows
/// can be copied unchanged, see [`split_file`](super::split_file)).
pub(super) struct RawTable {
    pub(super) table: Table,
    /// Byte range of the header line in the text, without its line terminator (empty for a
    /// file read without a header).
    pub(super) header_span: Range<usize>,
    /// Byte range of each row in the text, without its line terminator.
    pub(super) spans: Vec<Range<usize>>,
}

/// How the first line of a file is read.
#[derive(Clone, Copy, Debug)]
pub(super) enum Header<'a> {
    /// It names the columns; a first line of numbers is refused with a hint.
    First,
    /// There is none: the columns are named x1…xD, y.
    None,
    /// A file for a model fitted on a headerless file: the first line is data unless it
    /// spells the names, and the columns get the training file's `names` (without `target`
    /// when one fewer).
    Model {
        names: &'a [String],
        target: &'a str,
    },
}

/// One record as read: file line, trimmed cells, byte range in the text.
struct RawRecord {
    line: u64,
    cells: Vec<String>,
    span: Range<usize>,
}

/// The file's text (`.gz` decompressed); bytes that are not UTF-8 are reported at their line.
pub(super) fn read_text(path: &Path) -> Result<String> {
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let mut bytes = std::fs::read(path).map_err(io)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut plain)
            .map_err(io)?;
        bytes = plain;
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = 1 + bytes[..valid].iter().filter(|&&b| b == b'\n').count() as u64;
        let column = valid - bytes[..valid].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        Error::Csv {
            path: path.display().to_string(),
            line,
            message: format!(
                "not UTF-8 text: byte {} of the line (0x{:02x}) is not valid UTF-8; save the file as UTF-8",
                column + 1,
                bytes[valid]
            ),
        }
    })
}

/// Sniff the delimiter from the header line: comma, tab, else whitespace.
fn sniff_delimiter(first_line: &str) -> Option<u8> {
    if first_line.contains(',') {
        Some(b',')
    } else if first_line.contains('\t') {
        Some(b'\t')
    } else {
        None // whitespace-separated
    }
}

/// `text[span]` without line terminators around it (the CSV reader counts a CRLF's `\n`
/// as the start of the next record).
fn without_eol(text: &str, span: Range<usize>) -> Range<usize> {
    // Record bounds sit after an ASCII terminator, so this always slices; if it did not,
    // an empty range at 0 keeps every later slice in bounds.
    let Some(body) = text.get(span.clone()) else {
        return 0..0;
    };
    let start = span.start + (body.len() - body.trim_start_matches(['\n', '\r']).len());
    let end = span.start + body.trim_end_matches(['\n', '\r']).len();
    start..end.max(start)
}

/// Records of a comma- or tab-separated text; rows whose cells are all empty are skipped.
fn delimited_records(path: &str, text: &str, delim: u8) -> Result<Vec<RawRecord>> {
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .delimiter(delim)
        .flexible(true)
        .trim(::csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut rec = ::csv::StringRecord::new();
    let mut out = Vec::new();
    loop {
        let before = rdr.position().byte() as usize;
        let more = rdr.read_record(&mut rec).map_err(|e| Error::Csv {
            path: path.to_string(),
            line: e.position().map_or(0, |pos| pos.line()),
            message: e.to_string(),
        })?;
        if !more {
            return Ok(out);
        }
        if rec.iter().all(|c| c.is_empty()) {
            continue;
        }
        let (line, start) = rec
            .position()
            .map_or((0, before), |pos| (pos.line(), pos.byte() as usize));
        out.push(RawRecord {
            line,
            cells: rec.iter().map(str::to_string).collect(),
            span: without_eol(text, start..rdr.position().byte() as usize),
        });
    }
}

/// Records of a whitespace-separated text, one per non-blank line.
fn whitespace_records(text: &str) -> Vec<RawRecord> {
    let mut out = Vec::new();
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        let span = without_eol(text, offset..offset + l.len());
        offset += l.len();
        let body = &text[span.clone()];
        if !body.trim().is_empty() {
            out.push(RawRecord {
                line: i as u64 + 1,
                cells: body.split_whitespace().map(str::to_string).collect(),
                span,
            });
        }
    }
    out
}

/// A header of one column that holds another common delimiter: say which one we saw.
fn check_single_column(path: &str, header: &[String]) -> Result<()> {
    let [name] = header else { return Ok(()) };
    let name = shown(name);
    match [';', '|', ':'].into_iter().find(|c| name.contains(*c)) {
        Some(c) => Err(Error::Csv {
            path: path.to_string(),
            line: 1,
            message: format!(
                "the header '{name}' reads as one column: the file looks '{c}'-separated, but \
                 pacgp reads comma-, tab- or space-separated files (replace '{c}' by ',')"
            ),
        }),
        None => Ok(()),
    }
}

/// The first repeated header name, as a typed error naming it and both positions.
fn check_unique_names(path: &str, header: &[String]) -> Result<()> {
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

/// A first line of numbers (or missing cells, at least one number): data, not names.
fn all_numbers(cells: &[String]) -> bool {
    cells.iter().any(|c| c.parse::<f64>().is_ok())
        && cells
            .iter()
            .all(|c| c.parse::<f64>().is_ok() || super::is_missing(c))
}

/// Whether a first line spells the headerless training file's `names` (with or without the
/// target): then it is a header line.
fn names_line(cells: &[String], names: &[String], target: &str) -> bool {
    let cells = cells.iter().map(|c| c.trim_matches('"'));
    cells.clone().eq(names.iter().map(String::as_str))
        || cells.eq(names.iter().map(String::as_str).filter(|n| *n != target))
}

/// Names for the `n` columns of a headerless file: x1…x(n−1), y.
pub fn headerless_names(n: usize) -> Vec<String> {
    (1..n)
        .map(|j| format!("x{j}"))
        .chain(std::iter::once("y".to_string()))
        .collect()
}

/// The names a headerless file of `n` columns gets for a model fitted on one.
fn model_names(path: &str, names: &[String], target: &str, n: usize) -> Result<Vec<String>> {
    if n == names.len() {
        return Ok(names.to_vec());
    }
    if n + 1 == names.len() {
        return Ok(names.iter().filter(|c| *c != target).cloned().collect());
    }
    Err(Error::Csv {
        path: path.to_string(),
        line: 1,
        message: format!(
            "{n} columns and no header line, but the model was fitted on a headerless file of {} columns ({})",
            names.len(),
            names.join(",")
        ),
    })
}

/// Split `text` into a header and rows of equal length, checking the header's names.
pub(super) fn parse_table(path: &Path, text: &str, header: Header<'_>) -> Result<RawTable> {
    let p = path.display().to_string();
    let no_rows = |reason| Error::NoDataRows {
        path: p.clone(),
        reason,
    };
    let first = text.lines().find(|l| !l.trim().is_empty());
    let Some(first) = first else {
        return Err(no_rows("the file is empty"));
    };
    let records = match sniff_delimiter(first) {
        Some(delim) => delimited_records(&p, text, delim)?,
        None => whitespace_records(text),
    };
    let mut it = records.into_iter().peekable();
    let head = it.peek().ok_or_else(|| no_rows("the file is empty"))?;
    let named = |cells: &[String]| {
        cells
            .iter()
            .map(|h| h.trim_matches('"').to_string())
            .collect()
    };
    let (names, header_span): (Vec<String>, _) = match header {
        Header::None => (headerless_names(head.cells.len()), 0..0),
        Header::Model { names, target } if !names_line(&head.cells, names, target) => {
            (model_names(&p, names, target, head.cells.len())?, 0..0)
        }
        _ if all_numbers(&head.cells) => {
            return Err(TableError::HeaderLooksLikeData {
                path: p,
                first: shown(&head.cells.join(",")),
            }
            .into())
        }
        _ => {
            let head = it.next().expect("peeked");
            (named(&head.cells), head.span)
        }
    };
    check_single_column(&p, &names)?;
    check_unique_names(&p, &names)?;
    let (mut rows, mut spans) = (Vec::new(), Vec::new());
    for r in it {
        if r.cells.len() != names.len() {
            return Err(Error::Csv {
                path: p,
                line: r.line,
                message: format!(
                    "{} fields, but the {} has {}",
                    r.cells.len(),
                    if header_span.is_empty() {
                        "first line"
                    } else {
                        "header"
                    },
                    names.len()
                ),
            });
        }
        rows.push((r.line, r.cells));
        spans.push(r.span);
    }
    if rows.is_empty() {
        return Err(no_rows("the file has only a header line"));
    }
    Ok(RawTable {
        table: Table {
            source: p,
            header: names,
            rows,
        },
        header_span,
        spans,
    })
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

/// Read a training file: fit its input coding ([`InputCoding::fit`]) and code it; the target
/// as numbers, or as labels ([`TargetKind`]; `opts.positive` is +1 of two labels).
pub fn read_training(
    path: impl AsRef<Path>,
    opts: &CsvOptions,
    target: impl Into<TargetKind>,
) -> Result<Training> {
    let target_kind = target.into();
    let path = path.as_ref();
    let mode = if opts.no_header {
        Header::None
    } else {
        Header::First
    };
    let raw = parse_table(path, &read_text(path)?, mode)?;
    let t = &raw.table;
    let (features, target) = layout(t, opts)?;
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

/// The target column of a file read for a saved model.
#[derive(Clone, Copy, Debug)]
pub enum TargetRead<'a> {
    /// Not read (prediction); the model's target name, which a headerless file may lack.
    Skip(&'a str),
    /// A numeric column of this name.
    Number(&'a str),
    /// A label column of this name, mapped to ±1.
    Labels(&'a str, &'a LabelMap),
    /// A label column of this name, mapped to class indices.
    Classes(&'a str, &'a ClassLabels),
}

/// The rows of a file read for a saved model.
#[derive(Clone, Debug)]
pub struct ModelRows {
    /// Coded inputs of the rows kept.
    pub x: Mat<f64>,
    /// Their targets, if read.
    pub y: Option<Vec<f64>>,
    /// File lines of the rows kept.
    pub lines: Vec<u64>,
    /// File lines of the rows the model's `--missing drop` left out.
    pub dropped: Vec<u64>,
}

/// −1/+1 for a label cell; numeric labels may be written differently ("4" vs "4.0").
fn label_sign(labels: &LabelMap, source: &str, line: u64, cell: &str) -> Result<f64> {
    labels
        .encode(cell)
        .or_else(|e| match cell.parse::<f64>() {
            Ok(v) => labels.encode(&v.to_string()).map_err(|_| e),
            Err(_) => Err(e),
        })
        .map_err(|_| Error::Csv {
            path: source.to_string(),
            line,
            message: format!(
                "label '{}' is neither '{}' nor '{}'",
                shown(cell),
                shown(&labels.negative),
                shown(&labels.positive)
            ),
        })
}

/// Read a file for a saved model: its inputs `features` through the model's `coding` (the
/// same columns, vocabulary, fills and missing-value policy as in training) and the target.
pub fn read_for_model(
    path: impl AsRef<Path>,
    coding: &InputCoding,
    features: &[String],
    target: TargetRead<'_>,
) -> Result<ModelRows> {
    let path = path.as_ref();
    let (name, read) = match target {
        TargetRead::Skip(n) => (n, false),
        TargetRead::Number(n) | TargetRead::Labels(n, _) | TargetRead::Classes(n, _) => (n, true),
    };
    let mode = match &coding.headerless {
        Some(names) => Header::Model {
            names,
            target: name,
        },
        None => Header::First,
    };
    let raw = parse_table(path, &read_text(path)?, mode)?;
    let t = &raw.table;
    let tcol = read.then(|| t.column(name)).transpose()?;
    let enc = coding.apply(t, features, tcol)?;
    let y = tcol
        .map(|j| {
            enc.rows
                .iter()
                .map(|&i| {
                    let (line, cells) = &t.rows[i];
                    match target {
                        TargetRead::Labels(_, map) => label_sign(map, &t.source, *line, &cells[j]),
                        TargetRead::Classes(_, classes) => {
                            classes.encode(&cells[j]).map_err(|e| Error::Csv {
                                path: t.source.clone(),
                                line: *line,
                                message: e.to_string(),
                            })
                        }
                        _ => parse_target(&t.source, *line, &t.header[j], &cells[j]),
                    }
                })
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    Ok(ModelRows {
        lines: enc.rows.iter().map(|&i| t.rows[i].0).collect(),
        dropped: enc.dropped.iter().map(|&i| t.rows[i].0).collect(),
        x: enc.x,
        y,
    })
}

/// Load the named columns of a CSV (for applying a saved model to new data): inputs in the
/// order of `features`, read with `coding`, and, if `target` is given, the numeric target
/// column.
pub fn load_columns(
    path: impl AsRef<Path>,
    features: &[String],
    target: Option<&str>,
    coding: &InputCoding,
) -> Result<(Mat<f64>, Option<Vec<f64>>)> {
    let target = target.map_or(TargetRead::Skip(""), TargetRead::Number);
    let r = read_for_model(path, coding, features, target)?;
    Ok((r.x, r.y))
}

/// As [`load_columns`], with the target's labels mapped to ±1 by `labels` (classification).
pub fn load_columns_labelled(
    path: impl AsRef<Path>,
    features: &[String],
    target: &str,
    labels: &LabelMap,
    coding: &InputCoding,
) -> Result<(Mat<f64>, Vec<f64>)> {
    let r = read_for_model(path, coding, features, TargetRead::Labels(target, labels))?;
    Ok((r.x, r.y.unwrap_or_default()))
}
