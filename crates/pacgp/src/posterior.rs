//! The one Gaussian posterior every model ends as (Csató–Opper form over a basis set B):
//!
//! `μ(x) = k(x,B)ᵀ α`,  `v(x) = k(x,x) − k(x,B)ᵀ R k(x,B)`,
//!
//! with `R` held factored in one of the forms of [`Covariance`]. Prediction and
//! `KL(Q‖P)` (docs/math.md §3.0: the KL of the process reduces to the KL on `f_B`) are written
//! once here and serve exact and sparse regression and every classifier.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky};

/// How the posterior covariance on the basis values `f_B` is stored.
#[derive(Clone, Debug)]
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

/// A Gaussian-process posterior `Q` over the latent function. On disk the site form keeps
/// `√π` and the jitter and refactors `B` on load (see [`PosteriorFile`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "PosteriorFile", into = "PosteriorFile")]
pub struct GaussianPosterior {
    /// The prior covariance function (with its fitted hyperparameters).
    pub kernel: Kernel,
    /// Basis inputs B (M×D): training points, active set, or inducing inputs.
    pub basis: Mat<f64>,
    /// Mean weights: `μ(x) = k(x,B)ᵀ α`.
    pub alpha: Vec<f64>,
    /// Covariance representation.
    pub cov: Covariance,
}

