//! The VFE bound over data shards ([`pacgp::regression::sharded`]) for map-reduce training on
//! Dask: `K_uu`'s factor once, statistics and gradient parts per shard, the M×M steps once. The
//! kernel travels as its specification and θ (ln values), the factor and sums as numpy arrays.

use faer::Mat;
use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use pacgp::kernel::Kernel;
use pacgp::linalg::Cholesky;
use pacgp::regression::sharded::{self, ShardStats, VfeAdjoints, VfeDriverPart, VfeShardGradient};

use crate::{check_aligned, compute, to_mat, to_numpy, to_py_err, Mat2, Vec1};

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

/// The driver's `K_uu` factor on every shard: `l` (M×M lower) checked by the library.
pub(crate) fn factor_of(l: &PyReadonlyArray2<'_, f64>, m: usize) -> PyResult<Cholesky> {
    sharded::kuu_factor_from_parts(to_mat(l, "l_uu")?, 0.0, m).map_err(to_py_err)
}

/// A shard's inputs and targets as the library takes them.
pub(crate) fn shard(
    x: &PyReadonlyArray2<'_, f64>,
    y: &PyReadonlyArray1<'_, f64>,
) -> PyResult<(Mat<f64>, Vec<f64>)> {
    Ok((to_mat(x, "X")?, vector(y)?))
}

/// The point of a VFE step after the driver's factor: the kernel `spec` at θ on Z's inputs,
/// the inducing inputs Z and the factor `l_uu` of their `K_uu`.
fn point(
    spec: &str,
    theta: &[f64],
    z: &PyReadonlyArray2<'_, f64>,
    l_uu: &PyReadonlyArray2<'_, f64>,
) -> PyResult<(Kernel, Mat<f64>, Cholesky)> {
    let zm = to_mat(z, "Z")?;
    let l = factor_of(l_uu, zm.nrows())?;
    let kernel = kernel_at(spec, zm.ncols(), theta)?;
    Ok((kernel, zm, l))
}

/// `L` with `L Lᵀ = K_uu + jitter·I` at (θ, Z) (the single-process jitter policy), and the
/// jitter: what the driver computes once per evaluation and sends to the shards.
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, z))]
fn sparse_kuu_factor<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    theta: Vec<f64>,
    z: PyReadonlyArray2<'py, f64>,
) -> PyResult<(Mat2<'py>, f64)> {
    let zm = to_mat(&z, "Z")?;
    let kernel = kernel_at(kernel_spec, zm.ncols(), &theta)?;
    let l = compute(py, None, || sharded::kuu_factor(&kernel, zm.as_ref()))?;
    Ok((to_numpy(py, &l.l().to_owned()), l.jitter()))
}

/// One shard's sums `(VVᵀ, Vy, yᵀy, Σ(k_ii − q_i), n)` at (θ, Z), `V = L⁻¹K(Z, X)`.
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, z, l_uu, x, y, n_threads=None))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn vfe_shard_stats<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    theta: Vec<f64>,
    z: PyReadonlyArray2<'py, f64>,
    l_uu: PyReadonlyArray2<'py, f64>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(Mat2<'py>, Vec1<'py>, f64, f64, usize)> {
    let (xm, yv) = shard(&x, &y)?;
    let (kernel, zm, l) = point(kernel_spec, &theta, &z, &l_uu)?;
    let s = compute(py, n_threads, || {
        sharded::vfe_shard_stats(&kernel, zm.as_ref(), &l, xm.as_ref(), &yv)
    })?;
    Ok((
        to_numpy(py, &s.vv),
        s.vy.into_pyarray(py),
        s.yy,
        s.trace_gap,
        s.n,
    ))
}

