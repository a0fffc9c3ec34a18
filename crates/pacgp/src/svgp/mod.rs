//! The sparse variational GP classifier (Hensman, Matthews & Ghahramani 2015, "Scalable
//! variational Gaussian process classification"; docs/math.md §12), trained by its evidence
//! lower bound or by its own PAC-Bayes bound.
//!
//! With M inducing inputs Z, `L_uu L_uuᵀ = K_uu + jitter·I` and the whitened inducing values
//! `v = L_uu⁻¹u ~ N(0, I)` under the prior, the posterior is `q(v) = N(m, S)`, `S = L_q L_qᵀ`
//! (L_q lower triangular, free). At an input x, with `a(x) = L_uu⁻¹ k(Z, x)`:
//!
//! `μ(x) = a(x)ᵀm`,  `σ²(x) = k(x, x) − ‖a(x)‖² + ‖L_qᵀa(x)‖²`   (eq. 12.1)
//!
//! and `KL(Q‖P) = KL(q(v)‖N(0, I)) = ½[‖L_q‖²_F + ‖m‖² − M − 2 Σ ln|L_q,ii|]`   (eq. 12.2)
//!
//! (the process KL reduces to the inducing values', Matthews et al. 2016). The evidence lower
//! bound is `Σ_i E_{N(μ_i, σ_i²)}[ln Φ(y_i f)] − KL` (eq. 12.3, Gauss–Hermite); the bound-trained
//! classifier minimises the PAC-Bayes bound of the Gibbs classifier whose empirical risk is
//! `(1/N) Σ_i Φ(−y_i μ_i/σ_i)` in closed form (eq. 12.4). Both are one streamed objective
//! ([`objective::SvgpObjective`]) over the parameters `[θ…, vec(Z), m, vech(L_q)]`, O(NM²) time
//! and O(M² + threads·block·M) memory per evaluation.
//!
//! - [`point`]: the per-point terms (expected log-likelihood, Gibbs risk) and their derivatives
//!   in `(μ_i, σ_i²)`;
//! - [`objective`]: the streamed objective and its gradient;
//! - [`fit`]: the fit (Z by k-means; L-BFGS on all rows or Adam on minibatches; θ snapped onto
//!   the PAC grid; the certificate).

pub mod fit;
pub mod objective;
pub mod point;
pub mod split;

pub use fit::{fit_svgp, svgp_link, SvgpCriterionSpec, SvgpFit, SvgpSettings};
pub use objective::{SvgpAssembly, SvgpCriterion, SvgpObjective, SvgpShardSums, SvgpTerms};

use faer::{Mat, MatRef};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::Cholesky;
use crate::posterior::GaussianKlTerms;

/// Where each block of the parameter vector `[θ…, vec(Z) row by row, m, vech(L_q)]` lives, for
/// `nk` kernel parameters, `m` inducing inputs in `d` dimensions; `vech(L_q)` is the lower
/// triangle column by column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvgpLayout {
    /// Kernel parameters.
    pub nk: usize,
    /// Inducing inputs M.
    pub m: usize,
    /// Input dimension D.
    pub d: usize,
}

/// The variational parameters of `q(v) = N(m, L_q L_qᵀ)` in the whitened space.
#[derive(Clone, Debug, PartialEq)]
pub struct WhitenedQ {
    /// The mean m (M).
    pub mean: Vec<f64>,
    /// The lower-triangular square root L_q (M×M).
    pub sqrt: Mat<f64>,
}

/// The prior of a split ([`split`]): part A's posterior `q_A(v)` at its θ_A and Z_A. With θ
/// and Z pinned there, `KL(q‖q_A)` on the whitened values is the process KL `KL(Q‖P_A)`
/// (Q and `P_A = ∫ p(f|v) q_A(v) dv` share `p(f|v)`, docs/math.md §9.3.2), so an objective
/// against this prior refuses any other θ or Z.
#[derive(Clone, Debug)]
pub struct WhitenedPrior {
    /// `q_A(v)`.
    pub q: WhitenedQ,
    /// θ_A.
    pub theta: Vec<f64>,
    /// Z_A (M×D).
    pub z: Mat<f64>,
}

impl WhitenedPrior {
    /// Part A's `q_A` at `kernel`'s θ and `z`.
    pub fn new(kernel: &Kernel, z: Mat<f64>, q: WhitenedQ) -> Result<Self> {
        q.check_whitened(z.nrows())?;
        Ok(Self {
            q,
            theta: kernel.params(),
            z,
        })
    }

