//! Leave-one-out of the softmax Laplace posterior (docs/math.md §10.2, eq. 10.1): row i enters
//! it as a K-dimensional Gaussian site on `f_i = f(x_i)`, precision `W_i = diag(π̂_i) − π̂_iπ̂_iᵀ`
//! and shift `W_i f̂_i + g_i` with `g_i = y_i − π̂_i`; the model without row i removes that site
//! and keeps the others (LA-LOO, as the binary Laplace's). With `S_i = Σ(x_i)` and
//! `C_i(x) = Cov_Q[f(x), f_i]` (K×K), by Woodbury:
//!
//! `μ_{−i}(x) = μ(x) − C_i(x)(I − W_iS_i)⁻¹g_i`,
//! `Σ_{−i}(x) = Σ(x) + C_i(x) W_i(I − S_iW_i)⁻¹ C_i(x)ᵀ`   (10.1)
//!
//! The posterior's covariance between two points is
//! `δ_cc'(k(x,z) − k(x)ᵀE_c k(z)) + (M⁻¹E_c k(x))ᵀ(M⁻¹E_c' k(z))`: with `K` and
//! `V_c = M⁻¹E_cK` kept (`(K + 1)` matrices of N×N, `O(KN³)` once), `C_i(x)` for every row
//! costs `O(K²N²)` per input block row.

use faer::{Mat, MatRef};

use crate::error::{Error, Result};
use crate::inference::softmax::posterior::small_cholesky;
use crate::inference::softmax::SoftmaxPosterior;
use crate::linalg::{try_product, Lu};
use crate::multiclass::JointScores;

/// The leave-one-out models of a softmax Laplace posterior (module doc).
pub struct SoftmaxSiteLoo<'a> {
    post: &'a SoftmaxPosterior,
    /// `K(X, X)` of the training inputs (N×N).
    gram: Mat<f64>,
    /// `V_c = M⁻¹E_cK` per class (N×N).
    coupled: Vec<Mat<f64>>,
    /// `(I − W_iS_i)⁻¹g_i`, row i (N×K): the mean's shift per unit of `C_i(x)`.
    shift: Mat<f64>,
    /// `W_i(I − S_iW_i)⁻¹` per row (K×K): the covariance's growth between `C_i(x)` and its
    /// transpose.
    growth: Vec<Mat<f64>>,
    /// `N(μ_{−i}(x_i), Σ_{−i}(x_i))` of every training row.
    training: JointScores,
}

impl<'a> SoftmaxSiteLoo<'a> {
    /// The leave-one-out models of `post` (its basis the standardised training inputs; the
    /// labels are its own, `g_i = α_i`).
    pub fn new(post: &'a SoftmaxPosterior) -> Result<Self> {
        let x = post.basis.as_ref();
        let (n, k) = (x.nrows(), post.classes());
        let gram = post.kernel.gram(x)?;
        let coupling = post.coupling();
        let coupled = (0..k)
            .map(|c| {
                let mut v = try_product(coupling.e[c].as_ref(), gram.as_ref(), "E_c K")?;
                coupling.chol_m.solve_lower_in_place(v.as_mut());
                Ok(v)
            })
            .collect::<Result<Vec<_>>>()?;
        let (joint, _) = post.predict_joint(x)?;
        let mut shift = crate::memory::try_zeros(n, k, "the softmax sites' mean shifts")?;
        let (mut growth, mut chol) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut mean = crate::memory::try_zeros(n, k, "the softmax leave-one-out means")?;
        for i in 0..n {
            let s = covariance(&joint.chol[i]);
            let site = Site::of(post, i, &s)?;
            // μ_{−i}(x_i) = f̂_i − S_i a_i,  Σ_{−i}(x_i) = S_i + S_i B_i S_i.
            let sa = mat_vec(&s, &site.shift);
            for c in 0..k {
                shift[(i, c)] = site.shift[c];
                mean[(i, c)] = joint.mean[(i, c)] - sa[c];
            }
            let grown = &s + &(&(&s * &site.growth) * &s);
            chol.push(small_cholesky(&symmetric(grown))?);
            growth.push(site.growth);
        }
        Ok(Self {
            post,
            gram,
            coupled,
            shift,
            growth,
            training: JointScores { mean, chol },
        })
    }

    /// Number of training rows.
    pub fn n(&self) -> usize {
        self.growth.len()
    }

    /// `N(μ_{−i}(x_i), Σ_{−i}(x_i))` of every training row.
    pub fn training(&self) -> &JointScores {
        &self.training
    }

    /// The class of every training row the posterior was fitted on: at the mode
    /// `α_ci = 1{y_i = c} − π̂_ci` is positive for its own class only.
    pub fn labels(&self) -> Vec<usize> {
        let alpha = &self.post.alpha;
        (0..self.n())
            .map(|i| (0..alpha.len()).fold(0, |b, c| if alpha[c][i] > alpha[b][i] { c } else { b }))
            .collect()
    }

