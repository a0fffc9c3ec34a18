//! Exact GP regression with the noise fixed or given per row (`λᵢ = σ² + aᵢ`, scikit-learn's
//! `alpha`) and with a kernel kept as given: the posterior, the evidence and its gradient, and
//! the leave-one-out downdate against dense formulas written out here and against refits
//! without the rows left out; end to end through the fit spec, `certify` and the model file.

use faer::Mat;
use pacgp::data::Dataset;
use pacgp::fit::fit;
use pacgp::gradcheck::{assert_objective_gradient, Tolerance};
use pacgp::kernel::Kernel;
use pacgp::linalg::{Cholesky, JitterPolicy};
use pacgp::loo::LooDowndate;
use pacgp::model::{CertifyOptions, FittedModel, Task};
use pacgp::optim::Objective;
use pacgp::regression::exact::{ExactGp, NegLogMarginalLikelihood, RowNoise};
use pacgp::spec::{FitOptions, LooRequest, MethodName, SpecOption};
use pacgp::Error;

mod common;
use common::toy_regression;

fn kernel() -> Kernel {
    Kernel::se_ard(&[0.9, 1.4], 1.2)
}

/// Known variances that differ from row to row.
fn known(n: usize) -> Vec<f64> {
    (0..n).map(|i| 0.01 * (1 + i % 5) as f64).collect()
}

/// `C = K + diag(σ² + a)` written out, and its factor.
fn dense_c(k: &Kernel, x: &Mat<f64>, sigma2: f64, a: &[f64]) -> Cholesky {
    let mut c = k.gram(x.as_ref()).unwrap();
    for i in 0..x.nrows() {
        c[(i, i)] += sigma2 + a[i];
    }
    Cholesky::factor(c.as_ref(), &JitterPolicy::none(), "C").unwrap()
}

/// The posterior mean `K*ᵀC⁻¹y` and latent variance `k** − K*ᵀC⁻¹K*` by the textbook
/// formulas (GPML eq. 2.25–2.26 with a diagonal noise).
fn dense_predict(
    c: &Cholesky,
    k: &Kernel,
    x: &Mat<f64>,
    y: &[f64],
    xs: &Mat<f64>,
) -> (Vec<f64>, Vec<f64>) {
    let ks = k.cross(x.as_ref(), xs.as_ref()).unwrap();
    let alpha = c.solve_vec(y);
    let mut v = ks.clone();
    c.solve_in_place(v.as_mut());
    let kss = k.diag(xs.as_ref());
    let mean = (0..xs.nrows())
        .map(|j| (0..x.nrows()).map(|i| ks[(i, j)] * alpha[i]).sum())
        .collect();
    let var = (0..xs.nrows())
        .map(|j| kss[j] - (0..x.nrows()).map(|i| ks[(i, j)] * v[(i, j)]).sum::<f64>())
        .collect();
    (mean, var)
}

/// The exact GP with noise σ² and known variances `a` on `(x, y)`, without jitter.
fn fit_known(sigma2: f64, a: &[f64], x: &Mat<f64>, y: &[f64]) -> ExactGp {
    let none = JitterPolicy::none();
    ExactGp::fit_with_known_noise(kernel(), sigma2, a.to_vec(), x.clone(), y.to_vec(), &none)
        .unwrap()
}

/// `−½yᵀC⁻¹y − ½ln|C| − (N/2)ln 2π` from the factor of `C` (GPML eq. 2.30).
fn dense_lml(c: &Cholesky, y: &[f64]) -> f64 {
    let alpha = c.solve_vec(y);
    let quad: f64 = y.iter().zip(&alpha).map(|(u, v)| u * v).sum();
    -0.5 * quad - 0.5 * c.ln_det() - 0.5 * y.len() as f64 * (2.0 * std::f64::consts::PI).ln()
}

fn close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (u, v)) in a.iter().zip(b).enumerate() {
        assert!(
            (u - v).abs() <= tol * (1.0 + v.abs()),
            "{what}[{i}]: {u} vs {v}"
        );
    }
}

/// The site form with `πᵢ = 1/(σ² + aᵢ)` predicts as the dense formulas, and its evidence is
/// `−½yᵀC⁻¹y − ½ln|C| − (N/2)ln 2π`; with σ² = 0 the known variances alone are the noise.
#[test]
fn per_row_noise_posterior_and_evidence_match_the_dense_formulas() {
    let (x, y) = toy_regression(30, 0);
    let (xs, _) = toy_regression(9, 400);
    let a = known(30);
    for sigma2 in [0.02, 0.0] {
        let gp = fit_known(sigma2, &a, &x, &y);
        let c = dense_c(&kernel(), &x, sigma2, &a);
        let (mean, var) = dense_predict(&c, &kernel(), &x, &y, &xs);
        let m = gp.posterior().unwrap().predict(xs.as_ref()).unwrap();
        close(&m.mean, &mean, 1e-10, "mean");
        close(&m.var, &var, 1e-10, "latent variance");
        let lml = dense_lml(&c, &y);
        close(&[gp.log_marginal_likelihood()], &[lml], 1e-12, "evidence");
    }
}

