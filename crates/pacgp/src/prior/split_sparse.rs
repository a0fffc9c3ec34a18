//! Sparse (inducing-point) form of the data-dependent prior (tighter-bounds spec §3.3), for
//! kin40k / pol scale. On part A: scalers, θ_A, σ_A² and M inducing inputs Z by VFE (sparse
//! ML-II); the prior is `P_A = ∫ p(f|u) N(u; a_A, Σ_A) du` with VFE's `q(u)` on A. The
//! posterior shares `p(f|u)` and Z ("P_A updated with S_B", spec §3.3):
//!
//! `Λ = diag(σ² + α_s [K_BB − Q_BB]_ii)`, `Φ = K_uu⁻¹ K_uB`,
//! `Σ⁻¹ = Σ_A⁻¹ + Φ Λ⁻¹ Φᵀ`, `a = Σ(Σ_A⁻¹ a_A + Φ Λ⁻¹ y_B)`,
//!
//! so `KL(Q‖P_A) = KL(N(a, Σ) ‖ N(a_A, Σ_A))` on u, and Q's marginals are
//! `μ(x) = k_u(x)ᵀK_uu⁻¹a`, `v(x) = k(x,x) − k_u(x)ᵀK_uu⁻¹(K_uu − Σ)K_uu⁻¹k_u(x)`.
//! σ² and α_s ∈ {0, 1} are Q's free parameters (not charged), chosen by the bound on B
//! (a grid in ln σ² refined by golden section: one scalar, no gradient needed). Cost
//! O(N_B M² + M³) per evaluation.

use faer::{Mat, MatRef};

use crate::bounds::BoundKind;
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::data::{Dataset, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::posterior::{Covariance, GaussianPosterior, Marginals};
use crate::regression::sparse::{train_sparse, SparseConfig, SparseMethod, KUU_JITTER};

use super::split::{dense_gaussian_kl, split_rows, SplitConfig};

/// The sparse prior P_A: kernel θ_A, inducing inputs Z and `q(u) = N(a_A, Σ_A)` from part A.
#[derive(Clone, Debug)]
pub struct SparseSplitPrior {
    /// Kernel with θ_A.
    pub kernel: Kernel,
    /// Inducing inputs Z (M×D, standardised).
    pub z: Mat<f64>,
    /// Prior noise σ_A² of part A (VFE's).
    pub noise_a: f64,
    /// Mean of u under P_A.
    pub a_a: Vec<f64>,
    /// Covariance of u under P_A.
    pub sigma_a: Mat<f64>,
    chol_kuu: Cholesky,
    sigma_a_inv: Mat<f64>,
}

impl SparseSplitPrior {
    /// P_A from its parts (`K_uu` gets the sparse models' jitter).
    pub fn new(
        kernel: Kernel,
        z: Mat<f64>,
        noise_a: f64,
        a_a: Vec<f64>,
        sigma_a: Mat<f64>,
    ) -> Result<Self> {
        let mut kuu = kernel.gram(z.as_ref());
        for i in 0..kuu.nrows() {
            kuu[(i, i)] += KUU_JITTER;
        }
        let chol_kuu = Cholesky::factor(kuu.as_ref(), &JitterPolicy::default(), "K_uu")?;
        let sigma_a_inv =
            Cholesky::factor(sigma_a.as_ref(), &JitterPolicy::default(), "Σ_A")?.inverse();
        Ok(Self {
            kernel,
            z,
            noise_a,
            a_a,
            sigma_a,
            chol_kuu,
            sigma_a_inv,
        })
    }

    /// VFE on part A (θ, σ_A², Z by the sparse ML-II driver from k-means), then its q(u):
    /// `a_A = K_uu α`, `Σ_A = L_uu B⁻¹ L_uuᵀ` (whitened form of the shared posterior).
    pub fn fit_vfe(
        kernel_init: &Kernel,
        x_a: MatRef<'_, f64>,
        y_a: &[f64],
        m: usize,
        seed: u64,
    ) -> Result<Self> {
        let cfg = SparseConfig {
            seed,
            ..Default::default()
        };
        let (gp, _) = train_sparse(kernel_init, 0.1, x_a, y_a, m, SparseMethod::Vfe, &cfg)?;
        let post = gp.posterior(x_a, y_a)?;
        let Covariance::WhitenedPrecision { chol_kuu, chol_b } = &post.cov else {
            return Err(Error::Unsupported(
                "VFE's posterior is expected in whitened form".into(),
            ));
        };
        let l = chol_kuu.l().to_owned();
        let lt_alpha = linalg::mat_t_vec(&l, &post.alpha);
        let a_a = linalg::mat_vec(&l, &lt_alpha);
        let sigma_a = &l * chol_b.inverse() * l.transpose();
        let sym = Mat::from_fn(m, m, |i, j| 0.5 * (sigma_a[(i, j)] + sigma_a[(j, i)]));
        Self::new(gp.kernel, gp.z, gp.noise_variance, a_a, sym)
    }

    /// Number of inducing inputs M.
    pub fn m(&self) -> usize {
        self.z.nrows()
    }
}

/// Q's free parameters: posterior noise σ² and the FITC/VFE interpolation α_s.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SparseSplitParams {
    /// σ².
    pub noise: f64,
    /// α_s ∈ [0, 1].
    pub alpha_s: f64,
}

