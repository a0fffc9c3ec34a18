//! The interval record a fit stores in the model file (`fit --intervals`): what each method
//! needs at prediction time, validated on load, used by `predict --interval` (made by
//! [`crate::fit::intervals`]; the intervals' math is [`crate::conformal`]).
//!
//! - jackknife+: nothing for exact GP regression (the posterior holds the training inputs, and
//!   the residuals follow from its weights: `y_i − μ_{−i}(x_i) = α_i/[C⁻¹]_ii`); a sparse
//!   posterior holds only Z, so its record keeps the standardised training inputs and targets
//!   ([`crate::loo::LooDowndate::sparse`] checks that they give the stored posterior);
//! - CV+: the K fold models (each the whole fit on the other folds) and every point's fold and
//!   out-of-fold score;
//! - split conformal: the model fitted on part A and the scores of part B.
//!
//! Jackknife+ and CV+ keep training rows with identical inputs together (left out as one
//! group; in one fold), so that copies cannot collapse an interval; without ties both are
//! the plain methods, to the bit.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use super::{FittedModel, Task};
use crate::conformal::{plus_intervals, rank, upper_score, IntervalStatement, PredictionIntervals};
use crate::data::{input_groups, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::loo::LooDowndate;
use crate::posterior::GaussianPosterior;
use crate::spec::{CheckedFitSpec, IntervalMethod, IntervalScore, IntervalSpec, RegressionForm};

/// Test inputs handled at once by jackknife+ (its N×block matrices of LOO means and variances).
const BLOCK: usize = 256;

/// A regressor refitted on part of the sample (a CV+ fold, split conformal's part A), with
/// what it needs to predict on raw inputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoldModel {
    /// Its input standardisation (statistics of its part).
    pub x_scaler: Standardizer,
    /// Its target standardisation.
    pub y_scaler: TargetScaler,
    /// Noise variance σ² (standardised scale).
    pub noise_variance: f64,
    /// Its posterior (standardised inputs and targets).
    pub posterior: GaussianPosterior,
}

impl FoldModel {
    /// The predicting parts of a fitted regressor.
    pub fn of(model: &FittedModel) -> Result<Self> {
        let Task::Regression {
            posterior,
            noise_variance,
            y_scaler,
            ..
        } = &model.task
        else {
            return Err(Error::Unsupported("a fold model is a regressor".into()));
        };
        Ok(Self {
            x_scaler: model.x_scaler.clone(),
            y_scaler: *y_scaler,
            noise_variance: *noise_variance,
            posterior: posterior.try_clone()?,
        })
    }

    /// Predictive mean and standard deviation of a new observation at raw inputs, in the
    /// target's units.
    pub fn predict(&self, x: MatRef<'_, f64>) -> Result<(Vec<f64>, Vec<f64>)> {
        let m = self
            .posterior
            .predict(self.x_scaler.transform(x)?.as_ref())?;
        let ys = &self.y_scaler;
        let mean = m.mean.iter().map(|v| ys.unscale_mean(*v)).collect();
        let sd = m
            .var
            .iter()
            .map(|v| ys.unscale_var(v + self.noise_variance).sqrt())
            .collect();
        Ok((mean, sd))
    }

    fn validate(&self, d: usize) -> std::result::Result<(), String> {
        let s = &self.x_scaler;
        if s.mean.len() != d || s.sd.len() != d || self.posterior.basis.ncols() != d {
            return Err(format!("a fold model does not have {d} inputs"));
        }
        let positive = |v: f64| v > 0.0 && v.is_finite();
        let inputs_ok = s.mean.iter().all(|m| m.is_finite()) && s.sd.iter().all(|v| positive(*v));
        let targets_ok = self.y_scaler.mean.is_finite() && positive(self.y_scaler.sd);
        // σ² may be 0 where known per-row variances (gpr's alpha) carry the noise.
        let noise_ok = self.noise_variance >= 0.0 && self.noise_variance.is_finite();
        if !(inputs_ok && targets_ok && noise_ok) {
            return Err("a fold model's scalers or noise are not finite and positive".into());
        }
        self.posterior.validate().map_err(|e| e.to_string())
    }
}

/// Standardised training inputs and targets, as the sparse posterior was fitted on them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StandardisedSample {
    /// Inputs (N×D).
    #[serde(with = "crate::linalg::serde_mat")]
    pub x: Mat<f64>,
    /// Targets (N).
    pub y: Vec<f64>,
}

/// What a fit stores for its prediction intervals (module doc).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum IntervalRecord {
    /// Jackknife+ from the closed-form leave-one-out.
    JackknifePlus {
        /// The standardised training sample of a sparse model (`None` for exact GPs).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sample: Option<StandardisedSample>,
    },
    /// CV+.
    CvPlus {
        /// The K fold models.
        folds: Vec<FoldModel>,
        /// The fold of every training point.
        fold_of: Vec<usize>,
        /// Every training point's out-of-fold score.
        scores: Vec<f64>,
    },
    /// Split conformal.
    SplitConformal {
        /// The model fitted on part A (boxed: the variants' sizes differ a lot).
        part_a: Box<FoldModel>,
        /// The scores of part B.
        scores: Vec<f64>,
    },
}

