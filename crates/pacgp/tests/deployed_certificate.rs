//! The derandomised certificate on the deployed predictor (`certify`'s `deployed`, docs/math.md
//! §7.6) against an independent recomputation: the posterior with its mean weights scaled by
//! `c` (or zeroed) built here and predicted and KL'd from scratch, every grid point's risks
//! written here from `Φ` directly, the bound taken as the least over the grid here, and the
//! deployed predictor's errors counted from `predict`. On Ripley's synthetic set (250 rows to
//! fit, its 1000-row test file never seen) the bound holds for Laplace, the SVM and the sparse
//! variational classifier; a regressor's ε-band bound on its mean is recomputed likewise.

use faer::Mat;
use pacgp::bounds::{pac_bayes_bound, BoundKind};
use pacgp::certificate::deployed::{
    DeployedBound, DerandomisedForm, DERANDOMISED_FRACTIONS, DERANDOMISED_MARGINS,
    DERANDOMISED_SCALES,
};
use pacgp::data::{load_csv_classification, CsvOptions, Dataset};
use pacgp::model::{CertificateReport, CertifyOptions, DeployedPredictor, FittedModel};
use pacgp::posterior::{GaussianPosterior, Marginals};
use pacgp::spec::{FitOptions, LooRequest, MethodName};
use pacgp::special::normal_cdf;

fn repo(p: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../")
        .join(p)
}

/// A shipped two-class set, its labels read as ±1.
fn classes(path: &str) -> (Dataset, pacgp::data::LabelMap) {
    load_csv_classification(repo(path), &CsvOptions::default()).unwrap()
}

fn no_loo() -> CertifyOptions {
    CertifyOptions {
        loo: LooRequest::None,
        ..Default::default()
    }
}

/// The model's posterior with its mean weights scaled by `c`, on the standardised sample.
fn scaled(model: &FittedModel, xs: &Mat<f64>, c: f64) -> (Marginals, f64) {
    let mut q: GaussianPosterior = model.posterior().unwrap().clone();
    q.alpha.iter_mut().for_each(|a| *a *= c);
    (q.predict(xs.as_ref()).unwrap(), q.kl_to_prior().unwrap())
}

/// The kl-inverse bound at `delta` with the report's confidence term and `penalty`.
fn bound(report: &CertificateReport, risk: f64, kl: f64, delta: f64, penalty: f64) -> f64 {
    let c = &report.certificate;
    pac_bayes_bound(
        risk,
        kl,
        c.n,
        delta,
        penalty,
        BoundKind::Kl,
        c.confidence_term,
    )
    .unwrap()
}

/// The least bound over the grid of the module doc, written out here: for every scale c the
/// Gibbs risk plus two draws' disagreement (each at δ/2), and for every threshold t the margin
/// risk at δ over `Φ(t/√κ)`.
fn least_classifier_bound(model: &FittedModel, data: &Dataset, report: &CertificateReport) -> f64 {
    let xs = model.x_scaler.transform(data.x.as_ref()).unwrap();
    let k = model.posterior().unwrap().prior.diag(xs.as_ref()).unwrap();
    let kappa = model.posterior().unwrap().variance_ratio_bound().unwrap();
    let grid = DERANDOMISED_SCALES.len() * (1 + DERANDOMISED_MARGINS.len());
    let penalty = report.certificate.penalty + (grid as f64).ln();
    let delta = report.certificate.delta;
    let n = data.n() as f64;
    let mut best = f64::INFINITY;
    for &c in &DERANDOMISED_SCALES {
        let (m, kl) = scaled(model, &xs, c);
        let z = |i: usize| m.mean[i] / m.var[i].sqrt();
        let gibbs: f64 = (0..data.n())
            .map(|i| normal_cdf(-data.y[i] * z(i)))
            .sum::<f64>()
            / n;
        let pair: f64 = (0..data.n())
            .map(|i| 2.0 * normal_cdf(z(i)) * normal_cdf(-z(i)))
            .sum::<f64>()
            / n;
        let two = bound(report, gibbs, kl, delta / 2.0, penalty)
            + bound(report, pair, 2.0 * kl, delta / 2.0, penalty);
        best = best.min(two.min(1.0));
        for &t in &DERANDOMISED_MARGINS {
            let margin: f64 = (0..data.n())
                .map(|i| normal_cdf((t * k[i].sqrt() - data.y[i] * m.mean[i]) / m.var[i].sqrt()))
                .sum::<f64>()
                / n;
            let divided = bound(report, margin, kl, delta, penalty) / normal_cdf(t / kappa.sqrt());
            best = best.min(divided.min(1.0));
        }
    }
    best
}

