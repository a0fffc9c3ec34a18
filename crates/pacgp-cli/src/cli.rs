//! Command-line arguments (clap derive). The interface is stable: scripts depend on it.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Gaussian-process learning with guarantees: fit GP regressors and classifiers, and
/// certify them with a PAC-Bayes upper bound on their future risk and a leave-one-out
/// estimate.
///
/// Typical session:
///   pacgp fit --data train.csv --method gpr --out model.json
///   pacgp evaluate --model model.json --data test.csv
///   pacgp certify --model model.json --data train.csv --epsilon 2.0
#[derive(Debug, Parser)]
#[command(name = "pacgp", version, about, long_about)]
pub struct Cli {
    /// Worker threads for the linear algebra and kernel matrices (default: all cores; −1: all
    /// cores, −2: all but one, as scikit-learn's n_jobs; at most 4 per core). Results do not
    /// depend on it.
    #[arg(long, global = true, allow_negative_numbers = true)]
    pub threads: Option<i64>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
// Parsed once per run: the size of the largest variant (`fit`'s options) does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fit a model on a CSV file and save it as JSON.
    Fit(FitArgs),
    /// Predict with a saved model on new inputs.
    Predict(PredictArgs),
    /// Test-set metrics of a saved model (RMSE, MAE, NLPD, coverage; Gibbs risk with ε).
    Evaluate(EvaluateArgs),
    /// PAC-Bayes certificate (bound on future risk) and leave-one-out estimate.
    Certify(CertifyArgs),
    /// Re-run one of the seed papers' experiments: tables (CSV, JSON) and figures (SVG).
    Reproduce(ReproduceArgs),
    /// The main job on the data shipped in `data/`: fit a few models, print their summaries.
    Demo(DemoArgs),
    /// Split a CSV file into train and test files by a seeded random permutation (header
    /// and cells copied unchanged).
    Split(SplitArgs),
}

/// Where the data comes from.
#[derive(Debug, Args, Clone)]
pub struct DataArgs {
    /// CSV file with a header row (`.csv.gz` works too).
    #[arg(long)]
    pub data: PathBuf,
    /// Target column by name or 0-based index (default: the last column).
    #[arg(long)]
    pub target: Option<String>,
    /// Comma-separated columns to ignore (e.g. an id column).
    #[arg(long, value_delimiter = ',')]
    pub drop: Vec<String>,
    /// Drop rows with missing values (`?`, empty, `NA`) instead of failing.
    #[arg(long, conflicts_with = "missing_as_zero")]
    pub drop_missing: bool,
    /// Read a missing input value as 0 (e.g. an abstention among votes coded ±1 by
    /// --yes-no); a missing target still fails. The model remembers it for later files.
    #[arg(long)]
    pub missing_as_zero: bool,
    /// Read `y`/`yes` as +1 and `n`/`no` as −1 in input columns (e.g. house-votes); the
    /// model remembers it for later files.
    #[arg(long)]
    pub yes_no: bool,
}

