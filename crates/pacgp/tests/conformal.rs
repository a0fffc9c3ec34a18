//! Prediction intervals: the closed-form leave-one-out at new inputs (the rank-one downdate)
//! equals N actual refits, for exact GP regression and for sparse regression at fixed Z; the
//! jackknife+ intervals of a fitted model equal jackknife+ computed from refits at its
//! parameters, to 1e-8; CV+ and split conformal hold the refitted fold models and their
//! scores; the record survives the model file and a damaged one is refused; the spec refuses
//! what does not apply.

use faer::Mat;
use pacgp::conformal::guarantee;
use pacgp::data::{Dataset, TargetScaler};
use pacgp::fit::fit;
use pacgp::kernel::Kernel;
use pacgp::linalg::JitterPolicy;
use pacgp::loo::LooDowndate;
use pacgp::model::IntervalRecord;
use pacgp::model::{FittedModel, Task};
use pacgp::regression::exact::ExactGp;
use pacgp::regression::sparse::{SparseGp, SparseMethod};
use pacgp::spec::{FitOptions, IntervalMethod, IntervalScore, MethodName, SpecOption};

mod common;
use common::{fit_vfe, rows, toy_regression, vfe_and_fitc};

/// Leave-one-out by refits: for every i, `refit(rows without i)` predicts (mean, noisy
/// variance) at `[x_i; xs]`.
struct Refits {
    residual: Vec<f64>,
    var: Vec<f64>,
    mean_at: Mat<f64>,
    var_at: Mat<f64>,
}

fn refits(
    x: &Mat<f64>,
    y: &[f64],
    xs: &Mat<f64>,
    predict: impl Fn(Mat<f64>, Vec<f64>, Mat<f64>) -> (Vec<f64>, Vec<f64>),
) -> Refits {
    let n = y.len();
    let mut out = Refits {
        residual: vec![0.0; n],
        var: vec![0.0; n],
        mean_at: Mat::zeros(n, xs.nrows()),
        var_at: Mat::zeros(n, xs.nrows()),
    };
    for i in 0..n {
        let keep: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        let at = Mat::from_fn(1 + xs.nrows(), x.ncols(), |r, c| {
            if r == 0 {
                x[(i, c)]
            } else {
                xs[(r - 1, c)]
            }
        });
        let yk = keep.iter().map(|&j| y[j]).collect();
        let (m, v) = predict(rows(x, &keep), yk, at);
        out.residual[i] = y[i] - m[0];
        out.var[i] = v[0];
        for j in 0..xs.nrows() {
            out.mean_at[(i, j)] = m[j + 1];
            out.var_at[(i, j)] = v[j + 1];
        }
    }
    out
}

fn assert_matches(d: &LooDowndate, r: &Refits, xs: &Mat<f64>, tol: f64) {
    for i in 0..r.residual.len() {
        let t = &d.training;
        assert!((t.residual[i] - r.residual[i]).abs() < tol, "residual {i}");
        assert!((t.var[i] - r.var[i]).abs() < tol * r.var[i], "variance {i}");
    }
    let at = d.at(xs.as_ref()).unwrap();
    for i in 0..r.residual.len() {
        for j in 0..xs.nrows() {
            assert!(
                (at.mean[(i, j)] - r.mean_at[(i, j)]).abs() < tol,
                "μ_−{i}(x_{j})"
            );
            let v = r.var_at[(i, j)];
            assert!((at.var[(i, j)] - v).abs() < tol * v, "σ²_−{i}(x_{j})");
        }
    }
}

/// Exact GP: `μ_{−i}(x)`, `σ²_{−i}(x)` from the downdate are those of the GP refitted on the
/// other N − 1 points (at the same θ, σ²), to 1e-9.
#[test]
fn exact_downdate_equals_refits() {
    let (x, y) = toy_regression(40, 0);
    let (xs, _) = toy_regression(9, 500);
    let kernel = Kernel::se_ard(&[0.8, 1.3], 1.2);
    for noise in [0.02, 0.4] {
        let gp = common::exact_fit(&kernel, noise, &x, &y);
        let post = gp.posterior().unwrap();
        let d = LooDowndate::exact(&post, noise).unwrap();
        let r = refits(&x, &y, &xs, |xk, yk, at| {
            let g = ExactGp::fit(kernel.clone(), noise, xk, yk, &JitterPolicy::none()).unwrap();
            let p = g.predict(at.as_ref()).unwrap();
            (p.mean, p.noisy_var)
        });
        assert_matches(&d, &r, &xs, 1e-9);
    }
}

