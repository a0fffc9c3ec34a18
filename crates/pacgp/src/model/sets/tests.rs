use super::jackknife::row_loos;
use super::*;
use crate::data::{read_training, CsvOptions, TargetKind};
use crate::spec::{FitOptions, IntervalScore, MethodName};

/// `method` with jackknife+ (LAC) sets, seed 1 and, for IVM, an active set of `active_set`
/// on the shipped data set `path`.
fn jackknife_model(
    path: &str,
    method: MethodName,
    active_set: Option<usize>,
) -> (FittedModel, crate::data::Dataset) {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    let t = read_training(file, &CsvOptions::default(), TargetKind::Classes).unwrap();
    let spec = FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        interval_score: Some(IntervalScore::Lac),
        active_set,
        seed: Some(1),
        ..Default::default()
    }
    .check(method)
    .unwrap();
    let model = crate::fit::fit(&spec, &t.data, t.classes.unwrap()).unwrap();
    (model, t.data)
}

/// IVM with jackknife+ sets and an active set of `d` on the shipped data set `path`.
fn ivm_model(path: &str, d: usize) -> (FittedModel, crate::data::Dataset) {
    jackknife_model(path, MethodName::Ivm, Some(d))
}

/// `model`'s sets at α = 0.1 on `data`'s inputs, one per row, and the same again from the
/// model file.
fn assert_sets_survive_the_file(model: &FittedModel, data: &crate::data::Dataset) {
    let sets = model.predict_sets(data.x.as_ref(), 0.1).unwrap();
    assert_eq!(sets.sets.len(), data.n());
    let text = serde_json::to_string(model).unwrap();
    let back = FittedModel::from_json(&text, "m").unwrap();
    assert_eq!(back.predict_sets(data.x.as_ref(), 0.1).unwrap(), sets);
}

/// Member c of `path`'s model (binary, or one-vs-rest member) refitted by its inference
/// method on the standardised sample `x` with its ±1 labels `y`, and `certify`'s approximate
/// leave-one-out of that fit, with the member's posterior and likelihood.
fn member_certify_loo<'a>(
    path: &str,
    c: usize,
    m: &'a FittedModel,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> (
    &'a GaussianPosterior,
    &'a crate::likelihood::Likelihood,
    crate::inference::ClassifierFit,
    crate::loo::ApproxLoo,
) {
    let Task::Classification {
        posterior,
        likelihood,
        ..
    } = &m.task
    else {
        panic!("{path}: member {c} is not a binary classifier")
    };
    let method = m.inference_method().unwrap();
    let fit = method.fit(posterior.kernel(), likelihood, x, y).unwrap();
    let loo =
        crate::loo::classifier_loo(&method, likelihood, x, y, &fit, crate::loo::LooMode::Approx)
            .unwrap();
    (posterior, likelihood, fit, loo.approx.unwrap())
}

