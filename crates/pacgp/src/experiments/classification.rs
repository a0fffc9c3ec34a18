//! Seed 003's classification experiments: PAC-Bayes bounds of IVM, SOGP and full Laplace on
//! small UCI-style sets (§4.1), the (w, C) validation grid on MNIST 2 vs 3 (§4.2), the
//! selected points of IVM and SOGP on a 2-D three-Gaussian problem (§3.4) and risk–coverage
//! curves for selective classification (§4.4).
//!
//! Every method is an [`InferenceMethod`], so each fit ends as the shared Gaussian posterior and
//! is scored here once: Gibbs and 0-1 errors on train and test, `KL(Q‖P)`, the gap term and
//! the kl-form bound with Seeger's `ln((N+1)/δ)` constant (the seed's Theorem 1).

use faer::{Mat, MatRef};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::bounds::{complexity, pac_bayes_bound, BoundKind, ConfidenceTerm};
use crate::data::{permutation, Dataset, Standardizer};
use crate::error::{Error, Result};
use crate::inference::{ClassifierFit, InferenceMethod};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::loss;
use crate::selective::{self, ConfidenceScore};

/// Train and test scores of one fitted classifier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassScores {
    /// Empirical Gibbs error on the training sample.
    pub train_gibbs: f64,
    /// Gibbs error on the test set.
    pub test_gibbs: f64,
    /// 0-1 error of the Bayes classifier `sgn(μ + b)` on the training sample.
    pub train_error: f64,
    /// 0-1 error of the Bayes classifier on the test set.
    pub test_error: f64,
    /// `KL(Q‖P)` in nats.
    pub kl: f64,
    /// The complexity term `(KL + penalty + ln((N+1)/δ))/N` (the seed's "gap error bound").
    pub gap: f64,
    /// `kl⁻¹(train Gibbs, gap)`: the bound on the true Gibbs error.
    pub bound: f64,
    /// Number of basis points of the posterior (active set / basis vectors / N).
    pub n_basis: usize,
}

