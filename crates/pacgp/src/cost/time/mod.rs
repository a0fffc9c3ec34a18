//! What a fit costs in time: the floating-point operations of one fit, counted from N, D, M,
//! K, the kernel's parameter count and the loop counts each method's code runs, and the CPU
//! seconds they take at a fixed rate (issue 43, item 1: "know the cost first").
//!
//! Every method is an outer loop of `steps` (optimiser iterations, Newton steps summed over a
//! candidate menu, Adam steps) of `per_step` flops each, and `once` flops of work outside the
//! loop (the final posterior, the certificate). The counts are what the code does (cited
//! beside each formula); where a loop stops on convergence, the count is the typical number
//! of iterations it took on the workloads of docs/performance.md's "Cost model against
//! measurements", with the cap it cannot pass. The constants were read on A's rows of those
//! tables (2026-11-30) and D's (2026-12-01), which the CHANGELOG keeps: "the gpr row", "the
//! vfe row" and so on below are theirs. The page now shows F's rows (2026-12-03), which the
//! constants were not fitted to (`cost::tests` holds them as records).
//!
//! Seconds are flops over [`FLOPS_PER_CORE`], a documented constant rather than a start-up
//! measurement: a measurement at start-up would cost a second of every fit and read another
//! builder's load as this machine's speed. The estimate is of **CPU** seconds (user + system,
//! summed over threads); the wall time is about that over the threads the fit runs on.

use crate::inference::laplace::LaplaceSpec;
use crate::inference::FitWork;
use crate::objective::pac_gpc::PacGpcConfig;
use crate::regression::greedy::{GREEDY_FULL_UP_TO, GREEDY_KAPPA};
use crate::spec::{
    ClassifierHypers, GprSpec, Inference, IntervalMethod, Method, PacGpcSpec, SvgpSpec, SvmKernel,
    SvmSlack, SvmSpec, DEFAULT_BASIS,
};

mod classifiers;
use classifiers::{active_set_refit, classifier, pac_gpc, softmax, svm};

/// Flops per second of one core on a fit's work. The machine's DGEMM peak is 52 GFLOP/s a
/// core (104 on two, docs/performance.md), but a fit's work is Cholesky factors, triangular
/// inverses and solves and thin products, which reach about 60% of it: one ML-II evaluation
/// at N = 2 000 (N³ = 8·10⁹ flops) takes 254 ms on one thread (machine A, CHANGELOG.md,
/// "The arithmetic"), 31.5 GFLOP/s. A documented constant, not a start-up measurement: that would
/// cost a second of every fit and read another process's load as this machine's speed.
pub const FLOPS_PER_CORE: f64 = 31.5e9;

/// Flop-equivalents of one kernel entry (or of its adjoint) beyond its `3·D` for the
/// distance: the exponential, the scaling and the writes take about 16 ns an entry, 500 flops'
/// time at [`FLOPS_PER_CORE`]. Measured with `perf` on the SVM row of the measurements (a third
/// of its time in `svm::rows` and the vectorised exponential, for about 3.6·10⁷ entries) and
/// consistent with the vfe row (0.19 s an evaluation, of which the 4·N·M² products take 0.10 s).
const KERNEL_ENTRY_FLOPS: f64 = 500.0;

/// The time model of one fit: `steps` of `per_step` flops and `once` flops besides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    /// Iterations of the method's outer loop a fit typically takes (what a progress bar
    /// counts, where the loop is an optimiser's: [`Work::counts_optimiser_iterations`]).
    pub steps: f64,
    /// Flops of one step.
    pub per_step: f64,
    /// Flops done outside the loop.
    pub once: f64,
    /// Whether `steps` are optimiser iterations, the unit the stop watch counts
    /// ([`crate::optim::stop`]), so that progress can be shown against them.
    pub counts_optimiser_iterations: bool,
}

impl Work {
    /// The flops of the whole fit.
    pub fn flops(&self) -> f64 {
        self.steps * self.per_step + self.once
    }

