//! The PAC-GPC bound as a differentiable objective of the sites (and θ on the grid): its
//! terms, the covariance gradient and the parametrisation of the prior it is taken against.

use super::*;

/// Where the prior comes from: a kernel whose θ is optimised, or a fixed latent prior.
pub(super) enum PriorSource<'a> {
    Kernel { kernel: Kernel, x: MatRef<'a, f64> },
    Fixed(PriorAt),
}

/// PAC-GPC's latent family: the site form `q(f) = N(m₀ + K₀α, (K₀⁻¹ + Π)⁻¹)` over
/// `[θ…; α; ln π]` (θ only when the prior is a kernel whose hyperparameters are free), with the
/// Gibbs classifier whose 0-1 error the bound holds.
pub struct PacGpcFamily<'a> {
    prior: PriorSource<'a>,
    y: &'a [f64],
    classifier: GibbsClassifier,
    /// `η` of [`PriorAt::round_off`], fixed at construction.
    round_off: f64,
}

/// The PAC-GPC objective: the bound over [`PacGpcFamily`].
pub type PacGpcObjective<'a> = BoundObjective<PacGpcFamily<'a>>;

impl<'a> BoundObjective<PacGpcFamily<'a>> {
    /// The bound over `[θ; α; ln π]` for the zero-mean GP prior of `kernel` on `x`.
    pub fn with_kernel(
        kernel: &Kernel,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        classifier: GibbsClassifier,
        bound: MinimisedBound,
    ) -> Result<Self> {
        kernel.check_input_dim(x.ncols())?;
        check_classification(x, y, &Likelihood::probit())?;
        let round_off = ROUND_OFF * kernel.diag(x).into_iter().fold(0.0, f64::max);
        let prior = PriorSource::Kernel {
            kernel: kernel.clone(),
            x,
        };
        Ok(Self::over(
            PacGpcFamily {
                prior,
                y,
                classifier,
                round_off,
            },
            bound,
        ))
    }

    /// The bound over `[α; ln π]` for a fixed latent prior (fixed θ, or a split's prior).
    pub fn with_prior(
        prior: PriorAt,
        y: &'a [f64],
        classifier: GibbsClassifier,
        bound: MinimisedBound,
    ) -> Result<Self> {
        if prior.len() != y.len() || prior.cov.nrows() != y.len() || prior.cov.ncols() != y.len() {
            return Err(Error::ShapeMismatch {
                what: "PAC-GPC prior",
                expected: format!("{} latent values", y.len()),
                found: format!("{}", prior.len()),
            });
        }
        crate::data::check_binary_labels(y)?;
        let round_off = prior.round_off;
        Ok(Self::over(
            PacGpcFamily {
                prior: PriorSource::Fixed(prior),
                y,
                classifier,
                round_off,
            },
            bound,
        ))
    }

    /// Number of leading kernel parameters (0 for a fixed prior).
    pub fn n_theta(&self) -> usize {
        self.family().n_theta()
    }

    /// The posterior at `p` as the shared [`GaussianPosterior`] (kernel prior only).
    pub fn posterior_at(&self, p: &[f64]) -> Result<GaussianPosterior> {
        self.family().posterior_at(p)
    }
}

impl PacGpcFamily<'_> {
    /// Number of leading kernel parameters (0 for a fixed prior).
    fn theta_len(&self) -> usize {
        match &self.prior {
            PriorSource::Kernel { kernel, .. } => kernel.n_params(),
            PriorSource::Fixed(_) => 0,
        }
    }

    /// The latent prior and (for a kernel prior) the kernel at `p`'s θ.
    fn prior_at(&self, p: &[f64]) -> Result<(PriorAt, Option<Kernel>)> {
        match &self.prior {
            PriorSource::Kernel { kernel, x } => {
                let mut k = kernel.clone();
                k.set_params(&p[..k.n_params()])?;
                Ok((Prior::Gp(k.clone()).at(*x)?, Some(k)))
            }
            PriorSource::Fixed(prior) => Ok((prior.clone(), None)),
        }
    }

    /// Mean Gibbs error and the per-point derivatives `(R_S, ∂e/∂μ, ∂e/∂v)`.
    fn risk(&self, m: &Marginals) -> (f64, Vec<f64>, Vec<f64>) {
        let n = self.y.len();
        let (mut r, mut gm, mut gv) = (0.0, vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            let (e, dm, dv) = point_error(self.y[i], m.mean[i], m.var[i], &self.classifier);
            r += e;
            gm[i] = dm;
            gv[i] = dv;
        }
        (r / n as f64, gm, gv)
    }

    /// The posterior at `p` as the shared [`GaussianPosterior`] (kernel prior only).
    pub fn posterior_at(&self, p: &[f64]) -> Result<GaussianPosterior> {
        let PriorSource::Kernel { x, .. } = &self.prior else {
            return Err(Error::Unsupported(
                "a fixed latent prior has no kernel posterior; use the split prior's own".into(),
            ));
        };
        let (prior, kernel) = self.prior_at(p)?;
        let sites = SiteParams::from_stacked(&p[self.theta_len()..]);
        let e = SiteEvaluation::new(&prior, &sites)?;
        Ok(GaussianPosterior::sites(
            kernel.expect("kernel prior"),
            x.to_owned(),
            sites.alpha,
            e.sqrt_pi,
            e.chol_b,
        ))
    }
}

