//! What scikit-learn's GP API needs from the library, against independent references: the
//! joint predictive covariance (its diagonal is the predictive variance of every posterior
//! form; for an exact GP it is `K** − K*X C⁻¹ KX*` written out), draws from it (their sample
//! covariance), the log marginal likelihood at any θ (the fitted value, an independent refit,
//! central differences), an SVM's dual (its decision function rebuilt from the kernel), and the
//! GP prior's predictive before any fit (the SE kernel's closed form, written out).

use faer::Mat;
use pacgp::data::{Dataset, LabelMap};
use pacgp::fit::fit;
use pacgp::kernel::Kernel;
use pacgp::linalg::{Cholesky, JitterPolicy};
use pacgp::model::{FittedModel, PriorPredictive, Task};
use pacgp::regression::exact::ExactGp;
use pacgp::spec::{FitOptions, MethodName, Selection};

mod common;
use common::{fit_vfe, toy_regression};

fn data(n: usize) -> Dataset {
    let (x, y) = toy_regression(n, 0);
    Dataset::new(x, y.iter().map(|v| 2.0 * v - 1.0).collect()).unwrap()
}

/// A sample of `n` rows labelled ±1 by thresholding the toy regression target at 0.3, and
/// its labels.
fn labelled(n: usize) -> (Dataset, Vec<f64>) {
    let (x, y) = toy_regression(n, 3);
    let labels: Vec<f64> = y
        .iter()
        .map(|v| if *v > 0.3 { 1.0 } else { -1.0 })
        .collect();
    (Dataset::new(x, labels.clone()).unwrap(), labels)
}

/// `method` fitted on `data` with the default options and `inducing` inducing inputs.
fn fit_with_inducing(method: MethodName, inducing: Option<usize>, data: &Dataset) -> FittedModel {
    let o = FitOptions {
        inducing,
        ..Default::default()
    };
    fit(&o.check(method).unwrap(), data, None).unwrap()
}

/// The regressors whose predictions are compared: an exact GP (site posterior) and VFE with
/// seven inducing inputs (whitened posterior).
const REGRESSORS: [(MethodName, Option<usize>); 2] =
    [(MethodName::Gpr, None), (MethodName::Vfe, Some(7))];

/// Diagonal of the joint covariance = the marginal variances, for the site (gpr), whitened
/// (vfe) and shifted-prior (svm: site form with zero precisions) posteriors; symmetric.
#[test]
fn joint_covariance_diagonal_is_the_marginal_variance() {
    let train = data(40);
    let (xs, _) = toy_regression(9, 300);
    for (method, inducing) in REGRESSORS {
        let model = fit_with_inducing(method, inducing, &train);
        let p = model.predict_regression(xs.as_ref()).unwrap();
        let (mean, cov) = model.predict_regression_cov(xs.as_ref()).unwrap();
        for i in 0..9 {
            assert!((mean[i] - p.mean[i]).abs() < 1e-12);
            assert!(
                (cov[(i, i)] - p.noisy_var[i]).abs() < 1e-10 * p.noisy_var[i],
                "{method}"
            );
            for j in 0..9 {
                assert_eq!(cov[(i, j)], cov[(j, i)]);
            }
        }
    }
}

/// The mean-only predictions (`predict` without `return_std`, a classifier's labels) are the
/// full predictions' means and labels to the bit, for the site (gpr, laplace), whitened (vfe,
/// svgp) and shifted-prior (svm) posteriors, over more than one block of 4096 rows; a
/// regressor has no labels and a classifier no regression mean.
#[test]
fn mean_only_predictions_are_the_full_predictions_means() {
    let train = data(40);
    let (xs, _) = toy_regression(4200, 300);
    for (method, inducing) in REGRESSORS {
        let model = fit_with_inducing(method, inducing, &train);
        let p = model.predict_regression(xs.as_ref()).unwrap();
        assert_eq!(model.predict_regression_mean(xs.as_ref()).unwrap(), p.mean);
        assert!(model.predict_labels(xs.as_ref()).is_err(), "{method}");
    }
    let labels = Dataset::new(
        train.x.clone(),
        train
            .y
            .iter()
            .map(|v| if *v > 0.0 { 1.0 } else { -1.0 })
            .collect(),
    )
    .unwrap();
    for (method, inducing) in [
        (MethodName::Laplace, None),
        (MethodName::Svm, None),
        (MethodName::Svgp, Some(6)),
    ] {
        let model = fit_with_inducing(method, inducing, &labels);
        let (_, m) = model.predict_classification(xs.as_ref()).unwrap();
        let want = model.labels_of(&m).unwrap();
        assert_eq!(model.predict_labels(xs.as_ref()).unwrap(), want, "{method}");
        assert!(want.contains(&1.0) && want.contains(&-1.0), "{method}");
        assert!(model.predict_regression_mean(xs.as_ref()).is_err());
    }
}