/// The evidence's gradient in `[θ…, ln σ²]` with known variances, and in `[θ…]` with σ² kept
/// fixed, against central differences.
#[test]
fn evidence_gradient_with_known_variances_matches_central_differences() {
    let (x, y) = toy_regression(30, 0);
    for fixed in [None, Some(0.03), Some(0.0)] {
        let noise = RowNoise {
            fixed,
            known: known(30),
        };
        let obj = NegLogMarginalLikelihood::new(&kernel(), x.as_ref(), &y, JitterPolicy::none())
            .with_noise(noise);
        let mut p0 = kernel().params();
        if fixed.is_none() {
            p0.push(0.05f64.ln());
        }
        assert_eq!(obj.dim(), p0.len());
        let (_, g) = obj.value_and_gradient(&p0).unwrap();
        assert_eq!(g.len(), p0.len());
        let what = format!("NLML, σ² fixed at {fixed:?}");
        assert_objective_gradient(&obj, &p0, 1e-5, Tolerance::mixed(1e-6), &what);
    }
}

/// The downdate of a model with per-row noise: at the training inputs, the residual and the
/// predictive variance of `yᵢ` (noise `λᵢ` included) of a refit without row i; at new inputs,
/// that refit's mean and latent variance plus σ². A row copied twice is left out with its copy.
#[test]
fn leave_one_out_with_per_row_noise_matches_refits() {
    let (x0, y0) = toy_regression(20, 0);
    // Row 20 copies row 3's input (another target): the pair is a group.
    let x = Mat::from_fn(21, 2, |i, j| x0[(if i == 20 { 3 } else { i }, j)]);
    let mut y = y0.clone();
    y.push(y0[3] + 0.2);
    let a = known(21);
    let sigma2 = 0.01;
    let (xs, _) = toy_regression(5, 300);
    let gp = fit_known(sigma2, &a, &x, &y);
    let post = gp.posterior().unwrap();
    let groups = vec![vec![3, 20]];
    let loo = LooDowndate::exact_by_groups(&post, sigma2, &groups).unwrap();
    let at = loo.at(xs.as_ref()).unwrap();
    for i in 0..21 {
        let out: Vec<usize> = if i == 3 || i == 20 {
            vec![3, 20]
        } else {
            vec![i]
        };
        let keep: Vec<usize> = (0..21).filter(|r| !out.contains(r)).collect();
        let xk = Mat::from_fn(keep.len(), 2, |r, j| x[(keep[r], j)]);
        let yk: Vec<f64> = keep.iter().map(|&r| y[r]).collect();
        let ak: Vec<f64> = keep.iter().map(|&r| a[r]).collect();
        let c = dense_c(&kernel(), &xk, sigma2, &ak);
        let xi = Mat::from_fn(1, 2, |_, j| x[(i, j)]);
        let (m, v) = dense_predict(&c, &kernel(), &xk, &yk, &xi);
        let what = format!("row {i}");
        close(
            &[loo.training.residual[i]],
            &[y[i] - m[0]],
            1e-8,
            &format!("{what} residual"),
        );
        close(
            &[loo.training.var[i]],
            &[v[0] + sigma2 + a[i]],
            1e-8,
            &format!("{what} variance"),
        );
        let (ms, vs) = dense_predict(&c, &kernel(), &xk, &yk, &xs);
        for j in 0..xs.nrows() {
            close(
                &[at.mean[(i, j)]],
                &[ms[j]],
                1e-8,
                &format!("{what}, test point {j}, mean"),
            );
            close(
                &[at.var[(i, j)]],
                &[vs[j] + sigma2],
                1e-8,
                &format!("{what}, test point {j}, variance"),
            );
        }
    }
}

fn data() -> Dataset {
    let (x, y) = toy_regression(40, 0);
    Dataset::new(x, y.iter().map(|v| 3.0 * v + 10.0).collect()).unwrap()
}

fn gpr(o: FitOptions) -> pacgp::Result<FittedModel> {
    let spec = o.check(MethodName::Gpr)?;
    fit(&spec, &data(), None)
}

fn certify(model: &FittedModel) -> pacgp::model::CertificateReport {
    let opts = CertifyOptions {
        epsilons: vec![1.0],
        loo: LooRequest::None,
        ..Default::default()
    };
    model.certify(&data(), &opts).unwrap().remove(0)
}

