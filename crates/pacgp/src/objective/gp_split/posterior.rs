//! Q on part B (docs/math.md §9.3.1): its free parameters, the minimiser's closed-form
//! marginals and `KL(Q‖P_A)`, and Q as the shared posterior over P_A; per-point noises
//! (docs/math.md §9.4.2 on this prior).

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

/// Q on part B at one parameter vector, as the bound's minimiser evaluates it (closed forms
/// for the gradient).
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

/// The Cholesky factors of `C_m = K_A + σ_m²I` and `C_v = K_A + σ_v²I`, the mean weights
/// `α = C_m⁻¹r`, and the parameters with the factors' jitter added (jitter on C acts as extra
/// noise, consistently, as in PAC-GP).
fn mean_weights(
    prior_b: &PriorAt,
    r: &[f64],
    p: SplitPosteriorParams,
) -> Result<(Cholesky, Cholesky, Vec<f64>, SplitPosteriorParams)> {
    let (sm, sv) = (p.noise_mean, p.noise_cov);
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
    let alpha = cm.solve_vec(r);
    let jittered = SplitPosteriorParams {
        noise_mean: sm + cm.jitter(),
        noise_cov: sv + cv.jitter(),
        scale: p.scale,
    };
    Ok((cm, cv, alpha, jittered))
}

/// Q's marginals on B and `KL(Q‖P_A)` (docs/math.md §9.3.1).
pub(super) fn q_on_b(prior_b: &PriorAt, y_b: &[f64], p: SplitPosteriorParams) -> Result<QOnB> {
    let n = y_b.len();
    let r = residual(prior_b, y_b);
    let (cm, cv, alpha, params) = mean_weights(prior_b, &r, p)?;
    let beta = cm.solve_vec(&alpha);
    let cv_inv = cv.inverse()?;
    let (sm, sv, s) = (params.noise_mean, params.noise_cov, params.scale);
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
        params,
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

impl SplitPrior {
    /// P_A as the shared posterior: the exact GP posterior of part A, to be the prior of Q.
    pub fn posterior(&self) -> Result<GaussianPosterior> {
        match &self.p_a {
            Prior::Conditioned(p_a) => p_a.try_clone(),
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

impl SplitPrior {
    /// Q on part B (standardised) at the free parameters, as the shared [`GaussianPosterior`]
    /// over P_A (docs/math.md §9.3.1; per-point noises §9.4.2): mean weights
    /// `α = C_m⁻¹(y_B − μ_A)` and covariance `s(K_A − K_A C_v⁻¹ K_A)`. Its `KL(Q‖P_A)` and
    /// marginals are the shared posterior's (the certificate's). Also returns the parameters Q
    /// was built with: a jitter the Cholesky factors of `C_m`, `C_v` needed acts as extra noise.
    pub fn update(
        &self,
        x_b: &Mat<f64>,
        y_b: &[f64],
        params: SplitPosteriorParams,
        point_noise: Option<&PointNoise>,
    ) -> Result<(GaussianPosterior, SplitPosteriorParams)> {
        crate::regression::exact::check_regression_inputs(x_b.as_ref(), y_b)?;
        self.update_at(&self.on(x_b.as_ref())?, x_b, y_b, params, point_noise)
    }

    /// [`Self::update`] with P_A's mean and covariance on B already computed.
    pub(super) fn update_at(
        &self,
        prior_b: &PriorAt,
        x_b: &Mat<f64>,
        y_b: &[f64],
        params: SplitPosteriorParams,
        point_noise: Option<&PointNoise>,
    ) -> Result<(GaussianPosterior, SplitPosteriorParams)> {
        let nb = y_b.len();
        let (alpha, params, on_b_cov) = match point_noise {
            None => {
                let r = residual(prior_b, y_b);
                let (_, _, alpha, used) = mean_weights(prior_b, &r, params)?;
                (alpha, used, vec![used.noise_cov; nb])
            }
            Some(pn) => {
                pn.check(nb)?;
                let r = residual(prior_b, y_b);
                let q = PointNoiseEval::new(&prior_b.cov, &r, y_b, pn.at(params.scale), None)?;
                (q.alpha, params, pn.cov.clone())
            }
        };
        let prior = crate::posterior::Prior::conditioned(self.posterior()?);
        let ka = &prior_b.cov;
        if params.scale == 1.0 {
            let sqrt_pi: Vec<f64> = on_b_cov.iter().map(|v| 1.0 / v.sqrt()).collect();
            let chol_b = Cholesky::factor_filled(
                nb,
                linalg::fill_site_b(ka, &sqrt_pi, 0.0),
                None,
                &JitterPolicy::default(),
                "I + Π½K_AΠ½ of the split-prior posterior",
            )?;
            let q = GaussianPosterior::sites(prior, x_b.clone(), alpha, sqrt_pi, chol_b);
            return Ok((q, params));
        }
        // Σ = s(K_A − K_A C_v⁻¹ K_A) = s·K_A (K_A + Λ_v)⁻¹ Λ_v.
        let cv = Cholesky::factor_plus_diag(
            ka.as_ref(),
            |i| on_b_cov[i],
            &JitterPolicy::none(),
            "K_A + Λ_v",
        )?;
        let mut w = linalg::try_clone(ka.as_ref(), "L⁻¹K_A on part B")?;
        cv.solve_lower_in_place(w.as_mut());
        let mut sigma = linalg::try_product(w.transpose(), w.as_ref(), "Σ on part B")?;
        linalg::subtract_from(ka.as_ref(), &mut sigma);
        for j in 0..nb {
            for i in 0..nb {
                sigma[(i, j)] *= params.scale;
            }
            for i in 0..j {
                sigma[(i, j)] = sigma[(j, i)];
            }
        }
        let chol_ka = Cholesky::factor(ka.as_ref(), &JitterPolicy::default(), "K_A")?;
        // A jitter η on K_A stands for round-off in K_A (e.g. repeated inputs in B); Σ carries
        // it scaled, Σ + sηI, so that on K_A's numerically null directions `KL(Q‖P_A)` keeps
        // the closed form's ½(s − 1 − ln s) instead of a ratio of two unrelated jitters.
        let eta = params.scale * chol_ka.jitter();
        let chol_sigma = Cholesky::factor_plus_diag(
            sigma.as_ref(),
            |_| eta,
            &JitterPolicy::default(),
            "Σ of Q",
        )?;
        let q = GaussianPosterior::dense(prior, x_b.clone(), alpha, chol_ka, chol_sigma);
        Ok((q, params))
    }
}
