//! Beyond the seed: ARD lengthscales (and v) of a quadratic-slack SVM with bias by gradient
//! descent on a smoothed linear-response LOO error — seed 001 §17.8's "important problem for
//! future research", following Chapelle, Vapnik, Bousquet & Mukherjee (2002, "Choosing
//! multiple parameters for support vector machines"): replace the step of the LOO count by a
//! sigmoid and differentiate through the SVM solution on its fixed support-vector set.
//!
//! **Estimate.** With the quadratic slack every support vector is a margin SV, so with
//! `k = K_θ + vI`, `A = [[k_M, 1], [1ᵀ, 0]]`, `z = [y∘α; b]` the KKT conditions read
//! `A z = [y_M; 0]`, and the linear-response LOO margins ([`super::loo`], eqs. 17.29, 17.32)
//! are `m_l = 1 − α_l/[A⁻¹]_ll` for SVs and `m_l = y_l(k_{l,M} u + b)` for the others
//! (`u = y_M∘α_M`). The smoothed estimate is `E(θ) = (1/N) Σ_l σ(−s·m_l)` with the logistic σ
//! and sharpness s (the LR-LOO error rate as s → ∞). Chapelle et al. smooth the *span*
//! estimate; for this SVM the span of a margin SV is `S_l² = 1/[A⁻¹]_ll` and the span bound's
//! LOO margin `1 − α_l S_l²` is exactly `m_l`, so this is their smoothed span estimate with
//! the SV set held fixed (they also smooth the set; we do not).
//!
//! **Gradient.** For a parameter p with `∂k/∂p = D`: `∂z = −A⁻¹ [D_{M,M} u; 0]`,
//! `∂[A⁻¹]_ll = −[A⁻¹ D A⁻¹]_ll`, `∂m_l = −∂α_l/[A⁻¹]_ll + α_l ∂[A⁻¹]_ll/[A⁻¹]_ll²` for SVs
//! and `∂m_l = y_l(D_{l,M} u + k_{l,M} ∂u + ∂b)` otherwise. Parameters are
//! `[ln l_1, …, ln l_D, ln v]`; the derivative holds where the SV set does not change (the
//! estimate is piecewise smooth). Cost per evaluation: one SVM fit, `O(|M|³)` for `A⁻¹`, and
//! `O(N·|M|·D + |M|³)` per parameter.

use faer::{Mat, MatRef};

use super::loo::svm_loo_margins;
use super::{svm, InputRows, Slack, SvmConfig};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::Lu;
use crate::memory::{try_from_fn, try_zeros};
use crate::optim::Objective;

/// The smoothed LR-LOO error over `[ln l_1, …, ln l_D, ln v]` (module doc).
pub struct SmoothedLoo<'a> {
    x: MatRef<'a, f64>,
    y: &'a [f64],
    /// Sigmoid sharpness s.
    pub sharpness: f64,
    /// SMO settings (slack and bias are set here: quadratic, with bias).
    pub solver: SvmConfig,
}

/// Value, gradient and the SVM's support-vector count at one parameter vector.
#[derive(Clone, Debug, PartialEq)]
pub struct SmoothedLooEval {
    /// `E(θ)`.
    pub value: f64,
    /// `∂E/∂[ln l…, ln v]`.
    pub gradient: Vec<f64>,
    /// The unsmoothed LR-LOO error rate at θ.
    pub loo_rate: f64,
    /// Indices of the support vectors (the set the derivative holds on).
    pub support: Vec<usize>,
}