/// Sparse regression at fixed (θ, σ², Z): the downdate equals the sparse posterior refitted
/// without point i, for VFE (α_s = 0) and FITC (α_s = 1), to 1e-9.
#[test]
fn sparse_downdate_equals_refits() {
    let (x, y) = toy_regression(45, 3);
    let (xs, _) = toy_regression(7, 700);
    let z = rows(&x, &[0, 5, 11, 17, 23, 31, 38]);
    for gp in vfe_and_fitc(&z) {
        let method = gp.method;
        let post = gp.posterior(x.as_ref(), &y).unwrap();
        let d = LooDowndate::sparse(&post, 0.05, method.alpha_s(), x.as_ref(), &y).unwrap();
        let r = refits(&x, &y, &xs, |xk, yk, at| {
            let p = gp.posterior(xk.as_ref(), &yk).unwrap();
            let m = p.predict(at.as_ref()).unwrap();
            (m.mean, m.var.iter().map(|v| v + 0.05).collect())
        });
        assert_matches(&d, &r, &xs, 1e-9);
        // Another sample than the posterior's is refused.
        let mut y2 = y.clone();
        y2[3] += 1.0;
        let e = LooDowndate::sparse(&post, 0.05, method.alpha_s(), x.as_ref(), &y2).unwrap_err();
        assert!(matches!(e, pacgp::Error::ModelMismatch { .. }), "{e}");
    }
}

/// The k-th smallest and the (n+1−k)-th smallest, by sorting (an independent order statistic).
fn jackknife_plus_by_sorting(lo: &[f64], hi: &[f64], alpha: f64) -> (f64, f64) {
    let n = lo.len();
    let k = (alpha * (n as f64 + 1.0) + 1e-9).floor() as usize;
    let (mut lo, mut hi) = (lo.to_vec(), hi.to_vec());
    lo.sort_by(f64::total_cmp);
    hi.sort_by(f64::total_cmp);
    (lo[k - 1], hi[n - k])
}

fn data(n: usize, offset: usize) -> Dataset {
    let (x, y) = toy_regression(n, offset);
    // Targets on another scale than the standardised one, so unscaling is exercised.
    Dataset::new(x, y.iter().map(|v| 3.0 * v + 10.0).collect()).unwrap()
}

fn options(intervals: IntervalMethod, score: IntervalScore) -> FitOptions {
    FitOptions {
        intervals: Some(intervals),
        interval_score: Some(score),
        ..Default::default()
    }
}

/// Jackknife+ by N refits of a fitted model at its stored parameters (standardised scale),
/// in the target's units.
fn refit_jackknife_plus(
    model: &FittedModel,
    train: &Dataset,
    test: &Mat<f64>,
    score: IntervalScore,
    alpha: f64,
) -> (Vec<f64>, Vec<f64>) {
    let Task::Regression {
        noise_variance,
        y_scaler,
        ..
    } = &model.task
    else {
        panic!("a regressor")
    };
    let noise = *noise_variance;
    let x = model.x_scaler.transform(train.x.as_ref()).unwrap();
    let y = y_scaler.transform(&train.y);
    let xs = model.x_scaler.transform(test.as_ref()).unwrap();
    let post = model.posterior().unwrap();
    let r = refits(&x, &y, &xs, |xk, yk, at| {
        if post.n_basis() == train.n() {
            let g =
                ExactGp::fit(post.kernel().clone(), noise, xk, yk, &JitterPolicy::none()).unwrap();
            let p = g.predict(at.as_ref()).unwrap();
            (p.mean, p.noisy_var)
        } else {
            let gp = SparseGp {
                kernel: post.kernel().clone(),
                noise_variance: noise,
                z: post.basis.clone(),
                method: SparseMethod::Vfe,
            };
            let m = gp
                .posterior(xk.as_ref(), &yk)
                .unwrap()
                .predict(at.as_ref())
                .unwrap();
            (m.mean, m.var.iter().map(|v| v + noise).collect())
        }
    });
    let n = y.len();
    let spread = |v: f64| match score {
        IntervalScore::GpStd => v.sqrt(),
        _ => 1.0,
    };
    let scores: Vec<f64> = (0..n)
        .map(|i| r.residual[i].abs() / spread(r.var[i]))
        .collect();
    let ys: &TargetScaler = y_scaler;
    (0..xs.nrows())
        .map(|j| {
            let lo: Vec<f64> = (0..n)
                .map(|i| r.mean_at[(i, j)] - scores[i] * spread(r.var_at[(i, j)]))
                .collect();
            let hi: Vec<f64> = (0..n)
                .map(|i| r.mean_at[(i, j)] + scores[i] * spread(r.var_at[(i, j)]))
                .collect();
            let (l, h) = jackknife_plus_by_sorting(&lo, &hi, alpha);
            (ys.unscale_mean(l), ys.unscale_mean(h))
        })
        .unzip()
}

