//! What a fit is, owned by the library (linfa's `ParamGuard` idea): a [`FitSpec`] whose
//! [`Method`] variants carry exactly the options that apply to them, checked once into a
//! [`CheckedFitSpec`]. The CLI and the Python module only map their inputs into
//! [`FitOptions`] (one field per option, as the user gave it) and word a [`SpecError`] in
//! their own terms (`--epsilon`, `epsilon=`); the model file stores the checked spec, from
//! which `certify` re-derives every price.
//!
//! - [`values`]: the words of the options (`pac-gp`, `kmeans`, `split:auto`, ...), parsed once;
//! - [`options`]: the options as given, their names, and the structured [`SpecError`].

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

/// `laplace` with `multiclass softmax`: the multi-class Laplace approximation (Rasmussen &
/// Williams Alg. 3.3), one kernel shared by the classes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoftmaxSpec {
    /// How the shared kernel's θ is chosen: the candidate menu or ML-II on the grid (no
    /// split prior).
    pub hypers: ClassifierHypers,
}

/// `gpr`: exact GP regression, θ and σ² by ML-II.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GprSpec {
    /// Kernel specification (structure and initial values).
    pub kernel: String,
    /// Initial noise variance σ² (standardised targets).
    pub noise_init: f64,
    /// Seeded random restarts of the optimiser.
    pub restarts: usize,
    /// Snap θ onto the wide PAC grid so the model can be certified.
    pub snap: bool,
    /// ε of the ε-band loss stored for `certify` (target units).
    pub epsilon: Option<f64>,
    /// σ² kept at this value (≥ 0, on the targets' fitted scale) instead of fitted by ML-II
    /// from `noise_init` (absent from older files: fitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<f64>,
    /// Known noise variances added to σ² on the diagonal (scikit-learn's `alpha`): one value
    /// for every row, or one per row (empty: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alpha: Vec<f64>,
    /// θ kept as given (ln values, the kernel's parameter order), on the inputs as given: a
    /// kernel fixed in advance is a prior chosen without the data, so it prices nothing, and
    /// the inputs are not standardised by the sample's spread (absent: θ by ML-II).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_params: Option<Vec<f64>>,
    /// Standardise the targets by the sample's mean and spread (scikit-learn's `normalize_y`),
    /// or fit them as given with prior mean 0 (absent from older files: standardised).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub normalize_y: bool,
    /// Several targets fitted together share one θ and σ², chosen by the sum of their log
    /// marginal likelihoods (scikit-learn's multi-output regressor), instead of one kernel
    /// per output (absent from older files: one per output; one target: no difference).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_kernel: bool,
    /// ML-II starts on a seeded subsample of this many rows, then runs on all rows from there
    /// (at least N rows: no warm start). Absent: [`crate::kernel::start::wide_pretrain`]'s
    /// default, a warm start on wide inputs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pretrain: Option<usize>,
}

/// Serde's default of a flag that is on unless written.
fn yes() -> bool {
    true
}

/// Whether a flag has its default, on (it is then not written).
fn is_yes(b: &bool) -> bool {
    *b
}

impl GprSpec {
    /// The known noise variances `αᵢ` of a sample of `n` rows (all 0 without `alpha`); `None`
    /// where `alpha` has neither one value nor `n`.
    pub fn alpha_at(&self, n: usize) -> Option<Vec<f64>> {
        match self.alpha.len() {
            0 => Some(vec![0.0; n]),
            1 => Some(vec![self.alpha[0]; n]),
            m if m == n => Some(self.alpha.clone()),
            _ => None,
        }
    }
}

/// `vfe`, `fitc`, `dtc`: sparse GP regression by its own objective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SparseSpec {
    /// Which approximation.
    pub approximation: SparseMethod,
    /// Kernel specification.
    pub kernel: String,
    /// Initial noise variance σ².
    pub noise_init: f64,
    /// Number of inducing inputs M (`None`: the default, at most N).
    pub inducing: Option<usize>,
    /// Where the inducing inputs start.
    pub inducing_init: InducingInit,
    /// ε stored for `certify` (target units).
    pub epsilon: Option<f64>,
    /// How the optimiser runs on large samples (absent from older files: the defaults).
    #[serde(default, skip_serializing_if = "OptimSchedule::is_default")]
    pub schedule: OptimSchedule,
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

