//! A certificate nobody can fake by editing a model file: every priced or structural field of a
//! fitted model file of each family — the spec, θ, the scalers, the task (likelihood, SVM
//! settings, the split records and their menus), the sizes, the digest and the format — is
//! mutated by proptest (numbers perturbed, negated, zeroed, blown up; integers stepped; words
//! swapped for other option words; flags flipped), and `certify` must refuse the file (a typed
//! error on load or on certify) or give the unedited bound to 1e-10.
//!
//! Not mutated: the posterior Q itself (mean weights, site precisions, factors, inducing inputs;
//! a one-vs-rest class's, the softmax posterior's α and π̂) and a split record's free
//! parameters on part B — a PAC-Bayes bound holds for every Q, so such an edit certifies
//! another Q honestly; and the fit reports (diagnostics, never priced). The multi-class
//! families (one-vs-rest over laplace and the SVM, the softmax Laplace on the menu and on the
//! grid) are mutated in their K class models too. The softmax model's seed is the seed of its
//! sampled risk, a part of what its certificate states (its predictor line names it): an edited
//! seed draws anew and certifies honestly, and is not mutated. θ is
//! moved off its grid (or out of its menu) by a relative step of at least 1e-3: θ moved *onto
//! another grid point* is a different prior the spec's union bound pays for, so `certify`
//! certifies the edited model honestly (`theta_moved_within_the_grid_certifies_the_edited_model`);
//! only refitting tells it from the θ the fit chose. δ, ε, the confidence constant and the
//! Gibbs classifier are what a certificate states: they are given to `certify` explicitly here,
//! so editing their stored defaults changes nothing.

use std::sync::OnceLock;

