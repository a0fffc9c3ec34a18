//! The downdate of sparse GP regression (module doc of [`super`], "Sparse regression"): the
//! rank-one terms of every row from the whitened cross-covariance, a group's block dense or,
//! above M rows, in Woodbury form ([`super::block::SparseGroup`]).

use faer::{Mat, MatRef};

use super::block::{block_inverse, BlockInverse, SparseGroup};
use super::{check_groups, CrossCov, LooDowndate, TrainingLoo};
use crate::error::{Error, Result};
use crate::posterior::{Covariance, GaussianPosterior};

impl<'a> LooDowndate<'a> {
    /// Sparse regression: `post` is the whitened-form posterior of sparse GP regression with
    /// noise σ² and `Λ_i = σ² + α_s(k_ii − Q_ii)`, fitted on `(x, y)`. The stored weights
    /// must be the ones `(x, y)` give (else [`Error::ModelMismatch`]).
    pub fn sparse(
        post: &'a GaussianPosterior,
        noise: f64,
        alpha_s: f64,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<Self> {
        Self::sparse_by_groups(post, noise, alpha_s, x, y, &[])
    }

    /// [`LooDowndate::sparse`] leaving each of `groups` out together (as
    /// [`LooDowndate::exact_by_groups`]).
    pub fn sparse_by_groups(
        post: &'a GaussianPosterior,
        noise: f64,
        alpha_s: f64,
        x: MatRef<'_, f64>,
        y: &[f64],
        groups: &[Vec<usize>],
    ) -> Result<Self> {
        let Covariance::WhitenedPrecision { chol_kuu, chol_b } = &post.cov else {
            return Err(Error::Unsupported(
                "the sparse leave-one-out downdate needs a whitened-form posterior".into(),
            ));
        };
        crate::regression::exact::check_regression_inputs(x, y)?;
        post.check_inputs(x)?;
        let kzx = post.kernel().cross(post.basis.as_ref(), x)?; // M×N
        let m: Vec<f64> = crate::linalg::mat_t_vec(&kzx, &post.alpha);
        let mut v = kzx;
        chol_kuu.solve_lower_in_place(v.as_mut());
        let q = crate::linalg::col_sq_norms(&v);
        let lambda: Vec<f64> = post
            .kernel()
            .diag(x)
            .iter()
            .zip(&q)
            .map(|(k, q)| noise + alpha_s * (k - q).max(0.0))
            .collect();
        check_weights(post, chol_kuu, chol_b, &v, &lambda, y)?;
        let mut w = v;
        chol_b.solve_lower_in_place(w.as_mut());
        let s = crate::linalg::col_sq_norms(&w);
        let n = y.len();
        let (mut gain, mut kappa) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut residual, mut var) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let kdiag = post.kernel().diag(x);
        for i in 0..n {
            let tau = 1.0 / lambda[i];
            let keep = 1.0 - tau * s[i];
            if !(keep > 0.0) {
                return Err(Error::Numerical {
                    what: "sparse leave-one-out downdate",
                    message: format!(
                        "point {i}: projected variance {:.4e} ≥ Λ_i = {:.4e}",
                        s[i], lambda[i]
                    ),
                });
            }
            gain.push(tau * (y[i] - m[i]) / keep);
            kappa.push(tau / keep);
            residual.push(y[i] - (m[i] - s[i] * gain[i]));
            var.push((kdiag[i] - q[i]).max(0.0) + s[i] / keep + noise);
        }
        check_groups(groups, n)?;
        let mut d = Self {
            post,
            noise,
            cross: CrossCov::Whitened {
                w: Mat::zeros(0, 0),
            },
            gain,
            kappa,
            blocks: Vec::new(),
            block_of: vec![None; n],
            training: TrainingLoo { residual, var },
        };
        for g in groups {
            if g.len() > w.nrows() {
                let block = SparseGroup::woodbury(&w, &lambda, g)?;
                let r_g: Vec<f64> = g.iter().map(|&i| y[i] - m[i]).collect();
                let gamma = block.kappa.apply(&r_g);
                let (s_gamma, s_kappa_s) = block.moments(&gamma)?;
                for (a, &i) in g.iter().enumerate() {
                    d.gain[i] = gamma[a];
                    d.training.residual[i] = y[i] - (m[i] - s_gamma[a]);
                    d.training.var[i] = (kdiag[i] - q[i]).max(0.0) + s[i] + s_kappa_s[a] + noise;
                }
                d.push_block(g, BlockInverse::Woodbury(block.kappa));
                continue;
            }
            // S_GG = W_GᵀW_G, κ_G = (diag Λ_G − S_GG)⁻¹, γ_G = κ_G(y_G − m_G) (module doc).
            let s_gg = Mat::from_fn(g.len(), g.len(), |a, b| {
                crate::linalg::dot(crate::linalg::col(&w, g[a]), crate::linalg::col(&w, g[b]))
            });
            let m_g = Mat::from_fn(g.len(), g.len(), |a, b| {
                if a == b {
                    lambda[g[a]] - s_gg[(a, b)]
                } else {
                    -s_gg[(a, b)]
                }
            });
            let kappa = block_inverse(m_g, "Λ_G − S_GG of a group of the sparse model")?;
            let r_g: Vec<f64> = g.iter().map(|&i| y[i] - m[i]).collect();
            let gamma = crate::linalg::mat_vec(&kappa, &r_g);
            let s_gamma = crate::linalg::mat_vec(&s_gg, &gamma);
            let s_kappa_s = &(&s_gg * &kappa) * &s_gg;
            for (a, &i) in g.iter().enumerate() {
                d.gain[i] = gamma[a];
                d.training.residual[i] = y[i] - (m[i] - s_gamma[a]);
                d.training.var[i] =
                    (kdiag[i] - q[i]).max(0.0) + s_gg[(a, a)] + s_kappa_s[(a, a)] + noise;
            }
            d.push_block(g, BlockInverse::Dense(kappa));
        }
        d.cross = CrossCov::Whitened { w };
        Ok(d)
    }
}

/// The stored weights must be those of `(x, y)`: `α = L⁻ᵀB⁻¹VΛ⁻¹y` (docs/math.md §3.2) to
/// 1e-6 of their scale, else the training sample is not the posterior's.
fn check_weights(
    post: &GaussianPosterior,
    chol_kuu: &crate::linalg::Cholesky,
    chol_b: &crate::linalg::Cholesky,
    v: &Mat<f64>,
    lambda: &[f64],
    y: &[f64],
) -> Result<()> {
    let ly: Vec<f64> = y.iter().zip(lambda).map(|(y, l)| y / l).collect();
    let gamma = crate::linalg::mat_vec(v, &ly);
    let alpha = chol_kuu.solve_upper_vec(&chol_b.solve_vec(&gamma));
    let scale = 1.0 + alpha.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    let worst = alpha
        .iter()
        .zip(&post.alpha)
        .fold(0.0_f64, |a, (r, s)| a.max((r - s).abs()));
    if worst > 1e-6 * scale {
        return Err(Error::ModelMismatch {
            part: "training sample of the interval record".into(),
            reason: format!(
                "it does not give the stored posterior's weights (largest difference {worst:.3e})"
            ),
        });
    }
    Ok(())
}
