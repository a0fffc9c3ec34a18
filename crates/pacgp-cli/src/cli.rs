//! Command-line arguments (clap derive). The interface is stable: scripts depend on it.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

use pacgp::bounds::ConfidenceTerm;
use pacgp::certificate::GibbsPredictor;
use pacgp::data::{MissingPolicy, UnknownCategory};
use pacgp::model::CertifyOptions;
use pacgp::objective::gp_split::SplitFraction;
use pacgp::regression::inducing_init::InducingInit;
use pacgp::spec::{
    BoundName, FitOptions, HyperPriorName, IntervalMethod, IntervalScore, LikelihoodName,
    LooRequest, MethodName, MultiClass, PriorKernel, PriorScale, Selection, SlackKind, Xi,
};
use pacgp::svm::SvmSolver;

use crate::words::{parsed, words};

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
    #[command(allow_negative_numbers = true)]
    Fit(FitArgs),
    /// Predict with a saved model on new inputs.
    #[command(allow_negative_numbers = true)]
    Predict(PredictArgs),
    /// Test-set metrics of a saved model (RMSE, MAE, NLPD, coverage; Gibbs risk with ε).
    #[command(allow_negative_numbers = true)]
    Evaluate(EvaluateArgs),
    /// PAC-Bayes certificate (bound on future risk) and leave-one-out estimate.
    #[command(allow_negative_numbers = true)]
    Certify(CertifyArgs),
    /// One self-contained HTML page on a saved model: its data, hyperparameters, certificates
    /// and their parts as pictures, leave-one-out, and test metrics with figures (inline SVG;
    /// it opens without a network).
    #[command(allow_negative_numbers = true)]
    Report(ReportArgs),
    /// Re-run one of the seed papers' experiments: tables (CSV, JSON) and figures (SVG).
    #[command(allow_negative_numbers = true)]
    Reproduce(ReproduceArgs),
    /// The main job on the data shipped in `data/`: fit a few models, print their summaries.
    Demo(DemoArgs),
    /// Split a CSV file into train and test files by a seeded random permutation (header
    /// and cells copied unchanged).
    #[command(allow_negative_numbers = true)]
    Split(SplitArgs),
}

impl Command {
    /// The subcommand's name as typed (`fit`, `evaluate`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Fit(_) => "fit",
            Command::Predict(_) => "predict",
            Command::Evaluate(_) => "evaluate",
            Command::Certify(_) => "certify",
            Command::Report(_) => "report",
            Command::Reproduce(_) => "reproduce",
            Command::Demo(_) => "demo",
            Command::Split(_) => "split",
        }
    }
}