    /// `KL(q‖q_A)` and its gradient in m and L_q ([`WhitenedQ::kl_to_with_gradient`]) at θ of
    /// `kernel` and `z`, which must be the prior's own.
    pub fn kl_with_gradient(
        &self,
        kernel: &Kernel,
        z: MatRef<'_, f64>,
        q: &WhitenedQ,
    ) -> Result<(f64, Vec<f64>, Mat<f64>)> {
        let pinned = kernel.params() == self.theta && crate::linalg::same_mat(z, self.z.as_ref());
        if !pinned {
            return Err(Error::Unsupported(
                "KL to a split prior's q_A(v) away from its θ_A and Z_A (they are pinned: the \
                 whitened KL is the process KL only there)"
                    .into(),
            ));
        }
        q.kl_to_with_gradient(&self.q)
    }
}

impl SvgpLayout {
    /// Total number of parameters.
    pub fn dim(&self) -> usize {
        self.nk + self.m * self.d + self.m + self.m * (self.m + 1) / 2
    }

    /// Offset of vec(Z).
    pub fn z_at(&self) -> usize {
        self.nk
    }

    /// Offset of m.
    pub fn mean_at(&self) -> usize {
        self.nk + self.m * self.d
    }

    /// Offset of vech(L_q).
    pub fn sqrt_at(&self) -> usize {
        self.mean_at() + self.m
    }

    /// The parameter vector of (θ of `kernel`, Z, q).
    pub fn pack(&self, kernel: &Kernel, z: MatRef<'_, f64>, q: &WhitenedQ) -> Vec<f64> {
        let mut p = kernel.params();
        for a in 0..self.m {
            for t in 0..self.d {
                p.push(z[(a, t)]);
            }
        }
        p.extend_from_slice(&q.mean);
        for j in 0..self.m {
            for i in j..self.m {
                p.push(q.sqrt[(i, j)]);
            }
        }
        p
    }

    /// (kernel at θ, Z, q) from a parameter vector; `kernel` gives the structure.
    pub fn unpack(&self, kernel: &Kernel, p: &[f64]) -> Result<(Kernel, Mat<f64>, WhitenedQ)> {
        if p.len() != self.dim() {
            return Err(Error::ShapeMismatch {
                what: "SVGP parameter vector",
                expected: format!("{} entries", self.dim()),
                found: format!("{} entries", p.len()),
            });
        }
        let mut k = kernel.clone();
        k.set_params(&p[..self.nk])?;
        let (z0, d) = (self.z_at(), self.d);
        let z = Mat::from_fn(self.m, d, |a, t| p[z0 + a * d + t]);
        let mean = p[self.mean_at()..self.sqrt_at()].to_vec();
        Ok((
            k,
            z,
            WhitenedQ {
                mean,
                sqrt: self.unpack_lower(&p[self.sqrt_at()..]),
            },
        ))
    }

    /// L_q from vech(L_q).
    fn unpack_lower(&self, v: &[f64]) -> Mat<f64> {
        let mut l = crate::memory::zeros(self.m, self.m);
        let mut at = 0;
        for j in 0..self.m {
            for i in j..self.m {
                l[(i, j)] = v[at];
                at += 1;
            }
        }
        l
    }

    /// vech of the lower triangle of an M×M matrix (the gradient's layout of L_q).
    pub fn pack_lower(&self, a: &Mat<f64>, out: &mut Vec<f64>) {
        for j in 0..self.m {
            for i in j..self.m {
                out.push(a[(i, j)]);
            }
        }
    }
}

impl WhitenedQ {
    /// The prior in the whitened space: m = 0, L_q = I.
    pub fn prior(m: usize) -> Self {
        Self {
            mean: vec![0.0; m],
            sqrt: Mat::identity(m, m),
        }
    }

    /// `KL(N(m, L_qL_qᵀ) ‖ N(0, I))` (eq. 12.2) and its gradient in m and in L_q (lower
    /// triangle): `(m, L_q − diag(1/L_q,ii))`. The objective needs the gradient, which the
    /// shared posterior's KL does not give; tests/svgp.rs checks the two agree.
    pub fn kl_with_gradient(&self) -> (f64, Vec<f64>, Mat<f64>) {
        let m = self.mean.len();
        let mut frob = 0.0;
        let mut ln_diag = 0.0;
        let mut grad = crate::memory::zeros(m, m);
        for j in 0..m {
            for i in j..m {
                let l = self.sqrt[(i, j)];
                frob += l * l;
                grad[(i, j)] = l;
            }
            let d = self.sqrt[(j, j)];
            ln_diag += d.abs().ln();
            grad[(j, j)] -= 1.0 / d;
        }
        let mm: f64 = self.mean.iter().map(|v| v * v).sum();
        let kl = 0.5 * (frob + mm - m as f64) - ln_diag;
        (kl, self.mean.clone(), grad)
    }

