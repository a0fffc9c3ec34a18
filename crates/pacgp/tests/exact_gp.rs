//! Exact GP regression: gradients by finite differences, closed-form LOO against n refits,
//! the shared posterior against the textbook formulas, and bad inputs.

use faer::Mat;
use pacgp::gradcheck::{assert_gradient_close, assert_objective_gradient, Tolerance};
use pacgp::kernel::Kernel;
use pacgp::linalg::{Cholesky, JitterPolicy};
use pacgp::loo::{exact_gp_loo, exact_gp_loo_gradient, exact_loo_by_refit};
use pacgp::optim::Objective;
use pacgp::regression::exact::{
    fit_ml2, fit_ml2_shared, ExactGp, MlConfig, NegLogMarginalLikelihood,
};
use pacgp::Error;

/// Deterministic toy data: x ~ spread over [-2, 2]^d, y = Σ sin(x_t) + small wiggle.
fn toy(n: usize, d: usize) -> (Mat<f64>, Vec<f64>) {
    let x = Mat::from_fn(n, d, |i, j| {
        (((i * 37 + j * 11) % 97) as f64 / 97.0) * 4.0 - 2.0
    });
    let y = (0..n)
        .map(|i| {
            (0..d).map(|j| x[(i, j)].sin()).sum::<f64>() + 0.1 * ((i * 13 % 7) as f64 - 3.0) / 3.0
        })
        .collect();
    (x, y)
}

fn kernel(d: usize) -> Kernel {
    Kernel::se_ard(
        &(0..d).map(|t| 0.8 + 0.3 * t as f64).collect::<Vec<_>>(),
        1.3,
    )
}

#[test]
fn lml_gradient_matches_central_differences() {
    let (x, y) = toy(40, 3);
    let obj = NegLogMarginalLikelihood::new(&kernel(3), x.as_ref(), &y, JitterPolicy::none());
    let p0 = {
        let mut p = kernel(3).params();
        p.push(0.05f64.ln());
        p
    };
    // h = 1e-5 in ln space: truncation error O(h²) ≈ 1e-10 relative; tolerance 1e-6.
    assert_objective_gradient(&obj, &p0, 1e-5, Tolerance::mixed(1e-6), "NLML");
}

/// The same for kernels without a symmetric fast path (a sum with a linear part, a product,
/// a Matérn), through the objective and through `ExactGp::lml_gradient`, and for inputs far
/// from the origin (a stationary kernel's gradient must not lose digits to the shift).
#[test]
fn lml_gradient_matches_central_differences_for_composite_kernels_and_shifted_inputs() {
    let (x, y) = toy(40, 3);
    let shifted = faer::Mat::from_fn(40, 3, |i, t| x[(i, t)] + 1e4);
    let cases = [
        (Kernel::from_spec("se-ard + linear", 3).unwrap(), &x),
        (
            Kernel::from_spec("matern32 * poly2 + const", 3).unwrap(),
            &x,
        ),
        (Kernel::from_spec("matern52-ard", 3).unwrap(), &x),
        (kernel(3), &shifted),
    ];
    for (k, inputs) in cases {
        let obj = NegLogMarginalLikelihood::new(&k, inputs.as_ref(), &y, JitterPolicy::none());
        let mut p0 = k.params();
        p0.push(0.05f64.ln());
        let (_, g) = obj.value_and_gradient(&p0).unwrap();
        let what = format!("NLML of {}", k.describe());
        assert_objective_gradient(&obj, &p0, 1e-5, Tolerance::mixed(1e-6), &what);
        let public: Vec<f64> = obj
            .model_at(&p0)
            .unwrap()
            .lml_gradient()
            .unwrap()
            .iter()
            .map(|v| -v)
            .collect();
        for (a, b) in public.iter().zip(&g) {
            assert!(
                (a - b).abs() <= 1e-8 * (1.0 + b.abs()),
                "{what}: {a} vs {b}"
            );
        }
    }
}

#[test]
fn lml_equals_dense_gaussian_log_density() {
    let (x, y) = toy(25, 2);
    let gp = ExactGp::fit(kernel(2), 0.1, x.clone(), y.clone(), &JitterPolicy::none()).unwrap();
    let mut c = kernel(2).gram(x.as_ref()).unwrap();
    for i in 0..25 {
        c[(i, i)] += 0.1;
    }
    // Independent route: ln N(y|0,C) via the inverse and ln det from a fresh factorisation.
    let ch = Cholesky::factor(c.as_ref(), &JitterPolicy::none(), "C").unwrap();
    let inv = ch.inverse().unwrap();
    let quad: f64 = (0..25)
        .map(|i| (0..25).map(|j| y[i] * inv[(i, j)] * y[j]).sum::<f64>())
        .sum();
    let expected = -0.5 * quad - 0.5 * ch.ln_det() - 12.5 * (2.0 * std::f64::consts::PI).ln();
    assert!((gp.log_marginal_likelihood() - expected).abs() < 1e-10);
}

