//! The start of a sharded fit's inducing inputs as the library places them: the seeded
//! permutation's head, the seeded k-means on a gathered sample, and one Lloyd step's sums on a
//! shard (the map step of k-means over shards).

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use pacgp::regression::inducing_init::InducingInit;

use crate::{compute, to_mat, to_numpy, Mat2};

/// The first `m` of the seeded permutation of `0..n` that places a fit's initial inducing
/// inputs (`pacgp::data::permutation`).
#[pyfunction]
fn permutation_head(n: usize, m: usize, seed: u64) -> Vec<usize> {
    let mut p = pacgp::data::permutation(n, seed);
    p.truncate(m);
    p
}

/// The library's seeded k-means start of `m` inducing inputs on `x`
/// (`regression::inducing_init::initial_inducing`, what the in-process sparse fits start from).
#[pyfunction]
fn initial_inducing_kmeans<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    m: usize,
    seed: u64,
) -> PyResult<Mat2<'py>> {
    let xm = to_mat(&x, "X")?;
    let z = compute(py, None, || {
        pacgp::regression::inducing_init::initial_inducing(
            xm.as_ref(),
            m,
            InducingInit::KMeans,
            seed,
        )
    })?;
    Ok(to_numpy(py, &z))
}

/// One Lloyd step's sums on one shard (`regression::inducing_init::kmeans_sums`): per centre,
/// the sum and the number of the shard's points nearest to it; the driver adds the shards'.
#[pyfunction]
#[pyo3(signature = (x, centres, n_threads=None))]
fn kmeans_sums<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    centres: PyReadonlyArray2<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(Mat2<'py>, Bound<'py, PyArray1<u64>>)> {
    let (xm, cm) = (to_mat(&x, "X")?, to_mat(&centres, "centres")?);
    let (sums, counts) = compute(py, n_threads, || {
        pacgp::regression::inducing_init::kmeans_sums(xm.as_ref(), cm.as_ref())
    })?;
    let counts: Vec<u64> = counts.into_iter().map(|c| c as u64).collect();
    Ok((to_numpy(py, &sums), counts.into_pyarray(py)))
}

/// Add the inducing inputs' start functions to the module.
pub(super) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(permutation_head, module)?)?;
    module.add_function(wrap_pyfunction!(initial_inducing_kmeans, module)?)?;
    module.add_function(wrap_pyfunction!(kmeans_sums, module)?)?;
    Ok(())
}