/// The sparse posterior Q on part B (spec §3.3).
#[derive(Clone, Debug)]
pub struct SparseSplitPosterior {
    /// The prior P_A.
    pub prior: SparseSplitPrior,
    /// Q's free parameters.
    pub params: SparseSplitParams,
    /// Mean of u under Q.
    pub a: Vec<f64>,
    /// Covariance of u under Q.
    pub sigma: Mat<f64>,
    kl: f64,
    marginals_b: Marginals,
}

impl SparseSplitPosterior {
    /// Q from P_A, part B (standardised) and the free parameters.
    pub fn new(
        prior: SparseSplitPrior,
        x_b: MatRef<'_, f64>,
        y_b: &[f64],
        params: SparseSplitParams,
    ) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x_b, y_b)?;
        if !(params.noise > 0.0 && (0.0..=1.0).contains(&params.alpha_s)) {
            return Err(Error::InvalidParameter {
                name: "sparse split posterior σ²",
                value: params.noise,
                reason: "σ² must be positive and α_s in [0, 1]",
            });
        }
        let m = prior.m();
        let nb = y_b.len();
        // Φ = K_uu⁻¹ K_uB; q_ii = ‖L⁻¹K_uB_i‖².
        let mut w = prior.kernel.cross(prior.z.as_ref(), x_b);
        prior.chol_kuu.solve_lower_in_place(w.as_mut());
        let q = linalg::col_sq_norms(&w);
        let mut phi = w.clone();
        prior.chol_kuu.solve_upper_in_place(phi.as_mut());
        let kd = prior.kernel.diag(x_b);
        let lam: Vec<f64> = (0..nb)
            .map(|i| params.noise + params.alpha_s * (kd[i] - q[i]).max(0.0))
            .collect();
        // Σ⁻¹ = Σ_A⁻¹ + ΦΛ⁻¹Φᵀ; a = Σ(Σ_A⁻¹a_A + ΦΛ⁻¹y_B).
        let inv_lam: Vec<f64> = lam.iter().map(|l| 1.0 / l).collect();
        let prec = &prior.sigma_a_inv + linalg::weighted_gram(&phi, &inv_lam);
        let chol_prec = Cholesky::factor(prec.as_ref(), &JitterPolicy::default(), "Σ⁻¹ of Q")?;
        let sigma = chol_prec.inverse();
        let yl: Vec<f64> = (0..nb).map(|i| y_b[i] * inv_lam[i]).collect();
        let rhs: Vec<f64> = linalg::mat_vec(&prior.sigma_a_inv, &prior.a_a)
            .iter()
            .zip(linalg::mat_vec(&phi, &yl))
            .map(|(a, b)| a + b)
            .collect();
        let a = chol_prec.solve_vec(&rhs);
        let kl = dense_gaussian_kl(&a, &sigma, &prior.a_a, &prior.sigma_a)?;
        let mean = linalg::mat_t_vec(&phi, &a);
        let sphi = &sigma * &phi;
        let quad = linalg::col_dots(&phi, &sphi);
        let var = (0..nb)
            .map(|i| (kd[i] - q[i] + quad[i]).max(1e-300))
            .collect();
        debug_assert_eq!(a.len(), m);
        Ok(Self {
            prior,
            params,
            a,
            sigma,
            kl,
            marginals_b: Marginals { mean, var },
        })
    }

    /// `KL(Q‖P_A)` on u.
    pub fn kl(&self) -> f64 {
        self.kl
    }

    /// Q's marginals on part B.
    pub fn marginals_on_b(&self) -> &Marginals {
        &self.marginals_b
    }

    /// Q as the shared posterior (dense form over Z): `α = K_uu⁻¹a`, covariance Σ of u.
    pub fn shared_posterior(&self) -> Result<GaussianPosterior> {
        let alpha = self.prior.chol_kuu.solve_vec(&self.a);
        let chol_sigma = Cholesky::factor(self.sigma.as_ref(), &JitterPolicy::default(), "Σ")?;
        Ok(GaussianPosterior {
            kernel: self.prior.kernel.clone(),
            basis: self.prior.z.clone(),
            alpha,
            cov: Covariance::Dense {
                chol_kb: self.prior.chol_kuu.clone(),
                chol_sigma,
            },
        })
    }
}

