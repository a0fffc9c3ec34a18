//! The unstreamed (dense O(N·M)) PAC-SGP evaluation as it was before row-block streaming,
//! kept as the test oracle of the streamed one.

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::PacSgpObjective;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky};
use crate::linalg::{add_outer, sandwich_inv};
use crate::objective::bound::BoundTerms;
use crate::posterior::GaussianKlTerms;
use crate::regression::sparse_reference::{whitened, Whitened};

impl PacSgpObjective<'_> {
    pub(crate) fn dense_evaluate(
        &self,
        p: &[f64],
        with_grad: bool,
    ) -> Result<(BoundTerms, Vec<f64>)> {
        let (kernel, s2, z) = self.unpack(p)?;
        // Whitened factors: A = P + FΛ⁻¹Fᵀ = L B Lᵀ, c = FΛ⁻¹y = Lγ.
        let f = self.family();
        let wh = whitened(&kernel, s2, f.alpha_s, f.x, z.as_ref(), f.y)?;
        let theta = &p[..f.kernel.n_params()];
        let (terms, grad, _) =
            self.dense_evaluate_whitened(&kernel, s2, z.as_ref(), wh, theta, with_grad)?;
        Ok((terms, grad))
    }

    /// The terms at given whitened factors (any per-point `Λ`, as the heteroscedastic form
    /// builds them) and, with `with_grad`, the gradient in `[θ…, ln s2, vec(Z)]` and the
    /// adjoint `∂B/∂Λ_ii` per point.
    pub(crate) fn dense_evaluate_whitened(
        &self,
        kernel: &Kernel,
        s2: f64,
        z: MatRef<'_, f64>,
        wh: Whitened,
        theta: &[f64],
        with_grad: bool,
    ) -> Result<(BoundTerms, Vec<f64>, Vec<f64>)> {
        let f = self.family();
        let (x, y) = (f.x, f.y);
        let (n, m) = (x.nrows(), f.m);
        let nf = n as f64;
        let (l, lb, kd, q) = (&wh.l_uu, &wh.l_b, &wh.basis.kdiag, &wh.basis.q);
        // e = A⁻¹c = L⁻ᵀB⁻¹γ; tr(PA⁻¹) = tr B⁻¹, eᵀPe = ‖B⁻¹γ‖², ln det A − ln det P = ln det B.
        let bg = lb.solve_vec(&wh.gamma);
        let e = l.solve_upper_vec(&bg);
        let b_inv = lb.inverse().unwrap();
        let tr_binv: f64 = (0..m).map(|a| b_inv[(a, a)]).sum();
        let kl = GaussianKlTerms::site_form(tr_binv, linalg::dot(&bg, &bg), m, lb.ln_det()).kl();
        let mu = linalg::mat_t_vec(&wh.basis.kzx, &e);
        // s_i = F_iᵀA⁻¹F_i = ‖L_B⁻¹V_i‖².
        let mut yb = wh.basis.v.clone();
        lb.solve_lower_in_place(yb.as_mut());
        let s = linalg::col_sq_norms(&yb);
        let var: Vec<f64> = (0..n).map(|i| (kd[i] - q[i] + s[i]).max(1e-12)).collect();
        let (mut risk, mut g_mu, mut g_v) = (0.0, vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            let r = f.loss.point_risk(y[i], mu[i], var[i]);
            risk += r.risk / nf;
            g_mu[i] = r.d_mean;
            g_v[i] = r.d_var;
        }
        let klc = kl.max(0.0);
        let at = self.bound().at(theta, risk, klc, n);
        let (bound, d_q, d_c) = (at.value.value, at.value.d_risk, at.value.d_complexity);
        let terms = BoundTerms {
            empirical_risk: risk,
            kl,
            bound,
        };
        if !with_grad {
            return Ok((terms, vec![], vec![]));
        }
        let (mut grad, lamb) = self.dense_gradient(
            kernel, s2, z, wh, yb, &e, &bg, &b_inv, d_q, d_c, &g_mu, &g_v,
        );
        at.add_penalty_gradient(&mut grad);
        Ok((terms, grad, lamb))
    }

    /// Reverse mode through the module docs' formulas (adjoints of KL, μ, v first), with every
    /// M×N step a triangular solve or one product on contiguous columns:
    /// `Ā = KL̄·½(A⁻¹ − A⁻¹PA⁻¹ − ehᵀ − heᵀ) − ½(teᵀ + etᵀ) − A⁻¹F diag(v̄)FᵀA⁻¹`,
    /// `F̄ = eμ̄ᵀ + c̄(y/Λ)ᵀ + 2A⁻¹F diag(v̄) + 2ĀFΛ⁻¹ + 2P⁻¹F diag(q̄)`,
    /// `P̄ = KL̄·½(A⁻¹ + eeᵀ − P⁻¹) + Ā − P⁻¹F diag(q̄)FᵀP⁻¹`, with `A⁻¹F = L_A⁻ᵀL_B⁻¹V`
    /// (`L_A = L L_B`), `ĀF = ĀLV` and `P⁻¹F = L⁻ᵀV`.
    fn dense_gradient(
        &self,
        kernel: &Kernel,
        s2: f64,
        z: MatRef<'_, f64>,
        wh: Whitened,
        mut yb: Mat<f64>,
        e: &[f64],
        bg: &[f64],
        b_inv: &Mat<f64>,
        d_q: f64,
        d_c: f64,
        g_mu: &[f64],
        g_v: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let f = self.family();
        let (x, y) = (f.x, f.y);
        let (n, m) = (x.nrows(), f.m);
        let nf = n as f64;
        let (l, lb, lam, kd, q) = (
            &wh.l_uu,
            &wh.l_b,
            &wh.basis.lambda,
            &wh.basis.kdiag,
            &wh.basis.q,
        );
        let klb = d_c / nf;
        let mub: Vec<f64> = g_mu.iter().map(|g| d_q * g / nf).collect();
        let vb: Vec<f64> = g_v.iter().map(|g| d_q * g / nf).collect();
        let a_inv = sandwich_inv(l, b_inv.clone()); // L⁻ᵀB⁻¹L⁻¹
        let p_inv = l.inverse().unwrap();
        let apa = sandwich_inv(l, b_inv * b_inv); // A⁻¹PA⁻¹ = L⁻ᵀB⁻²L⁻¹
        let h = l.solve_upper_vec(&lb.solve_vec(bg)); // A⁻¹PA⁻¹c = L⁻ᵀB⁻¹(B⁻¹γ)
        let t = l.solve_upper_vec(&lb.solve_vec(&linalg::mat_vec(&wh.basis.v, &mub))); // A⁻¹Fμ̄
        let l_a = Cholesky::from_lower(l.l() * lb.l(), 0.0);
        let avfa = sandwich_inv(&l_a, linalg::weighted_gram(&yb, &vb).unwrap());
        let abar = Mat::from_fn(m, m, |a, b| {
            klb * 0.5 * (a_inv[(a, b)] - apa[(a, b)] - (e[a] * h[b] + h[a] * e[b]))
                - 0.5 * (t[a] * e[b] + e[a] * t[b])
                - avfa[(a, b)]
        });
        let cbar: Vec<f64> = (0..m).map(|a| klb * h[a] + t[a]).collect();
        // C = LᵀĀL, so FᵀĀF = VᵀCV.
        let c_mat = l.l().transpose() * (&abar * l.l());
        let mut cv = &c_mat * &wh.basis.v;
        let fa = linalg::col_dots(&wh.basis.v, &cv);
        let ftc = linalg::mat_t_vec(&wh.basis.kzx, &cbar);
        let lamb: Vec<f64> = (0..n)
            .map(|i| -(fa[i] + ftc[i] * y[i]) / (lam[i] * lam[i]))
            .collect();
        // Λ uses max(k − q, 0): no gradient flows where the clamp is active.
        let through_lam = |i: usize| {
            if kd[i] - q[i] >= 0.0 {
                f.alpha_s * lamb[i]
            } else {
                0.0
            }
        };
        let qb: Vec<f64> = (0..n).map(|i| -vb[i] - through_lam(i)).collect();
        let kb: Vec<f64> = (0..n).map(|i| vb[i] + through_lam(i)).collect();
        let s2b: f64 = lamb.iter().sum();
        // P̄ = KL̄·½[A⁻¹ + eeᵀ − P⁻¹] + Ā − L⁻ᵀ(V diag(q̄) Vᵀ)L⁻¹.
        let pqp = sandwich_inv(l, linalg::weighted_gram(&wh.basis.v, &qb).unwrap());
        let pbar = Mat::from_fn(m, m, |a, b| {
            klb * 0.5 * (a_inv[(a, b)] + e[a] * e[b] - p_inv[(a, b)]) + abar[(a, b)] - pqp[(a, b)]
        });
        // F̄ = eμ̄ᵀ + c̄(y/Λ)ᵀ + L⁻ᵀ[2L_B⁻ᵀ(L_B⁻¹V diag(v̄)) + 2CVΛ⁻¹ + 2V diag(q̄)].
        linalg::scale_cols(&mut yb, &vb);
        lb.solve_upper_in_place(yb.as_mut());
        cv.par_col_iter_mut().enumerate().for_each(|(i, c)| {
            let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
            let (vi, yi) = (wh.basis.v.col_as_slice(i), yb.col_as_slice(i));
            for a in 0..m {
                c[a] = 2.0 * (yi[a] + c[a] / lam[i] + vi[a] * qb[i]);
            }
        });
        drop(yb);
        l.solve_upper_in_place(cv.as_mut());
        let yl: Vec<f64> = (0..n).map(|i| y[i] / lam[i]).collect();
        add_outer(&mut cv, e, &mub);
        add_outer(&mut cv, &cbar, &yl);
        let kzx = wh.basis.kzx;
        let (mut grad, dz_x) = kernel.cross_adjoint(z, x, kzx, &cv);
        let gp = kernel.gram_grad_contract(z, pbar.as_ref());
        let gd = kernel.diag_grad_contract(x, &kb);
        for (k, g) in grad.iter_mut().enumerate() {
            *g += gp[k] + gd[k];
        }
        grad.push(s2 * s2b);
        let dz = &dz_x + &kernel.gram_grad_z(z, pbar.as_ref());
        for a in 0..m {
            for t in 0..z.ncols() {
                grad.push(dz[(a, t)]);
            }
        }
        (grad, lamb)
    }
}

