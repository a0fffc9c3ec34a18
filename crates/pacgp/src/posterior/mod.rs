//! The one Gaussian posterior every model ends as: its [`Prior`] `P = GP(m, k_P)` updated at
//! a basis set B (Csató–Opper form),
//!
//! `μ(x) = m(x) + k_P(x,B)ᵀ α`,  `v(x) = k_P(x,x) − k_P(x,B)ᵀ R k_P(x,B)`,
//!
//! with `R` held factored in one of the forms of [`Covariance`]. Prediction, the posterior
//! covariance and `KL(Q‖P)` (docs/math.md §3.0: the KL of the process reduces to the KL on
//! `f_B`, since Q shares P's conditional given `f_B`) are written once here and serve exact
//! and sparse regression, every classifier, the SVM (P shifted) and the split priors (P the
//! posterior of part A).
//!
//! - [`prior`]: the GP prior and the conditioned prior;
//! - [`file`]: the on-disk form.

mod file;
pub mod kl;
pub mod prior;
pub mod scaled;

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky};

pub use kl::{dense_gaussian_kl, GaussianKlTerms};
pub use prior::{Prior, PriorAt};
pub use scaled::MeanScaled;

/// How the posterior covariance on the basis values `f_B` is stored.
#[derive(Clone, Debug, PartialEq)]
pub enum Covariance {
    /// Site form (exact GPR, Laplace, EP, ADF/IVM): `Σ = (K_B⁻¹ + Π)⁻¹`, `Π = diag(π) ≥ 0`.
    /// Holds `√π` and the Cholesky of `B = I + Π½ K_B Π½`; then `R = Π½ B⁻¹ Π½`.
    Sites {
        /// `√π_i` for every basis point.
        sqrt_pi: Vec<f64>,
        /// Cholesky of `I + Π½ K_B Π½`.
        chol_b: Cholesky,
    },
    /// Whitened precision form (FITC/VFE/DTC, docs/math.md §3.2): with `L_uu L_uuᵀ = K_uu`,
    /// `Σ = L_uu B⁻¹ L_uuᵀ` where `B = L_B L_Bᵀ` (e.g. `I + V Λ⁻¹ Vᵀ`).
    WhitenedPrecision {
        /// Cholesky of `K_uu` (with its jitter).
        chol_kuu: Cholesky,
        /// Cholesky of the whitened precision `B`.
        chol_b: Cholesky,
    },
    /// Dense form (SOGP, seed 003 §3.2): a general posterior covariance `Σ` of `f_B`, e.g.
    /// `Σ = K_B + K_B C K_B`, that has no diagonal site precision. Holds the Cholesky of
    /// `K_B` and of `Σ`; then `R = K_B⁻¹ − K_B⁻¹ Σ K_B⁻¹` (seed 003 eq. 3), applied by solves.
    Dense {
        /// Cholesky of `K_B` (with its jitter).
        chol_kb: Cholesky,
        /// Cholesky of the posterior covariance `Σ` of `f_B`.
        chol_sigma: Cholesky,
    },
}

impl Covariance {
    /// A copy whose factors go through [`Cholesky::try_clone`] (an N × N factor for the site
    /// and dense forms): [`crate::error::Error::OutOfMemory`] instead of an abort.
    pub fn try_clone(&self) -> crate::error::Result<Self> {
        Ok(match self {
            Covariance::Sites { sqrt_pi, chol_b } => Covariance::Sites {
                sqrt_pi: sqrt_pi.clone(),
                chol_b: chol_b.try_clone()?,
            },
            Covariance::WhitenedPrecision { chol_kuu, chol_b } => Covariance::WhitenedPrecision {
                chol_kuu: chol_kuu.try_clone()?,
                chol_b: chol_b.try_clone()?,
            },
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => Covariance::Dense {
                chol_kb: chol_kb.try_clone()?,
                chol_sigma: chol_sigma.try_clone()?,
            },
        })
    }

    /// Largest diagonal jitter that any of its Cholesky factors needed (0 if none).
    pub fn jitter(&self) -> f64 {
        match self {
            Covariance::Sites { chol_b, .. } => chol_b.jitter(),
            Covariance::WhitenedPrecision { chol_kuu, chol_b } => {
                chol_kuu.jitter().max(chol_b.jitter())
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => chol_kb.jitter().max(chol_sigma.jitter()),
        }
    }
}

/// A Gaussian-process posterior `Q` over the latent function: its prior updated at a basis.
/// Built by one of [`GaussianPosterior::sites`], [`GaussianPosterior::whitened`],
/// [`GaussianPosterior::dense`], [`GaussianPosterior::shifted`]. On disk the site form keeps
/// `√π` and the jitter and refactors `B` on load ([`file`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "file::PosteriorFile", into = "file::PosteriorFile")]
pub struct GaussianPosterior {
    /// The prior (with its fitted hyperparameters).
    pub prior: Prior,
    /// Basis inputs B (M×D): training points, active set, or inducing inputs.
    pub basis: Mat<f64>,
    /// Mean weights: `μ(x) = m(x) + k_P(x,B)ᵀ α`.
    pub alpha: Vec<f64>,
    /// Covariance representation.
    pub cov: Covariance,
}

/// The same prior, basis, weights and covariance (bases of different shapes are unequal, not
/// a panic).
impl PartialEq for GaussianPosterior {
    fn eq(&self, other: &Self) -> bool {
        self.prior == other.prior
            && linalg::same_mat(self.basis.as_ref(), other.basis.as_ref())
            && self.alpha == other.alpha
            && self.cov == other.cov
    }
}

/// Latent marginals at a set of inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marginals {
    /// Posterior means `μ(x_i)`.
    pub mean: Vec<f64>,
    /// Posterior latent variances `v(x_i)` (no observation noise), clamped at 0.
    pub var: Vec<f64>,
}

