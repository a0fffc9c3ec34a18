//! The softmax Laplace posterior over C latent functions (GPML Alg. 3.4): per class the
//! site form `μ_c(x) = k(x)ᵀα_c`, `α_c = y_c − π̂_c`, with `E_c = D_c½ B_c⁻¹ D_c½` in place of
//! the binary `R`, plus the coupling through `M Mᵀ = Σ_c E_c`:
//!
//! `Σ(x)_{cc'} = δ_cc' (k(x,x) − k(x)ᵀE_c k(x)) + (M⁻¹E_c k(x))ᵀ(M⁻¹E_{c'} k(x))`.
//!
//! `KL(Q‖P)` over the `nC` latent values at the training inputs (the processes' KL reduces to
//! it, as for the binary posterior) is
//! `½[−tr(𝓡K) + Σ_c α_cᵀf̂_c + ln|I + KW|]` with
//! `tr(𝓡K) = nC − n − Σ_c tr(B_c⁻¹) + Σ_c ‖M⁻¹ D_c½ B_c⁻¹‖²_F`
//! (from `tr(E_cK) = n − tr(B_c⁻¹)`, `E_cKE_c = E_c − D_c½B_c⁻²D_c½` and `Σ_c E_c = MMᵀ`).
//!
//! On disk the posterior keeps the kernel, the basis, `α` and `π̂`; the factors are rebuilt
//! on load (`C` Cholesky factors and inverses of `n × n`, and one more for `M`).

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use super::{Coupling, SoftmaxMode};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg;
use crate::multiclass::JointScores;
use crate::posterior::Marginals;

/// Test points handled at once by [`SoftmaxPosterior::predict_joint`] (bounds its memory to
/// `C · n · 256` numbers).
const CHUNK: usize = 256;

/// The softmax Laplace posterior (see the module doc).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "SoftmaxFile", into = "SoftmaxFile")]
pub struct SoftmaxPosterior {
    /// The shared prior covariance function.
    pub kernel: Kernel,
    /// The training inputs (n×D).
    pub basis: Mat<f64>,
    /// `α_c = y_c − π̂_c` per class.
    pub alpha: Vec<Vec<f64>>,
    /// `π̂_c` per class.
    pub pi: Vec<Vec<f64>>,
    /// The factors at `π̂` (rebuilt on load).
    coupling: Coupling,
}

/// On-disk form of a [`SoftmaxPosterior`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SoftmaxFile {
    kernel: Kernel,
    #[serde(with = "linalg::serde_mat")]
    basis: Mat<f64>,
    alpha: Vec<Vec<f64>>,
    pi: Vec<Vec<f64>>,
}

impl From<SoftmaxPosterior> for SoftmaxFile {
    fn from(p: SoftmaxPosterior) -> Self {
        Self {
            kernel: p.kernel,
            basis: p.basis,
            alpha: p.alpha,
            pi: p.pi,
        }
    }
}

impl TryFrom<SoftmaxFile> for SoftmaxPosterior {
    type Error = String;
    fn try_from(f: SoftmaxFile) -> std::result::Result<Self, String> {
        let n = f.basis.nrows();
        let c = f.pi.len();
        if c < 2 || f.alpha.len() != c {
            return Err(format!(
                "softmax posterior with {} classes of π and {} of α (at least 2, the same)",
                c,
                f.alpha.len()
            ));
        }
        if f.pi.iter().chain(&f.alpha).any(|v| v.len() != n) {
            return Err(format!(
                "softmax posterior vectors are not of the basis size {n}"
            ));
        }
        f.kernel
            .check_input_dim(f.basis.ncols())
            .map_err(|e| e.to_string())?;
        if f.kernel.params().iter().any(|t| !t.is_finite()) {
            return Err("a kernel hyperparameter is not finite".into());
        }
        crate::data::check_finite(f.basis.as_ref(), "stored basis").map_err(|e| e.to_string())?;
        for i in 0..n {
            let total: f64 = (0..c).map(|k| f.pi[k][i]).sum();
            let y: Vec<f64> = (0..c).map(|k| f.alpha[k][i] + f.pi[k][i]).collect();
            let one_hot = y.iter().filter(|v| (**v - 1.0).abs() < 1e-9).count() == 1
                && y.iter().all(|v| v.abs() < 1e-9 || (v - 1.0).abs() < 1e-9);
            if !(0..c).all(|k| f.pi[k][i] >= 0.0 && f.pi[k][i] <= 1.0)
                || (total - 1.0).abs() > 1e-9
                || !one_hot
            {
                return Err(format!(
                    "point {i}: π is not a probability vector or α + π is not a class's indicator"
                ));
            }
        }
        let k = f.kernel.gram(f.basis.as_ref()).map_err(|e| e.to_string())?;
        let coupling = Coupling::at(&k, &f.pi).map_err(|e| e.to_string())?;
        Ok(Self {
            kernel: f.kernel,
            basis: f.basis,
            alpha: f.alpha,
            pi: f.pi,
            coupling,
        })
    }
}

