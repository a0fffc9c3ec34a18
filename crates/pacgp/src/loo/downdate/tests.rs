//! Tests of the leave-one-out downdate: against refits without the point or group, the
//! closed forms at the training inputs, and the rank-one form for groups of one.

use super::*;
use crate::inference::ep::{self, EpConfig};
use crate::inference::laplace::{self, LaplaceConfig};
use crate::inference::{ClassifierFit, Problem};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{Cholesky, JitterPolicy};

use crate::loo::toy_classes as toy;

/// Laplace (logistic) and EP (probit) fits of the toy set.
fn fits(x: &Mat<f64>, y: &[f64]) -> Vec<(&'static str, ClassifierFit)> {
    let k = Kernel::se_iso(0.8, 2.0);
    let cfg = LaplaceConfig {
        tol: 1e-14,
        max_iter: 200,
    };
    let mode = laplace::mode(
        Problem::new(&k, &Likelihood::Logistic, x.as_ref(), y),
        &cfg,
        None,
    )
    .unwrap();
    let la = mode.into_fit(&k, x.as_ref());
    let cfg = EpConfig {
        tol: 1e-10,
        ..Default::default()
    };
    let run = ep::run(
        Problem::new(&k, &Likelihood::probit(), x.as_ref(), y),
        &cfg,
        None,
    )
    .unwrap();
    let (ep, _) = run.into_fit(&k, x.as_ref());
    vec![("laplace", la), ("ep", ep)]
}

/// At the training inputs the downdate is the cavity LOO of [`super::super::cavity`].
#[test]
fn sites_at_training_inputs_are_the_cavities() {
    let (x, y) = toy(30);
    for (name, fit) in fits(&x, &y) {
        let cav = crate::loo::site_cavities(&fit.posterior).unwrap();
        let d = LooDowndate::sites(&fit.posterior).unwrap();
        let at = d.at(fit.posterior.basis.as_ref()).unwrap();
        for i in 0..y.len() {
            let (m, v) = (at.mean[(i, i)], at.var[(i, i)]);
            assert!(
                (m - cav.mean[i]).abs() < 1e-9 * (1.0 + m.abs()),
                "{name} mean {i}"
            );
            assert!((v - cav.var[i]).abs() < 1e-9 * v, "{name} variance {i}");
        }
    }
}

/// At new inputs the downdate is the site-form posterior recomputed densely without site
/// i: GP regression of the other pseudo-targets `ỹ_j = ν̃_j/π_j` with noise `1/π_j`,
/// `μ_{−i}(x) = k_{−i}(x)ᵀ(K_{−i} + Π_{−i}⁻¹)⁻¹ỹ_{−i}` and
/// `v_{−i}(x) = k(x, x) − k_{−i}(x)ᵀ(K_{−i} + Π_{−i}⁻¹)⁻¹k_{−i}(x)`.
#[test]
fn sites_at_new_inputs_match_the_posterior_without_site_i() {
    let (x, y) = toy(24);
    let xs = Mat::from_fn(7, 2, |j, c| 0.3 * j as f64 - 0.9 + 0.4 * c as f64);
    for (name, fit) in fits(&x, &y) {
        let post = &fit.posterior;
        let Covariance::Sites { sqrt_pi, .. } = &post.cov else {
            panic!("{name}: not a site form")
        };
        let kern = post.kernel();
        let kg = kern.gram(x.as_ref()).unwrap();
        let mu = crate::linalg::mat_vec(&kg, &post.alpha);
        let pi: Vec<f64> = sqrt_pi.iter().map(|s| s * s).collect();
        let pseudo: Vec<f64> = (0..y.len())
            .map(|j| (post.alpha[j] + pi[j] * mu[j]) / pi[j])
            .collect();
        let at = LooDowndate::sites(post).unwrap().at(xs.as_ref()).unwrap();
        let kxs = kern.cross(x.as_ref(), xs.as_ref()).unwrap();
        let kss = kern.diag(xs.as_ref());
        for i in 0..y.len() {
            let rest: Vec<usize> = (0..y.len()).filter(|&j| j != i).collect();
            let c = Mat::from_fn(rest.len(), rest.len(), |a, b| {
                kg[(rest[a], rest[b])] + if a == b { 1.0 / pi[rest[a]] } else { 0.0 }
            });
            let chol = Cholesky::factor(c.as_ref(), &JitterPolicy::none(), "K + Π⁻¹").unwrap();
            let yr: Vec<f64> = rest.iter().map(|&j| pseudo[j]).collect();
            let w = chol.solve_vec(&yr);
            let kr = Mat::from_fn(rest.len(), xs.nrows(), |a, t| kxs[(rest[a], t)]);
            let sol = chol.solve(kr.as_ref());
            for t in 0..xs.nrows() {
                let kcol: Vec<f64> = (0..rest.len()).map(|a| kr[(a, t)]).collect();
                let m = crate::linalg::dot(&kcol, &w);
                let scol: Vec<f64> = (0..rest.len()).map(|a| sol[(a, t)]).collect();
                let v = kss[t] - crate::linalg::dot(&kcol, &scol);
                let (gm, gv) = (at.mean[(i, t)], at.var[(i, t)]);
                assert!(
                    (gm - m).abs() < 1e-7 * (1.0 + m.abs()),
                    "{name} mean {i},{t}: {gm} {m}"
                );
                assert!(
                    (gv - v).abs() < 1e-7 * (1.0 + v),
                    "{name} variance {i},{t}: {gv} {v}"
                );
            }
        }
    }
}