/// θ kept as given, σ² fixed at 0 and one known variance for every row: the model is the
/// exact GP on the inputs as given (no input scaling) and the standardised targets at exactly
/// those values; it prices nothing, certifies the same after a round trip through its file,
/// and its evidence is over `[θ…]` alone and equals the model's.
#[test]
fn kernel_kept_as_given_with_known_noise_fits_nothing_and_prices_nothing() {
    let theta = vec![0.3, -0.2, 0.1];
    let model = gpr(FitOptions {
        kernel: Some("se-ard".into()),
        kernel_params: Some(theta.clone()),
        noise: Some(0.0),
        alpha: Some(vec![0.05]),
        epsilon: Some(1.0),
        ..Default::default()
    })
    .unwrap();
    assert!(model.x_scaler.mean.iter().all(|m| *m == 0.0));
    assert!(model.x_scaler.sd.iter().all(|s| *s == 1.0));
    let post = model.posterior().unwrap();
    assert_eq!(post.kernel().params(), theta);
    let Task::Regression {
        y_scaler,
        noise_variance,
        ..
    } = &model.task
    else {
        panic!("a regressor");
    };
    assert_eq!(*noise_variance, 0.0);
    let train = data();
    let ys = y_scaler.transform(&train.y);
    let (xs, _) = toy_regression(7, 200);
    let mut k = Kernel::from_spec("se-ard", 2).unwrap();
    k.set_params(&theta).unwrap();
    let c = dense_c(&k, &train.x, 0.0, &[0.05; 40]);
    let (mean, var) = dense_predict(&c, &k, &train.x, &ys, &xs);
    let m = post.predict(xs.as_ref()).unwrap();
    close(&m.mean, &mean, 1e-10, "mean");
    close(&m.var, &var, 1e-10, "variance");

    let cert = certify(&model);
    assert!(
        cert.certificate.penalty_terms.is_empty(),
        "{:?}",
        cert.certificate.penalty_terms
    );
    assert!(cert.certificate.bound > cert.certificate.empirical_risk);
    let json = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&json, "m.json").unwrap();
    // The file keeps √π and refactors B on load (other rounding than the fit's ΠL).
    let again = certify(&back).certificate.bound;
    close(
        &[again],
        &[cert.certificate.bound],
        1e-12,
        "bound after a round trip",
    );

    let (params, names) = model.evidence_params().unwrap();
    assert_eq!(params, theta, "{names:?}");
    let lml = dense_lml(&c, &ys);
    close(
        &[model.log_evidence(None, false).unwrap().value],
        &[lml],
        1e-9,
        "evidence",
    );
}

