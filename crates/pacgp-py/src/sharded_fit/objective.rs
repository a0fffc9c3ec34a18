//! The driver's side of a sharded fit's minimisation: the objective Python evaluates over the
//! shards ([`PyObjective`], for the library's driver) and the optimiser's report in the form
//! Python keeps it.

use std::sync::Mutex;

use pyo3::prelude::*;

use pacgp::optim::{Objective, OptimReport};

/// An optimiser's report for Python: `(parameters where it stopped, value, iterations,
/// evaluations, termination, message)`.
pub(super) type Report = (Vec<f64>, f64, u64, u64, String, String);

/// A warm start's report for Python: `(rows, of, report)`.
pub(super) type Warm = (usize, usize, Report);

/// The optimiser's report from its Python form ([`report_of`]'s).
pub(super) fn report_from(r: Report) -> PyResult<OptimReport> {
    let (params, value, iterations, evaluations, termination, message) = r;
    let parsed =
        serde_json::from_value(serde_json::Value::String(termination.clone())).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!("unknown termination '{termination}'"))
        })?;
    Ok(OptimReport {
        params,
        value,
        iterations,
        evaluations,
        termination: parsed,
        message,
    })
}

pub(super) fn report_of(r: &OptimReport) -> Report {
    let termination = serde_json::to_value(r.termination)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "other".into());
    (
        r.params.clone(),
        r.value,
        r.iterations,
        r.evaluations,
        termination,
        r.message.clone(),
    )
}

/// The objective Python evaluates over the shards, for the library's driver. The first
/// exception it raises is kept and ends the minimisation (every later evaluation fails at
/// once, so the line search gives up); [`super::ShardedFitSpec::minimise`] raises it.
pub(super) struct PyObjective {
    f: Py<PyAny>,
    dim: usize,
    failure: Mutex<Option<PyErr>>,
}

impl PyObjective {
    /// The callable `f` over parameters of `dim` entries, no exception yet.
    pub(super) fn new(f: Py<PyAny>, dim: usize) -> Self {
        Self {
            f,
            dim,
            failure: Mutex::new(None),
        }
    }

    fn failed(&self) -> std::sync::MutexGuard<'_, Option<PyErr>> {
        self.failure.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The exception the callable raised, if any.
    pub(super) fn raise(self) -> PyResult<()> {
        match self.failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn stopped() -> pacgp::Error {
        pacgp::Error::Numerical {
            what: "the sharded objective",
            message: "the Python objective raised an exception".into(),
        }
    }

    /// The callable's result by `call` (the call and its result's extraction), checked to hold
    /// a gradient of `dim` entries (`what` names it in the error); the first failure is kept
    /// and every later call fails at once.
    fn call<T>(
        &self,
        call: impl FnOnce(Python<'_>, &Py<PyAny>) -> PyResult<T>,
        gradient: impl Fn(&T) -> usize,
        what: &str,
    ) -> pacgp::Result<T> {
        if self.failed().is_some() {
            return Err(Self::stopped());
        }
        let failure = match Python::attach(|py| call(py, &self.f)) {
            Ok(t) if gradient(&t) == self.dim => return Ok(t),
            Ok(t) => pyo3::exceptions::PyValueError::new_err(format!(
                "{what} has {} entries, the parameters {}",
                gradient(&t),
                self.dim
            )),
            Err(e) => e,
        };
        *self.failed() = Some(failure);
        Err(Self::stopped())
    }

    /// The callable as a minibatch gradient: `f(p, rows) -> gradient`.
    pub(super) fn gradient_on(&self, rows: &[usize], params: &[f64]) -> pacgp::Result<Vec<f64>> {
        let call = |py: Python<'_>, f: &Py<PyAny>| {
            f.call1(py, (params.to_vec(), rows.to_vec()))?.extract(py)
        };
        self.call(call, Vec::len, "the minibatch gradient")
    }
}

impl Objective for PyObjective {
    fn dim(&self) -> usize {
        self.dim
    }

    fn value_and_gradient(&self, params: &[f64]) -> pacgp::Result<(f64, Vec<f64>)> {
        let call = |py: Python<'_>, f: &Py<PyAny>| f.call1(py, (params.to_vec(),))?.extract(py);
        let gradient = |(_, g): &(f64, Vec<f64>)| g.len();
        self.call(call, gradient, "the objective's gradient")
    }
}
