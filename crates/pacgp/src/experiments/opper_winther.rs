//! Seed 001 §17.7 (Opper & Winther): the SVM and naive mean field on Wisconsin breast cancer,
//! Table 17.1 (exact and linear-response LOO, 10-fold CV error, time with and without the
//! LOO estimate, iterations) and Figure 17.2 (embedding strengths α and margins).
//!
//! **Protocol.** The 683 complete rows (id column `sample_code_number` dropped, see
//! [`csv_options`]), inputs standardised over all 683 (as the seed). RBF kernel
//! `exp(−‖x − x'‖²/(2l²))` plus v on the diagonal (eq. 17.16); the seed's "σ² = 0.15/N,
//! v = 1.3" reads `exp(−(0.15/9)‖x − x'‖²)`, i.e. `l = √30 ≈ 5.48`, which is on the grid.
//! SVM: quadratic slack with bias. Mean field: flip noise κ. Ten folds from
//! `k_fold(683, 10, seed)`; the hyperparameters of each algorithm minimise its
//! linear-response LOO error on the training set of the last fold (614 examples, the rows
//! `permutation(683, seed)[..614]`, the set the mean-field test uses) over the grids of
//! [`OpperWintherConfig`], ties to the first grid point. Table 17.1 is measured on that
//! training set; the 10-fold CV error uses the selected hyperparameters on every fold.
//! Times are wall-clock seconds of this process (the seed's are CPU seconds on an Alpha).

use std::time::Instant;

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::{k_fold, CsvOptions, Dataset, Standardizer};
use crate::error::{Error, Result};
use crate::inference::mean_field::{mean_field, MeanFieldConfig};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::loo::{mean_field_exact_loo, mean_field_loo};
use crate::svm::loo::{svm_exact_loo_gram, svm_loo};
use crate::svm::select::{select_by_loo, SvmGrid};
use crate::svm::{svm, Slack, SvmConfig, SvmSolver};

/// CSV options for `breast_cancer_wisconsin_complete683.csv` (drop the id column).
pub fn csv_options() -> CsvOptions {
    CsvOptions {
        drop_columns: vec!["sample_code_number".into()],
        ..Default::default()
    }
}

/// Settings of [`run`]; the defaults are the seed's protocol as read in the module doc.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpperWintherConfig {
    /// Seed of the fold permutation.
    pub seed: u64,
    /// Number of CV folds (10).
    pub folds: usize,
    /// RBF lengthscales scanned by both algorithms.
    pub lengthscales: Vec<f64>,
    /// Input-noise variances v scanned by both algorithms.
    pub input_noise: Vec<f64>,
    /// Flip probabilities κ scanned by mean field.
    pub kappas: Vec<f64>,
    /// SVM solver for Table 17.1 (the seed: the parallel Adatron).
    pub svm_solver: SvmSolver,
    /// SVM stopping tolerance (Adatron: the seed's ftol 1e-5 on `max δα²`; SMO: gap).
    pub svm_tol: f64,
    /// Nesterov momentum for the Adatron (not the seed's; fewer sweeps, same solution).
    pub adatron_momentum: bool,
    /// Mean-field initial learning rate η (seed: 0.05).
    pub mean_field_learning_rate: f64,
    /// Mean-field stopping tolerance on `max δα²` (seed: 1e-5).
    pub mean_field_ftol: f64,
    /// Mean-field iteration budget.
    pub mean_field_max_iter: usize,
    /// Compute the exact LOO by refits (slow for mean field: 614 refits).
    pub exact_loo: bool,
}

impl Default for OpperWintherConfig {
    fn default() -> Self {
        Self {
            seed: 17,
            folds: 10,
            lengthscales: vec![2.0, 3.0, 4.5, 30f64.sqrt(), 7.0],
            input_noise: vec![0.3, 0.7, 1.3, 3.0],
            kappas: vec![0.0, 0.02],
            svm_solver: SvmSolver::Adatron,
            svm_tol: 1e-5,
            adatron_momentum: false,
            mean_field_learning_rate: 0.05,
            mean_field_ftol: 1e-5,
            mean_field_max_iter: 1000,
            exact_loo: true,
        }
    }
}