/// A fitted gpr and vfe model's jackknife+ intervals are jackknife+ by N refits at the
/// model's parameters, to 1e-8 (absolute and gp-std scores, two levels).
#[test]
fn jackknife_plus_of_fitted_models_equals_refits() {
    let train = data(50, 0);
    let test = toy_regression(12, 900).0;
    for (method, extra) in [(MethodName::Gpr, None), (MethodName::Vfe, Some(8))] {
        for score in [IntervalScore::Absolute, IntervalScore::GpStd] {
            let mut o = options(IntervalMethod::JackknifePlus, score);
            o.inducing = extra;
            let model = fit(&o.check(method).unwrap(), &train, None).unwrap();
            for alpha in [0.1, 0.2] {
                let got = model.predict_intervals(test.as_ref(), alpha).unwrap();
                let (lo, hi) = refit_jackknife_plus(&model, &train, &test, score, alpha);
                for j in 0..test.nrows() {
                    assert!(
                        (got.lower[j] - lo[j]).abs() < 1e-8,
                        "{method} {score} lower {j}"
                    );
                    assert!(
                        (got.upper[j] - hi[j]).abs() < 1e-8,
                        "{method} {score} upper {j}"
                    );
                    assert!(got.lower[j] < got.upper[j]);
                }
                let s = &got.statement;
                assert_eq!((s.method.as_str(), s.n_scores), ("jackknife+", 50));
                assert!((s.guaranteed_coverage - (1.0 - 2.0 * alpha)).abs() < 1e-12);
            }
        }
    }
}

/// CV+: every fold model is the whole fit on the other folds (a fit of the spec without
/// intervals on those rows gives the same predictions), every point's score is its fold
/// model's residual, and the intervals are the plus-quantiles of the fold predictions.
#[test]
fn cv_plus_holds_the_fold_refits() {
    let train = data(36, 1);
    let test = toy_regression(5, 300).0;
    let spec = options(IntervalMethod::CvPlus { folds: 4 }, IntervalScore::Absolute)
        .check(MethodName::Gpr)
        .unwrap();
    let model = fit(&spec, &train, None).unwrap();
    let record = common::interval_record(&model);
    let IntervalRecord::CvPlus {
        folds,
        fold_of,
        scores,
    } = record
    else {
        panic!("CV+")
    };
    assert_eq!(folds.len(), 4);
    // The folds: a seeded 4-fold split of the rows in their canonical order (the fit is
    // symmetric in its points up to the optimiser's tolerance, so the refit below keeps the
    // record's row order to compare to round-off).
    let order = pacgp::data::canonical_order(&train);
    let splits = pacgp::data::k_fold(36, 4, 0).unwrap();
    for (f, fold) in folds.iter().enumerate() {
        let held: Vec<usize> = (0..36).filter(|&i| fold_of[i] == f).collect();
        let rest: Vec<usize> = splits[f].0.iter().map(|&i| order[i]).collect();
        let mut want_held: Vec<usize> = splits[f].1.iter().map(|&i| order[i]).collect();
        want_held.sort_unstable();
        assert_eq!(held, want_held);
        assert!((8..=10).contains(&held.len()));
        let again = fit(&spec.without_intervals(), &train.subset(&rest), None).unwrap();
        let (m1, _) = fold.predict(train.x.as_ref()).unwrap();
        let m2 = again.predict_regression(train.x.as_ref()).unwrap().mean;
        for i in 0..36 {
            assert!(
                (m1[i] - m2[i]).abs() < 1e-10,
                "fold {f} point {i}: {} {}",
                m1[i],
                m2[i]
            );
        }
        for &i in &held {
            assert!((scores[i] - (train.y[i] - m1[i]).abs()).abs() < 1e-12);
        }
    }
    let alpha = 0.2;
    let got = model.predict_intervals(test.as_ref(), alpha).unwrap();
    let preds: Vec<Vec<f64>> = folds
        .iter()
        .map(|f| f.predict(test.as_ref()).unwrap().0)
        .collect();
    for j in 0..test.nrows() {
        let lo: Vec<f64> = (0..36).map(|i| preds[fold_of[i]][j] - scores[i]).collect();
        let hi: Vec<f64> = (0..36).map(|i| preds[fold_of[i]][j] + scores[i]).collect();
        let (l, h) = jackknife_plus_by_sorting(&lo, &hi, alpha);
        assert!((got.lower[j] - l).abs() < 1e-12 && (got.upper[j] - h).abs() < 1e-12);
    }
    let g = guarantee(IntervalMethod::CvPlus { folds: 4 }, alpha, 36);
    assert!((got.statement.guaranteed_coverage - g).abs() < 1e-12 && g < 1.0 - 2.0 * alpha);
}

