//! Sparse GP regression: objectives against dense N×N formulas, finite-difference gradients
//! in θ, ln σ² and Z, and the reduction to exact GP regression when Z = X.

use faer::Mat;
use pacgp::gradcheck::{assert_objective_gradient, Tolerance};
use pacgp::kernel::Kernel;
use pacgp::linalg::{Cholesky, JitterPolicy};
use pacgp::regression::exact::ExactGp;
use pacgp::regression::sparse::{
    train_sparse, NegSparseObjective, SparseConfig, SparseGp, SparseMethod, KUU_JITTER,
};

mod common;
use common::toy_sine as toy;

fn inducing() -> Mat<f64> {
    Mat::from_fn(5, 2, |a, t| -1.5 + 0.7 * a as f64 + 0.3 * t as f64)
}

fn ln_gauss(y: &[f64], cov: &Mat<f64>) -> f64 {
    let c = Cholesky::factor(cov.as_ref(), &JitterPolicy::none(), "cov").unwrap();
    let a = c.solve_vec(y);
    let q: f64 = y.iter().zip(&a).map(|(p, q)| p * q).sum();
    -0.5 * q - 0.5 * c.ln_det() - 0.5 * y.len() as f64 * (2.0 * std::f64::consts::PI).ln()
}

/// docs/math.md §3.3 written densely: Q_ff = K_fu (K_uu + jitter)⁻¹ K_uf.
#[test]
fn objectives_match_dense_formulas() {
    let (x, y) = toy(30);
    let z = inducing();
    let k = Kernel::se_ard(&[0.8, 1.3], 1.4);
    let noise = 0.05;
    let mut kuu = k.gram(z.as_ref()).unwrap();
    for a in 0..5 {
        kuu[(a, a)] += KUU_JITTER;
    }
    let kuu_inv = Cholesky::factor(kuu.as_ref(), &JitterPolicy::none(), "Kuu")
        .unwrap()
        .inverse()
        .unwrap();
    let kfu = k.cross(x.as_ref(), z.as_ref()).unwrap();
    let q = &(&kfu * &kuu_inv) * kfu.transpose();
    let kff = k.gram(x.as_ref()).unwrap();
    let gap: Vec<f64> = (0..30).map(|i| kff[(i, i)] - q[(i, i)]).collect();
    let with = |extra: &dyn Fn(usize) -> f64| {
        Mat::from_fn(30, 30, |i, j| {
            q[(i, j)] + if i == j { noise + extra(i) } else { 0.0 }
        })
    };
    let dtc = ln_gauss(&y, &with(&|_| 0.0));
    let fitc = ln_gauss(&y, &with(&|i| gap[i]));
    let vfe = dtc - gap.iter().sum::<f64>() / (2.0 * noise);
    for (method, want) in [
        (SparseMethod::Dtc, dtc),
        (SparseMethod::Fitc, fitc),
        (SparseMethod::Vfe, vfe),
    ] {
        let gp = SparseGp {
            kernel: k.clone(),
            noise_variance: noise,
            z: z.clone(),
            method,
        };
        let got = gp.objective(x.as_ref(), &y).unwrap();
        assert!(
            (got - want).abs() < 1e-8 * want.abs().max(1.0),
            "{method:?}: {got} vs {want}"
        );
    }
}

#[test]
fn gradients_match_central_differences() {
    let (x, y) = toy(25);
    let z = inducing();
    let k = Kernel::se_ard(&[0.8, 1.3], 1.4);
    for method in [SparseMethod::Vfe, SparseMethod::Fitc, SparseMethod::Dtc] {
        let obj = NegSparseObjective::new(&k, method, x.as_ref(), &y, 5);
        let p = NegSparseObjective::pack(&k, 0.05, z.as_ref());
        // h = 1e-6; the objective is O(10), so rounding ≈ 1e-9 and truncation ≈ 1e-11.
        assert_objective_gradient(
            &obj,
            &p,
            1e-6,
            Tolerance::mixed(1e-5),
            &format!("{method:?}"),
        );
    }
}

