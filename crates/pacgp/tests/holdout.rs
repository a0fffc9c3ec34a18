//! `certify_holdout`: a seeded fraction kept out of the fit certifies the deployed predictor
//! by the test-set bound. Checked against an independent recomputation: the held-out rows
//! re-derived here, the deployed predictor's errors counted here from `predict`, and the bound
//! checked against the binomial CDF summed here by plain products (no `ln Γ`), at δ/2. Another
//! sample and an edited record are refused with typed errors; a model without a holdout keeps
//! its file and its certificate.

use pacgp::data::{sample_digest, Dataset, SampleSplit};
use pacgp::model::{CertifyOptions, DeployedBound, DeployedPredictor, FittedModel};
use pacgp::spec::{FitOptions, MethodName, SpecOption};
use pacgp::Error;

mod common;

/// 60 distinct rows of a non-linear two-class problem.
fn classes() -> Dataset {
    let (x, y) = common::toy_shifted(60, 0.013);
    Dataset::new(x, y).unwrap()
}

use common::noisy_sine as sine;

fn fit(method: MethodName, o: FitOptions, data: &Dataset) -> FittedModel {
    let spec = o.check(method).unwrap();
    pacgp::fit::fit(&spec, data, None).unwrap()
}

/// `P(Binomial(n, p) ≤ k)` by products of the terms (n small enough for f64).
fn binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    let mut term = (1.0 - p).powi(n as i32); // i = 0
    let mut sum = term;
    for i in 1..=k {
        term *= (n - i + 1) as f64 / i as f64 * p / (1.0 - p);
        sum += term;
    }
    sum
}

/// The held-out rows and the fit rows, re-derived from the split's definition.
fn parts(data: &Dataset, fraction: f64, seed: u64) -> (Dataset, Dataset) {
    let (held, fitted) = SampleSplit::new(fraction, seed).parts(data).unwrap();
    (data.subset(&held), data.subset(&fitted))
}

/// The bound is the largest p at which k or fewer errors have probability δ: the CDF is δ
/// there, and below δ just above it.
fn check_tail_inversion(k: usize, n: usize, delta: f64, value: f64) {
    assert!(value >= k as f64 / n as f64);
    if k == n {
        assert_eq!(value, 1.0);
        return;
    }
    let at = binomial_cdf(k, n, value);
    assert!(
        (at - delta).abs() <= 1e-9 * delta,
        "CDF {at} at the bound, δ {delta}"
    );
    assert!(binomial_cdf(k, n, value * (1.0 + 1e-6)) < delta);
}

#[test]
fn classifier_deployed_bound_is_the_test_set_bound_on_the_recomputed_holdout() {
    let data = classes();
    let (fraction, seed) = (0.3, 3);
    let model = fit(
        MethodName::Laplace,
        FitOptions {
            certify_holdout: Some(fraction),
            seed: Some(seed),
            ..Default::default()
        },
        &data,
    );
    let (held, fitted) = parts(&data, fraction, seed);
    assert_eq!(held.n(), 18);
    // The fit saw only the fit rows (its scalers are theirs).
    assert_eq!(model.n_train, 42);
    assert_eq!(model.training_digest, Some(sample_digest(&fitted)));
    let fitted_scaler =
        pacgp::data::Standardizer::fit(fitted.x.as_ref(), &model.feature_names).unwrap();
    assert_eq!(model.x_scaler.mean, fitted_scaler.mean);

    let reports = model.certify(&data, &CertifyOptions::default()).unwrap();
    assert_eq!(reports.len(), 1);
    let d = reports[0].deployed.as_ref().unwrap();
    assert_eq!(d.predictor, DeployedPredictor::PosteriorMeanSign);
    let (p, _) = model.predict_classification(held.x.as_ref()).unwrap();
    let errors = p
        .iter()
        .zip(&held.y)
        .filter(|(p, y)| (if **p >= 0.5 { 1.0 } else { -1.0 }) != **y)
        .count();
    assert_eq!((d.n, d.errors), (18, errors));
    // Union bound: the PAC-Bayes certificate and the test-set bound at δ/2 each.
    assert_eq!(d.joint_delta, model.spec.delta);
    assert_eq!(d.delta, model.spec.delta / 2.0);
    assert_eq!(reports[0].certificate.delta, model.spec.delta / 2.0);
    assert_eq!(reports[0].certificate.n, 42);
    check_tail_inversion(errors, 18, d.delta, d.value);
    assert!(d.value >= d.error_rate);

    // The PAC-Bayes certificate is the one on the fit rows at δ/2, as a model fitted on them
    // without a holdout gives it.
    let plain = fit(
        MethodName::Laplace,
        FitOptions {
            seed: Some(seed),
            ..Default::default()
        },
        &fitted,
    );
    let at_half = CertifyOptions {
        delta: Some(model.spec.delta / 2.0),
        ..Default::default()
    };
    let want = plain.certify(&fitted, &at_half).unwrap();
    assert_eq!(reports[0].certificate.bound, want[0].certificate.bound);
    // Without the holdout, the deployed certificate is the derandomised one on the fit rows.
    let plain_deployed = want[0].deployed.as_ref().unwrap();
    assert_eq!(plain_deployed.bound, DeployedBound::Derandomised);
    assert_eq!(d.bound, DeployedBound::BinomialTail);
}