/// Where the training data comes from and how its cells are read. The model keeps the
/// reading (columns, categories, missing-value fills, header) and applies it to later files.
#[derive(Debug, Args, Clone)]
pub struct DataArgs {
    /// CSV file with a header row (`.csv.gz` works too; see --no-header).
    #[arg(long)]
    pub data: PathBuf,
    /// Target column by name or 0-based index (default: the last column). Several real
    /// targets, comma separated (`--target a,b`), fit one regressor per output on the same
    /// inputs, each certified on its own and all at once (multi-output regression).
    #[arg(long)]
    pub target: Option<String>,
    /// Comma-separated columns to ignore (e.g. an id column).
    #[arg(long, value_delimiter = ',')]
    pub drop: Vec<String>,
    /// What a missing cell (`?`, empty, `NA`) means: `drop` its row, read it as `zero`, or fill
    /// it with its column's `mean` over the training rows (for a categorical column, the
    /// training frequencies). Later files get the same [default: an error naming the cell].
    #[arg(long, value_parser = words::<MissingPolicy>())]
    pub missing: Option<MissingPolicy>,
    /// The cells read as a missing value, comma separated and matched exactly (trimmed):
    /// `--na-values ''` reads only empty cells as missing, so that `NA` can be a value (a
    /// class, a code). The model keeps them for later files [default: empty, ?, NA, N/A, na,
    /// NaN, nan].
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "CELLS",
        allow_hyphen_values = true
    )]
    pub na_values: Option<Vec<String>>,
    /// Same as --missing drop.
    #[arg(long, conflicts_with_all = ["missing", "missing_as_zero"])]
    pub drop_missing: bool,
    /// Same as --missing zero.
    #[arg(long, conflicts_with = "missing")]
    pub missing_as_zero: bool,
    /// Read `y`/`yes` as +1 and `n`/`no` as −1 in numeric input columns (--categorical auto
    /// codes a y/n column the same way).
    #[arg(long)]
    pub yes_no: bool,
    /// Text (categorical) input columns, coded with the training categories (±1 for two
    /// categories, one input per category otherwise): `auto` finds every column holding text
    /// and says which; or name them, comma separated (also numeric codes).
    #[arg(long, value_delimiter = ',')]
    pub categorical: Vec<String>,
    /// The most distinct values a categorical column may have: a column with more (an
    /// identifier, free text) is refused, naming it, rather than coded as one input per
    /// value [default: 50]. ISO dates and times found by --categorical auto are refused
    /// whatever their count.
    #[arg(long, value_name = "N")]
    pub max_categories: Option<usize>,
    /// A category that later files have and the training data had not: `error` (naming
    /// column and value) or `ignore` (coded as all zeros) [default: error].
    #[arg(long, value_parser = words::<UnknownCategory>())]
    pub unknown_category: Option<UnknownCategory>,
    /// The file has no header line: its columns are named x1…xD and y (the last). A first
    /// line of numbers is otherwise refused.
    #[arg(long)]
    pub no_header: bool,
    /// Classifiers: the label coded +1 (the other is −1) [default: the second of the two in
    /// sorted order, numbers numerically].
    #[arg(long, allow_hyphen_values = true)]
    pub positive: Option<String>,
}

