//! The one fitting function: keyword options (by the library's option names) mapped into the
//! library's [`FitOptions`], checked by the library, fitted without the GIL. Which options
//! apply to which method, their words, ranges and defaults are the library's; a wrong option is
//! a `ValueError` in the caller's own parameter names.

use std::collections::HashMap;

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use pacgp::spec::values::BadValue;
use pacgp::spec::{FitOptions, MethodName, SpecError, SpecOption};

use pacgp::data::{ClassLabels, TrainingLabels};

use crate::errors::{lib_err, spec_err, PyWording};
use crate::{compute_with, label_map, to_dataset, to_py_err, wrap, Model};

/// One option's value from Python: `None` is "not given"; words go through the library's
/// parser (`FromStr`), numbers and flags are taken as they are.
struct Reader<'a> {
    wording: &'a PyWording,
}

impl Reader<'_> {
    fn bad(&self, option: SpecOption, given: String, allowed: &str) -> PyErr {
        let e = SpecError::unparsable(
            option,
            BadValue {
                given,
                allowed: allowed.into(),
            },
        );
        spec_err(&e, self.wording)
    }

    /// A word of the library's vocabulary.
    fn word<T: std::str::FromStr<Err = BadValue>>(
        &self,
        option: SpecOption,
        v: &Bound<'_, PyAny>,
    ) -> PyResult<Option<T>> {
        if v.is_none() {
            return Ok(None);
        }
        let text: String = v
            .extract()
            .map_err(|_| self.bad(option, v.to_string(), "a string"))?;
        text.parse::<T>()
            .map(Some)
            .map_err(|e| spec_err(&SpecError::unparsable(option, e), self.wording))
    }

    /// A word, or a number in its place (`prior_scale=0.25` for `'0.25'`).
    fn word_or_number<T: std::str::FromStr<Err = BadValue>>(
        &self,
        option: SpecOption,
        v: &Bound<'_, PyAny>,
    ) -> PyResult<Option<T>> {
        match v.extract::<f64>() {
            Ok(x) if !v.is_instance_of::<pyo3::types::PyBool>() => x
                .to_string()
                .parse::<T>()
                .map(Some)
                .map_err(|e| spec_err(&SpecError::unparsable(option, e), self.wording)),
            _ => self.word(option, v),
        }
    }

    fn number<T: for<'a, 'py> FromPyObject<'a, 'py>>(
        &self,
        option: SpecOption,
        v: &Bound<'_, PyAny>,
        what: &str,
    ) -> PyResult<Option<T>> {
        if v.is_none() {
            return Ok(None);
        }
        if v.is_instance_of::<pyo3::types::PyBool>() {
            return Err(self.bad(option, v.to_string(), what));
        }
        v.extract::<T>()
            .map(Some)
            .map_err(|_| self.bad(option, v.to_string(), what))
    }

    /// A list of numbers (a sequence of floats; Python passes numpy arrays as lists).
    fn numbers(&self, option: SpecOption, v: &Bound<'_, PyAny>) -> PyResult<Option<Vec<f64>>> {
        if v.is_none() {
            return Ok(None);
        }
        v.extract::<Vec<f64>>()
            .map(Some)
            .map_err(|_| self.bad(option, v.to_string(), "a list of numbers"))
    }

    fn flag(&self, option: SpecOption, v: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        if v.is_none() {
            return Ok(None);
        }
        v.extract::<bool>()
            .map(Some)
            .map_err(|_| self.bad(option, v.to_string(), "True or False"))
    }
}

