//! Fitting pipeline of the support vector machine as a certified model (seed 001 §17.4–17.7):
//! the RBF lengthscale and the slack chosen by the linear-response leave-one-out error on a grid
//! fixed in advance, then a bias-free SVM on the prior kernel `SE(l) + 1` (the constant term is
//! the bias's Gaussian prior, so the prior does not depend on the data) and its PAC-Bayes
//! certificate as a GP's MAP ([`crate::svm::certificate`]), paying for both grids.

use crate::bounds::ConfidenceTerm;
use crate::certificate::PenaltyTerm;
use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::svm::certificate::{svm_certificate, SvmCertificateConfig};
use crate::svm::select::{select_by_loo, SvmGrid};
use crate::svm::{svm, Slack, SvmConfig, SvmSolver};

use super::{sample_digest, FitReport, FittedModel, Task, FORMAT};

/// Options of [`fit_svm_model`].
#[derive(Clone, Debug)]
pub struct SvmOptions {
    /// The RBF lengthscales scanned (one value fixes it), e.g. [`svm_lengthscales`].
    pub lengthscales: Vec<f64>,
    /// The slack penalties scanned (one value fixes it).
    pub slacks: Vec<Slack>,
    /// Dual solver.
    pub solver: SvmSolver,
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

/// The prior kernel of a certified SVM: `SE(l)` plus a unit constant for the bias.
pub fn svm_prior_kernel(lengthscale: f64) -> Kernel {
    Kernel::Sum {
        left: Box::new(Kernel::se_iso(lengthscale, 1.0)),
        right: Box::new(Kernel::Constant { ln_variance: 0.0 }),
    }
}

/// Fit and certify an SVM on `train` (labels ±1): LR-LOO over the lengthscale × slack grid
/// (with a fitted bias, as the seed), then the bias-free SVM on [`svm_prior_kernel`] and the
/// lowest bound over the μ grid; the penalty is `ln |grid| + ln |μ grid|`.
pub fn fit_svm_model(train: &Dataset, labels: LabelMap, opts: &SvmOptions) -> Result<FittedModel> {
    crate::data::check_binary_labels(&train.y)?;
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let y = &train.y;
    let grid = SvmGrid {
        lengthscales: opts.lengthscales.clone(),
        slacks: opts.slacks.clone(),
    };
    let base = SvmConfig {
        solver: opts.solver,
        ..Default::default()
    };
    let chosen = select_by_loo(x.as_ref(), y, &grid, &base)?.best;
    let prior = svm_prior_kernel(chosen.lengthscale);
    let config = SvmConfig {
        slack: chosen.slack,
        bias: false,
        ..base
    };
    let fit = svm(&prior, x.as_ref(), y, &config)?;
    let cert_cfg = SvmCertificateConfig {
        delta: opts.delta,
        term: opts.term,
        extra_penalty: (grid.len() as f64).ln(),
        ..Default::default()
    };
    let cert = svm_certificate(&prior, x.as_ref(), y, &fit, &cert_cfg)?;
    let choices = vec![
        PenaltyTerm::candidates(grid.len(), "SVM lengthscale × slack by LR-LOO"),
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