    /// The leave-one-out joint scores of every training row's model at the rows of `block`
    /// (standardised inputs), row `i·nb + j` the model without row i at `x_j` (eq. 10.1).
    pub fn at(&self, block: MatRef<'_, f64>) -> Result<JointScores> {
        let (n, nb, k) = (self.n(), block.nrows(), self.post.classes());
        let (joint, _) = self.post.predict_joint(block)?;
        let cross = self.cross_covariances(block)?;
        let mut mean = crate::memory::try_zeros(n * nb, k, "softmax leave-one-out means")?;
        let mut chol = Vec::with_capacity(n * nb);
        let sigma: Vec<Mat<f64>> = joint.chol.iter().map(covariance).collect();
        let mut c_ij = Mat::<f64>::zeros(k, k);
        for i in 0..n {
            for j in 0..nb {
                for a in 0..k {
                    for b in 0..k {
                        c_ij[(a, b)] = cross[a * k + b][(j, i)];
                    }
                }
                let r = i * nb + j;
                for a in 0..k {
                    let moved: f64 = (0..k).map(|b| c_ij[(a, b)] * self.shift[(i, b)]).sum();
                    mean[(r, a)] = joint.mean[(j, a)] - moved;
                }
                let grown = &sigma[j] + &(&(&c_ij * &self.growth[i]) * c_ij.transpose());
                chol.push(small_cholesky(&symmetric(grown))?);
            }
        }
        Ok(JointScores { mean, chol })
    }

    /// `Cov_Q[f_a(x_j), f_b(x_i)]` for every class pair, entry `a·K + b` an nb × N matrix:
    /// `δ_ab(K(x, X) − (E_a k_x)ᵀK) + (M⁻¹E_a k_x)ᵀ V_b`.
    fn cross_covariances(&self, block: MatRef<'_, f64>) -> Result<Vec<Mat<f64>>> {
        let k = self.post.classes();
        let coupling = self.post.coupling();
        let kxb = self.post.kernel.cross(self.post.basis.as_ref(), block)?; // N×nb
        let mut out = Vec::with_capacity(k * k);
        let mut own = Vec::with_capacity(k);
        let mut projected = Vec::with_capacity(k);
        for a in 0..k {
            let p = try_product(coupling.e[a].as_ref(), kxb.as_ref(), "E_c k(X, x)")?;
            let pk = try_product(p.transpose(), self.gram.as_ref(), "k(x)ᵀE_c K")?;
            own.push(Mat::from_fn(pk.nrows(), pk.ncols(), |j, i| {
                kxb[(i, j)] - pk[(j, i)]
            }));
            let mut u = p;
            coupling.chol_m.solve_lower_in_place(u.as_mut());
            projected.push(u);
        }
        for (a, u) in projected.iter().enumerate() {
            for (b, v) in self.coupled.iter().enumerate() {
                let mut c = try_product(u.transpose(), v.as_ref(), "(M⁻¹E_a k_x)ᵀ V_b")?;
                if a == b {
                    c += &own[a];
                }
                out.push(c);
            }
        }
        Ok(out)
    }
}

/// Row i's site (module doc) read against its posterior covariance `S_i`: the mean shift
/// `(I − W_iS_i)⁻¹g_i` and the covariance growth `W_i(I − S_iW_i)⁻¹`.
struct Site {
    shift: Vec<f64>,
    growth: Mat<f64>,
}

impl Site {
    fn of(post: &SoftmaxPosterior, i: usize, s: &Mat<f64>) -> Result<Self> {
        let k = post.classes();
        let pi: Vec<f64> = (0..k).map(|c| post.pi[c][i]).collect();
        let w = Mat::from_fn(k, k, |a, b| {
            f64::from(u8::from(a == b)) * pi[a] - pi[a] * pi[b]
        });
        let g = Mat::from_fn(k, 1, |c, _| post.alpha[c][i]);
        let eye = Mat::<f64>::identity(k, k);
        let shift = Lu::factor(&eye - &w * s, "I − W_i S_i")?.solve(g.as_ref(), "a_i")?;
        let inv = Lu::factor(&eye - s * &w, "I − S_i W_i")?.inverse("(I − S_i W_i)⁻¹")?;
        let growth = &w * &inv;
        let shift: Vec<f64> = (0..k).map(|c| shift[(c, 0)]).collect();
        if !(shift.iter().all(|v| v.is_finite()) && growth.norm_l2().is_finite()) {
            return Err(Error::Numerical {
                what: "softmax leave-one-out",
                message: format!("row {i}'s site cannot be removed: I − W_iS_i is singular"),
            });
        }
        Ok(Self { shift, growth })
    }
}

/// `L Lᵀ` of a lower factor.
fn covariance(l: &Mat<f64>) -> Mat<f64> {
    l * l.transpose()
}

/// `(A + Aᵀ)/2`: the small covariances' rounding made symmetric before their factor.
fn symmetric(a: Mat<f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| 0.5 * (a[(i, j)] + a[(j, i)]))
}

fn mat_vec(a: &Mat<f64>, v: &[f64]) -> Vec<f64> {
    (0..a.nrows())
        .map(|i| (0..a.ncols()).map(|j| a[(i, j)] * v[j]).sum())
        .collect()
}
