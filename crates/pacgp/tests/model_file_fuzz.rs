//! Fuzzing the model-file loader (issue 11): every number of a valid model file is perturbed,
//! negated, zeroed, blown up or made non-finite, and arrays lose or gain an entry. Loading must
//! give `Ok` or a typed error, never a panic; whatever loads must predict and certify without
//! panicking (an `Err` is fine), and a certificate it gives must be a probability (issue 43:
//! `certify` on an edited file) — and a fitted model must round-trip bit-exactly. The case
//! count honours `PROPTEST_CASES` (`common::fuzz_cases`) for the long run on demand.

mod common;

use std::sync::OnceLock;

use pacgp::data::{load_csv, CsvOptions};
use pacgp::model::{CertifyOptions, FittedModel};
use pacgp::spec::{FitOptions, MethodName};
use proptest::prelude::*;
use serde_json::Value;

use common::repo;

/// Three small fitted models (site, whitened and classifier forms) as JSON, fitted once.
fn models() -> &'static Vec<(String, pacgp::data::Dataset)> {
    static M: OnceLock<Vec<(String, pacgp::data::Dataset)>> = OnceLock::new();
    M.get_or_init(|| {
        let full = load_csv(
            repo("data/snelson-1d/snelson_train.csv"),
            &CsvOptions::default(),
        )
        .unwrap();
        let idx: Vec<usize> = (0..40).collect();
        let reg = full.subset(&idx);
        let fit = |method, o: FitOptions, data: &pacgp::data::Dataset, labels| {
            pacgp::fit::fit(&o.check(method).unwrap(), data, labels).unwrap()
        };
        let gpr = fit(
            MethodName::Gpr,
            FitOptions {
                kernel: Some("se".into()),
                epsilon: Some(0.3),
                ..Default::default()
            },
            &reg,
            None,
        );
        let vfe = fit(
            MethodName::Vfe,
            FitOptions {
                kernel: Some("se".into()),
                inducing: Some(5),
                epsilon: Some(0.3),
                ..Default::default()
            },
            &reg,
            None,
        );
        let (cls, labels) = common::ripley60();
        let lap = fit(
            MethodName::Laplace,
            FitOptions::default(),
            &cls,
            Some(labels),
        );
        vec![
            (serde_json::to_string(&gpr).unwrap(), reg.clone()),
            (serde_json::to_string(&vfe).unwrap(), reg),
            (serde_json::to_string(&lap).unwrap(), cls),
        ]
    })
}

/// Every path to a number or an array in a JSON value (arrays: their first 3 entries).
fn paths(v: &Value) -> Vec<Vec<String>> {
    common::json_paths(v, &|c| matches!(c, Value::Number(_) | Value::Array(_)))
}

fn at<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match v {
        Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
        other => &mut other[k.as_str()],
    })
}

/// One mutation of the value at a path.
fn mutate(v: &mut Value, kind: u8, scale: f64) {
    match (v, kind) {
        (Value::Array(a), 0) => {
            a.pop();
        }
        (Value::Array(a), _) => {
            if let Some(last) = a.last().cloned() {
                a.push(last);
            }
        }
        (v @ Value::Number(_), k) => {
            let x = v.as_f64().unwrap_or(0.0);
            *v = match k % 6 {
                0 => serde_json::json!(-x),
                1 => serde_json::json!(0.0),
                2 => serde_json::json!(x * scale),
                3 => serde_json::json!(1e308),
                4 => Value::Null,
                _ => serde_json::json!(x + scale),
            };
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::fuzz_cases(2000)))]

    #[test]
    fn mutated_model_files_never_panic(which in 0usize..3, pick in any::<prop::sample::Index>(), kind in 0u8..6, scale in -1e3f64..1e3) {
        let (text, data) = &models()[which];
        let mut v: Value = serde_json::from_str(text).unwrap();
        let all = paths(&v);
        let path = pick.get(&all).clone();
        mutate(at(&mut v, &path), kind, scale);
        let mutated = serde_json::to_string(&v).unwrap();
        if let Ok(m) = FittedModel::from_json(&mutated, "fuzz") {
            // What `certify` states of an edited file that loads is a bound in [0, 1] on a
            // risk in [0, 1], or a typed error.
            for r in m.certify(data, &CertifyOptions::default()).unwrap_or_default() {
                let c = &r.certificate;
                prop_assert!((0.0..=1.0).contains(&c.bound), "bound {}", c.bound);
                prop_assert!((0.0..=1.0).contains(&c.empirical_risk), "risk {}", c.empirical_risk);
                prop_assert!(c.bound >= c.empirical_risk, "{} < {}", c.bound, c.empirical_risk);
            }
            if m.is_classifier() {
                let _ = m.predict_classification(data.x.as_ref());
            } else {
                let _ = m.predict_regression(data.x.as_ref());
            }
        }
    }
}

/// A fitted model written and read back is the same model, bit for bit.
#[test]
fn fitted_models_round_trip_bit_exactly() {
    for (text, data) in models() {
        let m = FittedModel::from_json(text, "round trip").unwrap();
        assert_eq!(&serde_json::to_string(&m).unwrap(), text);
        if m.is_classifier() {
            let a = m.predict_classification(data.x.as_ref()).unwrap();
            let b = FittedModel::from_json(text, "again")
                .unwrap()
                .predict_classification(data.x.as_ref())
                .unwrap();
            assert_eq!(a, b);
        }
    }
}
