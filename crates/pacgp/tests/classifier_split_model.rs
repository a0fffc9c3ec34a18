//! The classifier split prior in model files (issue 15): a model fitted with
//! `fit_split_prior_model` keeps the split's record, and `certify` on its training sample
//! reproduces the certificate of the fit (also after a JSON round trip and with the rows in
//! another order), recomputes it for another δ (Catoni's closed form at the stored λ), refuses
//! another sample; Catoni + prior scale through the model pipeline gives the library
//! experiment's `split-prior+catoni+scale` row; model files without the record still load.

use pacgp::bounds::{catoni_bound, CatoniLambda, ConfidenceTerm};
use pacgp::data::{CsvOptions, Dataset};
use pacgp::experiments::tighter_classifiers::{
    tighter_classifier_rows, TighterClassifierSettings, MEAN_SCALES,
};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::model::{
    fit_split_prior_model, CertifyOptions, FittedModel, GibbsPredictor, SplitPriorOptions, Task,
};
use pacgp::objective::gpc_split::{SplitFraction, SplitPriorConfig, PRIOR_SCALES};
use pacgp::Error;

fn crabs() -> (Dataset, pacgp::data::LabelMap) {
    let opts = CsvOptions {
        target: pacgp::data::TargetSpec::parse("sp"),
        drop_columns: vec!["sex".into(), "index".into()],
        ..Default::default()
    };
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/crabs/crabs.csv");
    pacgp::data::load_csv_classification(path, &opts).unwrap()
}

/// Catoni with λ from part A and the prior-scale menu at a fixed fraction, few L-BFGS steps.
fn options(d: usize, fraction: SplitFraction, seed: u64, max_iter: usize) -> SplitPriorOptions {
    let mut config = SplitPriorConfig::new(fraction, seed);
    config.catoni = Some(CatoniLambda::FromPartA);
    config.prior_scales = PRIOR_SCALES.to_vec();
    config.bound.lbfgs.max_iter = max_iter;
    SplitPriorOptions {
        likelihood: Likelihood::probit(),
        kernel: Kernel::se_ard(&vec![1.0; d], 1.0),
        predictor: GibbsPredictor::Latent,
        config,
    }
}

fn certify(model: &FittedModel, data: &Dataset, delta: f64) -> pacgp::certificate::Certificate {
    let opts = CertifyOptions {
        delta,
        term: model.trained_confidence_term().unwrap(),
        loo: None,
        ..Default::default()
    };
    let mut c = model.certify(data, &opts).unwrap();
    assert_eq!(c.len(), 1);
    c.remove(0).certificate
}