/// On-disk form of a [`GaussianPosterior`]. The site form stores `√π` and the jitter of
/// `chol(B)`, not the `N×N` factor: at N = 2000 that is 53 MB of JSON against one
/// `N³/3` factorisation of `B = I + Π½K_BΠ½ + jitter·I` when the file is read. Files that
/// hold `chol_b` (written before) are read as they are.
#[derive(Serialize, Deserialize)]
struct PosteriorFile {
    kernel: Kernel,
    #[serde(with = "linalg::serde_mat")]
    basis: Mat<f64>,
    alpha: Vec<f64>,
    cov: CovarianceFile,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case")]
enum CovarianceFile {
    Sites {
        sqrt_pi: Vec<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chol_b: Option<Cholesky>,
        #[serde(default)]
        jitter: f64,
    },
    WhitenedPrecision {
        chol_kuu: Cholesky,
        chol_b: Cholesky,
    },
    Dense {
        chol_kb: Cholesky,
        chol_sigma: Cholesky,
    },
}

impl From<GaussianPosterior> for PosteriorFile {
    fn from(p: GaussianPosterior) -> Self {
        let cov = match p.cov {
            Covariance::Sites { sqrt_pi, chol_b } => CovarianceFile::Sites {
                sqrt_pi,
                jitter: chol_b.jitter(),
                chol_b: None,
            },
            Covariance::WhitenedPrecision { chol_kuu, chol_b } => {
                CovarianceFile::WhitenedPrecision { chol_kuu, chol_b }
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => CovarianceFile::Dense {
                chol_kb,
                chol_sigma,
            },
        };
        Self {
            kernel: p.kernel,
            basis: p.basis,
            alpha: p.alpha,
            cov,
        }
    }
}

impl TryFrom<PosteriorFile> for GaussianPosterior {
    type Error = String;
    fn try_from(f: PosteriorFile) -> std::result::Result<Self, String> {
        let m = f.basis.nrows();
        if f.alpha.len() != m {
            return Err(format!(
                "posterior has {} mean weights for {m} basis points",
                f.alpha.len()
            ));
        }
        // The kernel must fit the basis before it is evaluated on it (refactoring the sites).
        f.kernel
            .check_input_dim(f.basis.ncols())
            .map_err(|e| e.to_string())?;
        if f.kernel.params().iter().any(|t| !t.is_finite()) {
            return Err("a kernel hyperparameter is not finite".into());
        }
        crate::data::check_finite(f.basis.as_ref(), "stored basis").map_err(|e| e.to_string())?;
        let cov = match f.cov {
            CovarianceFile::Sites {
                sqrt_pi,
                chol_b,
                jitter,
            } => {
                if sqrt_pi.len() != m {
                    return Err(format!(
                        "posterior has {} site precisions for {m} basis points",
                        sqrt_pi.len()
                    ));
                }
                let chol_b = match chol_b {
                    Some(c) => c,
                    None => refactor_sites(&f.kernel, f.basis.as_ref(), &sqrt_pi, jitter)
                        .map_err(|e| e.to_string())?,
                };
                Covariance::Sites { sqrt_pi, chol_b }
            }
            CovarianceFile::WhitenedPrecision { chol_kuu, chol_b } => {
                Covariance::WhitenedPrecision { chol_kuu, chol_b }
            }
            CovarianceFile::Dense {
                chol_kb,
                chol_sigma,
            } => Covariance::Dense {
                chol_kb,
                chol_sigma,
            },
        };
        let post = Self {
            kernel: f.kernel,
            basis: f.basis,
            alpha: f.alpha,
            cov,
        };
        post.validate().map_err(|e| e.to_string())?;
        Ok(post)
    }
}

/// A stored Cholesky factor must be `m×m`, finite, with a positive diagonal.
fn check_factor(c: &Cholesky, m: usize, what: &str) -> std::result::Result<(), String> {
    let l = c.l();
    if l.nrows() != m || l.ncols() != m {
        return Err(format!(
            "{what} factor is {}×{} for {m} basis points",
            l.nrows(),
            l.ncols()
        ));
    }
    for j in 0..m {
        if !(l[(j, j)] > 0.0) {
            return Err(format!("{what} factor has a non-positive pivot at {j}"));
        }
        for i in j..m {
            if !l[(i, j)].is_finite() {
                return Err(format!(
                    "{what} factor has a non-finite entry at ({i}, {j})"
                ));
            }
        }
    }
    Ok(())
}

/// `chol(I + Π½K_BΠ½ + jitter·I)`, the site form's factor, rebuilt with the jitter it had.
fn refactor_sites(
    kernel: &Kernel,
    basis: MatRef<'_, f64>,
    sqrt_pi: &[f64],
    jitter: f64,
) -> Result<Cholesky> {
    if !(jitter >= 0.0 && jitter.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "stored jitter",
            value: jitter,
            reason: "must be finite and non-negative",
        });
    }
    let k = kernel.gram(basis);
    let chol = Cholesky::factor_filled(
        sqrt_pi.len(),
        linalg::fill_site_b(&k, sqrt_pi, jitter),
        None,
        &linalg::JitterPolicy::none(),
        "I + Π½K_BΠ½ of a stored posterior",
    )?;
    Ok(Cholesky::from_lower(chol.into_storage(), jitter))
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
        if self.kernel.params().iter().any(|t| !t.is_finite()) {
            return Err(bad("a kernel hyperparameter is not finite".into()));
        }
        self.kernel.check_input_dim(self.basis.ncols())?;
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
            check_factor(c, m, what).map_err(bad)?;
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
        // In blocks of rows: memory O(block·M), not O(N*·M) (10⁶ training points at M = 500
        // are 4 GB per N*×M matrix).
        const ROWS: usize = 4096;
        let n = x.nrows();
        let (mut mean, mut var) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for lo in (0..n).step_by(ROWS) {
            let part = self.predict_rows(x.subrows(lo, ROWS.min(n - lo)));
            mean.extend(part.mean);
            var.extend(part.var);
        }
        Ok(Marginals { mean, var })
    }

    /// [`Self::predict`] on one block of rows.
    fn predict_rows(&self, x: MatRef<'_, f64>) -> Marginals {
        let kxb = self.kernel.cross(x, self.basis.as_ref()); // N*×M
        let mean: Vec<f64> = (0..x.nrows())
            .map(|i| {
                (0..self.n_basis())
                    .map(|m| kxb[(i, m)] * self.alpha[m])
                    .sum()
            })
            .collect();
        let prior = self.kernel.diag(x);
        // A = (projection of k(x,B)) columns, one column per test point (M×N*).
        let mut a = kxb.transpose().to_owned();
        let reduction: Vec<f64> = match &self.cov {
            Covariance::Sites { sqrt_pi, chol_b } => {
                scale_rows(&mut a, sqrt_pi);
                chol_b.solve_lower_in_place(a.as_mut());
                col_sq_norms(a.as_ref())
            }
            Covariance::WhitenedPrecision { chol_kuu, chol_b } => {
                chol_kuu.solve_lower_in_place(a.as_mut());
                let w2 = col_sq_norms(a.as_ref());
                chol_b.solve_lower_in_place(a.as_mut());
                let q = col_sq_norms(a.as_ref());
                w2.iter().zip(&q).map(|(w, q)| w - q).collect()
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => {
                // w = L_K⁻¹k: ‖w‖² = kᵀK⁻¹k; z = L_K⁻ᵀw = K⁻¹k; ‖L_Σᵀz‖² = kᵀK⁻¹ΣK⁻¹k.
                chol_kb.solve_lower_in_place(a.as_mut());
                let w2 = col_sq_norms(a.as_ref());
                chol_kb.solve_upper_in_place(a.as_mut());
                let t = chol_sigma.l().transpose() * &a;
                let q = col_sq_norms(t.as_ref());
                w2.iter().zip(&q).map(|(w, q)| w - q).collect()
            }
        };
        let var = prior
            .iter()
            .zip(&reduction)
            .map(|(p, r)| (p - r).max(0.0))
            .collect();
        Marginals { mean, var }
    }

    /// `KL(Q‖P) = KL(N(a,Σ) ‖ N(0,K_B))` (docs/math.md §3.0–3.2, §7.3–7.4), in nats.
    ///
    /// The site and whitened forms share `½[ln det B + tr B⁻¹ + αᵀK_Bα − M]`; the dense form
    /// uses the generic Gaussian KL through its two Cholesky factors.
    pub fn kl_to_prior(&self) -> f64 {
        let m = self.n_basis() as f64;
        let quad = self.alpha_k_alpha();
        match &self.cov {
            Covariance::Sites { chol_b, .. } | Covariance::WhitenedPrecision { chol_b, .. } => {
                0.5 * (chol_b.ln_det() + chol_b.inverse_trace() + quad - m)
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => {
                // Generic Gaussian KL: ½[tr(K⁻¹Σ) + αᵀKα − M + ln det K − ln det Σ],
                // tr(K⁻¹Σ) = ‖L_K⁻¹ L_Σ‖_F².
                let mut v = chol_sigma.l().to_owned();
                chol_kb.solve_lower_in_place(v.as_mut());
                let trace: f64 = col_sq_norms(v.as_ref()).iter().sum();
                0.5 * (trace + quad - m + chol_kb.ln_det() - chol_sigma.ln_det())
            }
        }
    }

    /// `αᵀ K_B α` (the mean term of the KL); for the inducing and dense forms with the stored
    /// (jittered) `K = L Lᵀ`, as `‖Lᵀα‖²`, so the KL is that of the prior the posterior was
    /// built on.
    fn alpha_k_alpha(&self) -> f64 {
        if let Covariance::WhitenedPrecision { chol_kuu, .. }
        | Covariance::Dense {
            chol_kb: chol_kuu, ..
        } = &self.cov
        {
            let l = chol_kuu.l();
            let m = self.alpha.len();
            return (0..m)
                .map(|j| {
                    (j..m)
                        .map(|i| l[(i, j)] * self.alpha[i])
                        .sum::<f64>()
                        .powi(2)
                })
                .sum();
        }
        let kb = self.kernel.gram(self.basis.as_ref());
        linalg::dot(&self.alpha, &linalg::mat_vec(&kb, &self.alpha))
    }
}

/// Multiply row i of `a` by `s[i]`.
fn scale_rows(a: &mut Mat<f64>, s: &[f64]) {
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            a[(i, j)] *= s[i];
        }
    }
}