/// Lower Cholesky factor of a small symmetric positive semi-definite matrix, with a jitter of
/// `1e-12 ·` its largest diagonal entry (doubling) where rounding left a pivot non-positive.
pub(crate) fn small_cholesky(a: &Mat<f64>) -> Result<Mat<f64>> {
    let k = a.nrows();
    let scale = (0..k)
        .map(|i| a[(i, i)])
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut jitter = 0.0;
    for _ in 0..40 {
        let mut l = Mat::<f64>::zeros(k, k);
        let mut ok = true;
        'rows: for j in 0..k {
            let d = a[(j, j)] + jitter - (0..j).map(|p| l[(j, p)] * l[(j, p)]).sum::<f64>();
            if !(d > 0.0) {
                ok = false;
                break 'rows;
            }
            l[(j, j)] = d.sqrt();
            for i in j + 1..k {
                let s = a[(i, j)] - (0..j).map(|p| l[(i, p)] * l[(j, p)]).sum::<f64>();
                l[(i, j)] = s / l[(j, j)];
            }
        }
        if ok {
            return Ok(l);
        }
        jitter = if jitter == 0.0 {
            1e-12 * scale
        } else {
            2.0 * jitter
        };
    }
    Err(Error::Numerical {
        what: "softmax posterior covariance at a point",
        message: "not positive semi-definite".into(),
    })
}

impl SoftmaxPosterior {
    /// The posterior at a mode found on the training inputs `basis`.
    pub fn from_mode(kernel: &Kernel, basis: MatRef<'_, f64>, mode: SoftmaxMode) -> Self {
        let alpha = (0..mode.pi.len())
            .map(|c| {
                mode.y
                    .iter()
                    .zip(&mode.pi[c])
                    .map(|(&k, p)| f64::from(k == c) - p)
                    .collect()
            })
            .collect();
        Self {
            kernel: kernel.clone(),
            basis: basis.to_owned(),
            alpha,
            pi: mode.pi,
            coupling: mode.coupling,
        }
    }

    /// The factors at `π̂` (`E_c`, `M`): the leave-one-out's covariances between points
    /// ([`crate::loo::softmax`]).
    pub(crate) fn coupling(&self) -> &Coupling {
        &self.coupling
    }

    /// Number of classes C.
    pub fn classes(&self) -> usize {
        self.pi.len()
    }

    /// Largest jitter the factors needed.
    pub fn jitter(&self) -> f64 {
        self.coupling.jitter()
    }

