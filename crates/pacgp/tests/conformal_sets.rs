//! A classifier's split-conformal prediction sets against independent computations: the set
//! rule (LAC and APS scores, the calibrated threshold, the sets) against a brute-force numpy
//! computation (`fixtures/gen_conformal_sets.py`); a fitted model's stored calibration scores
//! and its sets recomputed here from part A's model, the split re-derived and the quantile
//! taken by sorting; the empirical coverage over 20 seeded splits of a shipped data set against
//! `1 − α` within a stated Monte Carlo tolerance; multi-class models (one-vs-rest and softmax);
//! model files that reload to the same sets and edited records refused; the refusals. And the
//! jackknife+ sets of the site-form classifiers (Laplace, EP, IVM, pac-gpc, one-vs-rest over
//! them) and
//! of the linear-response ones (the SVM and naive mean field, binary or one-vs-rest): their
//! coverage over 20 seeded splits against `1 − 2α` (the guarantee) and `1 − α`, the sets
//! recomputed from independent fits, the file round trip, edited labels refused, and every
//! other family refused naming split-conformal.

use pacgp::conformal::sets::{label_scores, set_of, threshold, true_label_score};
use pacgp::data::{train_test_split, Dataset, SampleSplit};
use pacgp::model::{FittedModel, SetRecord};
use pacgp::spec::{FitOptions, IntervalMethod, IntervalScore, MethodName, MultiClass, SpecOption};
use pacgp::Error;
use serde::Deserialize;

mod common;
use common::{classes, fit_classes as fit, repo};

/// Ripley's synthetic set: its 250 training rows, its 1000 test rows and their two classes.
fn ripley() -> (Dataset, Dataset, pacgp::data::ClassLabels) {
    let (train, c2) = classes("data/ripley-synth/synth_tr.csv");
    let (test, _) = classes("data/ripley-synth/synth_te.csv");
    (train, test, c2)
}

/// Ripley's synthetic set as one sample of 1250 rows (training rows first) and its classes.
fn ripley_all() -> (Dataset, pacgp::data::ClassLabels) {
    let (train, test, c2) = ripley();
    (train.concat(&test).unwrap(), c2)
}

fn with_sets(fraction: f64, score: IntervalScore, seed: u64) -> FitOptions {
    FitOptions {
        intervals: Some(IntervalMethod::SplitConformal { fraction }),
        interval_score: Some(score),
        seed: Some(seed),
        ..Default::default()
    }
}

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    k: usize,
    calibration: Vec<Vec<f64>>,
    labels: Vec<usize>,
    calibration_scores: Scores,
    test: Vec<Vec<f64>>,
    results: Vec<Expected>,
}

#[derive(Deserialize)]
struct Scores {
    lac: Vec<f64>,
    aps: Vec<f64>,
}

#[derive(Deserialize)]
struct Expected {
    score: String,
    alpha: f64,
    threshold: Option<f64>,
    sets: Option<Vec<Vec<usize>>>,
}