/// The library's fit options from a dict keyed by the library's option names.
pub(crate) fn fit_options(
    options: &Bound<'_, PyDict>,
    wording: &PyWording,
) -> PyResult<FitOptions> {
    use SpecOption as O;
    let r = Reader { wording };
    let mut o = FitOptions::default();
    for (key, v) in options.iter() {
        let key: String = key.extract()?;
        let option = O::ALL
            .into_iter()
            .find(|opt| opt.name() == key)
            .ok_or_else(|| PyValueError::new_err(format!("unknown fit option '{key}'")))?;
        let count = "a whole number";
        let real = "a number";
        match option {
            O::Method => {
                return Err(PyValueError::new_err(
                    "the method is fit()'s own argument, not an option",
                ))
            }
            O::Kernel => {
                o.kernel = match v.is_none() {
                    true => None,
                    false => Some(v.extract::<String>().map_err(|_| {
                        r.bad(option, v.to_string(), "a kernel specification string")
                    })?),
                }
            }
            O::Epsilon => o.epsilon = r.number(option, &v, real)?,
            O::Delta => o.delta = r.number(option, &v, real)?,
            O::Seed => o.seed = r.number(option, &v, "a non-negative whole number")?,
            O::NoiseInit => o.noise_init = r.number(option, &v, real)?,
            O::Restarts => o.restarts = r.number(option, &v, count)?,
            O::Snap => o.snap = r.flag(option, &v)?,
            O::Inducing => o.inducing = r.number(option, &v, count)?,
            O::InducingInit => o.inducing_init = r.word(option, &v)?,
            O::Pretrain => o.pretrain = r.number(option, &v, count)?,
            O::MaxIter => o.max_iter = r.number(option, &v, count)?,
            O::BatchSize => o.batch_size = r.number(option, &v, count)?,
            O::Likelihood => o.likelihood = r.word(option, &v)?,
            O::Select => o.select = r.word(option, &v)?,
            O::ActiveSet => o.active_set = r.number(option, &v, count)?,
            O::Kappa => o.kappa = r.number(option, &v, real)?,
            O::InputNoise => o.input_noise = r.number(option, &v, real)?,
            O::Slack => o.slack = r.word(option, &v)?,
            O::C => o.c = r.number(option, &v, real)?,
            O::Lengthscale => o.lengthscale = r.number(option, &v, real)?,
            O::Bias => o.bias = r.flag(option, &v)?,
            O::Solver => o.solver = r.word(option, &v)?,
            O::Prior => o.prior = r.word(option, &v)?,
            O::HyperPrior => o.hyper_prior = r.word(option, &v)?,
            O::Xi => o.xi = r.word(option, &v)?,
            O::Bound => o.bound = r.word(option, &v)?,
            O::PriorScale => o.prior_scale = r.word_or_number(option, &v)?,
            O::PriorKernel => o.prior_kernel = r.word(option, &v)?,
            O::BothDirections => o.both_directions = r.flag(option, &v)?.filter(|b| *b),
            O::Predictor => o.predictor = r.word(option, &v)?,
            O::Intervals => o.intervals = r.word(option, &v)?,
            O::IntervalScore => o.interval_score = r.word(option, &v)?,
            O::MultiClass => o.multiclass = r.word(option, &v)?,
            O::CertifyHoldout => o.certify_holdout = r.number(option, &v, real)?,
            O::Noise => o.noise = r.number(option, &v, real)?,
            O::Alpha => o.alpha = r.numbers(option, &v)?,
            O::KernelParams => o.kernel_params = r.numbers(option, &v)?,
            O::NormalizeY => o.normalize_y = r.flag(option, &v)?,
            O::SharedKernel => o.shared_kernel = r.flag(option, &v)?,
        }
    }
    Ok(o)
}

