//! Approximate inference for binary GP classification. Every method returns the shared
//! [`crate::posterior::GaussianPosterior`] (site form over the training inputs) plus a
//! [`ConvergenceReport`], so prediction, `KL(Q‖P)`, Gibbs error and the PAC-Bayes certificate
//! come for free. [`softmax`] is the multi-class Laplace approximation, whose posterior
//! couples the classes.
//!
//! Each binary method's module is its home: it implements [`ClassifierInference`] (its fit,
//! the leave-one-out it has, the warm start of a refit without one row, ML-II where it has an
//! evidence), and [`InferenceMethod`] carries any of them to the leave-one-out, the refits and
//! the fit's hyperparameter choice, which never ask which method it is.

use std::sync::Arc;

use faer::MatRef;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::posterior::GaussianPosterior;

pub mod evidence;
pub mod softmax;

mod settings;
pub use settings::{ActiveSetSlot, FitWork, InferenceOptions, InferenceSettings};
pub use settings::{LikelihoodChoice, NamedInference};

// One line per method: its home module and its settings' variant.
settings::inference_methods! {
    /// Laplace (GPML Alg. 3.1).
    pub mod laplace: Laplace(LaplaceSpec),
    /// Expectation propagation (probit).
    pub mod ep: Ep(EpSpec),
    /// Naive mean field with flip noise κ and input noise v (Opper & Winther).
    pub mod mean_field: MeanField(MeanFieldSpec),
    /// Informative vector machine (probit).
    pub mod ivm: Ivm(IvmSpec),
    /// Sparse online GP (probit).
    pub mod sogp: Sogp(SogpSpec),
    #[doc = "Test only: the prior as the posterior."] #[cfg(test)] mod prior_only: PriorOnly(PriorOnlySpec),
}

/// How an iterative inference method ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConvergenceStatus {
    /// The stopping tolerance was met.
    Converged,
    /// The iteration budget ran out first.
    MaxIterations,
}

/// Convergence and numerical events of one inference run, returned as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConvergenceReport {
    /// How it ended.
    pub status: ConvergenceStatus,
    /// Iterations (Newton steps or EP sweeps).
    pub iterations: usize,
    /// Final change of the quantity the stopping rule tests.
    pub final_change: f64,
    /// Largest Cholesky jitter that had to be added (0 if none).
    pub jitter_used: f64,
    /// Numerical events, e.g. site precisions that were clipped.
    pub notes: Vec<String>,
}

/// A fitted GP classifier.
#[derive(Clone, Debug)]
pub struct ClassifierFit {
    /// The Gaussian posterior over the latent function.
    pub posterior: GaussianPosterior,
    /// Approximate log marginal likelihood, where the method defines one.
    pub ln_evidence: Option<f64>,
    /// Training-row indices of the posterior's basis, in basis order, when the basis is a
    /// subset of the training inputs (IVM active set, SOGP basis vectors); `None` = all rows.
    pub basis_indices: Option<Vec<usize>>,
    /// How inference went.
    pub report: ConvergenceReport,
}

impl ClassifierFit {
    /// A fit that is a posterior over every training row and nothing more (no iterations,
    /// no evidence), with `note` on where it came from.
    pub fn of_posterior(posterior: GaussianPosterior, note: &str) -> Self {
        Self {
            posterior,
            ln_evidence: None,
            basis_indices: None,
            report: ConvergenceReport {
                status: ConvergenceStatus::Converged,
                iterations: 0,
                final_change: 0.0,
                jitter_used: 0.0,
                notes: vec![note.into()],
            },
        }
    }

    /// Whether the posterior's basis is every training row, in order (`y`: its labels) — the
    /// fits a refit can restart from.
    pub fn has_full_basis(&self, y: &[f64]) -> bool {
        self.basis_indices.is_none() && self.posterior.alpha.len() == y.len()
    }

    /// The posterior means `Kα` at the training inputs of a full-basis fit (`None` for a
    /// subset basis).
    pub fn full_basis_means(&self, y: &[f64]) -> Result<Option<Vec<f64>>> {
        if !self.has_full_basis(y) {
            return Ok(None);
        }
        let post = &self.posterior;
        let k = post.kernel().gram(post.basis.as_ref())?;
        Ok(Some(crate::linalg::mat_vec(&k, &post.alpha)))
    }
}

/// Entries `rows` of `v` (a full-data state restricted to the rows a refit keeps).
pub(crate) fn entries_at(v: &[f64], rows: &[usize]) -> Vec<f64> {
    rows.iter().map(|&j| v[j]).collect()
}

/// Labels must be ±1 with both classes present (any finite y for the Gaussian likelihood of
/// the equivalence tests); shapes must agree.
pub fn check_classification(
    x: faer::MatRef<'_, f64>,
    y: &[f64],
    lik: &crate::likelihood::Likelihood,
) -> Result<()> {
    crate::regression::exact::check_regression_inputs(x, y)?;
    if !matches!(lik, crate::likelihood::Likelihood::Gaussian { .. }) {
        crate::data::check_binary_labels(y)?;
    }
    if x.nrows() < 2 {
        return Err(Error::Empty {
            what: "training set (needs at least two points)",
        });
    }
    Ok(())
}

/// What the leave-one-out estimate a method has is made from, without refits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApproxLooKind {
    /// The cavities of its Gaussian sites (LA-LOO, LOO-EP, IVM's cavities).
    SiteCavities,
    /// Naive mean field's linear response (seed 001 eq. 17.29).
    LinearResponse,
    /// None: its leave-one-out takes refits (SOGP's online sweeps).
    RefitsOnly,
}

