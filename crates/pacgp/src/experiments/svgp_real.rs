//! The sparse variational classifier on real data (`pacgp reproduce svgp-real`, issue 41
//! item 6): `svgp` (trained by its ELBO) and `pac-svgp` (by its PAC-Bayes bound) on kin40k and
//! pol thresholded at the median of their training targets, and on MNIST 2 vs 3, each fitted
//! through [`crate::fit::fit`] with the library's defaults at one M, certified on its training
//! rows and scored on the shipped test file — the table that is set beside GPflow's `SVGP`.

use std::path::Path;
use std::time::Instant;

use faer::Mat;
use serde::{Deserialize, Serialize};

use crate::data::{
    load_csv, load_csv_classification, permutation, CsvOptions, Dataset, TargetSpec, TrainingLabels,
};
use crate::error::{Error, Result};
use crate::model::{CertifyOptions, FittedModel};
use crate::spec::{FitOptions, LooRequest, Method, MethodName};

/// The data sets of the table.
pub const SVGP_REAL_SETS: [&str; 3] = ["kin40k", "pol", "mnist-2v3"];

/// The methods, by their CLI names.
pub const SVGP_REAL_METHODS: [MethodName; 2] = [MethodName::Svgp, MethodName::PacSvgp];

/// Settings of [`svgp_real_rows`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvgpRealSettings {
    /// The data sets (of [`SVGP_REAL_SETS`]).
    pub datasets: Vec<String>,
    /// Inducing inputs M.
    pub inducing: usize,
    /// Training rows kept (a seeded subsample; `None`: all).
    pub n_train: Option<usize>,
    /// Test rows kept (a seeded subsample; `None`: all).
    pub n_test: Option<usize>,
    /// The optimiser's budget (`None`: the library's default for the sample).
    pub max_iter: Option<usize>,
    /// Seed of the fits (k-means start, minibatches) and of the subsamples.
    pub seed: u64,
}

impl SvgpRealSettings {
    /// Every row of the three sets, M = 100, the library's defaults otherwise.
    pub fn full() -> Self {
        Self {
            datasets: SVGP_REAL_SETS.iter().map(|s| s.to_string()).collect(),
            inducing: 100,
            n_train: None,
            n_test: None,
            max_iter: None,
            seed: 0,
        }
    }

    /// A smoke run: 300 training and 300 test rows of each set, M = 8, 30 iterations.
    pub fn quick() -> Self {
        Self {
            inducing: 8,
            n_train: Some(300),
            n_test: Some(300),
            max_iter: Some(30),
            ..Self::full()
        }
    }
}

/// A binary task: ±1 training and test sets, the kernel the fit is given and the threshold
/// that made the labels (kin40k, pol).
#[derive(Clone, Debug)]
pub struct BinaryTask {
    /// Training rows, targets ±1.
    pub train: Dataset,
    /// Test rows, targets ±1.
    pub test: Dataset,
    /// The kernel option (`None`: the library's default).
    pub kernel: Option<String>,
    /// `y > threshold` is +1 (the median of the training targets); `None` for MNIST.
    pub threshold: Option<f64>,
}

/// A regression set with its targets replaced by `±1` for `y > t`.
fn thresholded(data: Dataset, t: f64) -> Dataset {
    let y = data
        .y
        .iter()
        .map(|&v| if v > t { 1.0 } else { -1.0 })
        .collect();
    Dataset {
        y,
        target_name: format!("{} > {t}", data.target_name),
        ..data
    }
}

/// kin40k or pol: the shipped training and test files, labelled `y > median(y_train)`.
fn regression_task(dir: &Path, name: &str) -> Result<BinaryTask> {
    let load = |part: &str| {
        load_csv(
            dir.join(format!("{name}/{name}_{part}.csv.gz")),
            &CsvOptions::default(),
        )
    };
    let (train, test) = (load("train")?, load("test")?);
    let t = crate::metrics::median(&mut train.y.clone()).ok_or(Error::Empty {
        what: "training targets",
    })?;
    Ok(BinaryTask {
        train: thresholded(train, t),
        test: thresholded(test, t),
        kernel: None,
        threshold: Some(t),
    })
}

/// The pixels of a set whose first column is `t10k_index`, without it.
fn without_index(d: &Dataset) -> Dataset {
    Dataset {
        x: Mat::from_fn(d.n(), d.d() - 1, |i, j| d.x[(i, j + 1)]),
        y: d.y.clone(),
        feature_names: d.feature_names[1..].to_vec(),
        target_name: d.target_name.clone(),
    }
}

/// MNIST 2 vs 3 (3 is +1): the pool's rows not in the official test set (`t10k_index = −1`)
/// train, the test file tests; raw pixels, an isotropic SE kernel (784 inputs).
fn mnist_task(dir: &Path) -> Result<BinaryTask> {
    let opts = CsvOptions {
        target: TargetSpec::Name("label".into()),
        ..Default::default()
    };
    let load = |f: &str| load_csv_classification(dir.join("mnist-2v3").join(f), &opts);
    let (pool, _) = load("mnist_rsvd_2v3.csv.gz")?;
    let (test, _) = load("mnist_test_2v3.csv.gz")?;
    if pool.feature_names.first().map(String::as_str) != Some("t10k_index") {
        return Err(Error::Unsupported(
            "the MNIST pool's first column must be t10k_index".into(),
        ));
    }
    let disjoint: Vec<usize> = (0..pool.n()).filter(|&i| pool.x[(i, 0)] < 0.0).collect();
    Ok(BinaryTask {
        train: without_index(&pool.subset(&disjoint)),
        test: without_index(&test),
        kernel: Some("se".into()),
        threshold: None,
    })
}

