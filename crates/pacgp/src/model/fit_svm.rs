//! Fitting pipeline of the support vector machine as a certified model (seed 001 §17.4–17.7):
//! a bias-free SVM on the prior kernel `k + 1` (the constant term is the bias's Gaussian prior,
//! so the prior does not depend on the data), with the kernel and the slack chosen by the
//! linear-response leave-one-out error over candidates fixed in advance, and its PAC-Bayes
//! certificate as a GP's MAP ([`crate::svm::certificate`]), paying for the candidates and the μ
//! grid.

use crate::bounds::ConfidenceTerm;
use crate::certificate::PenaltyTerm;
use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::svm::certificate::{svm_certificate, SvmCertificateConfig};
use crate::svm::{svm, Slack, SvmConfig, SvmFit, SvmSolver};

use super::{sample_digest, FitReport, FittedModel, Task, FORMAT};

/// Options of [`fit_svm_model`].
#[derive(Clone, Debug)]
pub struct SvmOptions {
    /// The candidate kernels (one fixes it), e.g. SE at [`svm_lengthscales`]; each is used
    /// as `k + 1`.
    pub kernels: Vec<Kernel>,
    /// The slack penalties scanned (one value fixes it).
    pub slacks: Vec<Slack>,
    /// Dual solver.
    pub solver: SvmSolver,
    /// Fit a free bias b from the data (the seed's SVM) instead of the certified construction;
    /// such a model predicts and has a LOO, but no certificate.
    pub bias: bool,
    /// Confidence δ of the certificate.
    pub delta: f64,
    /// Confidence constant.
    pub term: ConfidenceTerm,
}

/// The lengthscales scanned on standardised inputs, fixed before seeing data: `{½, 1, 2}·√D`.
pub fn svm_lengthscales(d: usize) -> Vec<f64> {
    let base = (d as f64).sqrt();
    [0.5, 1.0, 2.0].iter().map(|m| m * base).collect()
}

/// The default slack menus: C ∈ {0.1, 1, 10, 100} (linear) or v ∈ {0.3, 1.3, 3} (quadratic).
pub fn default_slacks(quadratic: bool) -> Vec<Slack> {
    if quadratic {
        [0.3, 1.3, 3.0].map(|v| Slack::Quadratic { v }).to_vec()
    } else {
        [0.1, 1.0, 10.0, 100.0]
            .map(|c| Slack::Linear { c })
            .to_vec()
    }
}

/// The kernel and slack menus the options ask for: `kernel` (or SE with `lengthscale`) fixes
/// the kernel, else SE at [`svm_lengthscales`]; `c` (linear slack) or `v` (quadratic) fixes the
/// slack, else [`default_slacks`]. Shared by the CLI and the Python module.
pub fn svm_candidates(
    d: usize,
    kernel: Option<Kernel>,
    lengthscale: Option<f64>,
    quadratic: bool,
    c: Option<f64>,
    v: Option<f64>,
) -> (Vec<Kernel>, Vec<Slack>) {
    let slacks = match (quadratic, c, v) {
        (false, Some(c), _) => vec![Slack::Linear { c }],
        (true, _, Some(v)) => vec![Slack::Quadratic { v }],
        (q, _, _) => default_slacks(q),
    };
    let kernels = match (kernel, lengthscale) {
        (Some(k), _) => vec![k],
        (None, Some(l)) => vec![Kernel::se_iso(l, 1.0)],
        (None, None) => svm_lengthscales(d)
            .into_iter()
            .map(|l| Kernel::se_iso(l, 1.0))
            .collect(),
    };
    (kernels, slacks)
}

/// The prior kernel of a certified SVM: `k` plus a unit constant for the bias.
pub fn svm_prior_kernel(kernel: &Kernel) -> Kernel {
    Kernel::Sum {
        left: Box::new(kernel.clone()),
        right: Box::new(Kernel::Constant { ln_variance: 0.0 }),
    }
}

