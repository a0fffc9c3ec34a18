//! Cavity leave-one-out, written once against the shared posterior.
//!
//! **Site form** ([`Covariance::Sites`]: exact GP, Laplace, EP, ADF/IVM). The posterior over
//! `f_B` is the prior times Gaussian sites `t_i(f_i) ∝ exp(−½π_i f_i² + ν̃_i f_i)`:
//! `Σ = (K⁻¹ + Π)⁻¹`, `μ = Σν̃ = Kα`. Since `Σ = K(I + ΠK)⁻¹`,
//! `Σ(α + Πμ) = Σ(I + ΠK)α = Kα = μ`, so the sites' natural means are
//! `ν̃_i = α_i + π_i μ_i` (no `K⁻¹` needed). Dividing the marginal `N(μ_i, Σ_ii)` by site i
//! gives the cavity (GPML eq. 3.56)
//!
//! `τ_{−i} = 1/Σ_ii − π_i`,  `ν_{−i} = μ_i/Σ_ii − ν̃_i`,
//!
//! which we evaluate in the form without the cancellation `1/Σ_ii − π_i`: with
//! `B = I + Π½KΠ½`, `Σ = Π^{−½}(I − B⁻¹)Π^{−½}` gives `1 − π_iΣ_ii = [B⁻¹]_ii`, so
//!
//! `v_{−i} = 1/τ_{−i} = Σ_ii / [B⁻¹]_ii`,  `μ_{−i} = ν_{−i}/τ_{−i} = μ_i − α_i v_{−i}`.
//!
//! What the cavity is depends on where the sites came from: for exact GP regression
//! (`π = 1/σ²`, `α = C⁻¹y`) it is the exact LOO latent posterior (GPML eq. 5.12:
//! `μ_{−i} = y_i − α_i/[C⁻¹]_ii`, `v_{−i} = 1/[C⁻¹]_ii − σ²`); for EP it is EP's own cavity,
//! i.e. LOO-EP; for Laplace (`π = W`, `α = ∇ln p(y|f̂)`) it is the LA-LOO of Vehtari et al.
//! (JMLR 17(103), 2016, §3.1): `μ_{−i} = f̂_i − v_{−i}∇_i`. Cost: one `L⁻¹` of the stored
//! factor (`N³/3` flops; `[B⁻¹]_ii` are its column norms) plus `N²` per column where
//! `π_iK_ii` is too small for `(1 − [B⁻¹]_ii)/π_i` (EP's `sigma_diag_from_sites`).
//!
//! **Basis subsets** (IVM: a site form over the active set I). Points in I get their cavity
//! as above; a training point outside I has no site, its likelihood never entered the
//! posterior, so its LOO marginal is its posterior marginal. (A refit without an active
//! point would select a different set; that is what the exact refits measure.)
//!
//! **Whitened form** (VFE/FITC/DTC regression, [`sparse_gp_loo`]). At fixed `(θ, σ², Z)`
//! point i enters `q(u)` through a rank-one Gaussian site on `g_i = a_iᵀu`,
//! `a_i = K_uu⁻¹k_u(x_i)`, of precision `1/Λ_i` and natural mean `y_i/Λ_i`
//! (`Λ_i = σ² + α_s(k_ii − Q_ii)`; VFE's trace term does not depend on y, so its optimal
//! `q(u)` is the same DTC posterior). Removing it is the one-dimensional cavity of the
//! projected marginal `N(m_i, s_i)`: `s_{−i} = s_i/(1 − s_i/Λ_i)`,
//! `m_{−i} = m_i − s_{−i}(y_i − m_i)/Λ_i`, and `f_i` adds the conditional variance
//! `k_ii − Q_ii`. This is the *exact* LOO at fixed `(θ, σ², Z)` (checked against refits).
//!
//! **Dense form** (SOGP): `Σ_B` has no diagonal site precisions (reduced updates and
//! deletions spread a point's likelihood over the whole basis, and repeated sweeps count it
//! several times), so there is no cavity to read off; SOGP's LOO is by refits only
//! ([`super::classifier_exact_loo`]), and [`site_cavities`] returns `Unsupported`.

use faer::{Mat, MatRef};