/// The site form's cross-covariance as first written, with `K`:
/// `c(x) = k(X, x) − KΠ½B⁻¹Π½k(X, x)` (the `N²·N*` product the stored-factor form avoids).
fn cross_cov_with_gram(post: &GaussianPosterior, xs: MatRef<'_, f64>) -> Mat<f64> {
    let Covariance::Sites { sqrt_pi, chol_b } = &post.cov else {
        panic!("not a site form")
    };
    let k = post.kernel().gram(post.basis.as_ref()).unwrap();
    let kx = post.kernel().cross(post.basis.as_ref(), xs).unwrap();
    let mut t = Mat::from_fn(kx.nrows(), kx.ncols(), |i, j| sqrt_pi[i] * kx[(i, j)]);
    chol_b.solve_in_place(t.as_mut());
    let t = Mat::from_fn(t.nrows(), t.ncols(), |i, j| sqrt_pi[i] * t[(i, j)]);
    kx - &k * &t
}

/// A site-form posterior over `n` random 3-d inputs with random sites: `π_i` spread over
/// eight decades (1e-6 … 1e2, as a Laplace mode's curvatures at large margins and EP's
/// sharp sites), random `α`.
fn random_sites(n: usize, seed: u64) -> GaussianPosterior {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 3, |_, _| rng.gen_range(-2.0..2.0));
    let kern = Kernel::se_iso(0.9, 1.7);
    let sqrt_pi: Vec<f64> = (0..n)
        .map(|_| (0.5 * rng.gen_range(-6.0..2.0) * std::f64::consts::LN_10).exp())
        .collect();
    let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let k = kern.gram(x.as_ref()).unwrap();
    let b = Mat::from_fn(n, n, |i, j| {
        sqrt_pi[i] * k[(i, j)] * sqrt_pi[j] + if i == j { 1.0 } else { 0.0 }
    });
    let chol = Cholesky::factor(b.as_ref(), &JitterPolicy::none(), "B").unwrap();
    GaussianPosterior::sites(kern, x, alpha, sqrt_pi, chol)
}

/// `c(x) = Π^{−½}B⁻¹Π½k(X, x)` from the stored factor is `k(X, x) − KΠ½B⁻¹Π½k(X, x)` to
/// 1e-10 of `1 + |c|`, on random sites and on the Laplace and EP fits, at new inputs and at
/// the training inputs.
#[test]
fn site_cross_cov_without_k_matches_the_form_with_k() {
    let (x, y) = toy(30);
    let mut posts: Vec<(String, GaussianPosterior)> = fits(&x, &y)
        .into_iter()
        .map(|(name, fit)| (name.to_string(), fit.posterior))
        .collect();
    for seed in 0..4 {
        posts.push((
            format!("random {seed}"),
            random_sites(40 + 7 * seed as usize, seed),
        ));
    }
    for (name, post) in &posts {
        let d = post.basis.ncols();
        let xs = Mat::from_fn(9, d, |j, c| 0.35 * j as f64 - 1.4 + 0.3 * c as f64);
        let d = LooDowndate::sites(post).unwrap();
        for at in [xs.as_ref(), post.basis.as_ref()] {
            let (new, old) = (d.cross_cov(at).unwrap(), cross_cov_with_gram(post, at));
            for i in 0..new.nrows() {
                for j in 0..new.ncols() {
                    let (a, b) = (new[(i, j)], old[(i, j)]);
                    assert!(
                        (a - b).abs() <= 1e-10 * (1.0 + b.abs()),
                        "{name} ({i}, {j}): {a} {b}"
                    );
                }
            }
        }
    }
}

