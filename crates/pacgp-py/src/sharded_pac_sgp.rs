//! The sparse PAC-GP bound over data shards ([`pacgp::objective::pac_sgp_sharded`]) for
//! map-reduce evaluation and training on Dask: three per-shard passes and two M×M steps, each
//! a function of the bound's settings (a dict, see [`Settings`]), the packed parameters
//! `p = [θ…, ln σ², vec(Z) row by row]` and numpy arrays; plus the single-process objective
//! ([`PacSgpObjective`]) on data in one process, for comparison and for small problems.

use std::collections::HashMap;

use faer::Mat;
use numpy::{IntoPyArray, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use pacgp::fit::sharded::pac_sgp_bound;
use pacgp::kernel::Kernel;
use pacgp::linalg::Cholesky;
use pacgp::objective::bound::BoundTerms;
use pacgp::objective::pac_sgp::PacSgpBound;
use pacgp::objective::pac_sgp_sharded::{
    self, PacSgpAdjoints, PacSgpDriverPart, PacSgpShardGradient, PacSgpShardRisk, PacSgpShardStats,
    PacSgpSharded, PacSgpState,
};
use pacgp::optim::Objective;
use pacgp::spec::values::BadValue;
use pacgp::spec::{FitOptions, MethodName, SpecError, SpecOption};

use crate::errors::{spec_err, PyWording};
use crate::sharded::{factor_of, kernel_at, shard, vector};
use crate::{compute, to_mat, to_numpy, to_py_err, Mat2, Vec1};

/// The bound's settings, from a Python dict with these keys (`pacgp.distributed` builds it).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct Settings {
    /// Kernel specification (`se-ard`, `matern52`, ...) and its input dimension.
    kernel_spec: String,
    d: usize,
    /// Number of inducing inputs M.
    pub(crate) m: usize,
    /// 1 = FITC posterior (the paper's), 0 = VFE.
    pub(crate) alpha_s: f64,
    /// ε of the ε-band loss, on the scale of the shards' targets.
    epsilon: f64,
    pub(crate) delta: f64,
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

    /// The kernel and the bound. The settings are checked as a pac-sgp fit's
    /// options by the library (`bound` kl or sqrt, `confidence_term` maurer or sharp, ...) and
    /// the bound is the one of that spec ([`PacSgpBound::of`]); ε is already on the shards'
    /// scale.
    fn bound(&self) -> PyResult<(Kernel, PacSgpBound)> {
        let kernel = self.kernel()?;
        let wording = PyWording::new(Some(HashMap::from([(
            "xi".to_string(),
            "confidence_term".to_string(),
        )])));
        let word = |option| {
            let wording = &wording;
            move |e: BadValue| spec_err(&SpecError::unparsable(option, e), wording)
        };
        let options = FitOptions {
            kernel: Some(self.kernel_spec.clone()),
            epsilon: Some(self.epsilon),
            delta: Some(self.delta),
            inducing: Some(self.m),
            bound: Some(self.bound.parse().map_err(word(SpecOption::Bound))?),
            xi: Some(self.confidence_term.parse().map_err(word(SpecOption::Xi))?),
            hyper_prior: self
                .hyper_prior
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(word(SpecOption::HyperPrior))?,
            ..Default::default()
        };
        let spec = options
            .check(MethodName::PacSgp)
            .map_err(|e| spec_err(&e, &wording))?;
        let bound = pac_sgp_bound(&spec, 1.0).map_err(to_py_err)?;
        Ok((kernel, bound))
    }

    /// The sharded bound and the driver's `K_uu` factor `l_uu` (M×M): what every shard pass
    /// and the final gradient step start from.
    fn sharded_at(&self, l_uu: &PyReadonlyArray2<'_, f64>) -> PyResult<(PacSgpSharded, Cholesky)> {
        Ok((self.sharded()?, factor_of(l_uu, self.m)?))
    }

    fn sharded(&self) -> PyResult<PacSgpSharded> {
        let (kernel, bound) = self.bound()?;
        bound
            .sharded(&kernel, self.d, self.m, self.alpha_s)
            .map_err(to_py_err)
    }
}

fn terms_tuple(t: &BoundTerms) -> (f64, f64, f64) {
    (t.empirical_risk, t.kl, t.bound)
}

/// `L` with `L Lᵀ = K_uu + jitter·I` at `p`, and the jitter: computed once per evaluation on
/// the driver and passed to every shard pass.
#[pyfunction]
#[pyo3(signature = (settings, p))]
fn pac_sgp_kuu_factor<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
) -> PyResult<(Mat2<'py>, f64)> {
    let obj = settings.sharded()?;
    let l = compute(py, None, || obj.kuu_factor(&p))?;
    Ok((to_numpy(py, &l.l().to_owned()), l.jitter()))
}

