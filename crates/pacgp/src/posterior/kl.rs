//! The Gaussian KL, written once (docs/math.md §3.0):
//!
//! `KL(N(μ + d, Σ) ‖ N(μ, K)) = ½[tr(K⁻¹Σ) + dᵀK⁻¹d − n − ln det(K⁻¹Σ)]`.
//!
//! Every KL the library charges or minimises — the shared posterior's, the bound-trained
//! objectives' (PAC-GP, PAC-SGP and its sharded sums, per-point noise, PAC-GPC's sites), the
//! split priors' and the softmax posterior's — is this formula of four invariants,
//! [`GaussianKlTerms`]. Each caller computes the invariants from the factorisation it already
//! holds (and differentiates them itself where it minimises the KL); none writes the formula.
//!
//! [`GaussianPosterior::kl_to`] is `KL(Q‖P)` against a prior that need not be the one Q is
//! written over: a conditioned prior whose posterior shares Q's basis (the sparse split prior).

use faer::Mat;

use super::{Covariance, GaussianPosterior, Prior};
use crate::error::{Error, Result};
use crate::linalg::{self, Cholesky, JitterPolicy};

/// The four invariants of `KL(N(μ + d, Σ) ‖ N(μ, K))` in `n` dimensions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussianKlTerms {
    /// `tr(K⁻¹Σ)`.
    pub trace: f64,
    /// `dᵀK⁻¹d`, the mean shift's Mahalanobis square.
    pub mahalanobis: f64,
    /// The dimension `n`.
    pub dim: f64,
    /// `ln det(K⁻¹Σ) = ln det Σ − ln det K`.
    pub ln_det_ratio: f64,
}

impl GaussianKlTerms {
    /// `½[tr(K⁻¹Σ) + dᵀK⁻¹d − n − ln det(K⁻¹Σ)]`, in nats (docs/math.md §3.0). Summed as
    /// `((−ln det(K⁻¹Σ) + tr) + dᵀK⁻¹d) − n`, the order the site forms always used, so the
    /// certificates and optimiser paths of earlier versions are reproduced to the last bit.
    pub fn kl(&self) -> f64 {
        0.5 * (-self.ln_det_ratio + self.trace + self.mahalanobis - self.dim)
    }

    /// The site (whitened-precision) form `Σ = K^½ B⁻¹ K^½ᵀ` with `B = L_B L_Bᵀ`: `K⁻¹Σ` is
    /// similar to `B⁻¹`, so `tr(K⁻¹Σ) = tr B⁻¹ = ‖L_B⁻¹‖²_F` and `ln det(K⁻¹Σ) = −ln det B`
    /// (docs/math.md §3.2, §7.4).
    pub fn site_form(trace_b_inv: f64, mahalanobis: f64, dim: usize, ln_det_b: f64) -> Self {
        Self {
            trace: trace_b_inv,
            mahalanobis,
            dim: dim as f64,
            ln_det_ratio: -ln_det_b,
        }
    }
}

/// `KL(N(m, S) ‖ N(μ, K))` of two dense Gaussians, by their Cholesky factors (no jitter: a
/// matrix that is not positive definite is an error), through [`GaussianKlTerms`].
pub fn dense_gaussian_kl(m: &[f64], s: &Mat<f64>, mu: &[f64], k: &Mat<f64>) -> Result<f64> {
    let lk = Cholesky::factor(k.as_ref(), &JitterPolicy::none(), "K of a dense KL")?;
    let ls = Cholesky::factor(s.as_ref(), &JitterPolicy::none(), "S of a dense KL")?;
    let d: Vec<f64> = m.iter().zip(mu).map(|(a, b)| a - b).collect();
    let kd = lk.solve_vec(&d);
    Ok(GaussianKlTerms {
        trace: trace_k_inv_sigma(&lk, &ls),
        mahalanobis: linalg::dot(&d, &kd),
        dim: m.len() as f64,
        ln_det_ratio: ls.ln_det() - lk.ln_det(),
    }
    .kl())
}

/// `tr(K⁻¹Σ) = ‖L_K⁻¹ L_Σ‖²_F` from the two Cholesky factors.
pub(crate) fn trace_k_inv_sigma(chol_k: &Cholesky, chol_sigma: &Cholesky) -> f64 {
    let mut v = chol_sigma.l().to_owned();
    chol_k.solve_lower_in_place(v.as_mut());
    linalg::col_sq_norms(&v).iter().sum()
}

