//! The certified support vector machine (Opper & Winther §17.4–17.7): a bias-free SVM on the
//! prior kernel `k + 1` (the constant term is the bias's Gaussian prior, so the prior does not
//! depend on the data), with the kernel and the slack chosen by the linear-response
//! leave-one-out error over candidates fixed in advance, and its PAC-Bayes certificate as a
//! GP's MAP ([`crate::svm::certificate`]), paying for the candidates and the μ grid.

use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::model::{FitReport, FittedModel, Task};
use crate::plan::{svm_candidates, svm_prior_kernel};
use crate::spec::{CheckedFitSpec, SvmSpec};
use crate::svm::certificate::{svm_certificate, SvmCertificateConfig};
use crate::svm::{Slack, SvmConfig, SvmFit};

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
            let fit = crate::svm::svm(k, x, y, cfg)?;
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

/// `svm`: fit and certify on `train` (labels ±1): the candidate (kernel, slack) of fewest
/// LR-LOO errors, the bias-free SVM on its `k + 1`, and the lowest bound over the μ grid; the
/// penalty is `ln |candidates| + ln |μ grid|`. With a free bias, no certificate.
pub fn svm(
    spec: &CheckedFitSpec,
    s: &SvmSpec,
    train: &Dataset,
    labels: LabelMap,
) -> Result<FittedModel> {
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let y = &train.y;
    let base = SvmConfig {
        solver: s.solver,
        bias: s.bias,
        ..Default::default()
    };
    let (kernels, slacks) = svm_candidates(s, train.d())?;
    let (prior, config, fit) = select_by_lr_loo(x.as_ref(), y, &kernels, &slacks, &base)?;
    if s.bias {
        return uncertified_svm(
            spec,
            train,
            labels,
            x_scaler,
            x.as_ref(),
            prior,
            config,
            fit,
        );
    }
    let n_candidates = kernels.len() * slacks.len();
    let cert_cfg = SvmCertificateConfig {
        delta: spec.delta,
        extra_penalty: (n_candidates as f64).ln(),
        ..Default::default()
    };
    let cert = svm_certificate(&prior, x.as_ref(), y, &fit, &cert_cfg)?;
    let task = Task::Svm {
        labels,
        mu: cert.mu,
        config,
        bias: 0.0,
    };
    let report = FitReport {
        objective: Some(cert.certificate.bound),
        objective_name: "pac_bayes_bound_gibbs_error".into(),
        inference: Some(fit.report),
        ..Default::default()
    };
    Ok(FittedModel::assemble(
        spec,
        train,
        x_scaler,
        cert.posterior,
        task,
        report,
    ))
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
    Ok(FittedModel::assemble(
        spec, train, x_scaler, posterior, task, report,
    ))
}
