//! The sparse posterior's sufficient statistics over data shards: `B_s = Σ_i V_iV_iᵀ/Λ_i` and
//! `γ_s = Σ_i V_iy_i/Λ_i` in the whitened basis `V = L⁻¹K_uf` (docs/math.md §3.2, eq. 11), which
//! PAC-SGP's first pass ([`crate::objective::pac_sgp_sharded`]) and a model rebuilt from
//! sharded training (`model::sparse_model_from_parts`) both sum.

use faer::{Mat, MatRef};

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::posterior::GaussianPosterior;

use super::sharded::{add, check_len, check_square, row_blocks, shard_basis, ShardBasis};
use super::whitened_blocks::kuu_cholesky;

/// Pass 1 of one shard (or, combined, of all): `Σ V_iV_iᵀ/Λ_i`, `Σ V_iy_i/Λ_i` and the count.
#[derive(Clone, Debug, PartialEq)]
pub struct PacSgpShardStats {
    /// `B_s = Σ_i V_iV_iᵀ/Λ_i` (M×M).
    pub b: Mat<f64>,
    /// `γ_s = Σ_i V_i y_i/Λ_i` (M).
    pub gamma: Vec<f64>,
    /// Number of points.
    pub n: usize,
}

impl PacSgpShardStats {
    /// The statistics of the union of two shards (the reduce step of pass 1).
    pub fn combine(&self, other: &Self) -> Result<Self> {
        check_len(
            other.gamma.len(),
            self.gamma.len(),
            "PAC-SGP shard statistics",
        )?;
        check_square(&other.b, self.gamma.len(), "PAC-SGP shard statistics")?;
        Ok(Self {
            b: &self.b + &other.b,
            gamma: add(&self.gamma, &other.gamma),
            n: self.n + other.n,
        })
    }
}

/// `Σ V_iV_iᵀ/Λ_i`, `Σ V_i y_i/Λ_i` of the points of `wb`.
pub(crate) fn sums_of(wb: &ShardBasis, y: &[f64]) -> Result<PacSgpShardStats> {
    let (b, gamma) = weighted_sums(&wb.v, &wb.lambda, y)?;
    Ok(PacSgpShardStats {
        b,
        gamma,
        n: y.len(),
    })
}

/// `(VΛ⁻¹Vᵀ, VΛ⁻¹y)` for the whitened projections `V` (M×N) of N points with diagonal `Λ`:
/// what `B = I + VΛ⁻¹Vᵀ` and `γ` sum over the points.
pub(crate) fn weighted_sums(
    v: &Mat<f64>,
    lambda: &[f64],
    y: &[f64],
) -> Result<(Mat<f64>, Vec<f64>)> {
    let inv_lam: Vec<f64> = lambda.iter().map(|l| 1.0 / l).collect();
    let ly: Vec<f64> = y.iter().zip(&inv_lam).map(|(y, il)| y * il).collect();
    Ok((linalg::weighted_gram(v, &inv_lam)?, linalg::mat_vec(v, &ly)))
}

/// One shard's part of a sparse posterior with `Λ = σ² + α_s diag(K_ff − Q_ff)` (eq. 11; VFE
/// `α_s = 0`, FITC 1): the sums [`posterior_from_stats`] turns into the posterior.
pub fn posterior_shard_stats(
    kernel: &Kernel,
    noise: f64,
    alpha_s: f64,
    z: MatRef<'_, f64>,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<PacSgpShardStats> {
    if x.nrows() != y.len() || x.ncols() != z.ncols() {
        return Err(Error::ShapeMismatch {
            what: "shard",
            expected: format!("{} rows and {} columns", y.len(), z.ncols()),
            found: format!("{}×{}", x.nrows(), x.ncols()),
        });
    }
    crate::data::check_finite(x, "shard inputs")?;
    if !(noise > 0.0 && noise.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "noise variance",
            value: noise,
            reason: "must be positive and finite",
        });
    }
    if !(0.0..=1.0).contains(&alpha_s) {
        return Err(Error::InvalidParameter {
            name: "alpha_s",
            value: alpha_s,
            reason: "must lie in [0, 1]",
        });
    }
    let l_uu = kuu_cholesky(kernel, z)?;
    let mut acc = PacSgpShardStats {
        b: crate::memory::zeros(z.nrows(), z.nrows()),
        gamma: vec![0.0; z.nrows()],
        n: 0,
    };
    for (start, rows) in row_blocks(y.len(), z.nrows()) {
        let sb = shard_basis(kernel, &l_uu, noise, alpha_s, x.subrows(start, rows), z)?;
        acc = acc.combine(&sums_of(&sb, &y[start..start + rows])?)?;
    }
    Ok(acc)
}

/// The sparse posterior (whitened precision form, `α = L⁻ᵀB⁻¹γ` with `B = I + ΣB_s`) from the
/// summed [`posterior_shard_stats`]: what `SparseGp::posterior_with_alpha` gives on all the data.
pub fn posterior_from_stats(
    kernel: &Kernel,
    z: MatRef<'_, f64>,
    s: &PacSgpShardStats,
) -> Result<GaussianPosterior> {
    let m = z.nrows();
    check_len(s.gamma.len(), m, "posterior statistics")?;
    check_square(&s.b, m, "posterior statistics")?;
    let l_uu = kuu_cholesky(kernel, z)?;
    let mut b = s.b.clone();
    for k in 0..m {
        b[(k, k)] += 1.0;
    }
    let l_b = Cholesky::factor(b.as_ref(), &JitterPolicy::default(), "I + VΛ⁻¹Vᵀ")?;
    let alpha = l_uu.solve_upper_vec(&l_b.solve_vec(&s.gamma));
    Ok(GaussianPosterior::whitened(
        kernel.clone(),
        z.to_owned(),
        alpha,
        l_uu,
        l_b,
    ))
}
