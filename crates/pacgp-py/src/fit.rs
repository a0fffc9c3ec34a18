//! One Python function per library fitting entry point: each builds the entry point's options
//! struct from keyword arguments (the CLI's defaults), fits without the GIL and returns a
//! [`Model`]. The models are the ones `pacgp fit` writes for the same data and options.

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use pacgp::bounds::{BoundKind, CatoniLambda, ConfidenceTerm};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::model::{self as m, FittedModel};
use pacgp::objective::gpc_split::{SplitPriorConfig, PRIOR_SCALES};
use pacgp::optim::Restarts;
use pacgp::prior::split::SplitFraction;
use pacgp::prior::{BoundLevers, HyperPrior};
use pacgp::regression::exact::MlConfig;
use pacgp::regression::sparse::{InducingInit, SparseMethod};
use pacgp::{Error, Result};

use crate::{compute_threads, label_map, to_dataset, to_py_err, wrap, Model};

/// A kernel from its command-line specification (`se-ard`, `matern52+linear`, ...).
fn kernel(spec: &str, d: usize) -> PyResult<Kernel> {
    Kernel::from_spec(spec, d).map_err(to_py_err)
}

/// `kmeans`, `subset` or `greedy`: how a sparse model's inducing inputs start.
fn inducing_init(name: &str) -> PyResult<InducingInit> {
    match name {
        "kmeans" => Ok(InducingInit::KMeans),
        "subset" => Ok(InducingInit::Subset),
        "greedy" => Ok(InducingInit::Greedy),
        other => Err(to_py_err(Error::InvalidSpec {
            spec: other.into(),
            reason: "the inducing-input initialisation is 'kmeans', 'subset' or 'greedy'".into(),
        })),
    }
}

/// `kl` or `sqrt`: which PAC-Bayes bound a PAC method minimises.
fn bound_kind(name: &str) -> PyResult<BoundKind> {
    match name {
        "kl" => Ok(BoundKind::Kl),
        "sqrt" => Ok(BoundKind::Sqrt),
        other => Err(to_py_err(Error::InvalidSpec {
            spec: other.into(),
            reason: "the bound is 'kl' or 'sqrt'".into(),
        })),
    }
}

/// The tighter-bounds levers (issue 15) as the CLI's `--xi` (`maurer` | `sharp`) and
/// `--hyper-prior` (`uniform` | `gaussian`) build them.
fn levers(xi: &str, hyper_prior: Option<&str>) -> PyResult<BoundLevers> {
    let term = match xi {
        "maurer" => ConfidenceTerm::Maurer,
        "sharp" => ConfidenceTerm::Sharp,
        other => {
            return Err(to_py_err(Error::InvalidSpec {
                spec: other.into(),
                reason: "xi is 'maurer' or 'sharp'".into(),
            }))
        }
    };
    let hyper_prior = match hyper_prior {
        None => None,
        Some("gaussian") => Some(HyperPrior::gaussian()),
        Some("uniform") => Some(HyperPrior::uniform()),
        Some(other) => {
            return Err(to_py_err(Error::InvalidSpec {
                spec: other.into(),
                reason: "hyper_prior is 'gaussian' or 'uniform'".into(),
            }))
        }
    };
    Ok(BoundLevers { term, hyper_prior })
}

/// The CLI's `--prior split:F` (F in (0, 1)) or `split:auto` (the menu 0.3, 0.5, 0.7).
fn split_prior(prior: Option<&str>) -> PyResult<Option<SplitFraction>> {
    let Some(text) = prior else { return Ok(None) };
    let bad = |reason: &str| {
        to_py_err(Error::InvalidSpec {
            spec: text.into(),
            reason: reason.into(),
        })
    };
    match text.strip_prefix("split:") {
        Some("auto") => Ok(Some(SplitFraction::Menu)),
        Some(f) => match f.parse::<f64>() {
            Ok(v) if v > 0.0 && v < 1.0 => Ok(Some(SplitFraction::Fixed(v))),
            _ => Err(bad("the split fraction F of split:F lies in (0, 1)")),
        },
        None => Err(bad("the prior is 'split:F' (F in (0, 1)) or 'split:auto'")),
    }
}