/// `G = w_c·½(R − DA²D + ααᵀ) + w_q[½(g_μαᵀ + αg_μᵀ) + P diag(g_v) Pᵀ]` (module doc): the
/// derivative of the bound with respect to the symmetric prior covariance `K₀`.
pub(super) fn covariance_gradient(
    e: &SiteEvaluation,
    k0: &Mat<f64>,
    alpha: &[f64],
    (wq, wc): (f64, f64),
    g_mu: &[f64],
    g_v: &[f64],
) -> Result<Mat<f64>> {
    let n = alpha.len();
    let s = &e.sqrt_pi;
    // AD = B⁻¹ diag(s); R = D A D; D A² D = (AD)ᵀ(AD).
    let mut ad = e.chol_b.inverse()?;
    linalg::scale_cols(&mut ad, s);
    let da2d = linalg::try_product(ad.transpose(), ad.as_ref(), "DA²D")?;
    let mut r = ad;
    for j in 0..n {
        for i in 0..n {
            r[(i, j)] *= s[i];
        }
    }
    // P = I − R K₀.
    let mut p = linalg::try_product(r.as_ref(), k0.as_ref(), "P = I − RK₀")?;
    for j in 0..n {
        for v in p.col_as_slice_mut(j) {
            *v = -*v;
        }
    }
    for i in 0..n {
        p[(i, i)] += 1.0;
    }
    let mut g = linalg::weighted_gram(&p, g_v)?;
    for j in 0..n {
        for i in 0..n {
            g[(i, j)] = wq * (g[(i, j)] + 0.5 * (g_mu[i] * alpha[j] + alpha[i] * g_mu[j]))
                + wc * 0.5 * (r[(i, j)] - da2d[(i, j)] + alpha[i] * alpha[j]);
        }
    }
    Ok(g)
}

/// One evaluation of [`PacGpcFamily`]: the latent prior, the kernel (a kernel prior), the
/// sites, their evaluation and the risk's per-point derivatives.
pub struct PacGpcEvaluation {
    prior: PriorAt,
    kernel: Option<Kernel>,
    sites: SiteParams,
    e: SiteEvaluation,
    g_mu: Vec<f64>,
    g_v: Vec<f64>,
}

impl LatentFamily for PacGpcFamily<'_> {
    type Evaluation = PacGpcEvaluation;

    fn dim(&self) -> usize {
        self.theta_len() + 2 * self.y.len()
    }

    fn sample_size(&self) -> usize {
        self.y.len()
    }

    fn n_theta(&self) -> usize {
        self.theta_len()
    }

    /// The minimised KL carries the round-off charge ½η‖α‖² (see [`PriorAt`]).
    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, PacGpcEvaluation)> {
        let (prior, kernel) = self.prior_at(p)?;
        let sites = SiteParams::from_stacked(&p[self.theta_len()..]);
        let e = SiteEvaluation::new(&prior, &sites)?;
        let (risk, g_mu, g_v) = self.risk(&e.marginals);
        let rk = RiskAndKl {
            risk,
            kl: e.kl,
            kl_charge: 0.5 * self.round_off * linalg::dot(&sites.alpha, &sites.alpha),
        };
        let eval = PacGpcEvaluation {
            prior,
            kernel,
            sites,
            e,
            g_mu,
            g_v,
        };
        Ok((rk, eval))
    }

    fn pull_back(&self, _p: &[f64], ev: PacGpcEvaluation, v: &BoundValue) -> Result<Vec<f64>> {
        let PacGpcEvaluation {
            prior,
            kernel,
            sites,
            e,
            g_mu,
            g_v,
        } = ev;
        let n = self.y.len();
        let nf = n as f64;
        let eta = self.round_off;
        let (d_q, d_c) = (v.d_risk, v.d_complexity);
        let (wq, wc) = (d_q / nf, d_c / nf);
        let k0 = &prior.cov;
        let pi: Vec<f64> = e.sqrt_pi.iter().map(|s| s * s).collect();
        // ∂/∂α = K₀(w_q g_μ + w_c α).
        let t: Vec<f64> = (0..n).map(|i| wq * g_mu[i] + wc * sites.alpha[i]).collect();
        let mut g_alpha = linalg::mat_vec(k0, &t);
        for (g, a) in g_alpha.iter_mut().zip(&sites.alpha) {
            *g += wc * eta * a;
        }
        // ∂/∂ln π_i = π_i Σ_j Σ_ij² (½ w_c π_j − w_q g_v,j).
        let sigma = e.sigma(k0)?;
        let w: Vec<f64> = (0..n).map(|j| 0.5 * wc * pi[j] - wq * g_v[j]).collect();
        let g_lnpi: Vec<f64> = (0..n)
            .map(|i| {
                let col = sigma.col_as_slice(i);
                pi[i] * (0..n).map(|j| col[j] * col[j] * w[j]).sum::<f64>()
            })
            .collect();
        let mut grad = Vec::with_capacity(LatentFamily::dim(self));
        if let (Some(kernel), PriorSource::Kernel { x, .. }) = (&kernel, &self.prior) {
            let g = covariance_gradient(&e, k0, &sites.alpha, (wq, wc), &g_mu, &g_v)?;
            grad.extend(kernel.gram_grad_contract_symmetric(*x, g.as_ref(), Some(k0.as_ref())));
        }
        grad.extend(g_alpha);
        grad.extend(g_lnpi);
        Ok(grad)
    }
}
