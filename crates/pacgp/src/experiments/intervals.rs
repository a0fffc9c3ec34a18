//! Prediction intervals on held-out data (`pacgp reproduce intervals`): over seeded splits of
//! boston, kin40k and pol, the empirical coverage and width of jackknife+ (absolute and
//! GP-std scores, from the closed-form leave-one-out), split conformal, CV+ and the plain
//! Gaussian band `μ ± z_{1−α/2}σ`, at α = 0.1 and 0.05, against each method's finite-sample
//! guarantee ([`crate::conformal`]); and the time of jackknife+ in closed form against
//! jackknife+ by N refits, with the largest difference between their intervals.

use std::time::Instant;

use faer::Mat;
use serde::{Deserialize, Serialize};

use super::{mean_se, split_of};
use crate::conformal::PredictionIntervals;
use crate::data::Dataset;
use crate::error::Result;
use crate::fit::fit;
use crate::model::IntervalRecord;
use crate::model::{FittedModel, Task};
use crate::regression::exact::ExactGp;
use crate::spec::{
    CheckedFitSpec, FitOptions, IntervalMethod, IntervalScore, IntervalSpec, MethodName,
};

/// The GP regressor whose intervals a data set's rows are about.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalModel {
    /// Exact GP regression, SE-ARD, ML-II.
    Gpr,
    /// VFE with M inducing inputs (k-means), SE-ARD.
    Vfe {
        /// Inducing inputs M.
        m: usize,
    },
}

impl IntervalModel {
    /// Name in the table.
    pub fn name(self) -> String {
        match self {
            IntervalModel::Gpr => "gpr".into(),
            IntervalModel::Vfe { m } => format!("vfe-{m}"),
        }
    }
}

/// One data set of the table and how its splits are drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalDataSet {
    /// `boston`, `kin40k` or `pol`.
    pub name: String,
    /// The regressor.
    pub model: IntervalModel,
    /// `None`: a seeded 80/20 split of the one file; `Some(n)`: a seeded subsample of n rows
    /// of the training file, tested on `n_test` rows of the test file.
    pub n_train: Option<usize>,
    /// Test rows per split (with a separate test file).
    pub n_test: usize,
    /// CV+ rows with this many folds (K refits per split), or none.
    pub cv_folds: Option<usize>,
}

/// Settings of the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalSettings {
    /// The data sets and models.
    pub data_sets: Vec<IntervalDataSet>,
    /// Seeded splits per data set (split seeds 0..splits).
    pub splits: usize,
    /// Miscoverage levels α.
    pub alphas: Vec<f64>,
    /// Training rows of the timing comparison (kin40k), or none.
    pub timing_n: Option<usize>,
    /// Test inputs of the timing comparison.
    pub timing_test: usize,
}

impl IntervalSettings {
    /// The table: 20 splits at α = 0.1, 0.05 of boston (gpr, CV+ with 10 folds),
    /// kin40k and pol (gpr on 1000 rows, VFE with M = 50 on 2000; 1000 test rows), and the
    /// timing at N = 2000.
    pub fn full() -> Self {
        let sub = |name: &str, model, n| IntervalDataSet {
            name: name.into(),
            model,
            n_train: Some(n),
            n_test: 1000,
            cv_folds: None,
        };
        Self {
            data_sets: vec![
                IntervalDataSet {
                    name: "boston".into(),
                    model: IntervalModel::Gpr,
                    n_train: None,
                    n_test: 0,
                    cv_folds: Some(10),
                },
                sub("kin40k", IntervalModel::Gpr, 1000),
                sub("kin40k", IntervalModel::Vfe { m: 50 }, 2000),
                sub("pol", IntervalModel::Gpr, 1000),
                sub("pol", IntervalModel::Vfe { m: 50 }, 2000),
            ],
            splits: 20,
            alphas: vec![0.1, 0.05],
            timing_n: Some(2000),
            timing_test: 100,
        }
    }