/// PAC-GPC's options as `pacgp fit --method pac-gpc` builds them: probit (or `logistic`),
/// θ among the nine candidates or, with `kernel_spec`, optimised on the grid; no `select`.
fn pac_gpc_options(
    likelihood: Option<&str>,
    select: &str,
    kernel_spec: Option<&str>,
    delta: f64,
    d: usize,
) -> PyResult<m::PacGpcOptions> {
    if select != "bound" {
        return Err(to_py_err(Error::Unsupported(
            "select does not apply to pac-gpc: it chooses among nine fixed SE kernels, or optimises θ from kernel on the grid".into(),
        )));
    }
    let mut opts = m::PacGpcOptions::new(delta, ConfidenceTerm::Maurer);
    match likelihood {
        None | Some("probit") => {}
        Some("logistic") => opts.likelihood = Likelihood::Logistic,
        Some(other) => {
            return Err(to_py_err(Error::InvalidSpec {
                spec: other.into(),
                reason: "the likelihood is 'probit' or 'logistic'".into(),
            }))
        }
    }
    opts.kernel = kernel_spec.map(|s| kernel(s, d)).transpose()?;
    Ok(opts)
}

/// The classifier split prior's arguments (`prior`, `bound`, `prior_scale`, `prior_kernel`,
/// `both_directions`), as `pacgp fit --prior split:… --bound kl|catoni --prior-scale auto|t
/// --prior-kernel kernel|auto --both-directions` takes them.
struct SplitClassifierArgs<'a> {
    fraction: Option<SplitFraction>,
    bound: &'a str,
    prior_scale: Option<Vec<f64>>,
    prior_kernel: Option<&'a str>,
    both_directions: bool,
}

/// `prior_kernel`: `"kernel"` (the `kernel` structure only) or `"auto"` (SE iso beside it,
/// chosen on a nested split of part A): the other structures of `P_A`.
fn alt_prior_kernels(name: &str) -> PyResult<Vec<Kernel>> {
    match name {
        "kernel" => Ok(Vec::new()),
        "auto" => Ok(vec![Kernel::se_iso(1.0, 1.0)]),
        other => Err(to_py_err(Error::InvalidSpec {
            spec: other.into(),
            reason: "prior_kernel is 'kernel' or 'auto'".into(),
        })),
    }
}

/// `prior_scale`: `"auto"` (the menu of [`PRIOR_SCALES`]) or a number t > 0.
fn prior_scales(v: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    if let Ok(text) = v.extract::<String>() {
        return match text.as_str() {
            "auto" => Ok(PRIOR_SCALES.to_vec()),
            _ => Err(to_py_err(Error::InvalidSpec {
                spec: text,
                reason: "prior_scale is 'auto' or a positive number".into(),
            })),
        };
    }
    let t: f64 = v.extract()?;
    if !(t > 0.0 && t.is_finite()) {
        return Err(to_py_err(Error::InvalidParameter {
            name: "prior_scale",
            value: t,
            reason: "must be positive and finite (or 'auto')",
        }));
    }
    Ok(vec![t])
}

impl SplitClassifierArgs<'_> {
    /// The split prior's options, `None` without a `prior`; `bound` and `prior_scale` only
    /// with it, and then for laplace or pac-gpc with the probit and θ by ML-II on part A.
    #[allow(clippy::too_many_arguments)]
    fn options(
        &self,
        method: &str,
        likelihood: Option<&str>,
        select: &str,
        kernel_spec: Option<&str>,
        delta: f64,
        seed: u64,
        d: usize,
    ) -> PyResult<Option<m::SplitPriorOptions>> {
        let catoni = match self.bound {
            "kl" => false,
            "catoni" => true,
            other => {
                return Err(to_py_err(Error::InvalidSpec {
                    spec: other.into(),
                    reason: "the split prior's bound is 'kl' or 'catoni'".into(),
                }))
            }
        };
        let Some(fraction) = self.fraction else {
            if catoni
                || self.prior_scale.is_some()
                || self.prior_kernel.is_some()
                || self.both_directions
            {
                return Err(to_py_err(Error::Unsupported(
                    "bound='catoni', prior_scale, prior_kernel and both_directions apply to the split prior only (prior='split:F' or 'split:auto')".into(),
                )));
            }
            return Ok(None);
        };
        if !matches!(method, "laplace" | "pac-gpc") {
            return Err(to_py_err(Error::Unsupported(format!(
                "the split prior applies to laplace and pac-gpc, not to {method}"
            ))));
        }
        if select != "bound" || !matches!(likelihood, None | Some("probit")) {
            return Err(to_py_err(Error::Unsupported(
                "the split prior fits θ by ML-II on part A with the probit; select and likelihood do not apply".into(),
            )));
        }
        let mut config = SplitPriorConfig::new(fraction, seed);
        config.optimise_sites = method == "pac-gpc";
        config.bound.delta = delta;
        if catoni {
            config.catoni = Some(CatoniLambda::FromPartA);
        }
        if let Some(scales) = &self.prior_scale {
            config.prior_scales = scales.clone();
        }
        if let Some(name) = self.prior_kernel {
            config.alt_kernels = alt_prior_kernels(name)?;
        }
        config.both_directions = self.both_directions;
        Ok(Some(m::SplitPriorOptions {
            likelihood: Likelihood::probit(),
            kernel: kernel(kernel_spec.unwrap_or("se-ard"), d)?,
            predictor: m::GibbsPredictor::Latent,
            config,
        }))
    }
}