use super::LooResult;
use crate::error::{Error, Result};
use crate::inference::ClassifierFit;
use crate::posterior::{Covariance, GaussianPosterior};
use crate::regression::sparse::SparseGp;

/// Leave-one-out marginals of the latent function, `f_i | y_{−i} ≈ N(mean_i, var_i)`.
#[derive(Clone, Debug, PartialEq)]
pub struct LatentLoo {
    /// `μ_{−i}`.
    pub mean: Vec<f64>,
    /// `v_{−i}` (latent, no observation noise).
    pub var: Vec<f64>,
}

/// The cavity `N(μ_{−i}, v_{−i})` of every basis point of a site-form posterior (module doc).
/// `Unsupported` for the whitened and dense forms, which have no diagonal sites.
pub fn site_cavities(post: &GaussianPosterior) -> Result<LatentLoo> {
    Ok(site_cavities_and_inverse_diag(post)?.0)
}

/// [`site_cavities`] and the `[B⁻¹]_ii` it divides by, both from its one `L⁻¹` (the
/// classifier's downdate needs both: [`super::LooDowndate::sites_with_cavities`]).
pub(crate) fn site_cavities_and_inverse_diag(
    post: &GaussianPosterior,
) -> Result<(LatentLoo, Vec<f64>)> {
    let Covariance::Sites { sqrt_pi, chol_b } = &post.cov else {
        return Err(Error::Unsupported(
            "cavity leave-one-out needs a site-form posterior (exact GP, Laplace, EP, ADF/IVM); \
             use refits for this model"
                .into(),
        ));
    };
    let k = post.kernel().gram(post.basis.as_ref())?;
    let mu = crate::linalg::mat_vec(&k, &post.alpha);
    let l_inv = chol_b.l_inverse()?;
    let n = sqrt_pi.len();
    // [B⁻¹]_ii = ‖(L⁻¹)_{:,i}‖² (L⁻¹ is lower triangular).
    let binv_diag: Vec<f64> = (0..n)
        .map(|i| l_inv.col_as_slice(i)[i..].iter().map(|v| v * v).sum())
        .collect();
    let sigma_diag = crate::inference::ep::sigma_diag_from_sites(&k, sqrt_pi, chol_b, &l_inv)?;
    let mut var = Vec::with_capacity(n);
    let mut mean = Vec::with_capacity(n);
    for i in 0..n {
        let v = sigma_diag[i].max(0.0) / binv_diag[i]; // 1/τ_{−i} = Σ_ii/[B⁻¹]_ii
        if !(v.is_finite() && binv_diag[i] > 0.0) {
            return Err(Error::Numerical {
                what: "cavity leave-one-out",
                message: format!(
                    "basis point {i}: Σ_ii = {:.4e}, [B⁻¹]_ii = {:.4e}",
                    sigma_diag[i], binv_diag[i]
                ),
            });
        }
        var.push(v);
        mean.push(mu[i] - post.alpha[i] * v); // ν_{−i}/τ_{−i} = μ_i − α_i v_{−i}
    }
    Ok((LatentLoo { mean, var }, binv_diag))
}

/// Latent LOO marginals at every training input of a site-form classifier fit: the cavity at
/// each basis point and the posterior marginal at training points outside the basis
/// (`fit.basis_indices`, IVM). `x` are the training inputs the fit was made on.
pub fn training_cavities(fit: &ClassifierFit, x: MatRef<'_, f64>) -> Result<LatentLoo> {
    let cav = site_cavities(&fit.posterior)?;
    let Some(idx) = &fit.basis_indices else {
        if cav.mean.len() != x.nrows() {
            return Err(Error::ShapeMismatch {
                what: "training inputs for the cavity LOO",
                expected: format!("{} rows (the posterior's basis)", cav.mean.len()),
                found: format!("{}", x.nrows()),
            });
        }
        return Ok(cav);
    };
    cavities_at_rows(&fit.posterior, cav, idx, x)
}