/// `pacgp fit`. Options that do not apply to the chosen method are an error (the library
/// decides which apply: `pacgp::spec::FitOptions::check`).
#[derive(Debug, Args)]
pub struct FitArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Method [default: gpr].
    #[arg(long, value_parser = words::<MethodName>())]
    pub method: Option<MethodName>,
    /// Kernel: `se-ard` (default), `se`, `matern12|32|52[-ard]`, `linear`, `poly2`, `const`,
    /// combined with `+` and `*`; `se-groups(1,1,4)` ties lengthscales over runs of inputs
    /// (here one each for inputs 1 and 2, one shared by inputs 3–6). With --categorical, a
    /// column one-hot coded into several inputs makes the default `se-groups(…)`: one
    /// lengthscale per table column (a note says so). Classifiers: laplace, ep and ivm fit it by ML-II (`--select
    /// ml2`, implied), or with a split prior (the bound's nine candidates are fixed SE
    /// kernels); pac-gpc: θ optimised from it on the grid.
    /// svm: the kernel k of the prior `k + 1`, with its initial values (no lengthscale scan).
    #[arg(long)]
    pub kernel: Option<String>,
    /// ε of the ε-band loss in the target's units (regression; stored with the model for
    /// `certify`). The PAC methods train for it; without it they take Φ⁻¹(3/4) ≈ 0.6745
    /// standard deviations of the training targets (a note says which ε that is).
    #[arg(long, allow_negative_numbers = true)]
    pub epsilon: Option<f64>,
    /// gpr: keep θ exactly as ML-II leaves it (scikit-learn's box 1e-5…1e5) instead of
    /// optimising inside the hyperparameter grid's range and snapping onto it. Such a model
    /// cannot be certified.
    #[arg(long)]
    pub no_snap: bool,
    /// vfe, fitc, dtc, pac-sgp, svgp, pac-svgp: number of inducing inputs, initialised by
    /// --inducing-init; greedy-sparse: number of basis points [default: 100, at most N].
    #[arg(long)]
    pub inducing: Option<usize>,
    /// vfe, fitc, dtc, pac-sgp, svgp, pac-svgp: where the inducing inputs start [default:
    /// kmeans].
    #[arg(long, value_parser = words::<InducingInit>())]
    pub inducing_init: Option<InducingInit>,
    /// vfe, fitc, dtc, pac-sgp, gpr: optimise first on a seeded subsample of this many rows,
    /// then on all rows from there (large data: most iterations at the subsample's cost; gpr's
    /// default: 500 on more than 20 inputs from 1 000 rows, none otherwise).
    #[arg(long, value_name = "ROWS")]
    pub pretrain: Option<usize>,
    /// vfe, fitc, dtc, pac-sgp: most optimiser iterations over all rows [default: 300 for
    /// vfe, fitc, dtc; 1000 for pac-sgp]; stopping there is reported. svgp, pac-svgp: L-BFGS
    /// iterations [default: 1000], or Adam steps with minibatches [default: 2000].
    #[arg(long)]
    pub max_iter: Option<usize>,
    /// svgp, pac-svgp: train by Adam on seeded minibatches of this many rows (--max-iter
    /// steps, default 2000) instead of L-BFGS on all rows [default: 1024 when N·M² > 3e8].
    #[arg(long, value_name = "ROWS")]
    pub batch_size: Option<usize>,
    /// Classifiers on K ≥ 2 classes: `one-vs-rest` (every classifier: class k against the
    /// rest, certified together) or `softmax` (laplace: the multi-class Laplace) [default:
    /// one-vs-rest when the target has more than two labels].
    #[arg(long, value_parser = words::<MultiClass>())]
    pub multiclass: Option<MultiClass>,
    /// Classifiers: likelihood [default: probit; logistic for laplace and pac-gpc only].
    #[arg(long, value_parser = words::<LikelihoodName>())]
    pub likelihood: Option<LikelihoodName>,
    /// Classifiers: how the kernel hyperparameters are chosen (both are certified)
    /// [default: ml2 with `--kernel` (laplace, ep, ivm), bound without].
    #[arg(long, value_parser = words::<Selection>())]
    pub select: Option<Selection>,
    /// ivm: active-set size d; sogp: the most basis vectors kept [default: 100, at most N].
    #[arg(long)]
    pub active_set: Option<usize>,
    /// svm: slack penalty [default: linear].
    #[arg(long, value_parser = words::<SlackKind>())]
    pub slack: Option<SlackKind>,
    /// svm: the box constraint C of the linear slack [default: the lowest LR-LOO of
    /// 0.1, 1, 10, 100].
    #[arg(long, allow_negative_numbers = true)]
    pub c: Option<f64>,
    /// svm: the RBF lengthscale on standardised inputs [default: the lowest LR-LOO of
    /// {½, 1, 2}·√D]; libsvm's default γ = 1/D is l = √(D/2).
    #[arg(long, allow_negative_numbers = true)]
    pub lengthscale: Option<f64>,
    /// svm: fit a free bias b from the data (`true`; Opper & Winther's SVM, no certificate) or
    /// put the bias into the prior kernel as a constant term (`false`, certified)
    /// [default: false].
    #[arg(long)]
    pub bias: Option<bool>,
    /// svm: dual solver [default: smo].
    #[arg(long, value_parser = words::<SvmSolver>())]
    pub solver: Option<SvmSolver>,
    /// mean-field: label flip probability κ in [0, 0.5) [default: 0].
    #[arg(long, allow_negative_numbers = true)]
    pub kappa: Option<f64>,
    /// mean-field, svm with --slack quadratic: input-noise variance v added to the kernel's
    /// diagonal (Opper & Winther eq. 17.16) [default: 1 for mean field; for the SVM the lowest
    /// LR-LOO of 0.3, 1.3, 3].
    #[arg(long, allow_negative_numbers = true)]
    pub input_noise: Option<f64>,
    /// Confidence δ of the PAC-Bayes bound that is trained, that selects the classifier's
    /// kernel, and that `certify` uses by default [default: 0.01].
    #[arg(long, allow_negative_numbers = true)]
    pub delta: Option<f64>,
    /// gpr, and laplace and ep with the kernel by ML-II: seeded random restarts of the
    /// hyperparameter optimiser (θ stays on the priced grid) [default: 0].
    #[arg(long)]
    pub restarts: Option<usize>,
    /// gpr: keep the noise variance σ² at this value (≥ 0, on the standardised targets)
    /// instead of fitting it by ML-II [default: fitted].
    #[arg(long, value_name = "VARIANCE", allow_negative_numbers = true)]
    pub noise: Option<f64>,
    /// Seed for every random choice (restarts, k-means, visiting orders, splits).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where to save the model (JSON); checked before fitting. Not needed with
    /// `--estimate-only`.
    #[arg(long, required_unless_present = "estimate_only")]
    pub out: Option<PathBuf>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// The memory the fit may use, e.g. `8G`, `512M` (k, M, G, T: powers of 1024), or `none`
    /// for no check. A fit whose estimated peak (the N × N matrices of gpr, pac-gp and the
    /// dense classifiers, N × M of the sparse methods) is larger is refused before it starts
    /// [default: the memory this machine has available, where it can be read].
    #[arg(long, value_name = "SIZE", value_parser = crate::words::memory_limit)]
    pub memory_limit: Option<pacgp::memory::MemoryLimit>,
    /// Stop optimising after this long, e.g. `30` or `30s`, `5m`, `1.5h`: the fit keeps the
    /// best hyperparameters found so far, completes the model at them and says so (the model,
    /// `fit` and `certify` report it stopped early; its certificate is exact for the
    /// hyperparameters reached, which are not the optimum). Ctrl-C does the same; a second
    /// Ctrl-C quits without saving [default: no limit].
    #[arg(long, value_name = "DURATION", value_parser = crate::words::time_limit)]
    pub time_limit: Option<std::time::Duration>,
    /// Print the fit's estimate (time on the threads given, flops, peak memory) and whether it
    /// fits in `--memory-limit`, then stop without fitting or writing `--out`.
    #[arg(long)]
    pub estimate_only: bool,
    /// pac-gp, pac-sgp, laplace, pac-gpc, pac-svgp: a data-dependent prior, the GP (Laplace)
    /// posterior of a random part A of the sample (`split:F`, F in (0, 1), or `split:auto` = the
    /// best of 0.3, 0.5, 0.7 with ln 3 charged); θ and the scalers are fitted on A by ML-II (from
    /// --kernel; pac-sgp: VFE with --inducing inputs, also fitted on A; pac-svgp: θ, Z and q(u)
    /// by the ELBO on A), the bound holds on the rest (`--seed` seeds the split).
    #[arg(long, value_parser = parsed::<SplitFraction>)]
    pub prior: Option<SplitFraction>,
    /// pac-gp, pac-sgp (and -sqrt): a coarse prior over ln θ (step 0.25 on [−6, 6]) instead of
    /// the 0.01 uniform grid.
    #[arg(long, value_parser = words::<HyperPriorName>())]
    pub hyper_prior: Option<HyperPriorName>,
    /// pac-gp, pac-sgp (and -sqrt): confidence constant of the trained bound; `certify` uses it
    /// by default [default: maurer].
    #[arg(long, value_parser = words::<Xi>())]
    pub xi: Option<Xi>,
    /// The inequality: pac-gp, pac-sgp, pac-svgp minimise `kl` (default) or `sqrt` (the same
    /// as --method pac-gp-sqrt); laplace, pac-gpc with --prior split certify with `kl` (default)
    /// or `catoni` (Catoni's bound at a λ fixed on a nested split of part A, no charge).
    #[arg(long, value_parser = words::<BoundName>())]
    pub bound: Option<BoundName>,
    /// laplace, pac-gpc with --prior split: the scale t of the prior's covariance,
    /// `GP(μ_A, t·k_A)`: a number t > 0, or `auto`, the best of 1, ½, ¼, ⅛, 1/16 on a nested
    /// split of part A (no charge) [default: 1].
    #[arg(long, value_parser = parsed::<PriorScale>, allow_negative_numbers = true)]
    pub prior_scale: Option<PriorScale>,
    /// laplace, pac-gpc with --prior split: the kernel structure of `P_A` [default: kernel].
    #[arg(long, value_parser = words::<PriorKernel>())]
    pub prior_kernel: Option<PriorKernel>,
    /// laplace, pac-gpc with --prior split: also certify with the parts' roles swapped and
    /// keep the lower certificate (`ln 2` more: `ln 6` with split:auto); the model file
    /// records the direction and `certify` reproduces it.
    #[arg(long)]
    pub both_directions: bool,
    /// Regression: prepare distribution-free prediction intervals for `predict --interval`:
    /// `jackknife+` (from the closed-form leave-one-out, no refits; gpr, pac-gp, vfe, fitc,
    /// dtc, pac-sgp, greedy-sparse; coverage ≥ 1 − 2α), `cv+[:K]` (the fit refitted without
    /// each of K folds, default 10; ≥ 1 − 2α − O(K/N)) or `split-conformal[:F]` (refitted on a
    /// seeded fraction F, default 0.5, calibrated on the rest; ≥ 1 − α). Classifiers: prepare
    /// conformal prediction sets for `predict --set` by `split-conformal[:F]` (≥ 1 − α) or, for
    /// laplace, ep, ivm, pac-gpc, mean-field, svm and svgp (binary or one-vs-rest; no split prior),
    /// `jackknife+` (from the approximate leave-one-out, no refits; ≥ 1 − 2α for exact
    /// leave-one-out models, approximate here).
    #[arg(long, value_parser = parsed::<IntervalMethod>)]
    pub intervals: Option<IntervalMethod>,
    /// With --intervals: the conformity score [default: absolute for regressors, lac for
    /// classifiers].
    #[arg(long, value_parser = words::<IntervalScore>())]
    pub interval_score: Option<IntervalScore>,
    /// Keep a fraction F in (0, 1) of the rows out of the fit (chosen by --seed before
    /// fitting) and certify the deployed predictor (predict's label, or the posterior mean
    /// within ε) on them by the test-set bound; `certify` takes the whole file, re-derives the
    /// split, and states both certificates at δ/2 each.
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub certify_holdout: Option<f64>,
    /// gpr with several --target columns: one θ and σ² for every output, chosen by the sum
    /// of their log marginal likelihoods (scikit-learn's multi-output regressor), instead of
    /// one kernel per output; each output still has its own certificate.
    #[arg(long)]
    pub shared_kernel: bool,
}

