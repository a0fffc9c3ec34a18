//! CSV reading: header, delimiter sniffing, target and dropped columns, missing values,
//! yes/no coding, and the column-by-name loading used to apply a saved model to new files.

use std::io::Read;
use std::ops::Range;
use std::path::Path;

use faer::Mat;
use serde::{Deserialize, Serialize};

use super::{Dataset, LabelMap};
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

/// What to do with missing values (`?`, empty, `NA`, `NaN` as text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingPolicy {
    /// Fail, naming line and column (default).
    #[default]
    Reject,
    /// Skip rows with any missing value in a used column.
    DropRows,
    /// Read a missing input value as 0 (e.g. an abstention among ±1-coded votes); a missing
    /// target still fails.
    Zero,
}

/// How input cells are read besides plain numbers: kept with a fitted model, so that the
/// files it is applied to are read as its training file was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputCoding {
    /// `y`/`yes` → +1, `n`/`no` → −1.
    pub yes_no: bool,
    /// A missing input value → 0 ([`MissingPolicy::Zero`]).
    pub missing_as_zero: bool,
}

impl InputCoding {
    /// The coding that `opts` applies to input cells.
    pub fn of(opts: &CsvOptions) -> Self {
        Self {
            yes_no: opts.yes_no,
            missing_as_zero: opts.missing == MissingPolicy::Zero,
        }
    }

    /// Options that read inputs this way and reject any other missing value.
    fn options(self) -> CsvOptions {
        CsvOptions {
            yes_no: self.yes_no,
            missing: if self.missing_as_zero {
                MissingPolicy::Zero
            } else {
                MissingPolicy::Reject
            },
            ..Default::default()
        }
    }
}

/// Options for [`load_csv`].
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
}

/// A parsed CSV: header and raw string cells, with 1-based file line numbers and where
/// each record sits in the text (so that rows can be copied unchanged, see
/// [`split_file`](super::split_file)).
pub(super) struct RawTable {
    pub(super) path: String,
    pub(super) header: Vec<String>,
    pub(super) rows: Vec<(u64, Vec<String>)>,
    /// Byte range of the header line in the text, without its line terminator.
    pub(super) header_span: Range<usize>,
    /// Byte range of each row in the text, without its line terminator.
    pub(super) spans: Vec<Range<usize>>,
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
                name: name.clone(),
                first: first + 1,
                second: second + 1,
            });
        }
    }
    Ok(())
}

/// Split `text` into a header and rows of equal length, checking the header's names.
pub(super) fn parse_table(path: &Path, text: &str) -> Result<RawTable> {
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
    let mut it = records.into_iter();
    let head = it.next().ok_or_else(|| no_rows("the file is empty"))?;
    let header: Vec<String> = head
        .cells
        .into_iter()
        .map(|h| h.trim_matches('"').to_string())
        .collect();
    check_single_column(&p, &header)?;
    check_unique_names(&p, &header)?;
    let (mut rows, mut spans) = (Vec::new(), Vec::new());
    for r in it {
        if r.cells.len() != header.len() {
            return Err(Error::Csv {
                path: p,
                line: r.line,
                message: format!(
                    "{} fields, but the header has {}",
                    r.cells.len(),
                    header.len()
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
        path: p,
        header,
        rows,
        header_span: head.span,
        spans,
    })
}

fn is_missing(cell: &str) -> bool {
    matches!(cell, "" | "?" | "NA" | "N/A" | "na" | "NaN" | "nan")
}

fn find_column(header: &[String], name: &str) -> Result<usize> {
    header
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| Error::ColumnNotFound {
            name: name.to_string(),
            available: header.join(", "),
        })
}

/// Column indices: (features, target).
fn layout(t: &RawTable, opts: &CsvOptions) -> Result<(Vec<usize>, usize)> {
    let target = match &opts.target {
        TargetSpec::Last => t.header.len() - 1,
        TargetSpec::Name(n) => find_column(&t.header, n)?,
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
        .map(|n| find_column(&t.header, n))
        .collect::<Result<_>>()?;
    if dropped.contains(&target) {
        return Err(Error::DroppedTarget {
            column: t.header[target].clone(),
        });
    }
    let features: Vec<usize> = (0..t.header.len())
        .filter(|j| *j != target && !dropped.contains(j))
        .collect();
    if features.is_empty() {
        let why = if dropped.is_empty() {
            "the header has only the target column"
        } else {
            "every column but the target is dropped by --drop"
        };
        return Err(Error::Csv {
            path: t.path.clone(),
            line: 1,
            message: format!("no input columns: {why} '{}'", t.header[target]),
        });
    }
    Ok((features, target))
}

/// Rows kept after the missing-value policy; errors name line and column.
fn kept_rows<'a>(
    t: &'a RawTable,
    cols: &[usize],
    policy: MissingPolicy,
) -> Result<Vec<&'a (u64, Vec<String>)>> {
    let mut out = Vec::with_capacity(t.rows.len());
    for row in &t.rows {
        match cols.iter().find(|&&j| is_missing(&row.1[j])) {
            None => out.push(row),
            Some(&j) if policy != MissingPolicy::DropRows => {
                return Err(Error::MissingValue {
                    line: row.0,
                    column: t.header[j].clone(),
                })
            }
            Some(_) => {}
        }
    }
    if out.is_empty() {
        return Err(Error::NoDataRows {
            path: t.path.clone(),
            reason: "every row has a missing value in a column used, so --drop-missing leaves none",
        });
    }
    Ok(out)
}

/// Whether a cell is an input or the target (for the hint in an error).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Input,
    Target,
}