/// `pac-gp`, `pac-gp-sqrt`: a full GP trained by its bound on the ε-band risk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacGpSpec {
    /// Kernel specification.
    pub kernel: String,
    /// Initial σ² (the paper starts at 1).
    pub noise_init: f64,
    /// ε of the ε-band loss (target units).
    pub epsilon: f64,
    /// The bound minimised: kl or sqrt.
    pub bound: BoundKind,
    /// Confidence constant.
    pub xi: Xi,
    /// Prior over θ.
    pub prior: PacPrior,
}

/// `pac-sgp`, `pac-sgp-sqrt`: a sparse GP (FITC form) trained by its bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacSgpSpec {
    /// Kernel specification.
    pub kernel: String,
    /// ε of the ε-band loss (target units).
    pub epsilon: f64,
    /// The bound minimised: kl or sqrt.
    pub bound: BoundKind,
    /// Confidence constant.
    pub xi: Xi,
    /// Number of inducing inputs M.
    pub inducing: Option<usize>,
    /// Where the inducing inputs start (not used by the split prior, which fits Z on part A).
    pub inducing_init: InducingInit,
    /// Prior over θ.
    pub prior: PacPrior,
    /// How the optimiser runs on large samples (not with the split prior).
    #[serde(default, skip_serializing_if = "OptimSchedule::is_default")]
    pub schedule: OptimSchedule,
}

/// `greedy-sparse`: T. Zhang's greedy sparse regression as a certified DTC model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GreedySparseSpec {
    /// Kernel specification.
    pub kernel: String,
    /// Number of basis points k.
    pub basis: Option<usize>,
    /// ε stored for `certify` (target units).
    pub epsilon: Option<f64>,
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

/// `laplace`, `ep`, `mean-field`, `ivm`, `sogp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassifierSpec {
    /// Inference method and its settings.
    pub inference: Inference,
    /// How θ is chosen.
    pub hypers: ClassifierHypers,
    /// The Gibbs classifier whose bound selects θ and is stored.
    pub predictor: GibbsPredictor,
    /// Seeded random restarts of ML-II (laplace and ep with θ by ML-II; absent from older
    /// files: none). θ stays on the grid, whose price covers any point of it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restarts: usize,
}

/// Whether a count has its default, 0 (it is then not written).
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `pac-gpc`: the classifier trained by its bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacGpcSpec {
    /// Likelihood of the Laplace warm start and of the class probabilities.
    pub likelihood: LikelihoodName,
    /// How θ is chosen.
    pub hypers: ClassifierHypers,
    /// The Gibbs classifier whose bound is minimised.
    pub predictor: GibbsPredictor,
}

/// `svgp`, `pac-svgp`: the sparse variational GP classifier (probit; docs/math.md §12): θ, the
/// inducing inputs Z and `q(v) = N(m, L_qL_qᵀ)` trained together by the evidence lower bound
/// or by the PAC-Bayes bound of the Gibbs classifier, θ snapped onto the PAC grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvgpSpec {
    /// Kernel specification (structure and start).
    pub kernel: String,
    /// `None`: trained by the evidence lower bound (svgp); else by the PAC-Bayes bound of this
    /// form (pac-svgp).
    pub bound: Option<BoundKind>,
    /// Number of inducing inputs M (`None`: the default, at most N).
    pub inducing: Option<usize>,
    /// Where the inducing inputs start.
    pub inducing_init: InducingInit,
    /// The likelihood's link (probit unless given).
    #[serde(default, skip_serializing_if = "LikelihoodName::is_probit")]
    pub likelihood: LikelihoodName,
    /// The optimiser's iteration budget (a warm start on a subsample is not offered): L-BFGS
    /// iterations, or Adam steps with a batch.
    #[serde(default, skip_serializing_if = "OptimSchedule::is_default")]
    pub schedule: OptimSchedule,
    /// Rows per minibatch (`None`: all rows at once, by L-BFGS; a large sample gets
    /// [`DEFAULT_SVGP_BATCH`] when the spec is resolved for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    /// pac-svgp's data-dependent prior ([`crate::svgp::split`]): θ, Z and `q_A` by the
    /// evidence lower bound on part A, the bound on part B; `None`: `GP(0, k)`, θ on the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitFraction>,
}

