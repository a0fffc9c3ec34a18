//! The sparse PAC-GP bound over data shards ([`pacgp::objective::pac_sgp_sharded`]) for
//! map-reduce evaluation and training on Dask: three per-shard passes and two M×M steps, each
//! a function of the bound's settings (a dict, see [`Settings`]), the packed parameters
//! `p = [θ…, ln σ², vec(Z) row by row]` and numpy arrays; plus the single-process objective
//! ([`PacSgpObjective`]) on data in one process, for comparison and for small problems.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use pacgp::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use pacgp::kernel::Kernel;
use pacgp::loss::RegressionLoss;
use pacgp::objective::pac_sgp::{PacSgpObjective, PacSgpTerms};
use pacgp::objective::pac_sgp_sharded::{
    PacSgpAdjoints, PacSgpShardRisk, PacSgpShardStats, PacSgpSharded, PacSgpState,
};
use pacgp::optim::Objective;
use pacgp::prior::HyperPrior;

use crate::model::choose;
use crate::sharded::{to_numpy, vector};
use crate::{compute, to_mat, to_py_err};

/// The bound's settings, from a Python dict with these keys (`pacgp.distributed` builds it).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Settings {
    /// Kernel specification (`se-ard`, `matern52`, ...) and its input dimension.
    kernel_spec: String,
    d: usize,
    /// Number of inducing inputs M.
    m: usize,
    /// 1 = FITC posterior (the paper's), 0 = VFE.
    alpha_s: f64,
    /// ε of the ε-band loss, on the scale of the shards' targets.
    epsilon: f64,
    delta: f64,
    /// `kl` or `sqrt`.
    bound: String,
    /// `maurer`, `seeger` or `sharp`.
    confidence_term: String,
    /// `None` (the paper's uniform grid, `T·ln 1201`), `uniform` or `gaussian`.
    hyper_prior: Option<String>,
}

impl Settings {
    fn kernel(&self) -> PyResult<Kernel> {
        Kernel::from_spec(&self.kernel_spec, self.d).map_err(to_py_err)
    }

    fn parts(
        &self,
    ) -> PyResult<(
        Kernel,
        RegressionLoss,
        f64,
        BoundKind,
        ConfidenceTerm,
        Option<HyperPrior>,
    )> {
        let kernel = self.kernel()?;
        let loss = RegressionLoss::new_epsilon_band(self.epsilon).map_err(to_py_err)?;
        let kind = choose(
            "bound",
            &self.bound,
            &[("kl", BoundKind::Kl), ("sqrt", BoundKind::Sqrt)],
        )?;
        let term = choose(
            "confidence_term",
            &self.confidence_term,
            &[
                ("maurer", ConfidenceTerm::Maurer),
                ("seeger", ConfidenceTerm::Seeger),
                ("sharp", ConfidenceTerm::Sharp),
            ],
        )?;
        let prior = match &self.hyper_prior {
            None => None,
            Some(name) => Some(choose(
                "hyper_prior",
                name,
                &[
                    ("uniform", HyperPrior::uniform()),
                    ("gaussian", HyperPrior::gaussian()),
                ],
            )?),
        };
        // As fit_pac_sgp_with: the grid's T·ln L unless a hyperparameter prior prices θ.
        let penalty = match prior {
            None => HyperGrid::default().penalty(kernel.n_params()),
            Some(_) => 0.0,
        };
        Ok((kernel, loss, penalty, kind, term, prior))
    }

    fn sharded(&self) -> PyResult<PacSgpSharded> {
        let (kernel, loss, penalty, kind, term, prior) = self.parts()?;
        let obj = PacSgpSharded::new(
            &kernel,
            self.d,
            self.m,
            self.alpha_s,
            loss,
            self.delta,
            penalty,
            kind,
        )
        .map_err(to_py_err)?
        .with_confidence_term(term);
        match prior {
            None => Ok(obj),
            Some(p) => obj.with_hyper_prior(p).map_err(to_py_err),
        }
    }
}

type Vec1<'py> = Bound<'py, PyArray1<f64>>;
type Mat2<'py> = Bound<'py, PyArray2<f64>>;

fn terms_tuple(t: &PacSgpTerms) -> (f64, f64, f64) {
    (t.empirical_risk, t.kl, t.bound)
}

/// Pass 1 on one shard: `(B_s, γ_s, n_s)`.
#[pyfunction]
#[pyo3(signature = (settings, p, x, y, n_threads=None))]
fn pac_sgp_shard_stats<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(Mat2<'py>, Vec1<'py>, usize)> {
    let obj = settings.sharded()?;
    let (xm, yv) = (to_mat(&x, "X")?, vector(&y)?);
    let s = compute(py, n_threads, || obj.shard_stats(&p, xm.as_ref(), &yv))?;
    Ok((to_numpy(py, &s.b)?, s.gamma.into_pyarray(py), s.n))
}