/// Fit `method` on `(x, y)` with `options` (a dict by the library's option names; `None`
/// values are "not given"). Binary classifiers take `y` coded −1/+1 and `labels = (negative,
/// positive)`; multi-class fits take `y` as class indices 0..K and `classes` (the K labels in
/// that order; more than two make a binary classifier one-vs-rest). `names` maps library
/// option names to the caller's, for error messages. `time_limit` (seconds): stop optimising
/// then, keep the best hyperparameters found so far and mark the model as stopped early
/// (`report.stopped_early`); its certificate is exact for the hyperparameters reached.
#[pyfunction]
#[pyo3(signature = (x, y, method, options, *, labels=None, classes=None, names=None, n_threads=None, time_limit=None))]
#[allow(clippy::too_many_arguments)]
fn fit(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    method: &str,
    options: &Bound<'_, PyDict>,
    labels: Option<(String, String)>,
    classes: Option<Vec<String>>,
    names: Option<HashMap<String, String>>,
    n_threads: Option<i64>,
    time_limit: Option<f64>,
) -> PyResult<Model> {
    let (wording, stop, method, options) = fit_request(method, options, names, time_limit)?;
    // The spec is checked before the data, except where ε's default needs the targets.
    if options.epsilon.is_some() || !method.trains_on_epsilon() {
        options.check(method).map_err(|e| spec_err(&e, &wording))?;
    }
    let train = to_dataset(&x, &y)?;
    // A bound-trained regressor given no ε takes the library's default from the targets.
    let (options, epsilon_note) = options
        .with_default_epsilon(method, &train)
        .map_err(|e| lib_err(e, &wording))?;
    let spec = options.check(method).map_err(|e| spec_err(&e, &wording))?;
    let labels = match (labels, classes) {
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err(
                "give labels (two classes coded -1/+1) or classes (class indices), not both",
            ))
        }
        (Some((n, p)), None) => TrainingLabels::Binary(label_map(&n, &p)),
        (None, Some(labels)) => {
            let classes = ClassLabels { labels };
            classes.check().map_err(to_py_err)?;
            TrainingLabels::Classes(classes)
        }
        (None, None) => TrainingLabels::None,
    };
    warn_if_long(py, &spec, &train, labels.classes(), n_threads)?;
    compute_with(
        py,
        n_threads,
        || {
            let mut model = pacgp::fit::fit_until(
                &spec,
                &train,
                labels,
                pacgp::memory::MemoryLimit::Available,
                &stop,
            )?;
            model.report.notes.extend(epsilon_note);
            Ok(model)
        },
        |e| lib_err(e, &wording),
    )
    .map(wrap)
}

/// A fit's request in the library's terms: the wording of its errors, its stop signal, the
/// method and its options.
fn fit_request(
    method: &str,
    options: &Bound<'_, PyDict>,
    names: Option<HashMap<String, String>>,
    time_limit: Option<f64>,
) -> PyResult<(PyWording, pacgp::optim::StopSignal, MethodName, FitOptions)> {
    let wording = PyWording::new(names);
    let stop = stop_signal(time_limit)?;
    let method: MethodName = method
        .parse()
        .map_err(|e| spec_err(&SpecError::unparsable(SpecOption::Method, e), &wording))?;
    let options = fit_options(options, &wording)?;
    Ok((wording, stop, method, options))
}

/// Fit `method` on every column of `y` (N × K, K ≥ 2 real targets named `y0`, `y1`, …) at
/// the inputs `x`: one regressor per output ([`pacgp::fit::fit_outputs_until`]), as `pacgp
/// fit --target a,b` fits; `options`, `names`, `n_threads` and `time_limit` as in [`fit`]. A
/// bound-trained method needs its ε given (one ε in every output's units).
#[pyfunction]
#[pyo3(signature = (x, y, method, options, *, names=None, n_threads=None, time_limit=None))]
#[allow(clippy::too_many_arguments)]
fn fit_outputs(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray2<'_, f64>,
    method: &str,
    options: &Bound<'_, PyDict>,
    names: Option<HashMap<String, String>>,
    n_threads: Option<i64>,
    time_limit: Option<f64>,
) -> PyResult<Model> {
    let (wording, stop, method, options) = fit_request(method, options, names, time_limit)?;
    if method.trains_on_epsilon() && options.epsilon.is_none() {
        return Err(PyValueError::new_err(format!(
            "{method} trains on the ε-band loss: with several targets give its epsilon (one ε, in every target's units)"
        )));
    }
    let spec = options.check(method).map_err(|e| spec_err(&e, &wording))?;
    let outputs = crate::to_outputs(&x, &y)?;
    warn_if_long(py, &spec, &outputs.samples()[0], 2, n_threads)?;
    compute_with(
        py,
        n_threads,
        || {
            pacgp::fit::fit_outputs_until(
                &spec,
                &outputs,
                pacgp::memory::MemoryLimit::Available,
                &stop,
            )
        },
        |e| lib_err(e, &wording),
    )
    .map(wrap)
}

