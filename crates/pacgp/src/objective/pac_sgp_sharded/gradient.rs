//! Pass 3 of the sharded bound: each shard's gradient (map), block by block, and the gradient from
//! the driver's part and the shards' summed parts (once).

use super::*;

/// One row block's part of pass 3.
struct BlockGradient {
    theta: Vec<f64>,
    dz: Mat<f64>,
    vqv: Mat<f64>,
    s2b: f64,
}

impl PacSgpSharded {
    /// Pass 3 (map): one shard's gradient through `F̄_s = L⁻ᵀV̄_s`, `diag K̄` and σ̄², and its
    /// `Σ q̄_iV_iV_iᵀ`, block by block.
    pub fn shard_gradient(
        &self,
        p: &[f64],
        l_uu: &Cholesky,
        adj: &PacSgpAdjoints,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<PacSgpShardGradient> {
        let m = self.m;
        let lb = self.check_state(&adj.l_b, &adj.w)?;
        check_square(&adj.b_bar, m, "PAC-SGP adjoint B̄")?;
        check_len(adj.gamma_bar.len(), m, "PAC-SGP adjoint γ̄")?;
        let (kernel, s2, z) = self.shard_setup(p, l_uu, x, y)?;
        let (nk, d) = (kernel.n_params(), self.d);
        let mut gradient = vec![0.0; self.dim()];
        let mut vqv = crate::memory::zeros(m, m);
        let mut s2b = 0.0;
        for (start, rows) in row_blocks(y.len(), m) {
            let (xb, yb) = (x.subrows(start, rows), &y[start..start + rows]);
            let wb = shard_basis(&kernel, l_uu, s2, self.alpha_s, xb, z.as_ref())?;
            let part = self.block_gradient(&kernel, l_uu, &lb, adj, wb, xb, yb, z.as_ref())?;
            for k in 0..nk {
                gradient[k] += part.theta[k];
            }
            for a in 0..m {
                for t in 0..d {
                    gradient[nk + 1 + a * d + t] += part.dz[(a, t)];
                }
            }
            vqv += &part.vqv;
            s2b += part.s2b;
        }
        gradient[nk] = s2 * s2b;
        Ok(PacSgpShardGradient { gradient, vqv })
    }

    /// One block's part of pass 3 (module doc's `V̄`, `Λ̄`, `q̄`, `k̄`).
    #[allow(clippy::too_many_arguments)]
    fn block_gradient(
        &self,
        kernel: &Kernel,
        l: &Cholesky,
        lb: &Cholesky,
        adj: &PacSgpAdjoints,
        wb: ShardBasis,
        x: MatRef<'_, f64>,
        y: &[f64],
        z: MatRef<'_, f64>,
    ) -> Result<BlockGradient> {
        let (m, n) = (self.m, y.len());
        let pt = self.point_terms(&wb, lb, &adj.w, y);
        let (lam, kd, q) = (&wb.lambda, &wb.kdiag, &wb.q);
        let mub: Vec<f64> = pt.d_mean.iter().map(|g| adj.risk_scale * g).collect();
        let vb: Vec<f64> = pt.d_var.iter().map(|g| adj.risk_scale * g).collect();
        let mut cv = &adj.b_bar * &wb.v;
        let fa = linalg::col_dots(&wb.v, &cv);
        let vg = linalg::mat_t_vec(&wb.v, &adj.gamma_bar);
        let lamb: Vec<f64> = (0..n)
            .map(|i| -(fa[i] + vg[i] * y[i]) / (lam[i] * lam[i]))
            .collect();
        // Λ uses max(k − q, 0): no gradient flows where the clamp is active.
        let through_lam = |i: usize| {
            if kd[i] - q[i] >= 0.0 {
                self.alpha_s * lamb[i]
            } else {
                0.0
            }
        };
        let qb: Vec<f64> = (0..n).map(|i| -vb[i] - through_lam(i)).collect();
        let kb: Vec<f64> = (0..n).map(|i| vb[i] + through_lam(i)).collect();
        let vqv = linalg::weighted_gram(&wb.v, &qb)?;
        // V̄ = wμ̄ᵀ + γ̄(y/Λ)ᵀ + 2L_B⁻ᵀ(Y diag(v̄)) + 2B̄VΛ⁻¹ + 2V diag(q̄); F̄ = L⁻ᵀV̄.
        let mut yv = pt.y_b;
        linalg::scale_cols(&mut yv, &vb);
        lb.solve_upper_in_place(yv.as_mut());
        cv.par_col_iter_mut().enumerate().for_each(|(i, c)| {
            let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
            let (vi, yi) = (wb.v.col_as_slice(i), yv.col_as_slice(i));
            for a in 0..m {
                c[a] = 2.0 * (yi[a] + c[a] / lam[i] + vi[a] * qb[i]);
            }
        });
        drop(yv);
        let yl: Vec<f64> = (0..n).map(|i| y[i] / lam[i]).collect();
        add_outer(&mut cv, &adj.w, &mub);
        add_outer(&mut cv, &adj.gamma_bar, &yl);
        l.solve_upper_in_place(cv.as_mut());
        let (mut theta, dz) = kernel.cross_adjoint(z, x, wb.kzx, &cv);
        let gd = kernel.diag_grad_contract(x, &kb);
        for (g, d) in theta.iter_mut().zip(&gd) {
            *g += d;
        }
        Ok(BlockGradient {
            theta,
            dz,
            vqv,
            s2b: lamb.iter().sum(),
        })
    }

    /// After pass 3 (once): the gradient from the driver's part and the shards' summed parts,
    /// with `P̄ = −½L⁻ᵀΨL⁻¹`, `Ψ = global.psi + 2 sym(Σ q̄_iV_iV_iᵀ)`, contracted once.
    pub fn gradient(
        &self,
        p: &[f64],
        l: &Cholesky,
        global: &PacSgpDriverPart,
        shards: &PacSgpShardGradient,
    ) -> Result<Vec<f64>> {
        let m = self.m;
        check_len(l.dim(), m, "K_uu factor")?;
        check_square(&global.psi, m, "PAC-SGP global Ψ")?;
        check_square(&shards.vqv, m, "PAC-SGP gradient parts")?;
        check_len(shards.gradient.len(), self.dim(), "PAC-SGP gradient parts")?;
        check_len(global.gradient.len(), self.dim(), "PAC-SGP gradient parts")?;
        let (kernel, _, z) = self.unpack(p)?;
        let q = &shards.vqv;
        let psi = Mat::from_fn(m, m, |a, b| {
            -0.5 * (global.psi[(a, b)] + q[(a, b)] + q[(b, a)])
        });
        let pbar = sandwich_inv(l, psi);
        let mut out = kernel.gram_grad_contract(z.as_ref(), pbar.as_ref());
        out.push(0.0);
        push_rows(&mut out, &kernel.gram_grad_z(z.as_ref(), pbar.as_ref()));
        for ((o, g), s) in out.iter_mut().zip(&global.gradient).zip(&shards.gradient) {
            *o += g + s;
        }
        Ok(out)
    }
}
