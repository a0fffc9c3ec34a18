//! pac-gpc's jackknife+ prediction sets: the site downdate of its bound-trained sites. Any
//! `(α, π > 0)` of the site form is the prior times Gaussian sites with natural means
//! `ν̃_i = α_i + π_i μ_i` (`μ = Kα`), so the model without row i is the posterior of the other
//! sites. Here that posterior is formed from scratch for every i by dense linear algebra (no
//! site removal formula): with `S = Π'½` (`π'_i = 0`), `B = I + SKS` and `ν' = Π'm̃`, its mean at
//! x is `k(x)ᵀ(ν' − S B⁻¹ S K ν')` and its variance `k(x, x) − k(x)ᵀ S B⁻¹ S k(x)`. The
//! library's leave-one-out marginals (at test inputs and the cavities at the training rows)
//! agree with it to 1e-9, and the sets counted here from it are the model's. Edited records
//! and split priors are refused.

use faer::linalg::solvers::Solve;
use faer::{Mat, Side};
use pacgp::conformal::sets::{label_scores, plus_set, true_label_score};
use pacgp::model::{FittedModel, SetRecord, Task};
use pacgp::objective::gp_split::SplitFraction;
use pacgp::posterior::{Covariance, GaussianPosterior};
use pacgp::spec::{
    FitOptions, IntervalMethod, IntervalScore, IntervalSpec, MethodName, MultiClass, SpecOption,
    SpecProblem,
};

mod common;
use common::{classes, fit_classes as fit};

fn with_jackknife(score: IntervalScore) -> FitOptions {
    FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        interval_score: Some(score),
        seed: Some(3),
        ..Default::default()
    }
}

/// The posterior without site i at the (standardised) inputs `xs`, from scratch: `(mean, var)`
/// at each row of `xs` (module doc).
fn dense_without_site(
    post: &GaussianPosterior,
    xs: faer::MatRef<'_, f64>,
    i: usize,
) -> (Vec<f64>, Vec<f64>) {
    let Covariance::Sites { sqrt_pi, .. } = &post.cov else {
        panic!("pac-gpc keeps a site-form posterior")
    };
    let (x, n) = (post.basis.as_ref(), post.alpha.len());
    let kern = post.kernel();
    let k = kern.gram(x).unwrap();
    let mu: Vec<f64> = (0..n)
        .map(|r| (0..n).map(|c| k[(r, c)] * post.alpha[c]).sum())
        .collect();
    let s: Vec<f64> = (0..n)
        .map(|j| if j == i { 0.0 } else { sqrt_pi[j] })
        .collect();
    let nu: Vec<f64> = (0..n)
        .map(|j| {
            if j == i {
                0.0
            } else {
                post.alpha[j] + s[j] * s[j] * mu[j]
            }
        })
        .collect();
    let b = Mat::from_fn(n, n, |r, c| {
        f64::from(u8::from(r == c)) + s[r] * k[(r, c)] * s[c]
    });
    let llt = b.llt(Side::Lower).unwrap();
    // w = ν' − S B⁻¹ S K ν'.
    let sk_nu = Mat::from_fn(n, 1, |r, _| {
        s[r] * (0..n).map(|c| k[(r, c)] * nu[c]).sum::<f64>()
    });
    let solved = llt.solve(&sk_nu);
    let w: Vec<f64> = (0..n).map(|r| nu[r] - s[r] * solved[(r, 0)]).collect();
    let kxs = kern.cross(x, xs).unwrap();
    let kss = kern.diag(xs);
    let sk = Mat::from_fn(n, xs.nrows(), |r, t| s[r] * kxs[(r, t)]);
    let b_inv_sk = llt.solve(&sk);
    let mean = (0..xs.nrows())
        .map(|t| (0..n).map(|r| kxs[(r, t)] * w[r]).sum())
        .collect();
    let var = (0..xs.nrows())
        .map(|t| kss[t] - (0..n).map(|r| sk[(r, t)] * b_inv_sk[(r, t)]).sum::<f64>())
        .collect();
    (mean, var)
}

