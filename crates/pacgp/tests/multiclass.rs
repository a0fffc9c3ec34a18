//! Multi-class classifiers against independent computations: the one-vs-rest certificate's
//! parts recomputed from its K binary models (KL summed, prices summed, the Gibbs risk by
//! Monte Carlo over independent draws), its leave-one-out against brute-force refits, the
//! softmax certificate's sampled risk against a longer independent sample and its δ split,
//! predictions that are probabilities, model files that reload to the same numbers, and the
//! spec's refusals.

use faer::Mat;
use pacgp::bounds::{pac_bayes_bound, BoundKind, ConfidenceTerm};
use pacgp::data::{Dataset, TrainingLabels};
use pacgp::loo::LooMode;
use pacgp::model::{CertifyOptions, FittedModel, Task};
use pacgp::spec::{
    FitOptions, LooRequest, MethodName, MultiClass, Selection, SpecOption, SpecProblem,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

mod common;
use common::{classes, fit_classes as fit, repo};

fn no_loo() -> CertifyOptions {
    CertifyOptions {
        loo: LooRequest::None,
        ..Default::default()
    }
}

/// The fraction of draws `argmax_k (μ_k + σ_k ε_k) ≠ y` over independent draws at every point.
fn monte_carlo_risk(scores: &[(Vec<f64>, Vec<f64>)], y: &[f64], draws: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut wrong = 0usize;
    for i in 0..y.len() {
        for _ in 0..draws {
            let s: Vec<f64> = scores
                .iter()
                .map(|(m, v)| {
                    let e: f64 = StandardNormal.sample(&mut rng);
                    m[i] + v[i].sqrt() * e
                })
                .collect();
            let best = (0..s.len()).fold(0, |b, k| if s[k] > s[b] { k } else { b });
            wrong += usize::from(best as f64 != y[i]);
        }
    }
    wrong as f64 / (y.len() * draws) as f64
}

#[test]
fn one_vs_rest_certificate_sums_its_classes_and_matches_monte_carlo() {
    let (data, labels) = classes("data/iris/iris.csv");
    let model = fit(MethodName::Laplace, FitOptions::default(), &data, &labels);
    assert_eq!(model.spec.multiclass(), Some(MultiClass::OneVsRest));
    assert!(
        model.report.notes[0].contains("3 classes"),
        "{:?}",
        model.report.notes
    );
    let Task::OneVsRest { members, classes } = &model.task else {
        panic!("not one-vs-rest")
    };
    assert_eq!(classes.labels, ["setosa", "versicolor", "virginica"]);
    let c = model
        .certify(&data, &no_loo())
        .unwrap()
        .remove(0)
        .certificate;
    // KL of the product posterior: the sum of the classes'.
    let kl: f64 = members
        .iter()
        .map(|m| m.posterior().unwrap().kl_to_prior().unwrap())
        .sum();
    assert!((c.kl - kl).abs() < 1e-12 * (1.0 + kl));
    // Three choices from the nine-kernel menu: 3·ln 9, and every class named.
    assert!((c.penalty - 3.0 * 9f64.ln()).abs() < 1e-12, "{}", c.penalty);
    for l in ["setosa", "versicolor", "virginica"] {
        assert!(c.penalty_terms.iter().any(|t| t.what.contains(l)), "{l}");
    }
    let want = pac_bayes_bound(
        c.empirical_risk,
        c.kl,
        data.n(),
        0.01,
        c.penalty,
        BoundKind::Kl,
        ConfidenceTerm::Maurer,
    )
    .unwrap();
    assert!((c.bound - want).abs() < 1e-14);
    assert_eq!(model.report.objective, Some(c.bound));
    // The quadrature's risk against 4000 independent draws at each of the 150 points.
    let xs = model.x_scaler.transform(data.x.as_ref()).unwrap();
    let scores: Vec<(Vec<f64>, Vec<f64>)> = members
        .iter()
        .map(|m| {
            let p = m.posterior().unwrap().predict(xs.as_ref()).unwrap();
            (p.mean, p.var)
        })
        .collect();
    let draws = 4000;
    let mc = monte_carlo_risk(&scores, &data.y, draws, 3);
    let se = (mc * (1.0 - mc) / (data.n() * draws) as f64).sqrt();
    assert!(
        (c.empirical_risk - mc).abs() < 5.0 * se,
        "quadrature {} vs Monte Carlo {mc} (se {se})",
        c.empirical_risk
    );
    // evaluate on the training sample gives the same Gibbs risk.
    let e = model.evaluate(&data, None).unwrap();
    assert!((e.gibbs_risk.unwrap() - c.empirical_risk).abs() < 1e-15);
    // Another sample is refused: a row less, or two labels swapped.
    let fewer = data.subset(&(1..data.n()).collect::<Vec<_>>());
    assert!(model.certify(&fewer, &no_loo()).is_err());
    let mut swapped = data.clone();
    swapped.y.swap(0, 149);
    assert!(model.certify(&swapped, &no_loo()).is_err());
}

#[test]
fn predictions_are_probabilities_and_files_reload_to_the_same_numbers() {
    let (data, labels) = classes("data/wine/wine.csv");
    for (method, o) in [
        (MethodName::Svm, FitOptions::default()),
        (
            MethodName::Laplace,
            FitOptions {
                multiclass: Some(MultiClass::Softmax),
                ..Default::default()
            },
        ),
    ] {
        let model = fit(method, o, &data, &labels);
        let p = model.predict_classes(data.x.as_ref()).unwrap();
        for i in 0..data.n() {
            let row: Vec<f64> = (0..3).map(|j| p.probabilities[(i, j)]).collect();
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(row.iter().all(|v| (0.0..=1.0).contains(v)));
            let best = (0..3).fold(0, |b, j| if row[j] > row[b] { j } else { b });
            assert_eq!(p.labels[i], best);
            let ln_best = (0..3).fold(0, |b, j| {
                if p.ln_scores[(i, j)] > p.ln_scores[(i, b)] {
                    j
                } else {
                    b
                }
            });
            assert_eq!(ln_best, best, "ln scores and probabilities disagree");
        }
        let text = serde_json::to_string(&model).unwrap();
        let back = FittedModel::from_json(&text, "m.json").unwrap();
        let q = back.predict_classes(data.x.as_ref()).unwrap();
        assert_eq!(p.probabilities, q.probabilities, "{method}");
        let opts = if model.spec.multiclass() == Some(MultiClass::Softmax) {
            no_loo()
        } else {
            CertifyOptions::default()
        };
        let a = model.certify(&data, &opts).unwrap();
        let b = back.certify(&data, &opts).unwrap();
        assert_eq!(a, b);
        // A regression call on a multi-class model is a clear error, not a panic.
        assert!(model.predict_regression(data.x.as_ref()).is_err());
        assert!(model.predict_classification(data.x.as_ref()).is_err());
    }
}

/// The one-vs-rest leave-one-out by refits equals brute force: every class's binary method
/// refitted without point i at its stored kernel, the class of the largest decision value at
/// `x_i` counted against `y_i`.
#[test]
fn one_vs_rest_leave_one_out_equals_brute_force_refits() {
    let (full, labels) = classes("data/iris/iris.csv");
    let rows: Vec<usize> = pacgp::data::permutation(full.n(), 5)
        .into_iter()
        .take(60)
        .collect();
    let data = full.subset(&rows);
    let model = fit(MethodName::Laplace, FitOptions::default(), &data, &labels);
    let opts = CertifyOptions {
        loo: LooRequest::Mode(LooMode::Both),
        ..Default::default()
    };
    let r = model.certify(&data, &opts).unwrap().remove(0);
    let Task::OneVsRest { members, .. } = &model.task else {
        panic!()
    };
    let xs = model.x_scaler.transform(data.x.as_ref()).unwrap();
    let n = data.n();
    let mut wrong = 0;
    for i in 0..n {
        let keep: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        let x_keep = Mat::from_fn(n - 1, xs.ncols(), |a, b| xs[(keep[a], b)]);
        let xi = Mat::from_fn(1, xs.ncols(), |_, b| xs[(i, b)]);
        let decisions: Vec<f64> = members
            .iter()
            .enumerate()
            .map(|(c, m)| {
                let y: Vec<f64> = keep
                    .iter()
                    .map(|&j| if data.y[j] == c as f64 { 1.0 } else { -1.0 })
                    .collect();
                let method = m.inference_method().unwrap();
                let Task::Classification { likelihood, .. } = &m.task else {
                    panic!()
                };
                let fit = method
                    .fit(
                        m.posterior().unwrap().kernel(),
                        likelihood,
                        x_keep.as_ref(),
                        &y,
                    )
                    .unwrap();
                fit.posterior.predict(xi.as_ref()).unwrap().mean[0] + likelihood.bias_and_slope().0
            })
            .collect();
        let best =
            (0..decisions.len()).fold(0, |b, k| if decisions[k] > decisions[b] { k } else { b });
        wrong += usize::from(best as f64 != data.y[i]);
    }
    let brute = wrong as f64 / n as f64;
    let exact = r.loo_exact_error.unwrap();
    assert!(
        (exact - brute).abs() <= 1.0 / n as f64 + 1e-12,
        "refits {exact} vs brute force {brute}"
    );
    // The cavity estimate is within two points of it.
    assert!(
        (r.loo_error.unwrap() - exact).abs() <= 2.0 / n as f64,
        "{:?} vs {exact}",
        r.loo_error
    );
}

/// Iris and the softmax Laplace classifier fitted on it with the defaults.
fn iris_softmax() -> (Dataset, FittedModel) {
    let (data, labels) = classes("data/iris/iris.csv");
    let model = fit(
        MethodName::Laplace,
        FitOptions {
            multiclass: Some(MultiClass::Softmax),
            ..Default::default()
        },
        &data,
        &labels,
    );
    (data, model)
}

#[test]
fn softmax_certificate_samples_its_risk_and_spends_a_tenth_of_delta() {
    let (data, model) = iris_softmax();
    let c = model
        .certify(&data, &no_loo())
        .unwrap()
        .remove(0)
        .certificate;
    let s = c.sampled_risk.clone().expect("a sampled risk");
    assert_eq!(s.draws_per_point, 1000);
    assert_eq!(s.draws, 150_000);
    // Seeded by the sample (the first 64 bits of its digest), not by the spec's seed 0.
    let digest = pacgp::data::sample_digest(&data);
    assert_eq!(s.seed, u64::from_str_radix(&digest[..16], 16).unwrap());
    assert!((s.delta_sampling - 0.001).abs() < 1e-15 && (s.delta_bound - 0.009).abs() < 1e-15);
    assert_eq!(c.delta, 0.01);
    assert!(s.upper_limit > s.sample_mean && c.empirical_risk == s.sample_mean);
    // The upper limit is kl⁻¹(R̂, ln(2/δ_s)/N), and the bound is taken there at δ − δ_s.
    let ul = pacgp::special::kl_inverse(s.sample_mean, (2.0 / 0.001f64).ln() / 150_000.0);
    assert!((ul - s.upper_limit).abs() < 1e-15);
    let want = pac_bayes_bound(
        ul,
        c.kl,
        150,
        0.009,
        9f64.ln(),
        BoundKind::Kl,
        ConfidenceTerm::Maurer,
    )
    .unwrap();
    assert!((c.bound - want).abs() < 1e-14 && (c.penalty - 9f64.ln()).abs() < 1e-15);
    assert_eq!(model.report.objective, Some(c.bound));
    // An independent estimate of the risk (another seed, 20 000 draws per point).
    let Task::Softmax { posterior, .. } = &model.task else {
        panic!()
    };
    let xs = model.x_scaler.transform(data.x.as_ref()).unwrap();
    let (joint, _) = posterior.predict_joint(xs.as_ref()).unwrap();
    let long = pacgp::multiclass::sampled_gibbs_risk(&data.y, &joint, 20_000, 99).unwrap();
    let se = (long * (1.0 - long) / 150_000.0).sqrt();
    assert!(
        (s.sample_mean - long).abs() < 5.0 * se,
        "{} vs {long}",
        s.sample_mean
    );
    // The softmax model's leave-one-out is its rows' sites removed (`tests/softmax_loo.rs`):
    // reported by default beside the same certificate; an exact one is refused, saying why.
    let plain = model.certify(&data, &CertifyOptions::default()).unwrap();
    assert_eq!(plain[0].certificate.bound, c.bound);
    let loo = plain[0].loo_error.unwrap();
    assert!(loo < 0.1, "{loo}");
    let asked = CertifyOptions {
        loo: LooRequest::Mode(LooMode::Exact),
        ..CertifyOptions::default()
    };
    let e = model.certify(&data, &asked).unwrap_err();
    assert!(e.to_string().contains("mode again"), "{e}");
}

/// The softmax certificate's sampling seed is no free choice (issue 43): editing the spec's
/// seed in the file leaves the certificate the same to the bit (it moved by up to 0.0008),
/// an edited sampling-seed record is refused as a mismatch, and a file without the record
/// (written before it existed) certifies with the sample's seed, to the same bits.
#[test]
fn softmax_sampling_seed_is_fixed_by_the_sample_and_an_edit_is_refused() {
    let (data, model) = iris_softmax();
    let bound = |v: &serde_json::Value| {
        FittedModel::from_json(&v.to_string(), "m.json")
            .and_then(|m| m.certify(&data, &no_loo()))
            .map(|c| c[0].certificate.bound)
    };
    let original: serde_json::Value = serde_json::to_value(&model).unwrap();
    let own = bound(&original).unwrap();
    assert_eq!(Some(own), model.report.objective);
    let recorded = original["task"]["sampling_seed"]
        .as_u64()
        .expect("recorded");
    for seed in [1u64, 7, 12345] {
        let mut v = original.clone();
        v["spec"]["seed"] = seed.into();
        assert_eq!(
            bound(&v).unwrap().to_bits(),
            own.to_bits(),
            "spec seed {seed}"
        );
    }
    let mut v = original.clone();
    v["task"]["sampling_seed"] = recorded.wrapping_add(1).into();
    let err = bound(&v).unwrap_err();
    assert!(
        matches!(&err, pacgp::Error::ModelMismatch { part, .. } if part.contains("sampling seed")),
        "{err}"
    );
    let mut old = original.clone();
    old["task"].as_object_mut().unwrap().remove("sampling_seed");
    assert_eq!(bound(&old).unwrap().to_bits(), own.to_bits());
}

#[test]
fn softmax_ml2_snaps_onto_the_grid_and_prices_it() {
    let (data, labels) = classes("data/iris/iris.csv");
    let model = fit(
        MethodName::Laplace,
        FitOptions {
            multiclass: Some(MultiClass::Softmax),
            select: Some(Selection::Ml2),
            kernel: Some("se".into()),
            ..Default::default()
        },
        &data,
        &labels,
    );
    let Task::Softmax { posterior, .. } = &model.task else {
        panic!()
    };
    let grid = pacgp::bounds::HyperGrid::default();
    assert_eq!(
        posterior.kernel.params(),
        grid.round(&posterior.kernel.params())
    );
    let c = model
        .certify(&data, &no_loo())
        .unwrap()
        .remove(0)
        .certificate;
    assert!((c.penalty - grid.penalty(2)).abs() < 1e-12);
}

#[test]
fn multi_class_specs_are_checked_before_the_data() {
    let e = FitOptions {
        multiclass: Some(MultiClass::Softmax),
        ..Default::default()
    }
    .check(MethodName::Ep)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::MultiClass);
    let e = FitOptions {
        multiclass: Some(MultiClass::OneVsRest),
        prior: Some(pacgp::objective::gp_split::SplitFraction::Fixed(0.5)),
        ..Default::default()
    }
    .check(MethodName::Laplace)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Prior);
    let e = FitOptions {
        multiclass: Some(MultiClass::Softmax),
        likelihood: Some(pacgp::spec::LikelihoodName::Logistic),
        ..Default::default()
    }
    .check(MethodName::Laplace)
    .unwrap_err();
    assert!(matches!(e.problem, SpecProblem::Conflict { .. }), "{e}");
    let e = FitOptions {
        multiclass: Some(MultiClass::OneVsRest),
        epsilon: Some(1.0),
        ..Default::default()
    }
    .check(MethodName::Gpr)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::MultiClass);
    // A spec survives its file form.
    let spec = FitOptions {
        multiclass: Some(MultiClass::OneVsRest),
        active_set: Some(20),
        ..Default::default()
    }
    .check(MethodName::Ivm)
    .unwrap();
    let text = serde_json::to_string(&spec).unwrap();
    assert!(text.contains("one-vs-rest"), "{text}");
    assert_eq!(
        serde_json::from_str::<pacgp::spec::CheckedFitSpec>(&text).unwrap(),
        spec
    );
}

