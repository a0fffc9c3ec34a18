//! The project's multi-class experiment (`pacgp reproduce multiclass`): iris, wine and digits
//! on seeded 80/20 splits, each of the multi-class methods ([`MULTICLASS_METHODS`]) fitted
//! through the one entry point [`crate::fit::fit`] on the training part and scored on the
//! held-out part — accuracy of the predicted class, the held-out Gibbs error and its 99% lower
//! confidence limit, the certificate (bound, training Gibbs error, KL, penalty) and the fit
//! time — next to scikit-learn's `GaussianProcessClassifier` (one-vs-rest) and `SVC` on the
//! same splits ([`PeerRow`], run by `scripts/multiclass_peers.py`, alternating with pacgp's
//! fits). [`summarise`] gives means, standard errors, the worst held-out excess over the
//! bound and the median fit-time ratio against the matching peer.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::bounds::{held_out_lower_limit, DEFAULT_DELTA};
use crate::data::{read_training, train_test_split, ClassLabels, CsvOptions, Dataset, TargetKind};
use crate::error::{Error, Result};
use crate::model::CertifyOptions;
use crate::spec::{FitOptions, MethodName, MultiClass, Selection};

use super::mean_se;

/// The data sets, by the names `--datasets` takes.
pub const MULTICLASS_SETS: [&str; 3] = ["iris", "wine", "digits"];

pub use super::HELD_OUT_DELTA;

/// A multi-class method of the experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MulticlassMethod {
    /// Laplace one-vs-rest, each class's kernel the lowest bound of the nine candidates.
    LaplaceOvr,
    /// Laplace one-vs-rest, each class's `σ_f²·SE(l)` by ML-II on the grid (as scikit-learn's
    /// `ConstantKernel·RBF`).
    LaplaceOvrMl2,
    /// The softmax Laplace, the shared kernel the lowest bound of the nine candidates.
    Softmax,
    /// The softmax Laplace, the shared `σ_f²·SE(l)` by ML-II on the grid.
    SoftmaxMl2,
    /// The certified SVM one-vs-rest, the classes sharing the kernel and slack of fewest
    /// multi-class LR-LOO errors.
    SvmOvr,
}

/// Every method, in table order.
pub const MULTICLASS_METHODS: [MulticlassMethod; 5] = [
    MulticlassMethod::LaplaceOvr,
    MulticlassMethod::LaplaceOvrMl2,
    MulticlassMethod::Softmax,
    MulticlassMethod::SoftmaxMl2,
    MulticlassMethod::SvmOvr,
];

impl MulticlassMethod {
    /// The name in tables.
    pub fn name(self) -> &'static str {
        match self {
            MulticlassMethod::LaplaceOvr => "laplace one-vs-rest",
            MulticlassMethod::LaplaceOvrMl2 => "laplace one-vs-rest ml2",
            MulticlassMethod::Softmax => "softmax laplace",
            MulticlassMethod::SoftmaxMl2 => "softmax laplace ml2",
            MulticlassMethod::SvmOvr => "svm one-vs-rest",
        }
    }

    /// The method and options `pacgp fit` would take (`--method`, `--multiclass`, ...).
    pub fn options(self) -> (MethodName, FitOptions) {
        let ml2 = FitOptions {
            select: Some(Selection::Ml2),
            kernel: Some("se".into()),
            ..Default::default()
        };
        let softmax = |o: FitOptions| FitOptions {
            multiclass: Some(MultiClass::Softmax),
            ..o
        };
        let ovr = |o: FitOptions| FitOptions {
            multiclass: Some(MultiClass::OneVsRest),
            ..o
        };
        match self {
            MulticlassMethod::LaplaceOvr => (MethodName::Laplace, ovr(FitOptions::default())),
            MulticlassMethod::LaplaceOvrMl2 => (MethodName::Laplace, ovr(ml2)),
            MulticlassMethod::Softmax => (MethodName::Laplace, softmax(FitOptions::default())),
            MulticlassMethod::SoftmaxMl2 => (MethodName::Laplace, softmax(ml2)),
            MulticlassMethod::SvmOvr => (MethodName::Svm, ovr(FitOptions::default())),
        }
    }

    /// The scikit-learn estimator it is compared with: `sklearn-gpc-ovr` or `sklearn-svc`.
    pub fn peer(self) -> &'static str {
        match self {
            MulticlassMethod::SvmOvr => "sklearn-svc",
            _ => "sklearn-gpc-ovr",
        }
    }
}