/// The basis point of every training row: `Some(b)` where row `basis_rows[b]` is the b-th
/// basis point, `None` outside the basis. `basis_rows` must be distinct rows below `n`.
pub(crate) fn basis_positions(basis_rows: &[usize], n: usize) -> Result<Vec<Option<usize>>> {
    let mut in_basis = vec![None; n];
    for (b, &row) in basis_rows.iter().enumerate() {
        if row >= n || in_basis[row].is_some() {
            return Err(Error::ShapeMismatch {
                what: "basis indices of the fit",
                expected: format!("distinct training rows below {n}"),
                found: format!("{row}"),
            });
        }
        in_basis[row] = Some(b);
    }
    Ok(in_basis)
}

/// [`training_cavities`] from the cavities `cav` of `post`'s basis points: row
/// `basis_rows[b]` takes cavity b, every other row of the training inputs `x` its posterior
/// marginal (its likelihood never entered the posterior; module doc, basis subsets).
pub(crate) fn cavities_at_rows(
    post: &GaussianPosterior,
    cav: LatentLoo,
    basis_rows: &[usize],
    x: MatRef<'_, f64>,
) -> Result<LatentLoo> {
    let n = x.nrows();
    if basis_rows.len() != cav.mean.len() {
        return Err(Error::ShapeMismatch {
            what: "basis indices of the fit",
            expected: format!("{} rows (the posterior's basis)", cav.mean.len()),
            found: format!("{}", basis_rows.len()),
        });
    }
    let in_basis = basis_positions(basis_rows, n)?;
    let outside: Vec<usize> = (0..n).filter(|&i| in_basis[i].is_none()).collect();
    let rest = post.predict(crate::inference::ivm::select_rows(x, &outside).as_ref())?;
    let (mut mean, mut var) = (vec![0.0; n], vec![0.0; n]);
    for (r, &i) in outside.iter().enumerate() {
        (mean[i], var[i]) = (rest.mean[r], rest.var[r]);
    }
    for (i, b) in in_basis.iter().enumerate() {
        if let Some(b) = *b {
            (mean[i], var[i]) = (cav.mean[b], cav.var[b]);
        }
    }
    Ok(LatentLoo { mean, var })
}