/// Exact GP: `K** − K*X (K + σ²I)⁻¹ KX*` formed densely with its own Cholesky.
#[test]
fn exact_joint_covariance_is_the_textbook_formula() {
    let (x, y) = toy_regression(30, 0);
    let (xs, _) = toy_regression(6, 100);
    let k = Kernel::se_ard(&[0.7, 1.5], 1.3);
    let noise = 0.1;
    let gp = ExactGp::fit(k.clone(), noise, x.clone(), y, &JitterPolicy::none()).unwrap();
    let cov = gp
        .posterior()
        .unwrap()
        .covariance(xs.as_ref(), xs.as_ref())
        .unwrap();
    let mut c = k.gram(x.as_ref()).unwrap();
    for i in 0..30 {
        c[(i, i)] += noise;
    }
    let chol = Cholesky::factor(c.as_ref(), &JitterPolicy::none(), "C").unwrap();
    let kxs = k.cross(x.as_ref(), xs.as_ref()).unwrap();
    let want = k.gram(xs.as_ref()).unwrap() - kxs.transpose() * chol.solve(kxs.as_ref());
    for i in 0..6 {
        for j in 0..6 {
            assert!((cov[(i, j)] - want[(i, j)]).abs() < 1e-12, "({i}, {j})");
        }
    }
}

/// 20,000 seeded draws: their mean and covariance are the predictive's to sampling error
/// (5 standard errors), the same seed gives the same draws, another seed others.
#[test]
fn draws_follow_the_joint_predictive() {
    let train = data(40);
    let (xs, _) = toy_regression(3, 500);
    let model = fit(
        &FitOptions::default().check(MethodName::Gpr).unwrap(),
        &train,
        None,
    )
    .unwrap();
    let (mean, cov) = model.predict_regression_cov(xs.as_ref()).unwrap();
    let n = 20_000;
    let (s, jitter) = model.sample_regression(xs.as_ref(), n, 7).unwrap();
    assert_eq!(jitter, 0.0);
    let m: Vec<f64> = (0..3)
        .map(|i| (0..n).map(|j| s[(i, j)]).sum::<f64>() / n as f64)
        .collect();
    for i in 0..3 {
        let se = (cov[(i, i)] / n as f64).sqrt();
        assert!((m[i] - mean[i]).abs() < 5.0 * se, "mean {i}");
        for k in 0..3 {
            let c = (0..n)
                .map(|j| (s[(i, j)] - m[i]) * (s[(k, j)] - m[k]))
                .sum::<f64>()
                / (n - 1) as f64;
            // sd of a sample covariance: √((Σ_ii Σ_kk + Σ_ik²)/n).
            let se = ((cov[(i, i)] * cov[(k, k)] + cov[(i, k)].powi(2)) / n as f64).sqrt();
            assert!((c - cov[(i, k)]).abs() < 5.0 * se, "cov ({i}, {k})");
        }
    }
    let (again, _) = model.sample_regression(xs.as_ref(), 2, 7).unwrap();
    let (other, _) = model.sample_regression(xs.as_ref(), 2, 8).unwrap();
    assert_eq!(again[(0, 1)], s[(0, 1)]);
    assert_ne!(other[(0, 0)], s[(0, 0)]);
}