/// The scores, thresholds and sets of the numpy brute force, exactly (the probabilities are
/// multiples of 1/1024, so every score is exact in any summation order; ties included).
#[test]
fn set_rule_matches_numpy_brute_force() {
    let text =
        std::fs::read_to_string(repo("crates/pacgp/tests/fixtures/conformal_sets.json")).unwrap();
    let fixture: Fixture = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    for case in &fixture.cases {
        for (score, want) in [
            (IntervalScore::Lac, &case.calibration_scores.lac),
            (IntervalScore::Aps, &case.calibration_scores.aps),
        ] {
            let got: Vec<f64> = case
                .calibration
                .iter()
                .zip(&case.labels)
                .map(|(p, &y)| true_label_score(score, p, y).unwrap())
                .collect();
            assert_eq!(&got, want, "{score} calibration scores, K = {}", case.k);
        }
        for r in &case.results {
            let score: IntervalScore = r.score.parse().unwrap();
            let scores = match score {
                IntervalScore::Lac => &case.calibration_scores.lac,
                _ => &case.calibration_scores.aps,
            };
            let q = threshold(scores, r.alpha);
            let (Some(want_q), Some(want_sets)) = (r.threshold, &r.sets) else {
                assert!(
                    q.is_err(),
                    "α = {} on n = {} must be refused",
                    r.alpha,
                    scores.len()
                );
                continue;
            };
            let q = q.unwrap();
            assert_eq!(q, want_q, "{score} α = {} K = {}", r.alpha, case.k);
            for (p, want) in case.test.iter().zip(want_sets) {
                assert_eq!(
                    &set_of(score, p, q).unwrap(),
                    want,
                    "{score} α = {}",
                    r.alpha
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 38); // 4 cases × 2 scores × 5 levels, 2 refused
}

/// The `⌈(1−α)(n+1)⌉`-th smallest of `scores`, by sorting (independent of the library's ranks).
fn sorted_quantile(scores: &[f64], alpha: f64) -> f64 {
    let mut v = scores.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((1.0 - alpha) * (v.len() as f64 + 1.0) - 1e-9).ceil() as usize;
    v[rank - 1]
}

/// APS by sorting: the cumulative probability of the labels in decreasing order, up to the last
/// label as likely as y.
fn aps_by_sorting(p: &[f64], y: usize) -> f64 {
    let mut sorted = p.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    sorted.iter().take_while(|v| **v >= p[y]).sum()
}

/// The stored record recomputed here: part B re-derived from the split's definition, its
/// scores from part A's class probabilities, and the sets at new points from the sorted
/// quantile. One-vs-rest with LAC and the softmax Laplace with APS, on iris (3 classes).
#[test]
fn multiclass_record_and_sets_recomputed() {
    let (iris, c3) = classes("data/iris/iris.csv");
    for (multiclass, score) in [
        (MultiClass::OneVsRest, IntervalScore::Lac),
        (MultiClass::Softmax, IntervalScore::Aps),
    ] {
        let o = FitOptions {
            multiclass: Some(multiclass),
            ..with_sets(0.6, score, 3)
        };
        let model = fit(MethodName::Laplace, o, &iris, &c3);
        let Some(record) = &model.sets else {
            panic!("no set record")
        };
        let SetRecord::SplitConformal { part_a, scores } = record.as_ref() else {
            panic!("not a split-conformal record")
        };
        let (a, b) = SampleSplit::new(0.6, 3).parts(&iris).unwrap();
        assert_eq!(part_a.n_train, a.len());
        let held = iris.subset(&b);
        let p = part_a.class_probabilities(held.x.as_ref()).unwrap();
        for i in 0..held.n() {
            let row: Vec<f64> = (0..3).map(|j| p[(i, j)]).collect();
            let y = held.y[i] as usize;
            let want = match score {
                IntervalScore::Lac => 1.0 - row[y],
                _ => aps_by_sorting(&row, y),
            };
            assert!((scores[i] - want).abs() <= 1e-12, "{multiclass} row {i}");
        }
        for alpha in [0.05, 0.1, 0.25] {
            let sets = model.predict_sets(iris.x.as_ref(), alpha).unwrap();
            let q = sorted_quantile(scores, alpha);
            assert_eq!(sets.threshold, Some(q));
            assert_eq!(sets.classes, c3.labels);
            assert_eq!(sets.statement.guaranteed_coverage, 1.0 - alpha);
            assert_eq!(sets.statement.n_scores, b.len());
            let p = part_a.class_probabilities(iris.x.as_ref()).unwrap();
            for (i, set) in sets.sets.iter().enumerate() {
                let row: Vec<f64> = (0..3).map(|j| p[(i, j)]).collect();
                let want: Vec<usize> = (0..3)
                    .filter(|&y| {
                        let s = match score {
                            IntervalScore::Lac => 1.0 - row[y],
                            _ => aps_by_sorting(&row, y),
                        };
                        s <= q
                    })
                    .collect();
                assert_eq!(set, &want, "{multiclass} α = {alpha} row {i}");
            }
        }
    }
}

/// Over 20 seeded splits of Ripley's synthetic set (train and test files together, 1250 rows:
/// 300 to fit, of which half calibrate, 950 to test), the mean coverage of laplace's sets at
/// α = 0.1 is ≥ 1 − α up to Monte Carlo error, and, with LAC, ≤ (r + 1)/(n + 1) up to it, where
/// r = ⌈(1−α)(n+1)⌉ (LAC's scores are continuous, so no ties: split conformal's expected
/// coverage is then at most that). The coverage of one split given its calibration part is
/// Beta(r, n + 1 − r) (Vovk 2012; Angelopoulos & Bates, "A gentle introduction to conformal
/// prediction", 2021), sd 0.0243 at n = 150; with the 950 test points' binomial noise (sd
/// 0.0097) the mean of 20 splits has sd 0.0059, and the tolerance is 3 × 0.0059 = 0.0175. Mean
/// set sizes are printed beside (`--nocapture`).
#[test]
fn coverage_over_20_splits() {
    let (all, c2) = ripley_all();
    let alpha: f64 = 0.1;
    let n_cal: f64 = 150.0;
    let r = ((1.0 - alpha) * (n_cal + 1.0)).ceil();
    let (ra, rb) = (r, n_cal + 1.0 - r);
    let beta_sd = (ra * rb / ((ra + rb).powi(2) * (ra + rb + 1.0))).sqrt();
    let test_sd = (alpha * (1.0 - alpha) / 950.0).sqrt();
    let tolerance = 3.0 * (beta_sd * beta_sd + test_sd * test_sd).sqrt() / 20f64.sqrt();
    for score in [IntervalScore::Lac, IntervalScore::Aps] {
        let (mut coverage, mut size) = (0.0, 0.0);
        for seed in 0..20 {
            let (fit_rows, test_rows) = train_test_split(all.n(), 950.0 / 1250.0, seed).unwrap();
            let (sample, held) = (all.subset(&fit_rows), all.subset(&test_rows));
            let model = fit(
                MethodName::Laplace,
                with_sets(0.5, score, seed),
                &sample,
                &c2,
            );
            let sets = model.predict_sets(held.x.as_ref(), alpha).unwrap();
            assert_eq!(sets.statement.n_scores, 150);
            coverage += share_covered(&sets.sets, &held) / 20.0;
            size += sets.sets.iter().map(Vec::len).sum::<usize>() as f64 / held.n() as f64 / 20.0;
        }
        println!("{score}: mean coverage {coverage:.4}, mean set size {size:.3} (tolerance {tolerance:.4})");
        assert!(
            coverage >= 1.0 - alpha - tolerance,
            "{score}: coverage {coverage}"
        );
        if score == IntervalScore::Lac {
            assert!(coverage <= r / (n_cal + 1.0) + 1.0 / (n_cal + 1.0) + tolerance);
        }
        assert!(
            size >= 1.0 - alpha - tolerance && size < 2.0,
            "{score}: size {size}"
        );
    }
}

/// A binary model's sets: labels in the model's order (negative first), the file round trip
/// keeps them to the bit, and a record edited in the file is refused on load.
#[test]
fn binary_sets_and_model_file() {
    let (train, c2) = classes("data/ripley-synth/synth_tr.csv");
    let model = fit(
        MethodName::Ep,
        with_sets(0.5, IntervalScore::Lac, 1),
        &train,
        &c2,
    );
    let sets = model.predict_sets(train.x.as_ref(), 0.2).unwrap();
    assert_eq!(sets.classes, c2.labels);
    assert_eq!(sets.joined("|").len(), train.n());
    let text = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&text, "m").unwrap();
    assert_eq!(back.predict_sets(train.x.as_ref(), 0.2).unwrap(), sets);
    // The full model's predictions are those of a fit without sets (same seed).
    let plain = fit(
        MethodName::Ep,
        FitOptions {
            seed: Some(1),
            ..Default::default()
        },
        &train,
        &c2,
    );
    let (p, _) = model.predict_classification(train.x.as_ref()).unwrap();
    let (q, _) = plain.predict_classification(train.x.as_ref()).unwrap();
    assert_eq!(p, q);

    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let scores = json["sets"]["scores"].as_array_mut().unwrap();
    scores.pop();
    let e = FittedModel::from_json(&json.to_string(), "m").unwrap_err();
    assert!(matches!(e, Error::ModelFile { .. }), "{e}");
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["sets"]["scores"][0] = serde_json::json!(1.5);
    assert!(FittedModel::from_json(&json.to_string(), "m").is_err());
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json.as_object_mut().unwrap().remove("sets");
    assert!(FittedModel::from_json(&json.to_string(), "m").is_err());
}

/// More than two classes with a binary method become one-vs-rest and keep their sets.
#[test]
fn binary_method_on_three_classes_keeps_sets() {
    let (iris, c3) = classes("data/iris/iris.csv");
    let model = fit(
        MethodName::Laplace,
        with_sets(0.5, IntervalScore::Lac, 0),
        &iris,
        &c3,
    );
    assert!(model.spec.intervals.is_some());
    let sets = model.predict_sets(iris.x.as_ref(), 0.1).unwrap();
    assert_eq!(sets.classes.len(), 3);
}

/// α outside (0, 1) or below 1/(n+1), a classifier fitted without sets, a regressor, and the
/// spec's refusals of what classifiers' sets do not have.
#[test]
fn refusals() {
    let (train, c2) = classes("data/ripley-synth/synth_tr.csv");
    let model = fit(
        MethodName::Laplace,
        with_sets(0.5, IntervalScore::Aps, 0),
        &train,
        &c2,
    );
    for alpha in [0.0, 1.0, -0.5, 1.5, 0.5 / 126.0] {
        let e = model.predict_sets(train.x.as_ref(), alpha).unwrap_err();
        assert!(
            matches!(e, Error::InvalidParameter { .. }),
            "α = {alpha}: {e}"
        );
    }
    let plain = fit(MethodName::Laplace, FitOptions::default(), &train, &c2);
    let e = plain.predict_sets(train.x.as_ref(), 0.1).unwrap_err();
    assert!(
        matches!(&e, Error::Spec(s) if s.option == SpecOption::Intervals),
        "{e}"
    );
    let sine = Dataset::new(
        faer::Mat::from_fn(30, 1, |i, _| i as f64 / 5.0),
        (0..30).map(|i| (i as f64 / 5.0).sin()).collect(),
    )
    .unwrap();
    let spec = FitOptions {
        intervals: Some(IntervalMethod::SplitConformal { fraction: 0.5 }),
        ..Default::default()
    }
    .check(MethodName::Gpr)
    .unwrap();
    let reg = pacgp::fit::fit(&spec, &sine, None).unwrap();
    let e = reg.predict_sets(sine.x.as_ref(), 0.1).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");

    let refused = |method: MethodName, iv: IntervalMethod, score: Option<IntervalScore>| {
        FitOptions {
            intervals: Some(iv),
            interval_score: score,
            ..Default::default()
        }
        .check(method)
        .unwrap_err()
        .option
    };
    let split = IntervalMethod::SplitConformal { fraction: 0.5 };
    assert_eq!(
        refused(MethodName::Sogp, IntervalMethod::CvPlus { folds: 5 }, None),
        SpecOption::Intervals
    );
    assert_eq!(
        refused(MethodName::Svm, IntervalMethod::CvPlus { folds: 5 }, None),
        SpecOption::Intervals
    );
    assert_eq!(
        refused(MethodName::Ep, split, Some(IntervalScore::GpStd)),
        SpecOption::IntervalScore
    );
    assert_eq!(
        refused(MethodName::Gpr, split, Some(IntervalScore::Lac)),
        SpecOption::IntervalScore
    );
    // LAC by default for a classifier; APS scores are the probability at least as likely.
    let spec = FitOptions {
        intervals: Some(split),
        ..Default::default()
    }
    .check(MethodName::MeanField)
    .unwrap();
    assert_eq!(spec.intervals.unwrap().score, IntervalScore::Lac);
    assert_eq!(
        label_scores(IntervalScore::Aps, &[0.25, 0.75]).unwrap(),
        vec![1.0, 0.75]
    );
}

/// The share of `data`'s rows whose label their set (`sets`, one per row) holds.
fn share_covered(sets: &[Vec<usize>], data: &Dataset) -> f64 {
    let hits = sets
        .iter()
        .zip(&data.y)
        .filter(|(s, y)| s.contains(&(**y as usize)))
        .count();
    hits as f64 / data.n() as f64
}

/// `model`'s file reloads to the same sets at `data`'s inputs (α = 0.1); returns the file
/// with training label 0 moved to the next of `k` classes as `from_json` reads it (a site-form
/// record refuses it on load, an SVM's when the sets are made).
fn round_trip_then_label_moved(
    model: &FittedModel,
    data: &Dataset,
    k: u64,
) -> pacgp::Result<FittedModel> {
    let x = data.x.as_ref();
    let text = serde_json::to_string(model).unwrap();
    let back = FittedModel::from_json(&text, "m").unwrap();
    assert_eq!(
        back.predict_sets(x, 0.1).unwrap(),
        model.predict_sets(x, 0.1).unwrap()
    );
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let y0 = json["sets"]["labels"][0].as_u64().unwrap();
    json["sets"]["labels"][0] = serde_json::json!((y0 + 1) % k);
    FittedModel::from_json(&json.to_string(), "m")
}

fn with_jackknife(score: IntervalScore, seed: u64) -> FitOptions {
    FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        interval_score: Some(score),
        seed: Some(seed),
        ..Default::default()
    }
}

/// Over 20 seeded splits of Ripley's synthetic set (1250 rows: 200 to fit, 1050 to test),
/// laplace's jackknife+ sets at α = 0.1 cover on average at least `1 − 2α` (the guarantee,
/// less the Monte Carlo tolerance of the split-conformal test above at n = 200, a bound on
/// this one's), LAC and APS from one fit. The mean coverage and the mean set size are
/// printed (`--nocapture`).
#[test]
fn jackknife_coverage_over_20_splits() {
    let (all, c2) = ripley_all();
    let alpha: f64 = 0.1;
    let result = jackknife_coverage(MethodName::Laplace, &all, &c2, 200, (alpha, 20));
    assert_jackknife_covers("laplace", result, 1.0 - 2.0 * alpha, 0.02);
}

/// A binary EP model's jackknife+ sets: one set per input over the model's two labels, with
/// the jackknife+ statement; the file round trip keeps the sets to the bit, and edited labels
/// are refused on load.
#[test]
fn jackknife_binary_sets_and_model_file() {
    let (train, c2) = classes("data/ripley-synth/synth_tr.csv");
    let model = fit(
        MethodName::Ep,
        with_jackknife(IntervalScore::Aps, 2),
        &train,
        &c2,
    );
    let sets = model.predict_sets(train.x.as_ref(), 0.2).unwrap();
    assert_eq!(sets.classes, c2.labels);
    assert_eq!(sets.sets.len(), train.n());
    assert!(
        sets.statement.statement.contains("jackknife+"),
        "{}",
        sets.statement.statement
    );
    let text = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&text, "m").unwrap();
    assert_eq!(back.predict_sets(train.x.as_ref(), 0.2).unwrap(), sets);

    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["sets"]["method"], "jackknife_plus");
    let labels = json["sets"]["labels"].as_array().unwrap();
    assert_eq!(labels.len(), train.n());
    // One label flipped: its site was fitted on the other.
    let mut edited = json.clone();
    let first = labels[0].as_u64().unwrap();
    edited["sets"]["labels"][0] = serde_json::json!(1 - first);
    let e = FittedModel::from_json(&edited.to_string(), "m").unwrap_err();
    assert!(
        matches!(e, Error::Numerical { .. } | Error::ModelFile { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("training label 0"), "{e}");
    let mut edited = json.clone();
    edited["sets"]["labels"].as_array_mut().unwrap().pop();
    assert!(FittedModel::from_json(&edited.to_string(), "m").is_err());
    let mut edited = json.clone();
    edited["sets"]["labels"][3] = serde_json::json!(2);
    assert!(FittedModel::from_json(&edited.to_string(), "m").is_err());
    let mut edited = json;
    edited["sets"]["method"] = serde_json::json!("split_conformal");
    assert!(FittedModel::from_json(&edited.to_string(), "m").is_err());
}

/// One-vs-rest over laplace on iris (3 classes): the sets of the training inputs hold each
/// label at least as often as `1 − 2α` less 0.05 at α = 0.1 (in-sample, as a sanity check; the
/// coverage test is above), the labels reload, and a label moved to another class is refused.
#[test]
fn jackknife_one_vs_rest_sets() {
    let (iris, c3) = classes("data/iris/iris.csv");
    let model = fit(
        MethodName::Laplace,
        with_jackknife(IntervalScore::Lac, 0),
        &iris,
        &c3,
    );
    assert!(matches!(model.task, pacgp::model::Task::OneVsRest { .. }));
    let sets = model.predict_sets(iris.x.as_ref(), 0.1).unwrap();
    assert_eq!(sets.classes, c3.labels);
    let coverage = share_covered(&sets.sets, &iris);
    assert!(coverage >= 0.75, "{coverage}");
    assert!(round_trip_then_label_moved(&model, &iris, 3).is_err());
}

/// Every classifier family takes jackknife+ sets (its approximate leave-one-out, or SOGP's
/// refits), binary, one-vs-rest or softmax; a split prior's is refused as a conflict with the
/// prior (its posterior is fitted on part B only), naming split-conformal.
#[test]
fn jackknife_accepted_for_every_family() {
    let e = FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        prior: Some(pacgp::objective::gp_split::SplitFraction::Menu),
        ..Default::default()
    }
    .check(MethodName::Laplace)
    .unwrap_err();
    assert!(e.to_string().contains("split-conformal"), "{e}");
    for multiclass in [None, Some(MultiClass::OneVsRest)] {
        for method in [
            MethodName::Laplace,
            MethodName::Ep,
            MethodName::Ivm,
            MethodName::MeanField,
            MethodName::Svm,
            MethodName::PacGpc,
            MethodName::Svgp,
            MethodName::PacSvgp,
            MethodName::Sogp,
        ] {
            FitOptions {
                intervals: Some(IntervalMethod::JackknifePlus),
                multiclass,
                ..Default::default()
            }
            .check(method)
            .unwrap_or_else(|e| panic!("{method} {multiclass:?}: {e}"));
        }
    }
    FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        multiclass: Some(MultiClass::Softmax),
        ..Default::default()
    }
    .check(MethodName::Laplace)
    .unwrap();
}