/// fit → JSON → certify gives the fit's bound (to 1e-9, δ = 0.01), with the rows in the
/// training order and reversed; at δ = 0.05 the bound is Catoni's closed form at the stored λ
/// with the same KL, risk and penalty; another sample is refused with a typed error.
#[test]
fn fit_then_certify_reproduces_the_split_certificate() {
    let (data, labels) = crabs();
    let opts = options(data.d(), SplitFraction::Fixed(0.5), 7, 40);
    let model = fit_split_prior_model(&data, labels, &opts).unwrap();
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
    let back: FittedModel = serde_json::from_str(&json).unwrap();
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
    // A file written before the record existed (no `split_prior` key) still loads; its
    // certificate cannot be recomputed on the whole sample (θ fitted on A off the grid).
    let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
    old["task"]
        .as_object_mut()
        .unwrap()
        .remove("split_prior")
        .unwrap();
    let old: FittedModel = serde_json::from_value(old).unwrap();
    assert!(matches!(
        old.task,
        Task::Classification {
            split_prior: None,
            ..
        }
    ));
    let err = old.certify(&data, &CertifyOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    // A record written before `swapped` and `mean_scale` existed loads with their defaults
    // (plain direction, s = 1) and certifies the same.
    let mut older: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rec = older["task"]["split_prior"].as_object_mut().unwrap();
    assert_eq!(
        (rec["swapped"].clone(), rec["mean_scale"].clone()),
        (false.into(), 1.0.into())
    );
    rec.remove("swapped").unwrap();
    rec.remove("mean_scale").unwrap();
    let older: FittedModel = serde_json::from_value(older).unwrap();
    assert!((certify(&older, &data, 0.01).bound - c.bound).abs() < 1e-12);
    // A record that does not fit the model is refused when the file is read.
    for (key, value) in [
        ("n_b", serde_json::json!(99)),
        ("prior_scale", serde_json::json!(0.0)),
    ] {
        let mut broken: serde_json::Value = serde_json::from_str(&json).unwrap();
        broken["task"]["split_prior"][key] = value;
        let err = FittedModel::from_json(&broken.to_string(), "m.json").unwrap_err();
        assert!(err.to_string().contains("split prior record"), "{err}");
    }
}

/// The model pipeline with Catoni's λ from A and the prior-scale menu (fraction menu) gives
/// the bound of the library experiment's `split-prior+catoni+scale` row on the same split
/// (crabs, quick settings), and `certify` reproduces it.
#[test]
fn catoni_and_scale_through_the_model_match_the_experiment_row() {
    let (data, labels) = crabs();
    let settings = TighterClassifierSettings::quick();
    let mut cfg = settings.config();
    cfg.methods = vec!["split-prior+catoni+scale".into()];
    let seed = 1;
    let rows = tighter_classifier_rows("crabs", &data, &[seed], &cfg).unwrap();
    let (tr, _) = pacgp::data::train_test_split(data.n(), cfg.test_fraction, seed).unwrap();
    let train = data.subset(&tr);
    let mut opts = options(data.d(), SplitFraction::Menu, seed, settings.max_iter);
    opts.config.bound = cfg.pac.clone();
    let model = fit_split_prior_model(&train, labels, &opts).unwrap();
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

/// The record of a fit with both directions, SE iso beside SE-ARD and a mean-scale menu
/// (Catoni λ from A, t menu, F = ½): `certify` reproduces the fitted bound (to 1e-9, the
/// `ln 2` of the direction paid), the record keeps s, the direction and a menu of 2; the same
/// record with the direction flipped is refused (its part B is not Q's), and a file whose
/// choices lost the direction's `ln 2` is refused instead of certified with less. Seed 5 on
/// crabs picks the swapped direction (B = the permutation's first half).
#[test]
fn both_directions_iso_and_mean_scale_are_reproduced_by_certify() {
    let (data, labels) = crabs();
    let mut opts = options(data.d(), SplitFraction::Fixed(0.5), 5, 30);
    opts.config.both_directions = true;
    opts.config.alt_kernels = vec![Kernel::se_iso(1.0, 1.0)];
    opts.config.mean_scales = MEAN_SCALES.to_vec();
    let model = fit_split_prior_model(&data, labels, &opts).unwrap();
    let Task::Classification {
        split_prior: Some(record),
        ..
    } = &model.task
    else {
        panic!("no split record")
    };
    eprintln!(
        "swapped {} s {} t {} kernel {}",
        record.swapped,
        record.mean_scale,
        record.prior_scale,
        record.kernel_a.describe()
    );
    assert_eq!(record.menu, 2);
    assert!(record.swapped, "seed 5 picks the swapped direction");
    assert!(MEAN_SCALES.contains(&record.mean_scale));
    let paid: f64 = model.report.choices.iter().map(|c| c.nats).sum();
    assert!((paid - 2f64.ln()).abs() < 1e-12, "{paid}");
    let json = serde_json::to_string(&model).unwrap();
    let back: FittedModel = serde_json::from_str(&json).unwrap();
    let fitted = model.report.objective.unwrap();
    let c = certify(&back, &data, 0.01);
    eprintln!("fit {fitted:.15} certify {:.15}", c.bound);
    assert!((c.bound - fitted).abs() < 1e-9, "{} vs {fitted}", c.bound);
    assert!((c.penalty - 2f64.ln()).abs() < 1e-12);
    let mut flipped: serde_json::Value = serde_json::from_str(&json).unwrap();
    flipped["task"]["split_prior"]["swapped"] = (!record.swapped).into();
    let flipped = FittedModel::from_json(&flipped.to_string(), "m.json").unwrap();
    let err = flipped
        .certify(&data, &CertifyOptions::default())
        .unwrap_err();
    assert!(matches!(err, Error::NotTrainingSample { .. }), "{err}");
    let mut cheap: serde_json::Value = serde_json::from_str(&json).unwrap();
    let choices = cheap["report"]["choices"].as_array_mut().unwrap();
    choices.retain(|c| c["nats"].as_f64() == Some(0.0));
    let cheap = FittedModel::from_json(&cheap.to_string(), "m.json").unwrap();
    let err = cheap
        .certify(&data, &CertifyOptions::default())
        .unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
}

/// An EP prior on part A: Q's block on A holds EP's sites, from which `certify` rebuilds
/// `P_A` and reproduces the fitted bound (to 1e-9).
#[test]
fn ep_prior_is_reproduced_by_certify() {
    let (data, labels) = crabs();
    let mut opts = options(data.d(), SplitFraction::Fixed(0.5), 3, 20);
    opts.config.ep_prior = true;
    opts.config.prior_scales = vec![1.0];
    let model = fit_split_prior_model(&data, labels, &opts).unwrap();
    let fitted = model.report.objective.unwrap();
    let c = certify(&model, &data, 0.01);
    eprintln!("ep: fit {fitted:.15} certify {:.15}", c.bound);
    assert!((c.bound - fitted).abs() < 1e-9, "{} vs {fitted}", c.bound);
}
