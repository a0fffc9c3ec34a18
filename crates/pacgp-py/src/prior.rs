//! The GP prior's predictive before any fit ([`pacgp::model::PriorPredictive`]): what an
//! unfitted `GPRegressor` predicts and draws, as scikit-learn's does. The kernel travels as its
//! specification (`None`: the library's default kernel, as a fit takes it) and θ (ln values;
//! `None`: the specification's starting values, all ones).

use numpy::{IntoPyArray, PyReadonlyArray2};
use pyo3::prelude::*;

use pacgp::kernel::Kernel;
use pacgp::model::PriorPredictive;

use crate::{compute_threads, to_mat, to_numpy, to_py_err, Mat2, Vec1};

/// A mean vector and a variance vector (or covariance matrix) for Python.
type MeanAnd<'py, T> = (Vec1<'py>, Bound<'py, T>);

/// The kernel `spec` on `d` inputs at its starting values, as the JSON tree the model files
/// store (`Model.kernel_json`'s form): its structure and parameter order, which the Python side
/// reads to place a scikit-learn kernel's values.
#[pyfunction]
fn kernel_tree(spec: &str, d: usize) -> PyResult<String> {
    let kernel = Kernel::from_spec(spec, d).map_err(to_py_err)?;
    crate::json(&kernel)
}

/// The prior predictive of `kernel_spec` on `d` inputs at θ (its starting values without θ)
/// with noise variance σ².
fn prior_of(
    kernel_spec: Option<&str>,
    d: usize,
    theta: Option<Vec<f64>>,
    noise_variance: f64,
) -> PyResult<PriorPredictive> {
    let spec = kernel_spec.unwrap_or(pacgp::spec::DEFAULT_KERNEL);
    let mut kernel = Kernel::from_spec(spec, d).map_err(to_py_err)?;
    if let Some(theta) = theta {
        kernel.set_params(&theta).map_err(to_py_err)?;
    }
    PriorPredictive::new(kernel, noise_variance).map_err(to_py_err)
}

/// The prior predictive of the kernel `spec` at θ with noise variance σ² on the rows of `x`:
/// mean and variance of each new observation, or with `full_cov` their joint covariance.
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, noise_variance, x, full_cov=false, n_threads=None))]
fn prior_predictive<'py>(
    py: Python<'py>,
    kernel_spec: Option<&str>,
    theta: Option<Vec<f64>>,
    noise_variance: f64,
    x: PyReadonlyArray2<'py, f64>,
    full_cov: bool,
    n_threads: Option<i64>,
) -> PyResult<MeanAnd<'py, pyo3::PyAny>> {
    let xm = to_mat(&x, "X")?;
    let prior = prior_of(kernel_spec, xm.ncols(), theta, noise_variance)?;
    if full_cov {
        let (mean, cov) = compute_threads(py, n_threads, || prior.mean_cov(xm.as_ref()))?;
        return Ok((mean.into_pyarray(py), to_numpy(py, &cov).into_any()));
    }
    let (mean, var) = compute_threads(py, n_threads, || prior.mean_var(xm.as_ref()))?;
    Ok((mean.into_pyarray(py), var.into_pyarray(py).into_any()))
}

/// `n_samples` seeded joint draws of new observations from the prior predictive at the rows
/// of `x` (rows: inputs, columns: draws), and the jitter the covariance's factor needed.
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, noise_variance, x, n_samples, seed, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn prior_sample<'py>(
    py: Python<'py>,
    kernel_spec: Option<&str>,
    theta: Option<Vec<f64>>,
    noise_variance: f64,
    x: PyReadonlyArray2<'py, f64>,
    n_samples: usize,
    seed: u64,
    n_threads: Option<i64>,
) -> PyResult<(Mat2<'py>, f64)> {
    let xm = to_mat(&x, "X")?;
    let prior = prior_of(kernel_spec, xm.ncols(), theta, noise_variance)?;
    let (draws, jitter) =
        compute_threads(py, n_threads, || prior.sample(xm.as_ref(), n_samples, seed))?;
    Ok((to_numpy(py, &draws), jitter))
}

/// Add the prior's functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(kernel_tree, module)?)?;
    module.add_function(wrap_pyfunction!(prior_predictive, module)?)?;
    module.add_function(wrap_pyfunction!(prior_sample, module)?)?;
    Ok(())
}