/// The experiment's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassSettings {
    /// Seeds of the 80/20 splits (`0..splits`).
    pub splits: usize,
    /// Fraction of each set held out.
    pub test_fraction: f64,
    /// δ of every certificate.
    pub delta: f64,
    /// The data sets.
    pub datasets: Vec<String>,
    /// The methods.
    pub methods: Vec<MulticlassMethod>,
}

impl MulticlassSettings {
    /// Ten splits of iris and wine, five of digits (see [`MulticlassSettings::splits_of`]).
    pub fn full() -> Self {
        Self {
            splits: 10,
            test_fraction: 0.2,
            delta: DEFAULT_DELTA,
            datasets: MULTICLASS_SETS.iter().map(|s| s.to_string()).collect(),
            methods: MULTICLASS_METHODS.to_vec(),
        }
    }

    /// Two splits of iris and wine (minutes at most).
    pub fn quick() -> Self {
        Self {
            splits: 2,
            datasets: vec!["iris".into(), "wine".into()],
            ..Self::full()
        }
    }

    /// The split seeds of a data set: all of them, but at most five for digits (each of its
    /// splits fits ten classes on 1438 points).
    pub fn splits_of(&self, dataset: &str) -> Vec<u64> {
        let n = if dataset == "digits" {
            self.splits.min(5)
        } else {
            self.splits
        };
        (0..n as u64).collect()
    }
}

/// Digits splits on which scikit-learn's `GaussianProcessClassifier` runs (the first ones):
/// its one-vs-rest ML-II on 1438 points took over 16 CPU-minutes for one split on this
/// machine, so it runs on these and `SVC` on every split; the table compares each pacgp row
/// with its peer on the splits both ran.
pub const DIGITS_GPC_PEER_SPLITS: u64 = 1;

impl MulticlassSettings {
    /// Whether scikit-learn's `GaussianProcessClassifier` runs on this split (`SVC` runs on
    /// every split): all splits of iris and wine, the first [`DIGITS_GPC_PEER_SPLITS`] of
    /// digits.
    pub fn gpc_peer_on(&self, dataset: &str, seed: u64) -> bool {
        dataset != "digits" || seed < DIGITS_GPC_PEER_SPLITS
    }
}

/// A data set of the experiment, its labels read as classes.
pub fn load_multiclass_set(dir: &Path, name: &str) -> Result<(Dataset, ClassLabels)> {
    let file = match name {
        "iris" => "iris/iris.csv",
        "wine" => "wine/wine.csv",
        "digits" => "digits/digits.csv.gz",
        other => {
            return Err(Error::Unsupported(format!(
                "unknown dataset '{other}' for multiclass (use {})",
                MULTICLASS_SETS.join(", ")
            )))
        }
    };
    let t = read_training(dir.join(file), &CsvOptions::default(), TargetKind::Classes)?;
    let classes = t
        .classes
        .ok_or_else(|| Error::Unsupported("no class labels".into()))?;
    Ok((t.data, classes))
}

/// The seeded 80/20 split of a set: (train, test).
pub fn split(data: &Dataset, test_fraction: f64, seed: u64) -> Result<(Dataset, Dataset)> {
    let (train, test) = train_test_split(data.n(), test_fraction, seed)?;
    Ok((data.subset(&train), data.subset(&test)))
}