/// `a` within 1e-9 of `b` relative to `1 + |b|`.
fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * (1.0 + b.abs()),
        "{what}: {a} vs {b} (difference {:.2e})",
        (a - b).abs()
    );
}

/// A binary pac-gpc model with jackknife+ sets on 50 rows of Ripley's synthetic set (every 5th
/// training row): at 25 of its test inputs every leave-one-out mean and variance of the
/// downdate the sets use ([`pacgp::loo::LooDowndate::sites`]) and every training row's cavity
/// (the calibration marginals, [`pacgp::loo::site_cavities`]) is the dense posterior without
/// that site to 1e-9; the sets counted from the dense marginals and the model's likelihood are
/// the model's, LAC and APS at α = 0.1 and 0.25.
#[test]
fn pac_gpc_sets_are_the_dense_posteriors_without_each_site() {
    let (train, c2) = classes("data/ripley-synth/synth_tr.csv");
    let (test, _) = classes("data/ripley-synth/synth_te.csv");
    let train = train.subset(&(0..250).step_by(5).collect::<Vec<_>>());
    let x = test.x.as_ref().subrows(0, 25);
    let model = fit(
        MethodName::PacGpc,
        with_jackknife(IntervalScore::Lac),
        &train,
        &c2,
    );
    let Task::Classification {
        posterior,
        likelihood,
        input_noise,
        ..
    } = &model.task
    else {
        panic!("a binary pac-gpc model")
    };
    let Some(SetRecord::JackknifePlus { labels, active, .. }) = model.sets.as_deref() else {
        panic!("no jackknife+ record")
    };
    assert!(active.is_none());
    let n = train.n();
    let xs = model.x_scaler.transform(x).unwrap();
    let at = pacgp::loo::LooDowndate::sites(posterior)
        .unwrap()
        .at(xs.as_ref())
        .unwrap();
    let cav = pacgp::loo::site_cavities(posterior).unwrap();
    let mut dense = Vec::with_capacity(n);
    for i in 0..n {
        let (mean, var) = dense_without_site(posterior, xs.as_ref(), i);
        for t in 0..x.nrows() {
            close(
                at.mean[(i, t)],
                mean[t],
                &format!("mean without {i} at {t}"),
            );
            close(
                at.var[(i, t)],
                var[t],
                &format!("variance without {i} at {t}"),
            );
        }
        let xi = posterior.basis.as_ref().subrows(i, 1);
        let (m_i, v_i) = dense_without_site(posterior, xi, i);
        close(cav.mean[i], m_i[0], &format!("cavity mean {i}"));
        close(cav.var[i], v_i[0], &format!("cavity variance {i}"));
        dense.push(((mean, var), (m_i[0], v_i[0])));
    }
    let probs = |m: f64, v: f64| {
        let p = likelihood.predictive_positive(m, v + input_noise);
        vec![1.0 - p, p]
    };
    for score in [IntervalScore::Lac, IntervalScore::Aps] {
        let iv = IntervalSpec {
            method: IntervalMethod::JackknifePlus,
            score,
        };
        let calibration: Vec<f64> = (0..n)
            .map(|i| {
                let (_, (m, v)) = dense[i];
                true_label_score(score, &probs(m, v), labels[i]).unwrap()
            })
            .collect();
        for alpha in [0.1, 0.25] {
            let record = model.sets.as_deref().unwrap();
            let got = record.sets(&model, &iv, x, alpha).unwrap().sets;
            for (t, set) in got.iter().enumerate() {
                let loo: Vec<Vec<f64>> = (0..n)
                    .map(|i| {
                        let ((mean, var), _) = &dense[i];
                        label_scores(score, &probs(mean[t], var[t])).unwrap()
                    })
                    .collect();
                let want = plus_set(&calibration, &loo.concat(), 2, alpha).unwrap();
                assert_eq!(set, &want, "{score} α = {alpha}, input {t}");
            }
        }
    }
}