    /// Three splits; kin40k and pol on 300 rows (VFE: 600, M = 20), CV+ with 5 folds, the
    /// timing at N = 400.
    pub fn quick() -> Self {
        let mut s = Self::full();
        s.splits = 3;
        for d in &mut s.data_sets {
            d.n_test = d.n_test.min(500);
            d.cv_folds = d.cv_folds.map(|_| 5);
            (d.n_train, d.model) = match (d.n_train, d.model) {
                (Some(_), IntervalModel::Gpr) => (Some(300), IntervalModel::Gpr),
                (Some(_), IntervalModel::Vfe { .. }) => (Some(600), IntervalModel::Vfe { m: 20 }),
                other => other,
            };
        }
        s.timing_n = Some(400);
        s.timing_test = 50;
        s
    }
}

/// One method at one α on one split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalRow {
    /// Data set.
    pub data_set: String,
    /// Regressor (`gpr`, `vfe-M`).
    pub model: String,
    /// `gaussian`, `jackknife+`, `j+gp`, `split-conformal`, `cv+`.
    pub method: String,
    /// Miscoverage α.
    pub alpha: f64,
    /// Split seed.
    pub split: usize,
    /// Training rows.
    pub n_train: usize,
    /// Test rows.
    pub n_test: usize,
    /// The coverage the method guarantees (none for the Gaussian band, whose `1 − α` is
    /// nominal).
    pub guarantee: Option<f64>,
    /// Fraction of test targets inside their interval.
    pub coverage: f64,
    /// Mean interval width (target units).
    pub mean_width: f64,
    /// Seconds to compute the intervals (the fit and any refits made when fitting excluded).
    pub seconds: f64,
}

/// A method at one α over the splits of a data set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalSummary {
    /// Data set.
    pub data_set: String,
    /// Regressor.
    pub model: String,
    /// Method.
    pub method: String,
    /// Miscoverage α.
    pub alpha: f64,
    /// Number of splits.
    pub splits: usize,
    /// Guaranteed coverage (mean over splits; the same on every split of a data set).
    pub guarantee: Option<f64>,
    /// Mean test coverage.
    pub coverage: f64,
    /// Its standard error over the splits (sample sd / √splits).
    pub coverage_se: f64,
    /// `coverage ≥ guarantee − 2·se` (none without a guarantee).
    pub meets_guarantee: Option<bool>,
    /// Mean interval width.
    pub mean_width: f64,
    /// Width over the Gaussian band's at the same α.
    pub width_vs_gaussian: f64,
    /// Width over split conformal's at the same α.
    pub width_vs_split: f64,
}

/// Jackknife+ in closed form against jackknife+ by N refits at the same parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingRow {
    /// Data set.
    pub data_set: String,
    /// Training rows N.
    pub n_train: usize,
    /// Test inputs.
    pub n_test: usize,
    /// Miscoverage α of the compared intervals.
    pub alpha: f64,
    /// Closed form: the leave-one-out downdate and the intervals.
    pub closed_form_seconds: f64,
    /// N refits (exact GP at the fitted θ, σ² on N − 1 points, in parallel) and the intervals.
    pub refit_seconds: f64,
    /// `refit_seconds / closed_form_seconds`.
    pub speedup: f64,
    /// Largest difference between the two sets of interval ends (target units).
    pub max_difference: f64,
}

/// The spec of a data set's model with split-conformal intervals (the model's posterior does
/// not depend on the interval method; jackknife+ and CV+ are built on the same fit).
fn spec_of(model: IntervalModel, seed: u64) -> Result<CheckedFitSpec> {
    let (method, inducing) = match model {
        IntervalModel::Gpr => (MethodName::Gpr, None),
        IntervalModel::Vfe { m } => (MethodName::Vfe, Some(m)),
    };
    let o = FitOptions {
        seed: Some(seed),
        inducing,
        intervals: Some(IntervalMethod::SplitConformal { fraction: 0.5 }),
        ..Default::default()
    };
    Ok(o.check(method)?)
}

/// Coverage and mean width of intervals on targets `y`.
fn coverage_and_width(lower: &[f64], upper: &[f64], y: &[f64]) -> (f64, f64) {
    let n = y.len() as f64;
    let inside = (0..y.len())
        .filter(|&i| lower[i] <= y[i] && y[i] <= upper[i])
        .count();
    let width = (0..y.len()).map(|i| upper[i] - lower[i]).sum::<f64>() / n;
    (inside as f64 / n, width)
}