/// SOGP's jackknife+ sets: its leave-one-out is refits, so `predict --set` refits it without
/// each training row at the stored kernel (`pacgp::loo::classifier_refit_posteriors`). Over 10
/// seeded splits of Ripley's set (200 rows to fit, 1050 to test) they cover on average at
/// least `1 − 2α` at α = 0.1, less the Monte Carlo tolerance, LAC and APS. The record of a fit
/// on 80 rows keeps the training inputs and reloads to the same sets, and a moved label is
/// refused when the sets are asked for (the refit on all rows is no longer the stored
/// posterior).
#[test]
fn jackknife_sogp_coverage_over_10_splits() {
    let (all, c2) = ripley_all();
    let alpha = 0.1;
    let tolerance = coverage_tolerance(alpha, 200.0, 1050.0, 10);
    let binary = jackknife_coverage(MethodName::Sogp, &all, &c2, 200, (alpha, 10));
    assert_jackknife_covers("sogp", binary, 1.0 - 2.0 * alpha, tolerance);

    let (train, _) = classes("data/ripley-synth/synth_tr.csv");
    let rows: Vec<usize> = pacgp::data::permutation(train.n(), 2)
        .into_iter()
        .take(80)
        .collect();
    let small = train.subset(&rows);
    let model = fit(
        MethodName::Sogp,
        with_jackknife(IntervalScore::Lac, 2),
        &small,
        &c2,
    );
    let Some(SetRecord::JackknifePlus {
        inputs: Some(_), ..
    }) = model.sets.as_deref()
    else {
        panic!("a sogp jackknife+ record keeps its training inputs")
    };
    let moved = round_trip_then_label_moved(&model, &small, 2).unwrap();
    let e = moved.predict_sets(small.x.as_ref(), 0.1).unwrap_err();
    assert!(e.to_string().contains("edited label"), "{e}");
}