/// A pac-gpc model file with jackknife+ sets reloads to the same sets; a record or posterior
/// edited in the file is refused on load: a site precision of 0 (no downdate), a label out of
/// range, a label missing. One-vs-rest over pac-gpc (iris, 3 classes) keeps its sets too, and
/// a member's site precision set to 0 is refused.
#[test]
fn pac_gpc_sets_survive_the_file_and_edits_are_refused() {
    let (train, c2) = classes("data/ripley-synth/synth_tr.csv");
    let train = train.subset(&(0..250).step_by(5).collect::<Vec<_>>());
    let model = fit(
        MethodName::PacGpc,
        with_jackknife(IntervalScore::Aps),
        &train,
        &c2,
    );
    let sets = model.predict_sets(train.x.as_ref(), 0.2).unwrap();
    assert_eq!(sets.sets.len(), train.n());
    assert!(sets.statement.statement.contains("jackknife+"));
    let text = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&text, "m").unwrap();
    assert_eq!(back.predict_sets(train.x.as_ref(), 0.2).unwrap(), sets);

    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let refused = |edited: serde_json::Value, want: &str| {
        let e = FittedModel::from_json(&edited.to_string(), "m").unwrap_err();
        assert!(e.to_string().contains(want), "{want}: {e}");
    };
    let mut edited = json.clone();
    edited["posterior"]["cov"]["sqrt_pi"][4] = serde_json::json!(0.0);
    refused(edited, "site precision");
    let mut edited = json.clone();
    edited["sets"]["labels"][3] = serde_json::json!(2);
    refused(edited, "training labels");
    let mut edited = json;
    edited["sets"]["labels"].as_array_mut().unwrap().pop();
    refused(edited, "training labels");

    let (iris, c3) = classes("data/iris/iris.csv");
    let iris = iris.subset(&(0..150).step_by(3).collect::<Vec<_>>());
    let model = fit(
        MethodName::PacGpc,
        with_jackknife(IntervalScore::Lac),
        &iris,
        &c3,
    );
    assert!(matches!(model.task, Task::OneVsRest { .. }));
    let sets = model.predict_sets(iris.x.as_ref(), 0.1).unwrap();
    assert_eq!(sets.classes, c3.labels);
    let text = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&text, "m").unwrap();
    assert_eq!(back.predict_sets(iris.x.as_ref(), 0.1).unwrap(), sets);
    let mut edited: serde_json::Value = serde_json::from_str(&text).unwrap();
    edited["task"]["members"][1]["posterior"]["cov"]["sqrt_pi"][0] = serde_json::json!(0.0);
    refused(edited, "site precision");
}

/// pac-gpc takes jackknife+ sets binary and one-vs-rest; with a split prior they are refused
/// as a conflict with the prior (its posterior is fitted on part B only), naming
/// split-conformal.
#[test]
fn pac_gpc_jackknife_spec_and_the_split_prior() {
    for multiclass in [None, Some(MultiClass::OneVsRest)] {
        FitOptions {
            multiclass,
            ..with_jackknife(IntervalScore::Lac)
        }
        .check(MethodName::PacGpc)
        .unwrap();
    }
    for method in [MethodName::PacGpc, MethodName::Laplace] {
        let e = FitOptions {
            prior: Some(SplitFraction::Fixed(0.5)),
            ..with_jackknife(IntervalScore::Lac)
        }
        .check(method)
        .unwrap_err();
        assert_eq!(e.option, SpecOption::Intervals, "{method}: {e}");
        assert!(
            matches!(
                e.problem,
                SpecProblem::Conflict {
                    with: SpecOption::Prior,
                    ..
                }
            ),
            "{method}: {e}"
        );
        assert!(e.to_string().contains("split-conformal"), "{method}: {e}");
    }
}
