//! A table that cannot be read as asked, as data: what is wrong, and which reading option
//! (`missing`, `categorical`, …) would help. The library names no flag: each front end words
//! the option in its own terms through [`Wording`] (`--missing drop` on the command line,
//! `missing='drop'` in Python), as it does a [`SpecError`](crate::spec::SpecError).

use std::fmt;

use crate::vocabulary::{BadValue, LibraryWording, MethodName, TableOption, Wording};

mod examples;

/// What is wrong with a table or its reading options; [`TableError::message`] words the
/// option that helps in a front end's terms.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TableError {
    /// A word that is not one of a reading option's values.
    Unparsable {
        /// The option.
        option: TableOption,
        /// The word and what is accepted.
        bad: BadValue,
    },
    /// `categorical` given both `auto` and column names.
    CategoricalAutoAndNames,
    /// A missing value (one of [`MISSING_CELLS`](crate::vocabulary::MISSING_CELLS)) where
    /// the missing-value policy allows none.
    MissingValue {
        /// 1-based line number in the file.
        line: u64,
        /// Column name.
        column: String,
        /// The cell as written (empty, `?`, `NA`, …).
        cell: String,
        /// The cells read as missing, as listed ([`MissingCells::shown`](crate::vocabulary::MissingCells::shown)).
        read_as_missing: String,
    },
    /// A missing target, which no policy fills in.
    MissingTarget {
        /// 1-based line number in the file.
        line: u64,
        /// Column name.
        column: String,
        /// The cell as written (empty, `?`, `NA`, …).
        cell: String,
        /// The cells read as missing, as listed.
        read_as_missing: String,
    },
    /// Class labels written as a missing-value word (a class named `NA`): leaving their rows
    /// out would delete the class, so they are refused, not dropped.
    LabelReadAsMissing {
        /// The file.
        path: String,
        /// The target column.
        column: String,
        /// The first such line (1-based).
        line: u64,
        /// The label.
        cell: String,
        /// How many rows have it.
        rows: usize,
        /// The cells read as missing.
        read_as_missing: Box<crate::vocabulary::MissingCells>,
    },
    /// Every row has a missing value in a column used, and the policy drops such rows.
    NoCompleteRows {
        /// The file.
        path: String,
    },
    /// Input columns holding text where numbers were expected.
    TextColumns {
        /// The file.
        path: String,
        /// Each column with its first text cell and line.
        found: String,
        /// The columns' names.
        names: Vec<String>,
    },
    /// A column of numbers with a few cells that are not numbers (a typo, a thousands
    /// separator): reported cell by cell, not coded as categories.
    BadNumbers {
        /// The file.
        path: String,
        /// Column name.
        column: String,
        /// Up to five of its bad cells, as (1-based line, cell).
        cells: Vec<(u64, String)>,
        /// How many of its cells are not numbers.
        bad: usize,
        /// Its non-missing cells.
        of: usize,
    },
    /// A column named categorical that is not an input column.
    CategoricalNotInput {
        /// The column name.
        column: String,
    },
    /// A category the training data did not have.
    UnknownCategory {
        /// The file.
        path: String,
        /// 1-based line number in the file.
        line: u64,
        /// Column name.
        column: String,
        /// The unseen value.
        value: String,
        /// The training categories, comma separated.
        known: String,
    },
    /// A first line of numbers where column names were expected.
    HeaderLooksLikeData {
        /// The file.
        path: String,
        /// The first line, shortened.
        first: String,
    },
    /// A column asked to be both the target and ignored.
    DroppedTarget {
        /// The column name.
        column: String,
    },
    /// The dropped columns leave only the target.
    OnlyTargetLeft {
        /// The file.
        path: String,
        /// The dropped columns.
        dropped: Vec<String>,
        /// The target column.
        target: String,
    },
    /// A regression target cell that is not a number.
    TargetNotNumber {
        /// The file.
        path: String,
        /// 1-based line number in the file.
        line: u64,
        /// The target column.
        column: String,
        /// The cell.
        cell: String,
    },
    /// A categorical column with more distinct values than the cap one-hot coding takes.
    TooManyCategories {
        /// The file.
        path: String,
        /// Column name.
        column: String,
        /// Its distinct values in the training rows.
        distinct: usize,
        /// The cap ([`crate::data::CodingOptions::max_categories`]).
        cap: usize,
    },
    /// A text column of ISO dates or times found by `categorical` `auto`: not coded as
    /// categories (one input per distinct day or minute).
    DateColumn {
        /// The file.
        path: String,
        /// Column name.
        column: String,
        /// 1-based line of its first cell.
        line: u64,
        /// That cell.
        cell: String,
    },
    /// Coded inputs too large to hold: `rows × inputs` f64 overflow 64 bits or exceed the
    /// memory available.
    EncodedTooLarge {
        /// The file.
        path: String,
        /// Rows kept.
        rows: usize,
        /// Inputs after coding.
        inputs: usize,
        /// Their bytes (`None`: more than 64 bits count).
        bytes: Option<u64>,
        /// The memory available, where known.
        available: Option<u64>,
    },
    /// A label chosen as +1 for a numeric (regression) target.
    PositiveForNumbers,
    /// A label chosen as +1 for a target of more than two classes.
    PositiveForClasses {
        /// Number of classes.
        k: usize,
        /// The classes, shown.
        classes: String,
    },
    /// A label chosen as +1 that is neither of the two labels.
    PositiveNotALabel {
        /// The label given.
        given: String,
        /// The label coded −1 by default.
        negative: String,
        /// The label coded +1 by default.
        positive: String,
    },
}

