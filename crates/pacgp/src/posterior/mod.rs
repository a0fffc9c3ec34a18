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
mod predict;
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
        Self::with_cov(prior, basis, alpha, Covariance::Sites { sqrt_pi, chol_b })
    }

    /// The whitened inducing form over `prior`: `Σ = L_uu B⁻¹ L_uuᵀ`.
    pub fn whitened(
        prior: impl Into<Prior>,
        basis: Mat<f64>,
        alpha: Vec<f64>,
        chol_kuu: Cholesky,
        chol_b: Cholesky,
    ) -> Self {
        Self::with_cov(
            prior,
            basis,
            alpha,
            Covariance::WhitenedPrecision { chol_kuu, chol_b },
        )
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
        let cov = Covariance::Dense {
            chol_kb,
            chol_sigma,
        };
        Self::with_cov(prior, basis, alpha, cov)
    }

    /// The posterior over `prior` with mean weights `alpha` at `basis` and covariance `cov`,
    /// which the constructors above name by its form.
    fn with_cov(
        prior: impl Into<Prior>,
        basis: Mat<f64>,
        alpha: Vec<f64>,
        cov: Covariance,
    ) -> Self {
        Self {
            prior: prior.into(),
            basis,
            alpha,
            cov,
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
mod tests;
