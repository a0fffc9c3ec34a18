//! ML-II (type-II maximum likelihood) of the Laplace and EP classifiers: the negative log
//! evidence of [`super::NegLogEvidence`] minimised by the driver ([`optim::drive`]) from the
//! given start plus seeded restarts, optionally snapped onto a grid.

use super::{Approximation, EvidenceGradient, NegLogEvidence, WarmStart};
use crate::bounds::HyperGrid;
use crate::error::Result;
use crate::inference::ep::EpConfig;
use crate::inference::laplace::LaplaceConfig;
use crate::inference::{ClassifierFit, Problem};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, OptimReport, Restarts};

/// Settings of [`fit_laplace_ml2`] and [`fit_ep_ml2`].
#[derive(Clone, Debug)]
pub struct ClassifierMlConfig {
    /// Seeded random restarts around the start (none by default).
    pub restarts: Restarts,
    /// Optimiser settings (its `bounds` are replaced by the boxes below).
    pub lbfgs: LbfgsConfig,
    /// Box for every kernel θ (ln space); scikit-learn's default (1e-5, 1e5).
    pub theta_bounds: (f64, f64),
    /// Optimise θ inside this grid's range and snap it onto the grid afterwards (the
    /// returned fit is then at the snapped θ).
    pub snap: Option<HyperGrid>,
    /// Also fit the probit's ln λ and b.
    pub fit_likelihood: bool,
    /// Box for ln λ.
    pub ln_lambda_bounds: (f64, f64),
    /// Box for the bias b.
    pub bias_bounds: (f64, f64),
    /// Laplace settings.
    pub laplace: LaplaceConfig,
    /// EP settings (the gradient assumes convergence; its error is first order in `tol`,
    /// that of `ln Z_EP` second order). `tol` is the floor of the site tolerance, which
    /// follows the previous gradient (a forcing term, `ep_forcing_tolerance`).
    pub ep: EpConfig,
}

impl crate::inference::Ml2Settings {
    /// ML-II's settings for Laplace and EP: inside the grid and snapped onto it, with the
    /// restarts and the stall rule, the rest default.
    pub fn evidence_config(&self) -> ClassifierMlConfig {
        let mut cfg = ClassifierMlConfig {
            snap: Some(self.grid),
            restarts: self.restarts,
            ..Default::default()
        };
        cfg.lbfgs.stall = self.stall;
        cfg
    }
}

impl Default for ClassifierMlConfig {
    fn default() -> Self {
        Self {
            restarts: Restarts::default(),
            lbfgs: LbfgsConfig::default(),
            theta_bounds: boxes::LN_THETA,
            snap: None,
            fit_likelihood: false,
            ln_lambda_bounds: boxes::LN_PROBIT_SLOPE,
            bias_bounds: boxes::PROBIT_BIAS,
            laplace: LaplaceConfig::default(),
            // ln Z_EP is stationary in the sites, so its error is second order in theirs
            // (≈ 2e-6 at n = 2000 for a site tolerance of 1e-3); the fit on the grid
            // afterwards uses the method's own, tighter tolerance.
            ep: EpConfig {
                tol: 1e-3,
                ..EpConfig::default()
            },
        }
    }
}

/// A classifier whose hyperparameters were chosen by ML-II.
#[derive(Clone, Debug)]
pub struct ClassifierMl2 {
    /// The fitted kernel.
    pub kernel: Kernel,
    /// The likelihood (with fitted slope and bias when asked for).
    pub likelihood: Likelihood,
    /// The fit at the optimum (its `ln_evidence` is the maximised approximate evidence).
    pub fit: ClassifierFit,
    /// Gradient of the log evidence at the optimum.
    pub gradient: EvidenceGradient,
    /// What the optimiser did.
    pub report: OptimReport,
    /// The inference state at the optimum, to warm-start a refit nearby (e.g. on the grid).
    pub warm: WarmStart,
}

fn fit_ml2(
    start: Problem<'_>,
    approx: Approximation,
    cfg: &ClassifierMlConfig,
) -> Result<ClassifierMl2> {
    let kernel_init = start.kernel;
    let obj = NegLogEvidence::new(start, approx, cfg.fit_likelihood)?;
    let x0 = obj.initial_params();
    let mut bounds = vec![cfg.theta_bounds; kernel_init.n_params()];
    if cfg.fit_likelihood {
        bounds.extend([cfg.ln_lambda_bounds, cfg.bias_bounds]);
    }
    let snap = GridSnap::leading(cfg.snap, kernel_init.n_params());
    let min = optim::drive(&obj, &x0, bounds, &cfg.lbfgs, &cfg.restarts, snap.as_ref())?;
    let report = min.report;
    let (kernel, likelihood) = obj.model_at(&min.params)?;
    // The optimiser's last evaluation is usually its answer: reuse it, else refit there
    // (warm-started from the last evaluation, which is within half a grid step if snapped).
    let (fit, gradient) = match obj.last.take() {
        Some((p, fit, g)) if p == min.params => (fit, g),
        _ => obj.fit_at(&min.params)?,
    };
    let warm = obj.warm.take();
    Ok(ClassifierMl2 {
        kernel,
        likelihood,
        fit,
        gradient,
        report,
        warm,
    })
}

/// ML-II for the Laplace classifier: maximise `ln q(y|X,θ)` over kernel θ (and the probit's
/// ln λ, b if `cfg.fit_likelihood`) with L-BFGS from the given start plus seeded restarts;
/// each evaluation warm-starts Newton from the previous mode.
pub fn fit_laplace_ml2(start: Problem<'_>, cfg: &ClassifierMlConfig) -> Result<ClassifierMl2> {
    fit_ml2(start, Approximation::Laplace(cfg.laplace), cfg)
}

/// ML-II for the EP classifier: maximise `ln Z_EP` as [`fit_laplace_ml2`] does `ln q`;
/// each evaluation warm-starts EP from the previous sites.
pub fn fit_ep_ml2(start: Problem<'_>, cfg: &ClassifierMlConfig) -> Result<ClassifierMl2> {
    fit_ml2(start, Approximation::Ep(cfg.ep), cfg)
}
