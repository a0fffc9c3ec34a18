//! The certified support vector machine (Opper & Winther §17.4–17.7): a bias-free SVM on the
//! prior kernel `k + 1` (the constant term is the bias's Gaussian prior, so the prior does not
//! depend on the data), with the kernel and the slack chosen by the linear-response
//! leave-one-out error over candidates fixed in advance, and its PAC-Bayes certificate as a
//! GP's MAP ([`crate::svm::certificate`]), paying for the candidates and the μ grid.

use super::MethodFit;
use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::loo::LooClassification;
use crate::model::{FitReport, FittedModel, Task};
use crate::plan::{svm_menu, svm_prior_kernel};
use crate::select::Menu;
use crate::spec::{CheckedFitSpec, SvmSpec};
use crate::svm::certificate::{svm_certificate, SvmCertificateConfig};
use crate::svm::solution::SvmSolution;
use crate::svm::{InputRows, KernelRows, SharedRows, Slack, SvmConfig, SvmFit, SvmSolver};

/// The menu's choice: the prior kernel, the solver settings, the fit, and a note for each
/// candidate that failed and was skipped.
type Choice = (Kernel, SvmConfig, SvmFit, Vec<String>);

/// SVMs for every (kernel, slack) candidate of `menu` (in parallel; bias-free on `k + 1`
/// unless `base` fits a bias), the one of fewest linear-response LOO errors with its fit (the
/// first on ties, so the choice is deterministic; [`Menu::by_bound_par_skipping`]; a menu of
/// one needs no LOO). A candidate whose fit or LOO fails (e.g. a singular margin-SV matrix)
/// is skipped with a note; the menu's price still counts it, since it was on the menu fixed
/// before the data. Only if every candidate fails is it an error (the first failure).
fn select_by_lr_loo(
    x: faer::MatRef<'_, f64>,
    y: &[f64],
    menu: &Menu<(Kernel, Slack)>,
    base: &SvmConfig,
) -> Result<Choice> {
    // A free bias needs no constant term in the kernel.
    let prior = |k: &Kernel| {
        if base.bias {
            k.clone()
        } else {
            svm_prior_kernel(k)
        }
    };
    let single = menu.len() == 1;
    let shared = shared_rows(x, menu, base, prior)?;
    let (chosen, failed) = menu.by_bound_par_skipping(|(k, slack), _price| {
        let (k, cfg) = (
            prior(k),
            SvmConfig {
                slack: *slack,
                ..*base
            },
        );
        // The kernel's shared rows with this slack's shift, else rows of its own; the solve
        // and the leave-one-out read the same ones.
        crate::svm::check_shapes(x, y)?;
        let shift = slack.diagonal_shift();
        let rows: Box<dyn KernelRows + '_> = match shared.iter().find(|(kernel, _)| *kernel == k) {
            Some((_, rows)) => Box::new(rows.shifted(shift)),
            None => Box::new(InputRows::new(&k, x, shift)?),
        };
        let fit = crate::svm::solve(rows.as_ref(), y, &cfg, None)?;
        // The LOO error only ranks candidates: a menu of one needs none.
        let errors = if single {
            0
        } else {
            let margins = crate::svm::loo::svm_loo_margins(&fit, rows.as_ref(), y)?;
            LooClassification::from_margins(margins, 0).errors
        };
        Ok(((k, cfg, fit), errors as f64))
    })?;
    let notes = failed
        .into_iter()
        .map(|(i, e)| {
            let (k, slack) = &menu.items[i];
            format!(
                "SVM candidate {} with {slack:?} skipped: {e} (still priced in the menu's ln |candidates|)",
                prior(k).describe()
            )
        })
        .collect();
    let (kernel, config, fit) = chosen.value;
    Ok((kernel, config, fit, notes))
}

/// One [`SharedRows`] per prior kernel of a menu with several slacks per kernel, when they
/// fit in the solver's row cache (`base.cache_mb`): the slacks' solves and leave-one-outs
/// then compute each kernel row once. Empty otherwise (each solve keeps its own cache).
fn shared_rows(
    x: faer::MatRef<'_, f64>,
    menu: &Menu<(Kernel, Slack)>,
    base: &SvmConfig,
    prior: impl Fn(&Kernel) -> Kernel,
) -> Result<Vec<(Kernel, SharedRows)>> {
    let mut kernels: Vec<Kernel> = Vec::new();
    for (k, _) in &menu.items {
        let k = prior(k);
        if !kernels.contains(&k) {
            kernels.push(k);
        }
    }
    if kernels.len() == menu.len() || !SharedRows::fit_in(x.nrows(), kernels.len(), base.cache_mb) {
        return Ok(Vec::new());
    }
    kernels
        .into_iter()
        .map(|k| Ok((k.clone(), SharedRows::new(&k, x)?)))
        .collect()
}

