//! A CSV file's text read into a [`Table`] of trimmed cells: `.gz` decompressed, bytes that
//! are not UTF-8 reported at their line, the delimiter sniffed (comma, semicolon, tab or
//! whitespace), the header line checked (single column, repeated names, a first line of
//! numbers) or replaced by generated names, every row's length checked.

use std::io::Read;
use std::ops::Range;
use std::path::Path;

use super::super::{shown, Table, TableError};
use crate::error::{Error, Result};

/// A parsed CSV: the table of cells, and where each record sits in the text (so that rows
/// can be copied unchanged, see [`split_file`](super::split_file)).
pub(in crate::data) struct RawTable {
    pub(in crate::data) table: Table,
    /// Byte range of the header line in the text, without its line terminator (empty for a
    /// file read without a header).
    pub(in crate::data) header_span: Range<usize>,
    /// Byte range of each row in the text, without its line terminator.
    pub(in crate::data) spans: Vec<Range<usize>>,
}

/// How the first line of a file is read.
#[derive(Clone, Copy, Debug)]
pub(in crate::data) enum Header<'a> {
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
pub(in crate::data) fn read_text(path: &Path) -> Result<String> {
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
    // File lines are counted here, not taken from the reader, which counts a CRLF's `\n` as
    // the start of the next record (every line number of a CRLF file was one short).
    let (mut counted_to, mut line_no) = (0usize, 1u64);
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
        let start = rec.position().map_or(before, |pos| pos.byte() as usize);
        let span = without_eol(text, start..rdr.position().byte() as usize);
        let to = span.start.max(counted_to);
        line_no += text.as_bytes()[counted_to..to]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        counted_to = to;
        out.push(RawRecord {
            line: line_no,
            cells: rec.iter().map(str::to_string).collect(),
            span,
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

/// A first line of numbers (or missing cells, at least one number): data, not names.
fn all_numbers(cells: &[String]) -> bool {
    cells.iter().any(|c| c.parse::<f64>().is_ok())
        && cells
            .iter()
            .all(|c| c.parse::<f64>().is_ok() || super::super::is_missing(c))
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
pub(in crate::data) fn parse_table(
    path: &Path,
    text: &str,
    header: Header<'_>,
) -> Result<RawTable> {
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
    super::super::encoding::check_unique_names(&p, &names)?;
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
