//! What a fit is, owned by the library (linfa's `ParamGuard` idea): a [`FitSpec`] whose
//! [`Method`] variants carry exactly the options that apply to them, checked once into a
//! [`CheckedFitSpec`]. The CLI and the Python module only map their inputs into
//! [`FitOptions`] (one field per option, as the user gave it) and word a [`SpecError`] in
//! their own terms (`--epsilon`, `epsilon=`); the model file stores the checked spec, from
//! which `certify` re-derives every price.
//!
//! - [`values`]: the words of the options (`pac-gp`, `kmeans`, `split:auto`, ...), parsed once;
//! - [`options`]: the options as given, their names, and the structured [`SpecError`];
//! - `methods`: each method's spec struct and what it says about itself ([`MethodSpec`]),
//!   one file per method, registered once (`registered_methods!`, from which [`Method::home`]
//!   and the fit's dispatch are built).

mod methods;
pub mod options;
mod queries;
pub mod values;

use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use crate::certificate::GibbsPredictor;
use crate::kernel::Kernel;
use crate::loo::LooMode;
use crate::objective::gp_split::SplitFraction;
use crate::regression::inducing_init::InducingInit;
use crate::regression::sparse::SparseMethod;
use crate::svm::SvmSolver;

pub(crate) use methods::registered_methods;
pub use methods::{
    ClassifierSpec, GprSpec, GreedySparseSpec, JackknifeLoo, MethodSpec, PacGpSpec, PacGpcSpec,
    PacSgpSpec, RegressionForm, SoftmaxSpec, SparseSpec, SvgpSpec, SvmKernel, SvmSlack, SvmSpec,
    DEFAULT_SVGP_BATCH, FULL_BATCH_WORK,
};
pub(crate) use options::{
    active_set_classifier, refit_classifier, site_form_classifier, training_inputs_classifier,
};
pub use options::{FitOptions, LibraryWording, SpecError, SpecOption, SpecProblem, Wording};
pub use values::{
    BoundName, HyperPriorName, LikelihoodName, LooRequest, MethodName, MultiClass, Named,
    PriorKernel, PriorScale, Selection, SlackKind, Xi,
};

pub use crate::conformal::{IntervalMethod, IntervalScore, IntervalSpec};

pub use crate::bounds::DEFAULT_DELTA;
pub use crate::vocabulary::DEFAULT_BASIS;
/// The kernel used when none is given: squared exponential with one lengthscale per input.
pub const DEFAULT_KERNEL: &str = "se-ard";

/// The kernel used when none is given, for inputs grouped by the table column they came
/// from (`groups`: how many consecutive inputs each column became). Where a categorical column
/// is one-hot coded into several inputs, its indicators share one lengthscale — squared
/// exponential with one lengthscale per table column, `se-groups(…)` — so that a wide table
/// of many categories costs one hyperparameter per column, not one per category: the
/// optimiser has fewer directions to search and the grid's union-bound price (`T·ln L`)
/// counts columns, not indicators. Otherwise (no grouping, or every column one input)
/// [`DEFAULT_KERNEL`].
pub fn default_kernel(groups: Option<&[usize]>) -> String {
    match groups {
        Some(sizes) if sizes.iter().any(|&n| n > 1) => {
            crate::kernel::Kernel::groups_spec("se", sizes)
        }
        _ => DEFAULT_KERNEL.into(),
    }
}
/// The ε of a bound-trained regressor (pac-gp, pac-sgp) given none, in standardised units
/// (training standard deviations of the target): `Φ⁻¹(3/4)`, the median absolute deviation
/// of a Gaussian target. At this ε the constant predictor ȳ (what the prior mean predicts on
/// standardised targets) misses half of Gaussian targets, so the ε-band risk's scale runs from
/// 0 (every target within ε) to ½ (no better than the mean), where the Bernoulli loss is most
/// informative (its variance ¼ is largest): a certificate below ½ says the model learnt
/// something. A larger ε certifies little (at ε = 1 the mean already scores 0.32), a smaller
/// one leaves the bound near 1 on small samples (at ε = 0.2 the mean misses 84%).
pub const DEFAULT_EPSILON_SD: f64 = 0.674_489_750_196_081_7;

/// A fit: the method with its options, the confidence δ and the seed of every random choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitSpec {
    /// The method and the options that apply to it.
    pub method: Method,
    /// Confidence δ of the bound the fit trains, selects by or stores.
    pub delta: f64,
    /// Seed of every random choice (restarts, k-means, visiting orders, splits).
    pub seed: u64,
    /// Distribution-free prediction intervals stored with a regressor, or prediction sets with
    /// a classifier (`None`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<IntervalSpec>,
    /// The fraction of the sample kept out of the fit, by the seed, to certify the deployed
    /// predictor on it with the test-set bound (`None`: the whole sample is fitted). A model
    /// file without it fits the whole sample, as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certify_holdout: Option<f64>,
}