/// Split conformal: part B's scores and the model of part A; the half-width is the
/// ⌈(1−α)(n_B+1)⌉-th smallest score times the predictive sd (gp-std).
#[test]
fn split_conformal_holds_part_a_and_part_b_scores() {
    let train = data(40, 2);
    let test = toy_regression(6, 400).0;
    let spec = options(
        IntervalMethod::SplitConformal { fraction: 0.5 },
        IntervalScore::GpStd,
    )
    .check(MethodName::Gpr)
    .unwrap();
    let model = fit(&spec, &train, None).unwrap();
    let record = common::interval_record(&model);
    let IntervalRecord::SplitConformal { part_a, scores } = record else {
        panic!("split conformal")
    };
    assert_eq!(scores.len(), 20);
    let (a, b) = pacgp::data::SampleSplit::new(0.5, 0).parts(&train).unwrap();
    let again = fit(&spec.without_intervals(), &train.subset(&a), None).unwrap();
    let held = train.subset(&b);
    let p = again.predict_regression(held.x.as_ref()).unwrap();
    let mut want: Vec<f64> = (0..20)
        .map(|i| (held.y[i] - p.mean[i]).abs() / p.noisy_var[i].sqrt())
        .collect();
    for (s, w) in scores.iter().zip(&want) {
        assert!((s - w).abs() < 1e-10);
    }
    want.sort_by(f64::total_cmp);
    let alpha = 0.1;
    let q = want[((1.0 - alpha) * 21.0_f64 - 1e-9).ceil() as usize - 1];
    let got = model.predict_intervals(test.as_ref(), alpha).unwrap();
    let (mean, sd) = part_a.predict(test.as_ref()).unwrap();
    for j in 0..test.nrows() {
        assert!((got.lower[j] - (mean[j] - q * sd[j])).abs() < 1e-10);
        assert!((got.upper[j] - (mean[j] + q * sd[j])).abs() < 1e-10);
    }
    assert!((got.statement.guaranteed_coverage - 0.9).abs() < 1e-12);
    // α below 1/(n_B + 1) would give an infinite interval: refused.
    assert!(model.predict_intervals(test.as_ref(), 0.04).is_err());
}