/// Exact LOO of sparse GP regression (VFE/FITC/DTC) at fixed `(θ, σ², Z)` by the rank-one
/// cavity of the module doc, in `O(NM²)`: predictive means and variances of `y_i` (noise
/// included) given the other points, and the LOO log predictive.
pub fn sparse_gp_loo(gp: &SparseGp, x: MatRef<'_, f64>, y: &[f64]) -> Result<LooResult> {
    let post = gp.posterior(x, y)?;
    let Covariance::WhitenedPrecision { chol_kuu, .. } = &post.cov else {
        return Err(Error::Numerical {
            what: "sparse GP leave-one-out",
            message: "the sparse posterior is not in whitened form".into(),
        });
    };
    let marg = post.predict(x)?;
    // Q_ii = ‖L_uu⁻¹ k_u(x_i)‖², column by column, in blocks of rows (memory O(block·M)).
    const ROWS: usize = 4096;
    let mut q = Vec::with_capacity(y.len());
    for lo in (0..x.nrows()).step_by(ROWS) {
        let xb = x.subrows(lo, ROWS.min(x.nrows() - lo));
        let mut w: Mat<f64> = gp.kernel.cross(gp.z.as_ref(), xb)?;
        chol_kuu.solve_lower_in_place(w.as_mut());
        q.extend(crate::linalg::col_sq_norms(&w));
    }
    let kdiag = gp.kernel.diag(x);
    let alpha_s = gp.method.alpha_s();
    let noise = gp.noise_variance;
    let (mut mean, mut var) = (Vec::with_capacity(y.len()), Vec::with_capacity(y.len()));
    for i in 0..y.len() {
        let resid_var = (kdiag[i] - q[i]).max(0.0); // k_ii − Q_ii
        let lambda = noise + alpha_s * resid_var; // Λ_i
        let s = (marg.var[i] - resid_var).max(0.0); // a_iᵀ S a_i
        let keep = 1.0 - s / lambda;
        if !(keep > 0.0) {
            return Err(Error::Numerical {
                what: "sparse GP leave-one-out",
                message: format!("point {i}: projected variance {s:.4e} ≥ Λ_i = {lambda:.4e}"),
            });
        }
        let s_loo = s / keep;
        mean.push(marg.mean[i] - s_loo * (y[i] - marg.mean[i]) / lambda);
        var.push(s_loo + resid_var + noise);
    }
    Ok(LooResult::from_predictive(mean, var, y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::ep::{self, EpConfig};
    use crate::inference::laplace::{self, LaplaceConfig};
    use crate::inference::Problem;
    use crate::kernel::Kernel;
    use crate::likelihood::Likelihood;
    use crate::linalg::{Cholesky, JitterPolicy};

    use super::super::toy_classes as toy;

    /// LOO-EP: the cavities read off the shared posterior (from α and π only) are the ones EP
    /// computes from its own sites and marginals (GPML eq. 3.56).
    #[test]
    fn ep_cavities_are_eps_own() {
        let (x, y) = toy(40);
        let k = Kernel::se_iso(0.8, 2.0);
        let cfg = EpConfig {
            tol: 1e-10,
            ..Default::default()
        };
        let run = ep::run(
            Problem::new(&k, &Likelihood::probit(), x.as_ref(), &y),
            &cfg,
            None,
        )
        .unwrap();
        let own = ep::cavities(&run.sites, &run.post.mu, &run.post.var);
        let (fit, _) = run.into_fit(&k, x.as_ref());
        let cav = site_cavities(&fit.posterior).unwrap();
        for (i, c) in own.iter().enumerate() {
            let (m, v) = c.expect("positive cavity precision");
            assert!((cav.mean[i] - m).abs() < 1e-9 * (1.0 + m.abs()), "mean {i}");
            assert!((cav.var[i] - v).abs() < 1e-9 * v, "variance {i}");
        }
    }

    /// LA-LOO (Vehtari et al. 2016, §3.1) written out densely: `Σ = (K⁻¹ + W)⁻¹` as
    /// `K − K(K + W⁻¹)⁻¹K`, `v_{−i} = 1/(1/Σ_ii − W_i)`, `μ_{−i} = f̂_i − v_{−i} ∇_i ln p`.
    #[test]
    fn laplace_cavities_are_la_loo() {
        let (x, y) = toy(30);
        let k = Kernel::se_iso(0.8, 2.0);
        let lik = Likelihood::Logistic;
        let cfg = LaplaceConfig {
            tol: 1e-14,
            max_iter: 200,
        };
        let mode = laplace::mode(Problem::new(&k, &lik, x.as_ref(), &y), &cfg, None).unwrap();
        let (f, d) = (mode.f.clone(), mode.derivs.clone());
        let kg = k.gram(x.as_ref()).unwrap();
        let fit = mode.into_fit(&k, x.as_ref());
        let cav = site_cavities(&fit.posterior).unwrap();
        // Σ = K − K(K + W⁻¹)⁻¹K (GPML eq. 3.27; the logistic has W > 0).
        let mut c = kg.clone();
        for i in 0..y.len() {
            c[(i, i)] -= 1.0 / d[i].d2;
        }
        let chol = Cholesky::factor(c.as_ref(), &JitterPolicy::none(), "K + W⁻¹").unwrap();
        let sigma = &kg - &kg * chol.solve(kg.as_ref());
        for i in 0..y.len() {
            let v = 1.0 / (1.0 / sigma[(i, i)] + d[i].d2);
            let m = f[i] - v * d[i].d1;
            assert!((cav.var[i] - v).abs() < 1e-7 * v, "variance {i}");
            assert!((cav.mean[i] - m).abs() < 1e-7 * (1.0 + m.abs()), "mean {i}");
        }
    }

    /// The whitened and dense forms have no diagonal sites: a typed error, not a panic.
    #[test]
    fn non_site_forms_are_unsupported() {
        let (x, y) = toy(20);
        let gp = SparseGp {
            kernel: Kernel::se_iso(0.8, 1.0),
            noise_variance: 0.1,
            z: x.subrows(0, 5).to_owned(),
            method: crate::regression::sparse::SparseMethod::Vfe,
        };
        let post = gp.posterior(x.as_ref(), &y).unwrap();
        assert!(matches!(site_cavities(&post), Err(Error::Unsupported(_))));
    }
}