    /// CPU seconds (summed over threads) at [`FLOPS_PER_CORE`].
    pub fn cpu_seconds(&self) -> f64 {
        self.flops() / FLOPS_PER_CORE
    }

    /// `times` fits of this work (candidates, one-vs-rest classes), one after the other.
    pub(super) fn repeated(self, times: f64) -> Work {
        Work {
            steps: self.steps * times,
            once: self.once * times,
            ..self
        }
    }

    /// This work, then `next` (a refit of the same method): the steps add up (the stop watch
    /// counts the refits' optimiser iterations too), `per_step` is their flop-weighted mean,
    /// so the flops are the sum.
    fn then(self, next: Work) -> Work {
        let steps = self.steps + next.steps;
        let flops = self.steps * self.per_step + next.steps * next.per_step;
        Work {
            steps,
            per_step: if steps > 0.0 { flops / steps } else { 0.0 },
            once: self.once + next.once,
            ..self
        }
    }

    /// This work and `flops` more outside the loop.
    fn and_once(self, flops: f64) -> Work {
        Work {
            once: self.once + flops,
            ..self
        }
    }

    /// An optimiser loop of `iterations` at `per_iteration` flops.
    fn optimiser(iterations: f64, per_iteration: f64, once: f64) -> Work {
        Work {
            steps: iterations,
            per_step: per_iteration,
            once,
            counts_optimiser_iterations: true,
        }
    }

    /// A loop the stop watch does not count (Newton steps, solver sweeps).
    fn other(steps: f64, per_step: f64, once: f64) -> Work {
        Work {
            steps,
            per_step,
            once,
            counts_optimiser_iterations: false,
        }
    }
}

/// The shape of a fit's input: N rows, D inputs, K classes (2 for binary and regression),
/// P kernel parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Rows N.
    pub n: f64,
    /// Inputs D.
    pub d: f64,
    /// Classes K.
    pub k: f64,
    /// Kernel parameters P.
    pub p: f64,
}

/// Flops of `entries` kernel entries on D inputs (distance and exponential).
fn kernel_flops(entries: f64, d: f64) -> f64 {
    entries * (3.0 * d + KERNEL_ENTRY_FLOPS)
}

/// The DGEMM peak of a core (104 GFLOP/s on two, docs/performance.md) over [`FLOPS_PER_CORE`]:
/// how much faster than the counted rate a matrix product's flops run.
const PRODUCT_SPEEDUP: f64 = 52.0e9 / FLOPS_PER_CORE;

/// Flops of `entries` entries of a Gram or cross-covariance matrix ([`crate::kernel::Kernel::gram`],
/// `cross`): [`kernel_flops`], but above [`crate::kernel::PRODUCT_DISTANCE_INPUTS`] inputs the
/// distances are one matrix product, 2·D flops an entry at the product's rate. On the
/// 341-input table of `scripts/make_wide_table.py` (N = 2 300) the estimate of the default fit
/// goes from 2.1× the measured CPU time to 1.8×.
fn gram_flops(entries: f64, d: f64) -> f64 {
    if d > crate::kernel::PRODUCT_DISTANCE_INPUTS as f64 {
        entries * (2.0 * d / PRODUCT_SPEEDUP + KERNEL_ENTRY_FLOPS)
    } else {
        kernel_flops(entries, d)
    }
}

/// Flops of the Cholesky factor of an `n × n` matrix.
fn cholesky_flops(n: f64) -> f64 {
    n * n * n / 3.0
}

/// Evaluations of the objective per L-BFGS iteration with the strong-Wolfe line search, in a
/// short run: 1.6 for ML-II on the gpr row of the measurements (35 evaluations in 22
/// iterations; the early iterations' searches take several).
const EVALUATIONS_PER_ITERATION: f64 = 1.6;

/// Evaluations per iteration in a run of hundreds of iterations: 1.1 (the vfe row: 329 in
/// 300).
const LONG_RUN_EVALUATIONS_PER_ITERATION: f64 = 1.1;