/// The prior predictive before any fit: mean 0 and `σ_f² exp(−½ Σ_d (x_d − z_d)²/ℓ_d²) + σ²δ`
/// written out (to 1e-14), its variances the covariance's diagonal; draws are seeded and
/// their sample covariance is the prior's (20,000 draws, 5 standard errors); a negative or
/// NaN noise variance and inputs of the wrong width are errors.
#[test]
fn prior_predictive_is_the_kernel_plus_noise() {
    let (xs, _) = toy_regression(4, 700);
    let (ell, sf2, noise) = ([0.7, 1.5], 1.3, 0.2);
    let prior = PriorPredictive::new(Kernel::se_ard(&ell, sf2), noise).unwrap();
    let (mean, cov) = prior.mean_cov(xs.as_ref()).unwrap();
    let (mean_v, var) = prior.mean_var(xs.as_ref()).unwrap();
    assert_eq!(mean, vec![0.0; 4]);
    assert_eq!(mean_v, mean);
    for i in 0..4 {
        assert!((var[i] - cov[(i, i)]).abs() < 1e-14);
        for j in 0..4 {
            let r2: f64 = (0..2)
                .map(|d| ((xs[(i, d)] - xs[(j, d)]) / ell[d]).powi(2))
                .sum();
            let want = sf2 * (-0.5 * r2).exp() + if i == j { noise } else { 0.0 };
            assert!((cov[(i, j)] - want).abs() < 1e-14, "({i}, {j})");
        }
    }
    let n = 20_000;
    let (s, jitter) = prior.sample(xs.as_ref(), n, 3).unwrap();
    assert_eq!((s.nrows(), s.ncols(), jitter), (4, n, 0.0));
    for i in 0..4 {
        let m = (0..n).map(|j| s[(i, j)]).sum::<f64>() / n as f64;
        assert!(m.abs() < 5.0 * (cov[(i, i)] / n as f64).sqrt(), "mean {i}");
        for k in 0..4 {
            let c = (0..n).map(|j| s[(i, j)] * s[(k, j)]).sum::<f64>() / n as f64;
            let se = ((cov[(i, i)] * cov[(k, k)] + cov[(i, k)].powi(2)) / n as f64).sqrt();
            assert!((c - cov[(i, k)]).abs() < 5.0 * se, "cov ({i}, {k})");
        }
    }
    let (again, _) = prior.sample(xs.as_ref(), 1, 3).unwrap();
    assert_eq!(again[(2, 0)], s[(2, 0)]);
    for bad in [-1e-3, f64::NAN, f64::INFINITY] {
        assert!(PriorPredictive::new(Kernel::se_iso(1.0, 1.0), bad).is_err());
    }
    let wide = Mat::from_fn(3, 5, |i, j| (i + j) as f64);
    assert!(prior.mean_cov(wide.as_ref()).is_err());
    assert!(prior.mean_var(wide.as_ref()).is_err());
}