/// With Z = X every method reduces to exact GP regression (up to the 1e-6 jitter on K_uu).
#[test]
fn inducing_at_the_training_inputs_reproduces_exact_regression() {
    let (x, y) = toy(20);
    let k = Kernel::se_ard(&[0.8, 1.3], 1.4);
    let exact = ExactGp::fit(k.clone(), 0.1, x.clone(), y.clone(), &JitterPolicy::none()).unwrap();
    let (xs, _) = toy(7);
    let xs = Mat::from_fn(7, 2, |i, j| 0.9 * xs[(i, j)] + 0.05);
    let want = exact.predict(xs.as_ref()).unwrap();
    for method in [SparseMethod::Vfe, SparseMethod::Fitc, SparseMethod::Dtc] {
        let gp = SparseGp {
            kernel: k.clone(),
            noise_variance: 0.1,
            z: x.clone(),
            method,
        };
        let obj = gp.objective(x.as_ref(), &y).unwrap();
        let lml = exact.log_marginal_likelihood();
        assert!(
            (obj - lml).abs() < 1e-4 * lml.abs(),
            "{method:?}: {obj} vs {lml}"
        );
        let p = gp
            .posterior(x.as_ref(), &y)
            .unwrap()
            .predict(xs.as_ref())
            .unwrap();
        for t in 0..7 {
            assert!((p.mean[t] - want.mean[t]).abs() < 1e-4, "{method:?} mean");
            assert!(
                (p.var[t] - want.latent_var[t]).abs() < 1e-4,
                "{method:?} var"
            );
        }
        let kl_exact = exact.posterior().unwrap().kl_to_prior().unwrap();
        let kl = gp.posterior(x.as_ref(), &y).unwrap().kl_to_prior().unwrap();
        assert!(
            (kl - kl_exact).abs() < 1e-3 * kl_exact,
            "{method:?} KL {kl} vs {kl_exact}"
        );
    }
}

/// docs/test-vectors.md §6: X = (0,1,2,3), y = (0.5,−0.2,0.3,0.9), Z = (0.5, 2.5), SE(1,1), σ² = 0.1.
#[test]
fn spec_small_vector_kl_and_means() {
    let x = Mat::from_fn(4, 1, |i, _| i as f64);
    let y = vec![0.5, -0.2, 0.3, 0.9];
    let z = Mat::from_fn(2, 1, |a, _| 0.5 + 2.0 * a as f64);
    let gp = SparseGp {
        kernel: Kernel::se_iso(1.0, 1.0),
        noise_variance: 0.1,
        z,
        method: SparseMethod::Vfe,
    };
    let vfe = gp.posterior_with_alpha(x.as_ref(), &y, 0.0).unwrap();
    let fitc = gp.posterior_with_alpha(x.as_ref(), &y, 1.0).unwrap();
    // The values of docs/test-vectors.md §6 carry no K_uu jitter; 1e-6 jitter moves them by ~1e-6.
    assert!(
        (vfe.kl_to_prior().unwrap() - 2.03026590).abs() < 1e-5,
        "{}",
        vfe.kl_to_prior().unwrap()
    );
    assert!(
        (fitc.kl_to_prior().unwrap() - 1.11999846).abs() < 1e-5,
        "{}",
        fitc.kl_to_prior().unwrap()
    );
    let m = fitc.predict(x.as_ref()).unwrap();
    for (a, b) in m
        .mean
        .iter()
        .zip([0.02598022, 0.16498602, 0.43855189, 0.43720847])
    {
        assert!((a - b).abs() < 1e-5);
    }
}