/// Record the fit's seed in the model, as `pacgp fit --seed` does.
fn seeded(model: Result<FittedModel>, seed: u64) -> Result<FittedModel> {
    model.map(|mut fitted| {
        fitted.seed = seed;
        fitted
    })
}

/// Exact GP regression by ML-II ([`m::fit_gpr`]); θ snapped onto the wide grid unless `snap`
/// is false (then no certificate holds).
#[pyfunction]
#[pyo3(signature = (x, y, *, kernel_spec="se-ard", noise_init=0.1, restarts=0, seed=0, epsilon=None, snap=true, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn fit_gpr(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    kernel_spec: &str,
    noise_init: f64,
    restarts: usize,
    seed: u64,
    epsilon: Option<f64>,
    snap: bool,
    n_threads: Option<i64>,
) -> PyResult<Model> {
    let train = to_dataset(&x, &y)?;
    let opts = m::GprOptions {
        kernel: Some(kernel(kernel_spec, train.d())?),
        noise_init,
        ml: MlConfig {
            restarts: Restarts {
                count: restarts,
                seed,
                ..Default::default()
            },
            ..Default::default()
        },
        epsilon,
        snap_to_grid: snap,
        ..Default::default()
    };
    compute_threads(py, n_threads, || seeded(m::fit_gpr(&train, &opts), seed)).map(wrap)
}

/// Sparse GP regression, VFE / FITC / DTC ([`m::fit_sparse_model`]) with `m_inducing` inducing
/// inputs initialised by seeded k-means.
#[pyfunction]
#[pyo3(signature = (x, y, *, method="vfe", m_inducing=100, kernel_spec="se-ard", seed=0, epsilon=None, init="kmeans", n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn fit_sparse(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    method: &str,
    m_inducing: usize,
    kernel_spec: &str,
    seed: u64,
    epsilon: Option<f64>,
    init: &str,
    n_threads: Option<i64>,
) -> PyResult<Model> {
    let train = to_dataset(&x, &y)?;
    let method = match method {
        "vfe" => SparseMethod::Vfe,
        "fitc" => SparseMethod::Fitc,
        "dtc" => SparseMethod::Dtc,
        other => {
            return Err(to_py_err(Error::InvalidSpec {
                spec: other.into(),
                reason: "the sparse method is 'vfe', 'fitc' or 'dtc'".into(),
            }))
        }
    };
    let opts = m::SparseOptions {
        kernel: Some(kernel(kernel_spec, train.d())?),
        noise_init: 0.1,
        m: m_inducing,
        method,
        seed,
        init: inducing_init(init)?,
        epsilon,
    };
    compute_threads(py, n_threads, || {
        seeded(m::fit_sparse_model(&train, &opts), seed)
    })
    .map(wrap)
}

/// Full PAC-GP (seed 004): minimise the `bound` ("kl" or "sqrt") on the ε-band risk over θ
/// and σ² ([`m::fit_pac_gp_model`]); ε in the target's units. The issue-15 levers as the CLI's
/// `--prior` (`split:F` | `split:auto`, kl only, seeded by `seed`), `--hyper-prior`, `--xi`.
#[pyfunction]
#[pyo3(signature = (x, y, *, epsilon, delta=0.01, bound="kl", kernel_spec="se-ard", prior=None, hyper_prior=None, xi="maurer", seed=0, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn fit_pac_gp(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    epsilon: f64,
    delta: f64,
    bound: &str,
    kernel_spec: &str,
    prior: Option<&str>,
    hyper_prior: Option<&str>,
    xi: &str,
    seed: u64,
    n_threads: Option<i64>,
) -> PyResult<Model> {
    let train = to_dataset(&x, &y)?;
    let opts = m::PacGpOptions {
        kernel: Some(kernel(kernel_spec, train.d())?),
        noise_init: 1.0,
        epsilon,
        delta,
        kind: bound_kind(bound)?,
        levers: levers(xi, hyper_prior)?,
        split: split_prior(prior)?,
        seed,
    };
    compute_threads(py, n_threads, || {
        seeded(m::fit_pac_gp_model(&train, &opts), seed)
    })
    .map(wrap)
}

