//! The certified support vector machine (Opper & Winther §17.4–17.7): a bias-free SVM on the
//! prior kernel `k + 1` (the constant term is the bias's Gaussian prior, so the prior does not
//! depend on the data), with the kernel and the slack chosen by the linear-response
//! leave-one-out error over candidates fixed in advance, and its PAC-Bayes certificate as a
//! GP's MAP ([`crate::svm::certificate`]), paying for the candidates and the μ grid.

use crate::certificate::PenaltyTerm;
use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::model::{FitReport, FittedModel, Task};
use crate::spec::{CheckedFitSpec, SvmKernel, SvmSlack, SvmSpec};
use crate::svm::certificate::{svm_certificate, SvmCertificateConfig};
use crate::svm::{Slack, SvmConfig, SvmFit};

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

/// The kernel and slack menus of an SVM spec for `d` inputs: a given kernel (or SE with a
/// given lengthscale) fixes the kernel, else SE at [`svm_lengthscales`]; a given C or v fixes
/// the slack, else [`default_slacks`].
pub fn svm_candidates(s: &SvmSpec, d: usize) -> Result<(Vec<Kernel>, Vec<Slack>)> {
    let slacks = match s.slack {
        SvmSlack::Linear { c: Some(c) } => vec![Slack::Linear { c }],
        SvmSlack::Quadratic { v: Some(v) } => vec![Slack::Quadratic { v }],
        SvmSlack::Linear { c: None } => default_slacks(false),
        SvmSlack::Quadratic { v: None } => default_slacks(true),
    };
    let kernels = match &s.kernel {
        SvmKernel::Given(spec) => vec![Kernel::from_spec(spec, d)?],
        SvmKernel::Lengthscale(l) => vec![Kernel::se_iso(*l, 1.0)],
        SvmKernel::Menu => svm_lengthscales(d)
            .into_iter()
            .map(|l| Kernel::se_iso(l, 1.0))
            .collect(),
    };
    Ok((kernels, slacks))
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

/// The choices of a certified SVM and their price: the (kernel, slack) candidates by LR-LOO
/// and the scale μ of the posterior mean.
pub fn svm_choices(n_candidates: usize, n_mu: usize) -> Vec<PenaltyTerm> {
    vec![
        PenaltyTerm::candidates(n_candidates, "SVM kernel × slack by LR-LOO"),
        PenaltyTerm::candidates(n_mu, "scale μ of the posterior mean"),
    ]
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
