//! Multi-output regression: one regressor per output, each the same model a single-target
//! fit on its column gives; each output's certificate at δ and the joint one at δ/K (the
//! union bound's price checked from the certificate's own parts); the model file's members
//! checked on load.

use faer::Mat;
use pacgp::conformal::IntervalMethod;
use pacgp::data::Outputs;
use pacgp::fit::{fit, fit_outputs};
use pacgp::model::{CertifyOptions, FittedModel, Task};
use pacgp::spec::{FitOptions, MethodName};

/// 40 inputs in [0, 4) × [−1, 1), and three targets of different scales: a wave, a line in
/// both inputs, and a wave's square times 50, each with structured noise.
fn sample() -> Outputs {
    let n = 40;
    let x = Mat::from_fn(n, 2, |i, j| match j {
        0 => ((i * 13) % n) as f64 / 10.0,
        _ => ((i * 7) % 20) as f64 / 10.0 - 1.0,
    });
    let noise = |i: usize| 0.1 * (((i * 11) % 7) as f64 - 3.0) / 3.0;
    let wave = (0..n).map(|i| x[(i, 0)].sin() + noise(i)).collect();
    let line = (0..n)
        .map(|i| 0.5 * x[(i, 0)] - x[(i, 1)] + noise(i + 3))
        .collect();
    let big = (0..n)
        .map(|i| 50.0 * x[(i, 0)].sin().powi(2) + 5.0 * noise(i + 5))
        .collect();
    let names = ["wave", "line", "big"].map(String::from).to_vec();
    Outputs::new(
        x,
        vec![wave, line, big],
        vec!["u".into(), "v".into()],
        names,
    )
    .unwrap()
}

fn gpr() -> pacgp::spec::CheckedFitSpec {
    FitOptions::default().check(MethodName::Gpr).unwrap()
}

fn test_inputs() -> Mat<f64> {
    Mat::from_fn(9, 2, |i, j| {
        if j == 0 {
            0.45 * i as f64
        } else {
            0.3 - 0.1 * i as f64
        }
    })
}

#[test]
fn each_output_is_the_single_target_fit_of_its_column() {
    let outputs = sample();
    let model = fit_outputs(&gpr(), &outputs).unwrap();
    assert_eq!(model.target_names(), ["wave", "line", "big"]);
    assert_eq!(model.target_name, "wave,line,big");
    let at = test_inputs();
    let joint = model.predict_outputs(at.as_ref()).unwrap();
    for (j, s) in outputs.samples().iter().enumerate() {
        let alone = fit(&gpr(), s, None).unwrap();
        let p = alone.predict_regression(at.as_ref()).unwrap();
        assert_eq!(p, joint[j], "output {j}");
    }
    // The outputs differ: each has its own kernel and scale.
    assert!(joint[2].mean.iter().any(|m| *m > 10.0));
    assert!(joint[0].mean.iter().all(|m| m.abs() < 2.0));
}

#[test]
fn the_joint_certificate_pays_ln_k_over_n_and_bounds_the_mean_risk() {
    let outputs = sample();
    let model = fit_outputs(&gpr(), &outputs).unwrap();
    let opts = CertifyOptions {
        epsilons: vec![0.3, 1.0],
        ..Default::default()
    };
    let c = model.certify_outputs(&outputs, &opts).unwrap();
    let k = outputs.k() as f64;
    assert_eq!(c.joint.delta, 0.01);
    assert!((c.joint.delta_per_output - 0.01 / 3.0).abs() < 1e-15);
    for (j, (own, joint)) in c.outputs.iter().zip(&c.joint.outputs).enumerate() {
        // Each output's certificate at δ is its member's, as a regressor's.
        let member = &model.output_members().unwrap()[j];
        assert_eq!(
            own.certificates,
            member.certify(&outputs.samples()[j], &opts).unwrap()
        );
        assert_eq!(own.target, outputs.target_names()[j]);
        for (a, b) in own.certificates.iter().zip(&joint.certificates) {
            let (a, b) = (&a.certificate, &b.certificate);
            // Same posterior, risk and KL; the confidence term ln(2√N/δ) grows by ln K.
            assert_eq!(
                (a.empirical_risk, a.kl, a.penalty),
                (b.empirical_risk, b.kl, b.penalty)
            );
            let n = a.n as f64;
            assert!(((b.complexity - a.complexity) * n - k.ln()).abs() < 1e-9);
            // The bound is the kl-inverse of its complexity (checked by the binary kl).
            assert!((binary_kl(b.empirical_risk, b.bound) - b.complexity).abs() < 1e-7);
            assert!(b.bound >= a.bound);
        }
        assert!(joint.certificates.iter().all(|r| r.loo_error.is_none()));
        assert!(own.certificates.iter().all(|r| r.loo_error.is_some()));
    }
    for (e, mean) in c.joint.mean_bound.iter().enumerate() {
        let by_hand: f64 = c
            .joint
            .outputs
            .iter()
            .map(|o| o.certificates[e].certificate.bound)
            .sum::<f64>()
            / k;
        assert!((mean - by_hand).abs() < 1e-15);
    }
}