/// Score a fit on its training sample and a test set (docs/math.md §7.1–7.2), with the union-bound
/// `penalty` for how its kernel was chosen.
pub fn score(
    fit: &ClassifierFit,
    lik: &Likelihood,
    train: (MatRef<'_, f64>, &[f64]),
    test: (MatRef<'_, f64>, &[f64]),
    delta: f64,
    penalty: f64,
    term: ConfidenceTerm,
) -> Result<ClassScores> {
    let (b, lam) = lik.bias_and_slope();
    let mtr = fit.posterior.predict(train.0)?;
    let mte = fit.posterior.predict(test.0)?;
    let train_gibbs = loss::gibbs_error_classification(train.1, &mtr, b, lam)?;
    let kl = fit.posterior.kl_to_prior().max(0.0);
    let n = train.1.len();
    Ok(ClassScores {
        train_gibbs,
        test_gibbs: loss::gibbs_error_classification(test.1, &mte, b, lam)?,
        train_error: loss::bayes_error_classification(train.1, &mtr, b)?,
        test_error: loss::bayes_error_classification(test.1, &mte, b)?,
        kl,
        gap: complexity(kl, n, delta, penalty, term),
        bound: pac_bayes_bound(train_gibbs, kl, n, delta, penalty, BoundKind::Kl, term)?,
        n_basis: fit.posterior.n_basis(),
    })
}

/// One method on one split of one data set (§4.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UciRow {
    /// Data set name.
    pub dataset: String,
    /// Method name (`ivm`, `sogp`, `laplace`, ...).
    pub method: String,
    /// Repetition (split seed).
    pub rep: usize,
    /// The scores.
    #[serde(flatten)]
    pub scores: ClassScores,
}

/// Settings of [`ivm_uci`] (seed 003 §4.1: 100 train / 200 test, RBF with unit scales, δ = 0.5,
/// active set 30).
#[derive(Clone, Debug)]
pub struct UciSetup {
    /// Training points per repetition.
    pub n_train: usize,
    /// Test points per repetition (fewer if the set is too small: the rest of it).
    pub n_test: usize,
    /// Repetitions (random disjoint train/test draws).
    pub reps: usize,
    /// δ of the bound.
    pub delta: f64,
    /// Confidence constant of the bound.
    pub term: ConfidenceTerm,
    /// Candidate kernels on standardised inputs, fixed before seeing data: each method keeps
    /// the one with the lowest bound, which carries the penalty `ln |kernels|` (0 for one).
    pub kernels: Vec<Kernel>,
}

impl UciSetup {
    /// The union-bound penalty for choosing among the candidate kernels.
    pub fn penalty(&self) -> f64 {
        (self.kernels.len().max(1) as f64).ln()
    }

    /// Fit `m` with every candidate kernel and keep the fit with the lowest bound.
    fn best_fit(&self, m: &MethodSpec, tt: &TrainTest) -> Result<ClassifierFit> {
        let mut best: Option<(f64, ClassifierFit)> = None;
        for k in &self.kernels {
            let fit = m.method.fit(k, &m.likelihood, tt.x.as_ref(), &tt.y)?;
            let train = (tt.x.as_ref(), tt.y.as_slice());
            let b = score(
                &fit,
                &m.likelihood,
                train,
                train,
                self.delta,
                self.penalty(),
                self.term,
            )?
            .bound;
            if best.as_ref().is_none_or(|(bb, _)| b < *bb) {
                best = Some((b, fit));
            }
        }
        best.map(|(_, f)| f).ok_or(Error::Empty {
            what: "candidate kernels",
        })
    }
}

/// A named inference method with the likelihood it is run with.
#[derive(Clone, Debug)]
pub struct MethodSpec {
    /// Name in tables (`ivm`, `sogp`, `laplace`, ...).
    pub name: String,
    /// Inference method and settings.
    pub method: InferenceMethod,
    /// Likelihood.
    pub likelihood: Likelihood,
}

/// Draw a disjoint train/test pair (rows of `data`), standardised with training statistics.
fn draw(data: &Dataset, n_train: usize, n_test: usize, seed: u64) -> Result<TrainTest> {
    if data.n() < n_train + 2 {
        return Err(Error::InvalidParameter {
            name: "training size",
            value: n_train as f64,
            reason: "the data set has too few rows for it and a test set",
        });
    }
    let perm = permutation(data.n(), seed);
    let n_test = n_test.min(data.n() - n_train);
    let train = data.subset(&perm[..n_train]);
    let test = data.subset(&perm[n_train..n_train + n_test]);
    let sc = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    Ok(TrainTest {
        x: sc.transform(train.x.as_ref())?,
        y: train.y,
        xt: sc.transform(test.x.as_ref())?,
        yt: test.y,
    })
}

/// Standardised train and test arrays.
pub struct TrainTest {
    /// Training inputs.
    pub x: Mat<f64>,
    /// Training labels (±1).
    pub y: Vec<f64>,
    /// Test inputs.
    pub xt: Mat<f64>,
    /// Test labels (±1).
    pub yt: Vec<f64>,
}

/// IVM (active set d), SOGP (memory limit d) with the probit, and full Laplace with the
/// logistic likelihood (the seed's "full logistic regression").
pub fn seed_003_methods(d: usize) -> Vec<MethodSpec> {
    vec![
        MethodSpec {
            name: "ivm".into(),
            method: InferenceMethod::Ivm(crate::inference::ivm::IvmConfig::new(d)),
            likelihood: Likelihood::probit(),
        },
        MethodSpec {
            name: "sogp".into(),
            method: InferenceMethod::Sogp {
                config: crate::inference::sogp::SogpConfig {
                    max_basis: d,
                    ..Default::default()
                },
                order: crate::inference::sogp::SweepOrder::Natural,
            },
            likelihood: Likelihood::probit(),
        },
        MethodSpec {
            name: "laplace".into(),
            method: InferenceMethod::Laplace(crate::inference::laplace::LaplaceConfig::default()),
            likelihood: Likelihood::Logistic,
        },
    ]
}

/// Seed 003 §4.1: for every data set, repetition and method, fit on a random training draw and
/// score bound against test error. A draw where both classes are not present in the training
/// part is redrawn with the next seed (recorded by the row's `rep` staying the repetition index).
pub fn ivm_uci(
    datasets: &[(String, Dataset)],
    methods: &[MethodSpec],
    setup: &UciSetup,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<UciRow>> {
    let mut rows = Vec::new();
    let mut done = 0;
    for (name, data) in datasets {
        for rep in 0..setup.reps {
            let tt = draw_two_classes(data, setup.n_train, setup.n_test, rep as u64)?;
            for m in methods {
                let fit = setup.best_fit(m, &tt)?;
                let scores = score(
                    &fit,
                    &m.likelihood,
                    (tt.x.as_ref(), &tt.y),
                    (tt.xt.as_ref(), &tt.yt),
                    setup.delta,
                    setup.penalty(),
                    setup.term,
                )?;
                rows.push(UciRow {
                    dataset: name.clone(),
                    method: m.name.clone(),
                    rep,
                    scores,
                });
                done += 1;
                progress(done);
            }
        }
    }
    Ok(rows)
}

/// [`draw`], retried with further seeds until the training part holds both classes.
fn draw_two_classes(data: &Dataset, n_train: usize, n_test: usize, rep: u64) -> Result<TrainTest> {
    for attempt in 0..100u64 {
        let tt = draw(data, n_train, n_test, rep + 1_000_003 * attempt)?;
        if crate::data::check_binary_labels(&tt.y).is_ok() {
            return Ok(tt);
        }
    }
    crate::data::check_binary_labels(&data.y)?;
    Err(Error::InvalidParameter {
        name: "training size",
        value: n_train as f64,
        reason: "100 random draws all held a single class",
    })
}

/// Mean of each score per (data set, method), in first-seen order; `rep` is the count.
pub fn summarise_uci(rows: &[UciRow]) -> Vec<UciSummary> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in rows {
        let k = (r.dataset.clone(), r.method.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(d, m)| {
            let sel: Vec<&UciRow> = rows
                .iter()
                .filter(|r| r.dataset == d && r.method == m)
                .collect();
            let n = sel.len() as f64;
            let mean =
                |f: fn(&ClassScores) -> f64| sel.iter().map(|r| f(&r.scores)).sum::<f64>() / n;
            UciSummary {
                dataset: d,
                method: m,
                reps: sel.len(),
                bound: mean(|s| s.bound),
                train_gibbs: mean(|s| s.train_gibbs),
                test_gibbs: mean(|s| s.test_gibbs),
                test_error: mean(|s| s.test_error),
                kl: mean(|s| s.kl),
                bound_holds: sel
                    .iter()
                    .filter(|r| r.scores.bound >= r.scores.test_gibbs)
                    .count(),
                non_vacuous: sel.iter().filter(|r| r.scores.bound < 0.5).count(),
            }
        })
        .collect()
}

/// Means over the repetitions of one (data set, method).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UciSummary {
    /// Data set.
    pub dataset: String,
    /// Method.
    pub method: String,
    /// Number of repetitions.
    pub reps: usize,
    /// Mean bound.
    pub bound: f64,
    /// Mean training Gibbs error.
    pub train_gibbs: f64,
    /// Mean test Gibbs error.
    pub test_gibbs: f64,
    /// Mean test 0-1 error.
    pub test_error: f64,
    /// Mean KL.
    pub kl: f64,
    /// Repetitions where the bound is at least the test Gibbs error.
    pub bound_holds: usize,
    /// Repetitions where the bound is below ½.
    pub non_vacuous: usize,
}

/// One cell of the (w, C) grid of seed 003 §4.2.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridCell {
    /// Inverse squared width w of `k = C exp(−w‖x − x'‖²/(2d))`.
    pub w: f64,
    /// Signal scale C.
    pub c: f64,
    /// The scores (train = the training half, test = the validation half).
    #[serde(flatten)]
    pub scores: ClassScores,
}

