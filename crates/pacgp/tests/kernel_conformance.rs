//! One conformance suite for every kernel: symmetry, positive semi-definiteness,
//! diag == diag(gram), gram == cross(X, X), fast paths == pairwise evaluation, θ and serde
//! round-trips, and central finite differences for θ- and input-gradients (proptest over θ).

use faer::Mat;
use pacgp::gradcheck::{
    assert_gradient_close, assert_gradients_close, central_difference_gradient, Tolerance,
};
use pacgp::kernel::{Kernel, Profile};
use pacgp::linalg::{Cholesky, JitterPolicy};
use proptest::prelude::*;

const D: usize = 3;

fn all_kernels() -> Vec<(&'static str, Kernel)> {
    let profiles = [
        ("se", Profile::SquaredExponential),
        ("m12", Profile::Matern12),
        ("m32", Profile::Matern32),
        ("m52", Profile::Matern52),
    ];
    let mut out = Vec::new();
    for (name, p) in profiles {
        out.push((name, Kernel::stationary(p, &[0.9], 1.4)));
        out.push((name, Kernel::stationary(p, &[0.7, 1.3, 2.1], 0.8)));
        out.push((
            name,
            Kernel::Stationary {
                profile: p,
                ln_lengthscale: vec![0.1, -0.2, 0.3],
                groups: None,
            },
        ));
    }
    out.push((
        "linear",
        Kernel::Linear {
            ln_variance: vec![0.3],
        },
    ));
    out.push((
        "linear-ard",
        Kernel::Linear {
            ln_variance: vec![0.3, -0.5, 0.1],
        },
    ));
    out.push(("poly3", Kernel::from_spec("poly3", D).unwrap()));
    out.push(("const", Kernel::Constant { ln_variance: -0.4 }));
    out.push(("sum", Kernel::from_spec("se-ard + linear", D).unwrap()));
    out.push((
        "product",
        Kernel::from_spec("matern32 * poly2 + const", D).unwrap(),
    ));
    // A constant term on either side (added in place; the certified SVM's prior is `se + const`).
    out.push(("se+const", Kernel::from_spec("se + const", D).unwrap()));
    out.push((
        "const+se-ard",
        Kernel::from_spec("const + se-ard", D).unwrap(),
    ));
    // Lengthscales tied over groups of inputs (the one-hot inputs of one table column).
    for (name, spec, theta) in [
        ("se-groups", "se-groups(1,2)", [0.3, -0.4, 0.5]),
        ("matern32-groups", "matern32-groups(2,1)", [-0.2, 0.6, -0.1]),
    ] {
        let mut k = Kernel::from_spec(spec, D).unwrap();
        k.set_params(&theta).unwrap();
        out.push((name, k));
    }
    out
}

fn inputs(n: usize, shift: f64) -> Mat<f64> {
    Mat::from_fn(n, D, |i, j| {
        ((i * 7 + j * 5) % 13) as f64 / 6.5 - 1.0 + shift * (j as f64 + 1.0)
    })
}

/// Pairwise reference built from `eval` only.
fn reference(k: &Kernel, x: &Mat<f64>, z: &Mat<f64>) -> Mat<f64> {
    let row = |m: &Mat<f64>, i: usize| (0..D).map(|j| m[(i, j)]).collect::<Vec<_>>();
    Mat::from_fn(x.nrows(), z.nrows(), |i, j| k.eval(&row(x, i), &row(z, j)))
}

fn weights(n: usize, m: usize) -> Mat<f64> {
    Mat::from_fn(n, m, |i, j| ((i * 3 + j * 11) % 7) as f64 / 7.0 - 0.4)
}

fn sum_prod(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let mut s = 0.0;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            s += a[(i, j)] * b[(i, j)];
        }
    }
    s
}

