//! The Python module `pacgp._pacgp`: the library's one fitting entry point (`pacgp::fit::fit`,
//! options checked by the library's fit spec) and its [`FittedModel`] bound for Python. The scikit-learn
//! estimators are thin Python classes over these (`python/pacgp`); nothing here re-implements
//! a fit, a prediction or a certificate.
//!
//! Every call that computes releases the GIL (`Python::detach`), runs in the caller's rayon
//! pool or a private one of `n_threads` threads, and returns library errors as Python
//! exceptions: `ValueError` for bad input, `pacgp.PacgpError` for numerical failure.

use faer::Mat;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use pacgp::data::{Dataset, LabelMap};
use pacgp::model::FittedModel;

mod errors;
mod fit;
mod model;
mod pools;
mod prior;
mod sharded;
mod sharded_fit;
mod sharded_pac_sgp;
mod sharded_svgp;
mod table;

/// The allocator the `pacgp` command uses: the module then runs the CLI's code with the CLI's
/// memory behaviour (mimalloc keeps the freed N×N buffers for reuse, see the CLI's main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub(crate) use errors::{to_py_err, PacgpError};
pub use model::Model;

/// numpy arrays can be misaligned (e.g. unpickled from a byte buffer); reading one in place
/// would panic, so it is refused (the estimators pass aligned copies).
pub(crate) fn check_aligned<'py>(
    array: &impl PyUntypedArrayMethods<'py>,
    what: &str,
) -> PyResult<()> {
    if array.is_aligned() {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{what} is not aligned in memory: pass numpy.require({what}, requirements='A')"
        )))
    }
}

/// The inputs as an owned N×D matrix (any strides: non-contiguous views are read in place).
pub(crate) fn to_mat(x: &PyReadonlyArray2<'_, f64>, what: &str) -> PyResult<Mat<f64>> {
    check_aligned(&**x, what)?;
    let v = x.as_array();
    Ok(Mat::from_fn(v.nrows(), v.ncols(), |i, j| v[[i, j]]))
}

/// JSON text of a serialisable value (the same serde the CLI prints with `--json`).
pub(crate) fn json<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| {
        to_py_err(pacgp::Error::Numerical {
            what: "JSON output",
            message: e.to_string(),
        })
    })
}

/// A vector handed to Python as a 1-D numpy array.
pub(crate) type Vec1<'py> = Bound<'py, PyArray1<f64>>;

/// A matrix handed to Python as a 2-D numpy array.
pub(crate) type Mat2<'py> = Bound<'py, PyArray2<f64>>;

/// A matrix (a coded table, a covariance, draws, a shard's sums) as a new numpy array: the
/// inverse of [`to_mat`].
pub(crate) fn to_numpy<'py>(py: Python<'py>, m: &Mat<f64>) -> Mat2<'py> {
    numpy::ndarray::Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)])
        .into_pyarray(py)
}

/// A training sample from numpy arrays, validated by the library (shapes, finite values).
pub(crate) fn to_dataset(
    x: &PyReadonlyArray2<'_, f64>,
    y: &PyReadonlyArray1<'_, f64>,
) -> PyResult<Dataset> {
    check_aligned(&**y, "y")?;
    let y: Vec<f64> = y.as_array().iter().copied().collect();
    Dataset::new(to_mat(x, "X")?, y).map_err(to_py_err)
}

/// A multi-output sample from numpy arrays: inputs `x` (N × D) and targets `y` (N × K, K ≥ 2),
/// the outputs named `y0`, `y1`, … (validated by the library).
pub(crate) fn to_outputs(
    x: &PyReadonlyArray2<'_, f64>,
    y: &PyReadonlyArray2<'_, f64>,
) -> PyResult<pacgp::data::Outputs> {
    let ys = y.as_array();
    let targets: Vec<Vec<f64>> = (0..ys.ncols())
        .map(|j| ys.column(j).iter().copied().collect())
        .collect();
    let xm = to_mat(x, "X")?;
    let features = (0..xm.ncols()).map(|j| format!("x{j}")).collect();
    let names = (0..targets.len()).map(|j| format!("y{j}")).collect();
    pacgp::data::Outputs::new(xm, targets, features, names).map_err(to_py_err)
}

/// The label map of a classifier whose `y` is already coded −1/+1 (`classes_[0]` → −1).
pub(crate) fn label_map(negative: &str, positive: &str) -> LabelMap {
    LabelMap {
        negative: negative.into(),
        positive: positive.into(),
    }
}

/// [`compute_threads`] for callers that still take `n_threads` as an unsigned count.
pub(crate) fn compute<T: Send>(
    py: Python<'_>,
    n_threads: Option<usize>,
    f: impl FnOnce() -> pacgp::Result<T> + Send,
) -> PyResult<T> {
    compute_threads(
        py,
        n_threads.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        f,
    )
}

/// [`compute_with`] with the library's errors turned into Python's by [`to_py_err`].
pub(crate) fn compute_threads<T: Send>(
    py: Python<'_>,
    n_threads: Option<i64>,
    f: impl FnOnce() -> pacgp::Result<T> + Send,
) -> PyResult<T> {
    compute_with(py, n_threads, f, to_py_err)
}

/// Run `f` without the GIL, in a private rayon pool if `n_threads` is given (so two Python
/// threads can each fit with one thread; kept for reuse, [`pools`]), else in the global pool
/// (every core); the library's errors turned into Python's by `err`. The count is resolved by [`pacgp::threads::resolve`],
/// as the CLI's `--threads`: `−1` all cores, `−2` all but one (scikit-learn's `n_jobs`), `0`
/// and more than four per core refused (ValueError). Taken as `i64` so that negative counts
/// reach the library instead of raising OverflowError.
pub(crate) fn compute_with<T: Send>(
    py: Python<'_>,
    n_threads: Option<i64>,
    f: impl FnOnce() -> pacgp::Result<T> + Send,
    err: impl FnOnce(pacgp::Error) -> PyErr,
) -> PyResult<T> {
    let n_threads = match n_threads.map(pacgp::threads::resolve) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(e)) => return Err(err(e)),
    };
    let out = py.detach(|| match n_threads {
        None => Ok(f()),
        Some(n) => pools::install(n, f),
    });
    match out {
        Ok(result) => result.map_err(err),
        Err(e) => Err(PyRuntimeError::new_err(format!(
            "cannot start {n_threads:?} worker threads: {e}"
        ))),
    }
}

/// Wrap a fitted model for Python.
pub(crate) fn wrap(model: FittedModel) -> Model {
    Model { inner: model }
}

/// The extension module.
#[pymodule]
fn _pacgp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PacgpError", m.py().get_type::<PacgpError>())?;
    // δ's one default, read by the Python estimators' signatures (python/pacgp).
    m.add("DEFAULT_DELTA", pacgp::bounds::DEFAULT_DELTA)?;
    m.add_class::<Model>()?;
    fit::register(m)?;
    prior::register(m)?;
    sharded::register(m)?;
    sharded_pac_sgp::register(m)?;
    sharded_fit::register(m)?;
    sharded_svgp::register(m)?;
    table::register(m)?;
    Ok(())
}
