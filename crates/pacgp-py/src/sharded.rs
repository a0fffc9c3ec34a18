//! The VFE bound over data shards ([`pacgp::regression::sharded`]) for map-reduce training on
//! Dask: statistics and gradient parts per shard, the M×M step once. The kernel travels as its
//! specification and θ (ln values), the sums as numpy arrays.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use pacgp::kernel::Kernel;
use pacgp::regression::sharded::{self, ShardStats, VfeAdjoints};

use crate::{check_aligned, compute, to_mat, to_py_err};

/// The kernel `spec` on `d` inputs at θ (ln values).
pub(crate) fn kernel_at(spec: &str, d: usize, theta: &[f64]) -> PyResult<Kernel> {
    let mut k = Kernel::from_spec(spec, d).map_err(to_py_err)?;
    k.set_params(theta).map_err(to_py_err)?;
    Ok(k)
}

/// A 1-D array as a vector (refused if misaligned, as [`to_mat`]).
pub(crate) fn vector(v: &PyReadonlyArray1<'_, f64>) -> PyResult<Vec<f64>> {
    check_aligned(&**v, "a vector argument")?;
    Ok(v.as_array().iter().copied().collect())
}

/// An owned faer matrix as a 2-D numpy array (row-major copy).
pub(crate) fn to_numpy<'py>(
    py: Python<'py>,
    m: &faer::Mat<f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let data: Vec<f64> = (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)]))
        .collect();
    data.into_pyarray(py).reshape([m.nrows(), m.ncols()])
}

/// One shard's sums `(A, b, yᵀy, Σ k(x,x), n)` at (θ, Z).
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, z, x, y, n_threads=None))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn vfe_shard_stats<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    theta: Vec<f64>,
    z: PyReadonlyArray2<'py, f64>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    f64,
    f64,
    usize,
)> {
    let (zm, xm, yv) = (to_mat(&z, "Z")?, to_mat(&x, "X")?, vector(&y)?);
    let kernel = kernel_at(kernel_spec, zm.ncols(), &theta)?;
    let s = compute(py, n_threads, || {
        sharded::vfe_shard_stats(&kernel, zm.as_ref(), xm.as_ref(), &yv)
    })?;
    Ok((
        to_numpy(py, &s.a)?,
        s.b.into_pyarray(py),
        s.yy,
        s.trace_kff,
        s.n,
    ))
}

/// The bound and the adjoints from the combined sums:
/// `(F, Ā, b̄, t̄, global gradient in [θ…, ln σ², vec(Z)])`.
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, noise, z, a, b, yy, trace_kff, n))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn vfe_global<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    theta: Vec<f64>,
    noise: f64,
    z: PyReadonlyArray2<'py, f64>,
    a: PyReadonlyArray2<'py, f64>,
    b: PyReadonlyArray1<'py, f64>,
    yy: f64,
    trace_kff: f64,
    n: usize,
) -> PyResult<(
    f64,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    f64,
    Bound<'py, PyArray1<f64>>,
)> {
    let zm = to_mat(&z, "Z")?;
    let kernel = kernel_at(kernel_spec, zm.ncols(), &theta)?;
    let stats = ShardStats {
        a: to_mat(&a, "A")?,
        b: vector(&b)?,
        yy,
        trace_kff,
        n,
    };
    let g = compute(py, None, || {
        sharded::vfe_global(&kernel, noise, zm.as_ref(), &stats)
    })?;
    Ok((
        g.value,
        to_numpy(py, &g.adjoints.a_bar)?,
        g.adjoints.b_bar.into_pyarray(py),
        g.adjoints.t_bar,
        g.gradient.into_pyarray(py),
    ))
}

/// One shard's part of the gradient given the adjoints of [`vfe_global`].
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, z, x, y, a_bar, b_bar, t_bar, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn vfe_shard_gradient<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    theta: Vec<f64>,
    z: PyReadonlyArray2<'py, f64>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    a_bar: PyReadonlyArray2<'py, f64>,
    b_bar: PyReadonlyArray1<'py, f64>,
    t_bar: f64,
    n_threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (zm, xm, yv) = (to_mat(&z, "Z")?, to_mat(&x, "X")?, vector(&y)?);
    let kernel = kernel_at(kernel_spec, zm.ncols(), &theta)?;
    let adj = VfeAdjoints {
        a_bar: to_mat(&a_bar, "a_bar")?,
        b_bar: vector(&b_bar)?,
        t_bar,
    };
    let g = compute(py, n_threads, || {
        sharded::vfe_shard_gradient(&kernel, zm.as_ref(), xm.as_ref(), &yv, &adj)
    })?;
    Ok(g.into_pyarray(py))
}

/// Add the sharded-VFE functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(vfe_shard_stats, module)?)?;
    module.add_function(wrap_pyfunction!(vfe_global, module)?)?;
    module.add_function(wrap_pyfunction!(vfe_shard_gradient, module)?)?;
    Ok(())
}