/// The log evidence at the model's parameters is the fitted objective; at other parameters it
/// is an independent fit's on the standardised sample; its gradient matches central
/// differences (h = 1e-5, tolerance 1e-5 relative).
#[test]
fn log_evidence_at_any_theta() {
    let train = data(35);
    let model = fit(
        &FitOptions::default().check(MethodName::Gpr).unwrap(),
        &train,
        None,
    )
    .unwrap();
    let own = model.log_evidence(None, false).unwrap().value;
    assert!((own - model.report.objective.unwrap()).abs() < 1e-8 * own.abs());
    let (p, names) = model.evidence_params().unwrap();
    assert_eq!(names.last().unwrap(), "ln_noise_variance");
    let q: Vec<f64> = p
        .iter()
        .enumerate()
        .map(|(i, v)| v + 0.3 - 0.2 * i as f64)
        .collect();
    let got = model.log_evidence(Some(&q), true).unwrap();
    let Task::Regression { y_scaler, .. } = &model.task else {
        panic!()
    };
    let x = model.x_scaler.transform(train.x.as_ref()).unwrap();
    let y = y_scaler.transform(&train.y);
    let mut k = model.posterior().unwrap().kernel().clone();
    k.set_params(&q[..q.len() - 1]).unwrap();
    let gp = ExactGp::fit(k, q[q.len() - 1].exp(), x, y, &Default::default()).unwrap();
    assert!((got.value - gp.log_marginal_likelihood()).abs() < 1e-8 * got.value.abs());
    let g = got.gradient.unwrap();
    let h = 1e-5;
    for i in 0..q.len() {
        let (mut a, mut b) = (q.clone(), q.clone());
        a[i] += h;
        b[i] -= h;
        let fd = (model.log_evidence(Some(&a), false).unwrap().value
            - model.log_evidence(Some(&b), false).unwrap().value)
            / (2.0 * h);
        assert!(
            (g[i] - fd).abs() < 1e-5 * (1.0 + fd.abs()),
            "∂/∂p_{i}: {} vs {fd}",
            g[i]
        );
    }
    // A sparse model has no evidence here; wrong lengths are refused.
    assert!(model.log_evidence(Some(&q[1..]), false).is_err());
    let vfe = fit_vfe(&train, 5);
    assert!(vfe.log_evidence(None, false).is_err());
}

/// A binary Laplace classifier's log evidence at the ML-II optimiser's last point is minus the
/// optimiser's value there (to Newton's tolerance: the optimiser's modes were warm-started); by
/// default it is at the model's own (snapped) θ; its gradient matches central differences
/// (h = 1e-5, tolerance 1e-5 relative); wrong lengths and other models are refused.
#[test]
fn classifier_log_evidence_at_any_theta() {
    let (train, labels) = labelled(40);
    let spec = FitOptions {
        select: Some(Selection::Ml2),
        kernel: Some("se-ard".into()),
        ..Default::default()
    }
    .check(MethodName::Laplace)
    .unwrap();
    let model = fit(&spec, &train, LabelMap::signs()).unwrap();
    let own = model.classifier_log_evidence(train.x.as_ref(), &labels, None, false);
    let own = own.unwrap().value;
    let optimiser = model.report.optimiser.as_ref().unwrap();
    let there = model
        .classifier_log_evidence(train.x.as_ref(), &labels, Some(&optimiser.params), false)
        .unwrap()
        .value;
    let fitted = -optimiser.value;
    assert!(
        (there - fitted).abs() < 1e-6 * fitted.abs(),
        "{there} vs {fitted}"
    );
    let at_own = model.kernel().params();
    let at_own = model.classifier_log_evidence(train.x.as_ref(), &labels, Some(&at_own), false);
    assert_eq!(own, at_own.unwrap().value);
    let q: Vec<f64> = model
        .kernel()
        .params()
        .iter()
        .enumerate()
        .map(|(i, v)| v + 0.3 - 0.2 * i as f64)
        .collect();
    let at = |p: &[f64], gradient: bool| {
        model
            .classifier_log_evidence(train.x.as_ref(), &labels, Some(p), gradient)
            .unwrap()
    };
    let g = at(&q, true).gradient.unwrap();
    let h = 1e-5;
    for i in 0..q.len() {
        let (mut a, mut b) = (q.clone(), q.clone());
        a[i] += h;
        b[i] -= h;
        let fd = (at(&a, false).value - at(&b, false).value) / (2.0 * h);
        assert!(
            (g[i] - fd).abs() < 1e-5 * (1.0 + fd.abs()),
            "∂/∂θ_{i}: {} vs {fd}",
            g[i]
        );
    }
    let x = train.x.as_ref();
    assert!(model
        .classifier_log_evidence(x, &labels, Some(&q[1..]), false)
        .is_err());
    let gpr = fit(
        &FitOptions::default().check(MethodName::Gpr).unwrap(),
        &data(35),
        None,
    )
    .unwrap();
    assert!(gpr
        .classifier_log_evidence(x, &labels, None, false)
        .is_err());
}

