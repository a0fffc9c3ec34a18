//! Fitting an input coding on the training table: which columns are categorical and their
//! vocabulary, the fills of missing cells (0 or the training mean), and what was done, in
//! notes for the user.

use super::apply::encode_cell;
use super::{
    is_iso_datetime, number, sorted_levels, Categorical, CodingOptions, ColumnCoding, FittedCoding,
    InputCoding, MissingCells, MissingPolicy, Table, DEFAULT_MAX_CATEGORIES,
};
use crate::data::{shown, Moments, TableError};
use crate::error::{Error, Result};

impl InputCoding {
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
        table.check()?;
        table.check_indices(inputs.iter().copied().chain(target))?;
        let mut notes = Vec::new();
        let missing = &opts.missing_cells;
        let (inputs, empty): (Vec<usize>, Vec<usize>) = inputs
            .iter()
            .partition(|&&j| table.rows.iter().any(|(_, r)| !missing.contains(&r[j])));
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
            missing_cells: opts.missing_cells.clone(),
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
        let cap = opts.max_categories.unwrap_or(DEFAULT_MAX_CATEGORIES);
        for (c, &j) in coding.columns.iter_mut().zip(&inputs) {
            if categorical.contains(&j) {
                let levels = sorted_levels(
                    rows.iter()
                        .map(|&i| table.rows[i].1[j].as_str())
                        .filter(|c| !missing.contains(c)),
                );
                *c = ColumnCoding::Category {
                    name: table.header[j].clone(),
                    levels,
                    fill: None,
                };
                check_cap(table, c, cap)?;
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
        let missing = &self.missing_cells;
        let mut filled = Vec::new();
        for (c, &j) in self.columns.iter_mut().zip(inputs) {
            let cells: Vec<(u64, &str)> = rows
                .iter()
                .map(|&i| (table.rows[i].0, table.rows[i].1[j].as_str()))
                .filter(|(_, cell)| !missing.contains(cell))
                .collect();
            let n_missing = rows.len() - cells.len();
            let width = c.width();
            let mut codes = crate::memory::try_zeros(cells.len(), width, "a column's codes")?;
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
            !opts.missing_cells.contains(c) && number(c, opts.yes_no).is_none()
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
    refuse_bad_numbers(table, &text, rows, opts.yes_no, &opts.missing_cells)?;
    if opts.categorical == Categorical::Auto {
        refuse_dates(table, &text, rows, &opts.missing_cells)?;
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

/// A categorical column becomes more inputs than the cap allows: refused, naming its count of
/// distinct values (one-hot coding 4 000 values of 270 000 rows asked for 23 GB in issue 43).
fn check_cap(table: &Table, c: &ColumnCoding, cap: usize) -> Result<()> {
    let distinct = match c {
        ColumnCoding::Category { levels, .. } => levels.len(),
        ColumnCoding::Number { .. } => return Ok(()),
    };
    if distinct <= cap {
        return Ok(());
    }
    Err(TableError::TooManyCategories {
        path: table.source.clone(),
        column: shown(c.name()),
        distinct,
        cap,
    }
    .into())
}

/// Text columns found by `auto` (`text`: column, line and cell of the first text) whose
/// every present cell is an ISO date or date-time: refused, since one input per distinct day
/// or minute is no coding of time.
fn refuse_dates(
    table: &Table,
    text: &[(usize, u64, String)],
    rows: &[usize],
    missing: &MissingCells,
) -> Result<()> {
    let is_dates = |j: usize| {
        rows.iter()
            .map(|&i| table.rows[i].1[j].as_str())
            .filter(|c| !missing.contains(c))
            .all(is_iso_datetime)
    };
    match text.iter().find(|(j, ..)| is_dates(*j)) {
        Some((j, line, cell)) => Err(TableError::DateColumn {
            path: table.source.clone(),
            column: shown(&table.header[*j]),
            line: *line,
            cell: shown(cell),
        }
        .into()),
        None => Ok(()),
    }
}

/// A column of numbers with a few bad cells (at most one in ten of its non-missing cells, or
/// only thousands-separated numbers) is refused cell by cell: it is neither text to leave out
/// nor categories to code (`auto` would make one input per distinct number).
fn refuse_bad_numbers(
    table: &Table,
    text: &[(usize, u64, String)],
    rows: &[usize],
    yes_no: bool,
    missing: &MissingCells,
) -> Result<()> {
    for &(j, ..) in text {
        let cells: Vec<(u64, &str)> = rows
            .iter()
            .map(|&i| (table.rows[i].0, table.rows[i].1[j].as_str()))
            .filter(|(_, c)| !missing.contains(c))
            .collect();
        let bad: Vec<(u64, &str)> = cells
            .iter()
            .copied()
            .filter(|(_, c)| number(c, yes_no).is_none())
            .collect();
        let separated = bad
            .iter()
            .all(|(_, c)| crate::error::thousands_separated(c));
        if bad.len() * 10 <= cells.len() || separated {
            return Err(TableError::BadNumbers {
                path: table.source.clone(),
                column: shown(&table.header[j]),
                cells: bad.iter().take(5).map(|(l, c)| (*l, shown(c))).collect(),
                bad: bad.len(),
                of: cells.len(),
            }
            .into());
        }
    }
    Ok(())
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