/// Model families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Exact GP regression, hyperparameters by ML-II (maximum marginal likelihood).
    Gpr,
    /// Sparse GP regression, Titsias' variational free energy (--inducing M).
    Vfe,
    /// Sparse GP regression, FITC marginal likelihood (--inducing M).
    Fitc,
    /// Full GP trained by minimising the kl PAC-Bayes bound (seed 004); needs --epsilon.
    PacGp,
    /// Full GP trained by minimising the Pinsker (sqrt) PAC-Bayes bound; needs --epsilon.
    PacGpSqrt,
    /// Sparse GP (FITC form) trained by minimising the kl PAC-Bayes bound; --epsilon, --inducing.
    PacSgp,
    /// Sparse GP (FITC form) trained by minimising the sqrt PAC-Bayes bound; --epsilon, --inducing.
    PacSgpSqrt,
    /// Zhang's greedy sparse GP regression in the dual (seed 002): --inducing k basis points
    /// chosen greedily, θ and σ² by ML-II on a 1000-point subset.
    GreedySparse,
    /// GP classification, Laplace approximation (kernel chosen by minimising the bound).
    Laplace,
    /// GP classification, expectation propagation with the probit likelihood.
    Ep,
    /// GP classification, naive mean field (seed 001) with flip noise --kappa and --input-noise.
    MeanField,
    /// GP classification, informative vector machine (ADF on --active-set points; probit).
    Ivm,
    /// GP classification, sparse online GP with at most --active-set basis vectors (probit).
    Sogp,
    /// GP classification trained by its PAC-Bayes bound on the Gibbs error (site means and
    /// precisions from Laplace; θ: the best of nine fixed SE kernels, or from --kernel
    /// optimised jointly and snapped onto the grid).
    PacGpc,
    /// Support vector machine as a GP's MAP (seed 001): lengthscale and slack by the
    /// linear-response leave-one-out, certified (--slack, --c or --input-noise, --solver).
    Svm,
}

/// A regression method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RegressionMethod {
    /// Exact GP, ML-II.
    Gpr,
    /// Sparse GP (VFE or FITC) by its own objective.
    Sparse(pacgp::regression::sparse::SparseMethod),
    /// Full GP by its PAC-Bayes bound (kl or sqrt).
    PacGp(pacgp::bounds::BoundKind),
    /// Sparse GP by its PAC-Bayes bound (kl or sqrt).
    PacSgp(pacgp::bounds::BoundKind),
    /// Zhang's greedy sparse GP in the dual.
    GreedySparse,
}

/// A classification method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassifierMethod {
    /// Laplace.
    Laplace,
    /// Expectation propagation.
    Ep,
    /// Naive mean field.
    MeanField,
    /// Informative vector machine.
    Ivm,
    /// Sparse online GP.
    Sogp,
    /// Trained by its PAC-Bayes bound.
    PacGpc,
}

/// The two families, so each command handles exactly its own methods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Family {
    /// Real-valued targets.
    Regression(RegressionMethod),
    /// Two-class labels.
    Classification(ClassifierMethod),
    /// Two-class labels by a support vector machine.
    Svm,
}

impl Method {
    /// The method's family.
    pub fn family(self) -> Family {
        use pacgp::bounds::BoundKind::{Kl, Sqrt};
        use pacgp::regression::sparse::SparseMethod::{Fitc, Vfe};
        match self {
            Method::Gpr => Family::Regression(RegressionMethod::Gpr),
            Method::Vfe => Family::Regression(RegressionMethod::Sparse(Vfe)),
            Method::Fitc => Family::Regression(RegressionMethod::Sparse(Fitc)),
            Method::PacGp => Family::Regression(RegressionMethod::PacGp(Kl)),
            Method::PacGpSqrt => Family::Regression(RegressionMethod::PacGp(Sqrt)),
            Method::PacSgp => Family::Regression(RegressionMethod::PacSgp(Kl)),
            Method::PacSgpSqrt => Family::Regression(RegressionMethod::PacSgp(Sqrt)),
            Method::GreedySparse => Family::Regression(RegressionMethod::GreedySparse),
            Method::Laplace => Family::Classification(ClassifierMethod::Laplace),
            Method::Ep => Family::Classification(ClassifierMethod::Ep),
            Method::MeanField => Family::Classification(ClassifierMethod::MeanField),
            Method::Ivm => Family::Classification(ClassifierMethod::Ivm),
            Method::Sogp => Family::Classification(ClassifierMethod::Sogp),
            Method::PacGpc => Family::Classification(ClassifierMethod::PacGpc),
            Method::Svm => Family::Svm,
        }
    }

    /// The name on the command line.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
}

/// Classification likelihoods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LikelihoodArg {
    /// Φ(y f).
    Probit,
    /// σ(y f) (Laplace only).
    Logistic,
}