use pacgp::bounds::ConfidenceTerm;
use pacgp::certificate::GibbsPredictor;
use pacgp::data::{load_csv, CsvOptions, Dataset};
use pacgp::model::{CertifyOptions, FittedModel};
use pacgp::objective::gp_split::SplitFraction;
use pacgp::spec::{
    BoundName, FitOptions, HyperPriorName, LooRequest, MethodName, MultiClass, PriorScale,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

mod common;

use common::repo;

/// A fitted model of one family: its file, its training sample, how it is certified and the
/// bound of the unedited file.
struct Family {
    name: &'static str,
    json: String,
    data: Dataset,
    opts: CertifyOptions,
    bound: f64,
}

fn regression_data() -> Dataset {
    let full = load_csv(
        repo("data/snelson-1d/snelson_train.csv"),
        &CsvOptions::default(),
    )
    .unwrap();
    full.subset(&(0..40).map(|i| i * 5).collect::<Vec<_>>())
}

use common::ripley60 as classification_data;

/// 45 rows of iris (15 per species), its three labels read as classes.
fn multiclass_data() -> (Dataset, pacgp::data::ClassLabels) {
    let t = pacgp::data::read_training(
        repo("data/iris/iris.csv"),
        &CsvOptions::default(),
        pacgp::data::TargetKind::Classes,
    )
    .unwrap();
    let rows: Vec<usize> = (0..150).filter(|i| i % 10 < 3).collect();
    (t.data.subset(&rows), t.classes.unwrap())
}

fn family(name: &'static str, method: MethodName, o: FitOptions) -> Family {
    let classifier = method.is_classifier();
    let (data, labels): (Dataset, pacgp::data::TrainingLabels) = if o.multiclass.is_some() {
        let (d, c) = multiclass_data();
        (d, c.into())
    } else if classifier {
        let (d, l) = classification_data();
        (d, l.into())
    } else {
        (regression_data(), pacgp::data::TrainingLabels::None)
    };
    let spec = o.check(method).unwrap_or_else(|e| panic!("{name}: {e}"));
    let model = pacgp::fit::fit(&spec, &data, labels).unwrap_or_else(|e| panic!("{name}: {e}"));
    let catoni = name.contains("catoni");
    let opts = CertifyOptions {
        epsilons: if classifier { vec![] } else { vec![0.3] },
        delta: Some(0.01),
        term: (!catoni).then_some(ConfidenceTerm::Maurer),
        predictor: Some(GibbsPredictor::Latent),
        loo: LooRequest::None,
    };
    let bound = model
        .certify(&data, &opts)
        .unwrap_or_else(|e| panic!("{name}: {e}"))[0]
        .certificate
        .bound;
    Family {
        name,
        json: serde_json::to_string(&model).unwrap(),
        data,
        opts,
        bound,
    }
}

/// One fitted model of every family, fitted once.
fn families() -> &'static Vec<Family> {
    static F: OnceLock<Vec<Family>> = OnceLock::new();
    F.get_or_init(|| {
        let eps = Some(0.3);
        let reg = |kernel: &str| FitOptions {
            kernel: Some(kernel.into()),
            epsilon: eps,
            ..Default::default()
        };
        let sparse = || FitOptions {
            inducing: Some(5),
            ..reg("se")
        };
        let split = |f| FitOptions {
            prior: Some(SplitFraction::Fixed(f)),
            ..Default::default()
        };
        let multiclass = |m| FitOptions {
            multiclass: Some(m),
            ..Default::default()
        };
        vec![
            family("gpr", MethodName::Gpr, reg("se")),
            family("vfe", MethodName::Vfe, sparse()),
            family("fitc", MethodName::Fitc, sparse()),
            family("pac-gp", MethodName::PacGp, reg("se")),
            family(
                "pac-gp coarse prior",
                MethodName::PacGp,
                FitOptions {
                    hyper_prior: Some(HyperPriorName::Gaussian),
                    ..reg("se")
                },
            ),
            family("pac-sgp", MethodName::PacSgp, sparse()),
            family(
                "pac-sgp warm-started, capped",
                MethodName::PacSgp,
                FitOptions {
                    pretrain: Some(20),
                    max_iter: Some(15),
                    ..sparse()
                },
            ),
            family(
                "greedy-sparse",
                MethodName::GreedySparse,
                FitOptions {
                    inducing: Some(10),
                    ..reg("se")
                },
            ),
            family(
                "pac-gp split prior",
                MethodName::PacGp,
                FitOptions {
                    prior: Some(SplitFraction::Fixed(0.5)),
                    ..reg("se")
                },
            ),
            family(
                "pac-sgp split prior",
                MethodName::PacSgp,
                FitOptions {
                    prior: Some(SplitFraction::Fixed(0.5)),
                    ..sparse()
                },
            ),
            family("laplace", MethodName::Laplace, FitOptions::default()),
            family(
                "laplace ml2",
                MethodName::Laplace,
                FitOptions {
                    select: Some(pacgp::spec::Selection::Ml2),
                    kernel: Some("se".into()),
                    ..Default::default()
                },
            ),
            family("ep", MethodName::Ep, FitOptions::default()),
            family(
                "mean-field",
                MethodName::MeanField,
                FitOptions {
                    kappa: Some(0.05),
                    ..Default::default()
                },
            ),
            family(
                "ivm",
                MethodName::Ivm,
                FitOptions {
                    active_set: Some(20),
                    ..Default::default()
                },
            ),
            family(
                "sogp",
                MethodName::Sogp,
                FitOptions {
                    active_set: Some(20),
                    ..Default::default()
                },
            ),
            family(
                "pac-gpc",
                MethodName::PacGpc,
                FitOptions {
                    kernel: Some("se".into()),
                    ..Default::default()
                },
            ),
            family("svm", MethodName::Svm, FitOptions::default()),
            family(
                "one-vs-rest laplace",
                MethodName::Laplace,
                multiclass(MultiClass::OneVsRest),
            ),
            family(
                "one-vs-rest svm",
                MethodName::Svm,
                multiclass(MultiClass::OneVsRest),
            ),
            family(
                "softmax",
                MethodName::Laplace,
                multiclass(MultiClass::Softmax),
            ),
            family(
                "softmax ml2",
                MethodName::Laplace,
                FitOptions {
                    select: Some(pacgp::spec::Selection::Ml2),
                    kernel: Some("se".into()),
                    ..multiclass(MultiClass::Softmax)
                },
            ),
            family(
                "laplace split prior catoni",
                MethodName::Laplace,
                FitOptions {
                    bound: Some(BoundName::Catoni),
                    prior_scale: Some(PriorScale::Auto),
                    both_directions: Some(true),
                    ..split(0.5)
                },
            ),
        ]
    })
}