#[test]
fn structural_properties_hold_for_every_kernel() {
    let x = inputs(12, 0.0);
    let z = inputs(5, 0.3);
    for (name, k) in all_kernels() {
        k.check_input_dim(D).unwrap();
        let g = k.gram(x.as_ref()).unwrap();
        let r = reference(&k, &x, &x);
        let c = k.cross(x.as_ref(), z.as_ref()).unwrap();
        let rc = reference(&k, &x, &z);
        let diag = k.diag(x.as_ref());
        for i in 0..12 {
            assert!((diag[i] - g[(i, i)]).abs() < 1e-12, "{name}: diag");
            for j in 0..12 {
                assert!((g[(i, j)] - g[(j, i)]).abs() < 1e-14, "{name}: symmetry");
                assert!(
                    (g[(i, j)] - r[(i, j)]).abs() < 1e-12,
                    "{name}: gram vs eval"
                );
            }
            for j in 0..5 {
                assert!(
                    (c[(i, j)] - rc[(i, j)]).abs() < 1e-12,
                    "{name}: cross vs eval"
                );
            }
        }
        // PSD: factorises with at most a tiny relative jitter.
        let ch = Cholesky::factor(
            g.as_ref(),
            &JitterPolicy {
                initial: 1e-10,
                factor: 10.0,
                max_tries: 3,
            },
            "K",
        );
        assert!(ch.is_ok(), "{name}: not PSD");
        // θ round trip, names, serde.
        let th = k.params();
        assert_eq!(th.len(), k.n_params());
        assert_eq!(k.param_names().len(), th.len(), "{name}: names");
        let mut k2 = k.clone();
        k2.set_params(&th).unwrap();
        assert_eq!(k2, k);
        let back: Kernel = serde_json::from_str(&serde_json::to_string(&k).unwrap()).unwrap();
        assert_eq!(back, k, "{name}: serde");
        assert!(k2.set_params(&vec![0.0; th.len() + 1]).is_err());
        assert!(!k.describe().is_empty());
    }
}

/// Central differences of `Σ G ∘ K(θ)` in every θ against `cross_grad_contract`.
/// h = 1e-6 in ln space; tolerance 1e-6 relative (truncation O(h²), rounding ~1e-10).
fn check_theta_gradient(k: &Kernel, name: &str) {
    let x = inputs(9, 0.0);
    let z = inputs(4, 0.2);
    let gw = weights(9, 4);
    let gs = weights(9, 9);
    let analytic = k.cross_grad_contract(x.as_ref(), z.as_ref(), gw.as_ref());
    let analytic_sym = k.gram_grad_contract(x.as_ref(), gs.as_ref());
    // The symmetric fast path (lower triangle only) equals the general one on G + Gᵀ.
    let g2 = &gs + gs.transpose();
    let (general, lower) = (
        k.gram_grad_contract(x.as_ref(), g2.as_ref()),
        k.gram_grad_contract_symmetric(x.as_ref(), g2.as_ref(), None),
    );
    // With the Gram matrix supplied, k and its slope are read from it, not recomputed.
    let gram = k.gram(x.as_ref()).unwrap();
    let reused = k.gram_grad_contract_symmetric(x.as_ref(), g2.as_ref(), Some(gram.as_ref()));
    for (p, ((a, b), c)) in general.iter().zip(&lower).zip(&reused).enumerate() {
        assert!(
            (a - b).abs() <= 1e-12 * (1.0 + a.abs()),
            "{name} θ[{p}]: symmetric path"
        );
        assert!(
            (a - c).abs() <= 1e-12 * (1.0 + a.abs()),
            "{name} θ[{p}]: Gram reused"
        );
    }
    let explicit = k.gram_grad(x.as_ref());
    let th = k.params();
    let at = |t: &[f64]| {
        let mut kk = k.clone();
        kk.set_params(t).unwrap();
        kk
    };
    let cross = |t: &[f64]| sum_prod(&gw, &at(t).cross(x.as_ref(), z.as_ref()).unwrap());
    let gram = |t: &[f64]| sum_prod(&gs, &at(t).gram(x.as_ref()).unwrap());
    let (h, tol) = (1e-6, Tolerance::mixed(1e-6));
    assert_gradient_close(cross, &th, &analytic, h, tol, &format!("{name} θ"));
    let fd_sym = central_difference_gradient(gram, &th, h);
    assert_gradients_close(&analytic_sym, &fd_sym, tol, &format!("{name} θ (gram)"));
    for p in 0..th.len() {
        assert!(
            (sum_prod(&gs, &explicit[p]) - analytic_sym[p]).abs() <= 1e-9 * (1.0 + fd_sym[p].abs()),
            "{name} gram_grad"
        );
    }
}

