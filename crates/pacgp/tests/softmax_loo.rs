//! The softmax Laplace posterior's leave-one-out (docs/math.md eq. 10.1,
//! `pacgp::loo::softmax`) against the dense definition: the Laplace posterior over the latent
//! values of every class at the training and test points, `Σ = (I + 𝒦W)⁻¹𝒦` and `μ = Σh`
//! (𝒦 block-diagonal over the classes, W the training rows' K×K site precisions, `h` their
//! shifts), rebuilt here by LU solves with row i's site block set to zero — no Woodbury, no
//! stored factor. Also `certify`'s estimate (the error of the softmax predictive's argmax under
//! each leave-one-out model).

use faer::linalg::solvers::Solve;
use faer::Mat;
use pacgp::inference::softmax::SoftmaxPosterior;
use pacgp::loo::SoftmaxSiteLoo;
use pacgp::model::{CertifyOptions, Task};
use pacgp::spec::{FitOptions, MethodName, MultiClass};

mod common;

/// Softmax Laplace on 45 seeded iris rows, and 10 other rows to test at.
fn fitted() -> (
    pacgp::model::FittedModel,
    pacgp::data::Dataset,
    pacgp::data::Dataset,
) {
    let (iris, c3) = common::classes("data/iris/iris.csv");
    let order = pacgp::data::permutation(iris.n(), 5);
    let (train, test) = (iris.subset(&order[..45]), iris.subset(&order[45..55]));
    let o = FitOptions {
        multiclass: Some(MultiClass::Softmax),
        ..Default::default()
    };
    let model = common::fit_classes(MethodName::Laplace, o, &train, &c3);
    (model, train, test)
}

fn posterior(model: &pacgp::model::FittedModel) -> &SoftmaxPosterior {
    let Task::Softmax { posterior, .. } = &model.task else {
        panic!("a softmax model")
    };
    posterior
}

/// The dense Laplace posterior over points `z` (the N training inputs first), classes major
/// (index `c·P + p`), with the sites of the training rows `rows` only: `(μ, Σ)`.
struct Dense {
    kbig: Mat<f64>,
    /// Site precisions, block (a, b) at training row i.
    w: Vec<Mat<f64>>,
    /// Site shifts `W_i f̂_i + g_i` per training row (K).
    h: Vec<Vec<f64>>,
    points: usize,
    k: usize,
}

impl Dense {
    fn new(post: &SoftmaxPosterior, z: &Mat<f64>) -> Self {
        let (n, k, p) = (post.basis.nrows(), post.classes(), z.nrows());
        let kz = post.kernel.gram(z.as_ref()).unwrap();
        let kbig = Mat::from_fn(k * p, k * p, |r, c| {
            if r / p == c / p {
                kz[(r % p, c % p)]
            } else {
                0.0
            }
        });
        // f̂ at the training rows: K α_c.
        let f_hat = |c: usize, i: usize| (0..n).map(|j| kz[(i, j)] * post.alpha[c][j]).sum::<f64>();
        let w: Vec<Mat<f64>> = (0..n)
            .map(|i| {
                Mat::from_fn(k, k, |a, b| {
                    let (pa, pb) = (post.pi[a][i], post.pi[b][i]);
                    if a == b {
                        pa - pa * pb
                    } else {
                        -pa * pb
                    }
                })
            })
            .collect();
        let h = (0..n)
            .map(|i| {
                (0..k)
                    .map(|a| {
                        (0..k).map(|b| w[i][(a, b)] * f_hat(b, i)).sum::<f64>() + post.alpha[a][i]
                    })
                    .collect()
            })
            .collect();
        Self {
            kbig,
            w,
            h,
            points: p,
            k,
        }
    }

    /// `(μ, Σ)` with the sites of every training row but `left_out`.
    fn posterior(&self, left_out: Option<usize>) -> (Vec<f64>, Mat<f64>) {
        let (k, p) = (self.k, self.points);
        let mut wbig = Mat::<f64>::zeros(k * p, k * p);
        let mut h = vec![0.0; k * p];
        for i in (0..self.w.len()).filter(|&i| Some(i) != left_out) {
            for a in 0..k {
                h[a * p + i] = self.h[i][a];
                for b in 0..k {
                    wbig[(a * p + i, b * p + i)] = self.w[i][(a, b)];
                }
            }
        }
        let a = Mat::<f64>::identity(k * p, k * p) + &self.kbig * &wbig;
        let sigma = a.partial_piv_lu().solve(&self.kbig);
        let mu = (0..k * p)
            .map(|r| (0..k * p).map(|c| sigma[(r, c)] * h[c]).sum())
            .collect();
        (mu, sigma)
    }
}