/// One row of Table 17.1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table171Row {
    /// "SVM (Adatron)", "SVM (SMO)" or "naive mean field".
    pub algorithm: String,
    /// Selected lengthscale.
    pub lengthscale: f64,
    /// Selected input noise v.
    pub input_noise: f64,
    /// Selected κ (0 for the SVM).
    pub kappa: f64,
    /// Exact LOO error on the training set (None if not computed).
    pub loo_exact: Option<f64>,
    /// Linear-response LOO error on the training set.
    pub loo_approx: f64,
    /// 10-fold CV error over all 683 rows.
    pub cv_error: f64,
    /// 10-fold CV misclassifications.
    pub cv_errors: usize,
    /// Seconds for the fit plus the linear-response LOO.
    pub seconds_with_loo: f64,
    /// Seconds for the fit alone.
    pub seconds_without_loo: f64,
    /// Seconds for the exact LOO by refits.
    pub seconds_exact_loo: Option<f64>,
    /// Iterations (Adatron sweeps, SMO pair steps, mean-field iterations).
    pub iterations: usize,
    /// Margin support vectors (SVM) or examples (mean field): the size of the matrix inverted
    /// by the linear-response LOO.
    pub loo_matrix_size: usize,
    /// Training-set size.
    pub n_train: usize,
}

/// One example of Figure 17.2, in the SVM's ascending-α order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure172Point {
    /// Rank in ascending SVM α.
    pub rank: usize,
    /// Training-row index (into the 614-example training set).
    pub example: usize,
    /// SVM α_i.
    pub alpha_svm: f64,
    /// Mean-field α_i rescaled to the SVM solution's Euclidean length.
    pub alpha_mf_rescaled: f64,
    /// SVM margin `y_i(f_i + b)` with `f = (K + vI)(y∘α)`.
    pub margin_svm: f64,
    /// Mean-field margin `y_i⟨f_i⟩`.
    pub margin_mf: f64,
    /// The SVM's linear-response LOO calls it an error.
    pub loo_error_svm: bool,
    /// Mean field's linear-response LOO calls it an error.
    pub loo_error_mf: bool,
}

/// Table 17.1 and Figure 17.2.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpperWintherResult {
    /// Table 17.1 rows.
    pub table: Vec<Table171Row>,
    /// Figure 17.2 data.
    pub figure: Vec<Figure172Point>,
}

fn rows_of(x: MatRef<'_, f64>, y: &[f64], idx: &[usize]) -> (Mat<f64>, Vec<f64>) {
    (
        Mat::from_fn(idx.len(), x.ncols(), |i, j| x[(idx[i], j)]),
        idx.iter().map(|&i| y[i]).collect(),
    )
}

fn svm_cfg(cfg: &OpperWintherConfig, solver: SvmSolver, v: f64) -> SvmConfig {
    SvmConfig {
        slack: Slack::Quadratic { v },
        bias: true,
        solver,
        tol: match solver {
            SvmSolver::Adatron => cfg.svm_tol,
            SvmSolver::Smo => 1e-3,
        },
        max_iter: 1_000_000,
        adatron_momentum: cfg.adatron_momentum,
        ..Default::default()
    }
}

fn mf_cfg(cfg: &OpperWintherConfig, v: f64) -> MeanFieldConfig {
    MeanFieldConfig {
        input_noise: v,
        learning_rate: cfg.mean_field_learning_rate,
        ftol: cfg.mean_field_ftol,
        max_iter: cfg.mean_field_max_iter,
    }
}

/// Mean-field (l, v, κ) minimising the LR-LOO errors over the grid (first on ties).
fn select_mean_field(
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &OpperWintherConfig,
) -> Result<(f64, f64, f64)> {
    let mut grid = Vec::new();
    for &l in &cfg.lengthscales {
        for &v in &cfg.input_noise {
            for &kappa in &cfg.kappas {
                grid.push((l, v, kappa));
            }
        }
    }
    let errs: Vec<Result<usize>> = grid
        .par_iter()
        .map(|&(l, v, kappa)| {
            let mf = mf_cfg(cfg, v);
            let fit = mean_field(
                &Kernel::se_iso(l, 1.0),
                &Likelihood::flip_noise(kappa)?,
                x,
                y,
                &mf,
            )?;
            Ok(mean_field_loo(&fit, y)?.errors)
        })
        .collect();
    let errs: Vec<usize> = errs.into_iter().collect::<Result<_>>()?;
    let best = (0..grid.len())
        .min_by_key(|&i| (errs[i], i))
        .ok_or(Error::Empty {
            what: "mean-field grid",
        })?;
    Ok(grid[best])
}

