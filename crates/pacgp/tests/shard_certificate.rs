//! A classifier's certificate on a training sample held in parts: the parts' summed Gibbs
//! losses (`FittedModel::gibbs_risk_sum`, uneven parts, an empty one, parts of one class) added
//! and certified (`certify_risk_sum`) equal `certify` on the whole sample, for the sparse
//! variational classifier (both trainings), Laplace, the SVM and one-vs-rest over iris's three
//! classes; the binary loss sum is checked against Φ(−yμ/σ) summed here from `predict`'s
//! marginals; the softmax model, a regressor, other counts and labels are refused.

use faer::Mat;
use pacgp::certificate::RiskSum;
use pacgp::data::{read_training, CsvOptions, Dataset, TargetKind};
use pacgp::model::{CertifyOptions, FittedModel};
use pacgp::spec::{FitOptions, LooRequest, MethodName};
use pacgp::Error;

/// 80 rows of a non-linear two-class problem, rows sorted so that the first part holds one class.
fn classes() -> Dataset {
    let x = Mat::from_fn(80, 2, |i, j| {
        (((i * 17 + j * 29) % 43) as f64 / 43.0) * 4.0 - 2.0 + 0.011 * i as f64
    });
    let mut rows: Vec<(Vec<f64>, f64)> = (0..80)
        .map(|i| {
            let s = x[(i, 0)].sin() + 0.4 * x[(i, 1)] + 0.3 * (((i * 7) % 5) as f64 - 2.0) / 2.0;
            (vec![x[(i, 0)], x[(i, 1)]], if s > 0.0 { 1.0 } else { -1.0 })
        })
        .collect();
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    let x = Mat::from_fn(80, 2, |i, j| rows[i].0[j]);
    Dataset::new(x, rows.iter().map(|r| r.1).collect()).unwrap()
}

fn fit(method: MethodName, o: FitOptions, data: &Dataset) -> FittedModel {
    let spec = o.check(method).unwrap();
    pacgp::fit::fit(&spec, data, None).unwrap()
}

fn no_loo() -> CertifyOptions {
    CertifyOptions {
        loo: LooRequest::None,
        ..Default::default()
    }
}

/// The parts' sums over the row ranges `(start, length)` added up.
fn summed(
    model: &FittedModel,
    data: &Dataset,
    opts: &CertifyOptions,
    parts: &[(usize, usize)],
) -> RiskSum {
    parts
        .iter()
        .map(|&(lo, len)| {
            model
                .gibbs_risk_sum(
                    data.x.as_ref().subrows(lo, len),
                    &data.y[lo..lo + len],
                    opts,
                )
                .unwrap()
        })
        .fold(RiskSum::default(), |a, b| a + b)
}

#[test]
fn summed_parts_certify_as_the_whole_sample() {
    let data = classes();
    assert!(
        data.y[..5].iter().all(|&v| v == -1.0),
        "the first part holds one class"
    );
    let svgp = |objective: MethodName| {
        let o = FitOptions {
            inducing: Some(10),
            max_iter: Some(60),
            ..Default::default()
        };
        fit(objective, o, &data)
    };
    let models = [
        ("svgp", svgp(MethodName::Svgp)),
        ("pac-svgp", svgp(MethodName::PacSvgp)),
        (
            "laplace",
            fit(MethodName::Laplace, FitOptions::default(), &data),
        ),
        ("svm", fit(MethodName::Svm, FitOptions::default(), &data)),
    ];
    for (name, model) in &models {
        let opts = no_loo();
        let whole = &model.certify(&data, &opts).unwrap()[0].certificate;
        let sum = summed(model, &data, &opts, &[(0, 5), (5, 0), (5, 42), (47, 33)]);
        assert_eq!(sum.rows, 80);
        let parts = model.certify_risk_sum(sum, &opts).unwrap().certificate;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
        assert!(
            close(parts.bound, whole.bound),
            "{name}: {} vs {}",
            parts.bound,
            whole.bound
        );
        assert!(close(parts.empirical_risk, whole.empirical_risk), "{name}");
        assert_eq!(
            (parts.kl, parts.penalty, parts.n),
            (whole.kl, whole.penalty, whole.n)
        );
        assert_eq!(parts.predictor, whole.predictor);
        // The loss is the latent Gibbs classifier's: Φ(−y(μ + b)/σ) summed over the rows.
        if *name != "svm" {
            let (_, m) = model.predict_classification(data.x.as_ref()).unwrap();
            let direct: f64 = (0..80)
                .map(|i| pacgp::special::normal_cdf(-data.y[i] * m.mean[i] / m.var[i].sqrt()))
                .sum();
            assert!(
                (sum.loss - direct).abs() < 1e-10 * direct.max(1.0),
                "{name}"
            );
        }
    }
}