/// The softmax Laplace's jackknife+ sets (its rows' K-dimensional sites removed, docs/math.md
/// eq. 10.1, `tests/softmax_loo.rs`) on 100 iris rows over 10 seeded splits (60 rows to fit,
/// 40 to test) cover on average at least `1 − 2α` at α = 0.1, less the Monte Carlo tolerance, LAC
/// and APS, with mean sets of fewer than 2 labels; the record (labels only) of a fit on 45
/// rows reloads to the same sets and one label moved is refused on load (at the mode `α_ci > 0` for the row's own
/// class only). Measured numbers printed (`--nocapture`).
#[test]
fn jackknife_softmax_coverage_over_10_splits() {
    let (iris, c3) = classes("data/iris/iris.csv");
    let alpha = 0.1;
    let o = FitOptions {
        multiclass: Some(MultiClass::Softmax),
        ..Default::default()
    };
    // 100 seeded rows, 60 to fit and 40 to test: N·N* = 2400 leave-one-out predictives of
    // 1000 draws per split.
    let order = pacgp::data::permutation(iris.n(), 6);
    let sample = iris.subset(&order[..100]);
    let tolerance = coverage_tolerance(alpha, 60.0, 40.0, 10);
    let result = jackknife_coverage_with(
        MethodName::Laplace,
        o.clone(),
        &sample,
        &c3,
        60,
        (alpha, 10),
    );
    assert_jackknife_covers("softmax", result, 1.0 - 2.0 * alpha, tolerance);
    let rows: Vec<usize> = pacgp::data::permutation(iris.n(), 4)
        .into_iter()
        .take(45)
        .collect();
    let small = iris.subset(&rows);
    let model = fit(
        MethodName::Laplace,
        FitOptions {
            multiclass: o.multiclass,
            ..with_jackknife(IntervalScore::Aps, 4)
        },
        &small,
        &c3,
    );
    let e = round_trip_then_label_moved(&model, &small, 3).unwrap_err();
    assert!(e.to_string().contains("softmax posterior"), "{e}");
}

/// Mean coverage and mean set size at level `alpha` of `method`'s jackknife+ sets (LAC and
/// APS from one fit each) over `splits` seeded splits of `all` into `n_fit` rows to fit and
/// the rest to test.
fn jackknife_coverage(
    method: MethodName,
    all: &Dataset,
    c: &pacgp::data::ClassLabels,
    n_fit: usize,
    (alpha, splits): (f64, usize),
) -> ([f64; 2], [f64; 2]) {
    jackknife_coverage_with(
        method,
        FitOptions::default(),
        all,
        c,
        n_fit,
        (alpha, splits),
    )
}

/// [`jackknife_coverage`] with the fit's other options `o` (the sets and seed set here).
fn jackknife_coverage_with(
    method: MethodName,
    o: FitOptions,
    all: &Dataset,
    c: &pacgp::data::ClassLabels,
    n_fit: usize,
    (alpha, splits): (f64, usize),
) -> ([f64; 2], [f64; 2]) {
    let (mut coverage, mut size) = ([0.0; 2], [0.0; 2]);
    let test_fraction = (all.n() - n_fit) as f64 / all.n() as f64;
    let per_split = 1.0 / splits as f64;
    for seed in 0..splits as u64 {
        let (fit_rows, test_rows) = train_test_split(all.n(), test_fraction, seed).unwrap();
        let (sample, held) = (all.subset(&fit_rows), all.subset(&test_rows));
        let sets = with_jackknife(IntervalScore::Lac, seed);
        let options = FitOptions {
            intervals: sets.intervals,
            interval_score: sets.interval_score,
            seed: sets.seed,
            ..o.clone()
        };
        let model = fit(method, options, &sample, c);
        let record = model.sets.as_deref().unwrap();
        for (s, score) in [IntervalScore::Lac, IntervalScore::Aps]
            .into_iter()
            .enumerate()
        {
            let iv = pacgp::spec::IntervalSpec {
                method: IntervalMethod::JackknifePlus,
                score,
            };
            let sets = record.sets(&model, &iv, held.x.as_ref(), alpha).unwrap();
            assert_eq!(sets.statement.n_scores, sample.n());
            assert_eq!(sets.statement.guaranteed_coverage, 1.0 - 2.0 * alpha);
            assert_eq!(sets.threshold, None);
            coverage[s] += per_split * share_covered(&sets.sets, &held);
            size[s] +=
                per_split * sets.sets.iter().map(Vec::len).sum::<usize>() as f64 / held.n() as f64;
        }
    }
    (coverage, size)
}