/// `predict`'s labels' errors on a sample; the labels are checked against `p(y = +1 | x) ≥ ½`
/// wherever `p` is not rounded to ½.
fn label_errors(model: &FittedModel, data: &Dataset) -> usize {
    let (p, _) = model.predict_classification(data.x.as_ref()).unwrap();
    let labels = model.predict_labels(data.x.as_ref()).unwrap();
    for (p, l) in p.iter().zip(&labels) {
        if *p != 0.5 {
            assert_eq!(*l, if *p > 0.5 { 1.0 } else { -1.0 });
        }
    }
    labels.iter().zip(&data.y).filter(|(l, y)| l != y).count()
}

#[test]
fn binary_classifiers_deployed_bound_is_recomputed_and_holds_on_ripley() {
    let (train, labels) = classes("data/ripley-synth/synth_tr.csv");
    let (test, _) = classes("data/ripley-synth/synth_te.csv");
    let fit = |method: MethodName, o: FitOptions| {
        let spec = o.check(method).unwrap();
        pacgp::fit::fit(&spec, &train, labels.clone()).unwrap()
    };
    let svgp = FitOptions {
        inducing: Some(16),
        max_iter: Some(200),
        ..Default::default()
    };
    let models = [
        ("laplace", fit(MethodName::Laplace, FitOptions::default())),
        ("svm", fit(MethodName::Svm, FitOptions::default())),
        ("svgp", fit(MethodName::Svgp, svgp)),
    ];
    for (name, model) in &models {
        let report = model.certify(&train, &no_loo()).unwrap().remove(0);
        let d = report.deployed.as_ref().expect("a deployed certificate");
        assert_eq!(d.bound, DeployedBound::Derandomised, "{name}");
        let want_predictor = match *name {
            "svm" => DeployedPredictor::SvmSign,
            _ => DeployedPredictor::PosteriorMeanSign,
        };
        assert_eq!(d.predictor, want_predictor);
        assert_eq!(d.errors, label_errors(model, &train), "{name}");
        assert_eq!(d.n, train.n());
        let want = least_classifier_bound(model, &train, &report);
        assert!(
            (d.value - want).abs() <= 1e-9,
            "{name}: {} vs {want}",
            d.value
        );
        let parts = d.derandomised.as_ref().unwrap();
        if parts.form == DerandomisedForm::Disagreement {
            assert_eq!(parts.second_kl, Some(2.0 * parts.kl));
        }
        // It bounds what it names: above the training error and, on a test file the fit never
        // saw, above the deployed predictor's test error.
        let test_error = label_errors(model, &test) as f64 / test.n() as f64;
        assert!(d.value >= d.error_rate && d.value >= test_error, "{name}");
        assert_eq!(d.joint_delta, 2.0 * d.delta);
        println!(
            "{name}: Gibbs bound {:.4}, deployed bound {:.4} ({:?}, c = {}), test error of predict {test_error:.4}",
            report.certificate.bound, d.value, parts.form, parts.scale
        );
    }
}