/// `svm`: fit and certify on `train` (labels ±1): the candidate (kernel, slack) of fewest
/// LR-LOO errors, the bias-free SVM on its `k + 1`, and the lowest bound over the μ grid; the
/// penalty is `ln |candidates| + ln |μ grid|`. With a free bias, no certificate.
impl MethodFit for SvmSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, labels: LabelMap) -> Result<FittedModel> {
        let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
        let x = x_scaler.transform(train.x.as_ref())?;
        let y = &train.y;
        let base = SvmConfig {
            solver: self.solver,
            bias: self.bias,
            max_iter: match self.solver {
                SvmSolver::Adatron => crate::svm::adatron::DEFAULT_SWEEPS,
                SvmSolver::Smo => SvmConfig::default().max_iter,
            },
            // The same fixed point as the seed's plain sweeps in O(√κ) sweeps instead of O(κ)
            // (`reproduce opper-winther` keeps the seed's).
            adatron_momentum: self.solver == SvmSolver::Adatron,
            ..Default::default()
        };
        let menu = svm_menu(self, train.d())?;
        let (prior, config, fit, notes) = select_by_lr_loo(x.as_ref(), y, &menu, &base)?;
        if self.bias {
            let mut model = uncertified_svm(
                spec,
                train,
                labels,
                x_scaler,
                x.as_ref(),
                prior,
                config,
                fit,
            )?;
            model.report.notes.extend(notes);
            return Ok(model);
        }
        let cert_cfg = SvmCertificateConfig {
            delta: spec.delta,
            choices: vec![menu.price()],
            ..Default::default()
        };
        let cert = svm_certificate(&prior, x.as_ref(), y, &fit, &cert_cfg)?;
        let task = Task::Svm {
            posterior: cert.posterior,
            labels,
            mu: cert.mu,
            config,
            bias: 0.0,
        };
        let report = FitReport {
            objective: Some(cert.certificate.bound),
            objective_name: "pac_bayes_bound_gibbs_error".into(),
            inference: Some(fit.report.clone()),
            notes,
            ..Default::default()
        };
        let solution = SvmSolution::new(fit, prior, config, x.as_ref(), y);
        let mut model = FittedModel::assemble(spec, train, x_scaler, task, report);
        model.svm_solution = Some(std::sync::Arc::new(solution));
        Ok(model)
    }
}