/// The Monte Carlo tolerance of a mean coverage over `splits` splits with `n` calibration
/// scores and `m` test points each: 3 sd of the mean, from the Beta(r, n + 1 − r) spread of a
/// split's coverage given its calibration part (as in [`coverage_over_20_splits`]; jackknife+'s
/// `n` leave-one-out scores play the calibration set's part) and the test points' binomial
/// noise.
fn coverage_tolerance(alpha: f64, n: f64, m: f64, splits: usize) -> f64 {
    let r = ((1.0 - alpha) * (n + 1.0)).ceil();
    let (ra, rb) = (r, n + 1.0 - r);
    let beta_sd = (ra * rb / ((ra + rb).powi(2) * (ra + rb + 1.0))).sqrt();
    let test_sd = (alpha * (1.0 - alpha) / m).sqrt();
    3.0 * (beta_sd * beta_sd + test_sd * test_sd).sqrt() / (splits as f64).sqrt()
}

/// The LAC and APS sets' mean coverage over the splits is at least `floor − tolerance` and
/// their mean size below 2 labels (printed with `--nocapture`); `what` names the model.
fn assert_jackknife_covers(
    what: &str,
    (coverage, size): ([f64; 2], [f64; 2]),
    floor: f64,
    tolerance: f64,
) {
    for (s, score) in ["lac", "aps"].iter().enumerate() {
        println!(
            "{what} jackknife+ {score}: mean coverage {:.4} (floor {floor:.2}, tolerance {tolerance:.4}), mean set size {:.3}",
            coverage[s],
            size[s]
        );
        assert!(coverage[s] >= floor - tolerance, "{score}: {}", coverage[s]);
        assert!(size[s] < 2.0, "{score}: size {}", size[s]);
    }
}

/// Naive mean field's jackknife+ sets (linear-response leave-one-out at any input,
/// [`pacgp::loo::MeanFieldLooFunctions`]) over 20 seeded splits of Ripley's synthetic set (200
/// rows to fit, 1050 to test) cover on average at least `1 − α` at α = 0.1, less the Monte
/// Carlo tolerance ([`coverage_tolerance`]: 0.0155), LAC and APS, with mean sets of fewer
/// than 2 labels. Measured numbers printed (`--nocapture`).
#[test]
fn jackknife_mean_field_coverage_over_20_splits() {
    let (all, c2) = ripley_all();
    let alpha = 0.1;
    let tolerance = coverage_tolerance(alpha, 200.0, 1050.0, 20);
    let (coverage, size) = jackknife_coverage(MethodName::MeanField, &all, &c2, 200, (alpha, 20));
    assert_jackknife_covers("mean-field", (coverage, size), 1.0 - alpha, tolerance);
}

/// One-vs-rest SVMs' jackknife+ sets (each member's linear-response leave-one-out functions,
/// combined by the members' vote as the model's own class probabilities) over 20 seeded
/// splits of the wine data (3 classes, 178 rows: 118 to fit, 60 to test) cover on average at
/// least `1 − α` at α = 0.1, less the Monte Carlo tolerance ([`coverage_tolerance`]), LAC and
/// APS, with mean sets of fewer than 2 of the 3 labels. Measured numbers printed.
#[test]
fn jackknife_one_vs_rest_svm_coverage_over_20_splits() {
    let (wine, c3) = classes("data/wine/wine.csv");
    let alpha = 0.1;
    let tolerance = coverage_tolerance(alpha, 118.0, 60.0, 20);
    let (coverage, size) = jackknife_coverage(MethodName::Svm, &wine, &c3, 118, (alpha, 20));
    assert_jackknife_covers("one-vs-rest svm", (coverage, size), 1.0 - alpha, tolerance);
}

/// The leave-one-out latent marginals at `xs` of a site-form posterior recomputed densely
/// without each site i (GP regression of the other pseudo-targets `ν̃_j/π_j`, `ν̃_j = α_j +
/// π_jμ_j`, with noise `1/π_j`): `(mean, var)`, row i, column t.
fn dense_loo_at(
    post: &pacgp::posterior::GaussianPosterior,
    xs: faer::MatRef<'_, f64>,
) -> (faer::Mat<f64>, faer::Mat<f64>) {
    use pacgp::linalg::{Cholesky, JitterPolicy};
    let pacgp::posterior::Covariance::Sites { sqrt_pi, .. } = &post.cov else {
        panic!("not a site form")
    };
    let (x, n) = (post.basis.as_ref(), post.alpha.len());
    let kern = post.kernel();
    let kg = kern.gram(x).unwrap();
    let pi: Vec<f64> = sqrt_pi.iter().map(|s| s * s).collect();
    let mu: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| kg[(i, j)] * post.alpha[j]).sum())
        .collect();
    let pseudo: Vec<f64> = (0..n)
        .map(|j| (post.alpha[j] + pi[j] * mu[j]) / pi[j])
        .collect();
    let (kxs, kss) = (kern.cross(x, xs).unwrap(), kern.diag(xs));
    let (mut mean, mut var) = (
        faer::Mat::zeros(n, xs.nrows()),
        faer::Mat::zeros(n, xs.nrows()),
    );
    for i in 0..n {
        let rest: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        let c = faer::Mat::from_fn(rest.len(), rest.len(), |a, b| {
            kg[(rest[a], rest[b])] + if a == b { 1.0 / pi[rest[a]] } else { 0.0 }
        });
        let chol = Cholesky::factor(c.as_ref(), &JitterPolicy::none(), "K + Π⁻¹").unwrap();
        let w = chol.solve_vec(&rest.iter().map(|&j| pseudo[j]).collect::<Vec<_>>());
        let kr = faer::Mat::from_fn(rest.len(), xs.nrows(), |a, t| kxs[(rest[a], t)]);
        let sol = chol.solve(kr.as_ref());
        for t in 0..xs.nrows() {
            mean[(i, t)] = (0..rest.len()).map(|a| kr[(a, t)] * w[a]).sum();
            var[(i, t)] = kss[t]
                - (0..rest.len())
                    .map(|a| kr[(a, t)] * sol[(a, t)])
                    .sum::<f64>();
        }
    }
    (mean, var)
}

/// Laplace's and EP's jackknife+ sets on Ripley's 250 training rows, at 60 inputs of its test
/// set, LAC and APS at α = 0.1 and 0.2, are the sets counted here from the posterior
/// recomputed densely without each site ([`dense_loo_at`]) and the calibration scores of the
/// cavities ([`pacgp::loo::site_cavities`]): the downdate from the stored factor changes no set.
#[test]
fn jackknife_sets_match_dense_recomputation() {
    let (train, test, c2) = ripley();
    let x = test.x.as_ref().subrows(0, 60);
    for method in [MethodName::Laplace, MethodName::Ep] {
        let model = fit(method, with_jackknife(IntervalScore::Lac, 1), &train, &c2);
        let (posterior, likelihood, input_noise, _) = jackknife_parts(&model);
        let probs = |m: f64, v: f64| {
            let p = likelihood.predictive_positive(m, v + input_noise);
            vec![1.0 - p, p]
        };
        let cav = pacgp::loo::site_cavities(posterior).unwrap();
        let xs = model.x_scaler.transform(x).unwrap();
        let (mean, var) = dense_loo_at(posterior, xs.as_ref());
        let own = |i: usize| (cav.mean[i], cav.var[i]);
        let at = |i: usize, t: usize| (mean[(i, t)], var[(i, t)]);
        assert_plus_sets(&model, x, &[0.1, 0.2], &probs, &own, &at);
    }
}