/// One set of [`SVGP_REAL_SETS`] from the data folder.
pub fn load_svgp_real_set(dir: &Path, name: &str) -> Result<BinaryTask> {
    match name {
        "kin40k" | "pol" => regression_task(dir, name),
        "mnist-2v3" => mnist_task(dir),
        other => Err(Error::Unsupported(format!(
            "unknown dataset '{other}' for svgp-real (use {})",
            SVGP_REAL_SETS.join(", ")
        ))),
    }
}

/// At most `n` rows of `d`, a seeded subsample (all of them for `None`).
fn first_of(d: &Dataset, n: Option<usize>, seed: u64) -> Dataset {
    match n {
        Some(n) if n < d.n() => d.subset(&permutation(d.n(), seed)[..n]),
        _ => d.clone(),
    }
}

/// One method on one set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvgpRealRow {
    /// Data set name.
    pub dataset: String,
    /// Method (CLI name).
    pub method: String,
    /// Kernel specification fitted.
    pub kernel: String,
    /// `y > threshold` is the +1 class (kin40k, pol); empty for MNIST.
    pub threshold: Option<f64>,
    /// Training rows.
    pub n_train: usize,
    /// Test rows.
    pub n_test: usize,
    /// Inducing inputs M.
    pub m: usize,
    /// Rows per Adam step, or none for full-batch L-BFGS.
    pub batch: Option<usize>,
    /// L-BFGS iterations or Adam steps taken.
    pub iterations: u64,
    /// `predict`'s test error (the posterior-mean classifier).
    pub test_error: f64,
    /// Mean negative log predictive probability of the test labels.
    pub test_nlp: f64,
    /// Test Gibbs error of the latent posterior.
    pub test_gibbs: f64,
    /// Training Gibbs error (the certificate's empirical risk).
    pub train_gibbs: f64,
    /// The certificate on the Gibbs classifier (δ = 0.01).
    pub gibbs_bound: f64,
    /// `predict`'s training error.
    pub train_error: f64,
    /// The derandomised certificate on `predict`'s labels.
    pub deployed_bound: f64,
    /// `KL(Q‖P)` in nats.
    pub kl: f64,
    /// Wall-clock seconds of the fit.
    pub fit_seconds: f64,
}

/// The fit options of a method on a task.
fn options(task: &BinaryTask, s: &SvgpRealSettings) -> FitOptions {
    FitOptions {
        kernel: task.kernel.clone(),
        inducing: Some(s.inducing),
        max_iter: s.max_iter,
        seed: Some(s.seed),
        ..Default::default()
    }
}

/// The kernel and batch size a fitted svgp model was trained with.
fn kernel_and_batch(model: &FittedModel) -> (String, Option<usize>) {
    match &model.spec.method {
        Method::Svgp(s) => (s.kernel.clone(), s.batch),
        _ => (String::new(), None),
    }
}

/// Fit one method on the (subsampled) task, certify it on its training rows, score the test.
fn row(
    name: &str,
    method: MethodName,
    (train, test): (&Dataset, &Dataset),
    task: &BinaryTask,
    s: &SvgpRealSettings,
) -> Result<SvgpRealRow> {
    let spec = options(task, s).check(method).map_err(Error::Spec)?;
    let t0 = Instant::now();
    let model = crate::fit::fit(&spec, train, TrainingLabels::None)?;
    let fit_seconds = t0.elapsed().as_secs_f64();
    let opts = CertifyOptions {
        loo: LooRequest::None,
        ..Default::default()
    };
    let report = model.certify(train, &opts)?.remove(0);
    let deployed = report
        .deployed
        .as_ref()
        .ok_or_else(|| Error::Unsupported(format!("'{method}' gave no deployed certificate")))?;
    let eval = model.evaluate(test, None)?;
    let (kernel, batch) = kernel_and_batch(&model);
    let c = &report.certificate;
    Ok(SvgpRealRow {
        dataset: name.into(),
        method: method.to_string(),
        kernel,
        threshold: task.threshold,
        n_train: train.n(),
        n_test: test.n(),
        m: s.inducing,
        batch,
        iterations: model.report.optimiser.as_ref().map_or(0, |o| o.iterations),
        test_error: eval.error_rate.unwrap_or(f64::NAN),
        test_nlp: eval.log_loss.unwrap_or(f64::NAN),
        test_gibbs: eval.gibbs_risk.unwrap_or(f64::NAN),
        train_gibbs: c.empirical_risk,
        gibbs_bound: c.bound,
        train_error: deployed.error_rate,
        deployed_bound: deployed.value,
        kl: c.kl,
        fit_seconds,
    })
}

/// Both methods on one loaded set, on the settings' subsamples.
pub fn svgp_real_rows(
    name: &str,
    task: &BinaryTask,
    s: &SvgpRealSettings,
) -> Result<Vec<SvgpRealRow>> {
    let train = first_of(&task.train, s.n_train, s.seed);
    let test = first_of(&task.test, s.n_test, s.seed + 1);
    SVGP_REAL_METHODS
        .iter()
        .map(|&m| row(name, m, (&train, &test), task, s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_is_strict() {
        let d = Dataset::new(Mat::zeros(3, 1), vec![0.0, 0.0, 1.0]).unwrap();
        assert_eq!(thresholded(d, 0.0).y, [-1.0, -1.0, 1.0]);
    }
}