/// How a classifier's hyperparameters are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SelectArg {
    /// The lowest PAC-Bayes bound among nine isotropic SE kernels fixed in advance (penalty ln 9).
    Bound,
    /// ML-II with --kernel (laplace, ep: evidence gradients; ivm: pseudo-likelihood) inside
    /// the PAC grid's range, snapped onto the grid (penalty T·ln 1201).
    Ml2,
}

/// Where a sparse GP's inducing inputs start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InducingInitArg {
    /// Seeded k-means++ centroids with a few Lloyd iterations.
    Kmeans,
    /// A seeded random subset of the training inputs.
    Subset,
    /// Training inputs chosen by κ-greedy ΔR selection (seed 002, Algorithm 3).
    Greedy,
}

impl From<InducingInitArg> for pacgp::regression::sparse::InducingInit {
    fn from(a: InducingInitArg) -> Self {
        match a {
            InducingInitArg::Kmeans => Self::KMeans,
            InducingInitArg::Subset => Self::Subset,
            InducingInitArg::Greedy => Self::Greedy,
        }
    }
}

/// The SVM's slack penalty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SlackArg {
    /// C Σ ξ_i (box 0 ≤ α ≤ C).
    Linear,
    /// Σ ξ_i²/(2v) (v on the kernel's diagonal).
    Quadratic,
}

/// The SVM's dual solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SolverArg {
    /// SMO with second-order working-set selection, shrinking and a kernel cache.
    Smo,
    /// The parallel kernel Adatron of seed 001 §17.7.
    Adatron,
}

/// Which leave-one-out estimates `certify` adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LooArg {
    /// The fast approximation only.
    Approx,
    /// Exact LOO by N refits only.
    Exact,
    /// Both.
    Both,
    /// No leave-one-out.
    None,
}

/// The Gibbs classifier a classification certificate is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PredictorArg {
    /// sign(f(x) + b), f ~ Q.
    Latent,
    /// sign(f(x) + ξ + b), f ~ Q, ξ the probit's label noise.
    Noisy,
}

/// The confidence constant of the PAC-Bayes bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TermArg {
    /// ln(2√N/δ) (Maurer; tighter).
    Maurer,
    /// ln((N+1)/δ) (Seeger 2002, seed 003).
    Seeger,
    /// ln(ξ(N)/δ), the exact constant Maurer bounds by 2√N (about 0.45 nats tighter).
    Sharp,
}

// --- tighter-bounds levers (issue 15) ---
/// `--prior`: the data-dependent split prior.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PriorArg {
    /// `split:F`.
    Split(f64),
    /// `split:auto`: the menu 0.3, 0.5, 0.7.
    SplitAuto,
}

/// Parse `split:F` or `split:auto`.
fn parse_prior(s: &str) -> Result<PriorArg, String> {
    match s.strip_prefix("split:") {
        Some("auto") => Ok(PriorArg::SplitAuto),
        Some(f) => match f.parse::<f64>() {
            Ok(v) if v > 0.0 && v < 1.0 => Ok(PriorArg::Split(v)),
            _ => Err(format!("'{f}' is not a fraction in (0, 1)")),
        },
        None => Err("use split:F (F in (0, 1)) or split:auto".into()),
    }
}

/// `--bound` of the classifier split prior.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SplitBoundArg {
    /// The kl bound, `kl⁻¹(R_B, (KL + penalty + ln(2√N_B/δ))/N_B)`.
    Kl,
    /// Catoni's bound at a λ fixed on a nested split of part A (no charge).
    Catoni,
}

/// `--prior-kernel` of the classifier split prior: the kernel structure of `P_A`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PriorKernelArg {
    /// The `--kernel` structure (default se-ard), θ by ML-II on part A.
    Kernel,
    /// SE iso or the `--kernel` structure (θ of each by ML-II on A), whichever a nested split
    /// of part A predicts the lower certificate for (no charge).
    Auto,
}

