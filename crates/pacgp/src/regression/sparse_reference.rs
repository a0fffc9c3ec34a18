//! The unstreamed (dense O(N·M)) sparse objectives as they were before row-block streaming,
//! kept as the test oracle of the streamed ones (same formulas, one M×N matrix per factor).

use faer::{Mat, MatRef};
use rayon::prelude::*;

use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg;

use crate::linalg::{Cholesky, JitterPolicy};

use super::sharded::ShardBasis;
use super::sparse::SparseMethod;
use super::whitened_blocks::kuu_cholesky;
use crate::linalg::{add_outer, sandwich_inv};

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// The whitened factors of one evaluation at (θ, σ², Z) (docs/math.md §3.2), shared with PAC-SGP:
/// `L_uu`, the points' [`ShardBasis`] (all of them in one) and the sums over the data.
///
/// `F = K(Z, X)` is kept in the M×N orientation so that every O(NM²) step (the solve for V,
/// the product for B, the gradients' solves and products) runs on contiguous columns.
pub(crate) struct Whitened {
    /// `L Lᵀ = K_uu + jitter·I`.
    pub l_uu: Cholesky,
    /// `F`, `V`, `k_ii`, `q_i` and `Λ_ii` of the points.
    pub basis: ShardBasis,
    /// `L_B L_Bᵀ = B = I + VΛ⁻¹Vᵀ`.
    pub l_b: Cholesky,
    /// `γ = VΛ⁻¹y`.
    pub gamma: Vec<f64>,
}

/// [`Whitened`] at (θ, σ², Z) on the points `x` with targets `y`.
pub(crate) fn whitened(
    kernel: &Kernel,
    noise: f64,
    alpha_s: f64,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    y: &[f64],
) -> Result<Whitened> {
    let l_uu = kuu_cholesky(kernel, z)?;
    let kzx = kernel.inducing_cross(z, x)?;
    let basis = ShardBasis::of_cross(kzx, &l_uu, kernel.diag(x), noise, alpha_s);
    let (mut b, gamma) = super::sparse_sums::weighted_sums(&basis.v, &basis.lambda, y)?;
    for k in 0..b.nrows() {
        b[(k, k)] += 1.0;
    }
    let l_b = Cholesky::factor(b.as_ref(), &JitterPolicy::default(), "I + VΛ⁻¹Vᵀ")?;
    Ok(Whitened {
        l_uu,
        basis,
        l_b,
        gamma,
    })
}