/// The comparison of `reproduce deployed` (issue 42) on Ripley's set for Laplace: the C-bound
/// (Germain et al. 2015, PAC-Bound 1) recomputed here from the scaled posteriors — the Gibbs
/// risk's kl-inverse at δ/2 with KL, the disagreement's lower kl-inverse (checked on its own)
/// at δ/2 with 2·KL, both priced `ln 56` beside the certificate's choices — least over the
/// scales; the enlarged grid's other forms pay `ln 56` instead of `ln 49`, so none is below
/// the certificate's value.
#[test]
fn the_c_bound_comparison_is_recomputed_on_ripley() {
    use pacgp::special::kl_inverse_lower;
    let (train, labels) = classes("data/ripley-synth/synth_tr.csv");
    let spec = FitOptions::default().check(MethodName::Laplace).unwrap();
    let model = pacgp::fit::fit(&spec, &train, labels).unwrap();
    let report = model.certify(&train, &no_loo()).unwrap().remove(0);
    let forms = model
        .deployed_forms_with_c_bound(&train, &no_loo())
        .unwrap()
        .expect("a binary classifier's comparison");
    let names: Vec<DerandomisedForm> = forms
        .iter()
        .map(|f| f.derandomised.as_ref().unwrap().form)
        .collect();
    assert_eq!(
        names,
        [
            DerandomisedForm::Disagreement,
            DerandomisedForm::CBound,
            DerandomisedForm::Divided
        ]
    );
    let grid = DERANDOMISED_SCALES.len() * (2 + DERANDOMISED_MARGINS.len());
    let penalty = report.certificate.penalty + (grid as f64).ln();
    let (delta, n) = (report.certificate.delta, train.n() as f64);
    let xs = model.x_scaler.transform(train.x.as_ref()).unwrap();
    let c = &report.certificate;
    let mut want = f64::INFINITY;
    for &s in &DERANDOMISED_SCALES {
        let (m, kl) = scaled(&model, &xs, s);
        let z = |i: usize| m.mean[i] / m.var[i].sqrt();
        let gibbs: f64 = (0..train.n())
            .map(|i| normal_cdf(-train.y[i] * z(i)))
            .sum::<f64>()
            / n;
        let pair: f64 = (0..train.n())
            .map(|i| 2.0 * normal_cdf(z(i)) * normal_cdf(-z(i)))
            .sum::<f64>()
            / n;
        let r_up = bound(&report, gibbs, kl, delta / 2.0, penalty);
        let complexity = (2.0 * kl + penalty + c.confidence_term.value(c.n, delta / 2.0)) / n;
        let d_low = kl_inverse_lower(pair, complexity);
        let value = if r_up >= 0.5 {
            1.0
        } else {
            1.0 - (1.0 - 2.0 * r_up).powi(2) / (1.0 - 2.0 * d_low)
        };
        want = want.min(value);
    }
    let got = forms[1].value;
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    assert_eq!(forms[1].derandomised.as_ref().unwrap().grid, grid);
    let deployed = report.deployed.as_ref().unwrap().value;
    for f in [&forms[0], &forms[2]] {
        assert!(f.value >= deployed - 1e-12, "{} < {deployed}", f.value);
    }
    println!(
        "ripley laplace: certificate {deployed:.4}, C-bound {got:.4}, disagreement {:.4}, divided {:.4}",
        forms[0].value, forms[2].value
    );
}

/// A regressor's ε-band bound on its mean: the band risk of Q at `(1 − r)ε` plus the centred
/// posterior's (mean weights 0) spread `P[|f − μ| ≥ rε]`, each at δ/2, least over r.
#[test]
fn regressor_deployed_bound_is_recomputed() {
    let x = Mat::from_fn(80, 1, |i, _| i as f64 / 10.0);
    let y: Vec<f64> = (0..80)
        .map(|i| (i as f64 / 10.0).sin() + 0.2 * (((i * 13) % 7) as f64 - 3.0) / 3.0)
        .collect();
    let data = Dataset::new(x, y).unwrap();
    let eps = 0.5;
    let spec = FitOptions {
        epsilon: Some(eps),
        ..Default::default()
    }
    .check(MethodName::Gpr)
    .unwrap();
    let model = pacgp::fit::fit(&spec, &data, None).unwrap();
    let report = model.certify(&data, &no_loo()).unwrap().remove(0);
    let d = report.deployed.as_ref().unwrap();
    assert_eq!(d.predictor, DeployedPredictor::PosteriorMean);
    assert_eq!(d.epsilon, Some(eps));
    let xs = model.x_scaler.transform(data.x.as_ref()).unwrap();
    let (m, kl) = scaled(&model, &xs, 1.0);
    let (_, kl_centred) = scaled(&model, &xs, 0.0);
    // Standardised targets and ε, from the stored target scaler recomputed here.
    let mean = data.y.iter().sum::<f64>() / data.n() as f64;
    let sd = pacgp::data::TargetScaler::fit_column(&data.y, "y")
        .unwrap()
        .sd;
    let ys: Vec<f64> = data.y.iter().map(|v| (v - mean) / sd).collect();
    let e = eps / sd;
    let misses = m
        .mean
        .iter()
        .zip(&ys)
        .filter(|(a, b)| (*a - *b).abs() > e)
        .count();
    assert_eq!(d.errors, misses);
    let n = data.n() as f64;
    let penalty = report.certificate.penalty + (DERANDOMISED_FRACTIONS.len() as f64).ln();
    let delta = report.certificate.delta / 2.0;
    let want = DERANDOMISED_FRACTIONS
        .iter()
        .map(|&r| {
            let inner = (1.0 - r) * e;
            let (mut band, mut spread) = (0.0, 0.0);
            for i in 0..data.n() {
                let (s, gap) = (m.var[i].sqrt(), ys[i] - m.mean[i]);
                band += 1.0 - (normal_cdf((gap + inner) / s) - normal_cdf((gap - inner) / s));
                spread += 2.0 * normal_cdf(-r * e / s);
            }
            let two = bound(&report, band / n, kl, delta, penalty)
                + bound(&report, spread / n, kl_centred, delta, penalty);
            two.min(1.0)
        })
        .fold(f64::INFINITY, f64::min);
    assert!((d.value - want).abs() <= 1e-9, "{} vs {want}", d.value);
    assert_eq!(
        d.derandomised.as_ref().unwrap().form,
        DerandomisedForm::Spread
    );
}