/// A model trained with the sparse data-dependent prior, its split and certificate on B.
#[derive(Clone, Debug)]
pub struct SparseSplitFit {
    /// Fraction F of part A.
    pub fraction: f64,
    /// Rows of part B.
    pub b: Vec<usize>,
    /// Input scaler fitted on A.
    pub x_scaler: Standardizer,
    /// Target scaler fitted on A.
    pub y_scaler: TargetScaler,
    /// Q (with P_A).
    pub posterior: SparseSplitPosterior,
    /// The certificate on part B.
    pub certificate: Certificate,
}

/// The B-bound of Q at `(σ², α_s)`.
fn bound_at(
    prior: &SparseSplitPrior,
    x_b: MatRef<'_, f64>,
    y_b: &[f64],
    params: SparseSplitParams,
    loss: &GibbsLoss,
    spec: &CertificateSpec,
) -> Result<(f64, SparseSplitPosterior)> {
    let q = SparseSplitPosterior::new(prior.clone(), x_b, y_b, params)?;
    let c = Certificate::from_marginals(q.kl(), q.marginals_on_b(), y_b, loss, spec)?;
    Ok((c.bound_of_kind(BoundKind::Kl), q))
}

/// Minimise the B-bound over ln σ² (grid on [−8, 4] then golden section) for α_s ∈ {0, 1}.
fn minimise(
    prior: &SparseSplitPrior,
    x_b: MatRef<'_, f64>,
    y_b: &[f64],
    loss: &GibbsLoss,
    spec: &CertificateSpec,
) -> Result<SparseSplitPosterior> {
    let mut best: Option<(f64, SparseSplitPosterior)> = None;
    for alpha_s in [0.0, 1.0] {
        let f = |t: f64| {
            let p = SparseSplitParams {
                noise: t.exp(),
                alpha_s,
            };
            bound_at(prior, x_b, y_b, p, loss, spec)
        };
        let grid: Vec<f64> = (0..=24).map(|k| -8.0 + 0.5 * k as f64).collect();
        let vals: Vec<f64> = grid
            .iter()
            .map(|t| f(*t).map(|v| v.0).unwrap_or(f64::INFINITY))
            .collect();
        let k = (0..grid.len())
            .min_by(|&i, &j| vals[i].total_cmp(&vals[j]))
            .unwrap_or(0);
        // Golden section on the bracket around the best grid point.
        let (mut lo, mut hi) = (grid[k.saturating_sub(1)], grid[(k + 1).min(grid.len() - 1)]);
        let g = 0.5 * (5f64.sqrt() - 1.0);
        for _ in 0..30 {
            let (c, d) = (hi - g * (hi - lo), lo + g * (hi - lo));
            let (fc, fd) = (
                f(c).map(|v| v.0).unwrap_or(f64::INFINITY),
                f(d).map(|v| v.0).unwrap_or(f64::INFINITY),
            );
            if fc < fd {
                hi = d;
            } else {
                lo = c;
            }
        }
        let t = if f(0.5 * (lo + hi)).map(|v| v.0).unwrap_or(f64::INFINITY) <= vals[k] {
            0.5 * (lo + hi)
        } else {
            grid[k]
        };
        let (v, q) = f(t)?;
        if best.as_ref().is_none_or(|(b, _)| v < *b) {
            best = Some((v, q));
        }
    }
    Ok(best.expect("two α_s were tried").1)
}