/// Pass 1 on one shard: `(B_s, γ_s, n_s)`.
#[pyfunction]
#[pyo3(signature = (settings, p, l_uu, x, y, n_threads=None))]
fn pac_sgp_shard_stats<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    l_uu: PyReadonlyArray2<'py, f64>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(Mat2<'py>, Vec1<'py>, usize)> {
    let (obj, l) = settings.sharded_at(&l_uu)?;
    let (xm, yv) = shard(&x, &y)?;
    let s = compute(py, n_threads, || obj.shard_stats(&p, &l, xm.as_ref(), &yv))?;
    Ok((to_numpy(py, &s.b), s.gamma.into_pyarray(py), s.n))
}

/// After pass 1, from the summed statistics: `(L_B, w, KL, n)`.
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
    Ok((to_numpy(py, &st.l_b), st.w.into_pyarray(py), st.kl, st.n))
}

/// The pass-1 state handed back from Python (`L_B`, `w`, KL, N).
fn state_of(
    l_b: &PyReadonlyArray2<'_, f64>,
    w: &PyReadonlyArray1<'_, f64>,
    kl: f64,
    n: usize,
) -> PyResult<PacSgpState> {
    Ok(PacSgpState {
        l_b: to_mat(l_b, "l_b")?,
        w: vector(w)?,
        kl,
        n,
    })
}

/// Pass 2 on one shard, given the state: `(Σ r_i, u_s, G_s, n_s)`.
#[pyfunction]
#[pyo3(signature = (settings, p, l_uu, l_b, w, kl, n, x, y, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn pac_sgp_shard_risk<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    l_uu: PyReadonlyArray2<'py, f64>,
    l_b: PyReadonlyArray2<'py, f64>,
    w: PyReadonlyArray1<'py, f64>,
    kl: f64,
    n: usize,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(f64, Vec1<'py>, Mat2<'py>, usize)> {
    let (obj, l) = settings.sharded_at(&l_uu)?;
    let st = state_of(&l_b, &w, kl, n)?;
    let (xm, yv) = shard(&x, &y)?;
    let r = compute(py, n_threads, || {
        obj.shard_risk(&p, &l, &st, xm.as_ref(), &yv)
    })?;
    Ok((r.risk_sum, r.u.into_pyarray(py), to_numpy(py, &r.g), r.n))
}

/// After pass 2, from the state and the summed risks: `((R_S, KL, bound), B̄, γ̄, risk scale,
/// Ψ, penalty gradient)`; pass 3 also needs the state's `L_B` and `w`, the final step Ψ and
/// the penalty gradient.
#[pyfunction]
#[pyo3(signature = (settings, p, l_b, w, kl, n, risk_sum, u, g))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn pac_sgp_combine<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    l_b: PyReadonlyArray2<'py, f64>,
    w: PyReadonlyArray1<'py, f64>,
    kl: f64,
    n: usize,
    risk_sum: f64,
    u: PyReadonlyArray1<'py, f64>,
    g: PyReadonlyArray2<'py, f64>,
) -> PyResult<(
    (f64, f64, f64),
    Mat2<'py>,
    Vec1<'py>,
    f64,
    Mat2<'py>,
    Vec1<'py>,
)> {
    let obj = settings.sharded()?;
    let st = state_of(&l_b, &w, kl, n)?;
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
        to_numpy(py, &a.b_bar),
        a.gamma_bar.into_pyarray(py),
        a.risk_scale,
        to_numpy(py, &out.driver.psi),
        out.driver.gradient.into_pyarray(py),
    ))
}

/// Pass 3 on one shard: `(gradient part, Σ q̄_iV_iV_iᵀ)`.
#[pyfunction]
#[pyo3(signature = (settings, p, l_uu, l_b, w, b_bar, gamma_bar, risk_scale, x, y, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn pac_sgp_shard_gradient<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    l_uu: PyReadonlyArray2<'py, f64>,
    l_b: PyReadonlyArray2<'py, f64>,
    w: PyReadonlyArray1<'py, f64>,
    b_bar: PyReadonlyArray2<'py, f64>,
    gamma_bar: PyReadonlyArray1<'py, f64>,
    risk_scale: f64,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(Vec1<'py>, Mat2<'py>)> {
    let (obj, l) = settings.sharded_at(&l_uu)?;
    let adj = PacSgpAdjoints {
        l_b: to_mat(&l_b, "l_b")?,
        w: vector(&w)?,
        b_bar: to_mat(&b_bar, "b_bar")?,
        gamma_bar: vector(&gamma_bar)?,
        risk_scale,
    };
    let (xm, yv) = shard(&x, &y)?;
    let g = compute(py, n_threads, || {
        obj.shard_gradient(&p, &l, &adj, xm.as_ref(), &yv)
    })?;
    Ok((g.gradient.into_pyarray(py), to_numpy(py, &g.vqv)))
}

