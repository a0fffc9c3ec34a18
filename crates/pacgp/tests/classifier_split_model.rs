//! The classifier split prior in model files: a model fitted from a spec with a split prior
//! keeps the split's record, and `certify` on its training sample reproduces the certificate
//! of the fit (also after a JSON round trip and with the rows in another order), recomputes it
//! for another δ (Catoni's closed form at the stored λ), refuses another sample and a record
//! its spec does not allow; pac-gpc with Catoni and the prior-scale menu through `fit` gives
//! the library experiment's `split-prior+catoni+scale` row. (The experiment's other levers —
//! an EP prior, a menu of mean scales — are not options of `fit`.)

use pacgp::bounds::{catoni_bound, ConfidenceTerm};
use pacgp::data::{CsvOptions, Dataset, LabelMap};
use pacgp::experiments::tighter_classifiers::{tighter_classifier_rows, TighterClassifierSettings};
use pacgp::model::{CertifyOptions, FittedModel, Task};
use pacgp::objective::gpc_split::{SplitFraction, PRIOR_SCALES};
use pacgp::spec::{BoundName, FitOptions, LooRequest, MethodName, PriorKernel, PriorScale};
use pacgp::Error;

fn crabs() -> (Dataset, LabelMap) {
    let opts = CsvOptions {
        target: pacgp::data::TargetSpec::parse("sp"),
        drop_columns: vec!["sex".into(), "index".into()],
        ..Default::default()
    };
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/crabs/crabs.csv");
    pacgp::data::load_csv_classification(path, &opts).unwrap()
}

/// Catoni's bound with λ from part A and the prior-scale menu.
fn split_options(fraction: SplitFraction, seed: u64) -> FitOptions {
    FitOptions {
        prior: Some(fraction),
        bound: Some(BoundName::Catoni),
        prior_scale: Some(PriorScale::Auto),
        seed: Some(seed),
        ..Default::default()
    }
}

fn fit(method: MethodName, o: FitOptions, data: &Dataset, labels: LabelMap) -> FittedModel {
    let spec = o.check(method).unwrap();
    pacgp::fit::fit(&spec, data, Some(labels)).unwrap()
}

fn certify(model: &FittedModel, data: &Dataset, delta: f64) -> pacgp::certificate::Certificate {
    let opts = CertifyOptions {
        delta: Some(delta),
        loo: LooRequest::None,
        ..Default::default()
    };
    let mut c = model.certify(data, &opts).unwrap();
    assert_eq!(c.len(), 1);
    c.remove(0).certificate
}