/// `P(argmax_k s_k = j)` for independent scores `s_k ~ N(mean_k, sd_k²)`, by the trapezoid
/// rule over `s_j = mean_j + sd_j·u`, u on [−12, 12] (an integrator of its own, not the
/// library's Gauss–Hermite rule).
fn vote_by_trapezoid(mean: &[f64], sd: &[f64], j: usize) -> f64 {
    let steps = 24_000;
    let h = 24.0 / steps as f64;
    let at = |u: f64| {
        let s = mean[j] + sd[j] * u;
        let others: f64 = (0..mean.len())
            .filter(|&k| k != j)
            .map(|k| normal_cdf((s - mean[k]) / sd[k]))
            .product();
        (-0.5 * u * u).exp() / (2.0 * std::f64::consts::PI).sqrt() * others
    };
    (0..=steps)
        .map(|i| {
            let w = if i == 0 || i == steps { 0.5 } else { 1.0 };
            w * at(-12.0 + i as f64 * h)
        })
        .sum::<f64>()
        * h
}

/// A multi-class model's predicted class is its Gibbs classifier's majority vote; its bound,
/// recomputed here from the class scores `predict` returns (vote probabilities by the
/// trapezoid rule, the three forms of the module doc with the Gibbs certificate's KL and
/// price plus `ln 3`), matches, and holds on the rows the fit never saw (every third row of
/// iris and of wine held out), for one-vs-rest Laplace and the SVM.
#[test]
fn multiclass_deployed_bound_is_recomputed_and_holds_on_held_out_rows() {
    use pacgp::data::{read_training, TargetKind};
    for path in ["data/iris/iris.csv", "data/wine/wine.csv"] {
        let t = read_training(repo(path), &CsvOptions::default(), TargetKind::Classes).unwrap();
        let (all, labels) = (t.data, t.classes.unwrap());
        let fit_rows: Vec<usize> = (0..all.n()).filter(|i| i % 3 != 0).collect();
        let held: Vec<usize> = (0..all.n()).filter(|i| i % 3 == 0).collect();
        let (train, test) = (all.subset(&fit_rows), all.subset(&held));
        for method in [MethodName::Laplace, MethodName::Svm] {
            let spec = FitOptions::default().check(method).unwrap();
            let model = pacgp::fit::fit(&spec, &train, labels.clone()).unwrap();
            let report = model.certify(&train, &no_loo()).unwrap().remove(0);
            let d = report.deployed.as_ref().expect("a deployed certificate");
            assert_eq!(d.predictor, DeployedPredictor::PredictedClass);
            let prediction = model.predict_classes(train.x.as_ref()).unwrap();
            let errors = |labels: &[usize], y: &[f64]| {
                labels
                    .iter()
                    .zip(y)
                    .filter(|(l, y)| **l as f64 != **y)
                    .count()
            };
            assert_eq!(d.errors, errors(&prediction.labels, &train.y));
            let n = train.n();
            let (mut gibbs, mut tandem, mut disagree) = (0.0, 0.0, 0.0);
            for i in 0..n {
                let mean: Vec<f64> = prediction.latent.iter().map(|m| m.mean[i]).collect();
                let sd: Vec<f64> = prediction.latent.iter().map(|m| m.var[i].sqrt()).collect();
                let p: Vec<f64> = (0..mean.len())
                    .map(|j| vote_by_trapezoid(&mean, &sd, j))
                    .collect();
                let miss = 1.0 - p[train.y[i] as usize];
                gibbs += miss / n as f64;
                tandem += miss * miss / n as f64;
                disagree += (1.0 - p.iter().map(|v| v * v).sum::<f64>()) / n as f64;
            }
            let c = &report.certificate;
            let (kl, delta, price) = (c.kl, c.delta, c.penalty + 3f64.ln());
            let forms = [
                2.0 * bound(&report, gibbs, kl, delta, price),
                bound(&report, gibbs, kl, delta / 2.0, price)
                    + bound(&report, disagree, 2.0 * kl, delta / 2.0, price),
                4.0 * bound(&report, tandem, 2.0 * kl, delta, price),
            ];
            let want = forms.iter().fold(1.0f64, |a, b| a.min(*b));
            assert!(
                (d.value - want).abs() < 1e-7,
                "{path} {method:?}: {} vs {forms:?}",
                d.value
            );
            let test_labels = model.predict_classes(test.x.as_ref()).unwrap().labels;
            let test_error = errors(&test_labels, &test.y) as f64 / test.n() as f64;
            assert!(d.value >= d.error_rate && d.value >= test_error);
            println!(
                "{path} {method:?}: Gibbs bound {:.4}, deployed bound {:.4} ({:?}), test error of predict {test_error:.4}",
                c.bound,
                d.value,
                d.derandomised.as_ref().unwrap().form
            );
        }
    }
}