impl FitArgs {
    /// `--out`, which clap requires unless `--estimate-only` (whose path never reaches here).
    pub fn out(&self) -> &std::path::Path {
        self.out
            .as_deref()
            .unwrap_or_else(|| std::path::Path::new("model.json"))
    }

    /// The options as the library takes them (nothing interpreted here).
    pub fn options(&self) -> FitOptions {
        FitOptions {
            kernel: self.kernel.clone(),
            epsilon: self.epsilon,
            delta: self.delta,
            seed: Some(self.seed),
            noise_init: None,
            restarts: self.restarts,
            snap: self.no_snap.then_some(false),
            inducing: self.inducing,
            inducing_init: self.inducing_init,
            pretrain: self.pretrain,
            max_iter: self.max_iter,
            batch_size: self.batch_size,
            likelihood: self.likelihood,
            select: self.select,
            active_set: self.active_set,
            kappa: self.kappa,
            input_noise: self.input_noise,
            slack: self.slack,
            c: self.c,
            lengthscale: self.lengthscale,
            bias: self.bias,
            solver: self.solver,
            prior: self.prior,
            hyper_prior: self.hyper_prior,
            xi: self.xi,
            bound: self.bound,
            prior_scale: self.prior_scale,
            prior_kernel: self.prior_kernel,
            both_directions: self.both_directions.then_some(true),
            predictor: None,
            intervals: self.intervals,
            interval_score: self.interval_score,
            multiclass: self.multiclass,
            certify_holdout: self.certify_holdout,
            // The table's, set when it is read.
            input_groups: None,
            noise: self.noise,
            // The Python estimators' (scikit-learn's alpha, optimizer=None, normalize_y).
            alpha: None,
            kernel_params: None,
            normalize_y: None,
            shared_kernel: self.shared_kernel.then_some(true),
        }
    }