/// An SVM's decision is `Σ dual_coef_i k(x, x_sv) + b` with its prior kernel on standardised
/// inputs, its support vectors are training rows, and the coefficients' signs are the labels.
#[test]
fn svm_dual_rebuilds_the_decision() {
    // Not separable: a few labels flipped by a structured noise term.
    let (x, y) = common::toy_shifted(40, 0.01);
    let train = Dataset::new(x, y).unwrap();
    let (xs, _) = toy_regression(8, 200);
    for bias in [false, true] {
        let o = FitOptions {
            bias: Some(bias),
            c: Some(1.0),
            lengthscale: Some(1.0),
            ..Default::default()
        };
        let model = fit(&o.check(MethodName::Svm).unwrap(), &train, None).unwrap();
        let dual = model.svm_dual(train.x.as_ref()).unwrap();
        let xt = model.x_scaler.transform(train.x.as_ref()).unwrap();
        let xq = model.x_scaler.transform(xs.as_ref()).unwrap();
        let sv = Mat::from_fn(dual.support.len(), 2, |r, c| xt[(dual.support[r], c)]);
        let k = model
            .posterior()
            .unwrap()
            .kernel()
            .cross(xq.as_ref(), sv.as_ref())
            .unwrap();
        let got = model.svm_decision(xs.as_ref()).unwrap();
        for j in 0..8 {
            let f: f64 = (0..dual.support.len())
                .map(|r| k[(j, r)] * dual.dual_coef[r])
                .sum();
            assert!(
                (got[j] - (f + dual.intercept)).abs() < 1e-10,
                "bias {bias}, x_{j}"
            );
        }
        for (r, &i) in dual.support.iter().enumerate() {
            assert_eq!(dual.dual_coef[r].signum(), train.y[i]);
        }
        assert_eq!(dual.intercept == 0.0, !bias);
        assert!(model.svm_dual(xs.as_ref()).is_err());
    }
}

/// ML-II restarts of a classifier (scikit-learn's `n_restarts_optimizer`): the best run is
/// kept (its negative evidence at most the single run's), θ stays on the priced grid (the same
/// price), the count is stored in the spec, and restarts are refused where θ is not fitted by
/// ML-II's L-BFGS (mean field; laplace choosing among the fixed kernels).
#[test]
fn classifier_ml2_restarts_keep_the_best_run_on_the_grid() {
    use pacgp::model::CertifyOptions;
    use pacgp::spec::{LooRequest, SpecOption};
    let (train, _) = labelled(40);
    let fit_with = |restarts: Option<usize>| {
        let spec = FitOptions {
            kernel: Some("se-ard".into()),
            restarts,
            ..Default::default()
        }
        .check(MethodName::Laplace)
        .unwrap();
        fit(&spec, &train, LabelMap::signs()).unwrap()
    };
    let (one, more) = (fit_with(None), fit_with(Some(3)));
    let value = |m: &FittedModel| m.report.optimiser.as_ref().unwrap().value;
    assert!(
        value(&more) <= value(&one) + 1e-9,
        "{} > {}",
        value(&more),
        value(&one)
    );
    // Seeded: on this sample a restart's run wins (another point of the same basin), so the
    // restarts did run.
    let params = |m: &FittedModel| m.report.optimiser.as_ref().unwrap().params.clone();
    assert_ne!(params(&one), params(&more));
    let json = serde_json::to_string(&more.spec).unwrap();
    assert!(json.contains("\"restarts\":3"), "{json}");
    assert!(!serde_json::to_string(&one.spec)
        .unwrap()
        .contains("restarts"));
    let opts = CertifyOptions {
        loo: LooRequest::None,
        ..Default::default()
    };
    let price = |m: &FittedModel| m.certify(&train, &opts).unwrap()[0].certificate.penalty;
    assert_eq!(price(&more).to_bits(), price(&one).to_bits());
    for (method, select) in [
        (MethodName::MeanField, None),
        (MethodName::Laplace, Some(Selection::Bound)),
    ] {
        let err = FitOptions {
            restarts: Some(2),
            select,
            ..Default::default()
        }
        .check(method)
        .unwrap_err();
        assert_eq!(err.option, SpecOption::Restarts, "{method:?}");
    }
}
