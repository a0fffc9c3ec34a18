//! The sharded fit's warm start in this process: the library's single-process sparse objective
//! (Titsias' VFE bound, or the PAC-SGP bound of the sharded settings) minimised by the
//! library's own L-BFGS-B on a subsample gathered into the driver. It keeps its row blocks
//! between the value and gradient passes, which the map-reduce functions cannot, so it is
//! the faster way to a good start; the sharded minimisation then starts where it stopped.

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use pacgp::kernel::Kernel;
use pacgp::objective::pac_sgp::PacSgpObjective;
use pacgp::optim::{self, LbfgsConfig, Objective, Restarts};
use pacgp::regression::sparse::{NegSparseObjective, SparseMethod};

use crate::sharded::vector;
use crate::sharded_pac_sgp::Settings;
use crate::{compute, to_mat, to_py_err};

/// What [`minimise_in_process`] returns: the parameters, iterations, evaluations, the
/// termination's name (as the library's reports spell it) and its message.
type Outcome = (Vec<f64>, u64, u64, String, String);

/// Minimise the sparse objective of `method` ("vfe", or "pac-sgp" with `settings`) on `(x, y)`
/// from `p = [θ…, ln σ², vec(Z)]` within `bounds` (`(lo, hi)` per coordinate, `None` for no
/// limit), at most `max_iter` L-BFGS iterations; nothing is snapped.
#[pyfunction]
#[pyo3(signature = (method, kernel_spec, m, p, x, y, bounds, max_iter, settings=None, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn minimise_in_process(
    py: Python<'_>,
    method: &str,
    kernel_spec: &str,
    m: usize,
    p: Vec<f64>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    bounds: Vec<(Option<f64>, Option<f64>)>,
    max_iter: usize,
    settings: Option<Settings>,
    n_threads: Option<usize>,
) -> PyResult<Outcome> {
    let (xm, yv) = (to_mat(&x, "X")?, vector(&y)?);
    let bounds: Vec<(f64, f64)> = bounds
        .into_iter()
        .map(|(lo, hi)| (lo.unwrap_or(f64::NEG_INFINITY), hi.unwrap_or(f64::INFINITY)))
        .collect();
    let lbfgs = LbfgsConfig {
        max_iter,
        ..Default::default()
    };
    let run = |obj: &dyn Objective| {
        optim::drive(obj, &p, bounds.clone(), &lbfgs, &Restarts::default(), None)
    };
    let minimum = match (method, settings) {
        ("vfe", Some(_)) => {
            return Err(PyValueError::new_err(
                "settings are the PAC-SGP bound's; VFE takes none",
            ))
        }
        ("pac-sgp", Some(s)) if s.m != m || s.kernel_spec() != kernel_spec => {
            return Err(PyValueError::new_err(format!(
                "the settings are for {} inducing inputs and kernel {:?}, not {m} and {kernel_spec:?}",
                s.m,
                s.kernel_spec()
            )))
        }
        ("vfe", None) => {
            let kernel = Kernel::from_spec(kernel_spec, xm.ncols()).map_err(to_py_err)?;
            compute(py, n_threads, || {
                run(&NegSparseObjective::new(
                    &kernel,
                    SparseMethod::Vfe,
                    xm.as_ref(),
                    &yv,
                    m,
                ))
            })?
        }
        ("pac-sgp", Some(s)) => {
            let (kernel, loss, penalty, kind, term, prior) = s.parts()?;
            compute(py, n_threads, || {
                let mut obj = PacSgpObjective::new(
                    &kernel,
                    xm.as_ref(),
                    &yv,
                    s.m,
                    s.alpha_s,
                    loss,
                    s.delta,
                    penalty,
                    kind,
                )?
                .with_confidence_term(term);
                if let Some(prior) = prior {
                    obj = obj.with_hyper_prior(prior)?;
                }
                run(&obj)
            })?
        }
        ("pac-sgp", None) => {
            return Err(PyValueError::new_err(
                "the PAC-SGP bound needs its settings (pac_sgp_settings)",
            ))
        }
        (other, _) => {
            return Err(PyValueError::new_err(format!(
                "method must be 'vfe' or 'pac-sgp', got {other:?}"
            )))
        }
    };
    let r = minimum.report;
    let termination = serde_json::to_value(r.termination)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "other".into());
    Ok((
        minimum.params,
        r.iterations,
        r.evaluations,
        termination,
        r.message,
    ))
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(minimise_in_process, module)?)
}