impl GaussianPosterior {
    /// A copy whose factors (and a conditioned prior's) go through [`Covariance::try_clone`]:
    /// `.clone()` for posteriors of the data's size, a typed error instead of an abort.
    pub fn try_clone(&self) -> crate::error::Result<Self> {
        Ok(Self {
            prior: self.prior.try_clone()?,
            basis: self.basis.clone(),
            alpha: self.alpha.clone(),
            cov: self.cov.try_clone()?,
        })
    }

    /// The site form over `prior`: `Σ = (K_B⁻¹ + Π)⁻¹` with `√π` and the Cholesky of
    /// `B = I + Π½K_BΠ½` (K_B the prior's covariance at the basis).
    pub fn sites(
        prior: impl Into<Prior>,
        basis: Mat<f64>,
        alpha: Vec<f64>,
        sqrt_pi: Vec<f64>,
        chol_b: Cholesky,
    ) -> Self {
        Self {
            prior: prior.into(),
            basis,
            alpha,
            cov: Covariance::Sites { sqrt_pi, chol_b },
        }
    }

    /// The whitened inducing form over `prior`: `Σ = L_uu B⁻¹ L_uuᵀ`.
    pub fn whitened(
        prior: impl Into<Prior>,
        basis: Mat<f64>,
        alpha: Vec<f64>,
        chol_kuu: Cholesky,
        chol_b: Cholesky,
    ) -> Self {
        Self {
            prior: prior.into(),
            basis,
            alpha,
            cov: Covariance::WhitenedPrecision { chol_kuu, chol_b },
        }
    }

    /// The dense form over `prior`: any covariance Σ of `f_B`, by the Cholesky factors of
    /// `K_B` and Σ.
    pub fn dense(
        prior: impl Into<Prior>,
        basis: Mat<f64>,
        alpha: Vec<f64>,
        chol_kb: Cholesky,
        chol_sigma: Cholesky,
    ) -> Self {
        Self {
            prior: prior.into(),
            basis,
            alpha,
            cov: Covariance::Dense {
                chol_kb,
                chol_sigma,
            },
        }
    }

    /// The prior shifted to mean `m(x) + k_P(x,B)ᵀα` with the prior's covariance (every site
    /// precision 0, `B = I`): the SVM's posterior (Opper & Winther §17.4).
    pub fn shifted(prior: impl Into<Prior>, basis: Mat<f64>, alpha: Vec<f64>) -> Result<Self> {
        let m = basis.nrows();
        // B = I is its own Cholesky factor.
        let chol_b = Cholesky::from_lower(Mat::<f64>::identity(m, m), 0.0);
        Ok(Self::sites(prior, basis, alpha, vec![0.0; m], chol_b))
    }

    /// The kernel of the posterior's prior (a conditioned prior: its posterior's kernel).
    pub fn kernel(&self) -> &Kernel {
        self.prior.kernel()
    }

    /// Number of basis points M.
    pub fn n_basis(&self) -> usize {
        self.basis.nrows()
    }