/// One method on one split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassRow {
    /// Data set.
    pub dataset: String,
    /// Method ([`MulticlassMethod::name`]).
    pub method: String,
    /// Seed of the split.
    pub seed: u64,
    /// Classes K.
    pub classes: usize,
    /// Training points N.
    pub n_train: usize,
    /// Held-out points.
    pub n_test: usize,
    /// Held-out accuracy of the predicted class.
    pub accuracy: f64,
    /// Held-out Gibbs error of the certified Gibbs classifier.
    pub test_gibbs: f64,
    /// Its one-sided lower confidence limit at level `1 − HELD_OUT_DELTA`.
    pub test_gibbs_lower: f64,
    /// The certificate's bound on the Gibbs error.
    pub bound: f64,
    /// The empirical Gibbs error on the training part (a sampled one: its sample mean).
    pub train_gibbs: f64,
    /// `KL(Q‖P)`, summed over the classes for one-vs-rest.
    pub kl: f64,
    /// The price of every choice, in nats.
    pub penalty: f64,
    /// Wall-clock seconds of the fit (certificate included).
    pub fit_seconds: f64,
}

/// Fit and score every method of `settings` on one split of a set.
pub fn multiclass_rows(
    dataset: &str,
    data: &Dataset,
    classes: &ClassLabels,
    seed: u64,
    settings: &MulticlassSettings,
) -> Result<Vec<MulticlassRow>> {
    let (train, test) = split(data, settings.test_fraction, seed)?;
    settings
        .methods
        .iter()
        .map(|&m| method_row(dataset, m, &train, &test, classes, seed, settings.delta))
        .collect()
}

/// One method fitted on `train` (timed) and scored on `test`.
fn method_row(
    dataset: &str,
    method: MulticlassMethod,
    train: &Dataset,
    test: &Dataset,
    classes: &ClassLabels,
    seed: u64,
    delta: f64,
) -> Result<MulticlassRow> {
    let (name, options) = method.options();
    let spec = FitOptions {
        delta: Some(delta),
        seed: Some(seed),
        ..options
    }
    .check(name)?;
    let t0 = Instant::now();
    let model = crate::fit::fit(&spec, train, classes.clone())?;
    let fit_seconds = t0.elapsed().as_secs_f64();
    let c = model
        .certify(
            train,
            &CertifyOptions {
                loo: crate::spec::LooRequest::None,
                ..Default::default()
            },
        )?
        .remove(0)
        .certificate;
    let e = model.evaluate(test, None)?;
    let test_gibbs = e.gibbs_risk.unwrap_or(f64::NAN);
    Ok(MulticlassRow {
        dataset: dataset.into(),
        method: method.name().into(),
        seed,
        classes: classes.k(),
        n_train: train.n(),
        n_test: test.n(),
        accuracy: 1.0 - e.error_rate.unwrap_or(f64::NAN),
        test_gibbs,
        test_gibbs_lower: held_out_lower_limit(test_gibbs, test.n(), HELD_OUT_DELTA)?,
        bound: c.bound,
        train_gibbs: c.empirical_risk,
        kl: c.kl,
        penalty: c.penalty,
        fit_seconds,
    })
}

/// A scikit-learn estimator on one split, as `scripts/multiclass_peers.py` reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerRow {
    /// Data set.
    pub dataset: String,
    /// `sklearn-gpc-ovr` or `sklearn-svc`.
    pub peer: String,
    /// Seed of the split.
    pub seed: u64,
    /// Held-out accuracy.
    pub accuracy: f64,
    /// Wall-clock seconds of `fit`.
    pub fit_seconds: f64,
    /// scikit-learn's version.
    #[serde(default)]
    pub version: String,
}