/// The sparse training objective (to be maximised) and its gradient in
/// `[θ…, ln σ², vec(Z) row by row]`.
///
/// With `W = P⁻¹F`, `R = ββᵀ − Σ⁻¹` and `Σ = FᵀP⁻¹F + Λ`, the log density's adjoints are
/// `F̄ = WR = L⁻ᵀ[(Vβ)βᵀ − B⁻¹VΛ⁻¹]`, `P̄ = −½WRWᵀ = −½aaᵀ + ½L⁻ᵀ(I − B⁻¹)L⁻¹`
/// (`a = L⁻ᵀVβ`, using `WΣ⁻¹ = A⁻¹FΛ⁻¹` and `WΣ⁻¹Wᵀ = P⁻¹ − A⁻¹`) and `Λ̄_ii = ½R_ii`;
/// `q_i = F_iᵀP⁻¹F_i` then adds `2L⁻ᵀV diag(q̄)` to F̄ and `−L⁻ᵀV diag(q̄)VᵀL⁻¹` to P̄.
/// VFE and DTC (`Λ = σ²I`) need only M×M work beyond V, B and one M×M by M×N product.
pub(crate) fn objective_and_gradient(
    kernel: &Kernel,
    noise: f64,
    method: SparseMethod,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    y: &[f64],
) -> Result<(f64, Vec<f64>)> {
    let alpha_s = method.alpha_s();
    let f = whitened(kernel, noise, alpha_s, x, z, y)?;
    let (n, m) = (x.nrows(), z.nrows());
    let lam = &f.basis.lambda;
    // ln N(y | 0, Q + Λ) by Woodbury.
    let lb_gamma = f.l_b.solve_lower_vec(&f.gamma);
    let quad =
        (0..n).map(|i| y[i] * y[i] / lam[i]).sum::<f64>() - linalg::dot(&lb_gamma, &lb_gamma);
    let ln_det = f.l_b.ln_det() + lam.iter().map(|l| l.ln()).sum::<f64>();
    let mut value = -0.5 * quad - 0.5 * ln_det - 0.5 * n as f64 * LN_2PI;
    let trace_gap: f64 = (0..n).map(|i| f.basis.kdiag[i] - f.basis.q[i]).sum();
    if method == SparseMethod::Vfe {
        value -= trace_gap / (2.0 * noise);
    }
    // β = Σ⁻¹y = Λ⁻¹(y − Vᵀ B⁻¹ γ); a = P⁻¹Fβ = L⁻ᵀVβ.
    let binv_gamma = f.l_b.solve_vec(&f.gamma);
    let vt_bg = linalg::mat_t_vec(&f.basis.v, &binv_gamma);
    let beta: Vec<f64> = (0..n).map(|i| (y[i] - vt_bg[i]) / lam[i]).collect();
    let vbeta = linalg::mat_vec(&f.basis.v, &beta);
    let a = f.l_uu.solve_upper_vec(&vbeta);
    let b_inv = f.l_b.inverse().unwrap();
    let (fbar, x_mid, kbar, noise_bar) = match method {
        SparseMethod::Vfe | SparseMethod::Dtc => {
            // Λ = σ²I: Σ_i s_i = tr(B⁻¹VVᵀ) = σ²(M − tr B⁻¹), VVᵀ = σ²(B − I).
            let tr_binv: f64 = (0..m).map(|k| b_inv[(k, k)]).sum();
            let lam_bar_sum =
                0.5 * (linalg::dot(&beta, &beta) - n as f64 / noise + (m as f64 - tr_binv) / noise);
            // VFE's −tr(K_ff − Q_ff)/(2σ²): q̄ = 1/(2σ²), k̄ = −1/(2σ²).
            let q_bar = if method == SparseMethod::Vfe {
                0.5 / noise
            } else {
                0.0
            };
            let mut noise_bar = lam_bar_sum;
            if method == SparseMethod::Vfe {
                noise_bar += trace_gap / (2.0 * noise * noise);
            }
            // F̄ = aβᵀ + L⁻ᵀ(2q̄I − B⁻¹/σ²)V.
            let mut c = Mat::from_fn(m, m, |i, j| {
                -b_inv[(i, j)] / noise + if i == j { 2.0 * q_bar } else { 0.0 }
            });
            f.l_uu.solve_upper_in_place(c.as_mut());
            let mut fbar = &c * &f.basis.v;
            add_outer(&mut fbar, &a, &beta);
            // X = ½(I − B⁻¹) − q̄σ²(B − I).
            let bmat = f.l_b.l() * f.l_b.l().transpose();
            let x_mid = Mat::from_fn(m, m, |i, j| {
                let id = if i == j { 1.0 } else { 0.0 };
                0.5 * (id - b_inv[(i, j)]) - q_bar * noise * (bmat[(i, j)] - id)
            });
            let kbar = vec![-q_bar; n];
            (fbar, x_mid, kbar, noise_bar)
        }
        SparseMethod::Fitc => {
            // s_i = V_iᵀB⁻¹V_i = ‖L_B⁻¹V_i‖²; Λ̄_ii = ½(β_i² − 1/λ_i + s_i/λ_i²).
            let mut yb = f.basis.v.clone();
            f.l_b.solve_lower_in_place(yb.as_mut());
            let s = linalg::col_sq_norms(&yb);
            let lam_bar: Vec<f64> = (0..n)
                .map(|i| 0.5 * (beta[i] * beta[i] - 1.0 / lam[i] + s[i] / (lam[i] * lam[i])))
                .collect();
            // Λ = σ² + max(k − q, 0): no gradient where the clamp is active.
            let q_bar: Vec<f64> = (0..n)
                .map(|i| {
                    if f.basis.kdiag[i] - f.basis.q[i] >= 0.0 {
                        -lam_bar[i]
                    } else {
                        0.0
                    }
                })
                .collect();
            let kbar: Vec<f64> = q_bar.iter().map(|q| -q).collect();
            let noise_bar: f64 = lam_bar.iter().sum();
            // H = (Vβ)βᵀ − L_B⁻ᵀ(L_B⁻¹V)Λ⁻¹ + 2V diag(q̄), then F̄ = L⁻ᵀH.
            let inv_lam: Vec<f64> = lam.iter().map(|l| 1.0 / l).collect();
            linalg::scale_cols(&mut yb, &inv_lam);
            f.l_b.solve_upper_in_place(yb.as_mut());
            yb.par_col_iter_mut().enumerate().for_each(|(i, c)| {
                let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
                let vi = f.basis.v.col_as_slice(i);
                for k in 0..m {
                    c[k] = vbeta[k] * beta[i] - c[k] + 2.0 * vi[k] * q_bar[i];
                }
            });
            f.l_uu.solve_upper_in_place(yb.as_mut());
            let vqv = linalg::weighted_gram(&f.basis.v, &q_bar)?;
            let x_mid = Mat::from_fn(m, m, |i, j| {
                0.5 * (if i == j { 1.0 } else { 0.0 } - b_inv[(i, j)]) - vqv[(i, j)]
            });
            (yb, x_mid, kbar, noise_bar)
        }
    };
    // P̄ = −½aaᵀ + L⁻ᵀ X L⁻¹.
    let mut pbar = sandwich_inv(&f.l_uu, x_mid);
    for j in 0..m {
        for i in 0..m {
            pbar[(i, j)] -= 0.5 * a[i] * a[j];
        }
    }
    let kzx = f.basis.kzx;
    let (mut grad, dz_x) = kernel.cross_adjoint(z, x, kzx, &fbar);
    let guu = kernel.gram_grad_contract(z, pbar.as_ref());
    let gdiag = kernel.diag_grad_contract(x, &kbar);
    for (k, g) in grad.iter_mut().enumerate() {
        *g += guu[k] + gdiag[k];
    }
    grad.push(noise * noise_bar);
    let dz = &dz_x + &kernel.gram_grad_z(z, pbar.as_ref());
    for a in 0..m {
        for t in 0..z.ncols() {
            grad.push(dz[(a, t)]);
        }
    }
    Ok((value, grad))
}

