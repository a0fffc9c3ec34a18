//! The work of the classifiers' fits: Laplace, EP and mean field on the dense N × N sites, their
//! type-II ML, IVM and SOGP's active sets, pac-gpc, the SVM's SMO and the softmax Laplace.

use super::*;

/// Flop-equivalents of one entry of a product of an N × N matrix with a vector, a loop bound
/// by memory (8 bytes an entry from RAM): 32, about 1 ns, read from the mean-field row (its
/// CPU time less the dense factors' count, over 9 × 493 products of 2 000²).
const MATVEC_ENTRY_FLOPS: f64 = 32.0;

/// One classifier fit at a fixed kernel (`inference`), from the work its home counts
/// ([`FitWork`]): on dense sites the Gram matrix, the method's loop, and the Gibbs certificate
/// at the training rows (the latent variances through `V = L⁻¹W½K`, N³, and the KL's trace,
/// N³/3); on an active set its cross-covariances and `N·M²` updates.
fn classifier_fit(s: Shape, inference: &Inference) -> f64 {
    match inference.settings().fit_work() {
        FitWork::Dense {
            factors,
            cubes,
            matvecs,
        } => {
            let n = s.n;
            let loop_flops = factors * cholesky_flops(n)
                + cubes * n * n * n
                + matvecs * MATVEC_ENTRY_FLOPS * n * n;
            gram_flops(n * n, s.d) + loop_flops + n * n * n + cholesky_flops(n)
        }
        FitWork::ActiveSet {
            basis: given,
            entry_flops,
            ..
        } => {
            let m = basis(given, s.n);
            kernel_flops(s.n * m, s.d) + entry_flops * s.n * m * m
        }
    }
}

/// The classifiers' candidate menu: nine SE kernels (`plan::classifier_candidates`).
const CANDIDATES: f64 = 9.0;

/// ML-II iterations of a classifier's θ on the grid (cap 200): like the exact GP's (not
/// measured).
const CLASSIFIER_ML2_ITERATIONS: f64 = 22.0;

/// ML-II iterations of a classifier's θ on wide inputs (more than
/// [`crate::kernel::start::WIDE_INPUTS`], started at the median distance and stopped by the
/// stall rule [`crate::kernel::start::WIDE_STALL`]): 72 for Laplace (79 for EP, 72 for the
/// softmax Laplace's three classes) on the first 1 000 rows of the 341-input table of
/// `scripts/make_wide_table.py` labelled by `price` against its median (tercile bands for
/// softmax), `--select ml2`; from lengthscales 1 the search stopped at its start.
const WIDE_CLASSIFIER_ML2_ITERATIONS: f64 = 72.0;

/// ML-II iterations of a classifier's θ on `s`'s inputs: [`WIDE_CLASSIFIER_ML2_ITERATIONS`]
/// on wide inputs, else [`CLASSIFIER_ML2_ITERATIONS`].
fn classifier_ml2_iterations(s: Shape) -> f64 {
    match s.d > crate::kernel::start::WIDE_INPUTS as f64 {
        true => WIDE_CLASSIFIER_ML2_ITERATIONS,
        false => CLASSIFIER_ML2_ITERATIONS,
    }
}

/// A binary classifier by `inference`: each of the nine candidates fitted and certified (or
/// ML-II iterations of one fit each); the sparse ones (IVM, SOGP) cost N·M² per candidate.
pub(super) fn classifier(
    s: Shape,
    inference: &Inference,
    hypers: &ClassifierHypers,
    restarts: f64,
) -> Work {
    let per_fit = classifier_fit(s, inference);
    match hypers {
        ClassifierHypers::Candidates => Work::other(CANDIDATES, per_fit, 0.0),
        ClassifierHypers::Grid { .. } | ClassifierHypers::Split(_) => Work::optimiser(
            classifier_ml2_iterations(s) * (1.0 + restarts),
            EVALUATIONS_PER_ITERATION * (per_fit + s.n * s.n * s.n),
            per_fit,
        ),
    }
}

/// IVM's jackknife+ sets: the fit finds each model's active rows by one IVM fit at its fitted
/// kernel (`fit::intervals`), as `certify`'s leave-one-out does; other methods count nothing.
pub(super) fn active_set_refit(method: &Method, s: Shape) -> Option<Work> {
    match method {
        Method::Classifier(c) if crate::spec::active_set_classifier(method) => {
            Some(Work::other(1.0, classifier_fit(s, &c.inference), 0.0))
        }
        Method::OneVsRest(inner) => {
            active_set_refit(inner, Shape { k: 2.0, ..s }).map(|w| w.repeated(s.k))
        }
        _ => None,
    }
}

/// Flops of one evaluation of pac-gpc's bound and gradient over N³: the factor of
/// `B = I + Π½KΠ½` (N³/3), `B⁻¹` (N³), `(AD)ᵀ(AD)` and `P diag(g_v) Pᵀ` (N³ each), 3.3 N³
/// counted; 3.5 N³ read from the pac-gpc row (106 s of CPU over about 950 evaluations at
/// N = 1 000).
const PAC_GPC_EVALUATION_CUBES: f64 = 3.5;