/// Iris's three classes, one-vs-rest Laplace: the sums over four parts (the first of one
/// class, as iris's rows are sorted by class) certify as the whole sample; the softmax model's
/// sampled risk is refused.
#[test]
fn one_vs_rest_sums_certify_as_the_whole_sample() {
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/iris/iris.csv");
    let t = read_training(path, &CsvOptions::default(), TargetKind::Classes).unwrap();
    let (data, labels) = (t.data, t.classes.unwrap());
    let spec = FitOptions::default().check(MethodName::Laplace).unwrap();
    let model = pacgp::fit::fit(&spec, &data, labels.clone()).unwrap();
    let opts = no_loo();
    let whole = &model.certify(&data, &opts).unwrap()[0].certificate;
    let n = data.y.len();
    let sum = summed(
        &model,
        &data,
        &opts,
        &[(0, 20), (20, 0), (20, 71), (91, n - 91)],
    );
    let parts = model.certify_risk_sum(sum, &opts).unwrap().certificate;
    assert!(
        (parts.bound - whole.bound).abs() <= 1e-12,
        "{} vs {}",
        parts.bound,
        whole.bound
    );
    assert!((parts.empirical_risk - whole.empirical_risk).abs() <= 1e-12);
    assert_eq!(
        (parts.kl, parts.penalty, parts.n),
        (whole.kl, whole.penalty, whole.n)
    );
    assert!(matches!(
        model.gibbs_risk_sum(data.x.as_ref().subrows(0, 2), &[0.0, 3.0], &opts),
        Err(Error::InvalidParameter { name: "label", .. })
    ));
    let softmax = FitOptions {
        multiclass: Some(pacgp::spec::MultiClass::Softmax),
        ..Default::default()
    }
    .check(MethodName::Laplace)
    .unwrap();
    let softmax = pacgp::fit::fit(&softmax, &data, labels).unwrap();
    assert!(matches!(
        softmax.gibbs_risk_sum(data.x.as_ref(), &data.y, &opts),
        Err(Error::Unsupported(m)) if m.contains("softmax")
    ));
}

#[test]
fn other_models_counts_and_labels_are_refused() {
    let data = classes();
    let model = fit(MethodName::Laplace, FitOptions::default(), &data);
    let opts = no_loo();
    let part = RiskSum {
        loss: 3.0,
        rows: 79,
    };
    assert!(matches!(
        model.certify_risk_sum(part, &opts),
        Err(Error::NotTrainingSample { .. })
    ));
    let mut bad = data.y.clone();
    bad[3] = 0.0;
    assert!(matches!(
        model.gibbs_risk_sum(data.x.as_ref(), &bad, &opts),
        Err(Error::InvalidParameter { name: "label", .. })
    ));
    assert!(matches!(
        model.gibbs_risk_sum(data.x.as_ref(), &data.y[1..], &opts),
        Err(Error::ShapeMismatch { .. })
    ));
    // Another Gibbs predictor than the trained one could differ between the map and the
    // reduce step: refused.
    let noisy = CertifyOptions {
        predictor: Some(pacgp::model::GibbsPredictor::Noisy),
        ..no_loo()
    };
    assert!(matches!(
        model.gibbs_risk_sum(data.x.as_ref(), &data.y, &noisy),
        Err(Error::Unsupported(m)) if m.contains("predictor")
    ));
    let with_eps = CertifyOptions {
        epsilons: vec![0.5],
        ..no_loo()
    };
    assert!(matches!(
        model.gibbs_risk_sum(data.x.as_ref(), &data.y, &with_eps),
        Err(Error::Unsupported(_))
    ));
    // A regressor: its certificate needs ε and the target's scale.
    let reg = Dataset::new(
        data.x.clone(),
        (0..80).map(|i| (i as f64 * 0.1).sin()).collect(),
    )
    .unwrap();
    let o = FitOptions {
        epsilon: Some(0.5),
        ..Default::default()
    };
    let gp = fit(MethodName::PacGp, o, &reg);
    assert!(matches!(
        gp.gibbs_risk_sum(reg.x.as_ref(), &reg.y, &opts),
        Err(Error::Unsupported(m)) if m.contains("regressor")
    ));
}