/// Is `path` a priced or structural field of family `f` (module doc)?
fn mutable(f: &str, path: &[String]) -> bool {
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    match p.as_slice() {
        ["spec", "seed"] if f.starts_with("softmax") => false,
        // A one-vs-rest class model is a model: the same rule inside it.
        ["task", "members", _, rest @ ..] => {
            mutable(f, &rest.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        }
        ["task", "posterior", field, ..] if *field != "kernel" => false,
        ["report", ..] | ["posterior", ..] if p.get(1) != Some(&"kernel") => false,
        ["task", record, "params", ..] | ["task", record, "point_noise", ..]
            if record.ends_with("split_prior") =>
        {
            false
        }
        _ => true,
    }
}

/// Whether `path` leads into a kernel's hyperparameters (the model's, a one-vs-rest class's
/// or the softmax posterior's).
fn is_theta(path: &[String]) -> bool {
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    matches!(
        p.as_slice(),
        ["posterior", "kernel", _, ..]
            | ["task", "members", _, "posterior", "kernel", _, ..]
            | ["task", "posterior", "kernel", _, ..]
    )
}

/// Every path to a number, string or flag in a JSON value (arrays: their first 3 entries).
fn leaves(v: &Value) -> Vec<Vec<String>> {
    common::json_paths(v, &|c| {
        matches!(c, Value::Number(_) | Value::String(_) | Value::Bool(_))
    })
}

fn at<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match v {
        Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
        other => &mut other[k.as_str()],
    })
}

/// Words an edit may put in place of a word: option values and kernel tags.
const WORDS: &[&str] = &[
    "gpr",
    "vfe",
    "fitc",
    "dtc",
    "pac-gp",
    "pac-sgp",
    "sparse",
    "classifier",
    "pac-gpc",
    "svm",
    "laplace",
    "ep",
    "kl",
    "sqrt",
    "catoni",
    "grid",
    "candidates",
    "maurer",
    "sharp",
    "seeger",
    "probit",
    "logistic",
    "kmeans",
    "subset",
    "greedy",
    "linear",
    "quadratic",
    "smo",
    "adatron",
    "latent",
    "noisy",
    "auto",
    "kernel",
    "se",
    "se-ard",
    "matern52",
    "squared_exponential",
    "matern32",
    "sum",
    "product",
    "scale",
    "stationary",
    "constant",
    "pacgp-model/1",
    "one-vs-rest",
    "softmax",
    "virginica",
    "x",
];

/// One edit of a leaf, drawn by proptest: `(kind, factor, word)`; a kernel hyperparameter
/// (`theta`) is only scaled by `1 + u`, `|u| ≥ 1e-3`, which leaves every grid and menu.
fn mutate(v: &mut Value, (kind, u, w): (u8, f64, usize), theta: bool) -> Option<String> {
    let old = v.clone();
    if theta {
        let x = old.as_f64()?;
        let u = if u.abs() < 1e-3 { 1e-3 } else { u };
        *v = serde_json::Number::from_f64(x * (1.0 + u) + u * 1e-3).map(Value::Number)?;
        return Some(format!("{old} → {v}"));
    }
    *v = match &old {
        Value::Bool(b) => Value::Bool(!b),
        Value::String(s) => {
            let word = WORDS[w % WORDS.len()];
            if word == s {
                return None;
            }
            Value::String(word.into())
        }
        Value::Number(n) if n.is_u64() => {
            let x = n.as_u64().unwrap();
            Value::from(match kind % 3 {
                0 => x + 1,
                1 => x.saturating_sub(1),
                _ => x * 2 + 3,
            })
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap();
            let y = match kind % 5 {
                0 => x * (1.0 + u),
                1 => x + u,
                2 => -x,
                3 => 0.0,
                _ => x * 1e3 + 1.0,
            };
            if y == x {
                return None;
            }
            serde_json::Number::from_f64(y).map(Value::Number)?
        }
        _ => return None,
    };
    Some(format!("{old} → {v}"))
}

/// A mutated file is refused, or certifies to the unedited bound.
fn refused_or_unchanged(f: &Family, text: &str) -> Result<(), String> {
    let Ok(model) = FittedModel::from_json(text, "m.json") else {
        return Ok(());
    };
    match model.certify(&f.data, &f.opts) {
        Err(_) => Ok(()),
        Ok(c) if (c[0].certificate.bound - f.bound).abs() <= 1e-10 => Ok(()),
        Ok(c) => Err(format!(
            "certified {} (unedited {})",
            c[0].certificate.bound, f.bound
        )),
    }
}