/// How a regressor's leave-one-out downdate is computed: exact GP, or sparse with `α_s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum DowndateForm {
    Exact,
    Sparse { alpha_s: f64 },
}

/// The downdate form of a spec's posterior (`None`: a split prior's, fitted on part B only).
pub(crate) fn downdate_form(spec: &CheckedFitSpec) -> Option<DowndateForm> {
    let home = spec.method.home();
    if home.split_prior() {
        return None;
    }
    Some(match home.regression_form()? {
        RegressionForm::Exact => DowndateForm::Exact,
        RegressionForm::Sparse(m) => DowndateForm::Sparse {
            alpha_s: m.alpha_s(),
        },
    })
}

/// Whether jackknife+ needs nothing stored for this spec's posterior: an exact GP's
/// leave-one-out follows from its weights and factor, so its intervals are there by default.
pub(crate) fn has_free_jackknife(spec: &CheckedFitSpec) -> bool {
    downdate_form(spec) == Some(DowndateForm::Exact)
}

/// The intervals of a regressor fitted without `intervals` whose jackknife+ is free
/// ([`has_free_jackknife`]): jackknife+ with the GP-normalised score `|y − μ|/σ` (J+GP),
/// computed from the stored posterior as a fit with `intervals = jackknife+, gp-std` would.
pub(crate) fn default_intervals(
    model: &FittedModel,
    x: MatRef<'_, f64>,
    alpha: f64,
) -> Result<PredictionIntervals> {
    let iv = IntervalSpec {
        method: IntervalMethod::JackknifePlus,
        score: IntervalScore::GpStd,
    };
    IntervalRecord::JackknifePlus { sample: None }.intervals(&iv, model, x, alpha)
}

/// Noise variance and target scaler of a regression model.
pub(crate) fn regression_parts(model: &FittedModel) -> Result<(f64, TargetScaler)> {
    match &model.task {
        Task::Regression {
            noise_variance,
            y_scaler,
            ..
        } => Ok((*noise_variance, *y_scaler)),
        _ => Err(Error::Unsupported(format!(
            "'{}' is a classifier: prediction intervals are for regressors",
            model.method()
        ))),
    }
}

impl IntervalRecord {
    /// Shapes and values against the spec's intervals, the training size and the inputs (a
    /// damaged or edited record is an error, never a panic).
    pub fn validate(
        &self,
        spec: &CheckedFitSpec,
        n: usize,
        d: usize,
    ) -> std::result::Result<(), String> {
        let Some(iv) = &spec.intervals else {
            return Err("the model has an interval record and its spec no intervals".into());
        };
        let scores_ok = |s: &[f64], want: usize| {
            if s.len() != want || s.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
                Err(format!(
                    "{} interval scores (must be {want}, finite and non-negative)",
                    s.len()
                ))
            } else {
                Ok(())
            }
        };
        match (self, iv.method) {
            (IntervalRecord::JackknifePlus { sample }, IntervalMethod::JackknifePlus) => {
                let sparse = matches!(downdate_form(spec), Some(DowndateForm::Sparse { .. }));
                if sample.is_some() != sparse {
                    return Err(format!(
                        "a jackknife+ record {} a training sample, and {} needs {}",
                        if sample.is_some() { "with" } else { "without" },
                        spec.method_name(),
                        if sparse { "one" } else { "none" }
                    ));
                }
                if let Some(s) = sample {
                    if s.x.nrows() != n || s.x.ncols() != d || s.y.len() != n {
                        return Err(format!(
                            "the interval record's sample is {}×{} with {} targets for N = {n}, D = {d}",
                            s.x.nrows(),
                            s.x.ncols(),
                            s.y.len()
                        ));
                    }
                    crate::data::check_finite(s.x.as_ref(), "interval record's inputs")
                        .map_err(|e| e.to_string())?;
                    if s.y.iter().any(|v| !v.is_finite()) {
                        return Err("the interval record's targets are not finite".into());
                    }
                }
                Ok(())
            }
            (
                IntervalRecord::CvPlus {
                    folds,
                    fold_of,
                    scores,
                },
                IntervalMethod::CvPlus { folds: k },
            ) => {
                if folds.len() != k || fold_of.len() != n || fold_of.iter().any(|f| *f >= k) {
                    return Err(format!(
                        "the CV+ record has {} fold models and {} fold indices for K = {k}, N = {n}",
                        folds.len(),
                        fold_of.len()
                    ));
                }
                scores_ok(scores, n)?;
                folds.iter().try_for_each(|f| f.validate(d))
            }
            (
                IntervalRecord::SplitConformal { part_a, scores },
                IntervalMethod::SplitConformal { fraction },
            ) => {
                scores_ok(scores, n - crate::data::part_a_size(n, fraction).min(n))?;
                part_a.validate(d)
            }
            (record, method) => Err(format!(
                "the interval record is {} and the spec says {method}",
                record.name()
            )),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            IntervalRecord::JackknifePlus { .. } => "jackknife+",
            IntervalRecord::CvPlus { .. } => "cv+",
            IntervalRecord::SplitConformal { .. } => "split-conformal",
        }
    }

    /// Intervals of miscoverage `alpha` at raw inputs `x`, in the target's units.
    pub fn intervals(
        &self,
        iv: &IntervalSpec,
        model: &FittedModel,
        x: MatRef<'_, f64>,
        alpha: f64,
    ) -> Result<PredictionIntervals> {
        let statement = |n: usize| IntervalStatement::new(iv, alpha, n);
        let (lower, upper, statement) = match self {
            IntervalRecord::JackknifePlus { sample } => {
                let (lo, hi, n) = jackknife_plus(iv.score, model, sample.as_ref(), x, alpha)?;
                (lo, hi, statement(n))
            }
            IntervalRecord::CvPlus {
                folds,
                fold_of,
                scores,
            } => {
                let k = rank(alpha, scores.len())?;
                let preds = folds
                    .iter()
                    .map(|f| f.predict(x))
                    .collect::<Result<Vec<_>>>()?;
                let (lo, hi) = plus_intervals(
                    x.nrows(),
                    scores,
                    k,
                    |i, j| preds[fold_of[i]].0[j],
                    |i, j| spread(iv.score, preds[fold_of[i]].1[j]),
                );
                let n = scores.len();
                (lo, hi, statement(n).with_fold_sizes(fold_of, folds.len()))
            }
            IntervalRecord::SplitConformal { part_a, scores } => {
                let q = upper_score(scores, rank(alpha, scores.len())?);
                let (mean, sd) = part_a.predict(x)?;
                let half: Vec<f64> = sd.iter().map(|s| q * spread(iv.score, *s)).collect();
                let lo = mean.iter().zip(&half).map(|(m, h)| m - h).collect();
                let hi = mean.iter().zip(&half).map(|(m, h)| m + h).collect();
                (lo, hi, statement(scores.len()))
            }
        };
        Ok(PredictionIntervals {
            lower,
            upper,
            statement: statement.with_duplicates(model.duplicates),
        })
    }
}

