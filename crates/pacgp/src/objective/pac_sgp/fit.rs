//! Training kl-PAC-SGP / sqrt-PAC-SGP: the inducing inputs placed, the bound of
//! [`super::PacSgpObjective`] minimised by the driver with θ boxed to the grid's range and
//! snapped onto it, an optional warm start on a subsample, and the certificate at the end.

use faer::MatRef;

use crate::bounds::{BoundKind, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::loss::RegressionLoss;
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, OptimReport, Search};
use crate::prior::BoundLevers;
use crate::regression::inducing_init::{initial_inducing_with_targets, InducingInit};
use crate::regression::sparse::{NegSparseObjective, PretrainRows, SparseGp, SparseMethod};

use super::PacSgpObjective;
use crate::objective::bound::MinimisedBound;

/// A trained sparse PAC-GP at the snapped θ, with its certificate.
#[derive(Clone, Debug)]
pub struct PacSgpFit {
    /// The sparse GP (θ on the grid, σ² and Z as optimised).
    pub gp: SparseGp,
    /// `α_s` of the posterior that was trained and certified.
    pub alpha_s: f64,
    /// Certificate at the snapped θ, through the shared posterior (both bound forms).
    pub certificate: Certificate,
    /// Optimiser report.
    pub report: OptimReport,
    /// How the warm start on a subsample went, if there was one.
    pub pretraining: Option<optim::Pretraining>,
}

/// Train kl-PAC-SGP / sqrt-PAC-SGP (θ boxed to the grid's range, then snapped), from Z placed
/// by `init` (the paper's: k-means; greedy: seed 002's ΔR selection under the initial θ, σ²).
pub fn fit_pac_sgp(
    kernel_init: &Kernel,
    noise_init: f64,
    x: MatRef<'_, f64>,
    y: &[f64],
    m: usize,
    alpha_s: f64,
    loss: RegressionLoss,
    delta: f64,
    kind: BoundKind,
    seed: u64,
    init: InducingInit,
    max_iter: usize,
) -> Result<PacSgpFit> {
    let settings = PacSgpSettings {
        m,
        alpha_s,
        loss,
        delta,
        kind,
        seed,
        init,
        max_iter,
        pretrain: None,
    };
    fit_pac_sgp_with(
        kernel_init,
        noise_init,
        x,
        y,
        &settings,
        &BoundLevers::default(),
    )
}

/// The settings of [`fit_pac_sgp_with`] (those of [`fit_pac_sgp`], named).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacSgpSettings {
    /// Number of inducing inputs M.
    pub m: usize,
    /// Posterior parametrisation: 1 = FITC, 0 = VFE.
    pub alpha_s: f64,
    /// Loss (standardised scale).
    pub loss: RegressionLoss,
    /// Confidence δ.
    pub delta: f64,
    /// kl or sqrt bound.
    pub kind: BoundKind,
    /// Seed of the initialisation of Z.
    pub seed: u64,
    /// How the inducing inputs start.
    pub init: InducingInit,
    /// L-BFGS iteration budget (on all rows).
    pub max_iter: usize,
    /// Optimise first on a seeded subsample of this many rows ([`optim::drive_warm`]).
    pub pretrain: Option<usize>,
}

/// The L-BFGS iteration budget of a PAC-SGP fit when none is given.
pub const DEFAULT_MAX_ITER: usize = 1000;

/// The bound PAC-SGP minimises on rows `(x, y)` (the whole sample, or a warm start's
/// subsample) with the settings' loss, δ, θ penalty and levers.
fn bound_objective<'a>(
    kernel: &Kernel,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    st: &PacSgpSettings,
    levers: &BoundLevers,
) -> Result<PacSgpObjective<'a>> {
    let bound = PacSgpBound {
        loss: st.loss,
        delta: st.delta,
        kind: st.kind,
        levers: levers.clone(),
    };
    bound.in_process(kernel, x, y, st.m, st.alpha_s)
}

/// The sparse PAC-GP bound's settings: the ε-band loss (standardised), δ, the inequality and
/// the levers; the bound on rows in one process or over shards.
#[derive(Clone, Debug)]
pub struct PacSgpBound {
    /// The ε-band loss on the standardised scale.
    pub loss: RegressionLoss,
    /// Confidence δ.
    pub delta: f64,
    /// kl or sqrt.
    pub kind: BoundKind,
    /// The confidence constant and a coarse hyperparameter prior, if any.
    pub levers: BoundLevers,
}

impl PacSgpBound {
    /// The bound minimised for `kernel`'s θ: δ, the form, the levers' confidence term, and
    /// the default grid's `T·ln L` or the coarse prior's surrogate.
    pub fn minimised(&self, kernel: &Kernel) -> Result<MinimisedBound> {
        MinimisedBound::on_theta(self.delta, self.kind, &self.levers, kernel)
    }