/// The Gaussian band `μ ± z_{1−α/2}σ` of the model's predictive (noise included).
fn gaussian_band(model: &FittedModel, x: &Mat<f64>, alpha: f64) -> Result<(Vec<f64>, Vec<f64>)> {
    let p = model.predict_regression(x.as_ref())?;
    let z = crate::metrics::normal_quantile(1.0 - alpha / 2.0);
    Ok(p.mean
        .iter()
        .zip(&p.noisy_var)
        .map(|(m, v)| (m - z * v.sqrt(), m + z * v.sqrt()))
        .unzip())
}

/// Every method at every α on every split of one data set; `progress(done, total)` after
/// each split.
pub fn intervals_on(
    s: &IntervalDataSet,
    pool: &Dataset,
    test_pool: Option<&Dataset>,
    settings: &IntervalSettings,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<IntervalRow>> {
    let mut rows = Vec::new();
    for split in 0..settings.splits {
        let (train, test) = split_of(pool, test_pool, (s.n_train, s.n_test), split)?;
        let spec = spec_of(s.model, split as u64)?;
        let model = fit(&spec, &train, None)?;
        let mut extra: Vec<(&str, IntervalSpec, IntervalRecord)> = Vec::new();
        for (name, score) in [
            ("jackknife+", IntervalScore::Absolute),
            ("j+gp", IntervalScore::GpStd),
        ] {
            let iv = IntervalSpec {
                method: IntervalMethod::JackknifePlus,
                score,
            };
            extra.push((
                name,
                iv,
                crate::fit::intervals::interval_record(&spec, &iv, &train, &model)?,
            ));
        }
        if let Some(folds) = s.cv_folds {
            let iv = IntervalSpec {
                method: IntervalMethod::CvPlus { folds },
                score: IntervalScore::Absolute,
            };
            extra.push((
                "cv+",
                iv,
                crate::fit::intervals::interval_record(&spec, &iv, &train, &model)?,
            ));
        }
        let row = |method: &str, alpha, guarantee, (lo, hi): (Vec<f64>, Vec<f64>), t0: Instant| {
            let (coverage, mean_width) = coverage_and_width(&lo, &hi, &test.y);
            IntervalRow {
                data_set: s.name.clone(),
                model: s.model.name(),
                method: method.into(),
                alpha,
                split,
                n_train: train.n(),
                n_test: test.n(),
                guarantee,
                coverage,
                mean_width,
                seconds: t0.elapsed().as_secs_f64(),
            }
        };
        let ends = |p: PredictionIntervals| (p.statement.guaranteed_coverage, (p.lower, p.upper));
        for &alpha in &settings.alphas {
            let t0 = Instant::now();
            rows.push(row(
                "gaussian",
                alpha,
                None,
                gaussian_band(&model, &test.x, alpha)?,
                t0,
            ));
            let t0 = Instant::now();
            let (g, lh) = ends(model.predict_intervals(test.x.as_ref(), alpha)?);
            rows.push(row("split-conformal", alpha, Some(g), lh, t0));
            for (name, iv, record) in &extra {
                let t0 = Instant::now();
                let (g, lh) = ends(record.intervals(iv, &model, test.x.as_ref(), alpha)?);
                rows.push(row(name, alpha, Some(g), lh, t0));
            }
        }
        progress(split + 1, settings.splits);
    }
    Ok(rows)
}

/// One summary row per data set, model, method and α, in first-seen order.
pub fn summarise(rows: &[IntervalRow]) -> Vec<IntervalSummary> {
    let groups = super::groups_in_order(rows, |r| {
        (
            r.data_set.clone(),
            r.model.clone(),
            r.method.clone(),
            r.alpha.to_bits(),
        )
    });
    let width_of = |data_set: &str, model: &str, method: &str, alpha: f64| {
        let w: Vec<f64> = rows
            .iter()
            .filter(|r| {
                r.data_set == data_set && r.model == model && r.method == method && r.alpha == alpha
            })
            .map(|r| r.mean_width)
            .collect();
        mean_se(&w).0
    };
    groups
        .into_iter()
        .map(|((data_set, model, method, _), members)| {
            let alpha = members[0].alpha;
            let (coverage, coverage_se) =
                mean_se(&members.iter().map(|r| r.coverage).collect::<Vec<_>>());
            let mean_width = mean_se(&members.iter().map(|r| r.mean_width).collect::<Vec<_>>()).0;
            let guarantee = members[0].guarantee.map(|_| {
                members.iter().filter_map(|r| r.guarantee).sum::<f64>() / members.len() as f64
            });
            IntervalSummary {
                meets_guarantee: guarantee.map(|g| coverage >= g - 2.0 * coverage_se),
                width_vs_gaussian: mean_width / width_of(&data_set, &model, "gaussian", alpha),
                width_vs_split: mean_width / width_of(&data_set, &model, "split-conformal", alpha),
                data_set,
                model,
                method,
                alpha,
                splits: members.len(),
                guarantee,
                coverage,
                coverage_se,
                mean_width,
            }
        })
        .collect()
}

/// Jackknife+ (absolute scores) of an exact GP fitted on `n` rows of `pool` at `n_test` rows
/// of `test_pool`: in closed form, and by N refits at the fitted θ and σ² (in parallel).
pub fn jackknife_timing(
    pool: &Dataset,
    test_pool: &Dataset,
    name: &str,
    n: usize,
    n_test: usize,
    alpha: f64,
) -> Result<TimingRow> {
    let (train, test) = split_of(pool, Some(test_pool), (Some(n), n_test), 0)?;
    let o = FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        ..Default::default()
    };
    let model = fit(&o.check(MethodName::Gpr)?, &train, None)?;
    let t0 = Instant::now();
    let closed = model.predict_intervals(test.x.as_ref(), alpha)?;
    let closed_form_seconds = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let (lower, upper) = refit_jackknife_plus(&model, &train, &test.x, alpha)?;
    let refit_seconds = t0.elapsed().as_secs_f64();
    let max_difference = (0..test.n())
        .map(|j| {
            (closed.lower[j] - lower[j])
                .abs()
                .max((closed.upper[j] - upper[j]).abs())
        })
        .fold(0.0, f64::max);
    Ok(TimingRow {
        data_set: name.into(),
        n_train: train.n(),
        n_test: test.n(),
        alpha,
        closed_form_seconds,
        refit_seconds,
        speedup: refit_seconds / closed_form_seconds,
        max_difference,
    })
}

