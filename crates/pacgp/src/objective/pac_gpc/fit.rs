//! Training PAC-GPC: the sites optimised in whitened coordinates at a fixed kernel, θ among
//! the candidates or on the grid, and the certificate of the result.

use super::*;
use crate::bounds::DEFAULT_DELTA;

/// How PAC-GPC's kernel hyperparameters are chosen (and paid for).
#[derive(Clone, Debug)]
pub enum PacGpcTheta {
    /// Optimised jointly with the sites from this kernel's (snapped) θ, snapped onto the grid
    /// afterwards, the sites re-optimised there: penalty `T·ln L`.
    Grid(Kernel),
    /// One of a menu of kernels fixed before seeing the data, the sites optimised for each; the
    /// lowest bound wins: penalty `ln k` (as the bound-selected Laplace classifier).
    Candidates(Menu<Kernel>),
}

/// Settings of [`fit_pac_gpc`].
#[derive(Clone, Debug)]
pub struct PacGpcConfig {
    /// Confidence δ.
    pub delta: f64,
    /// Confidence constant.
    pub term: ConfidenceTerm,
    /// Form of the bound that is minimised (the certificate reports both).
    pub kind: BoundKind,
    /// The PAC grid (for [`PacGpcTheta::Grid`]).
    pub grid: HyperGrid,
    /// Optimiser settings (boxes are set here).
    pub lbfgs: LbfgsConfig,
    /// Settings of the Laplace warm start.
    pub laplace: LaplaceConfig,
    /// L-BFGS iterations of the screening of every candidate kernel
    /// ([`PacGpcTheta::Candidates`]) before the full optimisation of the best.
    pub screen_iter: usize,
}

impl Default for PacGpcConfig {
    /// δ = [`DEFAULT_DELTA`], Maurer's constant, kl form, the paper's grid, 500 L-BFGS iterations (40 to
    /// screen each candidate kernel).
    fn default() -> Self {
        Self {
            delta: DEFAULT_DELTA,
            term: ConfidenceTerm::Maurer,
            kind: BoundKind::Kl,
            grid: HyperGrid::default(),
            lbfgs: LbfgsConfig {
                max_iter: 500,
                ..Default::default()
            },
            laplace: LaplaceConfig::default(),
            screen_iter: 40,
        }
    }
}

/// A trained PAC-GPC with its certificate and the Laplace certificate it started from.
#[derive(Clone, Debug)]
pub struct PacGpcFit {
    /// The posterior (site form over the training inputs).
    pub posterior: GaussianPosterior,
    /// Its certificate (through [`Certificate::of_posterior`]).
    pub certificate: Certificate,
    /// The Laplace posterior's certificate at the same θ with the same penalty.
    pub laplace_certificate: Certificate,
    /// The optimiser's report of the last (site) optimisation.
    pub report: OptimReport,
}

/// Boxes of `[θ…; α; ln π]`.
pub(super) fn site_boxes(n_theta: usize, n: usize) -> Vec<(f64, f64)> {
    let mut b = vec![boxes::LN_THETA; n_theta];
    b.extend(std::iter::repeat_n(boxes::FREE, n));
    b.extend(std::iter::repeat_n(LN_SITE_PRECISION, n));
    b
}

/// The fixed-prior objective in whitened mean coordinates `w = Lᵀα` (`LLᵀ = K₀`, jittered if
/// need be): an exact linear change of variables (`α = L⁻ᵀw`, `∇_w = L⁻¹∇_α`) under which
/// the mean's KL term is `½‖w‖²` (up to the jitter), so L-BFGS sees a well-scaled problem.
pub(super) struct Whitened<'a> {
    pub(super) inner: PacGpcObjective<'a>,
    pub(super) chol_k: Cholesky,
}

impl Whitened<'_> {
    /// `[α; ln π]` from `[w; ln π]`.
    fn sites(&self, p: &[f64]) -> Vec<f64> {
        let n = p.len() / 2;
        let mut q = self.chol_k.solve_upper_vec(&p[..n]);
        q.extend_from_slice(&p[n..]);
        q
    }

    /// `[w; ln π]` from `[α; ln π]`: `w = Lᵀα`.
    pub(super) fn whiten(&self, q: &[f64]) -> Vec<f64> {
        let n = q.len() / 2;
        let l = self.chol_k.l();
        let mut p: Vec<f64> = (0..n)
            .map(|j| (j..n).map(|i| l[(i, j)] * q[i]).sum())
            .collect();
        p.extend_from_slice(&q[n..]);
        p
    }
}

impl Objective for Whitened<'_> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let n = p.len() / 2;
        let (v, g) = self.inner.value_and_gradient(&self.sites(p))?;
        let mut gw = self.chol_k.solve_lower_vec(&g[..n]);
        gw.extend_from_slice(&g[n..]);
        Ok((v, gw))
    }
}

/// Minimise the bound over the sites at a fixed latent prior from `start` (in whitened mean
/// coordinates); returns the optimum and the report (L-BFGS never ends above its start).
pub fn optimise_sites(
    prior: PriorAt,
    y: &[f64],
    classifier: GibbsClassifier,
    bound: &MinimisedBound,
    start: &SiteParams,
    lbfgs: &LbfgsConfig,
) -> Result<(SiteParams, OptimReport)> {
    let chol_k = Cholesky::factor(
        prior.cov.as_ref(),
        &JitterPolicy::default(),
        "prior covariance K₀ (whitening)",
    )?;
    let obj = Whitened {
        inner: PacGpcObjective::with_prior(prior, y, classifier, bound.clone())?,
        chol_k,
    };
    let min = optim::drive(
        &obj,
        &obj.whiten(&start.stacked()),
        site_boxes(0, y.len()),
        lbfgs,
        &Restarts::default(),
        None,
    )?;
    Ok((
        SiteParams::from_stacked(&obj.sites(&min.params)),
        min.report,
    ))
}

