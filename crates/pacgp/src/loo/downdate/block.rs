//! The blocks of rows left out together (module doc of [`super`], "Leaving out a group"):
//! `κ_G` dense or in Woodbury form, and a sparse model's large group built in that form.

use faer::Mat;

use crate::error::Result;
use crate::linalg::{try_product, Cholesky, JitterPolicy};
use crate::memory::try_from_fn;

/// Training rows left out together, with their block's `κ_G` (module doc).
#[derive(Clone, Debug)]
pub(super) struct Block {
    /// The rows of the group.
    pub(super) rows: Vec<usize>,
    /// `κ_G`.
    pub(super) kappa: BlockInverse,
}

/// `κ_G` of a block: dense (|G| × |G|), or for a sparse model's group larger than its M
/// inducing inputs in Woodbury form, `κ_G = (D − W_GᵀW_G)⁻¹ = D⁻¹ + U C Uᵀ` with
/// `D = diag Λ_G`, `U = D⁻¹W_Gᵀ` (|G| × M) and `C = (I − W_G D⁻¹ W_Gᵀ)⁻¹` (M × M), so that a
/// large group of tied rows costs |G|·M, not |G|² memory and |G|³ flops.
#[derive(Clone, Debug)]
pub(super) enum BlockInverse {
    /// `κ_G` itself.
    Dense(Mat<f64>),
    /// `D⁻¹ + U C Uᵀ`.
    Woodbury(Woodbury),
}

/// `D⁻¹ + U C Uᵀ`: `D⁻¹` (its diagonal), `U` (|G| × M) and `C` (M × M).
#[derive(Clone, Debug)]
pub(super) struct Woodbury {
    d_inv: Vec<f64>,
    u: Mat<f64>,
    core: Mat<f64>,
}

impl Woodbury {
    /// `(D⁻¹ + U C Uᵀ) v` in `O(|G|·M)`.
    pub(super) fn apply(&self, v: &[f64]) -> Vec<f64> {
        use crate::linalg::{mat_t_vec, mat_vec};
        let low_rank = mat_vec(&self.u, &mat_vec(&self.core, &mat_t_vec(&self.u, v)));
        (self.d_inv.iter().zip(v).zip(&low_rank))
            .map(|((d, v), l)| d * v + l)
            .collect()
    }
}

impl BlockInverse {
    /// `κ_G v`.
    pub(super) fn apply(&self, v: &[f64]) -> Vec<f64> {
        match self {
            BlockInverse::Dense(k) => crate::linalg::mat_vec(k, v),
            BlockInverse::Woodbury(w) => w.apply(v),
        }
    }
}

/// A sparse model's group of more rows than inducing inputs: its columns `W_G` (M × |G|) of
/// the whitened cross-covariance, `A = W_G D⁻¹ W_Gᵀ` and `κ_G` in Woodbury form
/// ([`Woodbury`]: `D⁻¹`, `U`, `C = (I − A)⁻¹`).
pub(super) struct SparseGroup {
    w_g: Mat<f64>,
    a: Mat<f64>,
    pub(super) kappa: Woodbury,
}

impl SparseGroup {
    /// The parts of `κ_G = D⁻¹ + U(I − A)⁻¹Uᵀ` for the rows `g` of `w` with `D = diag Λ_G`, in
    /// `O(|G|·M²)`; `I − A` is positive definite exactly when `D − W_GᵀW_G` is.
    pub(super) fn woodbury(w: &Mat<f64>, lambda: &[f64], g: &[usize]) -> Result<Self> {
        let m = w.nrows();
        let w_g = try_from_fn(m, g.len(), "the columns W_G of a sparse group", |r, a| {
            w[(r, g[a])]
        })?;
        let d_inv: Vec<f64> = g.iter().map(|&i| 1.0 / lambda[i]).collect();
        let u = try_from_fn(
            g.len(),
            m,
            "U = Λ_G⁻¹W_Gᵀ of a sparse group",
            |a, r| w_g[(r, a)] * d_inv[a],
        )?;
        let a = try_product(w_g.as_ref(), u.as_ref(), "W_G Λ_G⁻¹ W_Gᵀ of a sparse group")?;
        let i_minus_a = Mat::from_fn(m, m, |r, c| f64::from(u8::from(r == c)) - a[(r, c)]);
        let core = block_inverse(
            i_minus_a,
            "I − W_G Λ_G⁻¹ W_Gᵀ of a group of the sparse model",
        )?;
        Ok(Self {
            w_g,
            a,
            kappa: Woodbury { d_inv, u, core },
        })
    }

    /// `S_GG γ` and the diagonal of `S_GG κ_G S_GG` (`S_GG = W_GᵀW_G`), in `O(|G|·M²)`, the
    /// `M × |G|` product fallibly:
    /// `W_G κ_G W_Gᵀ = A + A C A`.
    pub(super) fn moments(&self, gamma: &[f64]) -> Result<(Vec<f64>, Vec<f64>)> {
        use crate::linalg::{col, dot, mat_t_vec, mat_vec};
        let s_gamma = mat_t_vec(&self.w_g, &mat_vec(&self.w_g, gamma));
        let p = &self.a + &(&(&self.a * &self.kappa.core) * &self.a);
        let pw = try_product(p.as_ref(), self.w_g.as_ref(), "P W_G of a sparse group")?;
        let diag = (0..self.w_g.ncols())
            .map(|c| dot(col(&self.w_g, c), col(&pw, c)))
            .collect();
        Ok((s_gamma, diag))
    }
}

/// The inverse of a small symmetric positive-definite block by its Cholesky factor (no jitter:
/// a block that is not positive definite is a numerical error naming `what`).
pub(super) fn block_inverse(a: Mat<f64>, what: &'static str) -> Result<Mat<f64>> {
    Cholesky::factor(a.as_ref(), &JitterPolicy::none(), what)?.inverse()
}