/// The factor a score is multiplied by: 1 (absolute) or the predictive sd (gp-std).
fn spread(score: IntervalScore, sd: f64) -> f64 {
    match score {
        IntervalScore::GpStd => sd,
        _ => 1.0,
    }
}

/// Jackknife+ on the standardised scale from the closed-form LOO, mapped back to target units
/// (an increasing map, so the order statistics carry over). Training rows with identical
/// inputs are left out together ([`LooDowndate::exact_by_groups`]): with a copy of row i left
/// in, `μ_{−i}` would reproduce `y_i` and the interval collapse.
fn jackknife_plus(
    score: IntervalScore,
    model: &FittedModel,
    sample: Option<&StandardisedSample>,
    x: MatRef<'_, f64>,
    alpha: f64,
) -> Result<(Vec<f64>, Vec<f64>, usize)> {
    let (noise, ys) = regression_parts(model)?;
    let post = model.posterior()?;
    let loo = match (downdate_form(&model.spec), sample) {
        (Some(DowndateForm::Exact), None) => {
            let groups = input_groups(post.basis.as_ref());
            LooDowndate::exact_by_groups(post, noise, &groups)?
        }
        (Some(DowndateForm::Sparse { alpha_s }), Some(s)) => {
            let groups = input_groups(s.x.as_ref());
            LooDowndate::sparse_by_groups(post, noise, alpha_s, s.x.as_ref(), &s.y, &groups)?
        }
        _ => {
            return Err(Error::ModelMismatch {
                part: "interval record".into(),
                reason: format!(
                    "its jackknife+ sample does not fit {}'s posterior",
                    model.method()
                ),
            })
        }
    };
    let t = &loo.training;
    let r: Vec<f64> = (0..loo.n())
        .map(|i| t.residual[i].abs() / spread(score, t.var[i].sqrt()))
        .collect();
    let k = rank(alpha, r.len())?;
    let xs = crate::data::check_finite(x, "inputs").and_then(|_| model.x_scaler.transform(x))?;
    let (mut lower, mut upper) = (Vec::with_capacity(x.nrows()), Vec::with_capacity(x.nrows()));
    for start in (0..xs.nrows()).step_by(BLOCK) {
        let rows = BLOCK.min(xs.nrows() - start);
        let at = loo.at(xs.subrows(start, rows))?;
        let (lo, hi) = plus_intervals(
            rows,
            &r,
            k,
            |i, j| at.mean[(i, j)],
            |i, j| spread(score, at.var[(i, j)].sqrt()),
        );
        lower.extend(lo.into_iter().map(|v| ys.unscale_mean(v)));
        upper.extend(hi.into_iter().map(|v| ys.unscale_mean(v)));
    }
    Ok((lower, upper, r.len()))
}