/// `kl(q‖p)` between Bernoulli distributions.
fn binary_kl(q: f64, p: f64) -> f64 {
    let term = |a: f64, b: f64| if a == 0.0 { 0.0 } else { a * (a / b).ln() };
    term(q, p) + term(1.0 - q, 1.0 - p)
}

#[test]
fn a_multi_output_model_asks_for_all_its_columns() {
    let outputs = sample();
    let model = fit_outputs(&gpr(), &outputs).unwrap();
    let first = &outputs.samples()[0];
    let e = model
        .certify(first, &CertifyOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("certify_outputs"), "{e}");
    assert!(model.predict_regression(first.x.as_ref()).is_err());
    assert!(model.evaluate(first, Some(0.3)).is_err());
    // The outputs in another order are not the model's.
    let swapped = Outputs::from_samples(outputs.samples().iter().rev().cloned().collect());
    let e = model
        .certify_outputs(&swapped.unwrap(), &CertifyOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("not the model's"), "{e}");
    // A classifier is not fitted per output; a single-target model has no outputs.
    let laplace = FitOptions::default().check(MethodName::Laplace).unwrap();
    assert!(fit_outputs(&laplace, &outputs).is_err());
    let single = fit(&gpr(), first, None).unwrap();
    assert!(single.predict_outputs(first.x.as_ref()).is_err());
    assert_eq!(single.target_names(), ["wave"]);
}

#[test]
fn each_output_is_evaluated_and_has_intervals_of_its_own() {
    let outputs = sample();
    let opts = FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        ..Default::default()
    };
    let spec = opts.check(MethodName::Gpr).unwrap();
    let model = fit_outputs(&spec, &outputs).unwrap();
    let test = outputs.subset(&[1, 5, 9, 30]);
    let evals = model.evaluate_outputs(&test, Some(0.5)).unwrap();
    for (m, (e, s)) in model
        .output_members()
        .unwrap()
        .iter()
        .zip(evals.iter().zip(test.samples()))
    {
        assert_eq!(*e, m.evaluate(s, Some(0.5)).unwrap());
        let iv = m.predict_intervals(s.x.as_ref(), 0.1).unwrap();
        assert!(iv.lower.iter().zip(&iv.upper).all(|(l, h)| l < h));
    }
    assert!(evals[2].rmse.unwrap() > evals[0].rmse.unwrap());
}