impl GaussianPosterior {
    /// `KL(Q‖P)` against the prior `P` a certificate charges Q for: Q's own prior
    /// ([`GaussianPosterior::kl_to_prior`]), or a conditioned prior whose posterior is Q's
    /// sibling — the same prior, basis and basis factor, as the sparse split prior's
    /// `P_A = ∫ p(f|u) q_A(u) du` and `Q = ∫ p(f|u) q(u) du` (docs/math.md §9.3.2). Siblings share
    /// their conditional given the basis values, so their KL is that of the basis values,
    /// `KL(N(a_Q, Σ_Q) ‖ N(a_P, Σ_P))`. Any other pair is an error, not a number.
    pub fn kl_to(&self, prior: &Prior) -> Result<f64> {
        match prior {
            Prior::Conditioned(p) if self.is_sibling_of(p) => self.kl_to_sibling(p),
            _ if self.prior == *prior => self.kl_to_prior(),
            _ => Err(Error::Unsupported(
                "KL(Q‖P) to a prior that is neither Q's own nor a posterior on Q's basis".into(),
            )),
        }
    }

    /// Whether `other` is written over the same GP prior, basis and basis factor in the dense
    /// form (bit for bit: a sibling is built from the same factorisation).
    fn is_sibling_of(&self, other: &GaussianPosterior) -> bool {
        match (&self.prior, &other.prior, &self.cov, &other.cov) {
            (
                Prior::Gp(k),
                Prior::Gp(k_other),
                Covariance::Dense { chol_kb, .. },
                Covariance::Dense {
                    chol_kb: chol_other,
                    ..
                },
            ) => {
                k == k_other
                    && linalg::same_mat(self.basis.as_ref(), other.basis.as_ref())
                    && chol_kb == chol_other
            }
            _ => false,
        }
    }