pub(crate) mod tests {
    use faer::Mat;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::optim::Objective;
    use crate::regression::row_blocks::Streaming;
    use crate::regression::sparse::NegSparseObjective;

    /// Seeded inputs in [−2, 2]^d and a smooth target with noise.
    pub(crate) fn problem(n: usize, d: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let x = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0f64..2.0));
        let y = (0..n)
            .map(|i| (0..d).map(|t| x[(i, t)].sin()).sum::<f64>() + 0.1 * rng.gen::<f64>())
            .collect();
        (x, y)
    }

    /// Relative distance `|a − b| / max(|b|, floor)`.
    pub(crate) fn rel(a: f64, b: f64, floor: f64) -> f64 {
        (a - b).abs() / b.abs().max(floor)
    }

    /// Small blocks (several per problem, the last one short), with the cache over all, some and no blocks:
    /// the streamed VFE, FITC and DTC equal the dense formulas to rounding, value and every
    /// gradient entry, for an SE-ARD and a Matérn-5/2 kernel (the latter takes its slopes from
    /// the kernel values); all, some (the leading blocks) or no blocks cached give the same bits.
    #[test]
    fn streamed_objectives_equal_the_dense_formulas() {
        let (x, y) = problem(157, 3, 11);
        let z = Mat::from_fn(13, 3, |a, t| x[(a * 11 % 157, t)] + 0.05);
        let kernels = [
            Kernel::se_ard(&[0.8, 1.3, 0.6], 1.7),
            Kernel::Scale {
                ln_variance: 0.3,
                inner: Box::new(Kernel::Stationary {
                    profile: crate::kernel::Profile::Matern52,
                    ln_lengthscale: vec![0.1, -0.2, 0.4],
                    groups: None,
                }),
            },
        ];
        for k in &kernels {
            let p = NegSparseObjective::pack(k, 0.07, z.as_ref());
            for method in [SparseMethod::Vfe, SparseMethod::Fitc, SparseMethod::Dtc] {
                let (dv, dg) =
                    objective_and_gradient(k, 0.07, method, x.as_ref(), z.as_ref(), &y).unwrap();
                let mut bits = vec![];
                for cache_bytes in [usize::MAX, 5000, 0] {
                    let stream = Streaming {
                        block_rows: 16,
                        cache_bytes,
                    };
                    let o = NegSparseObjective::new(k, method, x.as_ref(), &y, 13)
                        .with_streaming(stream);
                    let (v, g) = o.value_and_gradient(&p).unwrap();
                    assert!(rel(-v, dv, 1.0) < 1e-12, "{method:?}: {v} vs {dv}");
                    let scale = dg.iter().fold(0.0f64, |s, g| s.max(g.abs()));
                    for (i, (a, b)) in g.iter().zip(&dg).enumerate() {
                        assert!(
                            (-a - b).abs() < 1e-11 * scale,
                            "{method:?} grad[{i}]: {a} vs {b}"
                        );
                    }
                    bits.push((
                        v.to_bits(),
                        g.iter().map(|g| g.to_bits()).collect::<Vec<_>>(),
                    ));
                }
                assert!(
                    bits[0] == bits[1] && bits[1] == bits[2],
                    "{method:?}: cache all/some/none"
                );
            }
        }
    }
}