mod tests {
    use faer::Mat;

    use super::*;
    use crate::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
    use crate::loss::RegressionLoss;
    use crate::objective::bound::MinimisedBound;
    use crate::optim::Objective;
    use crate::regression::row_blocks::Streaming;
    use crate::regression::sparse::NegSparseObjective;
    use crate::regression::sparse_reference::tests::{problem, rel};

    /// Small blocks, both parametrisations (FITC α_s = 1, VFE α_s = 0), both bounds, the
    /// cache over all, some and no blocks: the streamed PAC-SGP's terms and gradient equal the dense formulas
    /// to rounding, and all, some or no blocks cached give the same bits.
    #[test]
    fn streamed_pac_sgp_equals_the_dense_formulas() {
        let (x, y) = problem(157, 3, 17);
        let z = Mat::from_fn(13, 3, |a, t| x[(a * 11 % 157, t)] - 0.03);
        let k = Kernel::se_ard(&[0.9, 1.2, 0.7], 1.4);
        let p = NegSparseObjective::pack(&k, 0.05, z.as_ref());
        let pen = HyperGrid::default().penalty(4);
        for (alpha_s, kind) in [
            (1.0, BoundKind::Kl),
            (0.0, BoundKind::Sqrt),
            (0.5, BoundKind::Kl),
        ] {
            let loss = RegressionLoss::EpsilonBand { epsilon: 0.4 };
            let make = |stream| {
                let bound = MinimisedBound::new(0.05, ConfidenceTerm::Maurer, kind, pen).unwrap();
                PacSgpObjective::new(&k, x.as_ref(), &y, 13, alpha_s, loss, bound)
                    .unwrap()
                    .with_streaming(stream)
            };
            let (dt, dg) = make(Streaming::default()).dense_evaluate(&p, true).unwrap();
            let mut bits = vec![];
            for cache_bytes in [usize::MAX, 5000, 0] {
                let o = make(Streaming {
                    block_rows: 16,
                    cache_bytes,
                });
                let (v, g) = o.value_and_gradient(&p).unwrap();
                let t = o.terms(&p).unwrap();
                assert!(
                    rel(v, dt.bound, 1e-3) < 1e-12,
                    "{alpha_s}: {v} vs {}",
                    dt.bound
                );
                assert!(rel(t.kl, dt.kl, 1e-3) < 1e-11);
                assert!(rel(t.empirical_risk, dt.empirical_risk, 1e-3) < 1e-12);
                let scale = dg.iter().fold(0.0f64, |s, g| s.max(g.abs()));
                for (i, (a, b)) in g.iter().zip(&dg).enumerate() {
                    assert!(
                        (a - b).abs() < 1e-10 * scale,
                        "α_s {alpha_s} grad[{i}]: {a} vs {b}"
                    );
                }
                bits.push((
                    v.to_bits(),
                    g.iter().map(|g| g.to_bits()).collect::<Vec<_>>(),
                ));
            }
            assert!(
                bits[0] == bits[1] && bits[1] == bits[2],
                "α_s {alpha_s}: cache all/some/none"
            );
        }
    }
}