/// A finite number; an error names line and column, with a hint at the flag that helps.
fn parse_number(path: &Path, line: u64, column: &str, cell: &str, role: Role) -> Result<f64> {
    let v: f64 = cell.parse().map_err(|_| Error::Csv {
        path: path.display().to_string(),
        line,
        message: if role == Role::Target {
            format!(
                "column '{column}': '{cell}' is not a number (a regression target must be numeric; \
                 class labels need a classifier, e.g. --method laplace)"
            )
        } else if matches!(cell.to_ascii_lowercase().as_str(), "y" | "yes" | "n" | "no") {
            format!("column '{column}': '{cell}' is not a number (read yes/no as ±1 with --yes-no)")
        } else {
            format!(
                "column '{column}': '{cell}' is not a number (ignore the column with --drop {column}, \
                 or choose another target with --target)"
            )
        },
    })?;
    if !v.is_finite() {
        return Err(Error::Csv {
            path: path.display().to_string(),
            line,
            message: format!("column '{column}': '{cell}' is not finite"),
        });
    }
    Ok(v)
}

/// One input cell under the options: 0 for a missing value with [`MissingPolicy::Zero`],
/// ±1 for yes/no with `yes_no`, else a number.
fn parse_input(path: &Path, line: u64, column: &str, cell: &str, opts: &CsvOptions) -> Result<f64> {
    if opts.missing == MissingPolicy::Zero && is_missing(cell) {
        return Ok(0.0);
    }
    if opts.yes_no {
        match cell.to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(1.0),
            "n" | "no" => return Ok(-1.0),
            _ => {}
        }
    }
    parse_number(path, line, column, cell, Role::Input)
}

/// Load a numeric CSV with a header row (`.csv.gz` too) for regression.
pub fn load_csv(path: impl AsRef<Path>, opts: &CsvOptions) -> Result<Dataset> {
    let (ds, _) = load_impl(path.as_ref(), opts, false)?;
    Ok(ds)
}

/// Load a CSV for binary classification: the target may hold any two distinct values
/// (numbers or strings); they become −1 / +1 per [`LabelMap`].
pub fn load_csv_classification(
    path: impl AsRef<Path>,
    opts: &CsvOptions,
) -> Result<(Dataset, LabelMap)> {
    let (ds, map) = load_impl(path.as_ref(), opts, true)?;
    Ok((ds, map.expect("classification load returns a label map")))
}

