//! Q on part B (docs/math.md §9.3.1): its free parameters, marginals, `KL(Q‖P_A)`, prediction and
//! shared-posterior form; per-point noises (docs/math.md §9.4.2 on this prior).

use super::*;

/// The free posterior parameters `(σ_m², σ_v², s)` of Q (docs/math.md §9.3.1), not charged.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitPosteriorParams {
    /// Mean noise σ_m².
    pub noise_mean: f64,
    /// Covariance noise σ_v².
    pub noise_cov: f64,
    /// Covariance scale s.
    pub scale: f64,
}

impl SplitPosteriorParams {
    /// In ln space `[ln σ_m², ln σ_v², ln s]`.
    pub fn to_ln(&self) -> Vec<f64> {
        vec![self.noise_mean.ln(), self.noise_cov.ln(), self.scale.ln()]
    }

    /// From ln space.
    pub fn from_ln(p: &[f64]) -> Self {
        Self {
            noise_mean: p[0].exp(),
            noise_cov: p[1].exp(),
            scale: p[2].exp(),
        }
    }
}

/// Q on part B at one parameter vector: what the bound and prediction need.
pub(super) struct QOnB {
    pub(super) alpha: Vec<f64>,
    pub(super) beta: Vec<f64>,
    pub(super) cv_inv: Mat<f64>,
    pub(super) marginals: Marginals,
    pub(super) kl: f64,
    pub(super) params: SplitPosteriorParams,
}

/// `r = y_B − μ_A`.
pub(super) fn residual(prior_b: &PriorAt, y_b: &[f64]) -> Vec<f64> {
    y_b.iter().zip(&prior_b.mean).map(|(y, m)| y - m).collect()
}

/// Q's marginals on B and `KL(Q‖P_A)` (docs/math.md §9.3.1).
pub(super) fn q_on_b(prior_b: &PriorAt, y_b: &[f64], p: SplitPosteriorParams) -> Result<QOnB> {
    let n = y_b.len();
    let r = residual(prior_b, y_b);
    let (sm, sv, s) = (p.noise_mean, p.noise_cov, p.scale);
    let cm = Cholesky::factor_plus_diag(
        prior_b.cov.as_ref(),
        |_| sm,
        &JitterPolicy::default(),
        "K_A + σ_m²I",
    )?;
    let cv = Cholesky::factor_plus_diag(
        prior_b.cov.as_ref(),
        |_| sv,
        &JitterPolicy::default(),
        "K_A + σ_v²I",
    )?;
    let alpha = cm.solve_vec(&r);
    let beta = cm.solve_vec(&alpha);
    let cv_inv = cv.inverse();
    // Jitter on C acts as extra noise, consistently (as in PAC-GP).
    let (sm, sv) = (sm + cm.jitter(), sv + cv.jitter());
    let mean: Vec<f64> = (0..n).map(|i| y_b[i] - sm * alpha[i]).collect();
    let var: Vec<f64> = (0..n)
        .map(|i| (s * sv * (1.0 - sv * cv_inv[(i, i)])).max(1e-300))
        .collect();
    let tr: f64 = (0..n).map(|i| cv_inv[(i, i)]).sum();
    let quad = linalg::dot(&alpha, &r) - sm * linalg::dot(&alpha, &alpha);
    // Σ = s(K_A − K_A C_v⁻¹ K_A), so K_A⁻¹Σ = s σ_v² C_v⁻¹.
    let nf = n as f64;
    let kl = GaussianKlTerms {
        trace: s * sv * tr,
        mahalanobis: quad,
        dim: nf,
        ln_det_ratio: nf * s.ln() + nf * sv.ln() - cv.ln_det(),
    }
    .kl();
    Ok(QOnB {
        alpha,
        beta,
        cv_inv,
        marginals: Marginals { mean, var },
        kl,
        params: SplitPosteriorParams {
            noise_mean: sm,
            noise_cov: sv,
            scale: s,
        },
    })
}

/// Per-point posterior noises of Q on part B (docs/math.md §9.4.2 carried to the split prior,
/// §9.3.1):
/// `λ_m,i` in Q's mean, `λ_v,i` in its covariance; free posterior parameters, not charged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointNoise {
    /// `λ_m,i`, one per point of B.
    pub mean: Vec<f64>,
    /// `λ_v,i`, one per point of B.
    pub cov: Vec<f64>,
}