/// Asserts that a binary model's jackknife+ sets at `x` (LAC and APS, each α of `alphas`) are
/// [`plus_set`](pacgp::conformal::sets::plus_set) of the scores counted here: calibration from
/// row i's leave-one-out marginal `(mean, var)` at its own input, `own(i)`, the label scores
/// at input t from model −i's marginal there, `at(i, t)`, and `probs(mean, var)` the class
/// probabilities of a marginal. The record holds a label for every training row.
fn assert_plus_sets(
    model: &FittedModel,
    x: faer::MatRef<'_, f64>,
    alphas: &[f64],
    probs: &dyn Fn(f64, f64) -> Vec<f64>,
    own: &dyn Fn(usize) -> (f64, f64),
    at: &dyn Fn(usize, usize) -> (f64, f64),
) {
    use pacgp::conformal::sets::plus_set;
    let Some(SetRecord::JackknifePlus { labels, .. }) = model.sets.as_deref() else {
        panic!("{}: no jackknife+ record", model.method())
    };
    let n = model.n_train;
    assert_eq!(labels.len(), n);
    for score in [IntervalScore::Lac, IntervalScore::Aps] {
        let iv = pacgp::spec::IntervalSpec {
            method: IntervalMethod::JackknifePlus,
            score,
        };
        let calibration: Vec<f64> = (0..n)
            .map(|i| {
                let (m, v) = own(i);
                true_label_score(score, &probs(m, v), labels[i])
            })
            .collect::<Result<_, _>>()
            .unwrap();
        for &alpha in alphas {
            let got = model.sets.as_deref().unwrap();
            let got = got.sets(model, &iv, x, alpha).unwrap().sets;
            assert_eq!(got.len(), x.nrows());
            for (t, set) in got.iter().enumerate() {
                let loo: Vec<Vec<f64>> = (0..n)
                    .map(|i| {
                        let (m, v) = at(i, t);
                        label_scores(score, &probs(m, v)).unwrap()
                    })
                    .collect();
                let want = plus_set(&calibration, &loo.concat(), 2, alpha).unwrap();
                assert_eq!(
                    set,
                    &want,
                    "{} {score} α = {alpha}, input {t}",
                    model.method()
                );
            }
        }
    }
}

/// A binary classifier's posterior, likelihood, input noise and its jackknife+ record's labels.
fn jackknife_parts(
    model: &pacgp::model::FittedModel,
) -> (
    &pacgp::posterior::GaussianPosterior,
    &pacgp::likelihood::Likelihood,
    &f64,
    &[usize],
) {
    let pacgp::model::Task::Classification {
        posterior,
        likelihood,
        input_noise,
        ..
    } = &model.task
    else {
        panic!("{}: not a binary classifier", model.method())
    };
    let Some(SetRecord::JackknifePlus { labels, .. }) = model.sets.as_deref() else {
        panic!("{}: no jackknife+ record", model.method())
    };
    (posterior, likelihood, input_noise, labels)
}

/// IVM's jackknife+ sets on a tiny sample (every 8th of Ripley's training rows, 30, an active
/// set of 12), at 20 inputs of its test set (every 50th), LAC and APS at α = 0.1 and 0.3, are the sets
/// counted here: the active set selected again by [`pacgp::inference::ivm::ivm`], an active
/// row's leave-one-out model the posterior recomputed densely without its site
/// ([`dense_loo_at`]; at its own input, its calibration marginal), a row outside the active
/// set the full posterior (its likelihood never entered it), and [`plus_set`] on their scores.
#[test]
fn jackknife_ivm_sets_match_dense_recomputation() {
    let (train, test, c2) = ripley();
    let rows: Vec<usize> = (0..30).map(|i| 8 * i).collect();
    let train = train.subset(&rows);
    let held = test.subset(&(0..20).map(|t| 50 * t).collect::<Vec<_>>());
    let x = held.x.as_ref();
    let opts = FitOptions {
        active_set: Some(12),
        ..with_jackknife(IntervalScore::Lac, 4)
    };
    let model = fit(MethodName::Ivm, opts, &train, &c2);
    let (posterior, likelihood, input_noise, labels) = jackknife_parts(&model);
    let xt = model.x_scaler.transform(train.x.as_ref()).unwrap();
    let signs: Vec<f64> = labels
        .iter()
        .map(|&l| if l == 1 { 1.0 } else { -1.0 })
        .collect();
    let active = pacgp::inference::ivm::ivm(
        posterior.kernel(),
        likelihood,
        xt.as_ref(),
        &signs,
        &pacgp::inference::ivm::IvmConfig::new(12),
    )
    .unwrap()
    .basis_indices
    .unwrap();
    assert_eq!(active.len(), 12);
    let basis_of = |i: usize| active.iter().position(|&r| r == i);
    let probs = |m: f64, v: f64| {
        let p = likelihood.predictive_positive(m, v + input_noise);
        vec![1.0 - p, p]
    };
    // Calibration: a row's own leave-one-out marginal.
    let (own_mean, own_var) = dense_loo_at(posterior, posterior.basis.as_ref());
    let full_train = posterior.predict(xt.as_ref()).unwrap();
    let own = |i: usize| match basis_of(i) {
        Some(b) => (own_mean[(b, b)], own_var[(b, b)]),
        None => (full_train.mean[i], full_train.var[i]),
    };
    let xs = model.x_scaler.transform(x).unwrap();
    let (mean, var) = dense_loo_at(posterior, xs.as_ref());
    let full = posterior.predict(xs.as_ref()).unwrap();
    let at = |i: usize, t: usize| match basis_of(i) {
        Some(b) => (mean[(b, t)], var[(b, t)]),
        None => (full.mean[t], full.var[t]),
    };
    assert_plus_sets(&model, x, &[0.1, 0.3], &probs, &own, &at);
}