/// IVM's leave-one-out models at the training inputs (model −i at `x_i`: the downdate in
/// the active set, the full model outside) and the calibration marginals jackknife+ scores
/// are `certify`'s approximate leave-one-out of the method refitted on the sample
/// ([`crate::loo::training_cavities`], [`crate::loo::classifier_loo`]), to 1e-10, as are
/// the class probabilities of both: binary on Ripley's set, one-vs-rest on iris. Its sets
/// reload from the model file unchanged.
#[test]
fn ivm_row_loo_at_training_inputs_is_certifys_loo() {
    for (path, d) in [
        ("data/ripley-synth/synth_tr.csv", 40),
        ("data/iris/iris.csv", 25),
    ] {
        let (model, data) = ivm_model(path, d);
        let Some(SetRecord::JackknifePlus {
            labels,
            active: Some(active),
            ..
        }) = model.sets.as_deref()
        else {
            panic!("{path}: no IVM jackknife+ record")
        };
        let n = data.n();
        let x = model.x_scaler.transform(data.x.as_ref()).unwrap();
        let (loos, calibration) = row_loos(
            &model,
            &LooRecord {
                labels,
                active: Some(active),
                inputs: None,
            },
        )
        .unwrap();
        let signs = model.site_signs(labels).unwrap();
        let members = model.site_models().unwrap();
        assert_eq!(loos.len(), members.len());
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * (1.0 + b.abs());
        let (mut own, mut at_rows) = (Vec::new(), Vec::new());
        for (c, ((loo, cal), (m, y))) in loos
            .iter()
            .zip(&calibration)
            .zip(members.into_iter().zip(&signs))
            .enumerate()
        {
            let (_, likelihood, fit, certify) = member_certify_loo(path, c, m, x.as_ref(), y);
            assert_eq!(fit.basis_indices.as_ref(), Some(&active.rows[c]));
            let want = crate::loo::training_cavities(&fit, x.as_ref()).unwrap();
            let margins = certify.loo.loo_margins;
            let bias = likelihood.bias_and_slope().0;
            let diag = loo.at(x.as_ref()).unwrap();
            let outside = (0..n).filter(|i| !active.rows[c].contains(i)).count();
            assert!(outside > 0, "{path}: member {c} has every row active");
            for i in 0..n {
                let (m_i, v_i) = (diag.mean[i * n + i], diag.var[i * n + i]);
                assert!(close(m_i, want.mean[i]), "{path} {c} mean {i}");
                assert!(close(v_i, want.var[i]), "{path} {c} variance {i}");
                assert!(close(cal.mean[i], want.mean[i]), "{path} {c} cal {i}");
                assert!(close(cal.var[i], want.var[i]), "{path} {c} cal var {i}");
                assert!(close(y[i] * (m_i + bias), margins[i]), "{path} margin {i}");
            }
            own.push(Marginals {
                mean: want.mean,
                var: want.var,
            });
            at_rows.push(Marginals {
                mean: (0..n).map(|i| diag.mean[i * n + i]).collect(),
                var: (0..n).map(|i| diag.var[i * n + i]).collect(),
            });
        }
        let (p, q) = (
            model.latent_class_probabilities(at_rows).unwrap(),
            model.latent_class_probabilities(own).unwrap(),
        );
        for i in 0..n {
            for k in 0..p.ncols() {
                assert!(close(p[(i, k)], q[(i, k)]), "{path} p {i},{k}");
            }
        }
        // The sets themselves, and again from the model file.
        assert_sets_survive_the_file(&model, &data);
    }
}

/// An IVM record whose active rows are edited (out of range, repeated, or another row's
/// inputs), or that has lost them, is refused on load with a typed error.
#[test]
fn ivm_record_with_edited_active_rows_is_refused() {
    let (model, _) = ivm_model("data/ripley-synth/synth_tr.csv", 20);
    let text = serde_json::to_string(&model).unwrap();
    FittedModel::from_json(&text, "m").unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rows = json["sets"]["active"]["rows"][0]
        .as_array()
        .unwrap()
        .clone();
    let r1 = rows[1].as_u64().unwrap();
    let other = (0..250).find(|r| !rows.iter().any(|v| v == r)).unwrap();
    for value in [
        serde_json::json!(250),
        serde_json::json!(r1),
        serde_json::json!(other),
    ] {
        let mut edited = json.clone();
        edited["sets"]["active"]["rows"][0][0] = value;
        let e = FittedModel::from_json(&edited.to_string(), "m").unwrap_err();
        assert!(
            e.to_string().contains("training row") || e.to_string().contains("basis"),
            "{e}"
        );
    }
    let mut edited = json.clone();
    edited["sets"]["active"]["rows"]
        .as_array_mut()
        .unwrap()
        .push(rows.into());
    assert!(FittedModel::from_json(&edited.to_string(), "m").is_err());
    // Without its active sets the record is not IVM's.
    let mut edited = json;
    edited["sets"].as_object_mut().unwrap().remove("active");
    let e = FittedModel::from_json(&edited.to_string(), "m").unwrap_err();
    assert!(e.to_string().contains("active sets"), "{e}");
}