/// Sparse PAC-GP (seed 004, FITC form) with `m_inducing` inducing inputs
/// ([`m::fit_pac_sgp_model`]); the levers `hyper_prior` and `xi` as for [`fit_pac_gp`].
#[pyfunction]
#[pyo3(signature = (x, y, *, epsilon, m_inducing=100, delta=0.01, bound="kl", kernel_spec="se-ard", seed=0, init="kmeans", hyper_prior=None, xi="maurer", n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn fit_pac_sgp(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    epsilon: f64,
    m_inducing: usize,
    delta: f64,
    bound: &str,
    kernel_spec: &str,
    seed: u64,
    init: &str,
    hyper_prior: Option<&str>,
    xi: &str,
    n_threads: Option<i64>,
) -> PyResult<Model> {
    let train = to_dataset(&x, &y)?;
    let opts = m::PacSgpOptions {
        kernel: Some(kernel(kernel_spec, train.d())?),
        m: m_inducing,
        epsilon,
        delta,
        kind: bound_kind(bound)?,
        alpha_s: 1.0,
        seed,
        init: inducing_init(init)?,
        levers: levers(xi, hyper_prior)?,
    };
    compute_threads(py, n_threads, || {
        seeded(m::fit_pac_sgp_model(&train, &opts), seed)
    })
    .map(wrap)
}

/// Zhang's greedy sparse regression (seed 002) as a certified DTC model with `k` basis points
/// ([`m::fit_greedy_sparse_model`]).
#[pyfunction]
#[pyo3(signature = (x, y, *, k=100, kernel_spec="se-ard", seed=0, epsilon=None, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn fit_greedy_sparse(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    k: usize,
    kernel_spec: &str,
    seed: u64,
    epsilon: Option<f64>,
    n_threads: Option<i64>,
) -> PyResult<Model> {
    let train = to_dataset(&x, &y)?;
    let opts = m::GreedySparseOptions {
        kernel: Some(kernel(kernel_spec, train.d())?),
        k,
        seed,
        epsilon,
    };
    compute_threads(py, n_threads, || {
        seeded(m::fit_greedy_sparse_model(&train, &opts), seed)
    })
    .map(wrap)
}