#[test]
fn regressor_deployed_bound_counts_epsilon_band_misses_of_the_mean_for_each_epsilon() {
    let data = sine();
    let model = fit(
        MethodName::Gpr,
        FitOptions {
            epsilon: Some(0.3),
            certify_holdout: Some(0.25),
            ..Default::default()
        },
        &data,
    );
    let (held, _) = parts(&data, 0.25, 0);
    let opts = CertifyOptions {
        epsilons: vec![0.2, 0.4],
        delta: Some(0.05),
        ..Default::default()
    };
    let reports = model.certify(&data, &opts).unwrap();
    let mean = model.predict_regression(held.x.as_ref()).unwrap().mean;
    for (report, eps) in reports.iter().zip([0.2, 0.4]) {
        let d = report.deployed.as_ref().unwrap();
        assert_eq!(d.predictor, DeployedPredictor::PosteriorMean);
        assert_eq!(d.epsilon, Some(eps));
        let misses = mean
            .iter()
            .zip(&held.y)
            .filter(|(m, y)| (*y - *m).abs() > eps)
            .count();
        assert_eq!((d.n, d.errors), (held.n(), misses));
        // Two ε: each test-set bound at δ/4, the PAC-Bayes certificates at δ/2 (ln 2 for ε).
        assert_eq!(d.delta, 0.05 / 4.0);
        assert_eq!(report.certificate.delta, 0.025);
        check_tail_inversion(misses, held.n(), d.delta, d.value);
    }
}

#[test]
fn svm_deployed_bound_covers_its_sign() {
    let data = classes();
    let model = fit(
        MethodName::Svm,
        FitOptions {
            certify_holdout: Some(0.5),
            c: Some(1.0),
            lengthscale: Some(1.0),
            ..Default::default()
        },
        &data,
    );
    let reports = model.certify(&data, &CertifyOptions::default()).unwrap();
    let d = reports[0].deployed.as_ref().unwrap();
    assert_eq!(d.predictor, DeployedPredictor::SvmSign);
    let (held, _) = parts(&data, 0.5, 0);
    let m = model
        .posterior()
        .unwrap()
        .predict(model.x_scaler.transform(held.x.as_ref()).unwrap().as_ref())
        .unwrap();
    let errors = m
        .mean
        .iter()
        .zip(&held.y)
        .filter(|(f, y)| (if **f >= 0.0 { 1.0 } else { -1.0 }) != **y)
        .count();
    assert_eq!((d.n, d.errors), (30, errors));
    check_tail_inversion(errors, 30, d.delta, d.value);
}

fn holdout_model() -> (FittedModel, Dataset, String) {
    let data = classes();
    let model = fit(
        MethodName::Laplace,
        FitOptions {
            certify_holdout: Some(0.3),
            ..Default::default()
        },
        &data,
    );
    let json = serde_json::to_string(&model).unwrap();
    (model, data, json)
}

fn edited(json: &str, edit: impl Fn(&mut serde_json::Value)) -> FittedModel {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    edit(&mut v);
    FittedModel::from_json(&v.to_string(), "edited").unwrap()
}

#[test]
fn another_sample_is_refused() {
    let (model, data, _) = holdout_model();
    let opts = CertifyOptions::default();
    // The fit rows alone, the sample with one value changed, the sample less a row.
    let (_, fitted) = parts(&data, 0.3, 0);
    let mut changed = data.clone();
    changed.y[7] = -changed.y[7];
    let fewer = data.subset(&(1..data.n()).collect::<Vec<_>>());
    for other in [fitted, changed, fewer] {
        assert!(matches!(
            model.certify(&other, &opts),
            Err(Error::NotTrainingSample { .. })
        ));
    }
    // The same rows in another order certify the same.
    let reversed = data.subset(&(0..data.n()).rev().collect::<Vec<_>>());
    assert_eq!(
        model.certify(&reversed, &opts).unwrap(),
        model.certify(&data, &opts).unwrap()
    );
}