fn load_impl(
    path: &Path,
    opts: &CsvOptions,
    classify: bool,
) -> Result<(Dataset, Option<LabelMap>)> {
    let t = parse_table(path, &read_text(path)?)?;
    let (features, target) = layout(&t, opts)?;
    let mut used = features.clone();
    used.push(target);
    let checked = if opts.missing == MissingPolicy::Zero {
        vec![target]
    } else {
        used
    };
    let rows = kept_rows(&t, &checked, opts.missing)?;
    let x = {
        let mut x = Mat::<f64>::zeros(rows.len(), features.len());
        for (i, (line, r)) in rows.iter().enumerate() {
            for (k, &j) in features.iter().enumerate() {
                x[(i, k)] = parse_input(path, *line, &t.header[j], &r[j], opts)?;
            }
        }
        x
    };
    let (y, map) = if classify {
        let cells: Vec<&str> = rows.iter().map(|(_, r)| r[target].as_str()).collect();
        let map = LabelMap::from_cells(&cells)?;
        (
            cells
                .iter()
                .map(|c| map.encode(c))
                .collect::<Result<Vec<_>>>()?,
            Some(map),
        )
    } else {
        let y = rows
            .iter()
            .map(|(line, r)| parse_number(path, *line, &t.header[target], &r[target], Role::Target))
            .collect::<Result<Vec<_>>>()?;
        (y, None)
    };
    let names = features.iter().map(|&j| t.header[j].clone()).collect();
    Ok((
        Dataset::with_names(x, y, names, t.header[target].clone())?,
        map,
    ))
}

/// Load the named columns of a CSV (for applying a saved model to new data): inputs in the
/// order of `features`, read with `coding`, and, if `target` is given, the numeric target
/// column. Any other missing value is an error.
pub fn load_columns(
    path: impl AsRef<Path>,
    features: &[String],
    target: Option<&str>,
    coding: InputCoding,
) -> Result<(Mat<f64>, Option<Vec<f64>>)> {
    let p = path.as_ref();
    load_columns_with(p, features, target, coding, &|line, col, cell| {
        parse_number(p, line, col, cell, Role::Target)
    })
}

/// As [`load_columns`], with the target's labels mapped to ±1 by `labels` (classification).
pub fn load_columns_labelled(
    path: impl AsRef<Path>,
    features: &[String],
    target: &str,
    labels: &LabelMap,
    coding: InputCoding,
) -> Result<(Mat<f64>, Vec<f64>)> {
    let p = path.as_ref();
    let (x, y) = load_columns_with(p, features, Some(target), coding, &|line, _, cell| {
        // Numeric labels may be written differently ("4" vs "4.0"): compare as numbers too.
        labels
            .encode(cell)
            .or_else(|e| match cell.parse::<f64>() {
                Ok(v) => labels.encode(&v.to_string()).map_err(|_| e),
                Err(_) => Err(e),
            })
            .map_err(|_| Error::Csv {
                path: p.display().to_string(),
                line,
                message: format!(
                    "label '{cell}' is neither '{}' nor '{}'",
                    labels.negative, labels.positive
                ),
            })
    })?;
    Ok((x, y.unwrap_or_default()))
}

type CellParser<'a> = dyn Fn(u64, &str, &str) -> Result<f64> + 'a;

fn load_columns_with(
    path: &Path,
    features: &[String],
    target: Option<&str>,
    coding: InputCoding,
    parse_target: &CellParser<'_>,
) -> Result<(Mat<f64>, Option<Vec<f64>>)> {
    let opts = coding.options();
    let t = parse_table(path, &read_text(path)?)?;
    let fcols: Vec<usize> = features
        .iter()
        .map(|f| find_column(&t.header, f))
        .collect::<Result<_>>()?;
    let tcol = target.map(|n| find_column(&t.header, n)).transpose()?;
    // With missing inputs read as 0 only the target must be present.
    let mut used = if coding.missing_as_zero {
        vec![]
    } else {
        fcols.clone()
    };
    used.extend(tcol);
    let rows = kept_rows(&t, &used, opts.missing)?;
    let mut x = Mat::<f64>::zeros(rows.len(), fcols.len());
    for (i, (line, r)) in rows.iter().enumerate() {
        for (k, &j) in fcols.iter().enumerate() {
            x[(i, k)] = parse_input(path, *line, &t.header[j], &r[j], &opts)?;
        }
    }
    let y = tcol
        .map(|j| {
            rows.iter()
                .map(|(line, r)| parse_target(*line, &t.header[j], &r[j]))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    Ok((x, y))
}
