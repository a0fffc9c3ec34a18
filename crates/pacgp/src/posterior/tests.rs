use super::predict::{block_rows, PREDICT_BLOCK_ROWS};
use super::*;
use crate::inference::laplace::{laplace, LaplaceConfig};
use crate::likelihood::Likelihood;

/// `variance_ratio_bound`: 1 for the site form (a Laplace fit); for a whitened form whose
/// `B` has eigenvalues below 1 (q(u) wider than p(u)) and a dense form with `Σ = 2.5·K_B`,
/// above 1 and never below `v(x)/k(x,x)` on a grid of inputs near and far from the basis,
/// which it reaches at the basis (where `q = k`).
#[test]
fn variance_ratio_bound_holds_everywhere() {
    use crate::linalg::JitterPolicy;
    let (lap, _) = fitted();
    assert_eq!(lap.variance_ratio_bound().unwrap(), 1.0);
    let k = Kernel::se_iso(0.8, 1.7);
    let z = Mat::from_fn(4, 2, |i, j| {
        (i as f64 - 1.5) * if j == 0 { 0.9 } else { 0.4 }
    });
    let kb = k.gram(z.as_ref()).unwrap();
    let chol =
        |m: &Mat<f64>| Cholesky::factor(m.as_ref(), &JitterPolicy::default(), "test").unwrap();
    let b = Mat::from_fn(
        4,
        4,
        |i, j| if i == j { 0.3 + 0.1 * i as f64 } else { 0.02 },
    );
    let whitened =
        GaussianPosterior::whitened(k.clone(), z.clone(), vec![0.1; 4], chol(&kb), chol(&b));
    let sigma = Mat::from_fn(4, 4, |i, j| 2.5 * kb[(i, j)]);
    let dense =
        GaussianPosterior::dense(k.clone(), z.clone(), vec![0.1; 4], chol(&kb), chol(&sigma));
    let x = Mat::from_fn(400, 2, |i, j| {
        ((i * 37 + j * 11) % 97) as f64 / 97.0 * 8.0 - 4.0
    });
    for (q, at_least) in [(whitened, 1.0 / 0.3 * 0.9), (dense, 2.5 - 1e-6)] {
        let kappa = q.variance_ratio_bound().unwrap();
        assert!(kappa > at_least, "{kappa}");
        let m = q.predict(x.as_ref()).unwrap();
        let prior = q.prior.diag(x.as_ref()).unwrap();
        let worst = (0..x.nrows())
            .map(|i| m.var[i] / prior[i])
            .fold(0.0, f64::max);
        assert!(worst <= kappa * (1.0 + 1e-9), "{worst} > {kappa}");
        let at_basis = q.predict(z.as_ref()).unwrap();
        let ratio = (0..4)
            .map(|i| at_basis.var[i] / k.diag(z.as_ref())[i])
            .fold(0.0, f64::max);
        assert!(ratio > 1.0, "{ratio}");
    }
}

/// Predictions in blocks of any number of rows have the bits of one pass over all rows
/// (each row's mean and variance come from its own column; a lone row is paired with its
/// copy), for the site, whitened and dense forms; the block size is [`PREDICT_BLOCK_BYTES`] over `8M`, within 1..=4096.
#[test]
fn predictions_do_not_depend_on_the_block_size() {
    use crate::linalg::JitterPolicy;
    let (site, _) = fitted();
    let k = Kernel::se_iso(0.8, 1.7);
    let z = Mat::from_fn(6, 2, |i, j| {
        (i as f64 - 2.5) * if j == 0 { 0.9 } else { 0.4 }
    });
    let kb = k.gram(z.as_ref()).unwrap();
    let chol =
        |m: &Mat<f64>| Cholesky::factor(m.as_ref(), &JitterPolicy::default(), "test").unwrap();
    let b = Mat::from_fn(
        6,
        6,
        |i, j| if i == j { 1.3 + 0.1 * i as f64 } else { 0.05 },
    );
    let sigma = Mat::from_fn(6, 6, |i, j| 0.5 * kb[(i, j)]);
    let alpha = vec![0.3, -0.1, 0.2, 0.05, -0.4, 0.1];
    let forms = [
        site,
        GaussianPosterior::whitened(k.clone(), z.clone(), alpha.clone(), chol(&kb), chol(&b)),
        GaussianPosterior::dense(k.clone(), z.clone(), alpha, chol(&kb), chol(&sigma)),
    ];
    let x = Mat::from_fn(301, 2, |i, j| {
        ((i * 37 + j * 11) % 97) as f64 / 97.0 * 6.0 - 3.0
    });
    let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
    for q in &forms {
        let whole = q.predict_at(x.as_ref()).unwrap();
        for rows in [1, 7, 64, 300, 301, 5000] {
            let m = q.predict_in_blocks(x.as_ref(), rows).unwrap();
            assert_eq!(bits(&m.mean), bits(&whole.mean), "means, blocks of {rows}");
            assert_eq!(
                bits(&m.var),
                bits(&whole.var),
                "variances, blocks of {rows}"
            );
        }
        let means = q.predict_mean(x.as_ref()).unwrap();
        assert_eq!(bits(&means), bits(&whole.mean));
    }
    // 2²⁶ bytes / (8 · 43 152) = 194.4: an exact GP on the diamonds table's 43 152 rows.
    assert_eq!(block_rows(43_152), 194);
    assert_eq!(block_rows(500), PREDICT_BLOCK_ROWS);
    assert_eq!(block_rows(0), PREDICT_BLOCK_ROWS);
    assert_eq!(block_rows(usize::MAX / 8), 1);
}