/// `--prior-scale`: the scale t of the split prior's covariance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PriorScaleArg {
    /// A given t > 0.
    Fixed(f64),
    /// The best of 1, ½, ¼, ⅛, 1/16 on a nested split of part A.
    Auto,
}

/// Parse `auto` or a positive number.
fn parse_prior_scale(s: &str) -> Result<PriorScaleArg, String> {
    match s {
        "auto" => Ok(PriorScaleArg::Auto),
        t => match t.parse::<f64>() {
            Ok(v) if v > 0.0 && v.is_finite() => Ok(PriorScaleArg::Fixed(v)),
            _ => Err(format!("'{t}' is neither auto nor a positive number")),
        },
    }
}

/// `--hyper-prior`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HyperPriorArg {
    /// Uniform over the coarse grid.
    Uniform,
    /// Discretised Gaussian over the coarse grid.
    Gaussian,
}

/// `--xi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum XiArg {
    /// ln(2√N/δ).
    Maurer,
    /// ln(ξ(N)/δ).
    Sharp,
}

/// `pacgp fit`. Options that do not apply to the chosen method are an error.
#[derive(Debug, Args)]
pub struct FitArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Model family.
    #[arg(long, value_enum, default_value_t = Method::Gpr)]
    pub method: Method,
    /// Kernel: `se-ard` (default), `se`, `matern12|32|52[-ard]`, `linear`, `poly2`, `const`,
    /// combined with `+` and `*`. Classifiers: only with `--select ml2` (the bound's nine
    /// candidates are fixed SE kernels). svm: the kernel k of the prior `k + 1`, with its
    /// initial values (no lengthscale scan).
    #[arg(long)]
    pub kernel: Option<String>,
    /// ε of the ε-band loss in the target's units (regression; stored with the model for
    /// `certify`; needed by the PAC methods).
    #[arg(long)]
    pub epsilon: Option<f64>,
    /// gpr: keep θ exactly as ML-II leaves it (scikit-learn's box 1e-5…1e5) instead of
    /// optimising inside the hyperparameter grid's range and snapping onto it. Such a model
    /// cannot be certified.
    #[arg(long)]
    pub no_snap: bool,
    /// vfe, fitc, pac-sgp: number of inducing inputs, initialised by --inducing-init
    /// [default: 100, at most N].
    #[arg(long)]
    pub inducing: Option<usize>,
    /// vfe, fitc, pac-sgp: where the inducing inputs start — seeded k-means centroids (the
    /// paper's), a seeded random subset, or training inputs chosen by seed 002's κ-greedy ΔR
    /// selection under the initial kernel and noise [default: kmeans].
    #[arg(long, value_enum)]
    pub inducing_init: Option<InducingInitArg>,
    /// Classifiers: likelihood [default: probit; logistic for laplace only].
    #[arg(long, value_enum)]
    pub likelihood: Option<LikelihoodArg>,
    /// Classifiers: how the kernel hyperparameters are chosen (both are certified)
    /// [default: bound].
    #[arg(long, value_enum)]
    pub select: Option<SelectArg>,
    /// ivm: active-set size d; sogp: the most basis vectors kept [default: 100, at most N].
    #[arg(long)]
    pub active_set: Option<usize>,
    /// svm: slack penalty, linear (box C) or quadratic (v on the kernel's diagonal, seed 001
    /// eq. 17.16) [default: linear].
    #[arg(long, value_enum)]
    pub slack: Option<SlackArg>,
    /// svm: the box constraint C of the linear slack [default: the lowest LR-LOO of
    /// 0.1, 1, 10, 100].
    #[arg(long)]
    pub c: Option<f64>,
    /// svm: the RBF lengthscale on standardised inputs [default: the lowest LR-LOO of
    /// {½, 1, 2}·√D]; libsvm's default γ = 1/D is l = √(D/2).
    #[arg(long)]
    pub lengthscale: Option<f64>,
    /// svm: fit a free bias b from the data (`true`; the seed's SVM, no certificate) or put
    /// the bias into the prior kernel as a constant term (`false`, certified) [default: false].
    #[arg(long)]
    pub bias: Option<bool>,
    /// svm: dual solver [default: smo].
    #[arg(long, value_enum)]
    pub solver: Option<SolverArg>,
    /// mean-field: label flip probability κ in [0, 0.5) [default: 0].
    #[arg(long)]
    pub kappa: Option<f64>,
    /// mean-field, svm with --slack quadratic: input-noise variance v added to the kernel's
    /// diagonal (seed 001 eq. 17.16) [default: 1 for mean field; for the SVM the lowest LR-LOO
    /// of 0.3, 1.3, 3].
    #[arg(long)]
    pub input_noise: Option<f64>,
    /// Confidence δ of the PAC-Bayes bound that is trained (pac-*) or that selects the
    /// classifier's kernel [default: 0.01].
    #[arg(long)]
    pub delta: Option<f64>,
    /// gpr: random restarts of the hyperparameter optimiser [default: 0].
    #[arg(long)]
    pub restarts: Option<usize>,
    /// Seed for every random choice (restarts, k-means, visiting orders).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where to save the model (JSON); checked before fitting.
    #[arg(long)]
    pub out: PathBuf,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    // --- tighter-bounds levers (issue 15) ---
    /// pac-gp, pac-sgp, laplace, pac-gpc: a data-dependent prior, the GP (Laplace) posterior of
    /// a random part A of the sample (`split:F`, F in (0, 1), or `split:auto` = the best of
    /// 0.3, 0.5, 0.7 with ln 3 charged); θ and the scalers are fitted on A by ML-II (from
    /// --kernel; pac-sgp: VFE with --inducing inputs, also fitted on A), the bound holds on the
    /// rest (`--seed` seeds the split).
    #[arg(long, value_parser = parse_prior)]
    pub prior: Option<PriorArg>,
    /// pac-gp, pac-sgp (and -sqrt): a coarse prior over ln θ (step 0.25 on [−6, 6]) instead of
    /// the 0.01 uniform grid: `gaussian` (centres 1 for ln ℓ, 0 otherwise, τ = 1.5) or
    /// `uniform` (ln 49 per hyperparameter).
    #[arg(long, value_enum)]
    pub hyper_prior: Option<HyperPriorArg>,
    /// pac-gp, pac-sgp (and -sqrt): confidence constant of the trained bound: `maurer`
    /// ln(2√N/δ) (the paper's, default) or `sharp` ln(ξ(N)/δ); `certify` uses it by default.
    #[arg(long, value_enum)]
    pub xi: Option<XiArg>,
    /// laplace, pac-gpc with --prior split: the certificate's inequality: `kl` (default) or
    /// `catoni`, Catoni's bound at a λ fixed on a nested split of part A (no charge); the
    /// model file keeps λ and `certify` uses it.
    #[arg(long, value_enum)]
    pub bound: Option<SplitBoundArg>,
    /// laplace, pac-gpc with --prior split: the scale t of the prior's covariance,
    /// `GP(μ_A, t·k_A)`: a number t > 0, or `auto`, the best of 1, ½, ¼, ⅛, 1/16 on a nested
    /// split of part A (no charge) [default: 1].
    #[arg(long, value_parser = parse_prior_scale)]
    pub prior_scale: Option<PriorScaleArg>,
    /// laplace, pac-gpc with --prior split: the kernel structure of `P_A`: `kernel` (the
    /// `--kernel` structure, default) or `auto`, SE iso or the `--kernel` structure, chosen on
    /// a nested split of part A (no charge).
    #[arg(long, value_enum)]
    pub prior_kernel: Option<PriorKernelArg>,
    /// laplace, pac-gpc with --prior split: also certify with the parts' roles swapped and
    /// keep the lower certificate (`ln 2` more: `ln 6` with split:auto); the model file
    /// records the direction and `certify` reproduces it.
    #[arg(long)]
    pub both_directions: bool,
}