#[test]
fn the_model_file_round_trips_and_its_members_are_checked() {
    let outputs = sample();
    let model = fit_outputs(&gpr(), &outputs).unwrap();
    let text = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&text, "m.json").unwrap();
    let at = test_inputs();
    let (a, b) = (
        model.predict_outputs(at.as_ref()).unwrap(),
        back.predict_outputs(at.as_ref()).unwrap(),
    );
    for (p, q) in a.iter().zip(&b) {
        // The means are the same bits; the variances to rounding (the factor is re-read).
        assert_eq!(p.mean, q.mean);
        for (u, v) in p.latent_var.iter().zip(&q.latent_var) {
            assert!((u - v).abs() <= 1e-10 * (1.0 + u.abs()), "{u} {v}");
        }
    }
    // A target renamed in the model but not in its member, or a member's spec edited.
    let renamed = text.replacen(
        "\"target_name\":\"wave,line,big\"",
        "\"target_name\":\"wave,line\"",
        1,
    );
    assert_ne!(renamed, text);
    let e = FittedModel::from_json(&renamed, "m.json").unwrap_err();
    assert!(e.to_string().contains("joined by commas"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["task"]["members"][1]["spec"]["delta"] = serde_json::json!(0.05);
    let e = FittedModel::from_json(&v.to_string(), "m.json").unwrap_err();
    assert!(e.to_string().contains("output 'line'"), "{e}");
    // One output alone is not a multi-output model.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let members = v["task"]["members"].as_array_mut().unwrap();
    members.truncate(1);
    v["target_name"] = serde_json::json!("wave");
    let e = FittedModel::from_json(&v.to_string(), "m.json").unwrap_err();
    assert!(e.to_string().contains("at least two"), "{e}");
}

fn shared(more: FitOptions) -> pacgp::spec::CheckedFitSpec {
    FitOptions {
        shared_kernel: Some(true),
        ..more
    }
    .check(MethodName::Gpr)
    .unwrap()
}

/// The kernel of a regressor: its θ and σ².
fn kernel_of(m: &FittedModel) -> (Vec<f64>, f64) {
    match &m.task {
        Task::Regression {
            posterior,
            noise_variance,
            ..
        } => (posterior.kernel().params(), *noise_variance),
        _ => panic!("not a regressor"),
    }
}

/// Two outputs that are one column on two scales (y and 3y + 1) standardise to the same
/// targets, so their summed evidence is twice the one column's: the shared kernel is the
/// single-target fit's, and the second output's predictions are the first's rescaled.
#[test]
fn a_shared_kernel_of_one_column_on_two_scales_is_the_single_fit() {
    let outputs = sample();
    let wave = outputs.samples()[0].clone();
    let scaled: Vec<f64> = wave.y.iter().map(|v| 3.0 * v + 1.0).collect();
    let twice = Outputs::new(
        wave.x.clone(),
        vec![wave.y.clone(), scaled],
        wave.feature_names.clone(),
        vec!["y".into(), "z".into()],
    )
    .unwrap();
    let model = fit_outputs(&shared(FitOptions::default()), &twice).unwrap();
    let members = model.output_members().unwrap();
    let alone = fit(&gpr(), &wave, None).unwrap();
    let ((theta, s2), (theta_alone, s2_alone)) = (kernel_of(&members[0]), kernel_of(&alone));
    assert_eq!(theta, theta_alone, "θ is snapped onto the same grid point");
    assert!(
        (s2 - s2_alone).abs() < 1e-4 * s2_alone,
        "σ² {s2} vs {s2_alone}"
    );
    assert_eq!(kernel_of(&members[1]), (theta, s2));
    let at = test_inputs();
    let p = model.predict_outputs(at.as_ref()).unwrap();
    let single = alone.predict_regression(at.as_ref()).unwrap();
    for i in 0..at.nrows() {
        assert!((p[0].mean[i] - single.mean[i]).abs() < 1e-4, "row {i}");
        assert!(
            (p[1].mean[i] - (3.0 * p[0].mean[i] + 1.0)).abs() < 1e-9,
            "row {i}"
        );
        assert!(
            (p[1].latent_var[i] - 9.0 * p[0].latent_var[i]).abs() < 1e-9,
            "row {i}"
        );
    }
    assert!(members[0]
        .report
        .notes
        .iter()
        .any(|n| n.contains("shared by the 2 targets")));
}

/// Outputs of different shapes share one θ and σ² (not every output's own), the model's
/// objective is the sum of the members' evidences at it, each output is certified, and the
/// model file keeps the kernel shared.
#[test]
fn outputs_with_a_shared_kernel_are_fitted_certified_and_kept_together() {
    let outputs = sample();
    let model = fit_outputs(&shared(FitOptions::default()), &outputs).unwrap();
    let members = model.output_members().unwrap();
    let one = kernel_of(&members[0]);
    assert!(members.iter().all(|m| kernel_of(m) == one));
    let own: Vec<_> = (outputs.samples().iter())
        .map(|s| kernel_of(&fit(&gpr(), s, None).unwrap()))
        .collect();
    assert!(
        own.iter().any(|k| *k != one),
        "every output's own kernel is the shared one"
    );
    let summed: f64 = members.iter().map(|m| m.report.objective.unwrap()).sum();
    assert_eq!(model.report.objective, Some(summed));
    let opts = CertifyOptions {
        epsilons: vec![0.5],
        ..Default::default()
    };
    let c = model.certify_outputs(&outputs, &opts).unwrap();
    for o in &c.outputs {
        let b = o.certificates[0].certificate.bound;
        assert!(b > 0.0 && b < 1.0, "{}: {b}", o.target);
    }
    let text = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&text, "m.json").unwrap();
    assert!(back.spec.shares_kernel());
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let s2 = v["task"]["members"][1]["task"]["noise_variance"].clone();
    assert!(s2.is_number(), "{}", v["task"]["members"][1]["task"]);
    v["task"]["members"][1]["task"]["noise_variance"] =
        serde_json::json!(s2.as_f64().unwrap() * 1.5);
    let e = FittedModel::from_json(&v.to_string(), "m.json").unwrap_err();
    assert!(e.to_string().contains("share one kernel"), "{e}");
}

/// A shared kernel is chosen on every output's rows: no holdout stays unseen, and intervals
/// that refit one output alone would not be the shared model's; jackknife+ is.
#[test]
fn a_shared_kernel_refuses_a_holdout_and_refitted_intervals() {
    let outputs = sample();
    let holdout = shared(FitOptions {
        certify_holdout: Some(0.3),
        ..Default::default()
    });
    let e = fit_outputs(&holdout, &outputs).unwrap_err();
    assert!(e.to_string().contains("held out"), "{e}");
    let cv = shared(FitOptions {
        intervals: Some(IntervalMethod::CvPlus { folds: 5 }),
        ..Default::default()
    });
    let e = fit_outputs(&cv, &outputs).unwrap_err();
    assert!(e.to_string().contains("jackknife+"), "{e}");
    let jk = shared(FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        ..Default::default()
    });
    let model = fit_outputs(&jk, &outputs).unwrap();
    let at = test_inputs();
    for m in model.output_members().unwrap() {
        let iv = m.predict_intervals(at.as_ref(), 0.1).unwrap();
        assert!(iv.lower.iter().zip(&iv.upper).all(|(l, h)| l < h));
    }
}