/// The record survives the model file; a damaged record and a spec whose
/// intervals the record does not hold are refused on load; a model without intervals says
/// how to get them.
#[test]
fn record_round_trips_and_is_validated() {
    let train = data(30, 4);
    let test = toy_regression(4, 600).0;
    for (method, iv, inducing) in [
        (MethodName::Gpr, IntervalMethod::JackknifePlus, None),
        (MethodName::Dtc, IntervalMethod::JackknifePlus, Some(6)),
        (MethodName::Gpr, IntervalMethod::CvPlus { folds: 3 }, None),
    ] {
        let mut o = options(iv, IntervalScore::Absolute);
        o.inducing = inducing;
        let model = fit(&o.check(method).unwrap(), &train, None).unwrap();
        let text = serde_json::to_string(&model).unwrap();
        let back = FittedModel::from_json(&text, "model").unwrap();
        let (a, b) = (
            model.predict_intervals(test.as_ref(), 0.25).unwrap(),
            back.predict_intervals(test.as_ref(), 0.25).unwrap(),
        );
        // The site form refactors its B on load: equal to round-off.
        for j in 0..test.nrows() {
            assert!((a.lower[j] - b.lower[j]).abs() < 1e-10 * (1.0 + a.lower[j].abs()));
            assert!((a.upper[j] - b.upper[j]).abs() < 1e-10 * (1.0 + a.upper[j].abs()));
        }
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["spec"]["intervals"] = serde_json::Value::Null;
        let e = FittedModel::from_json(&v.to_string(), "model").unwrap_err();
        assert!(e.to_string().contains("interval record"), "{e}");
    }
    // An exact GP fitted without intervals has jackknife+ (gp-std) by default: its
    // leave-one-out is free. The intervals are those of a fit that asked for them, to the bit.
    let plain = fit(
        &FitOptions::default().check(MethodName::Gpr).unwrap(),
        &train,
        None,
    )
    .unwrap();
    let asked = fit(
        &options(IntervalMethod::JackknifePlus, IntervalScore::GpStd)
            .check(MethodName::Gpr)
            .unwrap(),
        &train,
        None,
    )
    .unwrap();
    let (a, b) = (
        plain.predict_intervals(test.as_ref(), 0.1).unwrap(),
        asked.predict_intervals(test.as_ref(), 0.1).unwrap(),
    );
    assert_eq!((a.lower, a.upper), (b.lower, b.upper));
    // A sparse regressor's jackknife+ needs its training rows stored: without intervals it
    // says how to get them.
    let sparse = fit_vfe(&train, 6);
    let e = sparse.predict_intervals(test.as_ref(), 0.1).unwrap_err();
    assert!(e.to_string().contains("intervals"), "{e}");
    // A sparse record whose sample lost a row, and a negative CV+ score.
    let model = fit(
        &options(IntervalMethod::JackknifePlus, IntervalScore::Absolute)
            .check(MethodName::Vfe)
            .unwrap(),
        &train,
        None,
    )
    .unwrap();
    let mut v: serde_json::Value = serde_json::to_value(&model).unwrap();
    v["task"]["intervals"]["sample"]["y"]
        .as_array_mut()
        .unwrap()
        .pop();
    assert!(FittedModel::from_json(&v.to_string(), "model").is_err());
}

/// What does not apply is refused by the spec, naming the option.
#[test]
fn spec_refuses_what_does_not_apply() {
    let err = |o: FitOptions, m: MethodName| o.check(m).unwrap_err();
    let e = err(
        options(IntervalMethod::CvPlus { folds: 5 }, IntervalScore::Lac),
        MethodName::Sogp,
    );
    assert_eq!(e.option, SpecOption::Intervals);
    // laplace, ivm and sogp take jackknife+ sets, with a classifier's score.
    for method in [MethodName::Laplace, MethodName::Ivm, MethodName::Sogp] {
        let e = err(
            options(IntervalMethod::JackknifePlus, IntervalScore::Absolute),
            method,
        );
        assert_eq!(e.option, SpecOption::IntervalScore, "{method}");
    }
    let mut o = options(IntervalMethod::JackknifePlus, IntervalScore::Absolute);
    o.epsilon = Some(1.0);
    o.prior = Some(pacgp::objective::gp_split::SplitFraction::Fixed(0.5));
    assert_eq!(err(o, MethodName::PacGp).option, SpecOption::Intervals);
    let e = err(
        options(IntervalMethod::CvPlus { folds: 1 }, IntervalScore::Absolute),
        MethodName::Gpr,
    );
    assert!(e.to_string().contains("K ≥ 2"), "{e}");
    let o = FitOptions {
        interval_score: Some(IntervalScore::GpStd),
        ..Default::default()
    };
    assert_eq!(err(o, MethodName::Gpr).option, SpecOption::IntervalScore);
    // More folds than rows: refused when the sample is seen.
    let spec = options(
        IntervalMethod::CvPlus { folds: 50 },
        IntervalScore::Absolute,
    )
    .check(MethodName::Gpr)
    .unwrap();
    let e = fit(&spec, &data(20, 0), None).unwrap_err();
    assert!(e.to_string().contains("K ≤ N = 20"), "{e}");
}
