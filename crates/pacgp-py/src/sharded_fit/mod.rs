//! A fit over data shards (`pacgp.distributed.fit_sharded`) as the library plans it
//! ([`pacgp::fit::sharded`]): the options checked once as a fit spec, the start of the inducing
//! inputs (the library's seeded k-means, as map-reduce steps), the minimisation by the
//! library's driver over the objective Python evaluates on the shards (with the warm start on
//! a gathered subsample in this process), and the model file from the summed statistics.

use std::collections::HashMap;
use std::sync::Mutex;

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use pacgp::data::{Standardizer, TargetScaler};
use pacgp::fit::sharded::{ShardedFamily, ShardedFit};
use pacgp::fit::svgp::{svgp_model_from_parts, SvgpModelParts};
use pacgp::model as m;
use pacgp::objective::pac_sgp_sharded::PacSgpShardStats;
use pacgp::optim::{Objective, Pretraining, WarmStart};
use pacgp::spec::{CheckedFitSpec, Method, MethodName, SpecError, SpecOption};
use pacgp::svgp::SvgpTerms;

use crate::errors::{lib_err, spec_err, PyWording};
use crate::fit::fit_options;
use crate::sharded::vector;
use crate::{compute, to_mat, wrap, Model};

mod inducing_start;
mod objective;
use objective::{report_from, report_of, PyObjective, Report, Warm};

/// A fit over shards, checked: the library's fit spec of `method` (vfe, pac-sgp or
/// pac-sgp-sqrt) and `options` (by the library's option names, as `_pacgp.fit` takes them);
/// errors name the caller's parameters (`names`).
#[pyclass(frozen, module = "pacgp._pacgp")]
pub(crate) struct ShardedFitSpec {
    spec: CheckedFitSpec,
    wording: PyWording,
    /// The kernel specification and M, read from the spec once it is checked.
    kernel: String,
    m: usize,
    /// The kernel's start on the sample where [`ShardedFitSpec::start_wide`] moved it (wide
    /// inputs); the plans of this spec start there.
    start: Mutex<Option<pacgp::kernel::Kernel>>,
}

impl ShardedFitSpec {
    /// The library's plan of this spec on `n` rows of `d` inputs, its kernel at the start
    /// [`ShardedFitSpec::start_wide`] set (for `d` inputs), else at the spec's.
    fn plan(&self, n: usize, d: usize, y_sd: f64) -> PyResult<ShardedFit> {
        let mut plan =
            ShardedFit::of(&self.spec, n, d, y_sd).map_err(|e| lib_err(e, &self.wording))?;
        let start = self.start.lock().ok().and_then(|s| s.clone());
        if let Some(kernel) = start.filter(|k| k.check_input_dim(d).is_ok()) {
            plan.kernel = kernel;
        }
        Ok(plan)
    }
}