/// An SVM with a bias fitted from the data: the posterior holds its MAP mean without the bias
/// (prior covariance, μ = 1) and the task keeps b; there is no certificate.
#[allow(clippy::too_many_arguments)]
fn uncertified_svm(
    spec: &CheckedFitSpec,
    train: &Dataset,
    labels: LabelMap,
    x_scaler: Standardizer,
    x: faer::MatRef<'_, f64>,
    kernel: Kernel,
    config: SvmConfig,
    fit: SvmFit,
) -> Result<FittedModel> {
    let b = fit.b;
    // The mean function Σ y_j α_j k(x, x_j); b is kept beside it in the task.
    let unbiased = SvmFit {
        bias: false,
        ..fit.clone()
    };
    let posterior = crate::svm::certificate::svm_posterior(&kernel, x, &train.y, &unbiased, 1.0)?;
    let task = Task::Svm {
        posterior,
        labels,
        mu: 1.0,
        config,
        bias: b,
    };
    let report = FitReport {
        objective: Some(fit.dual_objective),
        objective_name: "svm_dual_objective".into(),
        inference: Some(fit.report),
        ..Default::default()
    };
    Ok(FittedModel::assemble(spec, train, x_scaler, task, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A candidate whose solver fails (here a zero kernel, which the Adatron refuses) is
    /// skipped with a note and the others are chosen from; with no other candidate the
    /// failure is the error.
    #[test]
    fn a_failing_candidate_is_skipped_with_a_note() {
        let x = faer::Mat::from_fn(20, 1, |i, _| i as f64 / 10.0 - 1.0);
        let y: Vec<f64> = (0..20)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        let base = SvmConfig {
            solver: SvmSolver::Adatron,
            bias: true,
            ..Default::default()
        };
        let kernels = [Kernel::se_iso(1.0, 0.0), Kernel::se_iso(1.0, 1.0)];
        let slack = Slack::Linear { c: 1.0 };
        let menu = |ks: &[Kernel]| {
            Menu::charged(ks.iter().map(|k| (k.clone(), slack)).collect(), "kernel")
        };
        let (k, _, fit, notes) = select_by_lr_loo(x.as_ref(), &y, &menu(&kernels), &base).unwrap();
        assert_eq!(k, kernels[1]);
        assert_eq!(fit.alpha.len(), 20);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("skipped"), "{notes:?}");
        assert!(select_by_lr_loo(x.as_ref(), &y, &menu(&kernels[..1]), &base).is_err());
    }

    /// A menu with several slacks per kernel solves on rows shared between them, and chooses
    /// as independent solves (each with its own rows and leave-one-out) do: the same
    /// candidate, with the same α bit for bit.
    #[test]
    fn shared_rows_choose_as_independent_solves() {
        let x = faer::Mat::from_fn(40, 2, |i, j| ((i * (j + 2)) as f64 * 0.37).sin());
        let y: Vec<f64> = (0..40)
            .map(|i| {
                if x[(i, 0)] + 0.4 * x[(i, 1)] + 0.3 * (i as f64 * 1.7).cos() > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let kernels = [Kernel::se_iso(0.3, 0.0), Kernel::se_iso(0.6, 0.0)];
        let slacks = [Slack::Linear { c: 0.5 }, Slack::Linear { c: 5.0 }];
        let menu = Menu::charged(
            kernels
                .iter()
                .flat_map(|k| slacks.iter().map(move |&c| (k.clone(), c)))
                .collect(),
            "kernel × slack",
        );
        let base = SvmConfig {
            bias: false,
            ..Default::default()
        };
        assert!(!shared_rows(x.as_ref(), &menu, &base, svm_prior_kernel)
            .unwrap()
            .is_empty());
        let (k, cfg, fit, notes) = select_by_lr_loo(x.as_ref(), &y, &menu, &base).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        let (mut best, mut best_errors) = (None, usize::MAX);
        for (kernel, slack) in &menu.items {
            let prior = svm_prior_kernel(kernel);
            let own = SvmConfig {
                slack: *slack,
                ..base
            };
            let alone = crate::svm::svm(&prior, x.as_ref(), &y, &own).unwrap();
            let errors = crate::svm::loo::svm_loo(&alone, &prior, x.as_ref(), &y)
                .unwrap()
                .errors;
            if errors < best_errors {
                (best, best_errors) = (Some((prior, own, alone)), errors);
            }
        }
        let (prior, own, alone) = best.unwrap();
        assert_eq!((k, cfg.slack), (prior, own.slack));
        let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&fit.alpha), bits(&alone.alpha));
    }

    /// A free bias with the default menus on small 2-D data whose points come in duplicate
    /// pairs: two equal margin support vectors make the LR-LOO's margin-SV matrix singular for
    /// some candidates. The fit still succeeds, from the other candidates, with a note for
    /// each one skipped.
    #[test]
    fn free_bias_default_menu_survives_a_singular_margin_matrix() {
        let base_x = [
            (-1.0, -0.4),
            (-0.6, 0.5),
            (-0.2, -0.9),
            (0.1, 0.3),
            (0.4, -0.2),
            (0.7, 0.8),
            (1.0, -0.6),
            (-0.9, 0.9),
        ];
        let n = 2 * base_x.len();
        let x = faer::Mat::from_fn(n, 2, |i, j| {
            let p = base_x[i / 2];
            if j == 0 {
                p.0
            } else {
                p.1
            }
        });
        let y: Vec<f64> = (0..n)
            .map(|i| {
                let p = base_x[i / 2];
                if p.0 + 0.3 * p.1 > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let kernels = crate::plan::svm_lengthscales(2);
        let menu = Menu::charged(
            kernels
                .iter()
                .flat_map(|&l| {
                    crate::plan::default_slacks(false)
                        .into_iter()
                        .map(move |c| (Kernel::se_iso(l, 1.0), c))
                })
                .collect(),
            "kernel × slack",
        );
        let base = SvmConfig {
            bias: true,
            ..Default::default()
        };
        let singular = menu.items.iter().any(|(k, slack)| {
            let cfg = SvmConfig {
                slack: *slack,
                ..base
            };
            let fit = crate::svm::svm(k, x.as_ref(), &y, &cfg).unwrap();
            crate::svm::loo::svm_loo(&fit, k, x.as_ref(), &y).is_err()
        });
        assert!(
            singular,
            "the data should make some candidate's LR-LOO fail"
        );
        let (_, _, fit, notes) = select_by_lr_loo(x.as_ref(), &y, &menu, &base).unwrap();
        assert_eq!(fit.alpha.len(), n);
        assert!(!notes.is_empty() && notes.iter().all(|n| n.contains("skipped")));
    }
}