/// Train with the sparse data-dependent prior (spec §3.3): for each candidate fraction, split
/// (the rows' canonical order, seeded), fit scalers and VFE with `m` inducing inputs on A,
/// minimise the kl bound on B over σ² and α_s; keep the lowest bound (the menu's `ln k` in
/// every candidate's certificate).
pub fn fit_sparse_split_prior(
    train: &Dataset,
    kernel_init: &Kernel,
    m: usize,
    cfg: &SplitConfig,
) -> Result<SparseSplitFit> {
    let fractions = cfg.fraction.candidates()?;
    let menu = fractions.len();
    let mut best: Option<SparseSplitFit> = None;
    for fraction in fractions {
        let (a, b) = split_rows(train, fraction, cfg.seed)?;
        let (part_a, part_b) = (train.subset(&a), train.subset(&b));
        let x_scaler = Standardizer::fit(part_a.x.as_ref(), &part_a.feature_names)?;
        let y_scaler = TargetScaler::fit_column(&part_a.y, &part_a.target_name)?;
        let x_a = x_scaler.transform(part_a.x.as_ref())?;
        let y_a = y_scaler.transform(&part_a.y);
        let x_b = x_scaler.transform(part_b.x.as_ref())?;
        let y_b = y_scaler.transform(&part_b.y);
        let loss = GibbsLoss::Regression(RegressionLoss::new_epsilon_band(
            y_scaler.scale_length(cfg.epsilon),
        )?);
        let prior =
            SparseSplitPrior::fit_vfe(kernel_init, x_a.as_ref(), &y_a, m.min(a.len()), cfg.seed)?;
        let mut choices = vec![PenaltyTerm {
            what: format!(
                "prior: VFE posterior (M = {}) of part A ({} of {} points, F = {fraction}, seed {}), θ, σ_A², Z on A; bound on part B",
                prior.m(),
                a.len(),
                train.n(),
                cfg.seed
            ),
            nats: 0.0,
        }];
        if menu > 1 {
            choices.push(PenaltyTerm::candidates(menu, "split fraction F"));
        }
        let spec = CertificateSpec::new(cfg.delta, cfg.term, choices);
        let posterior = minimise(&prior, x_b.as_ref(), &y_b, &loss, &spec)?;
        let certificate = Certificate::from_marginals(
            posterior.kl(),
            posterior.marginals_on_b(),
            &y_b,
            &loss,
            &spec,
        )?;
        let fit = SparseSplitFit {
            fraction,
            b,
            x_scaler,
            y_scaler,
            posterior,
            certificate,
        };
        if best
            .as_ref()
            .is_none_or(|f| fit.certificate.bound < f.certificate.bound)
        {
            best = Some(fit);
        }
    }
    Ok(best.expect("at least one fraction"))
}