#[test]
fn labels_pick_the_binary_or_the_multi_class_path() {
    // Two labels as classes with a binary spec: the binary model, labels in class order.
    let (full, _) = classes("data/iris/iris.csv");
    let rows: Vec<usize> = (0..full.n()).filter(|&i| full.y[i] != 0.0).collect();
    let mut two = full.subset(&rows);
    two.y.iter_mut().for_each(|v| *v -= 1.0);
    let c2 = pacgp::data::ClassLabels {
        labels: vec!["versicolor".into(), "virginica".into()],
    };
    let spec = FitOptions::default().check(MethodName::Ep).unwrap();
    let m = pacgp::fit::fit(&spec, &two, c2.clone()).unwrap();
    let l = m.task.labels().unwrap();
    assert_eq!(
        (l.negative.as_str(), l.positive.as_str()),
        ("versicolor", "virginica")
    );
    // The same two classes with an explicit one-vs-rest spec: two binary models.
    let spec = FitOptions {
        multiclass: Some(MultiClass::OneVsRest),
        ..Default::default()
    }
    .check(MethodName::Ep)
    .unwrap();
    let m = pacgp::fit::fit(&spec, &two, c2).unwrap();
    assert!(matches!(&m.task, Task::OneVsRest { members, .. } if members.len() == 2));
    // Three classes for a regression method: refused.
    let (iris, c3) = classes("data/iris/iris.csv");
    let spec = FitOptions::default().check(MethodName::Gpr).unwrap();
    assert!(pacgp::fit::fit(&spec, &iris, c3).is_err());
    // Class indices out of range: refused before fitting.
    let spec = FitOptions::default().check(MethodName::Laplace).unwrap();
    let mut bad = iris.clone();
    bad.y[0] = 7.0;
    let c3 = pacgp::data::ClassLabels {
        labels: vec!["a".into(), "b".into(), "c".into()],
    };
    assert!(pacgp::fit::fit(&spec, &bad, TrainingLabels::Classes(c3)).is_err());
}