/// A kernel moved off the values the spec keeps is refused by `certify`.
#[test]
fn a_kept_kernel_edited_in_the_file_is_refused() {
    let model = gpr(FitOptions {
        kernel_params: Some(vec![0.0, 0.0, 0.0]),
        noise: Some(0.1),
        epsilon: Some(1.0),
        ..Default::default()
    })
    .unwrap();
    let json = serde_json::to_string(&model).unwrap().replacen(
        "\"kernel_params\":[0.0,0.0,0.0]",
        "\"kernel_params\":[0.0,0.0,0.5]",
        1,
    );
    let edited = FittedModel::from_json(&json, "m.json").unwrap();
    let err = edited
        .certify(
            &data(),
            &CertifyOptions {
                epsilons: vec![1.0],
                loo: LooRequest::None,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(matches!(err, Error::ModelMismatch { .. }), "{err}");
}

/// ML-II with σ² kept fixed moves θ only; with known variances on top of a fitted σ² the fit
/// completes and its noise is σ² alone; without `normalize_y` the targets are fitted as given
/// (a constant target too).
#[test]
fn fixed_noise_known_variances_and_unscaled_targets() {
    let fixed = gpr(FitOptions {
        noise: Some(0.05),
        ..Default::default()
    })
    .unwrap();
    let Task::Regression { noise_variance, .. } = &fixed.task else {
        panic!()
    };
    assert_eq!(*noise_variance, 0.05);
    let opt = fixed.report.optimiser.as_ref().unwrap();
    assert!(opt.evaluations > 1);

    let with_known = gpr(FitOptions {
        alpha: Some(known(40)),
        ..Default::default()
    })
    .unwrap();
    let Task::Regression { noise_variance, .. } = &with_known.task else {
        panic!()
    };
    assert!(*noise_variance > 0.0);

    let raw = gpr(FitOptions {
        normalize_y: Some(false),
        ..Default::default()
    })
    .unwrap();
    let Task::Regression { y_scaler, .. } = &raw.task else {
        panic!()
    };
    assert_eq!((y_scaler.mean, y_scaler.sd), (0.0, 1.0));

    let (x, _) = toy_regression(10, 0);
    let constant = Dataset::new(x, vec![2.0; 10]).unwrap();
    let spec = FitOptions {
        normalize_y: Some(false),
        ..Default::default()
    }
    .check(MethodName::Gpr)
    .unwrap();
    let model = fit(&spec, &constant, None).unwrap();
    let (xs, _) = toy_regression(3, 50);
    let m = model.predict_regression(xs.as_ref()).unwrap();
    assert!(m.mean.iter().all(|v| v.is_finite()));
}

/// Bad values are typed errors naming the option: an `alpha` of the wrong length (scikit-learn's
/// message), negative variances, a zero noise without known variances, a kept kernel without
/// its noise, θ of the wrong length.
#[test]
fn bad_noise_options_are_typed_errors() {
    let err = gpr(FitOptions {
        alpha: Some(vec![0.1; 7]),
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("alpha must be a scalar or an array with same number of entries as y"),
        "{err}"
    );
    for (o, option) in [
        (
            FitOptions {
                alpha: Some(vec![-0.1]),
                ..Default::default()
            },
            SpecOption::Alpha,
        ),
        (
            FitOptions {
                noise: Some(-1.0),
                ..Default::default()
            },
            SpecOption::Noise,
        ),
        (
            FitOptions {
                noise: Some(0.0),
                ..Default::default()
            },
            SpecOption::Noise,
        ),
        (
            FitOptions {
                noise: Some(0.0),
                alpha: Some(vec![0.0]),
                ..Default::default()
            },
            SpecOption::Alpha,
        ),
        (
            FitOptions {
                kernel_params: Some(vec![0.0; 3]),
                ..Default::default()
            },
            SpecOption::Noise,
        ),
    ] {
        let err = o.check(MethodName::Gpr).unwrap_err();
        assert_eq!(err.option, option, "{err:?}");
    }
    let err = FitOptions {
        alpha: Some(vec![0.1]),
        ..Default::default()
    }
    .check(MethodName::Vfe)
    .unwrap_err();
    assert_eq!(err.option, SpecOption::Alpha);
    let err = gpr(FitOptions {
        kernel_params: Some(vec![0.0; 2]),
        noise: Some(0.1),
        ..Default::default()
    })
    .unwrap_err();
    assert!(!matches!(err, Error::Spec(_)), "{err}");
}

/// Prediction intervals of a model with known per-row noise and σ² kept at 0: jackknife+ from
/// the per-row downdate, CV+ with one known variance for every row (CV+ refits on folds, which
/// per-row values cannot follow: refused); both survive the model file (a fold's σ² of 0 with
/// its known variances is valid) and give the same intervals after it.
#[test]
fn intervals_of_a_model_with_known_noise_survive_its_file() {
    use pacgp::spec::IntervalMethod;
    let (xs, _) = toy_regression(6, 120);
    for (method, alpha) in [
        (IntervalMethod::JackknifePlus, known(40)),
        (IntervalMethod::CvPlus { folds: 4 }, vec![0.02]),
    ] {
        let model = gpr(FitOptions {
            noise: Some(0.0),
            alpha: Some(alpha),
            intervals: Some(method),
            ..Default::default()
        })
        .unwrap();
        let iv = model.predict_intervals(xs.as_ref(), 0.2).unwrap();
        let m = model.predict_regression(xs.as_ref()).unwrap();
        for j in 0..xs.nrows() {
            assert!(
                iv.lower[j] < m.mean[j] && m.mean[j] < iv.upper[j],
                "{method:?} row {j}"
            );
        }
        let json = serde_json::to_string(&model).unwrap();
        let back = FittedModel::from_json(&json, "m.json").unwrap();
        let again = back.predict_intervals(xs.as_ref(), 0.2).unwrap();
        close(
            &again.lower,
            &iv.lower,
            1e-9,
            "lower ends after a round trip",
        );
        close(
            &again.upper,
            &iv.upper,
            1e-9,
            "upper ends after a round trip",
        );
    }
    for o in [
        FitOptions {
            alpha: Some(known(40)),
            intervals: Some(IntervalMethod::CvPlus { folds: 4 }),
            ..Default::default()
        },
        FitOptions {
            alpha: Some(known(40)),
            certify_holdout: Some(0.3),
            ..Default::default()
        },
    ] {
        let err = o.check(MethodName::Gpr).unwrap_err();
        assert_eq!(err.option, SpecOption::Alpha, "{err:?}");
    }
}