/// Seed 003's kernel `C exp(−w‖x−x'‖²/(2d))` as an SE kernel: lengthscale `√(d/w)`, variance C.
pub fn w_c_kernel(w: f64, c: f64, d: usize) -> Result<Kernel> {
    if !(w > 0.0 && c > 0.0 && w.is_finite() && c.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "kernel width w or scale C",
            value: if w > 0.0 { c } else { w },
            reason: "must be positive and finite",
        });
    }
    Ok(Kernel::se_iso((d as f64 / w).sqrt(), c))
}

/// Seed 003 §4.2: fit `method` on `train` for every (w, C) and score it on `test`; each cell's
/// bound is for that kernel alone (no penalty: the table is a map, not a selection).
pub fn w_c_grid(
    train: (MatRef<'_, f64>, &[f64]),
    test: (MatRef<'_, f64>, &[f64]),
    ws: &[f64],
    cs: &[f64],
    method: &InferenceMethod,
    lik: &Likelihood,
    delta: f64,
    term: ConfidenceTerm,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<GridCell>> {
    let d = train.0.ncols();
    let mut out = Vec::new();
    for &w in ws {
        for &c in cs {
            let k = w_c_kernel(w, c, d)?;
            let fit = method.fit(&k, lik, train.0, train.1)?;
            let scores = score(&fit, lik, train, test, delta, 0.0, term)?;
            out.push(GridCell { w, c, scores });
            progress(out.len());
        }
    }
    Ok(out)
}

/// Seed 003 §3.4's data: three unit Gaussians at (−5, 0), (0, 0), (5, 0) with equal weights;
/// the middle one is class +1, the outer two class −1.
pub fn three_gaussians(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut x = Mat::zeros(n, 2);
    let mut y = vec![0.0; n];
    for i in 0..n {
        let comp: usize = rng.gen_range(0..3);
        let cx = [-5.0, 0.0, 5.0][comp];
        let (a, b): (f64, f64) = (
            StandardNormal.sample(&mut rng),
            StandardNormal.sample(&mut rng),
        );
        x[(i, 0)] = cx + a;
        x[(i, 1)] = b;
        y[i] = if comp == 1 { 1.0 } else { -1.0 };
    }
    (x, y)
}

/// Risk–coverage curves of one fit on a test set, one per confidence ordering (§4.4).
pub fn risk_coverage_curves(
    fit: &ClassifierFit,
    lik: &Likelihood,
    test: (MatRef<'_, f64>, &[f64]),
    orderings: &[ConfidenceScore],
) -> Result<Vec<Vec<(f64, f64)>>> {
    let m = fit.posterior.predict(test.0)?;
    let pred = selective::predicted_labels(&m, lik);
    orderings
        .iter()
        .map(|o| selective::risk_coverage(test.1, &pred, &selective::confidence(&m, lik, *o)))
        .collect()
}

/// Mean test risk at one coverage level for one ordering (§4.4's curves).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RiskCoverageRow {
    /// Data set.
    pub dataset: String,
    /// `mean-over-std` (|μ/σ|) or `abs-mean` (|μ|).
    pub ordering: String,
    /// Requested coverage (fraction of test points classified).
    pub coverage: f64,
    /// Mean over the repetitions of the error rate among the accepted points.
    pub risk: f64,
}

/// Risk of a risk–coverage curve at coverage `c`: that of the smallest accepted set covering
/// at least `c` (the curve's points are in increasing coverage).
pub fn risk_at(curve: &[(f64, f64)], c: f64) -> f64 {
    curve
        .iter()
        .find(|(cov, _)| *cov >= c - 1e-12)
        .or(curve.last())
        .map_or(0.0, |(_, r)| *r)
}

/// Seed 003 §4.4: fit `method` on random draws as in [`ivm_uci`] and average the test risk at
/// each coverage level for the |μ/σ| and |μ| orderings.
pub fn risk_coverage_study(
    datasets: &[(String, Dataset)],
    method: &MethodSpec,
    setup: &UciSetup,
    coverages: &[f64],
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<RiskCoverageRow>> {
    let orderings = [
        ("mean-over-std", ConfidenceScore::MeanOverStd),
        ("abs-mean", ConfidenceScore::AbsMean),
    ];
    let mut out = Vec::new();
    let mut done = 0;
    for (name, data) in datasets {
        let mut sums = vec![vec![0.0; coverages.len()]; orderings.len()];
        for rep in 0..setup.reps {
            let tt = draw_two_classes(data, setup.n_train, setup.n_test, rep as u64)?;
            let fit = setup.best_fit(method, &tt)?;
            let scores: Vec<ConfidenceScore> = orderings.iter().map(|o| o.1).collect();
            let curves =
                risk_coverage_curves(&fit, &method.likelihood, (tt.xt.as_ref(), &tt.yt), &scores)?;
            for (k, curve) in curves.iter().enumerate() {
                for (j, &c) in coverages.iter().enumerate() {
                    sums[k][j] += risk_at(curve, c);
                }
            }
            done += 1;
            progress(done);
        }
        for (k, (oname, _)) in orderings.iter().enumerate() {
            for (j, &c) in coverages.iter().enumerate() {
                out.push(RiskCoverageRow {
                    dataset: name.clone(),
                    ordering: (*oname).into(),
                    coverage: c,
                    risk: sums[k][j] / setup.reps as f64,
                });
            }
        }
    }
    Ok(out)
}

/// Project `train` and `test` rows onto the `k` leading principal axes of `train` (centred
/// with its mean), then standardise every component with training statistics (seed 003 §4.2
/// preprocesses MNIST by PCA and normalisation).
pub fn pca_standardise(
    train: MatRef<'_, f64>,
    test: MatRef<'_, f64>,
    k: usize,
) -> Result<(Mat<f64>, Mat<f64>)> {
    let (n, d) = (train.nrows(), train.ncols());
    if !(k >= 1 && k <= d) || n < 2 || test.ncols() != d {
        return Err(Error::InvalidParameter {
            name: "PCA components",
            value: k as f64,
            reason: "must lie in 1..=D, with at least two training rows and matching columns",
        });
    }
    let mean: Vec<f64> = (0..d)
        .map(|j| (0..n).map(|i| train[(i, j)]).sum::<f64>() / n as f64)
        .collect();
    let centre = |x: MatRef<'_, f64>| Mat::from_fn(x.nrows(), d, |i, j| x[(i, j)] - mean[j]);
    let (xc, tc) = (centre(train), centre(test));
    let cov = xc.transpose() * &xc;
    let eig = cov
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|_| Error::Numerical {
            what: "PCA",
            message: "eigendecomposition of the covariance did not converge".into(),
        })?;
    // Eigenvalues come in increasing order: the last k columns are the leading axes.
    let u = eig.U();
    let axes = Mat::from_fn(d, k, |i, j| u[(i, d - 1 - j)]);
    let (ptr, pte) = (&xc * &axes, &tc * &axes);
    let names: Vec<String> = (0..k).map(|j| format!("pc{j}")).collect();
    let sc = Standardizer::fit(ptr.as_ref(), &names)?;
    Ok((sc.transform(ptr.as_ref())?, sc.transform(pte.as_ref())?))
}

/// Project onto the `k` leading principal axes of `train` and whiten them (as
/// [`pca_standardise`]), then scale every vector to unit length: seed 003 §4.2 "employ[s]
/// PCA and normalized every vector". With the kernel's `w/(2d)` this puts the lowest bound
/// in the seed's region w ≈ 0.1–1 (whitened components alone put it near w = 0.01).
pub fn pca_unit_vectors(
    train: MatRef<'_, f64>,
    test: MatRef<'_, f64>,
    k: usize,
) -> Result<(Mat<f64>, Mat<f64>)> {
    let (p, q) = pca_standardise(train, test, k)?;
    let unit = |m: Mat<f64>| {
        let norms: Vec<f64> = (0..m.nrows())
            .map(|i| (0..k).map(|j| m[(i, j)] * m[(i, j)]).sum::<f64>().sqrt())
            .collect();
        Mat::from_fn(m.nrows(), k, |i, j| {
            if norms[i] > 0.0 {
                m[(i, j)] / norms[i]
            } else {
                0.0
            }
        })
    };
    Ok((unit(p), unit(q)))
}

/// MNIST 2 vs 3 (seed 003 §4.2): `n_train` images drawn (seed 0) from the pool rows that are
/// not in the official test set (`t10k_index = −1`), tested on the test file; pixels scaled
/// to [0, 1], projected on `components` principal axes, whitened and scaled to unit length
/// ([`pca_unit_vectors`]).
/// Labels: 2 → −1, 3 → +1.
pub fn mnist_2v3(
    pool: &std::path::Path,
    test: &std::path::Path,
    n_train: usize,
    components: usize,
) -> Result<TrainTest> {
    let opts = crate::data::CsvOptions {
        target: crate::data::TargetSpec::Name("label".into()),
        ..Default::default()
    };
    let (pool, _) = crate::data::load_csv_classification(pool, &opts)?;
    let (test, _) = crate::data::load_csv_classification(test, &opts)?;
    if pool.feature_names.first().map(String::as_str) != Some("t10k_index") {
        return Err(Error::InvalidSpec {
            spec: pool.feature_names.first().cloned().unwrap_or_default(),
            reason: "the MNIST pool's first column must be t10k_index".into(),
        });
    }
    let disjoint: Vec<usize> = (0..pool.n()).filter(|&i| pool.x[(i, 0)] < 0.0).collect();
    let chosen: Vec<usize> = permutation(disjoint.len(), 0)
        .iter()
        .take(n_train)
        .map(|&k| disjoint[k])
        .collect();
    let train = pool.subset(&chosen);
    let pixels = |d: &Dataset| Mat::from_fn(d.n(), d.d() - 1, |i, j| d.x[(i, j + 1)] / 255.0);
    let (x, xt) = pca_unit_vectors(pixels(&train).as_ref(), pixels(&test).as_ref(), components)?;
    Ok(TrainTest {
        x,
        y: train.y,
        xt,
        yt: test.y,
    })
}