/// fit → JSON → certify gives the fit's bound (to 1e-9, δ = 0.01), with the rows in the
/// training order and reversed; at δ = 0.05 the bound is Catoni's closed form at the stored λ
/// with the same KL, risk and penalty; another sample is refused with a typed error, and a
/// record that does not fit the model (or was written by an older version) is refused when
/// the file is read.
#[test]
fn fit_then_certify_reproduces_the_split_certificate() {
    let (data, labels) = crabs();
    let model = fit(
        MethodName::Laplace,
        split_options(SplitFraction::Fixed(0.5), 7),
        &data,
        labels,
    );
    let Task::Classification {
        split_prior: Some(record),
        ..
    } = &model.task
    else {
        panic!("no split record")
    };
    let lambda = record.lambda.expect("Catoni's λ");
    assert!(PRIOR_SCALES.contains(&record.prior_scale));
    assert_eq!(record.term, ConfidenceTerm::Catoni { lambda });
    assert_eq!((record.n_a, record.n_b), (100, 100));
    let json = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&json, "m.json").unwrap();
    let fitted = model.report.objective.unwrap();
    let c = certify(&back, &data, 0.01);
    eprintln!(
        "fit {fitted:.15} certify {:.15} λ {lambda} t {}",
        c.bound, record.prior_scale
    );
    assert_eq!(c.n, 100);
    assert!((c.bound - fitted).abs() < 1e-9, "{} vs {fitted}", c.bound);
    let rev: Vec<usize> = (0..data.n()).rev().collect();
    let r = certify(&back, &data.subset(&rev), 0.01);
    assert!((r.bound - c.bound).abs() < 1e-12);
    let loose = certify(&back, &data, 0.05);
    assert_eq!((loose.kl, loose.empirical_risk), (c.kl, c.empirical_risk));
    let cx = (c.kl + c.penalty + (1.0f64 / 0.05).ln()) / c.n as f64;
    let want = catoni_bound(c.empirical_risk, cx, lambda);
    assert!((loose.bound - want).abs() < 1e-12 && loose.bound < c.bound);
    let mut flipped = data.clone();
    flipped.y[3] = -flipped.y[3];
    let err = back
        .certify(&flipped, &CertifyOptions::default())
        .unwrap_err();
    assert!(matches!(err, Error::NotTrainingSample { .. }), "{err}");
    for (key, value) in [
        ("n_b", serde_json::json!(99)),
        ("prior_scale", serde_json::json!(0.0)),
        // Files before the one sample split kept the rows' order: refit.
        ("row_order", serde_json::json!(["00ff"])),
    ] {
        let mut broken: serde_json::Value = serde_json::from_str(&json).unwrap();
        broken["task"]["split_prior"][key] = value;
        let err = FittedModel::from_json(&broken.to_string(), "m.json").unwrap_err();
        assert!(err.to_string().contains("split prior record"), "{err}");
        if key == "row_order" {
            assert!(err.to_string().contains("older version"), "{err}");
        }
    }
}

/// pac-gpc with Catoni's λ from A and the prior-scale menu (fraction menu) through `fit`
/// gives the bound of the library experiment's `split-prior+catoni+scale` row on the same split
/// (crabs, the experiment's full optimiser settings, which are `fit`'s), and `certify`
/// reproduces it.
#[test]
fn catoni_and_scale_through_fit_match_the_experiment_row() {
    let (data, labels) = crabs();
    let settings = TighterClassifierSettings::full();
    let mut cfg = settings.config();
    cfg.methods = vec!["split-prior+catoni+scale".into()];
    let seed = 1;
    let rows = tighter_classifier_rows("crabs", &data, &[seed], &cfg).unwrap();
    let (tr, _) = pacgp::data::train_test_split(data.n(), cfg.test_fraction, seed).unwrap();
    let train = data.subset(&tr);
    let o = split_options(SplitFraction::Menu, seed);
    let model = fit(MethodName::PacGpc, o, &train, labels);
    let bound = model.report.objective.unwrap();
    assert_eq!(bound, rows[0].bound, "{rows:?}");
    let c = certify(&model, &train, 0.01);
    eprintln!(
        "row {:.15} fit {bound:.15} certify {:.15}",
        rows[0].bound, c.bound
    );
    assert!((c.bound - bound).abs() < 1e-9, "{} vs {bound}", c.bound);
    assert_eq!(c.n, rows[0].n_bound);
}