/// Seed 001 §17.7 on `data` (the 683 complete Wisconsin rows, labels ±1).
pub fn run(data: &Dataset, cfg: &OpperWintherConfig) -> Result<OpperWintherResult> {
    let s = Standardizer::fit(data.x.as_ref(), &data.feature_names)?;
    let x = s.transform(data.x.as_ref())?;
    let y = &data.y;
    let folds = k_fold(y.len(), cfg.folds, cfg.seed)?;
    let (train_idx, _) = folds.last().ok_or(Error::Empty { what: "folds" })?;
    let (xt, yt) = rows_of(x.as_ref(), y, train_idx);

    // SVM: (l, v) by LR-LOO, quadratic slack with bias.
    let grid = SvmGrid {
        lengthscales: cfg.lengthscales.clone(),
        slacks: cfg
            .input_noise
            .iter()
            .map(|&v| Slack::Quadratic { v })
            .collect(),
    };
    let sel = select_by_loo(xt.as_ref(), &yt, &grid, &svm_cfg(cfg, SvmSolver::Smo, 1.0))?;
    let (l_svm, v_svm) = (sel.best.lengthscale, sel.best.slack.diagonal_shift());
    let k_svm = Kernel::se_iso(l_svm, 1.0);

    let mut table = Vec::new();
    let mut svm_for_figure = None;
    for solver in [cfg.svm_solver, SvmSolver::Smo] {
        if solver == SvmSolver::Smo && cfg.svm_solver == SvmSolver::Smo && !table.is_empty() {
            break;
        }
        let c = svm_cfg(cfg, solver, v_svm);
        let t0 = Instant::now();
        let fit = svm(&k_svm, xt.as_ref(), &yt, &c)?;
        let t_fit = t0.elapsed().as_secs_f64();
        let loo = svm_loo(&fit, &k_svm, xt.as_ref(), &yt)?;
        let t_loo = t0.elapsed().as_secs_f64();
        let (loo_exact, t_exact) = if cfg.exact_loo {
            let t1 = Instant::now();
            let gram = k_svm.gram(xt.as_ref())?;
            let e = svm_exact_loo_gram(gram.as_ref(), &yt, &c, &fit)?;
            (Some(e.loo.rate), Some(t1.elapsed().as_secs_f64()))
        } else {
            (None, None)
        };
        let cv_errors = cv_svm(x.as_ref(), y, &folds, &k_svm, &c)?;
        table.push(Table171Row {
            algorithm: format!(
                "SVM ({})",
                match solver {
                    SvmSolver::Adatron => "Adatron",
                    SvmSolver::Smo => "SMO",
                }
            ),
            lengthscale: l_svm,
            input_noise: v_svm,
            kappa: 0.0,
            loo_exact,
            loo_approx: loo.rate,
            cv_error: cv_errors as f64 / y.len() as f64,
            cv_errors,
            seconds_with_loo: t_loo,
            seconds_without_loo: t_fit,
            seconds_exact_loo: t_exact,
            iterations: fit.report.iterations,
            loo_matrix_size: fit.sets.margin_sv.len(),
            n_train: yt.len(),
        });
        if svm_for_figure.is_none() {
            svm_for_figure = Some((fit, loo));
        }
    }

    // Naive mean field: (l, v, κ) by its LR-LOO.
    let (l_mf, v_mf, kappa) = select_mean_field(xt.as_ref(), &yt, cfg)?;
    let k_mf = Kernel::se_iso(l_mf, 1.0);
    let lik = Likelihood::flip_noise(kappa)?;
    let mfc = mf_cfg(cfg, v_mf);
    let t0 = Instant::now();
    let mf = mean_field(&k_mf, &lik, xt.as_ref(), &yt, &mfc)?;
    let t_fit = t0.elapsed().as_secs_f64();
    let mf_loo = mean_field_loo(&mf, &yt)?;
    let t_loo = t0.elapsed().as_secs_f64();
    let (mf_exact, t_exact) = if cfg.exact_loo {
        let t1 = Instant::now();
        let e = mean_field_exact_loo(&k_mf, &lik, xt.as_ref(), &yt, &mfc)?;
        (Some(e.rate), Some(t1.elapsed().as_secs_f64()))
    } else {
        (None, None)
    };
    let mut cv_mf = 0;
    for (tr, te) in &folds {
        let (xa, ya) = rows_of(x.as_ref(), y, tr);
        let (xb, yb) = rows_of(x.as_ref(), y, te);
        let f = mean_field(&k_mf, &lik, xa.as_ref(), &ya, &mfc)?;
        let m = f.fit.posterior.predict(xb.as_ref())?;
        cv_mf += (0..yb.len())
            .filter(|&i| !(yb[i] * m.mean[i] > 0.0))
            .count();
    }
    table.push(Table171Row {
        algorithm: "naive mean field".into(),
        lengthscale: l_mf,
        input_noise: v_mf,
        kappa,
        loo_exact: mf_exact,
        loo_approx: mf_loo.rate,
        cv_error: cv_mf as f64 / y.len() as f64,
        cv_errors: cv_mf,
        seconds_with_loo: t_loo,
        seconds_without_loo: t_fit,
        seconds_exact_loo: t_exact,
        iterations: mf.fit.report.iterations,
        loo_matrix_size: yt.len(),
        n_train: yt.len(),
    });

    let (sfit, sloo) = svm_for_figure.ok_or(Error::Empty { what: "SVM fit" })?;
    let figure = figure_17_2(
        &sfit.alpha,
        &sfit.margins,
        &sloo.loo_margins,
        &mf.alpha_mf,
        &yt.iter()
            .zip(&mf.mean_activation)
            .map(|(y, f)| y * f)
            .collect::<Vec<_>>(),
        &mf_loo.loo_margins,
    );
    Ok(OpperWintherResult { table, figure })
}