#[test]
fn closed_form_loo_equals_n_refits() {
    let (x, y) = toy(30, 2);
    let k = kernel(2);
    let gp = ExactGp::fit(k.clone(), 0.05, x.clone(), y.clone(), &JitterPolicy::none()).unwrap();
    let fast = exact_gp_loo(&gp).unwrap();
    let refits = exact_loo_by_refit(30, |train, i| {
        let xt = Mat::from_fn(train.len(), 2, |a, b| x[(train[a], b)]);
        let yt = train.iter().map(|&j| y[j]).collect();
        let m = ExactGp::fit(k.clone(), 0.05, xt, yt, &JitterPolicy::none())?;
        let p = m.predict(Mat::from_fn(1, 2, |_, b| x[(i, b)]).as_ref())?;
        Ok((p.mean[0], p.noisy_var[0]))
    })
    .unwrap();
    for i in 0..30 {
        assert!((fast.mean[i] - refits[i].0).abs() < 1e-8, "mean {i}");
        assert!((fast.var[i] - refits[i].1).abs() < 1e-8, "var {i}");
    }
    let lp: f64 = (0..30)
        .map(|i| {
            let (m, v) = refits[i];
            -0.5 * (2.0 * std::f64::consts::PI * v).ln() - (y[i] - m).powi(2) / (2.0 * v)
        })
        .sum();
    assert!((fast.log_predictive - lp).abs() < 1e-8);
}

#[test]
fn loo_gradient_matches_central_differences() {
    let (x, y) = toy(30, 2);
    let p0 = {
        let mut p = kernel(2).params();
        p.push(0.05f64.ln());
        p
    };
    let lpp = |p: &[f64]| {
        let mut k = kernel(2);
        k.set_params(&p[..3]).unwrap();
        exact_gp_loo(
            &ExactGp::fit(k, p[3].exp(), x.clone(), y.clone(), &JitterPolicy::none()).unwrap(),
        )
        .unwrap()
        .log_predictive
    };
    let mut k = kernel(2);
    k.set_params(&p0[..3]).unwrap();
    let g = exact_gp_loo_gradient(
        &ExactGp::fit(k, p0[3].exp(), x.clone(), y.clone(), &JitterPolicy::none()).unwrap(),
    )
    .unwrap();
    assert_gradient_close(
        lpp,
        &p0,
        &g,
        1e-5,
        Tolerance::mixed(1e-6),
        "LOO log predictive",
    );
}

#[test]
fn shared_posterior_reproduces_textbook_predictive() {
    let (x, y) = toy(20, 2);
    let k = kernel(2);
    let gp = ExactGp::fit(k.clone(), 0.2, x.clone(), y.clone(), &JitterPolicy::none()).unwrap();
    let (xs, _) = toy(7, 2);
    let xs = Mat::from_fn(7, 2, |i, j| xs[(i, j)] * 0.9 + 0.1);
    let p = gp.predict(xs.as_ref()).unwrap();
    // GPML eqs. 2.25–2.26 with an explicit inverse.
    let mut c = k.gram(x.as_ref()).unwrap();
    for i in 0..20 {
        c[(i, i)] += 0.2;
    }
    let inv = Cholesky::factor(c.as_ref(), &JitterPolicy::none(), "C")
        .unwrap()
        .inverse()
        .unwrap();
    let ks = k.cross(xs.as_ref(), x.as_ref()).unwrap();
    for t in 0..7 {
        let kv: Vec<f64> = (0..20).map(|i| ks[(t, i)]).collect();
        let mean: f64 = (0..20)
            .map(|i| kv[i] * (0..20).map(|j| inv[(i, j)] * y[j]).sum::<f64>())
            .sum();
        let quad: f64 = (0..20)
            .map(|i| kv[i] * (0..20).map(|j| inv[(i, j)] * kv[j]).sum::<f64>())
            .sum();
        let var = k.eval(&[xs[(t, 0)], xs[(t, 1)]], &[xs[(t, 0)], xs[(t, 1)]]) - quad;
        assert!((p.mean[t] - mean).abs() < 1e-10);
        assert!((p.latent_var[t] - var).abs() < 1e-10);
        assert!((p.noisy_var[t] - var - 0.2).abs() < 1e-10);
    }
    // KL of the site form equals the docs/math.md §3.1 closed form (paper eq. 8) computed densely.
    let post = gp.posterior().unwrap();
    let kmat = k.gram(x.as_ref()).unwrap();
    let ki = &kmat * &inv; // K C⁻¹
    let ld = Cholesky::factor(
        Mat::from_fn(20, 20, |i, j| {
            kmat[(i, j)] / 0.2 + if i == j { 1.0 } else { 0.0 }
        })
        .as_ref(),
        &JitterPolicy::none(),
        "I+K/σ²",
    )
    .unwrap()
    .ln_det();
    let tr: f64 = (0..20).map(|i| ki[(i, i)]).sum();
    let a: Vec<f64> = (0..20)
        .map(|i| (0..20).map(|j| inv[(i, j)] * y[j]).sum())
        .collect();
    let ka: Vec<f64> = (0..20)
        .map(|i| (0..20).map(|j| kmat[(i, j)] * a[j]).sum())
        .collect();
    let quad: f64 = a.iter().zip(&ka).map(|(p, q)| p * q).sum();
    let kl = 0.5 * ld - 0.5 * tr + 0.5 * quad;
    assert!(
        (post.kl_to_prior().unwrap() - kl).abs() < 1e-9,
        "{} vs {kl}",
        post.kl_to_prior().unwrap()
    );
}