/// `pac-gpc` (`objective::pac_gpc`): from a Laplace fit, the sites (and on the grid θ)
/// optimised by L-BFGS for the bound, to the cap of [`PacGpcConfig`]'s optimiser (500, which
/// the pac-gpc row reached: 552 evaluations); with the candidate kernels, each first
/// screened by a short run (`screen_iter`, 40) from its own Laplace fit; with the split
/// prior, part A's ML-II (as a classifier's, on wide inputs too) before the sites' run.
pub(super) fn pac_gpc(s: Shape, c: &PacGpcSpec) -> Work {
    let laplace = Inference::Laplace(LaplaceSpec {
        likelihood: c.likelihood,
    });
    let per_fit = classifier_fit(s, &laplace);
    let config = PacGpcConfig::default();
    let (full, screen) = (config.lbfgs.max_iter as f64, config.screen_iter as f64);
    let eval = PAC_GPC_EVALUATION_CUBES * s.n * s.n * s.n;
    let sites = Work::optimiser(full, LONG_RUN_EVALUATIONS_PER_ITERATION * eval, per_fit);
    match c.hypers {
        ClassifierHypers::Candidates => Work::optimiser(
            CANDIDATES * screen + full,
            LONG_RUN_EVALUATIONS_PER_ITERATION * eval,
            (CANDIDATES + 1.0) * per_fit,
        ),
        ClassifierHypers::Split(_) => Work::optimiser(
            classifier_ml2_iterations(s),
            EVALUATIONS_PER_ITERATION * (per_fit + s.n * s.n * s.n),
            0.0,
        )
        .then(sites),
        // θ moves too: a Gram matrix and its P derivatives at every evaluation.
        ClassifierHypers::Grid { .. } => Work::optimiser(
            full,
            LONG_RUN_EVALUATIONS_PER_ITERATION
                * (eval + gram_flops(s.n * s.n, s.d) + 2.0 * s.p * s.n * s.n),
            per_fit,
        ),
    }
}

/// SMO pair updates per row of the SVM's dual (`svm::smo`), averaged over the slack menu:
/// 0.3, 0.4, 1.6 and 8.4 per row at C = 0.1, 1, 10, 100 (N = 3 000, the SVM row of the
/// measurements); each update scans the N gradients for the next pair and updates them.
const SMO_UPDATES_PER_ROW: f64 = 2.7;

/// Flop-equivalents per row of one SMO update's scan and gradient update (scalar code: about
/// 60 flops' time per row, a third of the SVM row's time in `smo::solve` by `perf`).
const SMO_FLOPS_PER_ROW: f64 = 60.0;

/// Kernel rows one SMO solve computes, as a share of N: 716–1 433 of 3 000 on the SVM row.
const SMO_ROWS_SHARE: f64 = 1.0 / 3.0;

/// `svm`: per (kernel, slack) candidate the SMO solve — the kernel rows it computes
/// ([`SMO_ROWS_SHARE`] of N, N entries each, on demand) and its pair updates — then the
/// linear-response leave-one-out over the margin vectors (a factor of at most N³/3, far
/// fewer rows in practice) and the certificate, whose posterior has the prior's covariance
/// (no N × N factor: the μ grid's Gibbs risks read the N·S mean already computed).
pub(super) fn svm(s: Shape, spec: &SvmSpec) -> Work {
    let kernels = match spec.kernel {
        SvmKernel::Menu => 3.0,
        _ => 1.0,
    };
    let slacks = match spec.slack {
        SvmSlack::Linear { c: None } => 4.0,
        SvmSlack::Quadratic { v: None } => 3.0,
        _ => 1.0,
    };
    let rows = kernel_flops(SMO_ROWS_SHARE * s.n * s.n, s.d);
    let updates = SMO_UPDATES_PER_ROW * s.n * SMO_FLOPS_PER_ROW * s.n;
    Work::other(kernels * slacks, rows + updates, 0.0)
}

/// The multi-class Laplace (`inference::softmax`): per Newton step K factors of N × N and the
/// `M = Σ_c E_c` factor (GPML Alg. 3.3), for each of the nine candidates; with θ by ML-II
/// (`hypers` on the grid), [`classifier_ml2_iterations`] of that fit and the evidence's
/// gradient (K products of N × N more, GPML Alg. 5.2).
pub(super) fn softmax(s: Shape, hypers: &ClassifierHypers) -> Work {
    let per_step = (s.k + 1.0) * cholesky_flops(s.n) + s.k * s.n * s.n * s.n;
    let per_fit =
        gram_flops(s.n * s.n, s.d) + (crate::inference::laplace::NEWTON_STEPS + 1.0) * per_step;
    match hypers {
        ClassifierHypers::Grid { .. } => Work::optimiser(
            classifier_ml2_iterations(s),
            EVALUATIONS_PER_ITERATION * (per_fit + s.k * s.n * s.n * s.n),
            per_fit,
        ),
        _ => Work::other(CANDIDATES, per_fit, 0.0),
    }
}