/// The bound and the shards' adjoints from the combined sums:
/// `(F, C, a, w, t̄, L⁻ᵀXL⁻¹, ln σ²'s driver part)`; the last two stay with the driver for
/// [`vfe_gradient`].
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, noise, z, l_uu, vv, vy, yy, trace_gap, n))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn vfe_global<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    theta: Vec<f64>,
    noise: f64,
    z: PyReadonlyArray2<'py, f64>,
    l_uu: PyReadonlyArray2<'py, f64>,
    vv: PyReadonlyArray2<'py, f64>,
    vy: PyReadonlyArray1<'py, f64>,
    yy: f64,
    trace_gap: f64,
    n: usize,
) -> PyResult<(f64, Mat2<'py>, Vec1<'py>, Vec1<'py>, f64, Mat2<'py>, f64)> {
    let (kernel, zm, l) = point(kernel_spec, &theta, &z, &l_uu)?;
    let stats = ShardStats {
        vv: to_mat(&vv, "VV")?,
        vy: vector(&vy)?,
        yy,
        trace_gap,
        n,
    };
    let g = compute(py, None, || {
        sharded::vfe_global(&kernel, noise, zm.as_ref(), &l, &stats)
    })?;
    Ok((
        g.value,
        to_numpy(py, &g.adjoints.c),
        g.adjoints.a.into_pyarray(py),
        g.adjoints.w.into_pyarray(py),
        g.adjoints.t_bar,
        to_numpy(py, &g.driver.pbar_sandwich),
        g.driver.ln_noise_gradient,
    ))
}

/// One shard's part of the gradient given the adjoints of [`vfe_global`]: `(gradient part,
/// Σ V_iβ_i)`.
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, noise, z, l_uu, x, y, c, a, w, t_bar, n_threads=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn vfe_shard_gradient<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    theta: Vec<f64>,
    noise: f64,
    z: PyReadonlyArray2<'py, f64>,
    l_uu: PyReadonlyArray2<'py, f64>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    c: PyReadonlyArray2<'py, f64>,
    a: PyReadonlyArray1<'py, f64>,
    w: PyReadonlyArray1<'py, f64>,
    t_bar: f64,
    n_threads: Option<usize>,
) -> PyResult<(Vec1<'py>, Vec1<'py>)> {
    let (xm, yv) = shard(&x, &y)?;
    let (kernel, zm, l) = point(kernel_spec, &theta, &z, &l_uu)?;
    let adj = VfeAdjoints {
        c: to_mat(&c, "C")?,
        a: vector(&a)?,
        w: vector(&w)?,
        noise,
        t_bar,
    };
    let g = compute(py, n_threads, || {
        sharded::vfe_shard_gradient(&kernel, zm.as_ref(), &l, xm.as_ref(), &yv, &adj)
    })?;
    Ok((g.gradient.into_pyarray(py), g.v_beta.into_pyarray(py)))
}

/// The gradient in `[θ…, ln σ², vec(Z)]` from the driver's part of [`vfe_global`] and the
/// shards' summed parts.
#[pyfunction]
#[pyo3(signature = (kernel_spec, theta, z, l_uu, pbar_sandwich, ln_noise_gradient, gradient, v_beta))]
#[allow(clippy::too_many_arguments)]
fn vfe_gradient<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    theta: Vec<f64>,
    z: PyReadonlyArray2<'py, f64>,
    l_uu: PyReadonlyArray2<'py, f64>,
    pbar_sandwich: PyReadonlyArray2<'py, f64>,
    ln_noise_gradient: f64,
    gradient: PyReadonlyArray1<'py, f64>,
    v_beta: PyReadonlyArray1<'py, f64>,
) -> PyResult<Vec1<'py>> {
    let (kernel, zm, l) = point(kernel_spec, &theta, &z, &l_uu)?;
    let driver = VfeDriverPart {
        pbar_sandwich: to_mat(&pbar_sandwich, "pbar_sandwich")?,
        ln_noise_gradient,
    };
    let parts = VfeShardGradient {
        gradient: vector(&gradient)?,
        v_beta: vector(&v_beta)?,
    };
    let g = compute(py, None, || {
        sharded::vfe_gradient(&kernel, zm.as_ref(), &l, &driver, &parts)
    })?;
    Ok(g.into_pyarray(py))
}

/// Add the sharded-VFE functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(sparse_kuu_factor, module)?)?;
    module.add_function(wrap_pyfunction!(vfe_shard_stats, module)?)?;
    module.add_function(wrap_pyfunction!(vfe_global, module)?)?;
    module.add_function(wrap_pyfunction!(vfe_shard_gradient, module)?)?;
    module.add_function(wrap_pyfunction!(vfe_gradient, module)?)?;
    Ok(())
}