/// The methods, each with exactly its options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", content = "options", rename_all = "kebab-case")]
pub enum Method {
    /// Exact GP regression by ML-II.
    Gpr(GprSpec),
    /// Sparse GP regression by its own objective (VFE, FITC, DTC).
    Sparse(SparseSpec),
    /// Full GP trained by its PAC-Bayes bound (Reeb et al. 2018).
    PacGp(PacGpSpec),
    /// Sparse GP trained by its PAC-Bayes bound.
    PacSgp(PacSgpSpec),
    /// T. Zhang's greedy sparse GP regression in the dual.
    GreedySparse(GreedySparseSpec),
    /// A GP classifier from an approximate-inference method.
    Classifier(ClassifierSpec),
    /// The GP classifier trained by its PAC-Bayes bound.
    PacGpc(PacGpcSpec),
    /// The SVM as a GP's MAP (Opper & Winther §17.4).
    Svm(SvmSpec),
    /// The sparse variational GP classifier, trained by its evidence or by its bound.
    Svgp(SvgpSpec),
    /// K ≥ 2 classes by one binary classifier per class against the rest (a classifier,
    /// pac-gpc or SVM spec without a split prior), certified together.
    OneVsRest(Box<Method>),
    /// K ≥ 2 classes by the multi-class Laplace approximation with the softmax likelihood.
    Softmax(SoftmaxSpec),
}

/// How the optimiser of a sparse method runs on a large sample: a warm start on a seeded
/// subsample, and a cap on the iterations over all rows. Neither changes what the bound
/// charges (θ is snapped and priced as always; Z and σ² are Q's free parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimSchedule {
    /// Optimise first on a seeded subsample of this many rows, then on all rows from where it
    /// stopped (`None`, or at least N: no warm start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pretrain: Option<usize>,
    /// Most optimiser iterations over all rows (`None`: the method's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iter: Option<usize>,
}

impl OptimSchedule {
    /// Neither option given (what older model files mean).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// The prior over θ of a bound-trained regressor.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PacPrior {
    /// The paper's uniform grid ln θ ∈ {−6.00, …, 6.00} (`T·ln 1201`).
    Grid,
    /// A coarse prior over ln θ (step 0.25), priced `−ln π(θ)`.
    Coarse(HyperPriorName),
    /// The data-dependent split prior: θ fitted on part A, the bound on part B.
    Split(SplitFraction),
}

pub use crate::inference::Inference;

/// How a classifier's prior over θ is chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassifierHypers {
    /// The lowest bound among nine SE kernels fixed in advance (`ln 9`).
    Candidates,
    /// From this kernel onto the PAC grid (ML-II, or pac-gpc's joint optimisation; `T·ln 1201`).
    Grid {
        /// Kernel specification.
        kernel: String,
    },
    /// The data-dependent split prior (θ by ML-II on part A; the bound on part B).
    Split(SplitClassifierSpec),
}

/// The classifier split prior's options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitClassifierSpec {
    /// Kernel structure and start of ML-II on part A.
    pub kernel: String,
    /// Fraction of part A (fixed, or the menu 0.3, 0.5, 0.7).
    pub fraction: SplitFraction,
    /// kl, or Catoni's bound at a λ fixed on part A.
    pub catoni: bool,
    /// The scale t of the prior's covariance.
    pub prior_scale: PriorScale,
    /// The kernel structure of `P_A`.
    pub prior_kernel: PriorKernel,
    /// Also certify with the parts swapped and keep the lower (`ln 2`).
    pub both_directions: bool,
}

impl FitSpec {
    /// Check every option against its range and against the others, once.
    pub fn check(self) -> Result<CheckedFitSpec, SpecError> {
        options::check_spec(&self)?;
        Ok(CheckedFitSpec(self))
    }
}

/// A [`FitSpec`] that passed [`FitSpec::check`]; the fitting pipelines take only this. On
/// disk it is a plain [`FitSpec`], checked again when read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FitSpec", into = "FitSpec")]
pub struct CheckedFitSpec(FitSpec);

impl TryFrom<FitSpec> for CheckedFitSpec {
    type Error = SpecError;
    fn try_from(spec: FitSpec) -> Result<Self, SpecError> {
        spec.check()
    }
}

impl From<CheckedFitSpec> for FitSpec {
    fn from(c: CheckedFitSpec) -> Self {
        c.0
    }
}

impl std::ops::Deref for CheckedFitSpec {
    type Target = FitSpec;
    fn deref(&self) -> &FitSpec {
        &self.0
    }
}

impl CheckedFitSpec {
    /// The spec without its prediction intervals and holdout (a checked spec stays checked
    /// without them): what CV+ and split conformal refit on parts of the rows already fitted.
    pub fn without_intervals(&self) -> CheckedFitSpec {
        CheckedFitSpec(FitSpec {
            intervals: None,
            certify_holdout: None,
            ..self.0.clone()
        })
    }

    /// The spec with its data-dependent defaults filled in for a sample of `n` rows (a basis
    /// size of at most N; the default [`DEFAULT_BASIS`] capped at N), with a note for every
    /// value the data changed; a given basis size outside `1..=N` is a [`SpecError`].
    pub fn for_sample(&self, n: usize) -> Result<(CheckedFitSpec, Vec<String>), SpecError> {
        let mut spec = self.0.clone();
        let mut notes = Vec::new();
        spec.method.resolve_for_sample(n, &mut notes)?;
        if let Some(iv) = &spec.intervals {
            options::interval_sample(iv.method, n)?;
        }
        Ok((spec.check()?, notes))
    }
}