    /// `KL(N(m, L_qL_qᵀ) ‖ N(m_A, L_AL_Aᵀ))` against another whitened Gaussian (a split
    /// prior's part-A posterior, [`WhitenedPrior`]) through the one Gaussian KL
    /// ([`GaussianKlTerms`]: `tr = ‖L_A⁻¹L_q‖²_F`, `dᵀS_A⁻¹d = ‖L_A⁻¹d‖²` with `d = m − m_A`,
    /// `ln det(S_A⁻¹S) = 2Σ ln|L_q,ii| − 2Σ ln L_A,ii`), and its gradient in m and in L_q
    /// (lower triangle): `(S_A⁻¹d, lower(S_A⁻¹L_q) − diag(1/L_q,ii))`. O(M³).
    pub fn kl_to_with_gradient(&self, prior: &WhitenedQ) -> Result<(f64, Vec<f64>, Mat<f64>)> {
        let m = self.mean.len();
        prior.check_whitened(m)?;
        self.check_shape(m)?;
        let l_a = Cholesky::from_lower(prior.sqrt.clone(), 0.0);
        let mut w = Mat::from_fn(m, m, |i, j| if i >= j { self.sqrt[(i, j)] } else { 0.0 });
        l_a.solve_lower_in_place(w.as_mut());
        let d: Vec<f64> = self
            .mean
            .iter()
            .zip(&prior.mean)
            .map(|(a, b)| a - b)
            .collect();
        let e = l_a.solve_lower_vec(&d);
        let ln_det_q = 2.0 * (0..m).map(|j| self.sqrt[(j, j)].abs().ln()).sum::<f64>();
        let kl = GaussianKlTerms {
            trace: crate::linalg::col_sq_norms(&w).iter().sum(),
            mahalanobis: crate::linalg::dot(&e, &e),
            dim: m as f64,
            ln_det_ratio: ln_det_q - l_a.ln_det(),
        }
        .kl();
        let grad_mean = l_a.solve_upper_vec(&e);
        l_a.solve_upper_in_place(w.as_mut());
        for j in 0..m {
            for i in 0..j {
                w[(i, j)] = 0.0;
            }
            w[(j, j)] -= 1.0 / self.sqrt[(j, j)];
        }
        Ok((kl, grad_mean, w))
    }

    /// A mean of `m` entries and an `m × m` square root.
    fn check_shape(&self, m: usize) -> Result<()> {
        let shape = self.mean.len() == m && self.sqrt.nrows() == m && self.sqrt.ncols() == m;
        if !shape {
            return Err(Error::ShapeMismatch {
                what: "whitened Gaussian q(v)",
                expected: format!("{m} inducing values and an {m}×{m} square root"),
                found: format!(
                    "{} inducing values, {}×{}",
                    self.mean.len(),
                    self.sqrt.nrows(),
                    self.sqrt.ncols()
                ),
            });
        }
        Ok(())
    }

    /// A whitened Gaussian in `m` dimensions with a positive, finite diagonal of L (a
    /// covariance that is positive definite), as a prior must be.
    fn check_whitened(&self, m: usize) -> Result<()> {
        self.check_shape(m)?;
        if (0..m).any(|j| !(self.sqrt[(j, j)] > 0.0 && self.sqrt[(j, j)].is_finite())) {
            return Err(Error::Numerical {
                what: "whitened prior q_A(v)",
                message: "its square root has a diagonal entry that is not positive and finite"
                    .into(),
            });
        }
        Ok(())
    }

    /// The same distribution with every diagonal entry of L_q made non-negative (a column's
    /// sign does not change `S = L_qL_qᵀ`), so that L_q is S's Cholesky factor.
    pub fn with_positive_diagonal(mut self) -> Self {
        for j in 0..self.mean.len() {
            if self.sqrt[(j, j)] < 0.0 {
                for i in j..self.mean.len() {
                    self.sqrt[(i, j)] = -self.sqrt[(i, j)];
                }
            }
        }
        self
    }
}