    /// The C latent functions at inputs `x` (m×D): their joint Gaussian at every point (the
    /// scores of the Gibbs classifier `argmax_c f_c`) and each class's marginals.
    pub fn predict_joint(&self, x: MatRef<'_, f64>) -> Result<(JointScores, Vec<Marginals>)> {
        self.kernel.check_input_dim(x.ncols())?;
        if x.ncols() != self.basis.ncols() {
            return Err(Error::ShapeMismatch {
                what: "inputs vs the posterior's basis",
                expected: format!("{} columns", self.basis.ncols()),
                found: format!("{}", x.ncols()),
            });
        }
        let (m, c) = (x.nrows(), self.classes());
        let mut mean = Mat::<f64>::zeros(m, c);
        let mut chol = Vec::with_capacity(m);
        let mut marginals = vec![
            Marginals {
                mean: vec![0.0; m],
                var: vec![0.0; m],
            };
            c
        ];
        let mut start = 0;
        while start < m {
            let len = CHUNK.min(m - start);
            let xs = x.subrows(start, len);
            let ks = self.kernel.cross(self.basis.as_ref(), xs)?;
            let kss = self.kernel.diag(xs);
            let mut var_ind = Vec::with_capacity(c);
            let mut u = Vec::with_capacity(c);
            for k in 0..c {
                let s = &self.coupling.sqrt_pi[k];
                let mut v = ks.clone();
                scale_rows(&mut v, s);
                self.coupling.chol_b[k].solve_lower_in_place(v.as_mut());
                let norms = linalg::col_sq_norms(&v);
                var_ind.push((0..len).map(|j| kss[j] - norms[j]).collect::<Vec<f64>>());
                self.coupling.chol_b[k].solve_upper_in_place(v.as_mut());
                scale_rows(&mut v, s);
                self.coupling.chol_m.solve_lower_in_place(v.as_mut());
                u.push(v);
            }
            for j in 0..len {
                let cov = Mat::from_fn(c, c, |a, b| {
                    let cross = linalg::dot(u[a].col_as_slice(j), u[b].col_as_slice(j));
                    if a == b {
                        var_ind[a][j] + cross
                    } else {
                        cross
                    }
                });
                for k in 0..c {
                    let mu = linalg::dot(ks.col_as_slice(j), &self.alpha[k]);
                    mean[(start + j, k)] = mu;
                    marginals[k].mean[start + j] = mu;
                    marginals[k].var[start + j] = cov[(k, k)].max(0.0);
                }
                chol.push(small_cholesky(&cov)?);
            }
            start += len;
        }
        Ok((JointScores { mean, chol }, marginals))
    }

    /// `KL(Q‖P)` of the posterior to the prior over the C latent functions (module doc).
    /// [`Error::OutOfMemory`] where the N×N kernel matrix cannot be had.
    pub fn kl_to_prior(&self) -> Result<f64> {
        let (n, c) = (self.basis.nrows(), self.classes());
        let k = self.kernel.gram(self.basis.as_ref())?;
        let mut quad = 0.0;
        let mut tr_rk = (n * c - n) as f64;
        for cls in 0..c {
            let f = linalg::mat_vec(&k, &self.alpha[cls]);
            quad += linalg::dot(&self.alpha[cls], &f);
            let mut binv = self.coupling.chol_b[cls].inverse()?;
            tr_rk -= (0..n).map(|i| binv[(i, i)]).sum::<f64>();
            scale_rows(&mut binv, &self.coupling.sqrt_pi[cls]);
            self.coupling.chol_m.solve_lower_in_place(binv.as_mut());
            tr_rk += linalg::col_sq_norms(&binv).iter().sum::<f64>();
        }
        // K⁻¹Σ = (I + KW)⁻¹ = I − RK (R&W eq. 3.44 form), so tr(K⁻¹Σ) = nC − tr(RK).
        let dim = (n * c) as f64;
        Ok(crate::posterior::GaussianKlTerms {
            trace: dim - tr_rk,
            mahalanobis: quad,
            dim,
            ln_det_ratio: -self.coupling.ln_det_i_kw(),
        }
        .kl())
    }

    /// `ln |I + KW|` at the mode.
    pub fn ln_det_i_kw(&self) -> f64 {
        self.coupling.ln_det_i_kw()
    }
}

/// `A ← diag(s) A`.
fn scale_rows(a: &mut Mat<f64>, s: &[f64]) {
    for j in 0..a.ncols() {
        for (v, s) in a.col_as_slice_mut(j).iter_mut().zip(s) {
            *v *= s;
        }
    }
}

impl crate::certificate::KlToPrior for SoftmaxPosterior {
    fn kl_to_prior(&self) -> Result<f64> {
        SoftmaxPosterior::kl_to_prior(self)
    }
}