/// Jackknife+ with absolute scores by N refits of an exact GP at the model's θ and σ²: what
/// MAPIE-style jackknife+ does with the hyperparameters held fixed.
fn refit_jackknife_plus(
    model: &FittedModel,
    train: &Dataset,
    test: &Mat<f64>,
    alpha: f64,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let Task::Regression {
        noise_variance,
        y_scaler,
        ..
    } = &model.task
    else {
        return Err(crate::Error::Unsupported("a regressor".into()));
    };
    let x = model.x_scaler.transform(train.x.as_ref())?;
    let y = y_scaler.transform(&train.y);
    let xs = model.x_scaler.transform(test.as_ref())?;
    let n = y.len();
    let per_point: Vec<(f64, Vec<f64>)> = {
        use rayon::prelude::*;
        (0..n)
            .into_par_iter()
            .map(|i| {
                let keep: Vec<usize> = (0..n).filter(|&j| j != i).collect();
                let xk = Mat::from_fn(n - 1, x.ncols(), |r, c| x[(keep[r], c)]);
                let yk = keep.iter().map(|&j| y[j]).collect();
                let gp = ExactGp::fit(
                    model.posterior()?.kernel().clone(),
                    *noise_variance,
                    xk,
                    yk,
                    &Default::default(),
                )?;
                let at = Mat::from_fn(1 + xs.nrows(), x.ncols(), |r, c| {
                    if r == 0 {
                        x[(i, c)]
                    } else {
                        xs[(r - 1, c)]
                    }
                });
                let mean = gp.predict(at.as_ref())?.mean;
                Ok(((y[i] - mean[0]).abs(), mean[1..].to_vec()))
            })
            .collect::<Result<_>>()?
    };
    let k = crate::conformal::rank(alpha, n)?;
    let (lo, hi) = crate::conformal::plus_intervals(
        xs.nrows(),
        &per_point.iter().map(|p| p.0).collect::<Vec<_>>(),
        k,
        |i, j| per_point[i].1[j],
        |_, _| 1.0,
    );
    Ok((
        lo.into_iter().map(|v| y_scaler.unscale_mean(v)).collect(),
        hi.into_iter().map(|v| y_scaler.unscale_mean(v)).collect(),
    ))
}