#[test]
fn an_edited_split_is_refused() {
    let (_, data, json) = holdout_model();
    let opts = CertifyOptions::default();
    let refused = |m: FittedModel| match m.certify(&data, &opts) {
        Err(Error::ModelMismatch { part, .. }) => assert_eq!(part, "holdout record"),
        other => panic!("certified an edited split: {other:?}"),
    };
    refused(edited(&json, |v| v["holdout"]["seed"] = 5.into()));
    refused(edited(&json, |v| v["holdout"]["fraction"] = 0.4.into()));
    // Both records of the fraction edited alike: the split they give is another.
    refused(edited(&json, |v| {
        v["holdout"]["fraction"] = 0.4.into();
        v["spec"]["certify_holdout"] = 0.4.into();
    }));
    // Both seeds edited alike: the rows left to fit are not the model's.
    refused(edited(&json, |v| {
        v["holdout"]["seed"] = 9.into();
        v["spec"]["seed"] = 9.into();
    }));
    // The record removed, or the spec's fraction removed.
    refused(edited(&json, |v| {
        v.as_object_mut().unwrap().remove("holdout");
    }));
    refused(edited(&json, |v| {
        v["spec"].as_object_mut().unwrap().remove("certify_holdout");
    }));
    // A record whose sizes do not add up is refused on load.
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["holdout"]["n_holdout"] = 17.into();
    assert!(matches!(
        FittedModel::from_json(&v.to_string(), "edited"),
        Err(Error::ModelFile { .. })
    ));
}

#[test]
fn a_model_without_holdout_keeps_its_file_and_certificate() {
    let data = classes();
    let model = fit(MethodName::Laplace, FitOptions::default(), &data);
    let json = serde_json::to_string(&model).unwrap();
    assert!(!json.contains("holdout"));
    let reloaded = FittedModel::from_json(&json, "plain").unwrap();
    let opts = CertifyOptions::default();
    let a = model.certify(&data, &opts).unwrap();
    let b = reloaded.certify(&data, &opts).unwrap();
    assert_eq!(a, b);
    // No held-out rows: the deployed predictor's certificate is the derandomised one.
    let d = a[0].deployed.as_ref().unwrap();
    assert_eq!(d.bound, DeployedBound::Derandomised);
    assert!(d.derandomised.is_some());
    assert_eq!(a[0].certificate.delta, model.spec.delta);
}

#[test]
fn fractions_out_of_range_or_leaving_a_part_too_small_are_spec_errors() {
    let data = classes();
    for f in [0.0, 1.0, -0.2, 1.5, f64::NAN] {
        let err = FitOptions {
            certify_holdout: Some(f),
            ..Default::default()
        }
        .check(MethodName::Laplace)
        .unwrap_err();
        assert_eq!(err.option, SpecOption::CertifyHoldout, "F = {f}");
    }
    // 60 rows: F = 0.005 holds out none, F = 0.99 leaves one row to fit.
    for f in [0.005, 0.99] {
        let spec = FitOptions {
            certify_holdout: Some(f),
            ..Default::default()
        }
        .check(MethodName::Laplace)
        .unwrap();
        match pacgp::fit::fit(&spec, &data, None) {
            Err(Error::Spec(e)) => assert_eq!(e.option, SpecOption::CertifyHoldout),
            other => panic!("F = {f}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn default_epsilon_comes_from_the_fit_rows_only() {
    let data = sine();
    let given = FitOptions {
        certify_holdout: Some(0.3),
        seed: Some(4),
        ..Default::default()
    };
    let (with, _) = given
        .clone()
        .with_default_epsilon(MethodName::PacGp, &data)
        .unwrap();
    let (_, fitted) = parts(&data, 0.3, 4);
    let mean = fitted.y.iter().sum::<f64>() / fitted.n() as f64;
    let sd = (fitted.y.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / fitted.n() as f64).sqrt();
    let want = pacgp::spec::DEFAULT_EPSILON_SD * sd;
    assert!((with.epsilon.unwrap() - want).abs() <= 1e-12 * want);
}