/// Both directions with SE iso beside SE-ARD (Catoni λ from A, t menu, F = ½): `certify`
/// reproduces the fitted bound (to 1e-9) with the direction's `ln 2` paid; the record with the
/// direction flipped is refused (its part A is not the one refitted); a record claiming a smaller menu, or a
/// spec that no longer allows both directions, is refused instead of certified with less.
#[test]
fn both_directions_and_the_kernel_choice_are_reproduced_by_certify() {
    let (data, labels) = crabs();
    let o = FitOptions {
        both_directions: Some(true),
        prior_kernel: Some(PriorKernel::Auto),
        ..split_options(SplitFraction::Fixed(0.5), 5)
    };
    let model = fit(MethodName::Laplace, o, &data, labels);
    let Task::Classification {
        split_prior: Some(record),
        ..
    } = &model.task
    else {
        panic!("no split record")
    };
    eprintln!(
        "swapped {} t {} kernel {}",
        record.swapped,
        record.prior_scale,
        record.kernel_a.describe()
    );
    assert_eq!(record.menu, 2);
    let paid: f64 = model.choices().unwrap().iter().map(|c| c.nats).sum();
    assert!((paid - 2f64.ln()).abs() < 1e-12, "{paid}");
    let json = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&json, "m.json").unwrap();
    let fitted = model.report.objective.unwrap();
    let c = certify(&back, &data, 0.01);
    eprintln!("fit {fitted:.15} certify {:.15}", c.bound);
    assert!((c.bound - fitted).abs() < 1e-9, "{} vs {fitted}", c.bound);
    assert!((c.penalty - 2f64.ln()).abs() < 1e-12);
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        f(&mut v);
        FittedModel::from_json(&v.to_string(), "m.json")
            .and_then(|m| m.certify(&data, &CertifyOptions::default()))
            .unwrap_err()
    };
    let err = edit(&|v| {
        let s = v["task"]["split_prior"]["swapped"].as_bool().unwrap();
        v["task"]["split_prior"]["swapped"] = (!s).into();
    });
    // The other direction's part A has another scaler: refused before anything is certified.
    assert!(matches!(err, Error::ModelMismatch { .. }), "{err}");
    let err = edit(&|v| v["task"]["split_prior"]["menu"] = 1.into());
    assert!(matches!(err, Error::ModelMismatch { .. }), "{err}");
    let err = edit(&|v| {
        v["spec"]["method"]["options"]["hypers"]["split"]["both_directions"] = false.into()
    });
    assert!(matches!(err, Error::ModelMismatch { .. }), "{err}");
}

/// Catoni's λ is the fit's to choose, not certify's (issue 43): on a model whose split prior
/// fixed λ on part A, `certify` with that λ gives the default certificate bit for bit, and
/// with any other λ (the 3, and the grid's ends) is refused with the typed error
/// naming the fit's λ; a model whose fit fixed no λ (the candidate-kernel menu) refuses every
/// λ, naming how a fit fixes one. The other constants, which involve no λ, are still taken.
#[test]
fn certify_takes_only_the_catoni_lambda_the_fit_fixed() {
    let (data, labels) = crabs();
    let model = fit(
        MethodName::Laplace,
        split_options(SplitFraction::Fixed(0.5), 7),
        &data,
        labels.clone(),
    );
    let lambda = model.trained_confidence_term().catoni_lambda().unwrap();
    let with = |m: &FittedModel, term: ConfidenceTerm| {
        m.certify(
            &data,
            &CertifyOptions {
                term: Some(term),
                loo: LooRequest::None,
                ..Default::default()
            },
        )
    };
    let own = with(&model, ConfidenceTerm::Catoni { lambda }).unwrap();
    let default = certify(&model, &data, model.spec.delta);
    assert_eq!(own[0].certificate.bound.to_bits(), default.bound.to_bits());
    for other in [3.0, 0.3, lambda * (1.0 + 1e-12)] {
        let err = with(&model, ConfidenceTerm::Catoni { lambda: other }).unwrap_err();
        assert!(
            matches!(err, Error::CatoniNotFromFit { lambda: l, trained: Some(t) } if l == other && t == lambda),
            "{err}"
        );
        assert!(err.to_string().contains("not fixed by the fit"), "{err}");
    }
    let plain = fit(MethodName::Laplace, FitOptions::default(), &data, labels);
    assert!(plain.trained_confidence_term().catoni_lambda().is_none());
    let err = with(&plain, ConfidenceTerm::Catoni { lambda: 3.0 }).unwrap_err();
    assert!(
        matches!(err, Error::CatoniNotFromFit { trained: None, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("prior split"), "{err}");
    assert!(with(&plain, ConfidenceTerm::Sharp).is_ok());
}