/// Squared Euclidean norm of every column.
fn col_sq_norms(a: MatRef<'_, f64>) -> Vec<f64> {
    (0..a.ncols())
        .map(|j| (0..a.nrows()).map(|i| a[(i, j)] * a[(i, j)]).sum())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::laplace::{laplace, LaplaceConfig};
    use crate::likelihood::Likelihood;

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
        assert!((post.kl_to_prior() - back.kl_to_prior()).abs() < 1e-10);
        // The older layout with the factor inline.
        let Covariance::Sites { sqrt_pi, chol_b } = post.cov.clone() else {
            panic!("Laplace gives the site form")
        };
        let old = PosteriorFile {
            kernel: post.kernel.clone(),
            basis: post.basis.clone(),
            alpha: post.alpha.clone(),
            cov: CovarianceFile::Sites {
                sqrt_pi,
                chol_b: Some(chol_b),
                jitter: 0.0,
            },
        };
        let old: GaussianPosterior =
            serde_json::from_str(&serde_json::to_string(&old).unwrap()).unwrap();
        assert!((old.kl_to_prior() - post.kl_to_prior()).abs() < 1e-12);
        // A file whose sizes disagree is an error, not a panic.
        let bad = json.replacen("\"alpha\":[", "\"alpha\":[0.5,", 1);
        assert!(serde_json::from_str::<GaussianPosterior>(&bad).is_err());
    }
}