fn logistic(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

impl<'a> SmoothedLoo<'a> {
    /// The estimate on `(x, y)` with sharpness `s` and SMO tolerance `tol`.
    pub fn new(x: MatRef<'a, f64>, y: &'a [f64], sharpness: f64, tol: f64) -> Result<Self> {
        super::check_shapes(x, y)?;
        if !(sharpness > 0.0 && sharpness.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "smoothed-LOO sharpness",
                value: sharpness,
                reason: "must be positive and finite",
            });
        }
        Ok(Self {
            x,
            y,
            sharpness,
            solver: SvmConfig {
                slack: Slack::Quadratic { v: 1.0 },
                bias: true,
                tol,
                ..Default::default()
            },
        })
    }

    /// The ARD kernel `exp(−Σ_t (x_t − x'_t)²/(2 l_t²))` and v of a parameter vector.
    pub fn kernel_and_v(&self, p: &[f64]) -> Result<(Kernel, f64)> {
        let d = self.x.ncols();
        if p.len() != d + 1 || p.iter().any(|t| !t.is_finite()) {
            return Err(Error::ShapeMismatch {
                what: "smoothed-LOO parameters [ln l…, ln v]",
                expected: format!("{} finite values", d + 1),
                found: format!("{}", p.len()),
            });
        }
        let ls: Vec<f64> = p[..d].iter().map(|t| t.exp()).collect();
        Ok((Kernel::se_ard(&ls, 1.0), p[d].exp()))
    }

    /// Value, gradient, LR-LOO rate and SV set at `p`.
    pub fn evaluate(&self, p: &[f64]) -> Result<SmoothedLooEval> {
        let (kernel, v) = self.kernel_and_v(p)?;
        let (n, d) = (self.y.len(), self.x.ncols());
        let cfg = SvmConfig {
            slack: Slack::Quadratic { v },
            ..self.solver
        };
        let fit = svm(&kernel, self.x, self.y, &cfg)?;
        let rows = InputRows::new(&kernel, self.x, v)?;
        let margins = svm_loo_margins(&fit, &rows, self.y)?;
        let sv: Vec<usize> = (0..n).filter(|&i| fit.alpha[i] > 0.0).collect();
        let m = sv.len();
        let y = self.y;
        let u: Vec<f64> = sv.iter().map(|&j| y[j] * fit.alpha[j]).collect();
        // K over all rows × SV columns (noise-free), A = [[K_M + vI, 1], [1ᵀ, 0]].
        let xs = Mat::from_fn(m, d, |r, c| self.x[(sv[r], c)]);
        let k_nm = kernel.cross(self.x, xs.as_ref())?;
        let mut a = try_zeros(m + 1, m + 1, "the support vectors' bordered kernel matrix")?;
        for p_ in 0..m {
            for q in 0..m {
                a[(p_, q)] = k_nm[(sv[p_], q)];
            }
            a[(p_, p_)] += v;
            a[(p_, m)] = 1.0;
            a[(m, p_)] = 1.0;
        }
        let g = Lu::factor(a, "the support vectors' bordered kernel matrix")?
            .inverse("the inverse of the support vectors' bordered kernel matrix")?;
        let s = self.sharpness;
        let weight: Vec<f64> = margins
            .iter()
            .map(|&ml| {
                let sig = logistic(-s * ml);
                -s * sig * (1.0 - sig) / n as f64 // ∂E/∂m_l
            })
            .collect();
        let value = margins.iter().map(|&ml| logistic(-s * ml)).sum::<f64>() / n as f64;
        let is_sv: Vec<Option<usize>> = {
            let mut t = vec![None; n];
            for (p_, &i) in sv.iter().enumerate() {
                t[i] = Some(p_);
            }
            t
        };
        let mut gradient = Vec::with_capacity(d + 1);
        for t in 0..=d {
            // D = ∂k/∂p on rows × SV columns: k·(x_t − x'_t)²/l_t² (ln l_t), or vI (ln v).
            let dk = |i: usize, q: usize| -> f64 {
                if t < d {
                    let diff = self.x[(i, t)] - xs[(q, t)];
                    k_nm[(i, q)] * diff * diff / (2.0 * p[t]).exp()
                } else if sv[q] == i {
                    v
                } else {
                    0.0
                }
            };
            let dmm = try_from_fn(m, m, "∂K over the support vectors", |p_, q| dk(sv[p_], q))?;
            // ∂z = −A⁻¹ [D_MM u; 0]
            let mut rhs = vec![0.0; m + 1];
            for p_ in 0..m {
                rhs[p_] = (0..m).map(|q| dmm[(p_, q)] * u[q]).sum();
            }
            let dz: Vec<f64> = (0..=m)
                .map(|r| -(0..m).map(|c| g[(r, c)] * rhs[c]).sum::<f64>())
                .collect();
            // diag(G_{·,M} D_MM G_{M,·}) for the SV rows
            let gm = try_from_fn(m, m, "A⁻¹ over the support vectors", |r, c| g[(r, c)])?;
            let h = crate::linalg::try_product(
                gm.as_ref(),
                dmm.as_ref(),
                "A⁻¹ ∂K over the support vectors",
            )?;
            let mut total = 0.0;
            for l in 0..n {
                let dm = match is_sv[l] {
                    Some(p_) => {
                        let dgll: f64 = -(0..m).map(|q| h[(p_, q)] * gm[(q, p_)]).sum::<f64>();
                        let gll = g[(p_, p_)];
                        let dalpha = y[l] * dz[p_];
                        -dalpha / gll + fit.alpha[l] * dgll / (gll * gll)
                    }
                    None => {
                        let mut s_ = dz[m];
                        for q in 0..m {
                            s_ += dk(l, q) * u[q] + k_nm[(l, q)] * dz[q];
                        }
                        y[l] * s_
                    }
                };
                total += weight[l] * dm;
            }
            gradient.push(total);
        }
        let errors = margins.iter().filter(|m| !(**m > 0.0)).count();
        Ok(SmoothedLooEval {
            value,
            gradient,
            loo_rate: errors as f64 / n as f64,
            support: sv,
        })
    }
}

impl Objective for SmoothedLoo<'_> {
    fn dim(&self) -> usize {
        self.x.ncols() + 1
    }
    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let e = self.evaluate(p)?;
        Ok((e.value, e.gradient))
    }
}