/// Marginals against a brute-force dense computation that shares no code with
/// [`GaussianPosterior::predict`]: `μ = k_xBᵀα`, `v = k(x,x) − k_xBᵀ R k_xB` with the
/// M×M matrix `R` formed explicitly by LU solves for each form: site form
/// `R = (K_B + Π⁻¹)⁻¹` (exact GPR: `v = k − kᵀ(K + σ²I)⁻¹k`; a classifier's varying π);
/// whitened `R = L⁻ᵀ(I − B⁻¹)L⁻¹`; dense with `Σ = 0.4K_B + 0.01I`,
/// `R = K_B⁻¹ − K_B⁻¹ΣK_B⁻¹ = 0.6K_B⁻¹ − 0.01K_B⁻²`. Agreement to 1e-10 relative, on
/// 2 050 rows in blocks of 1 025 and one row alone.
#[test]
fn marginals_match_a_dense_brute_force_computation() {
    use crate::linalg::JitterPolicy;
    use faer::linalg::solvers::Solve;
    use rand::{Rng, SeedableRng};
    let (n, d) = (70, 3);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let basis = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0..2.0));
    let x = Mat::from_fn(2050, d, |_, _| rng.gen_range(-2.5..2.5));
    let k = Kernel::se_ard(&[0.6, 0.9, 0.7], 1.3);
    let kb = k.gram(basis.as_ref()).unwrap();
    let eye = Mat::<f64>::identity(n, n);
    let inv = |m: &Mat<f64>| m.partial_piv_lu().solve(&eye);
    let chol =
        |m: &Mat<f64>| Cholesky::factor(m.as_ref(), &JitterPolicy::default(), "test").unwrap();
    let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-0.5..0.5)).collect();
    let site = |pi: Vec<f64>| {
        let s: Vec<f64> = pi.iter().map(|p| p.sqrt()).collect();
        let b = Cholesky::factor_filled(
            n,
            linalg::fill_site_b(&kb, &s, 0.0),
            None,
            &JitterPolicy::default(),
            "B",
        )
        .unwrap();
        let r = inv(&Mat::from_fn(n, n, |i, j| {
            kb[(i, j)] + if i == j { 1.0 / pi[i] } else { 0.0 }
        }));
        let q = GaussianPosterior::sites(k.clone(), basis.clone(), alpha.clone(), s, b);
        (q, r)
    };
    let bw = Mat::from_fn(
        n,
        n,
        |i, j| {
            if i == j {
                1.5 + 0.01 * i as f64
            } else {
                0.01
            }
        },
    );
    let l_inv = inv(&chol(&kb).l().to_owned());
    let whitened_r = l_inv.transpose() * (&eye - inv(&bw)) * &l_inv;
    let kb_inv = inv(&kb);
    let kb_inv2 = &kb_inv * &kb_inv;
    let dense_r = Mat::from_fn(n, n, |i, j| 0.6 * kb_inv[(i, j)] - 0.01 * kb_inv2[(i, j)]);
    let sigma = Mat::from_fn(n, n, |i, j| {
        0.4 * kb[(i, j)] + if i == j { 0.01 } else { 0.0 }
    });
    let forms = [
        site(vec![1.0 / 0.05; n]),
        site((0..n).map(|_| rng.gen_range(0.05..3.0)).collect()),
        (
            GaussianPosterior::whitened(
                k.clone(),
                basis.clone(),
                alpha.clone(),
                chol(&kb),
                chol(&bw),
            ),
            whitened_r,
        ),
        (
            GaussianPosterior::dense(
                k.clone(),
                basis.clone(),
                alpha.clone(),
                chol(&kb),
                chol(&sigma),
            ),
            dense_r,
        ),
    ];
    let kxb = Mat::from_fn(x.nrows(), n, |i, m| k.eval(&row(&x, i), &row(&basis, m)));
    for (form, (q, r)) in forms.iter().enumerate() {
        let rk = r * kxb.transpose();
        let got = q.predict_in_blocks(x.as_ref(), 1025).unwrap();
        let kxx = 1.3; // the SE kernel's k(x, x)
        for i in 0..x.nrows() {
            let mu: f64 = (0..n).map(|m| kxb[(i, m)] * alpha[m]).sum();
            let v = kxx - (0..n).map(|m| kxb[(i, m)] * rk[(m, i)]).sum::<f64>();
            assert!(
                (got.mean[i] - mu).abs() <= 1e-10 * (1.0 + mu.abs()),
                "form {form}, mean {i}"
            );
            assert!(
                (got.var[i] - v.max(0.0)).abs() <= 1e-10 * kxx,
                "form {form}, variance {i}: {} against {v}",
                got.var[i]
            );
        }
        let lone = q.predict(x.subrows(7, 1)).unwrap();
        assert!((lone.var[0] - got.var[7]).abs() <= 1e-12 * kxx);
    }
}