/// SVMs for every (kernel, slack) candidate (in parallel; bias-free on `k + 1` unless `base`
/// fits a bias), the one of fewest linear-response LOO errors with its fit (the first on
/// ties, so the choice is deterministic).
fn select_by_lr_loo(
    x: faer::MatRef<'_, f64>,
    y: &[f64],
    kernels: &[Kernel],
    slacks: &[Slack],
    base: &SvmConfig,
) -> Result<(Kernel, SvmConfig, SvmFit)> {
    use rayon::prelude::*;
    // A free bias needs no constant term in the kernel.
    let prior = |k: &Kernel| {
        if base.bias {
            k.clone()
        } else {
            svm_prior_kernel(k)
        }
    };
    let mut candidates: Vec<(Kernel, SvmConfig)> = kernels
        .iter()
        .flat_map(|k| {
            slacks
                .iter()
                .map(move |&slack| (prior(k), SvmConfig { slack, ..*base }))
        })
        .collect();
    let mut fits: Vec<(usize, SvmFit)> = candidates
        .par_iter()
        .map(|(k, cfg)| {
            let fit = svm(k, x, y, cfg)?;
            Ok((crate::svm::loo::svm_loo(&fit, k, x, y)?.errors, fit))
        })
        .collect::<Result<_>>()?;
    let best = (0..fits.len())
        .min_by_key(|&i| fits[i].0)
        .ok_or(crate::Error::Empty {
            what: "SVM kernel and slack candidates",
        })?;
    let (kernel, config) = candidates.swap_remove(best);
    Ok((kernel, config, fits.swap_remove(best).1))
}

/// Fit and certify an SVM on `train` (labels ±1): the candidate (kernel, slack) of fewest
/// LR-LOO errors, the bias-free SVM on its `k + 1`, and the lowest bound over the μ grid; the
/// penalty is `ln |candidates| + ln |μ grid|`.
pub fn fit_svm_model(train: &Dataset, labels: LabelMap, opts: &SvmOptions) -> Result<FittedModel> {
    crate::data::check_binary_labels(&train.y)?;
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let y = &train.y;
    let base = SvmConfig {
        solver: opts.solver,
        bias: opts.bias,
        ..Default::default()
    };
    let (prior, config, fit) = select_by_lr_loo(x.as_ref(), y, &opts.kernels, &opts.slacks, &base)?;
    let n_candidates = opts.kernels.len() * opts.slacks.len();
    if opts.bias {
        return uncertified_svm(train, labels, x_scaler, x.as_ref(), prior, config, fit);
    }
    let cert_cfg = SvmCertificateConfig {
        delta: opts.delta,
        term: opts.term,
        extra_penalty: (n_candidates as f64).ln(),
        ..Default::default()
    };
    let cert = svm_certificate(&prior, x.as_ref(), y, &fit, &cert_cfg)?;
    let choices = vec![
        PenaltyTerm::candidates(n_candidates, "SVM kernel × slack by LR-LOO"),
        PenaltyTerm::candidates(cert_cfg.mu_grid.len(), "scale μ of the posterior mean"),
    ];
    Ok(FittedModel {
        format: FORMAT.into(),
        input_coding: Default::default(),
        method: "svm".into(),
        feature_names: train.feature_names.clone(),
        target_name: train.target_name.clone(),
        n_train: train.n(),
        x_scaler,
        posterior: cert.posterior,
        task: Task::Svm {
            labels,
            mu: cert.mu,
            config,
            bias: 0.0,
        },
        epsilon: None,
        report: FitReport {
            optimiser: None,
            objective: Some(cert.certificate.bound),
            objective_name: "pac_bayes_bound_gibbs_error".into(),
            jitter_used: 0.0,
            theta_on_grid: true,
            choices,
            penalty: None,
            inference: Some(fit.report),
        },
        training_digest: Some(sample_digest(train)),
        seed: 0,
    })
}

/// An SVM with a bias fitted from the data: the posterior holds its MAP mean without the bias
/// (prior covariance, μ = 1) and the task keeps b; there is no certificate to store.
fn uncertified_svm(
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
    Ok(FittedModel {
        format: FORMAT.into(),
        input_coding: Default::default(),
        method: "svm".into(),
        feature_names: train.feature_names.clone(),
        target_name: train.target_name.clone(),
        n_train: train.n(),
        x_scaler,
        posterior,
        task: Task::Svm {
            labels,
            mu: 1.0,
            config,
            bias: b,
        },
        epsilon: None,
        report: FitReport {
            optimiser: None,
            objective: Some(fit.dual_objective),
            objective_name: "svm_dual_objective".into(),
            jitter_used: 0.0,
            theta_on_grid: false,
            choices: Vec::new(),
            penalty: None,
            inference: Some(fit.report),
        },
        training_digest: Some(sample_digest(train)),
        seed: 0,
    })
}