/// The experiment's quick version (one split of iris and of wine, every method): each
/// certificate is at least the held-out Gibbs error of its split.
#[test]
fn quick_experiment_certificates_hold_on_the_held_out_part() {
    use pacgp::experiments::multiclass as mc;
    let settings = mc::MulticlassSettings::quick();
    for set in ["iris", "wine"] {
        let (data, classes) = mc::load_multiclass_set(&repo("data"), set).unwrap();
        let rows = mc::multiclass_rows(set, &data, &classes, 0, &settings).unwrap();
        assert_eq!(rows.len(), mc::MULTICLASS_METHODS.len());
        for r in &rows {
            assert!(
                r.bound >= r.test_gibbs,
                "{set} {}: bound {} < held-out {}",
                r.method,
                r.bound,
                r.test_gibbs
            );
            assert!(
                r.bound > r.train_gibbs && r.n_test == (data.n() as f64 * 0.2).round() as usize
            );
        }
        let s = mc::summarise(&rows, &[]);
        assert!(s
            .iter()
            .all(|s| s.worst_test_minus_bound <= 0.0 && s.peer_accuracy.is_none()));
    }
}

/// Ten digit classes on 400 training rows: the one-vs-rest certificate prices ten choices
/// from the menu (`10·ln 9`) and holds on 300 held-out rows.
#[test]
fn digits_subset_one_vs_rest() {
    use pacgp::experiments::multiclass as mc;
    let (data, classes) = mc::load_multiclass_set(&repo("data"), "digits").unwrap();
    let perm = pacgp::data::permutation(data.n(), 2);
    let (train, test) = (data.subset(&perm[..400]), data.subset(&perm[400..700]));
    let model = fit(MethodName::Laplace, FitOptions::default(), &train, &classes);
    let c = model
        .certify(&train, &no_loo())
        .unwrap()
        .remove(0)
        .certificate;
    assert!((c.penalty - 10.0 * 9f64.ln()).abs() < 1e-12);
    let e = model.evaluate(&test, None).unwrap();
    assert!(
        c.bound >= e.gibbs_risk.unwrap(),
        "{} vs {:?}",
        c.bound,
        e.gibbs_risk
    );
}