/// L-BFGS iterations of ML-II on an exact GP from the default start: 22 (35 evaluations) on
/// the N = 2 000, D = 8 synthetic regression of the measurements (34 evaluations on the peer
/// benchmark, `optim::LbfgsConfig`'s note); cap 200.
const ML2_ITERATIONS: f64 = 22.0;

/// One evaluation of the exact GP's evidence and gradient (`regression::exact`,
/// `NegLogMarginalLikelihood::value_and_gradient`): the Gram matrix, its Cholesky factor
/// (N³/3), `L⁻¹` (N³/3) and `C⁻¹ = L⁻ᵀL⁻¹` (N³/3) for the gradient's `½(ααᵀ − C⁻¹)`, and the
/// contraction of that with every `∂K/∂θ_j` (N²·P, reading the kept Gram matrix).
fn exact_evaluation(s: Shape) -> f64 {
    let nn = s.n * s.n;
    gram_flops(nn, s.d) + 3.0 * cholesky_flops(s.n) + 4.0 * nn * s.p
}

/// L-BFGS iterations of ML-II on wide inputs (more than [`crate::kernel::start::WIDE_INPUTS`],
/// started at the median distance and stopped by the stall rule
/// [`crate::kernel::start::WIDE_STALL`]): 103 (115 evaluations) on the 341-input table of
/// `scripts/make_wide_table.py` (N = 2 300), where without the rule the fit ran to the cap of
/// 200 moving the lengthscales of inputs without signal towards the box's end.
const WIDE_ML2_ITERATIONS: f64 = 103.0;

/// One L-BFGS iteration of ML-II on an exact GP: its evaluations ([`exact_evaluation`]).
fn exact_step(s: Shape) -> f64 {
    EVALUATIONS_PER_ITERATION * exact_evaluation(s)
}

/// L-BFGS iterations of ML-II on wide inputs after a warm start on a subsample
/// ([`crate::kernel::start::wide_pretrain`]): 54 on all rows after 128 on 500 of them, on the
/// same table.
const WIDE_PRETRAINED_ITERATIONS: f64 = 54.0;

/// L-BFGS iterations of that warm start on its subsample (the 128 above).
const WIDE_PRETRAIN_ITERATIONS: f64 = 128.0;

/// `gpr`: ML-II by L-BFGS from the start and each restart ([`ML2_ITERATIONS`] each, or
/// [`WIDE_ML2_ITERATIONS`] on wide inputs), and the final model (one more factor). A warm
/// start on `pretrain` rows (fewer than N) adds its iterations at the subsample's cost and
/// leaves [`WIDE_PRETRAINED_ITERATIONS`] on all rows.
fn exact_gp(s: Shape, restarts: f64, pretrain: Option<f64>) -> Work {
    let per = exact_step(s);
    let wide = s.d > crate::kernel::start::WIDE_INPUTS as f64;
    let (iterations, warm) = match (pretrain.filter(|&k| k < s.n), wide) {
        (Some(k), true) => (
            WIDE_PRETRAINED_ITERATIONS,
            WIDE_PRETRAIN_ITERATIONS * exact_step(Shape { n: k, ..s }),
        ),
        // Narrow inputs: counted as a whole run on each (the measurements have none).
        (Some(k), false) => (
            ML2_ITERATIONS,
            ML2_ITERATIONS * exact_step(Shape { n: k, ..s }),
        ),
        (None, true) => (WIDE_ML2_ITERATIONS, 0.0),
        (None, false) => (ML2_ITERATIONS, 0.0),
    };
    Work::optimiser(
        iterations * (1.0 + restarts),
        per,
        cholesky_flops(s.n) + warm,
    )
}

/// L-BFGS iterations of a PAC-GP bound over θ and σ² (`objective::pac_gp`, cap 200): 45, for
/// the 71 evaluations of kl-PAC-GP on boston (docs/performance.md, "Without a peer") at
/// [`EVALUATIONS_PER_ITERATION`].
const PAC_GP_ITERATIONS: f64 = 45.0;