impl PointNoise {
    /// Every point at the homoscedastic `(σ_m², σ_v²)` of `params`.
    pub fn uniform(n: usize, params: &SplitPosteriorParams) -> Self {
        Self {
            mean: vec![params.noise_mean; n],
            cov: vec![params.noise_cov; n],
        }
    }

    /// One positive finite noise per point of B for both.
    fn check(&self, n: usize) -> Result<()> {
        for v in [&self.mean, &self.cov] {
            if v.len() != n {
                return Err(Error::ShapeMismatch {
                    what: "per-point noises of the split posterior",
                    expected: format!("{n} values (part B)"),
                    found: format!("{} values", v.len()),
                });
            }
            if let Some(&bad) = v.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
                return Err(Error::InvalidParameter {
                    name: "per-point posterior noise",
                    value: bad,
                    reason: "must be positive and finite",
                });
            }
        }
        Ok(())
    }

    /// `(λ_m, λ_v, s)` for [`PointNoiseEval::new`].
    fn at(&self, scale: f64) -> (Vec<f64>, Vec<f64>, f64) {
        (self.mean.clone(), self.cov.clone(), scale)
    }
}

/// The posterior Q of docs/math.md §9.3.1: P_A updated with part B under the free parameters.
#[derive(Clone, Debug)]
pub struct SplitPosterior {
    /// The prior P_A (standardised scale).
    pub prior: SplitPrior,
    /// Inputs of part B (standardised).
    pub x_b: Mat<f64>,
    /// Targets of part B (standardised).
    pub y_b: Vec<f64>,
    /// Q's free parameters (with [`Self::point_noise`], only the scale `s` is Q's; the noises
    /// are those of the homoscedastic fit it started from).
    pub params: SplitPosteriorParams,
    /// Per-point noises on B in place of `σ_m²`, `σ_v²` (docs/math.md §9.4.2 on the split prior).
    pub point_noise: Option<PointNoise>,
    /// P_A's mean and covariance on B.
    pub(super) prior_b: PriorAt,
    /// Q's mean weights on B, `α = C_m⁻¹(y_B − μ_A)`.
    alpha: Vec<f64>,
    /// `KL(Q‖P_A)`.
    kl: f64,
    /// Q's marginals on B.
    marginals_b: Marginals,
}

impl SplitPosterior {
    /// Q for P_A, part B and the free parameters.
    pub fn new(
        prior: SplitPrior,
        x_b: Mat<f64>,
        y_b: Vec<f64>,
        params: SplitPosteriorParams,
    ) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x_b.as_ref(), &y_b)?;
        let prior_b = prior.on(x_b.as_ref());
        let q = q_on_b(&prior_b, &y_b, params)?;
        Ok(Self {
            prior,
            x_b,
            y_b,
            params: q.params,
            point_noise: None,
            prior_b,
            alpha: q.alpha,
            kl: q.kl,
            marginals_b: q.marginals,
        })
    }

    /// Q with per-point noises `λ_m,i`, `λ_v,i` on B and scale `s = params.scale`:
    /// `q(f_B) = N(μ_A + K_A C_m⁻¹ r, s(K_A − K_A C_v⁻¹ K_A))`, `C = K_A + Λ` (docs/math.md §9.3.1,
    /// §9.4.2).
    pub fn with_point_noise(
        prior: SplitPrior,
        x_b: Mat<f64>,
        y_b: Vec<f64>,
        params: SplitPosteriorParams,
        noise: PointNoise,
    ) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x_b.as_ref(), &y_b)?;
        noise.check(y_b.len())?;
        let prior_b = prior.on(x_b.as_ref());
        let r = residual(&prior_b, &y_b);
        let q = PointNoiseEval::new(&prior_b.cov, &r, &y_b, noise.at(params.scale), None)?;
        Ok(Self {
            prior,
            x_b,
            y_b,
            params,
            point_noise: Some(noise),
            prior_b,
            alpha: q.alpha,
            kl: q.kl,
            marginals_b: q.marginals,
        })
    }

    /// `KL(Q‖P_A)` in nats (closed form, docs/math.md §9.3.1).
    pub fn kl(&self) -> f64 {
        self.kl
    }

    /// Q's marginals on part B (the certificate's sample).
    pub fn marginals_on_b(&self) -> &Marginals {
        &self.marginals_b
    }
}