    /// Internal consistency (for values read from a file): shapes of the weights and factors
    /// against the basis, the kernel against the input count, finite values.
    pub fn validate(&self) -> Result<()> {
        let m = self.n_basis();
        let bad = |message: String| Error::Numerical {
            what: "stored posterior",
            message,
        };
        if m == 0 {
            return Err(bad("the basis is empty".into()));
        }
        if self.alpha.len() != m || self.alpha.iter().any(|a| !a.is_finite()) {
            return Err(bad(format!(
                "{} mean weights for {m} basis points, or a weight is not finite",
                self.alpha.len()
            )));
        }
        self.prior.validate()?;
        let kernel = self.kernel();
        if kernel.params().iter().any(|t| !t.is_finite()) {
            return Err(bad("a kernel hyperparameter is not finite".into()));
        }
        kernel.check_input_dim(self.basis.ncols())?;
        if let Prior::Conditioned(on) = &self.prior {
            if on.basis.ncols() != self.basis.ncols() {
                return Err(bad(
                    "the conditioned prior's inputs are not the basis's".into()
                ));
            }
        }
        crate::data::check_finite(self.basis.as_ref(), "stored basis")?;
        let factors: Vec<(&Cholesky, &str)> = match &self.cov {
            Covariance::Sites { sqrt_pi, chol_b } => {
                if sqrt_pi.len() != m || sqrt_pi.iter().any(|s| !(s.is_finite() && *s >= 0.0)) {
                    return Err(bad(
                        "site precisions: wrong count, negative or not finite".into()
                    ));
                }
                vec![(chol_b, "I + Π½K_BΠ½")]
            }
            Covariance::WhitenedPrecision { chol_kuu, chol_b } => {
                vec![(chol_kuu, "K_uu"), (chol_b, "whitened precision")]
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => vec![(chol_kb, "K_B"), (chol_sigma, "Σ")],
        };
        for (c, what) in factors {
            file::check_factor(c, m, what).map_err(bad)?;
        }
        Ok(())
    }

    /// Check that `x` has as many columns as the basis.
    pub fn check_inputs(&self, x: MatRef<'_, f64>) -> Result<()> {
        if x.ncols() != self.basis.ncols() {
            return Err(Error::ShapeMismatch {
                what: "prediction inputs",
                expected: format!("{} columns", self.basis.ncols()),
                found: format!("{} columns", x.ncols()),
            });
        }
        crate::data::check_finite(x, "prediction inputs")
    }

    /// Latent mean and variance at the rows of `x` (one point per row).
    pub fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals> {
        self.check_inputs(x)?;
        self.predict_in_blocks(x, block_rows(self.n_basis()))
    }

    /// [`GaussianPosterior::predict`] on checked inputs, `rows` rows of `x` at a time: memory
    /// O(rows·M) whatever N* (10⁶ test points against 10⁴ training points would be 80 GB
    /// as one N*×M matrix). Each row's mean and variance come from its own column of the
    /// block's products, the same for any `rows`.
    pub(crate) fn predict_in_blocks(&self, x: MatRef<'_, f64>, rows: usize) -> Result<Marginals> {
        let n = x.nrows();
        let (mut mean, mut var) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for lo in (0..n).step_by(rows.max(1)) {
            let part = self.predict_at(x.subrows(lo, rows.min(n - lo)))?;
            mean.extend(part.mean);
            var.extend(part.var);
        }
        Ok(Marginals { mean, var })
    }

    /// Latent mean alone at the rows of `x`: `m(x) + K(x, B)α`, O(N*·M) — what a label or a
    /// regressor's point prediction needs, without the variances' O(N*·M²) solves.
    pub fn predict_mean(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        self.check_inputs(x)?;
        let (n, rows) = (x.nrows(), block_rows(self.n_basis()));
        let mut mean = Vec::with_capacity(n);
        for lo in (0..n).step_by(rows) {
            let part = x.subrows(lo, rows.min(n - lo));
            let kbx = self.prior.cross_at(self.basis.as_ref(), part)?;
            mean.extend(self.mean_from_cross(part, &kbx)?);
        }
        Ok(mean)
    }

    /// `m(x_i) + Σ_m K(b_m, x_i) α_m` from the cross-covariance `kbx = K(B, x)` (M×N*, one
    /// contiguous column per input, summed in the order of m), columns in parallel.
    fn mean_from_cross(&self, x: MatRef<'_, f64>, kbx: &Mat<f64>) -> Result<Vec<f64>> {
        let prior_mean = self.prior.mean_at(x)?;
        let weighted = linalg::mat_t_vec(kbx, &self.alpha);
        Ok(prior_mean
            .iter()
            .zip(&weighted)
            .map(|(p, w)| p + w)
            .collect())
    }

    /// The posterior covariance `Cov_Q[f(x_i), f(z_j)]` between the rows of `x` and `z`.
    pub fn covariance(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check_inputs(x)?;
        self.check_inputs(z)?;
        self.covariance_at(x, z)
    }

    /// [`GaussianPosterior::predict`] on inputs already checked.
    pub(crate) fn predict_at(&self, x: MatRef<'_, f64>) -> Result<Marginals> {
        if x.nrows() == 1 {
            // faer solves one right-hand side by another kernel than several, whose last bits
            // differ (by up to 2 ulp): a lone row (one row to predict, or the last of a block
            // boundary) is predicted beside a copy of itself, so that a row's prediction does
            // not depend on how many rows share its block.
            let pair = Mat::from_fn(2, x.ncols(), |_, j| x[(0, j)]);
            let m = self.predict_rows(pair.as_ref())?;
            return Ok(Marginals {
                mean: vec![m.mean[0]],
                var: vec![m.var[0]],
            });
        }
        self.predict_rows(x)
    }

    /// [`GaussianPosterior::predict_at`] of two rows or more: one cross-covariance
    /// `K(B, x)` (M×N*, computed in that layout so that no transpose is copied) gives the
    /// means and, through the stored factors, the variances `k(x,x) − Σ_j s_j ‖A_j‖²`.
    fn predict_rows(&self, x: MatRef<'_, f64>) -> Result<Marginals> {
        let kbx = self.prior.cross_at(self.basis.as_ref(), x)?; // M×N*
        let mean = self.mean_from_cross(x, &kbx)?;
        let prior = self.prior.diag_at(x)?;
        let mut reduction = vec![0.0; x.nrows()];
        for (sign, a) in self.projections(kbx)? {
            for (r, v) in reduction.iter_mut().zip(linalg::col_sq_norms(&a)) {
                *r += sign * v;
            }
        }
        let var = prior
            .iter()
            .zip(&reduction)
            .map(|(p, r)| (p - r).max(0.0))
            .collect();
        Ok(Marginals { mean, var })
    }

    /// [`GaussianPosterior::covariance`] on inputs already checked:
    /// `k_P(x,z) − Σ_j s_j A_j(x)ᵀ A_j(z)` with the projections of [`Self::projections`].
    pub(crate) fn covariance_at(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut c = self.prior.cross_at(x, z)?;
        let ax = self.projections(self.prior.cross_at(self.basis.as_ref(), x)?)?;
        let az = self.projections(self.prior.cross_at(self.basis.as_ref(), z)?)?;
        for ((sign, a), (_, b)) in ax.iter().zip(&az) {
            let p = product_tn(a, b)?;
            for j in 0..c.ncols() {
                for i in 0..c.nrows() {
                    c[(i, j)] -= sign * p[(i, j)];
                }
            }
        }
        Ok(c)
    }

    /// The posterior covariance matrix of the rows of `x` on inputs already checked:
    /// `K_P(x,x) − Σ_j s_j A_jᵀA_j`, its lower triangle copied to the upper.
    pub(crate) fn covariance_gram_at(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut c = self.prior.gram_at(x)?;
        for (sign, a) in self.projections(self.prior.cross_at(self.basis.as_ref(), x)?)? {
            let p = product_tn(&a, &a)?;
            for j in 0..c.ncols() {
                for i in 0..c.nrows() {
                    c[(i, j)] -= sign * p[(i, j)];
                }
            }
        }
        for j in 0..c.ncols() {
            for i in 0..j {
                c[(i, j)] = c[(j, i)];
            }
        }
        Ok(c)
    }

    /// Whether the covariance is the prior's (every site precision 0, as the SVM's shifted
    /// prior): then `R = 0` and nothing is subtracted from the prior's covariance.
    fn covariance_is_prior(&self) -> bool {
        matches!(&self.cov, Covariance::Sites { sqrt_pi, .. } if sqrt_pi.iter().all(|&s| s == 0.0))
    }

    /// The projections of prior covariances `k = k_P(B, x)` (M×N*, one column per input)
    /// whose signed squared norms make `kᵀ R k`: `(+1, L_B⁻¹Π½k)` for the site form;
    /// `(+1, L_uu⁻¹k)` and `(−1, L_B⁻¹L_uu⁻¹k)` for the whitened form;
    /// `(+1, L_K⁻¹k)` and `(−1, L_Σᵀ K⁻¹ k)` for the dense form. Its M×N* copies and
    /// products come from [`crate::memory::try_zeros`].
    fn projections(&self, mut a: Mat<f64>) -> Result<Vec<(f64, Mat<f64>)>> {
        Ok(match &self.cov {
            // Every site precision 0 (the SVM's shifted prior): R = 0, nothing to subtract.
            _ if self.covariance_is_prior() => vec![],
            Covariance::Sites { sqrt_pi, chol_b } => {
                scale_rows(&mut a, sqrt_pi);
                solve_lower_by_columns(chol_b, &mut a);
                vec![(1.0, a)]
            }
            Covariance::WhitenedPrecision { chol_kuu, chol_b } => {
                solve_lower_by_columns(chol_kuu, &mut a);
                let mut b = linalg::try_clone(a.as_ref(), "L_B⁻¹L_uu⁻¹k at test rows")?;
                solve_lower_by_columns(chol_b, &mut b);
                vec![(1.0, a), (-1.0, b)]
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => {
                // w = L_K⁻¹k: ‖w‖² = kᵀK⁻¹k; z = L_K⁻ᵀw = K⁻¹k; ‖L_Σᵀz‖² = kᵀK⁻¹ΣK⁻¹k.
                solve_lower_by_columns(chol_kb, &mut a);
                let mut z = linalg::try_clone(a.as_ref(), "K⁻¹k at test rows")?;
                chol_kb.solve_upper_in_place(z.as_mut());
                let t = linalg::try_product(
                    chol_sigma.l().transpose(),
                    z.as_ref(),
                    "L_Σᵀ K⁻¹k at test rows",
                )?;
                vec![(1.0, a), (-1.0, t)]
            }
        })
    }

    /// `KL(Q‖P) = KL(N(m_B + K_Bα, Σ) ‖ N(m_B, K_B))` (docs/math.md §3.0–3.2, §7.3–7.4), in
    /// nats, `K_B` the prior's covariance at the basis.
    ///
    /// The site and whitened forms give the [`kl`] invariants through `B`
    /// (`½[ln det B + tr B⁻¹ + αᵀK_Bα − M]`), the dense form through its two Cholesky factors.
    /// [`Error::OutOfMemory`] where `K_B` cannot be had.
    pub fn kl_to_prior(&self) -> Result<f64> {
        Ok(self.kl_terms()?.kl())
    }

    /// The invariants of `KL(Q‖P)` on the basis ([`GaussianKlTerms`]).
    fn kl_terms(&self) -> Result<GaussianKlTerms> {
        let (m, quad) = (self.n_basis(), self.alpha_k_alpha()?);
        Ok(match &self.cov {
            // The shifted prior (every site precision 0): B = I, so tr B⁻¹ = M, ln det B = 0.
            Covariance::Sites { sqrt_pi, .. } if sqrt_pi.iter().all(|&s| s == 0.0) => {
                GaussianKlTerms::site_form(m as f64, quad, m, 0.0)
            }
            Covariance::Sites { chol_b, .. } | Covariance::WhitenedPrecision { chol_b, .. } => {
                GaussianKlTerms::site_form(chol_b.inverse_trace()?, quad, m, chol_b.ln_det())
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => GaussianKlTerms {
                trace: kl::trace_k_inv_sigma(chol_kb, chol_sigma),
                mahalanobis: quad,
                dim: m as f64,
                ln_det_ratio: chol_sigma.ln_det() - chol_kb.ln_det(),
            },
        })
    }

    /// `κ ≥ sup_x v(x)/k_P(x,x)`: the posterior variance anywhere is at most κ times the
    /// prior's (docs/math.md §7.6). With `q(x) = k_xBᵀK_B⁻¹k_xB ≤ k_P(x,x)` and `λ` the largest
    /// eigenvalue of the whitened covariance `L_B⁻¹ΣL_B⁻ᵀ`, `v = k − q + k_xBᵀK_B⁻¹ΣK_B⁻¹k_xB
    /// ≤ k − (1 − λ)q ≤ max(1, λ)·k`. The site form has `Σ = (K_B⁻¹ + Π)⁻¹ ≤ K_B`, so `κ = 1`;
    /// the whitened form `λ = 1/λ_min(B)`; the dense form `λ = σ_max(L_K⁻¹L_Σ)²`.
    pub fn variance_ratio_bound(&self) -> Result<f64> {
        let largest = |m: faer::Mat<f64>| -> Result<f64> {
            let eig = self_adjoint_eigenvalues(m.as_ref())?;
            Ok(eig.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        };
        let lambda = match &self.cov {
            Covariance::Sites { .. } => 1.0,
            Covariance::WhitenedPrecision { chol_b, .. } => {
                let l = chol_b.l();
                let mut b = crate::linalg::try_product(l, l.transpose(), "L_B L_Bᵀ")?;
                b.col_iter_mut()
                    .for_each(|c| c.iter_mut().for_each(|v| *v = -*v));
                let smallest = -largest(b)?;
                if smallest > 0.0 {
                    1.0 / smallest
                } else {
                    f64::INFINITY
                }
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => {
                let mut a = crate::linalg::try_clone(chol_sigma.l(), "L_Σ")?;
                chol_kb.solve_lower_in_place(a.as_mut());
                largest(crate::linalg::try_product(
                    a.as_ref(),
                    a.transpose(),
                    "the whitened posterior covariance",
                )?)?
            }
        };
        Ok(lambda.max(1.0))
    }

    /// The KL's two parts, `(covariance part, ½αᵀK_Bα)`, and `KL(Q‖P)` itself from the same
    /// invariants (as [`GaussianPosterior::kl_to_prior`] sums them, to the bit): the KL is the
    /// parts' sum, and scaling the mean weights by `s` scales only the second, by `s²`
    /// ([`MeanScaled`]).
    pub(crate) fn kl_parts(&self) -> Result<(f64, f64, f64)> {
        let terms = self.kl_terms()?;
        let covariance = GaussianKlTerms {
            mahalanobis: 0.0,
            ..terms
        };
        Ok((covariance.kl(), 0.5 * terms.mahalanobis, terms.kl()))
    }

    /// `αᵀ K_B α` (the mean term of the KL); for the inducing and dense forms with the stored
    /// (jittered) `K = L Lᵀ`, as `‖Lᵀα‖²`, so the KL is that of the prior the posterior was
    /// built on.
    fn alpha_k_alpha(&self) -> Result<f64> {
        if let Covariance::WhitenedPrecision { chol_kuu, .. }
        | Covariance::Dense {
            chol_kb: chol_kuu, ..
        } = &self.cov
        {
            let l = chol_kuu.l();
            let m = self.alpha.len();
            return Ok((0..m)
                .map(|j| {
                    (j..m)
                        .map(|i| l[(i, j)] * self.alpha[i])
                        .sum::<f64>()
                        .powi(2)
                })
                .sum());
        }
        let kb = self.prior.gram_at(self.basis.as_ref())?;
        Ok(linalg::dot(&self.alpha, &linalg::mat_vec(&kb, &self.alpha)))
    }
}

/// Bytes of one N*_b × M matrix of a prediction block (64 MB): a block holds one or two (the
/// cross-covariance, solved in place into the projections), so predicting any number of rows needs
/// a few hundred MB beyond the model, whatever N* and M.
const PREDICT_BLOCK_BYTES: usize = 64 << 20;

/// Most rows of a prediction block: 4096 rows already make the triangular solves
/// matrix-matrix products (their cost per row, O(M²), does not fall with more).
const PREDICT_BLOCK_ROWS: usize = 4096;

/// Rows of test inputs predicted at once against `m` basis points: [`PREDICT_BLOCK_ROWS`],
/// fewer where an N*_b × M matrix would pass [`PREDICT_BLOCK_BYTES`] (194 rows against an
/// exact GP on 43 152 training rows), at least one.
fn block_rows(m: usize) -> usize {
    (PREDICT_BLOCK_BYTES / (8 * m.max(1))).clamp(1, PREDICT_BLOCK_ROWS)
}

/// `aᵀb` (N*×N* for projections of two sets of test points) in a buffer from
/// [`crate::memory::try_zeros`]: the product a test set too large for it asks for.
fn product_tn(a: &Mat<f64>, b: &Mat<f64>) -> Result<Mat<f64>> {
    let mut p = crate::memory::try_zeros(a.ncols(), b.ncols(), "a posterior covariance")?;
    faer::linalg::matmul::matmul(
        p.as_mut(),
        faer::Accum::Replace,
        a.transpose(),
        b.as_ref(),
        1.0,
        faer::get_global_parallelism(),
    );
    Ok(p)
}

/// Right-hand sides (columns) one task of [`solve_lower_by_columns`] solves, about: enough
/// that each task's triangular solve runs at matrix-product speed.
const SOLVE_COLUMNS: usize = 256;

/// `A ← L⁻¹A` for the M×N* projections of a prediction block: the columns cut into equal
/// chunks of about [`SOLVE_COLUMNS`], as many as a multiple of the worker threads so that
/// none waits for a last chunk (never one column alone: faer rounds a lone right-hand side
/// differently), each solved sequentially, the chunks in parallel. A chunk's columns
/// stay in cache (M = 5000: 48 GFLOP/s on one core for 256 columns, 34 for 2000 at once) and
/// the tasks need no fork-join inside the solve; a column's values do not depend on the
/// chunking (`predictions_do_not_depend_on_the_block_size`).
fn solve_lower_by_columns(chol: &Cholesky, a: &mut Mat<f64>) {
    use rayon::prelude::*;
    let n = a.ncols();
    let threads = rayon::current_num_threads().max(1);
    let chunks = n
        .div_ceil(SOLVE_COLUMNS)
        .next_multiple_of(threads)
        .min(n / 2)
        .max(1);
    let mut parts = Vec::with_capacity(chunks);
    let mut rest = a.as_mut();
    for c in 0..chunks {
        let width = (c + 1) * n / chunks - c * n / chunks;
        let (head, tail) = rest.split_at_col_mut(width);
        parts.push(head);
        rest = tail;
    }
    parts
        .into_par_iter()
        .for_each(|part| chol.solve_lower_in_place_seq(part));
}

/// Multiply row i of `a` by `s[i]` (`diag(s) A`), one contiguous column at a time, columns in
/// parallel.
fn scale_rows(a: &mut Mat<f64>, s: &[f64]) {
    use rayon::prelude::*;
    debug_assert_eq!(a.nrows(), s.len());
    a.par_col_iter_mut().for_each(|c| {
        let c = c
            .try_as_col_major_mut()
            .expect("an owned matrix")
            .as_slice_mut();
        for (v, si) in c.iter_mut().zip(s) {
            *v *= si;
        }
    });
}

/// The eigenvalues of a symmetric matrix (lower triangle read) by faer's low-level
/// eigensolver, its `M × M` work space allocated fallibly ([`crate::memory::try_scratch`]);
/// what `self_adjoint_eigenvalues` computes, without its infallible allocation.
fn self_adjoint_eigenvalues(a: faer::MatRef<'_, f64>) -> Result<Vec<f64>> {
    use faer::linalg::evd;
    let (n, par) = (a.nrows(), faer::get_global_parallelism());
    let req = evd::self_adjoint_evd_scratch::<f64>(
        n,
        evd::ComputeEigenvectors::No,
        par,
        Default::default(),
    );
    let mut buf = crate::memory::try_scratch(req, n, "the eigenvalues' work space")?;
    let mut s = faer::diag::Diag::<f64>::zeros(n);
    evd::self_adjoint_evd(
        a,
        s.as_mut(),
        None,
        par,
        faer::dyn_stack::MemStack::new(&mut buf),
        Default::default(),
    )
    .map_err(|_| Error::Numerical {
        what: "whitened posterior covariance",
        message: "its eigenvalues did not converge".into(),
    })?;
    Ok(s.column_vector().iter().copied().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::laplace::{laplace, LaplaceConfig};
    use crate::likelihood::Likelihood;

    /// `variance_ratio_bound`: 1 for the site form (a Laplace fit); for a whitened form whose
    /// `B` has eigenvalues below 1 (q(u) wider than p(u)) and a dense form with `Σ = 2.5·K_B`,
    /// above 1 and never below `v(x)/k(x,x)` on a grid of inputs near and far from the basis,
    /// which it reaches at the basis (where `q = k`).
    #[test]
    fn variance_ratio_bound_holds_everywhere() {
        use crate::linalg::JitterPolicy;
        let (lap, _) = fitted();
        assert_eq!(lap.variance_ratio_bound().unwrap(), 1.0);
        let k = Kernel::se_iso(0.8, 1.7);
        let z = Mat::from_fn(4, 2, |i, j| {
            (i as f64 - 1.5) * if j == 0 { 0.9 } else { 0.4 }
        });
        let kb = k.gram(z.as_ref()).unwrap();
        let chol =
            |m: &Mat<f64>| Cholesky::factor(m.as_ref(), &JitterPolicy::default(), "test").unwrap();
        let b = Mat::from_fn(
            4,
            4,
            |i, j| if i == j { 0.3 + 0.1 * i as f64 } else { 0.02 },
        );
        let whitened =
            GaussianPosterior::whitened(k.clone(), z.clone(), vec![0.1; 4], chol(&kb), chol(&b));
        let sigma = Mat::from_fn(4, 4, |i, j| 2.5 * kb[(i, j)]);
        let dense =
            GaussianPosterior::dense(k.clone(), z.clone(), vec![0.1; 4], chol(&kb), chol(&sigma));
        let x = Mat::from_fn(400, 2, |i, j| {
            ((i * 37 + j * 11) % 97) as f64 / 97.0 * 8.0 - 4.0
        });
        for (q, at_least) in [(whitened, 1.0 / 0.3 * 0.9), (dense, 2.5 - 1e-6)] {
            let kappa = q.variance_ratio_bound().unwrap();
            assert!(kappa > at_least, "{kappa}");
            let m = q.predict(x.as_ref()).unwrap();
            let prior = q.prior.diag(x.as_ref()).unwrap();
            let worst = (0..x.nrows())
                .map(|i| m.var[i] / prior[i])
                .fold(0.0, f64::max);
            assert!(worst <= kappa * (1.0 + 1e-9), "{worst} > {kappa}");
            let at_basis = q.predict(z.as_ref()).unwrap();
            let ratio = (0..4)
                .map(|i| at_basis.var[i] / k.diag(z.as_ref())[i])
                .fold(0.0, f64::max);
            assert!(ratio > 1.0, "{ratio}");
        }
    }

    /// Predictions in blocks of any number of rows have the bits of one pass over all rows
    /// (each row's mean and variance come from its own column; a lone row is paired with its
    /// copy), for the site, whitened and dense forms; the block size is [`PREDICT_BLOCK_BYTES`] over `8M`, within 1..=4096.
    #[test]
    fn predictions_do_not_depend_on_the_block_size() {
        use crate::linalg::JitterPolicy;
        let (site, _) = fitted();
        let k = Kernel::se_iso(0.8, 1.7);
        let z = Mat::from_fn(6, 2, |i, j| {
            (i as f64 - 2.5) * if j == 0 { 0.9 } else { 0.4 }
        });
        let kb = k.gram(z.as_ref()).unwrap();
        let chol =
            |m: &Mat<f64>| Cholesky::factor(m.as_ref(), &JitterPolicy::default(), "test").unwrap();
        let b = Mat::from_fn(
            6,
            6,
            |i, j| if i == j { 1.3 + 0.1 * i as f64 } else { 0.05 },
        );
        let sigma = Mat::from_fn(6, 6, |i, j| 0.5 * kb[(i, j)]);
        let alpha = vec![0.3, -0.1, 0.2, 0.05, -0.4, 0.1];
        let forms = [
            site,
            GaussianPosterior::whitened(k.clone(), z.clone(), alpha.clone(), chol(&kb), chol(&b)),
            GaussianPosterior::dense(k.clone(), z.clone(), alpha, chol(&kb), chol(&sigma)),
        ];
        let x = Mat::from_fn(301, 2, |i, j| {
            ((i * 37 + j * 11) % 97) as f64 / 97.0 * 6.0 - 3.0
        });
        let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
        for q in &forms {
            let whole = q.predict_at(x.as_ref()).unwrap();
            for rows in [1, 7, 64, 300, 301, 5000] {
                let m = q.predict_in_blocks(x.as_ref(), rows).unwrap();
                assert_eq!(bits(&m.mean), bits(&whole.mean), "means, blocks of {rows}");
                assert_eq!(
                    bits(&m.var),
                    bits(&whole.var),
                    "variances, blocks of {rows}"
                );
            }
            let means = q.predict_mean(x.as_ref()).unwrap();
            assert_eq!(bits(&means), bits(&whole.mean));
        }
        // 2²⁶ bytes / (8 · 43 152) = 194.4: an exact GP on the diamonds table's 43 152 rows.
        assert_eq!(block_rows(43_152), 194);
        assert_eq!(block_rows(500), PREDICT_BLOCK_ROWS);
        assert_eq!(block_rows(0), PREDICT_BLOCK_ROWS);
        assert_eq!(block_rows(usize::MAX / 8), 1);
    }

    /// Marginals against a brute-force dense computation that shares no code with
    /// [`GaussianPosterior::predict`]: `μ = k_xBᵀα`, `v = k(x,x) − k_xBᵀ R k_xB` with the
    /// M×M matrix `R` formed explicitly by LU solves for each form: site form
    /// `R = (K_B + Π⁻¹)⁻¹` (exact GPR: `v = k − kᵀ(K + σ²I)⁻¹k`; a classifier's varying π);
    /// whitened `R = L⁻ᵀ(I − B⁻¹)L⁻¹`; dense with `Σ = 0.4K_B + 0.01I`,
    /// `R = K_B⁻¹ − K_B⁻¹ΣK_B⁻¹ = 0.6K_B⁻¹ − 0.01K_B⁻²`. Agreement to 1e-10 relative, on
    /// 2 050 rows in blocks of 1 025 and one row alone.
    #[test]
    fn marginals_match_a_dense_brute_force_computation() {
        use crate::linalg::JitterPolicy;
        use faer::linalg::solvers::Solve;
        use rand::{Rng, SeedableRng};
        let (n, d) = (70, 3);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let basis = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0..2.0));
        let x = Mat::from_fn(2050, d, |_, _| rng.gen_range(-2.5..2.5));
        let k = Kernel::se_ard(&[0.6, 0.9, 0.7], 1.3);
        let kb = k.gram(basis.as_ref()).unwrap();
        let eye = Mat::<f64>::identity(n, n);
        let inv = |m: &Mat<f64>| m.partial_piv_lu().solve(&eye);
        let chol =
            |m: &Mat<f64>| Cholesky::factor(m.as_ref(), &JitterPolicy::default(), "test").unwrap();
        let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-0.5..0.5)).collect();
        let site = |pi: Vec<f64>| {
            let s: Vec<f64> = pi.iter().map(|p| p.sqrt()).collect();
            let b = Cholesky::factor_filled(
                n,
                linalg::fill_site_b(&kb, &s, 0.0),
                None,
                &JitterPolicy::default(),
                "B",
            )
            .unwrap();
            let r = inv(&Mat::from_fn(n, n, |i, j| {
                kb[(i, j)] + if i == j { 1.0 / pi[i] } else { 0.0 }
            }));
            let q = GaussianPosterior::sites(k.clone(), basis.clone(), alpha.clone(), s, b);
            (q, r)
        };
        let bw = Mat::from_fn(
            n,
            n,
            |i, j| {
                if i == j {
                    1.5 + 0.01 * i as f64
                } else {
                    0.01
                }
            },
        );
        let l_inv = inv(&chol(&kb).l().to_owned());
        let whitened_r = l_inv.transpose() * (&eye - inv(&bw)) * &l_inv;
        let kb_inv = inv(&kb);
        let kb_inv2 = &kb_inv * &kb_inv;
        let dense_r = Mat::from_fn(n, n, |i, j| 0.6 * kb_inv[(i, j)] - 0.01 * kb_inv2[(i, j)]);
        let sigma = Mat::from_fn(n, n, |i, j| {
            0.4 * kb[(i, j)] + if i == j { 0.01 } else { 0.0 }
        });
        let forms = [
            site(vec![1.0 / 0.05; n]),
            site((0..n).map(|_| rng.gen_range(0.05..3.0)).collect()),
            (
                GaussianPosterior::whitened(
                    k.clone(),
                    basis.clone(),
                    alpha.clone(),
                    chol(&kb),
                    chol(&bw),
                ),
                whitened_r,
            ),
            (
                GaussianPosterior::dense(
                    k.clone(),
                    basis.clone(),
                    alpha.clone(),
                    chol(&kb),
                    chol(&sigma),
                ),
                dense_r,
            ),
        ];
        let kxb = Mat::from_fn(x.nrows(), n, |i, m| k.eval(&row(&x, i), &row(&basis, m)));
        for (form, (q, r)) in forms.iter().enumerate() {
            let rk = r * kxb.transpose();
            let got = q.predict_in_blocks(x.as_ref(), 1025).unwrap();
            let kxx = 1.3; // the SE kernel's k(x, x)
            for i in 0..x.nrows() {
                let mu: f64 = (0..n).map(|m| kxb[(i, m)] * alpha[m]).sum();
                let v = kxx - (0..n).map(|m| kxb[(i, m)] * rk[(m, i)]).sum::<f64>();
                assert!(
                    (got.mean[i] - mu).abs() <= 1e-10 * (1.0 + mu.abs()),
                    "form {form}, mean {i}"
                );
                assert!(
                    (got.var[i] - v.max(0.0)).abs() <= 1e-10 * kxx,
                    "form {form}, variance {i}: {} against {v}",
                    got.var[i]
                );
            }
            let lone = q.predict(x.subrows(7, 1)).unwrap();
            assert!((lone.var[0] - got.var[7]).abs() <= 1e-12 * kxx);
        }
    }

    /// Row `i` of `a` as a vector.
    fn row(a: &Mat<f64>, i: usize) -> Vec<f64> {
        (0..a.ncols()).map(|j| a[(i, j)]).collect()
    }

    /// A joint covariance over more test points than memory holds is the typed error, asked
    /// for before anything of that size is allocated: N* rows with 8N*² bytes ten times the
    /// memory available now (170 000 rows, 1.4 MB of inputs, on a machine with 21 GB free).
    #[test]
    fn a_covariance_too_large_for_memory_is_a_typed_error() {
        let Some(available) = crate::memory::available_memory() else {
            return; // no MemAvailable to check against (not Linux): the allocator decides
        };
        let (post, _) = fitted();
        let n_star = (10.0 * available as f64 / 8.0).sqrt().ceil() as usize;
        let x = Mat::from_fn(n_star, 2, |i, j| ((i + j) % 13) as f64 / 6.0 - 1.0);
        match post.covariance(x.as_ref(), x.as_ref()) {
            Err(Error::OutOfMemory {
                rows,
                cols,
                bytes: Some(b),
                ..
            }) => {
                assert_eq!((rows, cols), (n_star, n_star));
                assert!(
                    b >= 10 * available,
                    "{b} bytes against {available} available"
                );
            }
            other => panic!("{:?}", other.map(|c| c.nrows())),
        }
        // Marginal predictions at the same rows go in blocks and need no such matrix.
        let m = post.predict(x.as_ref()).unwrap();
        assert_eq!(m.mean.len(), n_star);
    }

    fn fitted() -> (GaussianPosterior, Mat<f64>) {
        let n = 40;
        let x = Mat::from_fn(n, 2, |i, j| ((i * 7 + j * 3) % 13) as f64 / 6.0 - 1.0);
        let y: Vec<f64> = (0..n)
            .map(|i| {
                if x[(i, 0)] + 0.5 * x[(i, 1)] > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let k = Kernel::se_iso(0.8, 2.0);
        let fit = laplace(
            &k,
            &Likelihood::probit(),
            x.as_ref(),
            &y,
            &LaplaceConfig::default(),
        )
        .unwrap();
        (fit.posterior, x)
    }

    /// The site form is written without its factor and refactored on load: predictions and
    /// KL agree to round-off, and a file that still holds `chol_b` reads the same.
    #[test]
    fn site_posterior_round_trips_without_its_factor() {
        let (post, x) = fitted();
        let json = serde_json::to_string(&post).unwrap();
        assert!(!json.contains("chol_b"), "the N×N factor is not stored");
        let back: GaussianPosterior = serde_json::from_str(&json).unwrap();
        let (a, b) = (
            post.predict(x.as_ref()).unwrap(),
            back.predict(x.as_ref()).unwrap(),
        );
        for i in 0..x.nrows() {
            assert!((a.mean[i] - b.mean[i]).abs() < 1e-12);
            assert!((a.var[i] - b.var[i]).abs() < 1e-12);
        }
        assert!((post.kl_to_prior().unwrap() - back.kl_to_prior().unwrap()).abs() < 1e-10);
        // The older layout with the factor inline.
        let Covariance::Sites { sqrt_pi, chol_b } = post.cov.clone() else {
            panic!("Laplace gives the site form")
        };
        let old = file::PosteriorFile {
            prior: None,
            kernel: Some(post.kernel().clone()),
            basis: post.basis.clone(),
            alpha: post.alpha.clone(),
            cov: file::CovarianceFile::Sites {
                sqrt_pi,
                chol_b: Some(chol_b),
                jitter: 0.0,
            },
        };
        let old: GaussianPosterior =
            serde_json::from_str(&serde_json::to_string(&old).unwrap()).unwrap();
        assert!((old.kl_to_prior().unwrap() - post.kl_to_prior().unwrap()).abs() < 1e-12);
        // A file whose sizes disagree is an error, not a panic.
        let bad = json.replacen("\"alpha\":[", "\"alpha\":[0.5,", 1);
        assert!(serde_json::from_str::<GaussianPosterior>(&bad).is_err());
    }
}