/// `pacgp predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// Model file written by `pacgp fit`.
    #[arg(long)]
    pub model: PathBuf,
    /// CSV with the same input columns (a target column, if present, is ignored).
    #[arg(long)]
    pub data: PathBuf,
    /// Write predictions here as CSV (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `pacgp evaluate`.
#[derive(Debug, Args)]
pub struct EvaluateArgs {
    /// Model file written by `pacgp fit`.
    #[arg(long)]
    pub model: PathBuf,
    /// Test CSV with the target column.
    #[arg(long)]
    pub data: PathBuf,
    /// ε for the Gibbs risk of regression models (default: the model's own).
    #[arg(long)]
    pub epsilon: Option<f64>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `pacgp certify`.
#[derive(Debug, Args)]
pub struct CertifyArgs {
    /// Model file written by `pacgp fit`.
    #[arg(long)]
    pub model: PathBuf,
    /// The training CSV the model was fitted on (the bound is about this sample).
    #[arg(long)]
    pub data: PathBuf,
    /// ε for regression models, in the target's units (default: the model's own). Several,
    /// comma separated, are certified at once and pay ln k each in the penalty.
    #[arg(long, value_delimiter = ',')]
    pub epsilon: Vec<f64>,
    /// Classifiers: which Gibbs classifier the bound is about: the noise-free latent
    /// sign(f(x) + b), f ~ Q, or the probit's noisy sign(f(x) + ξ + b).
    #[arg(long, value_enum, default_value_t = PredictorArg::Latent)]
    pub predictor: PredictorArg,
    /// Confidence δ: the bound holds with probability at least 1 − δ.
    #[arg(long, default_value_t = 0.01)]
    pub delta: f64,
    /// Leave-one-out beside the bound: the fast approximation (closed form, cavities or
    /// linear response), exact LOO by N refits (`loo_exact_error`), both, or none.
    #[arg(long, value_enum, default_value_t = LooArg::Approx)]
    pub loo: LooArg,
    /// Confidence constant of the bound (default: the one the model was trained with, else
    /// maurer).
    #[arg(long, value_enum)]
    pub confidence_term: Option<TermArg>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `pacgp reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// Which experiment.
    #[arg(value_enum)]
    pub experiment: Experiment,
    /// A small, fast version (fewer repetitions and ε values).
    #[arg(long)]
    pub quick: bool,
    /// Output folder for tables and figures.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Folder holding the shipped datasets.
    #[arg(long, default_value = "data")]
    pub data_dir: PathBuf,
    /// pac-sgp-inducing, zhang-kin40k: only these numbers of inducing inputs (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub m: Vec<usize>,
    /// pac-sgp-inducing: only these datasets (kin40k, pol); ivm-uci and risk-coverage:
    /// breast-cancer, ripley, crabs, house-votes; tighter-bounds: boston, kin40k, pol,
    /// breast-cancer, crabs.
    #[arg(long, value_delimiter = ',')]
    pub datasets: Vec<String>,
    /// ivm-uci, risk-coverage: the seed's fixed unit-scale RBF kernel instead of the kernel
    /// with the lowest bound among nine candidates.
    #[arg(long)]
    pub seed_kernel: bool,
    /// Print the summary table as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    // --- tighter-bounds, sparse rows (issue 15) ---
    /// tighter-bounds: kin40k and pol by the sparse protocol (10,000 training points,
    /// PAC-SGP reference, M = 100 or the first `--m`) instead of 1000-point full-GP subsamples.
    #[arg(long)]
    pub sparse: bool,
    /// tighter-bounds: number of seeded splits (default 10, quick 3).
    #[arg(long)]
    pub reps: Option<usize>,
    /// tighter-bounds: seed of the first split (splits first-rep .. first-rep + reps).
    #[arg(long, default_value_t = 0)]
    pub first_rep: usize,
}

/// The experiments of the seed papers that this version reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[allow(clippy::enum_variant_names)] // the names are the command line's stable values
pub enum Experiment {
    /// Seed 004 Fig. 2: boston; bound, Gibbs risks, MSE and KL/N vs ε for full GP, kl- and sqrt-PAC-GP.
    PacGpEpsilon,
    /// Seed 004 Fig. 1: Snelson's 1-D data, predictive of full and sparse kl-PAC-GP for three ε.
    PacGpSnelson,
    /// Seed 004 Fig. 3: kin40k and pol; bound, Gibbs risks, MSE, KL/N vs M for kl-/sqrt-PAC-SGP, VFE, FITC.
    PacSgpInducing,
    /// Seed 003 §4.1: bound vs test Gibbs error of IVM, SOGP and full Laplace on breast-cancer,
    /// ripley, crabs and house-votes (100 train / 200 test, 100 draws).
    IvmUci,
    /// Seed 003 §4.2: IVM (d = 300) on MNIST 2 vs 3 over the (w, C) kernel grid: six tables.
    IvmMnistGrid,
    /// Seed 003 §3.4: the points IVM and SOGP select on a 2-D three-Gaussian problem.
    #[value(name = "ivm-selection-2d")]
    IvmSelection2d,
    /// Seed 003 §4.4: risk–coverage curves of selective classification by |μ/σ| and |μ|.
    RiskCoverage,
    /// Seed 001 Table 17.1 and Fig. 17.2: SVM (kernel Adatron) and naive mean field on
    /// Wisconsin breast cancer, exact vs linear-response LOO, 10-fold CV.
    OpperWinther,
    /// Seed 002 §4: ΔR(k) of greedy, κ-greedy and random sparse GP regression in the dual
    /// (Figures 1–3) beside Theorem 3.1's bound; R(ŵ) and ΔR(0) over five data seeds.
    ZhangSparse,
    /// Seed 002 on kin40k: greedy, κ-greedy and random selection against VFE and kl-PAC-SGP
    /// started from k-means or greedy inducing inputs, at equal M: test RMSE, bound, test
    /// Gibbs risk, time.
    #[value(name = "zhang-kin40k")]
    ZhangKin40k,
    // --- tighter-bounds (issue 15) ---
    /// Issue 15: the reference PAC-GP bound against each tighter-bounds lever (sharp ξ(N),
    /// coarse Gaussian hyperparameter prior, data-dependent split prior) and their combination
    /// on boston (SE iso, ARD), kin40k and pol (`--datasets` selects; `--quick`: 3 splits,
    /// 300 training points for kin40k/pol); classifiers on breast-cancer and crabs (Laplace
    /// with the bound-chosen kernel, pac-gpc, split prior, split prior + Catoni λ from part A;
    /// `--quick`: 2 splits, 60 L-BFGS iterations).
    TighterBounds,
}

/// `pacgp demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder holding the shipped datasets.
    #[arg(long, default_value = "data")]
    pub data_dir: PathBuf,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `pacgp split`.
#[derive(Debug, Args)]
pub struct SplitArgs {
    /// CSV file with a header row (`.csv.gz` works too).
    #[arg(long)]
    pub data: PathBuf,
    /// Share of the data rows that go to the test file (rounded to a whole number of rows).
    #[arg(long, default_value_t = 0.2)]
    pub test_fraction: f64,
    /// Seed of the random permutation: the same seed gives the same split.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Training part (default: next to the input, `f.csv` → `f.train.csv`).
    #[arg(long)]
    pub out_train: Option<PathBuf>,
    /// Test part (default: next to the input, `f.csv` → `f.test.csv`).
    #[arg(long)]
    pub out_test: Option<PathBuf>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}