/// Central differences in the inputs Z against `cross_grad_z` and `gram_grad_z`.
fn check_input_gradient(k: &Kernel, name: &str) {
    let x = inputs(7, 0.0);
    let z = inputs(4, 0.25);
    let gw = weights(7, 4);
    let gz = weights(4, 4);
    let dz = k.cross_grad_z(x.as_ref(), z.as_ref(), gw.as_ref());
    let dzz = k.gram_grad_z(z.as_ref(), gz.as_ref());
    // Z flattened row-major: coordinate m·D + t is z[m, t].
    let (z0, dz, dzz) = (flatten(&z), flatten(&dz), flatten(&dzz));
    let cross = |zf: &[f64]| {
        sum_prod(
            &gw,
            &k.cross(x.as_ref(), unflatten(zf, 4).as_ref()).unwrap(),
        )
    };
    let gram = |zf: &[f64]| sum_prod(&gz, &k.gram(unflatten(zf, 4).as_ref()).unwrap());
    let (h, tol) = (1e-6, Tolerance::mixed(1e-6));
    assert_gradient_close(cross, &z0, &dz, h, tol, &format!("{name} ∂/∂z[m·D + t]"));
    assert_gradient_close(
        gram,
        &z0,
        &dzz,
        h,
        tol,
        &format!("{name} ∂K_zz/∂z[m·D + t]"),
    );
}

/// Row-major entries of an M×D matrix.
fn flatten(a: &Mat<f64>) -> Vec<f64> {
    (0..a.nrows())
        .flat_map(|m| (0..a.ncols()).map(move |t| a[(m, t)]))
        .collect()
}

/// The M×D matrix whose row-major entries are `v`.
fn unflatten(v: &[f64], m: usize) -> Mat<f64> {
    let d = v.len() / m;
    Mat::from_fn(m, d, |i, t| v[i * d + t])
}