impl SvgpSpec {
    /// The fewest rows one of its fits sees on a sample of `n`: N, or with a split prior the
    /// smaller part at any of its fractions (M must fit both parts).
    pub fn smallest_part(&self, n: usize) -> usize {
        let fractions = self.split.map_or(Ok(Vec::new()), |f| f.candidates());
        fractions.unwrap_or_default().iter().fold(n, |least, &f| {
            let a = crate::data::part_a_size(n, f).min(n);
            least.min(a).min(n - a)
        })
    }
}

/// The minibatch of the sparse variational classifier when N·M² exceeds
/// [`FULL_BATCH_WORK`] and no batch is given.
pub const DEFAULT_SVGP_BATCH: usize = 1024;
/// Above this N·M² the sparse variational classifier trains on minibatches by default: one
/// full-batch evaluation costs about 10·N·M² flops, 3·10⁹ at this size (tens of milliseconds),
/// so a thousand L-BFGS iterations stay within a minute on two cores.
pub const FULL_BATCH_WORK: f64 = 3e8;

/// The SVM's kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SvmKernel {
    /// SE at the lengthscales {½, 1, 2}·√D, chosen by the linear-response leave-one-out.
    Menu,
    /// SE with this lengthscale (standardised inputs).
    Lengthscale(f64),
    /// A kernel specification with its initial values.
    Given(String),
}

/// The SVM's slack penalty; `None` scans the default menu by the linear-response LOO.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SvmSlack {
    /// `C Σ ξ_i`.
    Linear {
        /// Box constraint C (`None`: the menu 0.1, 1, 10, 100).
        c: Option<f64>,
    },
    /// `Σ ξ_i²/(2v)`.
    Quadratic {
        /// Input-noise variance v (`None`: the menu 0.3, 1.3, 3).
        v: Option<f64>,
    },
}

/// `svm`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvmSpec {
    /// The kernel (or the menu of lengthscales).
    pub kernel: SvmKernel,
    /// The slack penalty.
    pub slack: SvmSlack,
    /// Dual solver.
    pub solver: SvmSolver,
    /// Fit a free bias from the data (no certificate) instead of a constant term in the prior.
    pub bias: bool,
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
        let mut resolve = |slot: &mut Option<usize>, option: SpecOption, cap: bool, rows: usize| {
            *slot = Some(options::basis_size(*slot, rows, option, cap, &mut notes)?);
            Ok::<(), SpecError>(())
        };
        let method = match &mut spec.method {
            Method::OneVsRest(inner) => inner.as_mut(),
            other => other,
        };
        match method {
            Method::Sparse(s) => resolve(&mut s.inducing, SpecOption::Inducing, false, n)?,
            Method::PacSgp(s) => resolve(&mut s.inducing, SpecOption::Inducing, false, n)?,
            Method::Svgp(s) => {
                let rows = s.smallest_part(n);
                resolve(&mut s.inducing, SpecOption::Inducing, true, rows)?;
                let m = s.inducing.unwrap_or(DEFAULT_BASIS) as f64;
                if s.batch.is_none() && n as f64 * m * m > FULL_BATCH_WORK {
                    s.batch = Some(DEFAULT_SVGP_BATCH.min(n));
                    notes.push(format!(
                        "N·M² = {:.1e} > {FULL_BATCH_WORK:.0e}: trained by Adam on minibatches of {} rows (give the batch size to choose, or a batch of N for L-BFGS on all rows)",
                        n as f64 * m * m,
                        DEFAULT_SVGP_BATCH.min(n)
                    ));
                }
            }
            Method::GreedySparse(s) => resolve(&mut s.basis, SpecOption::Inducing, false, n)?,
            Method::Classifier(c) => {
                if let Some(slot) = c.inference.settings_mut().active_set() {
                    resolve(slot.size, SpecOption::ActiveSet, slot.capped, n)?;
                }
            }
            _ => {}
        }
        if let Some(iv) = &spec.intervals {
            options::interval_sample(iv.method, n)?;
        }
        Ok((spec.check()?, notes))
    }
}