#[test]
fn training_improves_the_objective_and_bad_m_is_an_error() {
    let (x, y) = toy(60);
    let k = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let cfg = SparseConfig::default();
    let (gp, report, _) =
        train_sparse(&k, 0.1, x.as_ref(), &y, 8, SparseMethod::Vfe, &cfg).unwrap();
    let start = {
        let z0 =
            pacgp::regression::inducing_init::initial_inducing(x.as_ref(), 8, cfg.init, cfg.seed)
                .unwrap();
        SparseGp {
            kernel: k.clone(),
            noise_variance: 0.1,
            z: z0,
            method: SparseMethod::Vfe,
        }
        .objective(x.as_ref(), &y)
        .unwrap()
    };
    assert!(-report.value > start);
    assert!((gp.objective(x.as_ref(), &y).unwrap() + report.value).abs() < 1e-9);
    assert!(train_sparse(&k, 0.1, x.as_ref(), &y, 0, SparseMethod::Vfe, &cfg).is_err());
    assert!(train_sparse(&k, 0.1, x.as_ref(), &y, 61, SparseMethod::Vfe, &cfg).is_err());
    assert!(train_sparse(&k, -1.0, x.as_ref(), &y, 5, SparseMethod::Fitc, &cfg).is_err());
}

/// Snelson's 200 points (1-D), the data of the schedule tests.
fn snelson() -> pacgp::data::Dataset {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/snelson-1d/snelson_train.csv");
    pacgp::data::load_csv(path, &Default::default()).unwrap()
}

/// A warm start on a subsample ends where a fit on all rows ends (a well-posed 1-D problem
/// has one optimum), says so in the report, and its objective is the full data's.
#[test]
fn a_fit_warm_started_on_a_subsample_reaches_the_full_fit() {
    use pacgp::spec::{FitOptions, MethodName};
    let data = snelson();
    let fit = |pretrain| {
        let spec = FitOptions {
            inducing: Some(10),
            kernel: Some("se".into()),
            pretrain,
            ..Default::default()
        }
        .check(MethodName::Vfe)
        .unwrap();
        pacgp::fit::fit(&spec, &data, None).unwrap()
    };
    let (plain, warm) = (fit(None), fit(Some(60)));
    let (a, b) = (
        plain.report.objective.unwrap(),
        warm.report.objective.unwrap(),
    );
    assert!(
        (a - b).abs() < 1e-3 * a.abs(),
        "ELBO {a} without, {b} with the warm start"
    );
    assert!(warm
        .report
        .notes
        .iter()
        .any(|n| n.contains("subsample of 60 of the 200 rows")));
    assert!(!plain.report.notes.iter().any(|n| n.contains("subsample")));
    // The ELBO the report states is the model's on all 200 rows.
    let gp_objective = warm.report.optimiser.as_ref().unwrap().value;
    assert!(gp_objective.is_finite());
    // A subsample as large as the sample is no warm start.
    let whole = fit(Some(200));
    assert_eq!(whole.report.objective, plain.report.objective);
    assert!(!whole.report.notes.iter().any(|n| n.contains("subsample")));
}

/// An iteration cap stops the optimiser there and the report says so (never silently).
#[test]
fn an_iteration_cap_is_reported() {
    use pacgp::optim::Termination;
    use pacgp::spec::{FitOptions, MethodName};
    let data = snelson();
    for method in [MethodName::Fitc, MethodName::PacSgp] {
        let spec = FitOptions {
            inducing: Some(10),
            kernel: Some("se".into()),
            max_iter: Some(2),
            epsilon: (method == MethodName::PacSgp).then_some(0.5),
            ..Default::default()
        }
        .check(method)
        .unwrap();
        let model = pacgp::fit::fit(&spec, &data, None).unwrap();
        let opt = model.report.optimiser.as_ref().unwrap();
        assert_eq!(opt.termination, Termination::MaxIterations, "{method:?}");
        assert!(opt.iterations <= 2);
        assert!(opt.note().unwrap().contains("iteration limit"));
    }
}