    /// The method asked for (gpr by default).
    pub fn method(&self) -> MethodName {
        self.method.unwrap_or(MethodName::Gpr)
    }
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
    /// Write predictions here as CSV, one row per data row (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A category the training data did not have: `error` or `ignore` (all-zero code)
    /// [default: as fitted].
    #[arg(long, value_parser = words::<UnknownCategory>())]
    pub unknown_category: Option<UnknownCategory>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Regression models: add the columns `lower` and `upper` of prediction intervals at this
    /// level 1 − α (e.g. 0.9), by the interval method the model was fitted with (an exact GP
    /// fitted without --intervals: jackknife+ with the gp-std score); what they guarantee is
    /// printed on stderr (and in the JSON).
    #[arg(long)]
    pub interval: Option<f64>,
    /// Classifiers fitted with --intervals: add the column `set`, each row's conformal
    /// prediction set at this level 1 − α (e.g. 0.9), its labels joined by `|` (empty: no
    /// label); what the sets guarantee is printed on stderr (and in the JSON).
    #[arg(long, value_name = "LEVEL")]
    pub set: Option<f64>,
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
    /// A category the training data did not have: `error` or `ignore` (all-zero code)
    /// [default: as fitted].
    #[arg(long, value_parser = words::<UnknownCategory>())]
    pub unknown_category: Option<UnknownCategory>,
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
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub epsilon: Vec<f64>,
    /// Classifiers: which Gibbs classifier the bound is about [default: the model's, latent].
    #[arg(long, value_parser = words::<GibbsPredictor>())]
    pub predictor: Option<GibbsPredictor>,
    /// Confidence δ: the bound holds with probability at least 1 − δ [default: the model's
    /// δ, 0.01 unless fitted with another].
    #[arg(long, allow_negative_numbers = true)]
    pub delta: Option<f64>,
    /// Leave-one-out beside the bound: the fast approximation where the model has one
    /// (auto), the fast approximation (closed form, cavities or linear response), exact LOO by
    /// N refits (`loo_exact_error`), both, or none.
    #[arg(long, default_value = "auto", value_parser = words::<LooRequest>())]
    pub loo: LooRequest,
    /// Confidence constant of the bound: maurer, seeger, sharp or catoni:λ [default: the one
    /// the model was trained with].
    #[arg(long, value_parser = parsed::<ConfidenceTerm>)]
    pub confidence_term: Option<ConfidenceTerm>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

impl CertifyArgs {
    /// The options as the library takes them (nothing interpreted here).
    pub fn options(&self) -> CertifyOptions {
        CertifyOptions {
            epsilons: self.epsilon.clone(),
            delta: self.delta,
            term: self.confidence_term,
            predictor: self.predictor,
            loo: self.loo,
        }
    }
}

/// `pacgp report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Model file written by `pacgp fit`.
    #[arg(long)]
    pub model: PathBuf,
    /// The training CSV the model was fitted on: the certificates are `certify`'s on it (the
    /// model file holds no training rows, only their digest).
    #[arg(long)]
    pub data: PathBuf,
    /// A test CSV with the target column: `evaluate`'s metrics, and for a binary classifier a
    /// reliability diagram and a risk–coverage curve, for a regressor the targets against the
    /// predicted means with 95% intervals.
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// A category of the --test file the training data did not have: `error` or `ignore`
    /// (all-zero code) [default: as fitted].
    #[arg(long, value_parser = words::<UnknownCategory>())]
    pub unknown_category: Option<UnknownCategory>,
    /// Leave-one-out beside the bound, as for `certify`.
    #[arg(long, default_value = "auto", value_parser = words::<LooRequest>())]
    pub loo: LooRequest,
    /// Where to write the HTML page; may not name an input file.
    #[arg(long)]
    pub out: PathBuf,
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

#[cfg(test)]
mod fuzz;
mod reproduce;

pub use reproduce::{Experiment, ReproduceArgs};