/// Digits at full size, one split, every method of the experiment (minutes: run with
/// `--ignored`; `pacgp reproduce multiclass` runs five such splits).
#[test]
#[ignore]
fn digits_full_split_every_method_holds_its_certificate() {
    use pacgp::experiments::multiclass as mc;
    let settings = mc::MulticlassSettings::full();
    let (data, classes) = mc::load_multiclass_set(&repo("data"), "digits").unwrap();
    for r in mc::multiclass_rows("digits", &data, &classes, 0, &settings).unwrap() {
        assert!(
            r.bound >= r.test_gibbs,
            "{}: {} < {}",
            r.method,
            r.bound,
            r.test_gibbs
        );
    }
}

/// One-vs-rest SVMs share one (kernel, C) of the menu: the candidate whose one-vs-rest model,
/// fitted with that candidate given (`--lengthscale`, `--c`), has the fewest multi-class
/// LR-LOO errors (the first on ties) — recomputed here by fitting all twelve; priced `ln 12`
/// once plus each class's μ grid; a model whose classes use different candidates is refused.
#[test]
fn one_vs_rest_svm_shares_the_candidate_of_fewest_multiclass_loo_errors() {
    let (data, labels) = classes("data/iris/iris.csv");
    let sample = data.subset(&(0..150).step_by(2).collect::<Vec<_>>());
    let ovr = |o: FitOptions| FitOptions {
        multiclass: Some(MultiClass::OneVsRest),
        ..o
    };
    let model = fit(
        MethodName::Svm,
        ovr(FitOptions::default()),
        &sample,
        &labels,
    );
    let Task::OneVsRest { members, .. } = &model.task else {
        panic!("not one-vs-rest")
    };
    assert!(members.iter().all(|m| *m.spec == *members[0].spec));
    // The twelve candidates by hand: lengthscales {½, 1, 2}·√D (D = 4), C ∈ {0.1, 1, 10, 100}.
    let loo_opts = CertifyOptions {
        loo: LooRequest::Mode(LooMode::Approx),
        ..Default::default()
    };
    let mut fixed = Vec::new();
    for m in [0.5, 1.0, 2.0] {
        for c in [0.1, 1.0, 10.0, 100.0] {
            let o = FitOptions {
                lengthscale: Some(m * 2.0),
                c: Some(c),
                ..Default::default()
            };
            let f = fit(MethodName::Svm, ovr(o), &sample, &labels);
            let e = f.certify(&sample, &loo_opts).unwrap().remove(0).loo_error;
            fixed.push((e.expect("a leave-one-out error"), f));
        }
    }
    let best = (0..fixed.len()).fold(0, |b, i| if fixed[i].0 < fixed[b].0 { i } else { b });
    let members_of = |m: &FittedModel| match &m.task {
        Task::OneVsRest { members, .. } => members.clone(),
        _ => panic!("not one-vs-rest"),
    };
    for (a, b) in members.iter().zip(members_of(&fixed[best].1)) {
        assert_eq!(
            a.posterior().unwrap().kernel(),
            b.posterior().unwrap().kernel()
        );
        assert_eq!(*a.spec, *b.spec);
    }
    // Priced once for the shared candidate, once per class for μ.
    let c = model
        .certify(&sample, &no_loo())
        .unwrap()
        .remove(0)
        .certificate;
    let mu = pacgp::svm::certificate::mu_menu().items.len() as f64;
    let want_penalty = 12f64.ln() + 3.0 * mu.ln();
    assert!(
        (c.penalty - want_penalty).abs() < 1e-12,
        "{} vs {want_penalty}",
        c.penalty
    );
    // A model file with a class of another candidate: refused on load (the file as written
    // loads).
    let text = serde_json::to_string(&model).unwrap();
    assert!(FittedModel::from_json(&text, "shared").is_ok());
    let other = members_of(&fixed[(best + 1) % fixed.len()].1);
    let mut mixed = model.clone();
    if let Task::OneVsRest { members, .. } = &mut mixed.task {
        members[1] = other[1].clone();
    }
    let text = serde_json::to_string(&mixed).unwrap();
    let err = FittedModel::from_json(&text, "mixed")
        .unwrap_err()
        .to_string();
    assert!(err.contains("shares one candidate"), "{err}");
}