/// `pac-gp`: the bound and its gradient cost an exact GP's evaluation (the factor, `C⁻¹` for
/// the gradient of the KL and of the predictive variances).
fn pac_gp(s: Shape) -> Work {
    let per = EVALUATIONS_PER_ITERATION * exact_evaluation(s);
    Work::optimiser(PAC_GP_ITERATIONS, per, cholesky_flops(s.n))
}

/// One evaluation of a sparse objective with Z trained (`regression::sparse::objective`,
/// `objective::pac_sgp`): `K_uf` (N·M entries) and its adjoint for the gradient in Z and θ
/// (N·M entries again, and N·M·(D + P) for the partials), and `products`·N·M² of dense
/// products: `V = L⁻¹K_uf`, `VVᵀ` and their backward pass, 4·N·M² for vfe, fitc and dtc,
/// 9·N·M² for pac-sgp (docs/performance.md's counts). Narrow products run at the counted rate:
/// on F (docs/performance.md) after the padding fix of `memory::zeros`, a vfe evaluation at
/// N = 20 000 took 0.50–0.63 of this count's time at every M from 50 to 500.
fn sparse_evaluation(s: Shape, m: f64, products: f64) -> f64 {
    let nm = s.n * m;
    2.0 * kernel_flops(nm, s.d)
        + products * nm * m
        + 4.0 * nm * (s.d + s.p)
        + 4.0 * cholesky_flops(m)
}

/// L-BFGS iterations of vfe, fitc, dtc over θ, σ² and Z: the cap, 300 — the objective keeps
/// improving slowly in Z, and the vfe row ran to it. On wide inputs too: on the 341-input
/// table of `scripts/make_wide_table.py` vfe, fitc and dtc ran to the cap, vfe's bound still
/// rising 2.4 nats per 10 iterations over the last hundred, where the stall rule asks 0.1.
const SPARSE_ITERATIONS: f64 = 300.0;

/// L-BFGS iterations of pac-sgp over θ, σ² and Z (`objective::pac_sgp`, cap 200): 22 on the
/// pac-sgp row (28 evaluations), stopped by the gradient test.
const PAC_SGP_ITERATIONS: f64 = 22.0;

/// Evaluations per pac-sgp iteration: 1.3 (28 in 22 on the pac-sgp row).
const PAC_SGP_EVALUATIONS_PER_ITERATION: f64 = 1.3;

/// k-means initialisation of Z (`regression::inducing_init`): up to 20 Lloyd iterations of
/// N·M·D distances.
fn kmeans_flops(s: Shape, m: f64) -> f64 {
    20.0 * 3.0 * s.n * m * s.d
}

/// `vfe`, `fitc`, `dtc` with M inducing inputs: [`SPARSE_ITERATIONS`] of about 1.1
/// evaluations ([`sparse_fit`]).
fn sparse(s: Shape, m: f64) -> Work {
    sparse_fit(
        s,
        m,
        4.0,
        SPARSE_ITERATIONS,
        LONG_RUN_EVALUATIONS_PER_ITERATION,
    )
}

/// `pac-sgp` with M inducing inputs: [`PAC_SGP_ITERATIONS`] of the bound's evaluation
/// ([`sparse_fit`]).
fn pac_sgp(s: Shape, m: f64) -> Work {
    sparse_fit(
        s,
        m,
        9.0,
        PAC_SGP_ITERATIONS,
        PAC_SGP_EVALUATIONS_PER_ITERATION,
    )
}

/// A sparse fit with Z trained: `iterations` of `per_iteration` evaluations
/// ([`sparse_evaluation`] with `products`·N·M²), the k-means start, and the final posterior
/// and objective or certificate (two passes more).
fn sparse_fit(s: Shape, m: f64, products: f64, iterations: f64, per_iteration: f64) -> Work {
    let eval = sparse_evaluation(s, m, products);
    Work::optimiser(
        iterations,
        per_iteration * eval,
        kmeans_flops(s, m) + 2.0 * eval,
    )
}