impl TableError {
    /// The reading option the message names (the one at fault, or the one that helps).
    pub fn option(&self) -> Option<TableOption> {
        use TableError as E;
        use TableOption as O;
        Some(match self {
            E::Unparsable { option, .. } => *option,
            E::CategoricalAutoAndNames
            | E::TextColumns { .. }
            | E::CategoricalNotInput { .. }
            | E::BadNumbers { .. } => O::Categorical,
            E::MissingValue { .. } | E::MissingTarget { .. } | E::NoCompleteRows { .. } => {
                O::Missing
            }
            E::UnknownCategory { .. } => O::UnknownCategory,
            E::HeaderLooksLikeData { .. } => O::NoHeader,
            E::DroppedTarget { .. }
            | E::OnlyTargetLeft { .. }
            | E::DateColumn { .. }
            | E::EncodedTooLarge { .. } => O::Drop,
            E::TooManyCategories { .. } => O::MaxCategories,
            E::LabelReadAsMissing { .. } => O::NaValues,
            E::TargetNotNumber { .. } => return None,
            E::PositiveForNumbers | E::PositiveForClasses { .. } | E::PositiveNotALabel { .. } => {
                O::Positive
            }
        })
    }

    /// The message in a front end's words.
    pub fn message(&self, w: &dyn Wording) -> String {
        use TableError as E;
        use TableOption as O;
        let set = |o: TableOption, values: &[&str]| w.table_setting(o, values);
        match self {
            E::Unparsable { option, bad } => format!("invalid {}: {bad}", w.table_option(*option)),
            E::CategoricalAutoAndNames => format!(
                "{} takes auto or column names, not both",
                w.table_option(O::Categorical)
            ),
            E::MissingValue {
                line,
                column,
                cell,
                read_as_missing,
            } => {
                let hint = set(O::Missing, &["drop", "zero", "mean"]).map_or_else(
                    || " (the model was fitted choosing no fill for missing cells: fill the cell, or refit choosing one)".to_string(),
                    |s| format!(" (choose what missing cells mean when fitting: {s})"),
                );
                format!(
                    "missing value {} at line {line}, column '{column}'{hint}; cells read as missing: {read_as_missing}",
                    shown_cell(cell),
                )
            }
            E::MissingTarget {
                line,
                column,
                cell,
                read_as_missing,
            } => {
                let hint = set(O::Missing, &["drop"]).map_or_else(
                    || " (give the row its target, or remove the row)".to_string(),
                    |s| format!(" (leave such rows out with {s})"),
                );
                let label = if cell.is_empty() || cell == "?" {
                    String::new()
                } else {
                    format!("; if '{cell}' is a class label, rename it in the file")
                };
                format!(
                    "missing target {} at line {line}, column '{column}': a target cannot be filled in{hint}; cells read as missing: {read_as_missing}{label}",
                    shown_cell(cell),
                )
            }
            E::LabelReadAsMissing {
                path,
                column,
                line,
                cell,
                rows,
                read_as_missing,
            } => {
                let without_label = read_as_missing.written_without(cell);
                let read_as_missing = read_as_missing.shown();
                let keep = set(O::NaValues, &[&format!("'{without_label}'")])
                    .map(|s| format!("read '{cell}' as a label with {s} (the cells read as missing, without it), or "))
                    .unwrap_or_default();
                format!(
                    "{path}: column '{column}': {rows} rows (the first at line {line}) have the label '{cell}', which is read as a missing value, and leaving their rows out would delete that class: if '{cell}' is a class, {keep}rename it in the file (e.g. 'none'); if these labels are missing, leave their cells empty; cells read as missing: {read_as_missing}"
                )
            }
            E::NoCompleteRows { path } => {
                let policy = set(O::Missing, &["drop"]).unwrap_or_else(|| "dropping them".into());
                format!("{path}: no data rows: every row has a missing value in a column used, so {policy} leaves none")
            }
            E::TextColumns { path, found, names } => {
                let mut ways = Vec::new();
                if let Some(s) = set(O::Categorical, &["auto"]) {
                    ways.push(format!("encode text columns as categories with {s}"));
                }
                ways.push(match set(O::Drop, &[&names.join(",")]) {
                    Some(s) => format!("leave them out with {s}"),
                    None => "leave them out".into(),
                });
                format!("{path}: text in {found}: {}", ways.join(", or "))
            }
            E::BadNumbers {
                path,
                column,
                cells,
                bad,
                of,
            } => {
                let shown_cells: Vec<String> = cells
                    .iter()
                    .map(|(line, cell)| {
                        let why = if thousands_separated(cell) {
                            " (a thousands separator?)"
                        } else {
                            ""
                        };
                        format!("line {line} '{cell}'{why}")
                    })
                    .collect();
                let more = if *bad > cells.len() { ", …" } else { "" };
                let mut ways = vec!["write them as plain numbers (1234.5, no thousands separators) or leave them empty as missing".to_string()];
                if let Some(s) = set(O::Categorical, &[column]) {
                    ways.push(format!("if the column is a category, name it with {s}"));
                }
                let are = if *bad == 1 { "is not a number" } else { "are not numbers" };
                format!(
                    "{path}: column '{column}' holds numbers, but {bad} of its {of} cells {are}: {}{more}; {}",
                    shown_cells.join(", "),
                    ways.join(", or ")
                )
            }
            E::CategoricalNotInput { column } => format!(
                "{} {column}: not an input column (it is the target, dropped, or empty)",
                w.table_option(O::Categorical)
            ),
            E::UnknownCategory {
                path,
                line,
                column,
                value,
                known,
            } => {
                let hint = set(O::UnknownCategory, &["ignore"])
                    .map_or(String::new(), |s| format!("; {s} codes it as all zeros"));
                format!("{path}: line {line}: column '{column}' has the category '{value}', which the training data did not have (known: {known}){hint}")
            }
            E::HeaderLooksLikeData { path, first } => {
                let how = match set(O::NoHeader, &[]) {
                    Some(s) => format!("read the file with {s} (columns x1…xD and y, the last), or add a header line"),
                    None => "add a header line".into(),
                };
                format!("{path}: the first line ({first}) is all numbers, so it looks like data, not column names: {how}")
            }
            E::DroppedTarget { column } => {
                let target = w.table_option(O::Target);
                let drop = w.table_option(O::Drop);
                format!("column '{column}' is the target and cannot also be dropped (choose another target with {target}, or leave it out of {drop})")
            }
            E::OnlyTargetLeft {
                path,
                dropped,
                target,
            } => {
                let drop = set(O::Drop, &[&dropped.join(",")])
                    .unwrap_or_else(|| format!("dropping {}", dropped.join(",")));
                format!("{path}: line 1: no input columns: {drop} leaves only the target column '{target}'")
            }
            E::TooManyCategories {
                path,
                column,
                distinct,
                cap,
            } => {
                let drop = set(O::Drop, &[column])
                    .map_or("leave it out".into(), |s| format!("leave it out with {s}"));
                let raise = set(O::MaxCategories, &[&distinct.to_string()]).map_or(
                    String::new(),
                    |s| format!(", or raise the cap with {s} if one input per value is meant"),
                );
                format!("{path}: column '{column}' has {distinct} distinct values, more than the {cap} categories one-hot coding takes (it would become {distinct} inputs; an identifier or free text?): {drop}{raise}")
            }
            E::DateColumn {
                path,
                column,
                line,
                cell,
            } => {
                let drop = set(O::Drop, &[column])
                    .map_or("leave it out".into(), |s| format!("leave it out with {s}"));
                format!("{path}: column '{column}' holds dates or times ('{cell}' at line {line}), which are not coded as categories (one input per distinct time): {drop}, or write it as a number (e.g. days since 1970-01-01) before fitting")
            }
            E::EncodedTooLarge {
                path,
                rows,
                inputs,
                bytes,
                available,
            } => {
                let size = match (bytes, available) {
                    (None, _) => "more bytes than 64 bits count".to_string(),
                    (Some(b), Some(a)) => format!(
                        "{}, more than the {} available",
                        super::shown_bytes(*b),
                        super::shown_bytes(*a)
                    ),
                    (Some(b), None) => format!("{}, more than can be addressed", super::shown_bytes(*b)),
                };
                let drop = set(O::Drop, &[])
                    .map_or("leave columns out".into(), |s| format!("leave columns out with {s}"));
                format!("{path}: the coded inputs ({rows} rows × {inputs} inputs) would take {size}: {drop}, or use fewer rows")
            }
            E::TargetNotNumber {
                path,
                line,
                column,
                cell,
            } => format!(
                "{path}: line {line}: column '{column}': '{cell}' is not a number (a regression target must be numeric; class labels need a classifier, e.g. {})",
                w.method(MethodName::Laplace)
            ),
            E::PositiveForNumbers => format!(
                "{} applies to classification (two labels), not to a numeric target",
                w.table_option(O::Positive)
            ),
            E::PositiveForClasses { k, classes } => format!(
                "{} chooses the +1 of two labels; a multi-class fit has {k} classes ({classes})",
                w.table_option(O::Positive)
            ),
            E::PositiveNotALabel {
                given,
                negative,
                positive,
            } => format!(
                "invalid specification '{given}': {} names neither of the two labels, '{negative}' and '{positive}'",
                w.table_option(O::Positive)
            ),
        }
    }
}

/// A missing cell as a message shows it: `(empty)` or `('NA')`.
fn shown_cell(cell: &str) -> String {
    if cell.is_empty() {
        "(an empty cell)".into()
    } else {
        format!("('{cell}')")
    }
}

/// A number written with thousands separators, `1,234` or `12,345,678.5`: digits in groups
/// of three after the first, separated by commas (the cell a spreadsheet exports).
pub(crate) fn thousands_separated(cell: &str) -> bool {
    let body = cell.strip_prefix(['-', '+']).unwrap_or(cell);
    let int = body.split_once('.').map_or(body, |(i, frac)| {
        if frac.bytes().all(|b| b.is_ascii_digit()) {
            i
        } else {
            ""
        }
    });
    let groups: Vec<&str> = int.split(',').collect();
    groups.len() > 1
        && (1..=3).contains(&groups[0].len())
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()))
        && groups[1..].iter().all(|g| g.len() == 3)
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(&LibraryWording))
    }
}

impl std::error::Error for TableError {}

#[cfg(test)]
mod tests;