mod ill_conditioned {
    use faer::Mat;

    use super::tests::{problem, rel};
    use super::*;
    use crate::optim::Objective;
    use crate::regression::row_blocks::Streaming;
    use crate::regression::sparse::NegSparseObjective;

    /// At σ_f² = e⁶ with long lengthscales (cond(K_uu + jitter) ≈ 1.9·10¹⁰, the regime where
    /// unwhitened sums fail) the streamed objectives still equal the dense whitened formulas.
    #[test]
    fn streamed_objectives_hold_at_cond_1e10() {
        let (x, y) = problem(400, 4, 5);
        let z = Mat::from_fn(50, 4, |a, t| x[(a * 7, t)]);
        let k = Kernel::se_ard(&[15.0, 20.0, 12.0, 18.0], 6f64.exp());
        let (kzz, _) = crate::regression::whitened_blocks::kuu_factor(&k, z.as_ref()).unwrap();
        let mut kuu = kzz.clone();
        for i in 0..50 {
            kuu[(i, i)] += crate::regression::sparse::KUU_JITTER;
        }
        let eig = kuu.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        let cond = eig.iter().cloned().fold(0.0, f64::max)
            / eig.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(cond > 1e10, "cond(K_uu + jitter) = {cond:e}");
        let p = NegSparseObjective::pack(&k, 0.01, z.as_ref());
        for method in [SparseMethod::Vfe, SparseMethod::Fitc, SparseMethod::Dtc] {
            let (dv, dg) =
                objective_and_gradient(&k, 0.01, method, x.as_ref(), z.as_ref(), &y).unwrap();
            let o =
                NegSparseObjective::new(&k, method, x.as_ref(), &y, 50).with_streaming(Streaming {
                    block_rows: 64,
                    cache_bytes: 0,
                });
            let (v, g) = o.value_and_gradient(&p).unwrap();
            let scale = dg.iter().fold(0.0f64, |s, g| s.max(g.abs()));
            let worst = g
                .iter()
                .zip(&dg)
                .map(|(a, b)| (-a - b).abs() / scale)
                .fold(0.0, f64::max);
            // Measured: value 1e-11–3e-11, gradient ≤ 1.4e-9 of its largest entry.
            assert!(rel(-v, dv, 1.0) < 1e-9, "{method:?}: {v} vs {dv}");
            assert!(
                worst < 1e-8,
                "{method:?}: gradient off by {worst:e} of its largest entry"
            );
        }
    }
}