/// The SVM's jackknife+ sets on a small sample (every 5th of Ripley's training rows, 50), at 20
/// of its test inputs, LAC and APS at α = 0.1 and 0.3, are the sets counted here from the
/// linear-response leave-one-out functions of the SVM solved again ([`SvmLooFunctions`],
/// checked against refits in `tests/svm_loo.rs`): the model without i has latent mean
/// `μ·(f + shift_i)` and the prior's variance at x, its calibration score is taken at `x_i`
/// through the same functions (not the record's margins), and the probability is `Φ(mean/sd)`
/// as `predict`'s. The sets cover the test labels at α = 0.1 at least `1 − 2α` less 0.05; the
/// file round trip keeps them; a flipped label is refused when the sets are made.
#[test]
fn jackknife_svm_sets_match_the_linear_response_recomputation() {
    use pacgp::svm::loo::SvmLooFunctions;
    let (train, test, c2) = ripley();
    let train = train.subset(&(0..50).map(|i| 5 * i).collect::<Vec<_>>());
    let held = test.subset(&(0..20).map(|t| 50 * t).collect::<Vec<_>>());
    let model = fit(
        MethodName::Svm,
        with_jackknife(IntervalScore::Lac, 4),
        &train,
        &c2,
    );
    let pacgp::model::Task::Svm {
        posterior,
        mu,
        config,
        bias,
        ..
    } = &model.task
    else {
        panic!("not an SVM")
    };
    assert_eq!(*bias, 0.0);
    let Some(SetRecord::JackknifePlus { labels, active, .. }) = model.sets.as_deref() else {
        panic!("no jackknife+ record")
    };
    let active = active
        .as_ref()
        .expect("the SVM's record keeps its support vectors");
    let xt = model.x_scaler.transform(train.x.as_ref()).unwrap();
    assert_eq!(active.x, xt);
    let y: Vec<f64> = labels
        .iter()
        .map(|&l| if l == 1 { 1.0 } else { -1.0 })
        .collect();
    let kernel = posterior.kernel().clone();
    let svm = pacgp::svm::svm(&kernel, xt.as_ref(), &y, config).unwrap();
    let sv: Vec<usize> = (0..y.len()).filter(|&i| svm.alpha[i] > 0.0).collect();
    assert_eq!(active.rows, vec![sv]);
    let full_train: Vec<f64> = svm.decision.clone();
    let loo = SvmLooFunctions::new(svm, kernel, xt.clone(), y.clone()).unwrap();
    let own = loo.shifts(xt.as_ref()).unwrap();
    let prior_train = posterior.predict(xt.as_ref()).unwrap();
    let xs = model.x_scaler.transform(held.x.as_ref()).unwrap();
    let shifts = loo.shifts(xs.as_ref()).unwrap();
    let at = posterior.predict(xs.as_ref()).unwrap();
    let probs = |m: f64, v: f64| {
        let p = pacgp::special::normal_cdf(m / v.sqrt());
        vec![1.0 - p, p]
    };
    let own_at = |i: usize| (mu * (full_train[i] + own[(i, i)]), prior_train.var[i]);
    let loo_at = |i: usize, t: usize| (at.mean[t] + mu * shifts[(i, t)], at.var[t]);
    assert_plus_sets(
        &model,
        held.x.as_ref(),
        &[0.1, 0.3],
        &probs,
        &own_at,
        &loo_at,
    );
    for score in [IntervalScore::Lac, IntervalScore::Aps] {
        let iv = pacgp::spec::IntervalSpec {
            method: IntervalMethod::JackknifePlus,
            score,
        };
        let record = model.sets.as_deref().unwrap();
        let sets = record.sets(&model, &iv, held.x.as_ref(), 0.1).unwrap();
        let hits = sets
            .sets
            .iter()
            .zip(&held.y)
            .filter(|(s, y)| s.contains(&(**y as usize)))
            .count();
        assert!(
            hits as f64 >= (0.8 - 0.05) * held.n() as f64,
            "{score}: {hits}"
        );
    }
    // A label flipped: the SVM solved on it is not the stored one.
    let edited = round_trip_then_label_moved(&model, &held, 2).unwrap();
    let e = edited.predict_sets(held.x.as_ref(), 0.1).unwrap_err();
    assert!(e.to_string().contains("not the stored one"), "{e}");
}

/// Naive mean field's jackknife+ sets on Ripley's 250 training rows, at 40 of its test
/// inputs, LAC and APS at α = 0.1 and 0.2, are the sets counted here from the mean-field fit
/// made again by [`pacgp::inference::mean_field::mean_field`] with the model's settings and
/// its linear-response leave-one-out functions ([`pacgp::loo::MeanFieldLooFunctions`],
/// checked against refits in `tests/mean_field.rs`): the model without i has latent mean
/// `f(x) + shift_i(x)` and the posterior's variance, its calibration score is `certify`'s
/// margin at `x_i` (eq. 17.41), and the probability is the likelihood's predictive with the
/// input noise added, as `predict`'s. The file round trip keeps the sets; a flipped label is
/// refused on load (its site was fitted on the other sign).
#[test]
fn jackknife_mean_field_sets_match_the_linear_response_recomputation() {
    use pacgp::loo::MeanFieldLooFunctions;
    let (train, test, c2) = ripley();
    let held = test.subset(&(0..40).map(|t| 25 * t).collect::<Vec<_>>());
    let model = fit(
        MethodName::MeanField,
        with_jackknife(IntervalScore::Lac, 3),
        &train,
        &c2,
    );
    let (posterior, likelihood, input_noise, labels) = jackknife_parts(&model);
    let method = model.inference_method().unwrap();
    let cfg = method
        .settings::<pacgp::inference::mean_field::MeanFieldConfig>()
        .expect("mean field");
    assert_eq!(cfg.input_noise, *input_noise);
    let xt = model.x_scaler.transform(train.x.as_ref()).unwrap();
    let y: Vec<f64> = labels
        .iter()
        .map(|&l| if l == 1 { 1.0 } else { -1.0 })
        .collect();
    let mf = pacgp::inference::mean_field::mean_field(
        posterior.kernel(),
        likelihood,
        xt.as_ref(),
        &y,
        cfg,
    )
    .unwrap();
    let loo = MeanFieldLooFunctions::new(&mf, &y).unwrap();
    let margins = loo.training_margins();
    let train_var = mf.fit.posterior.predict(xt.as_ref()).unwrap().var;
    let xs = model.x_scaler.transform(held.x.as_ref()).unwrap();
    let shifts = loo.shifts(xs.as_ref()).unwrap();
    let at = mf.fit.posterior.predict(xs.as_ref()).unwrap();
    let probs = |m: f64, v: f64| {
        let p = likelihood.predictive_positive(m, v + input_noise);
        vec![1.0 - p, p]
    };
    let own = |i: usize| (y[i] * margins[i], train_var[i]);
    let loo_at = |i: usize, t: usize| (at.mean[t] + shifts[(i, t)], at.var[t]);
    assert_plus_sets(&model, held.x.as_ref(), &[0.1, 0.2], &probs, &own, &loo_at);
    let e = round_trip_then_label_moved(&model, &held, 2).unwrap_err();
    assert!(e.to_string().contains("training label 0"), "{e}");
}

/// One-vs-rest SVMs on iris (3 classes): the record keeps every member's support vectors; the
/// sets of the training inputs hold each label at least as often as `1 − 2α` less 0.05 at
/// α = 0.1 (in-sample, a sanity check; the coverage test is above), every set is a subset of
/// the 3 classes, the model file reloads to the same sets, and a label moved to another class
/// is refused when the sets are made (the members solved again are not the stored ones).
#[test]
fn jackknife_one_vs_rest_svm_sets() {
    let (iris, c3) = classes("data/iris/iris.csv");
    let model = fit(
        MethodName::Svm,
        with_jackknife(IntervalScore::Aps, 0),
        &iris,
        &c3,
    );
    let pacgp::model::Task::OneVsRest { members, .. } = &model.task else {
        panic!("not one-vs-rest")
    };
    assert!(members
        .iter()
        .all(|m| matches!(m.task, pacgp::model::Task::Svm { .. })));
    let Some(SetRecord::JackknifePlus {
        active: Some(active),
        ..
    }) = model.sets.as_deref()
    else {
        panic!("no jackknife+ record with the support vectors")
    };
    assert_eq!(active.rows.len(), 3);
    let sets = model.predict_sets(iris.x.as_ref(), 0.1).unwrap();
    assert_eq!(sets.classes, c3.labels);
    assert!(sets.sets.iter().all(|s| s.iter().all(|&c| c < 3)));
    let coverage = share_covered(&sets.sets, &iris);
    assert!(coverage >= 0.75, "{coverage}");
    let edited = round_trip_then_label_moved(&model, &iris, 3).unwrap();
    let e = edited.predict_sets(iris.x.as_ref(), 0.1).unwrap_err();
    assert!(e.to_string().contains("not the stored one"), "{e}");
}

