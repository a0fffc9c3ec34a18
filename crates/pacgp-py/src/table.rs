//! Tables from Python (a pandas DataFrame, an array of objects or strings): the library's
//! input coding ([`pacgp::data::InputCoding`]) fitted on the training table's text cells and
//! applied to later tables through the model, exactly as `pacgp fit` and `pacgp predict` do
//! with CSV files. The estimators pass every cell as text ("" for a missing one); nothing is
//! coded here.

use pyo3::prelude::*;

use pacgp::data::{
    Categorical, CodingOptions, InputCoding, MissingCells, MissingPolicy, Table, TableError,
    TableOption,
};
use pacgp::model::FittedModel;
use pacgp::spec::values::BadValue;
use pacgp::Error;

use crate::{to_numpy, to_py_err, Mat2};

/// Columns of text cells (`columns[j][i]`: row i of column j) as the library's table; its
/// rows are numbered from 1 in messages ("line i").
fn table(columns: Vec<Vec<String>>, names: Vec<String>) -> PyResult<Table> {
    let n = columns.first().map_or(0, Vec::len);
    if columns.len() != names.len() || columns.iter().any(|c| c.len() != n) {
        return Err(to_py_err(Error::ShapeMismatch {
            what: "table columns",
            expected: format!("{} columns of {n} cells", names.len()),
            found: format!("{} columns", columns.len()),
        }));
    }
    let rows = (0..n)
        .map(|i| {
            (
                i as u64 + 1,
                columns.iter().map(|c| c[i].trim().to_string()).collect(),
            )
        })
        .collect();
    Ok(Table {
        source: "X".into(),
        header: names,
        rows,
    })
}

/// The cells read as missing: the library's default, or (`na_values`, as `fit --na-values`)
/// the cells given, trimmed, and always the empty cell, which is how the estimators pass a
/// missing value (None, NaN) — so `na_values=[]` lets a text cell `NA` be a category.
fn missing_cells(na_values: Option<Vec<String>>) -> MissingCells {
    match na_values {
        None => MissingCells::default(),
        Some(cells) => MissingCells::new(
            std::iter::once(String::new()).chain(cells.iter().map(|c| c.trim().to_string())),
        ),
    }
}

/// A table option's word, parsed by the library (`missing='drop'`, `unknown_category='ignore'`).
fn word<T: std::str::FromStr<Err = BadValue>>(option: TableOption, given: &str) -> PyResult<T> {
    given
        .parse::<T>()
        .map_err(|bad| to_py_err(TableError::Unparsable { option, bad }.into()))
}

/// Fit the input coding on a training table: `categorical` "auto" or column names (None:
/// text is an error), `missing` None, "drop", "zero" or "mean", `unknown_category` "error"
/// or "ignore", `na_values` the text cells read as missing (None: the library's default). Returns the coded inputs, the indices of the rows kept, the coding as JSON
/// (for `Model.with_input_coding`) and what the coding did, one sentence each.
#[pyfunction]
#[pyo3(signature = (columns, names, *, categorical=None, missing=None, unknown_category="error", na_values=None))]
#[allow(clippy::type_complexity)]
fn fit_input_coding<'py>(
    py: Python<'py>,
    columns: Vec<Vec<String>>,
    names: Vec<String>,
    categorical: Option<Vec<String>>,
    missing: Option<&str>,
    unknown_category: &str,
    na_values: Option<Vec<String>>,
) -> PyResult<(Mat2<'py>, Vec<usize>, String, Vec<String>)> {
    let t = table(columns, names)?;
    let categorical = Categorical::from_words(&categorical.unwrap_or_default())
        .map_err(|e| to_py_err(e.into()))?;
    let missing = match missing {
        None => MissingPolicy::Reject,
        Some(m) => word(TableOption::Missing, m)?,
    };
    let opts = CodingOptions {
        yes_no: false,
        missing,
        categorical,
        unknown_category: word(TableOption::UnknownCategory, unknown_category)?,
        // The estimators take no cap of their own: the library's default.
        max_categories: None,
        missing_cells: missing_cells(na_values),
    };
    let inputs: Vec<usize> = (0..t.header.len()).collect();
    let fitted = InputCoding::fit(&t, &inputs, None, &opts).map_err(to_py_err)?;
    let names = fitted.coding.input_names();
    let e = fitted.coding.apply(&t, &names, None).map_err(to_py_err)?;
    let json = serde_json::to_string(&fitted.coding).expect("a coding serialises");
    Ok((to_numpy(py, &e.x), e.rows, json, fitted.notes))
}

/// The model with the input coding `coding_json` (from [`fit_input_coding`]): its inputs are
/// then named as the coding names them, and the coding is stored in the model file.
pub(crate) fn with_input_coding(model: &FittedModel, coding_json: &str) -> PyResult<FittedModel> {
    let coding: InputCoding = serde_json::from_str(coding_json).map_err(|e| {
        to_py_err(Error::InvalidSpec {
            spec: "input coding".into(),
            reason: e.to_string(),
        })
    })?;
    let mut inner = model.clone();
    let names = coding.input_names();
    if names.len() != inner.feature_names.len() {
        return Err(to_py_err(Error::ShapeMismatch {
            what: "input coding",
            expected: format!("{} inputs", inner.feature_names.len()),
            found: format!("{}", names.len()),
        }));
    }
    inner.feature_names = names;
    inner.input_coding = coding;
    Ok(inner)
}

/// The table column names a model reads (its coding's columns).
pub(crate) fn table_columns(model: &FittedModel) -> Vec<String> {
    model
        .input_coding
        .columns_for(&model.feature_names)
        .iter()
        .map(|c| c.name().to_string())
        .collect()
}

/// Code a later table with the model's stored coding (the training categories and fills);
/// `unknown_category` overrides the stored rule. The inputs of the rows kept and their
/// indices (rows with a missing cell are left out under `missing="drop"`).
pub(crate) fn encode_table<'py>(
    py: Python<'py>,
    model: &FittedModel,
    columns: Vec<Vec<String>>,
    names: Vec<String>,
    unknown_category: Option<&str>,
) -> PyResult<(Mat2<'py>, Vec<usize>)> {
    let t = table(columns, names)?;
    let mut coding = model.input_coding.clone();
    if let Some(u) = unknown_category {
        coding.unknown_category = word(TableOption::UnknownCategory, u)?;
    }
    let e = coding
        .apply(&t, &model.feature_names, None)
        .map_err(to_py_err)?;
    Ok((to_numpy(py, &e.x), e.rows))
}

/// Register the functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_input_coding, m)?)
}