/// `reproduce deployed` on a multi-class set: iris is fitted with its classes (one-vs-rest),
/// the row's deployed certificate is the majority vote's, and its sets index the classes.
#[test]
fn the_deployed_experiment_runs_one_vs_rest_on_iris() {
    use pacgp::experiments::deployed::{deployed_rows, load_deployed_set, DeployedSettings};
    let (data, labels) = load_deployed_set(&repo("data"), "iris").unwrap();
    let settings = DeployedSettings {
        splits: 1,
        methods: vec![MethodName::Laplace],
        datasets: vec!["iris".into()],
        ..DeployedSettings::full()
    };
    let rows = deployed_rows("iris", (&data, &labels), 0, &settings).unwrap();
    let r = &rows[0];
    assert_eq!((r.n_train, r.n_test), (105, 45));
    assert!(["first_order", "disagreement", "tandem"].contains(&r.deployed_form.as_str()));
    assert!(r.deployed_bound >= r.train_error && r.deployed_bound >= r.test_error);
    assert!(
        r.set_coverage > 0.5 && r.set_size >= 0.5 && r.set_size <= 3.0,
        "{r:?}"
    );
    // The holdout fit's test-set bound: 21 of the 105 rows held out, at δ/2 = 0.005 the
    // binomial tail with no error is 1 − 0.005^(1/21) = 0.2232; more errors, more.
    let none = 1.0 - 0.005f64.powf(1.0 / 21.0);
    assert!(
        r.holdout_bound >= none - 1e-9 && r.holdout_bound <= 1.0,
        "{r:?}"
    );
    assert!(
        r.holdout_test_error.is_finite() && r.holdout_test_error < 0.5,
        "{r:?}"
    );
    // The comparison of issue 42: the vote's three forms and its C-bound priced ln 4.
    for v in [
        r.enlarged_first_order,
        r.enlarged_disagreement,
        r.enlarged_tandem,
        r.c_bound,
    ] {
        assert!(v >= r.train_error && v <= 1.0, "{r:?}");
    }
    assert!(
        r.enlarged_divided.is_nan() && r.c_bound_scale == 1.0,
        "{r:?}"
    );
    assert!(load_deployed_set(&repo("data"), "digitz").is_err());
}

/// `reproduce deployed --holdout F`: the holdout fit keeps out `F` of each training part, so
/// the row's test-set bound is the binomial tail on round(F · 140) = 70 of crabs' 140 training
/// rows for some count of errors (at δ/2 = 0.005), not on the default's 28; a fraction outside
/// (0, 1) is refused before any fit.
#[test]
fn the_deployed_experiments_holdout_is_its_setting() {
    use pacgp::experiments::deployed::{deployed_rows, load_deployed_set, DeployedSettings};
    let (data, labels) = load_deployed_set(&repo("data"), "crabs").unwrap();
    let settings = DeployedSettings {
        splits: 1,
        methods: vec![MethodName::Laplace],
        datasets: vec!["crabs".into()],
        ..DeployedSettings::full()
    }
    .with_holdout(0.5)
    .unwrap();
    let rows = deployed_rows("crabs", (&data, &labels), 0, &settings).unwrap();
    let r = &rows[0];
    assert_eq!(r.n_train, 140);
    let tail = |k: usize, n: usize| pacgp::bounds::binomial_tail_inversion(k, n, 0.005).unwrap();
    let is_tail_on = |n: usize| (0..=n).any(|k| (tail(k, n) - r.holdout_bound).abs() < 1e-12);
    assert!(is_tail_on(70) && !is_tail_on(28), "{r:?}");
    for f in [0.0, 1.0, -0.2, f64::NAN] {
        let e = DeployedSettings::full().with_holdout(f).unwrap_err();
        assert!(e.to_string().contains("holdout"), "{f}: {e}");
    }
}