    /// The same bound on rows held in this process.
    pub fn in_process<'a>(
        &self,
        kernel: &Kernel,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        m: usize,
        alpha_s: f64,
    ) -> Result<PacSgpObjective<'a>> {
        let bound = self.minimised(kernel)?;
        PacSgpObjective::new(kernel, x, y, m, alpha_s, self.loss, bound)
    }
}

/// How PAC-SGP's parameters `[ln θ…, ln σ², vec(Z)]` of `nk` kernel parameters and `m`
/// inducing inputs on `d` inputs are searched: θ boxed to the grid's (or the coarse prior's)
/// range and snapped onto that grid afterwards, at most `max_iter` iterations on all rows. The
/// in-process fit and the sharded one ([`crate::fit::sharded`]) search the same way.
pub fn pac_sgp_search(
    levers: &BoundLevers,
    nk: usize,
    m: usize,
    d: usize,
    max_iter: usize,
) -> Search {
    let grid = HyperGrid::default();
    let (lo, hi) = match levers.hyper_prior {
        None => (grid.min_log, grid.max_log),
        Some(p) => (p.min_log, p.max_log),
    };
    let mut bounds = vec![(boxes::LN_THETA.0.max(lo), boxes::LN_THETA.1.min(hi)); nk];
    bounds.push(boxes::LN_NOISE);
    bounds.extend(std::iter::repeat_n(boxes::FREE, m * d));
    let snap = match levers.hyper_prior {
        None => GridSnap::decimal(grid, nk),
        Some(prior) => GridSnap::coarse(prior.snap_grid(), nk),
    };
    let budget = |max_iter| LbfgsConfig {
        max_iter,
        ..Default::default()
    };
    Search {
        bounds,
        snap: Some(snap),
        lbfgs: budget(max_iter),
        warm_lbfgs: budget(DEFAULT_MAX_ITER),
    }
}

/// The price of the snapped θ of `kernel` in the certificate: the grid's, or the coarse
/// prior's at θ.
pub fn theta_choice(levers: &BoundLevers, kernel: &Kernel) -> Result<PenaltyTerm> {
    match levers.hyper_prior {
        None => Ok(PenaltyTerm::grid(&HyperGrid::default(), kernel.n_params())),
        Some(prior) => prior.penalty_term(kernel),
    }
}

/// [`fit_pac_sgp`] with the tighter-bounds levers: the confidence constant and a coarse
/// hyperparameter prior (smooth surrogate while optimising, then θ snapped onto the prior's
/// grid and σ², Z re-optimised at the snapped θ; docs/math.md §9.2).
pub fn fit_pac_sgp_with(
    kernel_init: &Kernel,
    noise_init: f64,
    x: MatRef<'_, f64>,
    y: &[f64],
    st: &PacSgpSettings,
    levers: &BoundLevers,
) -> Result<PacSgpFit> {
    let nk = kernel_init.n_params();
    let (m, alpha_s, loss, delta) = (st.m, st.alpha_s, st.loss, st.delta);
    let search = pac_sgp_search(levers, nk, m, x.ncols(), st.max_iter);
    let obj = bound_objective(kernel_init, x, y, st, levers)?;
    let z0 = initial_inducing_with_targets(kernel_init, noise_init, x, y, m, st.init, st.seed)?;
    let p0 = NegSparseObjective::pack(kernel_init, noise_init, z0.as_ref());
    let sub = PretrainRows::draw(x, y, st.pretrain, st.seed);
    let warm_obj = match &sub {
        Some(s) => Some(bound_objective(
            kernel_init,
            s.x.as_ref(),
            &s.y,
            st,
            levers,
        )?),
        None => None,
    };
    let warm = warm_obj
        .as_ref()
        .zip(sub.as_ref())
        .map(|(o, s)| optim::WarmStart {
            objective: o,
            rows: s.y.len(),
            of: y.len(),
        });
    let (min, pretraining) = search.minimise(&obj, warm.as_ref(), &p0)?;
    let (p, report) = (min.params, min.report);
    let (kernel, noise_variance, z) = obj.unpack(&p)?;
    let choice = theta_choice(levers, &kernel)?;
    let method = if alpha_s > 0.0 {
        SparseMethod::Fitc
    } else {
        SparseMethod::Vfe
    };
    let gp = SparseGp {
        kernel,
        noise_variance,
        z,
        method,
    };
    let spec = CertificateSpec::new(delta, levers.term, vec![choice]);
    let certificate = Certificate::of_posterior(
        &gp.posterior_with_alpha(x, y, alpha_s)?,
        x,
        y,
        &GibbsLoss::Regression(loss),
        &spec,
    )?;
    Ok(PacSgpFit {
        gp,
        alpha_s,
        certificate,
        report,
        pretraining,
    })
}