/// The CLI's `estimate:` line as a `UserWarning` before the fit starts: the library's estimate
/// of its time and memory ([`pacgp::cost::estimate`]) where it is longer than
/// [`pacgp::cost::LONG_FIT_SECONDS`] on the threads it will run on. A thread count or spec the
/// fit itself refuses gives no warning here (the fit says what is wrong).
fn warn_if_long(
    py: Python<'_>,
    spec: &pacgp::spec::CheckedFitSpec,
    train: &pacgp::data::Dataset,
    classes: usize,
    n_threads: Option<i64>,
) -> PyResult<()> {
    // Without a count the fit runs on the global pool, whatever size it was given.
    let threads = match n_threads {
        None => rayon::current_num_threads(),
        Some(n) => match pacgp::threads::resolve(n) {
            Ok(n) => n,
            Err(_) => return Ok(()),
        },
    };
    let Ok(estimate) = pacgp::cost::estimate(spec, train.n(), train.d(), classes) else {
        return Ok(());
    };
    if !estimate.is_long(threads) {
        return Ok(());
    }
    let message = format!(
        "fitting {} on {} points: {}",
        spec.method_name(),
        train.n(),
        estimate.sentence(threads)
    );
    let message =
        std::ffi::CString::new(message).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    PyErr::warn(py, category.as_any(), &message, 1)
}

/// The stop signal of `time_limit` seconds from now (`None`: none); a negative, NaN or
/// infinite limit is a ValueError.
fn stop_signal(time_limit: Option<f64>) -> PyResult<pacgp::optim::StopSignal> {
    let stop = pacgp::optim::StopSignal::never();
    let Some(seconds) = time_limit else {
        return Ok(stop);
    };
    if !(seconds >= 0.0) {
        return Err(PyValueError::new_err(format!(
            "time_limit must be a number of seconds ≥ 0, got {seconds}"
        )));
    }
    std::time::Duration::try_from_secs_f64(seconds)
        .map(|limit| stop.with_time_limit(limit))
        .map_err(|_| PyValueError::new_err(format!("time_limit must be finite, got {seconds}")))
}

/// The words a method and every word-valued option take, for the estimators' docs and checks:
/// `{option: [(word, help), ...]}`.
#[pyfunction]
fn option_words() -> HashMap<&'static str, Vec<(&'static str, &'static str)>> {
    use pacgp::spec::*;
    fn of<T: Named>() -> Vec<(&'static str, &'static str)> {
        T::NAMES.to_vec()
    }
    HashMap::from([
        ("method", of::<MethodName>()),
        ("likelihood", of::<LikelihoodName>()),
        ("select", of::<Selection>()),
        (
            "inducing_init",
            of::<pacgp::regression::inducing_init::InducingInit>(),
        ),
        ("slack", of::<SlackKind>()),
        ("solver", of::<pacgp::svm::SvmSolver>()),
        ("hyper_prior", of::<HyperPriorName>()),
        ("xi", of::<Xi>()),
        ("bound", of::<BoundName>()),
        ("prior_kernel", of::<PriorKernel>()),
        ("predictor", of::<pacgp::certificate::GibbsPredictor>()),
        ("interval_score", of::<IntervalScore>()),
        ("intervals", pacgp::spec::values::INTERVAL_METHODS.to_vec()),
        ("multiclass", of::<MultiClass>()),
    ])
}

/// Add the fitting function to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(fit, module)?)?;
    module.add_function(wrap_pyfunction!(fit_outputs, module)?)?;
    module.add_function(wrap_pyfunction!(option_words, module)?)?;
    Ok(())
}