/// Naive mean field's leave-one-out models at the training inputs (model −i at `x_i`, through
/// the functions at any input: [`crate::loo::MeanFieldLooFunctions::shifts`]) and the
/// calibration marginals jackknife+ scores are `certify`'s linear-response leave-one-out of
/// the method refitted on the sample ([`crate::loo::classifier_loo`], eq. 17.41): `y_i` times
/// the latent mean is its margin, to 1e-9, and the variance is the posterior's at `x_i`.
/// Binary on Ripley's set, where the count of labels below probability ½ is `certify`'s error
/// count, and one-vs-rest on iris (every member), whose sets reload from the model file.
#[test]
fn mean_field_row_loo_at_training_inputs_is_certifys_loo() {
    for path in ["data/ripley-synth/synth_tr.csv", "data/iris/iris.csv"] {
        let (model, data) = jackknife_model(path, MethodName::MeanField, None);
        let Some(SetRecord::JackknifePlus {
            labels,
            active: None,
            ..
        }) = model.sets.as_deref()
        else {
            panic!("{path}: no mean-field jackknife+ record")
        };
        let n = data.n();
        let x = model.x_scaler.transform(data.x.as_ref()).unwrap();
        let (loos, calibration) = row_loos(
            &model,
            &LooRecord {
                labels,
                active: None,
                inputs: None,
            },
        )
        .unwrap();
        let members = model.site_models().unwrap();
        let signs = model.site_signs(labels).unwrap();
        assert_eq!(loos.len(), members.len());
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + b.abs());
        let mut errors = Vec::new();
        for (c, ((loo, cal), (m, y))) in loos
            .iter()
            .zip(&calibration)
            .zip(members.into_iter().zip(&signs))
            .enumerate()
        {
            assert!(matches!(loo, super::jackknife::RowLoo::MeanField { .. }));
            let (posterior, _, _, certify) = member_certify_loo(path, c, m, x.as_ref(), y);
            assert_eq!(certify.estimator, crate::loo::LooEstimator::LinearResponse);
            let margins = certify.loo.loo_margins;
            let var = posterior.predict(x.as_ref()).unwrap().var;
            let diag = loo.at(x.as_ref()).unwrap();
            for i in 0..n {
                assert!(close(y[i] * cal.mean[i], margins[i]), "{path} {c} cal {i}");
                assert!(
                    close(y[i] * diag.mean[i * n + i], margins[i]),
                    "{path} {c} x_{i}"
                );
                assert_eq!(cal.var[i], var[i], "{path} {c} cal var {i}");
                assert!(close(diag.var[i * n + i], var[i]), "{path} {c} var x_{i}");
            }
            errors.push(certify.loo.errors);
        }
        if model.classes().is_none() {
            let p = model.latent_class_probabilities(calibration).unwrap();
            let wrong = (0..n).filter(|&i| !(p[(i, labels[i])] > 0.5)).count();
            assert_eq!(wrong, errors[0]);
            assert!(wrong > 0 && wrong < n / 4, "{wrong}");
        } else {
            assert_sets_survive_the_file(&model, &data);
        }
    }
}

/// Jackknife+ blocks of test inputs shrink with the training rows so that N × block stays
/// within 2²⁵ values: 128 inputs up to N = 262 144, 33 at 10⁶, one at 10⁸.
#[test]
fn jackknife_blocks_are_bounded_in_n() {
    use super::jackknife::block_inputs;
    assert_eq!(block_inputs(0), 128);
    assert_eq!(block_inputs(250), 128);
    assert_eq!(block_inputs(262_144), 128);
    assert_eq!(block_inputs(1_000_000), 33);
    assert_eq!(block_inputs(100_000_000), 1);
}