/// Means and standard errors of one method on one set, with its peer's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassSummary {
    /// Data set.
    pub dataset: String,
    /// Method.
    pub method: String,
    /// Splits.
    pub splits: usize,
    /// Mean held-out accuracy.
    pub accuracy: f64,
    /// Its standard error over the splits.
    pub accuracy_se: f64,
    /// The peer compared with.
    pub peer: String,
    /// The peer's mean accuracy on the same splits (`None` without peer rows).
    pub peer_accuracy: Option<f64>,
    /// Mean of (accuracy − the peer's) over the splits both ran.
    pub accuracy_minus_peer: Option<f64>,
    /// Median over the splits of the peer's fit time over pacgp's.
    pub fit_time_ratio: Option<f64>,
    /// Mean pacgp fit seconds.
    pub fit_seconds: f64,
    /// Mean bound.
    pub bound: f64,
    /// Its standard error.
    pub bound_se: f64,
    /// Mean held-out Gibbs error.
    pub test_gibbs: f64,
    /// Its standard error.
    pub test_gibbs_se: f64,
    /// Mean training Gibbs error.
    pub train_gibbs: f64,
    /// Mean KL.
    pub kl: f64,
    /// Mean penalty.
    pub penalty: f64,
    /// Largest held-out Gibbs error minus bound over the splits (≤ 0: every certificate held).
    pub worst_test_minus_bound: f64,
    /// Largest held-out lower limit minus bound (> 0 would contradict a certificate).
    pub worst_test_lower_minus_bound: f64,
}

/// Per (set, method): means, standard errors, the worst held-out excess over the bound, and
/// the peer's accuracy and fit-time ratio on the same splits.
pub fn summarise(rows: &[MulticlassRow], peers: &[PeerRow]) -> Vec<MulticlassSummary> {
    super::groups_in_order(rows, |r| (r.dataset.clone(), r.method.clone()))
        .into_iter()
        .map(|((dataset, method), g)| {
            let col = |f: fn(&MulticlassRow) -> f64| g.iter().map(|r| f(r)).collect::<Vec<f64>>();
            let mean = |f: fn(&MulticlassRow) -> f64| mean_se(&col(f)).0;
            let peer = MULTICLASS_METHODS
                .iter()
                .find(|m| m.name() == method)
                .map_or("", |m| m.peer())
                .to_string();
            let paired: Vec<(&MulticlassRow, &PeerRow)> = g
                .iter()
                .filter_map(|r| {
                    peers
                        .iter()
                        .find(|p| p.dataset == dataset && p.peer == peer && p.seed == r.seed)
                        .map(|p| (*r, p))
                })
                .collect();
            let (accuracy, accuracy_se) = mean_se(&col(|r| r.accuracy));
            let (bound, bound_se) = mean_se(&col(|r| r.bound));
            let (test_gibbs, test_gibbs_se) = mean_se(&col(|r| r.test_gibbs));
            let worst = |f: fn(&MulticlassRow) -> f64| super::worst(&g, |r| f(r) - r.bound);
            let some = |v: Vec<f64>| (!v.is_empty()).then(|| mean_se(&v).0);
            MulticlassSummary {
                splits: g.len(),
                accuracy,
                accuracy_se,
                peer_accuracy: some(paired.iter().map(|(_, p)| p.accuracy).collect()),
                accuracy_minus_peer: some(
                    paired
                        .iter()
                        .map(|(r, p)| r.accuracy - p.accuracy)
                        .collect(),
                ),
                fit_time_ratio: crate::metrics::median(
                    &mut paired
                        .iter()
                        .map(|(r, p)| p.fit_seconds / r.fit_seconds)
                        .collect::<Vec<_>>(),
                ),
                fit_seconds: mean(|r| r.fit_seconds),
                bound,
                bound_se,
                test_gibbs,
                test_gibbs_se,
                train_gibbs: mean(|r| r.train_gibbs),
                kl: mean(|r| r.kl),
                penalty: mean(|r| r.penalty),
                worst_test_minus_bound: worst(|r| r.test_gibbs),
                worst_test_lower_minus_bound: worst(|r| r.test_gibbs_lower),
                dataset,
                method,
                peer,
            }
        })
        .collect()
}