/// Worst relative difference between a joint score (mean row, factor) and the dense one at
/// point `p`.
fn difference(
    mean: &[f64],
    chol: &Mat<f64>,
    (mu, sigma): &(Vec<f64>, Mat<f64>),
    p: usize,
    points: usize,
) -> f64 {
    let k = mean.len();
    let cov = chol * chol.transpose();
    let mut worst: f64 = 0.0;
    for a in 0..k {
        let m = mu[a * points + p];
        worst = worst.max((mean[a] - m).abs() / (1.0 + m.abs()));
        for b in 0..k {
            let s = sigma[(a * points + p, b * points + p)];
            worst = worst.max((cov[(a, b)] - s).abs() / (1.0 + s.abs()));
        }
    }
    worst
}

/// Eq. 10.1 against the dense removal, at the 45 training rows (each its own cavity) and at
/// 10 test rows, for every row left out: to 1e-6. The dense posterior with every site is the
/// model's own (its mode and `predict_joint`), to 1e-6.
#[test]
fn site_removal_is_the_dense_laplace_without_the_row() {
    let (model, _, test) = fitted();
    let post = posterior(&model);
    let xs = model.x_scaler.transform(test.x.as_ref()).unwrap();
    let (n, m, k) = (post.basis.nrows(), xs.nrows(), post.classes());
    let z = Mat::from_fn(n + m, xs.ncols(), |r, c| {
        if r < n {
            post.basis[(r, c)]
        } else {
            xs[(r - n, c)]
        }
    });
    let dense = Dense::new(post, &z);
    let loo = SoftmaxSiteLoo::new(post).unwrap();
    let at = loo.at(xs.as_ref()).unwrap();
    let (joint, _) = post.predict_joint(z.as_ref()).unwrap();
    let full = dense.posterior(None);
    let mut worst_full: f64 = 0.0;
    for p in 0..n + m {
        let mean: Vec<f64> = (0..k).map(|a| joint.mean[(p, a)]).collect();
        worst_full = worst_full.max(difference(&mean, &joint.chol[p], &full, p, n + m));
    }
    let mut worst: f64 = 0.0;
    for i in 0..n {
        let without = dense.posterior(Some(i));
        let tr = loo.training();
        let mean: Vec<f64> = (0..k).map(|a| tr.mean[(i, a)]).collect();
        worst = worst.max(difference(&mean, &tr.chol[i], &without, i, n + m));
        for j in 0..m {
            let r = i * m + j;
            let mean: Vec<f64> = (0..k).map(|a| at.mean[(r, a)]).collect();
            worst = worst.max(difference(&mean, &at.chol[r], &without, n + j, n + m));
        }
    }
    println!("dense Laplace: full posterior {worst_full:.2e}, eq. 10.1 worst {worst:.2e}");
    assert!(worst_full < 1e-6, "{worst_full}");
    assert!(worst < 1e-6, "{worst}");
}

/// `certify` of the softmax model reports the cavity estimate: the share of training rows
/// whose leave-one-out predictive (the model's own draws) names another class, between 0 and
/// a quarter here.
#[test]
fn certify_reports_the_softmax_leave_one_out() {
    let (model, train, _) = fitted();
    let report = &model.certify(&train, &CertifyOptions::default()).unwrap()[0];
    assert_eq!(
        report.loo_estimator,
        Some(pacgp::loo::LooEstimator::Cavity),
        "{report:?}"
    );
    let post = posterior(&model);
    let loo = SoftmaxSiteLoo::new(post).unwrap();
    let p = model.softmax_probabilities(loo.training()).unwrap();
    let wrong = (0..train.n())
        .filter(|&i| {
            let best = (0..3).fold(0, |b, c| if p[(i, c)] > p[(i, b)] { c } else { b });
            best as f64 != train.y[i]
        })
        .count();
    println!("softmax leave-one-out: {wrong} of {} rows", train.n());
    assert_eq!(report.loo_error, Some(wrong as f64 / train.n() as f64));
    assert!(wrong < train.n() / 4, "{wrong}");
}