/// A GP classifier ([`m::fit_classifier`]); `y` is coded −1 (`negative`) / +1 (`positive`).
/// `select` is "bound" (nine fixed kernels, penalty ln 9) or "ml2" (ML-II from `kernel_spec`,
/// snapped onto the PAC grid).
#[pyfunction]
#[pyo3(signature = (x, y, negative, positive, *, method="laplace", likelihood=None, basis=100, kappa=None, input_noise=None, select="bound", kernel_spec=None, delta=0.01, seed=0, prior=None, bound="kl", prior_scale=None, prior_kernel=None, both_directions=false, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn fit_classifier(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    negative: &str,
    positive: &str,
    method: &str,
    likelihood: Option<&str>,
    basis: usize,
    kappa: Option<f64>,
    input_noise: Option<f64>,
    select: &str,
    kernel_spec: Option<&str>,
    delta: f64,
    seed: u64,
    prior: Option<&str>,
    bound: &str,
    prior_scale: Option<&Bound<'_, PyAny>>,
    prior_kernel: Option<&str>,
    both_directions: bool,
    n_threads: Option<i64>,
) -> PyResult<Model> {
    let train = to_dataset(&x, &y)?;
    let labels = label_map(negative, positive);
    let split = SplitClassifierArgs {
        fraction: split_prior(prior)?,
        bound,
        prior_scale: prior_scale.map(prior_scales).transpose()?,
        prior_kernel,
        both_directions,
    };
    if let Some(opts) = split.options(
        method,
        likelihood,
        select,
        kernel_spec,
        delta,
        seed,
        train.d(),
    )? {
        return compute_threads(py, n_threads, || {
            m::fit_split_prior_model(&train, labels, &opts)
        })
        .map(wrap);
    }
    if method == "pac-gpc" {
        let opts = pac_gpc_options(likelihood, select, kernel_spec, delta, train.d())?;
        return compute_threads(py, n_threads, || {
            seeded(m::fit_pac_gpc_model(&train, labels, &opts), seed)
        })
        .map(wrap);
    }
    let (inference, likelihood) =
        m::classifier_setup(method, likelihood, basis, kappa, input_noise, seed)
            .map_err(to_py_err)?;
    let selection = match (select, kernel_spec) {
        ("bound", None) => m::HyperSelection::BoundOverCandidates,
        ("bound", Some(_)) => {
            return Err(to_py_err(Error::Unsupported(
                "a kernel applies to classifiers only with select='ml2' (select='bound' chooses among nine fixed SE kernels)".into(),
            )))
        }
        ("ml2", spec) => m::HyperSelection::Ml2 {
            kernel: kernel(spec.unwrap_or("se-ard"), train.d())?,
        },
        (other, _) => {
            return Err(to_py_err(Error::InvalidSpec {
                spec: other.into(),
                reason: "the selection is 'bound' or 'ml2'".into(),
            }))
        }
    };
    let opts = m::ClassifierOptions {
        method: inference,
        likelihood,
        delta,
        term: ConfidenceTerm::Maurer,
        selection,
        predictor: m::GibbsPredictor::Latent,
    };
    compute_threads(py, n_threads, || {
        seeded(m::fit_classifier(&train, labels, &opts), seed)
    })
    .map(wrap)
}

/// The certified SVM of seed 001 ([`m::fit_svm_model`]); `y` coded −1/+1 as for
/// [`fit_classifier`]. Kernel and slack are chosen by the linear-response LOO over the menus of
/// [`m::fit_svm::svm_candidates`] unless fixed.
#[pyfunction]
#[pyo3(signature = (x, y, negative, positive, *, kernel_spec=None, lengthscale=None, slack="linear", c=None, input_noise=None, solver="smo", bias=false, delta=0.01, n_threads=None))]
#[allow(clippy::too_many_arguments)]
fn fit_svm(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    y: PyReadonlyArray1<'_, f64>,
    negative: &str,
    positive: &str,
    kernel_spec: Option<&str>,
    lengthscale: Option<f64>,
    slack: &str,
    c: Option<f64>,
    input_noise: Option<f64>,
    solver: &str,
    bias: bool,
    delta: f64,
    n_threads: Option<i64>,
) -> PyResult<Model> {
    use pacgp::svm::SvmSolver;
    let train = to_dataset(&x, &y)?;
    let quadratic = match slack {
        "linear" => false,
        "quadratic" => true,
        other => {
            return Err(to_py_err(Error::InvalidSpec {
                spec: other.into(),
                reason: "the slack is 'linear' or 'quadratic'".into(),
            }))
        }
    };
    let solver = match solver {
        "smo" => SvmSolver::Smo,
        "adatron" => SvmSolver::Adatron,
        other => {
            return Err(to_py_err(Error::InvalidSpec {
                spec: other.into(),
                reason: "the solver is 'smo' or 'adatron'".into(),
            }))
        }
    };
    let fixed = kernel_spec.map(|s| kernel(s, train.d())).transpose()?;
    let (kernels, slacks) =
        m::fit_svm::svm_candidates(train.d(), fixed, lengthscale, quadratic, c, input_noise);
    let opts = m::SvmOptions {
        kernels,
        slacks,
        solver,
        bias,
        delta,
        term: ConfidenceTerm::Maurer,
    };
    let labels = label_map(negative, positive);
    compute_threads(py, n_threads, || m::fit_svm_model(&train, labels, &opts)).map(wrap)
}

/// Add the fitting functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(fit_gpr, module)?)?;
    module.add_function(wrap_pyfunction!(fit_sparse, module)?)?;
    module.add_function(wrap_pyfunction!(fit_pac_gp, module)?)?;
    module.add_function(wrap_pyfunction!(fit_pac_sgp, module)?)?;
    module.add_function(wrap_pyfunction!(fit_greedy_sparse, module)?)?;
    module.add_function(wrap_pyfunction!(fit_classifier, module)?)?;
    module.add_function(wrap_pyfunction!(fit_svm, module)?)?;
    Ok(())
}