/// Row `i` of `a` as a vector.
fn row(a: &Mat<f64>, i: usize) -> Vec<f64> {
    (0..a.ncols()).map(|j| a[(i, j)]).collect()
}

/// A joint covariance over more test points than memory holds is the typed error, asked
/// for before anything of that size is allocated: N* rows with 8N*² bytes ten times the
/// memory available now (170 000 rows, 1.4 MB of inputs, on a machine with 21 GB free).
#[test]
fn a_covariance_too_large_for_memory_is_a_typed_error() {
    let Some(available) = crate::memory::available_memory() else {
        return; // no MemAvailable to check against (not Linux): the allocator decides
    };
    let (post, _) = fitted();
    let n_star = (10.0 * available as f64 / 8.0).sqrt().ceil() as usize;
    let x = Mat::from_fn(n_star, 2, |i, j| ((i + j) % 13) as f64 / 6.0 - 1.0);
    match post.covariance(x.as_ref(), x.as_ref()) {
        Err(Error::OutOfMemory {
            rows,
            cols,
            bytes: Some(b),
            ..
        }) => {
            assert_eq!((rows, cols), (n_star, n_star));
            assert!(
                b >= 10 * available,
                "{b} bytes against {available} available"
            );
        }
        other => panic!("{:?}", other.map(|c| c.nrows())),
    }
    // Marginal predictions at the same rows go in blocks and need no such matrix.
    let m = post.predict(x.as_ref()).unwrap();
    assert_eq!(m.mean.len(), n_star);
}

fn fitted() -> (GaussianPosterior, Mat<f64>) {
    let n = 40;
    let x = Mat::from_fn(n, 2, |i, j| ((i * 7 + j * 3) % 13) as f64 / 6.0 - 1.0);
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if x[(i, 0)] + 0.5 * x[(i, 1)] > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let k = Kernel::se_iso(0.8, 2.0);
    let fit = laplace(
        &k,
        &Likelihood::probit(),
        x.as_ref(),
        &y,
        &LaplaceConfig::default(),
    )
    .unwrap();
    (fit.posterior, x)
}

/// The site form is written without its factor and refactored on load: predictions and
/// KL agree to round-off, and a file that still holds `chol_b` reads the same.
#[test]
fn site_posterior_round_trips_without_its_factor() {
    let (post, x) = fitted();
    let json = serde_json::to_string(&post).unwrap();
    assert!(!json.contains("chol_b"), "the N×N factor is not stored");
    let back: GaussianPosterior = serde_json::from_str(&json).unwrap();
    let (a, b) = (
        post.predict(x.as_ref()).unwrap(),
        back.predict(x.as_ref()).unwrap(),
    );
    for i in 0..x.nrows() {
        assert!((a.mean[i] - b.mean[i]).abs() < 1e-12);
        assert!((a.var[i] - b.var[i]).abs() < 1e-12);
    }
    assert!((post.kl_to_prior().unwrap() - back.kl_to_prior().unwrap()).abs() < 1e-10);
    // The older layout with the factor inline.
    let Covariance::Sites { sqrt_pi, chol_b } = post.cov.clone() else {
        panic!("Laplace gives the site form")
    };
    let old = file::PosteriorFile {
        prior: None,
        kernel: Some(post.kernel().clone()),
        basis: post.basis.clone(),
        alpha: post.alpha.clone(),
        cov: file::CovarianceFile::Sites {
            sqrt_pi,
            chol_b: Some(chol_b),
            jitter: 0.0,
        },
    };
    let old: GaussianPosterior =
        serde_json::from_str(&serde_json::to_string(&old).unwrap()).unwrap();
    assert!((old.kl_to_prior().unwrap() - post.kl_to_prior().unwrap()).abs() < 1e-12);
    // A file whose sizes disagree is an error, not a panic.
    let bad = json.replacen("\"alpha\":[", "\"alpha\":[0.5,", 1);
    assert!(serde_json::from_str::<GaussianPosterior>(&bad).is_err());
}