    /// The KL of two siblings' basis values from their factors: the mean shift
    /// `K_B(α_Q − α_P)` (with the shared, jittered `K_B = L Lᵀ`) and covariances `Σ = L_Σ L_Σᵀ`.
    fn kl_to_sibling(&self, p: &GaussianPosterior) -> Result<f64> {
        let m = self.n_basis();
        let (
            Covariance::Dense {
                chol_kb,
                chol_sigma: chol_q,
            },
            Covariance::Dense {
                chol_sigma: chol_p, ..
            },
        ) = (&self.cov, &p.cov)
        else {
            return Err(Error::Unsupported(
                "a KL between siblings needs their dense form".into(),
            ));
        };
        if self.alpha.len() != m || p.alpha.len() != m {
            return Err(Error::ShapeMismatch {
                what: "mean weights of a sibling posterior",
                expected: format!("{m}"),
                found: format!("{} and {}", self.alpha.len(), p.alpha.len()),
            });
        }
        let l = chol_kb.l().to_owned();
        let shift: Vec<f64> = self
            .alpha
            .iter()
            .zip(&p.alpha)
            .map(|(a, b)| a - b)
            .collect();
        let d = linalg::mat_vec(&l, &linalg::mat_t_vec(&l, &shift));
        Ok(GaussianKlTerms {
            trace: trace_k_inv_sigma(chol_p, chol_q),
            mahalanobis: linalg::dot(&d, &chol_p.solve_vec(&d)),
            dim: d.len() as f64,
            ln_det_ratio: chol_q.ln_det() - chol_p.ln_det(),
        }
        .kl())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One dimension: `KL(N(a, s) ‖ N(b, k)) = ½[s/k + (a−b)²/k − 1 − ln(s/k)]`.
    #[test]
    fn one_dimension_is_the_scalar_closed_form() {
        let (a, s, b, k): (f64, f64, f64, f64) = (0.7, 0.3, -0.2, 1.9);
        let want = 0.5 * (s / k + (a - b) * (a - b) / k - 1.0 - (s / k).ln());
        let got = dense_gaussian_kl(&[a], &Mat::from_fn(1, 1, |_, _| s), &[b], &{
            Mat::from_fn(1, 1, |_, _| k)
        })
        .unwrap();
        assert!((got - want).abs() < 1e-15, "{got} vs {want}");
    }

    /// Independent dimensions add up, and a Gaussian is at KL 0 from itself.
    #[test]
    fn diagonal_gaussians_add_up_and_the_self_kl_is_zero() {
        let (m, s): ([f64; 3], [f64; 3]) = ([0.1, -1.0, 2.0], [0.5, 2.0, 1.5]);
        let (mu, k): ([f64; 3], [f64; 3]) = ([0.0, 0.5, 1.0], [1.0, 3.0, 0.7]);
        let diag = |v: &[f64; 3]| Mat::from_fn(3, 3, |i, j| if i == j { v[i] } else { 0.0 });
        let sum: f64 = (0..3)
            .map(|i| {
                let (r, d) = (s[i] / k[i], m[i] - mu[i]);
                0.5 * (r + d * d / k[i] - 1.0 - r.ln())
            })
            .sum();
        let got = dense_gaussian_kl(&m, &diag(&s), &mu, &diag(&k)).unwrap();
        assert!((got - sum).abs() < 1e-14);
        assert!(
            dense_gaussian_kl(&mu, &diag(&k), &mu, &diag(&k))
                .unwrap()
                .abs()
                < 1e-15
        );
    }

    /// `kl_to`: against Q's own prior it is `kl_to_prior`; against a sibling on the same
    /// basis it is the dense KL of the basis values (means `Kα`, covariances Σ), zero against
    /// itself; against a posterior on another basis it is an error.
    #[test]
    fn kl_to_a_sibling_is_the_kl_of_the_basis_values() {
        use crate::kernel::Kernel;
        let k = Kernel::se_iso(0.9, 1.3);
        let z = Mat::from_fn(3, 1, |i, _| i as f64 * 0.7 - 0.5);
        let kb = k.gram(z.as_ref()).unwrap();
        let chol_kb = Cholesky::factor(kb.as_ref(), &JitterPolicy::default(), "K").unwrap();
        let sigma =
            |s: f64| Mat::from_fn(3, 3, |i, j| s * kb[(i, j)] + if i == j { 0.1 } else { 0.0 });
        let post = |alpha: Vec<f64>, s: f64| {
            let chol = Cholesky::factor(sigma(s).as_ref(), &JitterPolicy::none(), "Σ").unwrap();
            GaussianPosterior::dense(k.clone(), z.clone(), alpha, chol_kb.clone(), chol)
        };
        let (q, p) = (
            post(vec![0.3, -0.2, 0.5], 0.4),
            post(vec![-0.1, 0.4, 0.2], 0.7),
        );
        let mean = |a: &[f64]| linalg::mat_vec(&kb, a);
        let want =
            dense_gaussian_kl(&mean(&q.alpha), &sigma(0.4), &mean(&p.alpha), &sigma(0.7)).unwrap();
        let got = q.kl_to(&Prior::conditioned(p.clone())).unwrap();
        assert!((got - want).abs() < 1e-12 * (1.0 + want), "{got} vs {want}");
        assert!(q.kl_to(&Prior::conditioned(q.clone())).unwrap().abs() < 1e-12);
        assert_eq!(
            q.kl_to(&Prior::Gp(k.clone())).unwrap(),
            q.kl_to_prior().unwrap()
        );
        assert!(q.kl_to(&Prior::Gp(Kernel::se_iso(0.5, 1.3))).is_err());
        let mut moved = p.clone();
        moved.basis[(0, 0)] += 0.1;
        assert!(q.kl_to(&Prior::conditioned(moved)).is_err());
        // Another input dimension (an isotropic kernel takes any): unequal, not a panic.
        let mut wider = p;
        wider.basis = Mat::from_fn(3, 2, |i, _| i as f64);
        assert!(q.kl_to(&Prior::conditioned(wider)).is_err());
    }

    /// A covariance that is not positive definite is an error, not a number.
    #[test]
    fn an_indefinite_covariance_is_refused() {
        let bad = Mat::from_fn(2, 2, |i, j| if i == j { 1.0 } else { 2.0 });
        let eye = Mat::<f64>::identity(2, 2);
        assert!(dense_gaussian_kl(&[0.0, 0.0], &bad, &[0.0, 0.0], &eye).is_err());
        assert!(dense_gaussian_kl(&[0.0, 0.0], &eye, &[0.0, 0.0], &bad).is_err());
    }
}