/// The inference state of a fit, to warm-start another at nearby hyperparameters (ML-II) or
/// on the data without one row (exact leave-one-out).
#[derive(Clone, Debug, Default)]
pub enum WarmStart {
    /// Start cold.
    #[default]
    None,
    /// The Laplace mode `f̂` (see [`laplace::laplace_warm`]).
    Laplace(Vec<f64>),
    /// EP sites (see [`ep::ep_warm`]).
    Ep(ep::EpSites),
    /// Naive mean field's embedding strengths `α_mf = y ∘ α` (see
    /// [`mean_field::mean_field_warm`]).
    MeanField(Vec<f64>),
}

/// What ML-II of a classifier is run with: the grid θ is kept inside and snapped onto, the
/// seeded restarts and the optimiser's stall rule (wide inputs).
#[derive(Clone, Debug)]
pub struct Ml2Settings {
    /// The one hyperparameter grid.
    pub grid: crate::bounds::HyperGrid,
    /// Seeded restarts around the start.
    pub restarts: crate::optim::Restarts,
    /// Stop on a stalled evidence ([`crate::kernel::start::wide_stall`]).
    pub stall: Option<crate::optim::Stall>,
}

/// What a classifier's inference runs on: the kernel, the likelihood, the inputs and the ±1
/// labels.
#[derive(Clone, Copy, Debug)]
pub struct Problem<'a> {
    /// The prior's kernel.
    pub kernel: &'a Kernel,
    /// The likelihood.
    pub lik: &'a Likelihood,
    /// Inputs, one row a point.
    pub x: MatRef<'a, f64>,
    /// Labels ±1.
    pub y: &'a [f64],
}

impl<'a> Problem<'a> {
    /// The problem of `kernel`'s prior and `lik` on inputs `x` with labels `y`.
    pub fn new(kernel: &'a Kernel, lik: &'a Likelihood, x: MatRef<'a, f64>, y: &'a [f64]) -> Self {
        Self { kernel, lik, x, y }
    }
}

/// What a refit without one row starts from: the full-data fit's warm start, the rows kept
/// (in order) and the row left out.
#[derive(Clone, Copy, Debug)]
pub struct LeftOut<'a> {
    /// The full-data state ([`ClassifierInference::warm_start`]).
    pub start: &'a WarmStart,
    /// The rows kept, in order.
    pub train: &'a [usize],
    /// The row left out.
    pub row: usize,
}

/// The fit ML-II ends at and what the optimiser did.
pub type Ml2Fit = (ClassifierFit, crate::optim::OptimReport);

/// One approximate-inference method of a binary GP classifier, implemented in its home (the
/// method's module): fitting, the leave-one-out it has, warm-started refits and ML-II all
/// reach a method through this trait, so a new method is its module and one registration.
pub trait ClassifierInference: std::any::Any + std::fmt::Debug + Send + Sync {
    /// Command-line name of the method.
    fn name(&self) -> &'static str;

    /// Inference at a fixed kernel and likelihood.
    fn fit(&self, p: Problem<'_>) -> Result<ClassifierFit>;

    /// What the method's leave-one-out estimate without refits is made from.
    fn approximate_loo(&self) -> ApproxLooKind {
        ApproxLooKind::SiteCavities
    }

    /// Gaussian input-noise variance v of the data model (naive mean field's; 0 for the others).
    fn input_noise(&self) -> f64 {
        0.0
    }

    /// The state a refit without one row starts from, read off the full-data `fit` on labels
    /// `y` (default: none, the refit starts cold).
    fn warm_start(&self, fit: &ClassifierFit, y: &[f64]) -> Result<WarmStart> {
        let _ = (fit, y);
        Ok(WarmStart::None)
    }

    /// The fit on `p`, the data without one row, from the full-data state `out` describes
    /// (default: a cold fit).
    fn refit_without(&self, p: Problem<'_>, out: &LeftOut<'_>) -> Result<ClassifierFit> {
        let _ = out;
        self.fit(p)
    }

    /// ML-II from `kernel` inside the settings' grid, θ snapped onto it, and the method's own
    /// fit there with its report (`None`: the method has no evidence to maximise).
    fn ml2(&self, p: Problem<'_>, settings: &Ml2Settings) -> Result<Option<Ml2Fit>> {
        let _ = (p, settings);
        Ok(None)
    }
}

/// An approximate-inference method with its settings, shared and cheap to clone: the one
/// value model files, experiments and the CLI go through ([`ClassifierInference`]).
#[derive(Clone, Debug)]
pub struct InferenceMethod(Arc<dyn ClassifierInference>);

impl InferenceMethod {
    /// The method `m` with its settings.
    pub fn new(m: impl ClassifierInference) -> Self {
        Self(Arc::new(m))
    }

    /// Inference at a fixed kernel and likelihood ([`ClassifierInference::fit`]).
    pub fn fit(
        &self,
        kernel: &Kernel,
        lik: &Likelihood,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<ClassifierFit> {
        self.0.fit(Problem { kernel, lik, x, y })
    }

    /// The method's settings as its own type, if it is one of `T`.
    pub fn settings<T: ClassifierInference>(&self) -> Option<&T> {
        let any: &dyn std::any::Any = self.0.as_ref();
        any.downcast_ref::<T>()
    }
}

impl std::ops::Deref for InferenceMethod {
    type Target = dyn ClassifierInference;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

/// An active-set size must be at least 1 (IVM's d, SOGP's basis).
pub(crate) fn check_active_set(
    size: Option<usize>,
) -> std::result::Result<(), crate::vocabulary::SpecError> {
    match size {
        Some(0) => Err(crate::vocabulary::SpecError::out_of_range(
            crate::vocabulary::SpecOption::ActiveSet,
            0,
            "at least 1",
        )),
        _ => Ok(()),
    }
}
