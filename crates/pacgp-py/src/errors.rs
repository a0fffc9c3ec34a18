//! How Python reads the library's errors: numerical failures as `pacgp.PacgpError`, everything
//! the caller gave wrong as `ValueError`, with spec errors worded in the caller's parameter
//! names ([`PyWording`]).

use std::collections::HashMap;

use pyo3::create_exception;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::PyErr;

use pacgp::data::TableOption;
use pacgp::spec::values::one_of;
use pacgp::spec::{MethodName, SpecError, SpecOption, Wording};

create_exception!(
    _pacgp,
    PacgpError,
    PyRuntimeError,
    "A numerical failure in pacgp (a matrix not positive definite even after jitter, a non-finite objective)."
);

/// A library error as the Python exception a caller can act on: numerical failures are
/// `PacgpError`, everything the caller gave wrong (shapes, values, options, files) `ValueError`.
pub(crate) fn to_py_err(e: pacgp::Error) -> PyErr {
    use pacgp::Error as E;
    let message = e.message(&PyWording::new(None));
    match e {
        E::NotPositiveDefinite { .. } | E::Numerical { .. } | E::NumericalBreakdown { .. } => {
            PacgpError::new_err(message)
        }
        E::NotEnoughMemory { .. } | E::OutOfMemory { .. } => PyMemoryError::new_err(message),
        E::Io { .. }
        | E::Csv { .. }
        | E::NonFinite { .. }
        | E::ShapeMismatch { .. }
        | E::Empty { .. }
        | E::ColumnNotFound { .. }
        | E::NotBinary { .. }
        | E::ConstantColumn { .. }
        | E::DuplicateColumn { .. }
        | E::NoDataRows { .. }
        | E::ConstantTarget { .. }
        | E::Unrepresentable { .. }
        | E::InvalidParameter { .. }
        | E::InvalidSpec { .. }
        | E::ModelFile { .. }
        | E::ModelMismatch { .. }
        | E::Spec(_)
        | E::Table(_)
        | E::Unsupported(_)
        | E::NoLeaveOneOut { .. }
        | E::NotTrainingSample { .. }
        | E::Write { .. }
        | E::Threads { .. } => PyValueError::new_err(message),
        // A variant added later is reported as pacgp's own error until it is classified here.
        _ => PacgpError::new_err(message),
    }
}

/// How Python words a fit option: the estimator's parameter name where it has its own
/// (`n_inducing` for the library's `inducing`), else the library's name.
pub(crate) struct PyWording {
    names: HashMap<String, String>,
}

impl PyWording {
    pub(crate) fn new(names: Option<HashMap<String, String>>) -> Self {
        Self {
            names: names.unwrap_or_default(),
        }
    }
}

impl Wording for PyWording {
    fn option(&self, option: SpecOption) -> String {
        let name = option.name();
        self.names.get(name).cloned().unwrap_or_else(|| name.into())
    }

    fn method(&self, method: MethodName) -> String {
        format!("method '{method}'")
    }

    fn without_loo(&self) -> String {
        "loo='none'".into()
    }

    fn table_option(&self, option: TableOption) -> String {
        option.name().into()
    }

    /// `missing='drop'`, `missing='drop', 'zero' or 'mean'`; Python reads no file, so it has
    /// no target, drop, header or positive-label option.
    fn table_setting(&self, option: TableOption, values: &[&str]) -> Option<String> {
        use TableOption as O;
        match option {
            O::Missing | O::Categorical | O::UnknownCategory => {
                let quoted: Vec<String> = values.iter().map(|v| format!("'{v}'")).collect();
                let quoted: Vec<&str> = quoted.iter().map(String::as_str).collect();
                Some(format!("{}={}", option.name(), one_of(&quoted)))
            }
            O::Target
            | O::Drop
            | O::YesNo
            | O::NoHeader
            | O::Positive
            | O::MaxCategories
            | O::NaValues => None,
        }
    }
}

/// A spec error as the `ValueError` a Python caller reads.
pub(crate) fn spec_err(e: &SpecError, wording: &PyWording) -> PyErr {
    PyValueError::new_err(e.message(wording))
}

/// The error of a library call as Python's, with spec errors in the caller's words.
pub(crate) fn lib_err(e: pacgp::Error, wording: &PyWording) -> PyErr {
    match e {
        pacgp::Error::Spec(s) => spec_err(&s, wording),
        other => to_py_err(other),
    }
}