/// The certificate of a kernel-prior posterior on its sample.
pub(super) fn certificate_of(
    post: &GaussianPosterior,
    x: MatRef<'_, f64>,
    y: &[f64],
    classifier: GibbsClassifier,
    cfg: &PacGpcConfig,
    choice: &PenaltyTerm,
) -> Result<Certificate> {
    let spec = CertificateSpec::new(cfg.delta, cfg.term, vec![choice.clone()]);
    Certificate::of_posterior(post, x, y, &GibbsLoss::Classification(classifier), &spec)
}

/// Sites optimised at a fixed kernel from its Laplace fit: `(fit, Laplace fit)`.
pub(super) fn fit_at_kernel(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    classifier: GibbsClassifier,
    cfg: &PacGpcConfig,
    choice: &PenaltyTerm,
    extra_start: Option<&SiteParams>,
) -> Result<(PacGpcFit, ClassifierFit)> {
    let bound = MinimisedBound::new(cfg.delta, cfg.term, cfg.kind, choice.nats)?;
    let lap = laplace(kernel, lik, x, y, &cfg.laplace)?;
    let prior = Prior::Gp(kernel.clone()).at(x)?;
    let obj = PacGpcObjective::with_prior(prior.clone(), y, classifier, bound.clone())?;
    // Start from the better of the Laplace sites and the given ones.
    let mut start = SiteParams::of_posterior(&lap.posterior)?;
    if let Some(s) = extra_start {
        if obj.terms(&s.stacked())?.bound < obj.terms(&start.stacked())?.bound {
            start = s.clone();
        }
    }
    let (sites, report) = optimise_sites(prior, y, classifier, &bound, &start, &cfg.lbfgs)?;
    let kobj = PacGpcObjective::with_kernel(kernel, x, y, classifier, bound)?;
    let mut p = kernel.params();
    p.extend(sites.stacked());
    let posterior = kobj.posterior_at(&p)?;
    let certificate = certificate_of(&posterior, x, y, classifier, cfg, choice)?;
    let laplace_certificate = certificate_of(&lap.posterior, x, y, classifier, cfg, choice)?;
    Ok((
        PacGpcFit {
            posterior,
            certificate,
            laplace_certificate,
            report,
        },
        lap,
    ))
}

/// Train a GP classifier by minimising the PAC-Bayes bound on the Gibbs error of
/// `classifier` over the site-form posterior and θ (module doc), warm-started from Laplace.
pub fn fit_pac_gpc(
    theta: &PacGpcTheta,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    classifier: GibbsClassifier,
    cfg: &PacGpcConfig,
) -> Result<PacGpcFit> {
    check_classification(x, y, lik)?;
    match theta {
        PacGpcTheta::Candidates(menu) => {
            // Screen every candidate with a short site optimisation, then run the full one
            // on the best (any rule of choice among the k costs the same ln k).
            let screen = PacGpcConfig {
                lbfgs: LbfgsConfig {
                    max_iter: cfg.screen_iter,
                    ..cfg.lbfgs.clone()
                },
                ..cfg.clone()
            };
            let chosen = menu.by_bound(|k, price| {
                let (fit, _) = fit_at_kernel(k, lik, x, y, classifier, &screen, price, None)?;
                let bound = fit.certificate.bound;
                Ok((fit, bound))
            })?;
            let start = SiteParams::of_posterior(&chosen.value.posterior)?;
            let k = &menu.items[chosen.index];
            Ok(fit_at_kernel(k, lik, x, y, classifier, cfg, &chosen.price, Some(&start))?.0)
        }
        PacGpcTheta::Grid(kernel) => fit_on_grid(kernel, lik, x, y, classifier, cfg),
    }
}

/// Joint optimisation of θ and the sites from the Laplace fit at the snapped start, θ
/// snapped onto the grid, the sites re-optimised there.
pub(super) fn fit_on_grid(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    classifier: GibbsClassifier,
    cfg: &PacGpcConfig,
) -> Result<PacGpcFit> {
    let nt = kernel.n_params();
    let choice = PenaltyTerm::grid(&cfg.grid, nt);
    let bound = MinimisedBound::new(cfg.delta, cfg.term, cfg.kind, choice.nats)?;
    let mut k0 = kernel.clone();
    k0.set_params(&cfg.grid.round(&kernel.params()))?;
    let lap = laplace(&k0, lik, x, y, &cfg.laplace)?;
    let obj = PacGpcObjective::with_kernel(&k0, x, y, classifier, bound)?;
    let mut x0 = k0.params();
    x0.extend(SiteParams::of_posterior(&lap.posterior)?.stacked());
    let min = optim::drive(
        &obj,
        &x0,
        site_boxes(nt, y.len()),
        &cfg.lbfgs,
        &Restarts::default(),
        Some(&GridSnap::decimal(cfg.grid, nt)),
    )?;
    let mut snapped = k0.clone();
    snapped.set_params(&min.params[..nt])?;
    let joint_sites = SiteParams::from_stacked(&min.params[nt..]);
    Ok(fit_at_kernel(
        &snapped,
        lik,
        x,
        y,
        classifier,
        cfg,
        &choice,
        Some(&joint_sites),
    )?
    .0)
}