#[pymethods]
impl ShardedFitSpec {
    #[new]
    #[pyo3(signature = (method, options, names=None))]
    fn new(
        method: &str,
        options: &Bound<'_, PyDict>,
        names: Option<HashMap<String, String>>,
    ) -> PyResult<Self> {
        let wording = PyWording::new(names);
        let spec = checked_spec(method, options, &wording)?;
        ShardedFit::check(&spec).map_err(|e| spec_err(&e, &wording))?;
        let (kernel, m) = match &spec.method {
            Method::Sparse(s) => (s.kernel.clone(), s.inducing),
            Method::PacSgp(s) => (s.kernel.clone(), s.inducing),
            Method::Svgp(s) => (s.kernel.clone(), s.inducing),
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "a sharded fit trains vfe, pac-sgp, pac-sgp-sqrt, svgp or pac-svgp",
                ))
            }
        };
        let m = m.unwrap_or(pacgp::spec::DEFAULT_BASIS);
        Ok(Self {
            spec,
            wording,
            kernel,
            m,
            start: Mutex::new(None),
        })
    }

    /// The rows (indices into all `n` rows, shards in order) whose standardised inputs
    /// [`ShardedFitSpec::start_wide`] needs on `d` inputs: the library's seeded subsample of
    /// at most 1 000 rows, or all, where the in-process fit starts the lengthscales at their
    /// median distance (vfe, svgp, pac-svgp on more than 20 inputs); empty otherwise.
    fn wide_start_rows(&self, n: usize, d: usize) -> PyResult<Vec<usize>> {
        Ok(self.plan(n, d, 1.0)?.wide_start_rows(n, d, self.spec.seed))
    }

    /// Start the kernel where the in-process fit on the same `n` rows starts it, from the
    /// standardised inputs of [`ShardedFitSpec::wide_start_rows`] gathered in its order
    /// ([`ShardedFit::start_wide`]); the minimisations of this spec start there. Returns the
    /// in-process fit's note, or None where the start stays.
    fn start_wide(&self, n: usize, rows: PyReadonlyArray2<'_, f64>) -> PyResult<Option<String>> {
        let rows = to_mat(&rows, "rows")?;
        let mut plan = self.plan(n, rows.ncols(), 1.0)?;
        let note = plan
            .start_wide(n, rows.as_ref(), self.spec.seed)
            .map_err(|e| lib_err(e, &self.wording))?;
        if note.is_some() {
            *self
                .start
                .lock()
                .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("a poisoned start"))? =
                Some(plan.kernel);
        }
        Ok(note)
    }

    /// The method as users name it.
    #[getter]
    fn method(&self) -> &'static str {
        use pacgp::spec::Named;
        self.spec.method_name().name()
    }

    /// The kernel specification.
    #[getter]
    fn kernel(&self) -> String {
        self.kernel.clone()
    }

    /// The number of inducing inputs M (the library's default where none was given; a
    /// classifier's default is at most N).
    #[getter]
    fn n_inducing(&self) -> usize {
        self.m
    }

    /// The posterior's `α_s`: 0 for VFE, 1 for PAC-SGP's FITC form.
    #[getter]
    fn alpha_s(&self) -> f64 {
        match self.spec.method {
            Method::PacSgp(_) => 1.0,
            _ => 0.0,
        }
    }

    /// The bound's settings for the PAC-SGP map-reduce functions (`pac_sgp_settings`), on `d`
    /// inputs with targets of standard deviation `y_sd`; `None` for VFE.
    fn pac_sgp_settings<'py>(
        &self,
        py: Python<'py>,
        d: usize,
        y_sd: f64,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        use pacgp::spec::{BoundName, Named, PacPrior};
        let Method::PacSgp(s) = &self.spec.method else {
            return Ok(None);
        };
        let settings = PyDict::new(py);
        settings.set_item("kernel_spec", &s.kernel)?;
        settings.set_item("d", d)?;
        settings.set_item("m", self.m)?;
        settings.set_item("alpha_s", 1.0)?;
        let band = pacgp::loss::RegressionLoss::band_in_standard_units(s.epsilon, y_sd)
            .map_err(|e| lib_err(e, &self.wording))?;
        settings.set_item("epsilon", band.epsilon())?;
        settings.set_item("delta", self.spec.delta)?;
        let bound = match s.bound {
            pacgp::bounds::BoundKind::Kl => BoundName::Kl,
            pacgp::bounds::BoundKind::Sqrt => BoundName::Sqrt,
        };
        settings.set_item("bound", bound.name())?;
        settings.set_item("confidence_term", s.xi.name())?;
        let prior = match s.prior {
            PacPrior::Coarse(name) => Some(name.name()),
            _ => None,
        };
        settings.set_item("hyper_prior", prior)?;
        Ok(Some(settings))
    }

    /// Minimise `objective` (a callable `p -> (value, gradient)` over the shards' `rows` rows,
    /// the value minimised) with the library's driver, from the start with inducing inputs
    /// `z0` (M × d, standardised), θ snapped as the in-process fit snaps it; first, if
    /// `warm_x` and `warm_y` are given, the same objective on those rows (a subsample) in
    /// this process. A classifier whose spec trains on minibatches (given, or by default above
    /// N·M² = 3·10⁸) runs the in-process fit's Adam steps instead: `batch_gradient(p, rows)`
    /// evaluates the minibatch objective's gradient on the drawn rows (indices into all
    /// `rows` rows, shards in order), `objective` the whole sample's value at the end.
    /// Returns the parameters, the report, and the warm start's report. An exception raised
    /// by `objective` or `batch_gradient` stops the minimisation and is raised here.
    #[pyo3(signature = (y_sd, z0, objective, warm_x=None, warm_y=None, rows=0, batch_gradient=None))]
    #[allow(clippy::too_many_arguments)]
    fn minimise(
        &self,
        py: Python<'_>,
        y_sd: f64,
        z0: PyReadonlyArray2<'_, f64>,
        objective: Py<PyAny>,
        warm_x: Option<PyReadonlyArray2<'_, f64>>,
        warm_y: Option<PyReadonlyArray1<'_, f64>>,
        rows: usize,
        batch_gradient: Option<Py<PyAny>>,
    ) -> PyResult<(Vec<f64>, Report, Option<Warm>)> {
        let z0 = to_mat(&z0, "z0")?;
        let plan = self.plan(rows, z0.ncols(), y_sd)?;
        if z0.nrows() != plan.m {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "z0 has {} rows, the fit has {} inducing inputs",
                z0.nrows(),
                plan.m
            )));
        }
        let dim = plan.start(z0.as_ref()).len();
        let warm_rows = match (warm_x, warm_y) {
            (Some(x), Some(y)) => Some((to_mat(&x, "warm_x")?, vector(&y)?)),
            (None, None) => None,
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "a warm start needs both warm_x and warm_y",
                ))
            }
        };
        let sharded = PyObjective::new(objective, dim);
        if plan.minibatch().is_some() {
            let Some(f) = batch_gradient else {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "this fit trains on minibatches: give batch_gradient",
                ));
            };
            let batches = PyObjective::new(f, dim);
            let out = py.detach(|| {
                let mut gradient = |rows: &[usize], p: &[f64]| batches.gradient_on(rows, p);
                plan.minimise_on_batches(&mut gradient, &|p| sharded.value(p), z0.as_ref())
            });
            batches.raise()?;
            sharded.raise()?;
            let (params, report) = out.map_err(|e| lib_err(e, &self.wording))?;
            return Ok((params, report_of(&report), None));
        }
        let out = py.detach(|| {
            let warm_obj = match &warm_rows {
                Some((x, y)) => Some(plan.in_process(x.as_ref(), y)?),
                None => None,
            };
            let warm = warm_obj
                .as_deref()
                .zip(warm_rows.as_ref())
                .map(|(o, (_, y))| WarmStart {
                    objective: o,
                    rows: y.len(),
                    of: rows.max(y.len()),
                });
            plan.minimise(&sharded, warm.as_ref(), z0.as_ref())
        });
        sharded.raise()?;
        let (min, pre) = out.map_err(|e| lib_err(e, &self.wording))?;
        let warm = pre.map(|p: Pretraining| (p.rows, p.of, report_of(&p.report)));
        Ok((min.params, report_of(&min.report), warm))
    }

    /// The model file of the fit at parameters `p` (θ on the grid): the posterior's summed
    /// shard statistics `(b, gamma, n)`, the scalers, the objective there and the
    /// optimiser's report as [`ShardedFitSpec::minimise`] returns it
    /// ([`m::sparse_model_from_parts`]).
    #[pyo3(signature = (p, b, gamma, n, x_mean, x_sd, y_mean, y_sd, *, objective, optimiser=None))]
    #[allow(clippy::too_many_arguments)]
    fn model(
        &self,
        py: Python<'_>,
        p: Vec<f64>,
        b: PyReadonlyArray2<'_, f64>,
        gamma: PyReadonlyArray1<'_, f64>,
        n: usize,
        x_mean: Vec<f64>,
        x_sd: Vec<f64>,
        y_mean: f64,
        y_sd: f64,
        objective: f64,
        optimiser: Option<Report>,
    ) -> PyResult<Model> {
        let d = x_mean.len();
        check_scaler(&x_sd, d, y_sd)?;
        let plan = self.plan(n, d, y_sd)?;
        let (kernel, noise_variance, z) =
            crate::sharded_pac_sgp::unpack(&self.kernel, d, plan.m, &p)?;
        let optimiser = optimiser.map(report_from).transpose()?;
        let alpha_s = plan.alpha_s();
        let parts = m::SparseModelParts {
            spec: self.spec.clone(),
            alpha_s,
            kernel,
            noise_variance,
            z,
            stats: PacSgpShardStats {
                b: to_mat(&b, "B")?,
                gamma: vector(&gamma)?,
                n,
            },
            x_scaler: Standardizer {
                mean: x_mean,
                sd: x_sd,
                constant: Vec::new(),
            },
            y_scaler: TargetScaler {
                mean: y_mean,
                sd: y_sd,
            },
            feature_names: (0..d).map(|j| format!("x{j}")).collect(),
            target_name: "y".into(),
            objective,
            optimiser,
        };
        compute(py, None, || m::sparse_model_from_parts(parts)).map(wrap)
    }

    /// The one-vs-rest model of `members` (binary models of this spec fitted on `n` rows,
    /// member c on class c of `classes` against the rest), as an in-process one-vs-rest fit
    /// writes it ([`pacgp::fit::multiclass::one_vs_rest_from_members`]).
    fn one_vs_rest_model(
        &self,
        members: Vec<PyRef<'_, Model>>,
        classes: Vec<String>,
        n: usize,
    ) -> PyResult<Model> {
        let (member, _) = self
            .spec
            .for_sample(n)
            .map_err(|e| spec_err(&e, &self.wording))?;
        let members = members.iter().map(|m| m.inner.clone()).collect();
        pacgp::fit::multiclass::one_vs_rest_from_members(
            &member,
            pacgp::data::ClassLabels { labels: classes },
            members,
        )
        .map(wrap)
        .map_err(|e| lib_err(e, &self.wording))
    }

    /// The model file of a sparse variational classifier at parameters `p`
    /// (`[θ…, vec(Z), m, vech(L_q)]`, θ on the grid) fitted on `n` rows: the objective's terms
    /// there `(data_term, KL, value)` as `svgp_combine` returns them, the inputs' scaler, the
    /// labels coded −1 and +1, and the optimiser's report
    /// ([`pacgp::fit::svgp::svgp_model_from_parts`]).
    #[pyo3(signature = (p, n, terms, x_mean, x_sd, labels, optimiser))]
    #[allow(clippy::too_many_arguments)]
    fn svgp_model(
        &self,
        py: Python<'_>,
        p: Vec<f64>,
        n: usize,
        terms: (f64, f64, f64),
        x_mean: Vec<f64>,
        x_sd: Vec<f64>,
        labels: (String, String),
        optimiser: Report,
    ) -> PyResult<Model> {
        let d = x_mean.len();
        check_scaler(&x_sd, d, 1.0)?;
        let plan = self.plan(n, d, 1.0)?;
        let ShardedFamily::Classifier { assembly, settings } = &plan.family else {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "svgp_model is the model of an svgp or pac-svgp fit",
            ));
        };
        let (kernel, z, q) = assembly
            .layout()
            .unpack(&plan.kernel, &p)
            .map_err(|e| lib_err(e, &self.wording))?;
        let (data_term, kl, value) = terms;
        let (spec, _) = self
            .spec
            .for_sample(n)
            .map_err(|e| spec_err(&e, &self.wording))?;
        let parts = SvgpModelParts {
            spec,
            settings: *settings,
            kernel,
            z,
            q,
            terms: SvgpTerms {
                data_term,
                kl,
                value,
            },
            x_scaler: Standardizer {
                mean: x_mean,
                sd: x_sd,
                constant: Vec::new(),
            },
            labels: crate::label_map(&labels.0, &labels.1),
            feature_names: (0..d).map(|j| format!("x{j}")).collect(),
            target_name: "y".into(),
            n,
            optimiser: report_from(optimiser)?,
        };
        compute(py, None, || svgp_model_from_parts(parts)).map(wrap)
    }
}

/// The fit spec of `method` with `options` (by the library's option names), checked; errors
/// worded by `wording`.
pub(crate) fn checked_spec(
    method: &str,
    options: &Bound<'_, PyDict>,
    wording: &PyWording,
) -> PyResult<CheckedFitSpec> {
    let method: MethodName = method
        .parse()
        .map_err(|e| spec_err(&SpecError::unparsable(SpecOption::Method, e), wording))?;
    fit_options(options, wording)?
        .check(method)
        .map_err(|e| spec_err(&e, wording))
}

/// The scalers' standard deviations: one positive, finite one per input, and the target's.
fn check_scaler(x_sd: &[f64], d: usize, y_sd: f64) -> PyResult<()> {
    if x_sd.len() != d || x_sd.iter().any(|s| !(*s > 0.0 && s.is_finite())) || !(y_sd > 0.0) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "the scalers need one positive, finite standard deviation per input and for the target",
        ));
    }
    Ok(())
}

/// Add the sharded fit's class and its start's functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<ShardedFitSpec>()?;
    inducing_start::register(module)
}
