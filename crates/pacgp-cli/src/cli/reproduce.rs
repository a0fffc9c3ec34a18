//! `pacgp reproduce`'s arguments: which experiment, and the settings the experiments share.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

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
    /// pac-sgp-inducing, zhang-kin40k: only these numbers of inducing inputs (comma separated);
    /// svgp-real: the number of inducing inputs (the first given).
    #[arg(long, value_delimiter = ',')]
    pub m: Vec<usize>,
    /// pac-sgp-inducing: only these datasets (kin40k, pol); ivm-uci and risk-coverage:
    /// breast-cancer, ripley, crabs, house-votes; tighter-bounds: boston, kin40k, pol,
    /// breast-cancer, crabs; intervals: boston, kin40k, pol; multiclass: iris, wine, digits;
    /// deployed: breast-cancer, crabs, house-votes, ripley, iris, wine; svgp-real: kin40k, pol,
    /// mnist-2v3.
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
    /// tighter-bounds: number of seeded splits (default 10, quick 3); intervals: splits
    /// (default 20, quick 3); multiclass: splits (default 10, at most 5 for digits, with
    /// scikit-learn's GP classifier on the first digits split only; quick 2); deployed: splits
    /// (default 10, quick 2).
    #[arg(long)]
    pub reps: Option<usize>,
    /// tighter-bounds: seed of the first split (splits first-rep .. first-rep + reps).
    #[arg(long, default_value_t = 0)]
    pub first_rep: usize,
    /// multiclass: a Python with numpy and scikit-learn; runs `scripts/multiclass_peers.py`
    /// (GaussianProcessClassifier one-vs-rest, SVC) on every split right after pacgp's fits.
    #[arg(long)]
    pub peers: Option<PathBuf>,
    /// intervals: leave out the timing of jackknife+ in closed form against N refits (the
    /// refits dominate the full run's time; the coverage table does not need them).
    #[arg(long)]
    pub no_timing: bool,
    /// deployed: the fraction F of each training part that the holdout fit keeps out for its
    /// test-set certificate (`fit --certify-holdout F`; default 0.2).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub holdout: Option<f64>,
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
    /// Prediction intervals on held-out data: coverage and width of jackknife+ (absolute and
    /// GP-std scores, from the closed-form leave-one-out), split conformal, CV+ (boston) and
    /// the Gaussian band over 20 seeded splits of boston, kin40k and pol (gpr; VFE on kin40k and
    /// pol) at α = 0.1, 0.05, against each method's guarantee; jackknife+ in closed form
    /// against N = 2000 refits (`--quick`: 3 splits, smaller subsamples; `--reps`, `--datasets`).
    Intervals,
    /// Multi-class classifiers (one-vs-rest Laplace and SVM, the softmax Laplace) on iris,
    /// wine and digits over seeded 80/20 splits: accuracy, certificate, held-out Gibbs error,
    /// fit time; with `--peers`, scikit-learn's GaussianProcessClassifier (one-vs-rest) and SVC
    /// on the same splits (`--quick`: 2 splits of iris and wine).
    Multiclass,
    /// Certificates on what `predict` returns: Laplace, EP, the SVM and svgp on breast-cancer,
    /// crabs, house-votes, ripley, iris and wine (one-vs-rest) over 10 seeded 70/30 splits — the
    /// Gibbs and the derandomised deployed certificates beside the held-out Gibbs and deployed
    /// errors, the test-set certificate of a fit with a holdout (`--holdout F`, default 0.2),
    /// and split-conformal sets' coverage and size at α = 0.1 (`--quick`: 2 splits of crabs and
    /// ripley, Laplace and the SVM; `--reps`, `--datasets`).
    Deployed,
    /// Issue 41: svgp (ELBO) and pac-svgp (PAC-Bayes bound) at M = 100 on kin40k and pol
    /// thresholded at the training targets' median and on MNIST 2 vs 3: test error, test
    /// negative log probability, Gibbs and deployed certificates, fit time (`--quick`: 300
    /// rows, M = 8; `--m` sets M, `--datasets` selects).
    SvgpReal,
}