/// After pass 3: the gradient from the driver's part (Ψ, penalty gradient) and the shards'
/// summed parts.
#[pyfunction]
#[pyo3(signature = (settings, p, l_uu, psi, penalty_gradient, gradient, vqv))]
#[allow(clippy::too_many_arguments)]
fn pac_sgp_gradient<'py>(
    py: Python<'py>,
    settings: Settings,
    p: Vec<f64>,
    l_uu: PyReadonlyArray2<'py, f64>,
    psi: PyReadonlyArray2<'py, f64>,
    penalty_gradient: PyReadonlyArray1<'py, f64>,
    gradient: PyReadonlyArray1<'py, f64>,
    vqv: PyReadonlyArray2<'py, f64>,
) -> PyResult<Vec1<'py>> {
    let (obj, l) = settings.sharded_at(&l_uu)?;
    let driver = PacSgpDriverPart {
        psi: to_mat(&psi, "psi")?,
        gradient: vector(&penalty_gradient)?,
    };
    let parts = PacSgpShardGradient {
        gradient: vector(&gradient)?,
        vqv: to_mat(&vqv, "vqv")?,
    };
    let g = compute(py, None, || obj.gradient(&p, &l, &driver, &parts))?;
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
    let (kernel, bound) = settings.bound()?;
    let (xm, yv) = shard(&x, &y)?;
    let (m, alpha_s) = (settings.m, settings.alpha_s);
    let (terms, grad) = compute(py, n_threads, || {
        let obj = bound.in_process(&kernel, xm.as_ref(), &yv, m, alpha_s)?;
        let terms = obj.terms(&p)?;
        let (_, grad) = obj.value_and_gradient(&p)?;
        Ok((terms, grad))
    })?;
    Ok((terms_tuple(&terms), grad.into_pyarray(py)))
}

/// One shard's sums of a sparse posterior with `Λ = σ² + α_s diag(K_ff − Q_ff)` at `p`:
/// `(B_s, γ_s, n_s)` for the model file (`ShardedFitSpec.model`, `model::sparse_model_from_parts`).
#[pyfunction]
#[pyo3(signature = (kernel_spec, p, m, alpha_s, x, y, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn posterior_shard_stats<'py>(
    py: Python<'py>,
    kernel_spec: &str,
    p: Vec<f64>,
    m: usize,
    alpha_s: f64,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_threads: Option<usize>,
) -> PyResult<(Mat2<'py>, Vec1<'py>, usize)> {
    let (xm, yv) = shard(&x, &y)?;
    let (kernel, noise, z) = unpack(kernel_spec, xm.ncols(), m, &p)?;
    let s = compute(py, n_threads, || {
        pac_sgp_sharded::posterior_shard_stats(
            &kernel,
            noise,
            alpha_s,
            z.as_ref(),
            xm.as_ref(),
            &yv,
        )
    })?;
    Ok((to_numpy(py, &s.b), s.gamma.into_pyarray(py), s.n))
}

/// `(kernel, σ², Z)` from `p = [θ…, ln σ², vec(Z)]` for the kernel `spec` on `d` inputs.
pub(crate) fn unpack(
    spec: &str,
    d: usize,
    m: usize,
    p: &[f64],
) -> PyResult<(Kernel, f64, Mat<f64>)> {
    let kernel = Kernel::from_spec(spec, d).map_err(to_py_err)?;
    let nk = kernel.n_params();
    if p.len() != nk + 1 + m * d {
        return Err(PyValueError::new_err(format!(
            "the parameter vector has {} entries, {spec} on {d} inputs with {m} inducing inputs needs {}",
            p.len(),
            nk + 1 + m * d
        )));
    }
    let kernel = kernel_at(spec, d, &p[..nk])?;
    let z = Mat::from_fn(m, d, |a, t| p[nk + 1 + a * d + t]);
    Ok((kernel, p[nk].exp(), z))
}

/// The ln hyperparameters the kernel `spec` on `d` inputs starts from (as `pacgp fit`).
#[pyfunction]
fn kernel_init_params(kernel_spec: &str, d: usize) -> PyResult<Vec<f64>> {
    Ok(Kernel::from_spec(kernel_spec, d)
        .map_err(to_py_err)?
        .params())
}

/// Add the sharded PAC-SGP functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(pac_sgp_kuu_factor, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_shard_stats, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_state, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_shard_risk, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_combine, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_shard_gradient, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_gradient, module)?)?;
    module.add_function(wrap_pyfunction!(pac_sgp_objective, module)?)?;
    module.add_function(wrap_pyfunction!(posterior_shard_stats, module)?)?;
    module.add_function(wrap_pyfunction!(kernel_init_params, module)?)?;
    Ok(())
}
