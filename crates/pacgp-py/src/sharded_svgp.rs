//! The sparse variational GP classifier's objective over data shards
//! ([`pacgp::svgp::SvgpAssembly`]) for map-reduce training on Dask: one pass per shard
//! ([`svgp_shard_sums`]) and one reduce step in the driver ([`svgp_combine`]). The fit's
//! settings travel as the method, its options (a dict by the library's option names), N and D;
//! each call checks them as the fit spec and plans the assembly the in-process fit uses.

use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use pacgp::fit::sharded::{ShardedFamily, ShardedFit};
use pacgp::regression::row_blocks::Streaming;
use pacgp::svgp::objective::BATCH_BLOCK_ROWS;
use pacgp::svgp::{SvgpAssembly, SvgpShardSums};

use crate::errors::{lib_err, PyWording};
use crate::sharded::{shard, vector};
use crate::sharded_fit::checked_spec;
use crate::{compute, to_mat, to_numpy, Mat2, Vec1};

/// One shard's sums for Python: `(rows, data_sum, theta, dz, p_and_d, mean_bar)`.
type Sums<'py> = (usize, f64, Vec1<'py>, Mat2<'py>, Mat2<'py>, Vec1<'py>);

/// The assembly of `method` (svgp or pac-svgp) with `options` on N = `n` rows of `d` inputs,
/// as the sharded fit plans it.
fn assembly(
    method: &str,
    options: &Bound<'_, PyDict>,
    n: usize,
    d: usize,
) -> PyResult<SvgpAssembly> {
    let wording = PyWording::new(None);
    let spec = checked_spec(method, options, &wording)?;
    match ShardedFit::of(&spec, n, d, 1.0)
        .map_err(|e| lib_err(e, &wording))?
        .family
    {
        ShardedFamily::Classifier { assembly, .. } => Ok(assembly),
        ShardedFamily::Regression { .. } => Err(pyo3::exceptions::PyValueError::new_err(
            "svgp_shard_sums and svgp_combine take svgp or pac-svgp",
        )),
    }
}

/// One shard's sums at `p = [θ…, vec(Z), m, vech(L_q)]` on its standardised inputs `x` and
/// ±1 labels `y`: `(rows, data_sum, theta, dz, p_and_d, mean_bar)`, which add over shards.
/// `batch`: the rows are a minibatch's, streamed in the in-process minibatch's blocks.
#[pyfunction]
#[pyo3(signature = (method, options, n, p, x, y, n_threads=None, batch=false))]
#[allow(clippy::too_many_arguments)]
fn svgp_shard_sums<'py>(
    py: Python<'py>,
    method: &str,
    options: &Bound<'py, PyDict>,
    n: usize,
    p: Vec<f64>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
    batch: bool,
) -> PyResult<Sums<'py>> {
    let (xm, yv) = shard(&x, &y)?;
    let assembly = assembly(method, options, n, xm.ncols())?;
    let stream = match batch {
        true => Streaming {
            block_rows: BATCH_BLOCK_ROWS,
            ..Streaming::default()
        },
        false => Streaming::default(),
    };
    let s = compute(py, n_threads, || {
        assembly.shard_sums(&p, xm.as_ref(), &yv, &stream)
    })?;
    Ok((
        s.rows,
        s.data_sum,
        s.theta.into_pyarray(py),
        to_numpy(py, &s.dz),
        to_numpy(py, &s.p_and_d),
        s.mean_bar.into_pyarray(py),
    ))
}

/// The objective's `(data_term, KL, value)` and gradient at `p` from the shards' summed sums
/// (the tuple [`svgp_shard_sums`] returns, added entry by entry), on N = `n` rows of `d`
/// inputs.
#[pyfunction]
#[pyo3(signature = (method, options, n, d, p, rows, data_sum, theta, dz, p_and_d, mean_bar))]
#[allow(clippy::too_many_arguments)]
fn svgp_combine(
    py: Python<'_>,
    method: &str,
    options: &Bound<'_, PyDict>,
    n: usize,
    d: usize,
    p: Vec<f64>,
    rows: usize,
    data_sum: f64,
    theta: PyReadonlyArray1<'_, f64>,
    dz: PyReadonlyArray2<'_, f64>,
    p_and_d: PyReadonlyArray2<'_, f64>,
    mean_bar: PyReadonlyArray1<'_, f64>,
) -> PyResult<((f64, f64, f64), Vec<f64>)> {
    let assembly = assembly(method, options, n, d)?;
    let sums = SvgpShardSums {
        rows,
        data_sum,
        theta: vector(&theta)?,
        dz: to_mat(&dz, "dz")?,
        p_and_d: to_mat(&p_and_d, "p_and_d")?,
        mean_bar: vector(&mean_bar)?,
    };
    let (t, g) = compute(py, None, || assembly.combine(&p, &sums))?;
    Ok(((t.data_term, t.kl, t.value), g))
}

/// Add the functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(svgp_shard_sums, module)?)?;
    module.add_function(wrap_pyfunction!(svgp_combine, module)?)?;
    Ok(())
}