#[test]
fn ml2_reaches_a_stationary_point_and_improves_the_evidence() {
    let (x, y) = toy(60, 2);
    let init = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let before = ExactGp::fit(
        init.clone(),
        0.1,
        x.clone(),
        y.clone(),
        &JitterPolicy::default(),
    )
    .unwrap()
    .log_marginal_likelihood();
    let cfg = MlConfig {
        restarts: pacgp::optim::Restarts {
            count: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let (gp, report) = fit_ml2(&init, 0.1, x, y, &cfg).unwrap();
    assert!(gp.log_marginal_likelihood() > before);
    let g = gp.lml_gradient().unwrap();
    assert!(
        g.iter().all(|v| v.abs() < 1e-3),
        "gradient at optimum {g:?} ({report:?})"
    );
}

#[test]
fn bad_inputs_are_typed_errors() {
    let (x, y) = toy(10, 2);
    let k = kernel(2);
    let j = JitterPolicy::default();
    let mut yn = y.clone();
    yn[3] = f64::NAN;
    assert!(matches!(
        ExactGp::fit(k.clone(), 0.1, x.clone(), yn, &j),
        Err(Error::NonFinite { row: 3, .. })
    ));
    assert!(matches!(
        ExactGp::fit(k.clone(), 0.1, x.clone(), y[..9].to_vec(), &j),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        ExactGp::fit(k.clone(), 0.1, Mat::zeros(0, 2), vec![], &j),
        Err(Error::Empty { .. })
    ));
    assert!(matches!(
        ExactGp::fit(k.clone(), 0.0, x.clone(), y.clone(), &j),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        ExactGp::fit(k.clone(), -1.0, x.clone(), y.clone(), &j),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        ExactGp::fit(kernel(3), 0.1, x.clone(), y.clone(), &j),
        Err(Error::ShapeMismatch { .. })
    ));
    // Duplicate points are fine with noise: finite predictions.
    let xd = Mat::from_fn(6, 2, |i, c| (i / 2) as f64 + c as f64);
    let gp = ExactGp::fit(
        k.clone(),
        0.01,
        xd.clone(),
        vec![1.0, 1.1, 2.0, 2.1, 0.0, 0.1],
        &j,
    )
    .unwrap();
    let p = gp.predict(xd.as_ref()).unwrap();
    assert!(p.mean.iter().chain(&p.latent_var).all(|v| v.is_finite()));
    // Tiny noise with exact duplicates: jitter is added and reported, no NaN.
    let gp = ExactGp::fit(k.clone(), 1e-300, xd.clone(), vec![1.0; 6], &j).unwrap();
    assert!(gp.jitter_used() > 0.0);
    assert!(gp.log_marginal_likelihood().is_finite());
    // Predicting with the wrong number of columns.
    assert!(matches!(
        gp.predict(Mat::zeros(2, 3).as_ref()),
        Err(Error::ShapeMismatch { .. })
    ));
}

/// Distinct inputs in a smooth spread, or each input twice (`K` singular, so the factor needs
/// jitter at tiny noise).
fn spread(n: usize, d: usize, twice: bool) -> (Mat<f64>, Vec<f64>) {
    let x = Mat::from_fn(n, d, |i, t| {
        let i = if twice { i / 2 } else { i };
        ((i * 7 + t * 13) % 97) as f64 / 17.0 + (i as f64 * 0.37 + t as f64).sin()
    });
    let y = (0..n)
        .map(|i| x[(i, 0)].sin() + 0.1 * ((i * 31 % 11) as f64 - 5.0) / 5.0)
        .collect();
    (x, y)
}

#[test]
fn evaluations_reusing_their_buffers_equal_fresh_ones_bit_for_bit() {
    // The objective keeps its N×N matrices between evaluations; above the parallel threshold
    // (N ≥ 512), alternating two points so every buffer changes role, each evaluation must
    // equal a fresh objective's — stationary, composite and non-stationary kernels, and a
    // factor that needs jitter.
    for (spec, n, twice, ln_noise) in [
        ("se-ard", 600usize, false, -3.0f64),
        ("se-ard + linear", 600, false, -3.0),
        ("matern32 * poly2 + const", 520, false, -3.0),
        ("se-ard", 600, true, -40.0),
    ] {
        let (x, y) = spread(n, 3, twice);
        let k = Kernel::from_spec(spec, 3).unwrap();
        let mut p1 = k.params();
        p1.push(ln_noise);
        let mut p2: Vec<f64> = p1.iter().map(|v| v + 0.3).collect();
        *p2.last_mut().unwrap() = ln_noise + 0.5;
        let fresh = |p: &[f64]| {
            NegLogMarginalLikelihood::new(&k, x.as_ref(), &y, JitterPolicy::default())
                .value_and_gradient(p)
                .unwrap()
        };
        let (f1, f2) = (fresh(&p1), fresh(&p2));
        let obj = NegLogMarginalLikelihood::new(&k, x.as_ref(), &y, JitterPolicy::default());
        for (p, f) in [(&p1, &f1), (&p2, &f2), (&p1, &f1), (&p2, &f2)] {
            assert_eq!(&obj.value_and_gradient(p).unwrap(), f, "{spec}");
        }
        let jitter = obj.model_at(&p1).unwrap().jitter_used();
        assert_eq!(jitter > 0.0, twice, "{spec}: jitter {jitter}");
    }
}

/// Targets that share θ and σ²: the summed objective is the sum of the single objectives,
/// value and gradient, and its gradient matches central differences.
#[test]
fn shared_evidence_is_the_sum_of_the_targets_evidences() {
    let (x, y) = toy(40, 3);
    let y2: Vec<f64> = y
        .iter()
        .enumerate()
        .map(|(i, v)| 0.5 * v - 0.01 * i as f64)
        .collect();
    let y3: Vec<f64> = (0..40).map(|i| ((i * 7 % 11) as f64 - 5.0) / 5.0).collect();
    let mut p0 = kernel(3).params();
    p0.push(0.07f64.ln());
    let single = |t: &[f64]| {
        NegLogMarginalLikelihood::new(&kernel(3), x.as_ref(), t, JitterPolicy::none())
            .value_and_gradient(&p0)
            .unwrap()
    };
    let shared = NegLogMarginalLikelihood::new(&kernel(3), x.as_ref(), &y, JitterPolicy::none())
        .with_shared_targets(vec![&y2, &y3]);
    let (v, g) = shared.value_and_gradient(&p0).unwrap();
    let parts = [single(&y), single(&y2), single(&y3)];
    let v_sum: f64 = parts.iter().map(|(v, _)| v).sum();
    assert!((v - v_sum).abs() < 1e-10 * v_sum.abs(), "{v} vs {v_sum}");
    for (t, gt) in g.iter().enumerate() {
        let sum: f64 = parts.iter().map(|(_, g)| g[t]).sum();
        assert!(
            (gt - sum).abs() < 1e-9 * (1.0 + sum.abs()),
            "∂{t}: {gt} vs {sum}"
        );
    }
    assert_objective_gradient(&shared, &p0, 1e-5, Tolerance::mixed(1e-6), "summed NLML");
}

/// ML-II of several targets sharing θ: one factor for all, each target's α its own solve,
/// and (without the grid snap) a stationary point of the summed evidence that no single
/// target's fit reaches.
#[test]
fn shared_ml2_fits_every_target_at_one_stationary_point_of_the_summed_evidence() {
    let (x, y) = toy(30, 2);
    let y2: Vec<f64> = (0..30)
        .map(|i| (x[(i, 0)] * 2.0).cos() + 0.05 * (i % 3) as f64)
        .collect();
    let cfg = MlConfig::default();
    let models = fit_ml2_shared(
        &kernel(2),
        0.1,
        x.clone(),
        vec![y.clone(), y2.clone()],
        &cfg,
    )
    .unwrap()
    .models;
    assert_eq!(models.len(), 2);
    assert_eq!(models[0].params(), models[1].params());
    assert_eq!(models[1].y(), y2.as_slice());
    let c = dense_c_of(&models[1]);
    let alpha = c.solve_vec(&y2);
    for (a, b) in alpha.iter().zip(models[1].alpha()) {
        assert!((a - b).abs() < 1e-8 * (1.0 + a.abs()), "{a} vs {b}");
    }
    let p = models[0].params();
    let shared = NegLogMarginalLikelihood::new(&kernel(2), x.as_ref(), &y, cfg.jitter)
        .with_shared_targets(vec![&y2]);
    let (_, g) = shared.value_and_gradient(&p).unwrap();
    let worst = g.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(worst < 1e-3, "summed evidence not stationary: {g:?}");
    let (alone, _) = fit_ml2(&kernel(2), 0.1, x.clone(), y2.clone(), &cfg).unwrap();
    let moved = (alone.params().iter().zip(&p)).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(
        moved > 1e-2,
        "the second target alone lands on the shared θ: {p:?}"
    );
}

/// `K + σ²I` of a fitted model, factored afresh from its kernel and inputs.
fn dense_c_of(m: &ExactGp) -> Cholesky {
    let n = m.x().nrows();
    let k = m.kernel.gram(m.x()).unwrap();
    let c = Mat::from_fn(n, n, |i, j| {
        k[(i, j)] + if i == j { m.noise_variance } else { 0.0 }
    });
    Cholesky::factor(c.as_ref(), &JitterPolicy::none(), "C").unwrap()
}

/// ML-II warm-started on a seeded subsample (`MlConfig::pretrain`) reports the warm start and
/// ends where ML-II run on all rows from the same start ends: the same optimum of the same
/// evidence (both stationary, the gradient below 1e-3), the parameters to 1e-3.
#[test]
fn a_warm_start_on_a_subsample_reaches_the_optimum_of_the_run_on_all_rows() {
    // A smooth function of both inputs and noise of 0.1 (a fixed pseudo-random sequence):
    // one optimum, which the subsample's is near.
    let (x, _) = toy(90, 2);
    let y: Vec<f64> = (0..90)
        .map(|i| {
            let e = ((i * 7919 % 101) as f64 / 101.0 - 0.5) * 0.35;
            x[(i, 0)].sin() + 0.5 * x[(i, 1)] + e
        })
        .collect();
    let plain = MlConfig::default();
    let warm = MlConfig {
        pretrain: Some(30),
        ..Default::default()
    };
    let fit = fit_ml2_shared(&kernel(2), 0.1, x.clone(), vec![y.clone()], &warm).unwrap();
    let pre = fit
        .pretraining
        .as_ref()
        .expect("a warm start on 30 of 90 rows");
    assert_eq!((pre.rows, pre.of), (30, 90));
    assert!(pre.report.iterations > 0);
    let (direct, _) = fit_ml2(&kernel(2), 0.1, x, y, &plain).unwrap();
    let gp = &fit.models[0];
    assert!(gp.lml_gradient().unwrap().iter().all(|v| v.abs() < 1e-3));
    for (a, b) in gp.params().iter().zip(direct.params()) {
        assert!(
            (a - b).abs() < 1e-3,
            "{:?} vs {:?}",
            gp.params(),
            direct.params()
        );
    }
    let gap = gp.log_marginal_likelihood() - direct.log_marginal_likelihood();
    assert!(gap.abs() < 1e-6, "{gap}");
}

/// A warm start on N rows or more is none: the fit is ML-II on all rows, bit for bit.
#[test]
fn a_warm_start_on_every_row_is_no_warm_start() {
    let (x, y) = toy(40, 2);
    let cfg = |pretrain| MlConfig {
        pretrain,
        ..Default::default()
    };
    let all = fit_ml2_shared(&kernel(2), 0.1, x.clone(), vec![y.clone()], &cfg(Some(40))).unwrap();
    let none = fit_ml2_shared(&kernel(2), 0.1, x, vec![y], &cfg(None)).unwrap();
    assert!(all.pretraining.is_none());
    assert_eq!(all.models[0].params(), none.models[0].params());
    assert_eq!(
        all.models[0].log_marginal_likelihood().to_bits(),
        none.models[0].log_marginal_likelihood().to_bits()
    );
}