/// pac-gpc's jackknife+ sets (the site downdate of its bound-trained sites) over 10 seeded
/// splits of Ripley's synthetic set (200 rows to fit, 1050 to test) cover on average at least
/// `1 − 2α` at α = 0.1 (the guarantee), less the Monte Carlo tolerance of 10 splits
/// ([`coverage_tolerance`]), LAC and APS, with mean sets of fewer than 2 labels. Measured
/// numbers printed (`--nocapture`). Ten splits, not twenty: each pac-gpc fit trains its sites
/// on the bound for every kernel of the menu (the 20-split means are measured by
/// `examples/jackknife_sets.rs`, docs/intervals.md).
#[test]
fn jackknife_pac_gpc_coverage_over_10_splits() {
    let (all, c2) = ripley_all();
    let alpha = 0.1;
    let tolerance = coverage_tolerance(alpha, 200.0, 1050.0, 10);
    let (coverage, size) = jackknife_coverage(MethodName::PacGpc, &all, &c2, 200, (alpha, 10));
    assert_jackknife_covers("pac-gpc", (coverage, size), 1.0 - 2.0 * alpha, tolerance);
}

/// One-vs-rest pac-gpc's jackknife+ sets (each member's site downdate, combined by the
/// members' vote) over 10 seeded splits of iris (3 classes, 150 rows: 100 to fit, 50 to
/// test) cover on average at least `1 − 2α` at α = 0.1, less the Monte Carlo tolerance of 10
/// splits, LAC and APS, with mean sets of fewer than 2 of the 3 labels. Measured numbers
/// printed.
#[test]
fn jackknife_one_vs_rest_pac_gpc_coverage_over_10_splits() {
    let (iris, c3) = classes("data/iris/iris.csv");
    let alpha = 0.1;
    let tolerance = coverage_tolerance(alpha, 100.0, 50.0, 10);
    let (coverage, size) = jackknife_coverage(MethodName::PacGpc, &iris, &c3, 100, (alpha, 10));
    assert_jackknife_covers(
        "one-vs-rest pac-gpc",
        (coverage, size),
        1.0 - 2.0 * alpha,
        tolerance,
    );
}

/// svgp's jackknife+ sets (its rows' sites removed from `q(u)`, docs/math.md eq. 12.7; 20
/// inducing inputs, 100 L-BFGS iterations) over 10 seeded splits of Ripley's synthetic set
/// (200 rows to fit, 1050 to test) cover on average at least `1 − 2α` at α = 0.1, less the
/// Monte Carlo tolerance of 10 splits, LAC and APS, with mean sets of fewer than 2 labels;
/// one-vs-rest svgp on iris (100 rows to fit, 50 to test) likewise. Measured numbers printed
/// (`--nocapture`).
#[test]
fn jackknife_svgp_coverage_over_10_splits() {
    let o = sparse_ripley_coverage(MethodName::Svgp);
    let alpha = 0.1;
    let (iris, c3) = classes("data/iris/iris.csv");
    let tolerance = coverage_tolerance(alpha, 100.0, 50.0, 10);
    let ovr = jackknife_coverage_with(MethodName::Svgp, o, &iris, &c3, 100, (alpha, 10));
    assert_jackknife_covers("one-vs-rest svgp", ovr, 1.0 - 2.0 * alpha, tolerance);
}

/// pac-svgp's jackknife+ sets (its bound's sites removed from `q(u)`, docs/math.md eq. 12.8;
/// 20 inducing inputs, 100 L-BFGS iterations) over the same 10 splits of Ripley's set cover
/// on average at least `1 − 2α` at α = 0.1, less the Monte Carlo tolerance, LAC and APS, with
/// mean sets of fewer than 2 labels. Measured numbers printed (`--nocapture`).
#[test]
fn jackknife_pac_svgp_coverage_over_10_splits() {
    sparse_ripley_coverage(MethodName::PacSvgp);
}

/// `method`'s jackknife+ sets with 20 inducing inputs and 100 L-BFGS iterations over 10 seeded
/// splits of Ripley's set (200 rows to fit, 1050 to test) cover on average at least `1 − 2α`
/// at α = 0.1, less the Monte Carlo tolerance, LAC and APS; the options, for more checks.
fn sparse_ripley_coverage(method: MethodName) -> FitOptions {
    let (all, c2) = ripley_all();
    let alpha = 0.1;
    let o = FitOptions {
        inducing: Some(20),
        max_iter: Some(100),
        ..Default::default()
    };
    let tolerance = coverage_tolerance(alpha, 200.0, 1050.0, 10);
    let binary = jackknife_coverage_with(method, o.clone(), &all, &c2, 200, (alpha, 10));
    assert_jackknife_covers(&method.to_string(), binary, 1.0 - 2.0 * alpha, tolerance);
    o
}

/// An svgp model's jackknife+ record keeps the standardised training inputs (where
/// [`pacgp::loo::InducingSiteLoo`] reads `certify`'s leave-one-out, `tests/svgp_loo.rs`), the
/// file reloads to the same sets, and a record whose
/// inputs are missing, lost a row or hold a value that is not a number is refused on load.
#[test]
fn jackknife_svgp_record_and_model_file() {
    let (train, c2) = classes("data/ripley-synth/synth_tr.csv");
    let o = FitOptions {
        inducing: Some(15),
        ..with_jackknife(IntervalScore::Lac, 3)
    };
    let model = fit(MethodName::Svgp, o, &train, &c2);
    let Some(SetRecord::JackknifePlus {
        inputs: Some(inputs),
        active: None,
        ..
    }) = model.sets.as_deref()
    else {
        panic!("an svgp jackknife+ record keeps its training inputs")
    };
    let xs = model.x_scaler.transform(train.x.as_ref()).unwrap();
    assert!(pacgp::linalg::same_mat(inputs.x.as_ref(), xs.as_ref()));
    assert!(round_trip_then_label_moved(&model, &train, 2).is_ok());

    let json: serde_json::Value = serde_json::to_value(&model).unwrap();
    let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut edited = json.clone();
        edit(&mut edited);
        FittedModel::from_json(&edited.to_string(), "m").unwrap_err()
    };
    let e = refused(&|j| {
        j["sets"]["inputs"].as_object_mut().unwrap().remove("x");
    });
    assert!(
        matches!(e, Error::ModelFile { .. } | Error::Numerical { .. }),
        "{e}"
    );
    let e = refused(&|j| {
        j["sets"].as_object_mut().unwrap().remove("inputs");
    });
    assert!(e.to_string().contains("training inputs"), "{e}");
    let e = refused(&|j| {
        let x = &mut j["sets"]["inputs"]["x"];
        let (rows, cols) = (x["nrows"].as_u64().unwrap(), x["ncols"].as_u64().unwrap());
        x["nrows"] = serde_json::json!(rows - 1);
        let data = x["data"].as_array_mut().unwrap();
        data.truncate(((rows - 1) * cols) as usize);
    });
    assert!(e.to_string().contains("training inputs"), "{e}");
    let e = refused(&|j| {
        j["sets"]["inputs"]["x"]["data"][5] = serde_json::Value::Null;
    });
    assert!(
        matches!(e, Error::ModelFile { .. } | Error::Numerical { .. }),
        "{e}"
    );
}