impl SplitPrior {
    /// P_A as the shared posterior: the exact GP posterior of part A, to be the prior of Q.
    pub fn posterior(&self) -> GaussianPosterior {
        match &self.p_a {
            Prior::Conditioned(p_a) => (**p_a).clone(),
            Prior::Gp(_) => unreachable!("P_A is conditioned on part A"),
        }
    }
}

/// The exact GP posterior of part A in site form (site precisions `1/σ_A²`, mean weights
/// `α_A = (K_AA + σ_A²I)⁻¹y_A`), `k` the kernel's matrix `K_AA`.
pub(super) fn exact_posterior(
    kernel: &Kernel,
    k: &Mat<f64>,
    noise_a: f64,
    x_a: &Mat<f64>,
    alpha_a: Vec<f64>,
) -> Result<GaussianPosterior> {
    let n = alpha_a.len();
    let sqrt_pi = vec![1.0 / noise_a.sqrt(); n];
    let chol_b = Cholesky::factor_filled(
        n,
        linalg::fill_site_b(k, &sqrt_pi, 0.0),
        None,
        &JitterPolicy::default(),
        "I + K_AA/σ_A² of the split prior",
    )?;
    Ok(GaussianPosterior::sites(
        kernel.clone(),
        x_a.clone(),
        alpha_a,
        sqrt_pi,
        chol_b,
    ))
}

impl SplitPosterior {
    /// Q as the shared [`GaussianPosterior`]: P_A (the posterior of part A) updated on part
    /// B with mean weights `α = C_m⁻¹(y_B − μ_A)` and covariance `s(K_A − K_A C_v⁻¹ K_A)` —
    /// site precisions `1/σ_v²` (or `1/λ_v,i`) when s = 1, the dense form otherwise. Its
    /// `KL(Q‖P_A)` and marginals are the shared posterior's (the certificate's).
    pub fn posterior(&self) -> Result<GaussianPosterior> {
        let prior = crate::posterior::Prior::conditioned(self.prior.posterior());
        let nb = self.x_b.nrows();
        let on_b_cov = match &self.point_noise {
            Some(pn) => pn.cov.clone(),
            None => vec![self.params.noise_cov; nb],
        };
        let ka = &self.prior_b.cov;
        if self.params.scale == 1.0 {
            let sqrt_pi: Vec<f64> = on_b_cov.iter().map(|v| 1.0 / v.sqrt()).collect();
            let chol_b = Cholesky::factor_filled(
                nb,
                linalg::fill_site_b(ka, &sqrt_pi, 0.0),
                None,
                &JitterPolicy::default(),
                "I + Π½K_AΠ½ of the split-prior posterior",
            )?;
            return Ok(GaussianPosterior::sites(
                prior,
                self.x_b.clone(),
                self.alpha.clone(),
                sqrt_pi,
                chol_b,
            ));
        }
        // Σ = s(K_A − K_A C_v⁻¹ K_A) = s·K_A (K_A + Λ_v)⁻¹ Λ_v.
        let cv = Cholesky::factor_plus_diag(
            ka.as_ref(),
            |i| on_b_cov[i],
            &JitterPolicy::none(),
            "K_A + Λ_v",
        )?;
        let mut w = ka.clone();
        cv.solve_lower_in_place(w.as_mut());
        let mut sigma = ka - w.transpose() * &w;
        for j in 0..nb {
            for i in 0..nb {
                sigma[(i, j)] *= self.params.scale;
            }
            for i in 0..j {
                sigma[(i, j)] = sigma[(j, i)];
            }
        }
        let chol_ka = Cholesky::factor(ka.as_ref(), &JitterPolicy::default(), "K_A")?;
        let chol_sigma = Cholesky::factor(sigma.as_ref(), &JitterPolicy::default(), "Σ of Q")?;
        Ok(GaussianPosterior::dense(
            prior,
            self.x_b.clone(),
            self.alpha.clone(),
            chol_ka,
            chol_sigma,
        ))
    }
}