/// 10-fold CV misclassifications of the SVM with fixed hyperparameters.
fn cv_svm(
    x: MatRef<'_, f64>,
    y: &[f64],
    folds: &[(Vec<usize>, Vec<usize>)],
    k: &Kernel,
    c: &SvmConfig,
) -> Result<usize> {
    let mut wrong = 0;
    for (tr, te) in folds {
        let (xa, ya) = rows_of(x, y, tr);
        let (xb, yb) = rows_of(x, y, te);
        let fit = svm(k, xa.as_ref(), &ya, c)?;
        let d = fit.decision_function(k, xa.as_ref(), &ya, xb.as_ref())?;
        wrong += (0..yb.len()).filter(|&i| !(yb[i] * d[i] > 0.0)).count();
    }
    Ok(wrong)
}

/// Figure 17.2: examples sorted by ascending SVM α, mean-field α rescaled to the SVM
/// solution's length, margins, and which examples each LR-LOO counts as errors.
fn figure_17_2(
    alpha_svm: &[f64],
    margin_svm: &[f64],
    loo_svm: &[f64],
    alpha_mf: &[f64],
    margin_mf: &[f64],
    loo_mf: &[f64],
) -> Vec<Figure172Point> {
    let norm = |a: &[f64]| a.iter().map(|v| v * v).sum::<f64>().sqrt();
    let scale = norm(alpha_svm) / norm(alpha_mf).max(f64::MIN_POSITIVE);
    let mut order: Vec<usize> = (0..alpha_svm.len()).collect();
    order.sort_by(|&a, &b| alpha_svm[a].total_cmp(&alpha_svm[b]));
    order
        .iter()
        .enumerate()
        .map(|(rank, &i)| Figure172Point {
            rank,
            example: i,
            alpha_svm: alpha_svm[i],
            alpha_mf_rescaled: scale * alpha_mf[i],
            margin_svm: margin_svm[i],
            margin_mf: margin_mf[i],
            loo_error_svm: !(loo_svm[i] > 0.0),
            loo_error_mf: !(loo_mf[i] > 0.0),
        })
        .collect()
}