/// After pass 1, from the summed statistics: `(L_B, e, KL, n)`.
#[pyfunction]
#[pyo3(signature = (settings, p, b, gamma, n))]
fn pac_sgp_state<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    b: PyReadonlyArray2<'py, f64>,
    gamma: PyReadonlyArray1<'py, f64>,
    n: usize,
) -> PyResult<(Mat2<'py>, Vec1<'py>, f64, usize)> {
    let obj = settings.sharded()?;
    let stats = PacSgpShardStats {
        b: to_mat(&b, "B")?,
        gamma: vector(&gamma)?,
        n,
    };
    let st = compute(py, None, || obj.state(&p, &stats))?;
    Ok((to_numpy(py, &st.l_b)?, st.e.into_pyarray(py), st.kl, st.n))
}

/// Pass 2 on one shard, given the state: `(Σ r_i, u_s, G_s, n_s)`.
#[pyfunction]
#[pyo3(signature = (settings, p, l_b, e, kl, n, x, y, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn pac_sgp_shard_risk<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    l_b: PyReadonlyArray2<'py, f64>,
    e: PyReadonlyArray1<'py, f64>,
    kl: f64,
    n: usize,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(f64, Vec1<'py>, Mat2<'py>, usize)> {
    let obj = settings.sharded()?;
    let st = PacSgpState {
        l_b: to_mat(&l_b, "l_b")?,
        e: vector(&e)?,
        kl,
        n,
    };
    let (xm, yv) = (to_mat(&x, "X")?, vector(&y)?);
    let r = compute(py, n_threads, || obj.shard_risk(&p, &st, xm.as_ref(), &yv))?;
    Ok((r.risk_sum, r.u.into_pyarray(py), to_numpy(py, &r.g)?, r.n))
}

/// After pass 2, from the state and the summed risks: `((R_S, KL, bound), C, c̄, risk scale,
/// global gradient)`; pass 3 also needs the state's `L_B` and `e`.
#[pyfunction]
#[pyo3(signature = (settings, p, l_b, e, kl, n, risk_sum, u, g))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn pac_sgp_combine<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    l_b: PyReadonlyArray2<'py, f64>,
    e: PyReadonlyArray1<'py, f64>,
    kl: f64,
    n: usize,
    risk_sum: f64,
    u: PyReadonlyArray1<'py, f64>,
    g: PyReadonlyArray2<'py, f64>,
) -> PyResult<((f64, f64, f64), Mat2<'py>, Vec1<'py>, f64, Vec1<'py>)> {
    let obj = settings.sharded()?;
    let st = PacSgpState {
        l_b: to_mat(&l_b, "l_b")?,
        e: vector(&e)?,
        kl,
        n,
    };
    let risk = PacSgpShardRisk {
        risk_sum,
        u: vector(&u)?,
        g: to_mat(&g, "G")?,
        n,
    };
    let out = compute(py, None, || obj.combine(&p, &st, &risk))?;
    let a = out.adjoints;
    Ok((
        terms_tuple(&out.terms),
        to_numpy(py, &a.c)?,
        a.c_bar.into_pyarray(py),
        a.risk_scale,
        out.gradient.into_pyarray(py),
    ))
}

/// Pass 3 on one shard: its part of the gradient.
#[pyfunction]
#[pyo3(signature = (settings, p, l_b, e, c, c_bar, risk_scale, x, y, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn pac_sgp_shard_gradient<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    l_b: PyReadonlyArray2<'py, f64>,
    e: PyReadonlyArray1<'py, f64>,
    c: PyReadonlyArray2<'py, f64>,
    c_bar: PyReadonlyArray1<'py, f64>,
    risk_scale: f64,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<Vec1<'py>> {
    let obj = settings.sharded()?;
    let adj = PacSgpAdjoints {
        l_b: to_mat(&l_b, "l_b")?,
        e: vector(&e)?,
        c: to_mat(&c, "C")?,
        c_bar: vector(&c_bar)?,
        risk_scale,
    };
    let (xm, yv) = (to_mat(&x, "X")?, vector(&y)?);
    let g = compute(py, n_threads, || {
        obj.shard_gradient(&p, &adj, xm.as_ref(), &yv)
    })?;
    Ok(g.into_pyarray(py))
}

/// The single-process objective on all the data: `((R_S, KL, bound), gradient)`.
#[pyfunction]
#[pyo3(signature = (settings, p, x, y, n_threads=None))]
fn pac_sgp_objective<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<((f64, f64, f64), Vec1<'py>)> {
    let (kernel, loss, penalty, kind, term, prior) = settings.parts()?;
    let (xm, yv) = (to_mat(&x, "X")?, vector(&y)?);
    let (m, alpha_s, delta) = (settings.m, settings.alpha_s, settings.delta);
    let (terms, grad) = compute(py, n_threads, || {
        let mut obj = PacSgpObjective::new(
            &kernel,
            xm.as_ref(),
            &yv,
            m,
            alpha_s,
            loss,
            delta,
            penalty,
            kind,
        )?
        .with_confidence_term(term);
        if let Some(prior) = prior {
            obj = obj.with_hyper_prior(prior)?;
        }
        let terms = obj.terms(&p)?;
        let (_, grad) = obj.value_and_gradient(&p)?;
        Ok((terms, grad))
    })?;
    Ok((terms_tuple(&terms), grad.into_pyarray(py)))
}

/// Add the sharded PAC-SGP functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(pac_sgp_shard_stats, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_state, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_shard_risk, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_combine, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_shard_gradient, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_objective, module)?)?;
    Ok(())
}
