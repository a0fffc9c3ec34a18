//! Applying an input coding to a table: the rows the missing-value policy keeps, and the code
//! of every cell (a number, a category's ±1 or one-hot code, a missing cell's fill).

use faer::Mat;

use super::{number, ColumnCoding, Encoded, InputCoding, MissingPolicy, Table, UnknownCategory};
use crate::data::{shown, TableError};
use crate::error::{Error, Result};

impl InputCoding {
    /// Indices of the rows the policy keeps: under [`MissingPolicy::DropRows`] those with no
    /// missing input (of `inputs`) or target; otherwise every row, a missing target failing.
    pub(super) fn kept_rows(
        &self,
        table: &Table,
        inputs: &[usize],
        target: Option<usize>,
    ) -> Result<Vec<usize>> {
        let drop = self.missing_policy() == MissingPolicy::DropRows;
        let mut rows = Vec::with_capacity(table.rows.len());
        for (i, (line, r)) in table.rows.iter().enumerate() {
            if let Some(t) = target.filter(|&t| self.missing_cells.contains(&r[t])) {
                if !drop {
                    return Err(TableError::MissingTarget {
                        line: *line,
                        column: shown(&table.header[t]),
                        cell: shown(&r[t]),
                        read_as_missing: self.missing_cells.shown(),
                    }
                    .into());
                }
                continue;
            }
            if drop && inputs.iter().any(|&j| self.missing_cells.contains(&r[j])) {
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
        table.check()?;
        table.check_indices(target)?;
        let columns = self.columns_for(features);
        let idx: Vec<usize> = columns
            .iter()
            .map(|c| table.column(c.name()))
            .collect::<Result<_>>()?;
        let rows = self.kept_rows(table, &idx, target)?;
        let width: usize = columns.iter().map(ColumnCoding::width).sum();
        check_encoded_size(&table.source, rows.len(), width)?;
        let mut x = crate::memory::try_zeros(rows.len(), width, "the coded inputs")?;
        let unknown = self.unknown_category;
        let missing = self.missing_policy();
        for (out, &i) in rows.iter().enumerate() {
            let (line, cells) = &table.rows[i];
            let mut at = 0;
            for (c, &j) in columns.iter().zip(&idx) {
                let cell = cells[j].as_str();
                if self.missing_cells.contains(cell) {
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
                            cell: shown(cell),
                            read_as_missing: self.missing_cells.shown(),
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

/// The coded inputs, `rows × inputs` f64, must be countable in 64 bits and fit in the memory
/// available ([`crate::memory::available_memory`], where known): a typed error before the
/// allocation, not the allocator's abort.
pub(super) fn check_encoded_size(source: &str, rows: usize, inputs: usize) -> Result<()> {
    let bytes = crate::memory::matrices_bytes(1, rows, inputs);
    let available = crate::memory::available_memory();
    let fits = match (bytes, available) {
        (None, _) => false,
        (Some(b), Some(a)) => b <= a,
        (Some(b), None) => b <= isize::MAX as u64,
    };
    if fits {
        return Ok(());
    }
    Err(TableError::EncodedTooLarge {
        path: source.to_string(),
        rows,
        inputs,
        bytes,
        available,
    }
    .into())
}

/// Write the code of a present `cell` of column `c` into `x[row, at..at + width]`.
pub(super) fn encode_cell(
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