/// [`LooDowndate::check_sites`] refuses what [`LooDowndate::sites`] refuses for want of
/// sites (another form, a site of precision 0) and passes the fits it builds.
#[test]
fn check_sites_agrees_with_sites() {
    let (x, y) = toy(20);
    for (name, fit) in fits(&x, &y) {
        LooDowndate::check_sites(&fit.posterior).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let mut post = random_sites(12, 7);
    if let Covariance::Sites { sqrt_pi, .. } = &mut post.cov {
        sqrt_pi[5] = 0.0;
    }
    for e in [
        LooDowndate::check_sites(&post).unwrap_err(),
        LooDowndate::sites(&post).unwrap_err(),
    ] {
        assert!(matches!(e, Error::Numerical { .. }), "{e}");
        assert!(e.to_string().contains("entry 5"), "{e}");
    }
}

/// [`LooDowndate::check_exact`] passes what [`LooDowndate::exact_by_groups`] builds and
/// refuses what it refuses for want of an exact GP's sites (another noise, a site of
/// precision 0, a bad group).
#[test]
fn check_exact_agrees_with_exact_by_groups() {
    let (x, y) = toy(16);
    let noise = 0.3;
    let gp = crate::regression::exact::ExactGp::fit(
        Kernel::se_iso(0.8, 1.0),
        noise,
        x.clone(),
        y.clone(),
        &JitterPolicy::none(),
    )
    .unwrap();
    let post = gp.posterior().unwrap();
    let groups = vec![vec![2, 7], vec![3, 4, 11]];
    LooDowndate::exact_by_groups(&post, noise, &groups).unwrap();
    LooDowndate::check_exact(&post, noise, &groups).unwrap();
    let bad_groups = [
        vec![vec![2]],
        vec![vec![2, 7], vec![7, 9]],
        vec![vec![1, 16]],
    ];
    for g in &bad_groups {
        assert!(LooDowndate::exact_by_groups(&post, noise, g).is_err());
        assert!(LooDowndate::check_exact(&post, noise, g).is_err());
    }
    // A noise above the rows' λ_i (the site form of another σ²), or not finite.
    for other in [2.0 * noise, f64::NAN, -1.0] {
        let (full, cheap) = (
            LooDowndate::exact_by_groups(&post, other, &[]).unwrap_err(),
            LooDowndate::check_exact(&post, other, &[]).unwrap_err(),
        );
        assert_eq!(full.to_string(), cheap.to_string());
    }
    let mut zero = post.clone();
    if let Covariance::Sites { sqrt_pi, .. } = &mut zero.cov {
        sqrt_pi[5] = 0.0;
    }
    assert!(LooDowndate::exact_by_groups(&zero, noise, &[]).is_err());
    assert!(LooDowndate::check_exact(&zero, noise, &[]).is_err());
    // A classifier's sites read as an exact GP's with known variances λ_i = 1/π_i ≥ σ²
    // (both accept), not with a σ² above them (both refuse).
    let (_, fit) = fits(&x, &y).remove(0);
    for (sigma2, applies) in [(noise, true), (1e3, false)] {
        let full = LooDowndate::exact_by_groups(&fit.posterior, sigma2, &[]).is_ok();
        let cheap = LooDowndate::check_exact(&fit.posterior, sigma2, &[]).is_ok();
        assert_eq!((full, cheap), (applies, applies), "σ² = {sigma2}");
    }
}

/// The cavities [`LooDowndate::sites_with_cavities`] hands over are
/// [`super::super::site_cavities`]'s, to the bit.
#[test]
fn handed_over_cavities_are_the_cavities() {
    let post = random_sites(25, 3);
    let (_, cav) = LooDowndate::sites_with_cavities(&post).unwrap();
    assert_eq!(cav, crate::loo::site_cavities(&post).unwrap());
}

/// A whitened (sparse regression) posterior has no sites: a typed error, not a panic.
#[test]
fn sites_refuse_other_forms() {
    let (x, y) = toy(12);
    let gp = crate::regression::sparse::SparseGp {
        kernel: Kernel::se_iso(0.8, 1.0),
        noise_variance: 0.1,
        z: x.subrows(0, 4).to_owned(),
        method: crate::regression::sparse::SparseMethod::Vfe,
    };
    let post = gp.posterior(x.as_ref(), &y).unwrap();
    assert!(matches!(
        LooDowndate::sites(&post),
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(
        LooDowndate::check_sites(&post),
        Err(Error::Unsupported(_))
    ));
}