/// One evaluation of the sparse variational objective on `rows` rows (`svgp::objective`):
/// the kernel columns and their adjoint (2·rows·M entries), the whitened projections and their gradients (about
/// 10·rows·M², `spec::FULL_BATCH_WORK`'s count), and the `M × M` work of the factor, S and
/// the KL (6·M³, docs/performance.md's count for a minibatch step).
fn svgp_evaluation(s: Shape, m: f64, rows: f64) -> f64 {
    2.0 * kernel_flops(rows * m, s.d)
        + 10.0 * rows * m * m
        + 6.0 * m * m * m
        + 4.0 * rows * m * (s.d + s.p)
}

/// L-BFGS iterations of the full-batch sparse variational fit (cap 1 000; not measured).
const SVGP_ITERATIONS: f64 = 300.0;

/// `svgp` / `pac-svgp`: L-BFGS iterations on all rows, or the Adam steps on minibatches (the
/// step budget, 2 000 by default: Adam has no convergence test); then the k-means start and
/// the certificate on all rows (one evaluation). A split prior runs the optimiser on part A
/// and again on part B: the same row count in all for L-BFGS, twice the steps for Adam.
fn svgp(s: Shape, spec: &SvgpSpec) -> Work {
    let runs = if spec.split.is_some() { 2.0 } else { 1.0 };
    let m = basis(spec.inducing, s.n);
    let once = kmeans_flops(s, m) + svgp_evaluation(s, m, s.n);
    match spec.batch {
        None => Work::optimiser(
            spec.schedule
                .max_iter
                .map_or(SVGP_ITERATIONS, |c| c as f64)
                .min(SVGP_ITERATIONS),
            LONG_RUN_EVALUATIONS_PER_ITERATION * svgp_evaluation(s, m, s.n),
            once,
        ),
        Some(b) => Work::optimiser(
            runs * spec
                .schedule
                .max_iter
                .unwrap_or(crate::svgp::fit::DEFAULT_STEPS) as f64,
            svgp_evaluation(s, m, (b as f64).min(s.n)),
            once,
        ),
    }
}

/// A basis size as the spec resolves it: the given or default, at most N.
fn basis(given: Option<usize>, n: f64) -> f64 {
    (given.unwrap_or(DEFAULT_BASIS) as f64).min(n)
}

/// T. Zhang's greedy selection of M basis rows (`regression::greedy::select`) and the DTC
/// posterior on them. Up to [`GREEDY_FULL_UP_TO`] rows, Algorithm 1: the N × N Gram matrix,
/// then per step its product with the new column (2·N²) and the candidates' factor row
/// (2·N·k at basis size k, N·M² over the M steps). Beyond, κ-greedy: per step
/// κ = [`GREEDY_KAPPA`] kernel columns of N entries, their products with the basis columns
/// (2·N·k·κ, κ·N·M² over the M steps) and two dot products each (4·κ·N). Then the
/// posterior: N·M entries and about 3·N·M² flops.
fn greedy_selection(s: Shape, m: f64) -> f64 {
    let n = s.n;
    let steps = if n <= GREEDY_FULL_UP_TO as f64 {
        kernel_flops(n * n, s.d) + m * 2.0 * n * n + n * m * m
    } else {
        let kappa = (GREEDY_KAPPA as f64).min(n);
        m * (kernel_flops(kappa * n, s.d) + 4.0 * kappa * n) + kappa * n * m * m
    };
    steps + kernel_flops(n * m, s.d) + 3.0 * n * m * m
}