#[test]
fn every_edit_of_a_priced_or_structural_field_is_refused_or_changes_nothing() {
    let edits = std::cell::Cell::new(0usize);
    for f in families() {
        let value: Value = serde_json::from_str(&f.json).unwrap();
        let mut paths = leaves(&value);
        paths.retain(|p| mutable(f.name, p));
        assert!(paths.len() > 5, "{}: {paths:?}", f.name);
        // Two proptest edits per field (one for the slow split families).
        let cases = if f.name.contains("split") { 1 } else { 2 };
        for path in &paths {
            // A runner per field, seeded by the family and the field: reproducible edits.
            let mut seed = [0u8; 32];
            for (i, b) in format!("{}/{}", f.name, path.join(".")).bytes().enumerate() {
                seed[i % 32] = seed[i % 32].wrapping_mul(31).wrapping_add(b);
            }
            let config = Config {
                cases,
                failure_persistence: None,
                ..Config::default()
            };
            let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
            let mut runner = TestRunner::new_with_rng(config, rng);
            let edit = (any::<u8>(), -0.5f64..0.5, any::<usize>());
            runner
                .run(&edit, |e| {
                    let mut v = value.clone();
                    let theta = is_theta(path) && at(&mut value.clone(), path).is_number();
                    let Some(what) = mutate(at(&mut v, path), e, theta) else {
                        return Ok(());
                    };
                    edits.set(edits.get() + 1);
                    refused_or_unchanged(f, &v.to_string()).map_err(|msg| {
                        TestCaseError::fail(format!("{}: {} {what}: {msg}", f.name, path.join(".")))
                    })
                })
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    assert!(edits.get() > 300, "{} edits", edits.get());
}

/// θ moved onto another point of the spec's grid is a different prior the certificate pays
/// for: `certify` certifies the edited model (its KL recomputed under the edited prior, the
/// same price), not the fitted one.
#[test]
fn theta_moved_within_the_grid_certifies_the_edited_model() {
    let f = &families()[3]; // pac-gp
    let mut v: Value = serde_json::from_str(&f.json).unwrap();
    let theta = at(
        &mut v,
        &["posterior".into(), "kernel".into(), "inner".into()],
    );
    let t = theta["ln_lengthscale"][0].as_f64().unwrap();
    let moved = pacgp::bounds::HyperGrid::default().round(&[t + 0.25])[0];
    theta["ln_lengthscale"][0] = moved.into();
    let edited = FittedModel::from_json(&v.to_string(), "m.json").unwrap();
    let c = edited
        .certify(&f.data, &f.opts)
        .unwrap()
        .remove(0)
        .certificate;
    let original = FittedModel::from_json(&f.json, "m.json").unwrap();
    let o = original
        .certify(&f.data, &f.opts)
        .unwrap()
        .remove(0)
        .certificate;
    assert_eq!(c.penalty, o.penalty);
    assert!((c.kl - edited.posterior().unwrap().kl_to_prior().unwrap()).abs() < 1e-12);
    assert!(c.kl != o.kl && c.bound != o.bound);
}

/// The two edits a new user tried: a price set to 0 no longer exists to edit (the file holds
/// no prices), and θ moved off the spec's grid is refused with a line naming the parameter;
/// a file of the format before the spec is refused as written by an older version.
#[test]
fn the_two_edits_of_the_issue_and_an_old_file_are_refused() {
    let f = &families()[3]; // pac-gp
    assert!(!f.json.contains("nats"), "no price is stored");
    let mut v: Value = serde_json::from_str(&f.json).unwrap();
    // `se` is σ_f²·SE(l): the lengthscale is the scaled kernel's inner one.
    let theta = at(
        &mut v,
        &["posterior".into(), "kernel".into(), "inner".into()],
    );
    let t = theta["ln_lengthscale"][0].as_f64().unwrap();
    theta["ln_lengthscale"][0] = (t + 0.005).into();
    let model = FittedModel::from_json(&v.to_string(), "m.json").unwrap();
    let err = model.certify(&f.data, &f.opts).unwrap_err();
    assert!(
        matches!(err, pacgp::Error::ModelMismatch { .. })
            && err.to_string().contains("ln_lengthscale"),
        "{err}"
    );
    let mut old: Value = serde_json::from_str(&f.json).unwrap();
    old["format"] = "pacgp-model/1".into();
    let err = FittedModel::from_json(&old.to_string(), "m.json").unwrap_err();
    assert!(err.to_string().contains("older version"), "{err}");
}