#[test]
fn gradients_match_finite_differences_for_every_kernel() {
    for (name, k) in all_kernels() {
        check_theta_gradient(&k, name);
        // Matérn 1/2 is not differentiable at coincident inputs; off-diagonal pairs are fine.
        check_input_gradient(&k, name);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn theta_gradients_hold_across_hyperparameters(a in -1.5f64..1.5, b in -1.5f64..1.5, c in -1.0f64..1.0, which in 0usize..4) {
        let profile = [Profile::SquaredExponential, Profile::Matern12, Profile::Matern32, Profile::Matern52][which];
        let k = Kernel::Scale {
            ln_variance: c,
            inner: Box::new(Kernel::Stationary { profile, ln_lengthscale: vec![a, b, 0.5 * (a - b)], groups: None }),
        };
        check_theta_gradient(&k, "proptest stationary");
        let k = Kernel::Sum {
            left: Box::new(k),
            right: Box::new(Kernel::Linear { ln_variance: vec![c, a, b] }),
        };
        check_theta_gradient(&k, "proptest sum");
    }
}

#[test]
fn spec_parser_builds_and_rejects() {
    let k = Kernel::from_spec("se-ard", 4).unwrap();
    assert_eq!(k, Kernel::se_ard(&[1.0; 4], 1.0));
    assert_eq!(
        Kernel::from_spec("matern52 + const", 2).unwrap().n_params(),
        3
    );
    assert_eq!(
        Kernel::from_spec("linear-ard * se", 3).unwrap().n_params(),
        5
    );
    for bad in [
        "",
        "foo",
        "poly",
        "poly0",
        "se+",
        "const-ard",
        "se-groups(1,2)",
        "se-groups(1,0,3)",
        "se-groups(1,x)",
        "se-groups(4",
        "linear-groups(4)",
    ] {
        assert!(
            matches!(
                Kernel::from_spec(bad, 2),
                Err(pacgp::Error::InvalidSpec { .. })
            ),
            "{bad}"
        );
    }
    assert!(Kernel::se_ard(&[1.0; 3], 1.0).check_input_dim(2).is_err());
}

/// `cross_adjoint` (one pass over K(Z, X), reusing it) against central differences of
/// `Σ G ∘ K(Z, X)` in every θ and every z_mt; h = 1e-6, tolerance 1e-6 relative as above.
fn check_cross_adjoint(k: &Kernel, name: &str) {
    let x = inputs(9, 0.0);
    let z = inputs(4, 0.2);
    let g = weights(4, 9);
    let (theta, dz) = k.cross_adjoint(
        z.as_ref(),
        x.as_ref(),
        k.cross(z.as_ref(), x.as_ref()).unwrap(),
        &g,
    );
    let th = k.params();
    let (h, tol) = (1e-6, Tolerance::mixed(1e-6));
    let in_theta = |t: &[f64]| {
        let mut kk = k.clone();
        kk.set_params(t).unwrap();
        sum_prod(&g, &kk.cross(z.as_ref(), x.as_ref()).unwrap())
    };
    assert_gradient_close(in_theta, &th, &theta, h, tol, &format!("{name} adjoint θ"));
    let in_z = |zf: &[f64]| sum_prod(&g, &k.cross(unflatten(zf, 4).as_ref(), x.as_ref()).unwrap());
    let what = format!("{name} adjoint z[m·D + t]");
    assert_gradient_close(in_z, &flatten(&z), &flatten(&dz), h, tol, &what);
}

#[test]
fn cross_adjoint_matches_finite_differences_for_every_kernel() {
    for (name, k) in all_kernels() {
        check_cross_adjoint(&k, name);
    }
}

/// Above `PRODUCT_DISTANCE_INPUTS` inputs the stationary matrices take their squared distances
/// from one product (`‖a‖² + ‖b‖² − 2a·b`): every profile's Gram and cross matrices equal the
/// pairwise evaluation to 1e-12 (a copied row's entry too), and the Gram matrix is symmetric
/// with `k(x, x)` exactly on its diagonal.
#[test]
fn wide_inputs_give_the_pairwise_matrices_by_one_product() {
    use pacgp::kernel::PRODUCT_DISTANCE_INPUTS;
    let d = PRODUCT_DISTANCE_INPUTS + 5;
    let wide = |n: usize, shift: f64| {
        Mat::from_fn(n, d, |i, j| {
            ((i * 7 + j * 5) % 13) as f64 / 6.5 - 1.0 + shift * (j % 4) as f64 + 3.0
        })
    };
    let mut x = wide(14, 0.0);
    for j in 0..d {
        x[(13, j)] = x[(2, j)];
    }
    let z = wide(6, 0.2);
    let row = |m: &Mat<f64>, i: usize| (0..d).map(|j| m[(i, j)]).collect::<Vec<_>>();
    for p in [
        Profile::SquaredExponential,
        Profile::Matern12,
        Profile::Matern32,
        Profile::Matern52,
    ] {
        let ls: Vec<f64> = (0..d).map(|t| 1.5 + 0.1 * t as f64).collect();
        let k = Kernel::stationary(p, &ls, 1.3);
        let g = k.gram(x.as_ref()).unwrap();
        let c = k.cross(x.as_ref(), z.as_ref()).unwrap();
        for i in 0..14 {
            assert_eq!(
                g[(i, i)],
                k.eval(&row(&x, i), &row(&x, i)),
                "{p:?}: diagonal"
            );
            for j in 0..14 {
                assert_eq!(g[(i, j)], g[(j, i)], "{p:?}: symmetry");
                let want = k.eval(&row(&x, i), &row(&x, j));
                assert!((g[(i, j)] - want).abs() < 1e-12, "{p:?}: gram {i} {j}");
            }
            for j in 0..6 {
                let want = k.eval(&row(&x, i), &row(&z, j));
                assert!((c[(i, j)] - want).abs() < 1e-12, "{p:?}: cross");
            }
        }
        assert!((g[(13, 2)] - g[(2, 2)]).abs() < 1e-12, "{p:?}: a copy");
    }
}