/// The time model of `method` (defaults filled in for the sample:
/// [`crate::spec::CheckedFitSpec::for_sample`]) on input of shape `s`.
pub fn work(method: &Method, s: Shape) -> Work {
    match method {
        // θ kept as given: one Gram matrix and one factor, nothing optimised.
        Method::Gpr(GprSpec {
            kernel_params: Some(_),
            ..
        }) => Work::other(0.0, 0.0, gram_flops(s.n * s.n, s.d) + cholesky_flops(s.n)),
        Method::Gpr(g) => {
            let pretrain = (g.pretrain)
                .or(crate::kernel::start::wide_pretrain(
                    s.d as usize,
                    s.n as usize,
                ))
                .map(|k| k as f64);
            exact_gp(s, g.restarts as f64, pretrain)
        }
        Method::PacGp(_) => pac_gp(s),
        Method::Sparse(sp) => sparse(s, basis(sp.inducing, s.n)),
        Method::PacSgp(sp) => pac_sgp(s, basis(sp.inducing, s.n)),
        Method::GreedySparse(g) => {
            // θ and σ² by ML-II on a seeded subset, then T. Zhang's greedy selection.
            let m = basis(g.basis, s.n);
            let subset = Shape {
                n: s.n.min(crate::regression::greedy::GREEDY_ML2_POINTS as f64),
                ..s
            };
            exact_gp(subset, 0.0, None).and_once(greedy_selection(s, m))
        }
        Method::Classifier(c) => classifier(s, &c.inference, &c.hypers, c.restarts as f64),
        Method::PacGpc(c) => pac_gpc(s, c),
        Method::Svm(spec) => svm(s, spec),
        Method::Svgp(spec) => svgp(s, spec),
        Method::OneVsRest(inner) => work(inner, Shape { k: 2.0, ..s }).repeated(s.k),
        Method::Softmax(spec) => softmax(s, &spec.hypers),
    }
}

/// The time model of a fit of `method` on input of shape `s` with its prediction intervals
/// or sets `intervals`: the fit, then the refits and held-out predictions of
/// [`interval_work`].
pub fn fit_work(method: &Method, intervals: Option<IntervalMethod>, s: Shape) -> Work {
    let fit = work(method, s);
    match intervals.and_then(|iv| interval_work(method, iv, s)) {
        Some(refits) => fit.then(refits),
        None => fit,
    }
}

/// What `fit::intervals` does after the fit for `iv`, if anything is counted: CV+ with K folds
/// refits `method` on each fold's complement (`(K − 1)/K` of the rows, `data::k_fold`) and
/// predicts the fold (all N rows once in all); split conformal at F refits on part A
/// (`round(F·N)` rows, `data::part_a_size`) and predicts part B. Jackknife+ refits nothing
/// but IVM's active sets (`active_set_refit`): the fit checks in `O(N)` that the downdate
/// applies (`LooDowndate::check_exact`, `check_sites`; a sparse regressor's check is
/// `O(N·M²)`, below a fit's count) and `predict` builds it.
pub fn interval_work(method: &Method, iv: IntervalMethod, s: Shape) -> Option<Work> {
    match iv {
        IntervalMethod::JackknifePlus => active_set_refit(method, s),
        IntervalMethod::CvPlus { folds } => {
            let k = folds as f64;
            // The folds' complements average (K − 1)/K of the rows.
            let train = Shape {
                n: s.n * (k - 1.0) / k,
                ..s
            };
            let refits = work(method, train).repeated(k);
            Some(refits.and_once(prediction_flops(method, train, s.n)))
        }
        IntervalMethod::SplitConformal { fraction } => {
            let part_a = Shape {
                n: (fraction * s.n).round(),
                ..s
            };
            let held = prediction_flops(method, part_a, s.n - part_a.n);
            Some(work(method, part_a).and_once(held))
        }
    }
}

/// Flops of predicting `rows` rows (mean and variance) with `method` fitted on input of shape
/// `fitted`: per row, the kernel entries against the model's basis (its N rows, or its M
/// inducing inputs) and one triangular solve of `basis²` for the variance
/// (`posterior::GaussianPosterior::predict`).
fn prediction_flops(method: &Method, fitted: Shape, rows: f64) -> f64 {
    let b = match super::footprint(method, fitted.k as usize) {
        super::Footprint::Dense { .. } => fitted.n,
        super::Footprint::Sparse { basis, .. } | super::Footprint::Streamed { basis, .. } => {
            (basis as f64).min(fitted.n)
        }
    };
    rows * (kernel_flops(b, fitted.d) + b * b)
}