/// `f` on a rayon pool of `threads` threads, as `pacgp --threads` runs a fit.
fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// One-vs-rest fits its classes in parallel: the model is the same bits on one thread (the
/// classes one after another) and on three (all at once), and each member is the binary
/// spec fitted alone on its class against the rest.
#[test]
fn classes_fitted_in_parallel_are_the_classes_fitted_alone() {
    let (data, labels) = classes("data/wine/wine.csv");
    for method in [MethodName::Sogp, MethodName::Laplace] {
        let spec = FitOptions::default().check(method).unwrap();
        let fit_on = |threads| {
            on_threads(threads, || {
                pacgp::fit::fit(&spec, &data, labels.clone()).unwrap()
            })
        };
        let one = serde_json::to_value(fit_on(1)).unwrap();
        let model = fit_on(3);
        assert_eq!(one, serde_json::to_value(&model).unwrap(), "{method}");
        let Task::OneVsRest { members, .. } = &model.task else {
            panic!("{method}: wine's three classes are fitted one-vs-rest")
        };
        for (c, member) in members.iter().enumerate() {
            let binary = Dataset {
                y: pacgp::data::one_vs_rest_signs(&data.y, c),
                ..data.clone()
            };
            let alone = on_threads(1, || {
                pacgp::fit::fit(&spec, &binary, labels.one_vs_rest(c)).unwrap()
            });
            assert_eq!(
                serde_json::to_value(&alone).unwrap(),
                serde_json::to_value(member).unwrap(),
                "{method}, class {c}"
            );
        }
    }
}
