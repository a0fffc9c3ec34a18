//! The prediction-set record a classifier's fit stores in the model file (`fit --intervals
//! split-conformal:F|jackknife+` on a classifier), validated on load, used by `predict --set`
//! (made by [`crate::fit::intervals::set_record`]; the sets' math is
//! [`crate::conformal::sets`]).
//!
//! Split conformal, as for a regressor's intervals: the spec is refitted on the seeded part A
//! of the sample (the one [`crate::data::SampleSplit`] at F and the spec's seed), and the
//! conformity scores of part B under that model are stored with it. The model `predict`
//! otherwise uses (fitted on the whole sample, with its certificate) is untouched; the sets
//! come from part A's model, so a set need not hold the label `predict` names.
//!
//! Jackknife+ (Laplace, EP, one-vs-rest over them): the record keeps every training label;
//! the leave-one-out models are the stored posterior(s) with one site removed
//! ([`crate::loo::LooDowndate::sites`]), their scores of the training labels come from the
//! cavities the downdate is built from ([`crate::loo::site_cavities`]; one `L⁻¹` per
//! posterior for both, the only `O(N³)` step of `predict --set`) and their class
//! probabilities at x from the likelihood's predictive, as the model's own (one-vs-rest: the
//! members' vote). A label
//! edited in the file is refused: at a Laplace mode or an EP fixed point the site's `α_i`,
//! `∂ ln Z_i/∂μ_{−i}`, has the sign of the label it was fitted on.

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{FittedModel, Task};
use crate::conformal::sets::PredictionSets;
use crate::conformal::sets::{label_scores, plus_set, set_of, threshold, true_label_score};
use crate::conformal::IntervalStatement;
use crate::error::{Error, Result};
use crate::loo::LooDowndate;
use crate::posterior::{GaussianPosterior, Marginals};
use crate::spec::{IntervalMethod, IntervalSpec, SpecError, SpecOption};

/// Test inputs handled at once by jackknife+ sets (N×block leave-one-out marginals per class).
const BLOCK: usize = 128;

/// What a classifier's fit stores for its prediction sets (module doc).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum SetRecord {
    /// Split conformal.
    SplitConformal {
        /// The classifier fitted on part A (its spec: the outer one without sets).
        part_a: Box<FittedModel>,
        /// The conformity scores of part B under it, in part B's order.
        scores: Vec<f64>,
    },
    /// Jackknife+ from the classifier's approximate leave-one-out (no refits).
    JackknifePlus {
        /// Every training row's label as a class index, in the posterior's row order.
        labels: Vec<usize>,
    },
}

impl SetRecord {
    /// Shapes and values against the spec's sets, the training size and the classes (a damaged
    /// or edited record is an error, never a panic).
    pub fn validate(&self, model: &FittedModel) -> std::result::Result<(), String> {
        let (spec, n) = (&model.spec, model.n_train);
        let classes = model.class_names().map_err(|e| e.to_string())?;
        let Some(iv) = &spec.intervals else {
            return Err("the model has a prediction-set record and its spec no sets".into());
        };
        if let (SetRecord::JackknifePlus { labels }, IntervalMethod::JackknifePlus) =
            (self, iv.method)
        {
            return validate_labels(model, labels, n, classes.len());
        }
        let (
            SetRecord::SplitConformal { part_a, scores },
            IntervalMethod::SplitConformal { fraction },
        ) = (self, iv.method)
        else {
            return Err(format!(
                "the prediction-set record and the spec's {} are different methods",
                iv.method
            ));
        };
        let n_a = crate::data::part_a_size(n, fraction).min(n);
        if part_a.n_train != n_a {
            return Err(format!(
                "part A's model was fitted on {} rows; split-conformal:{fraction} of N = {n} gives {n_a}",
                part_a.n_train
            ));
        }
        // APS sums probabilities, which may pass 1 by rounding.
        if scores.len() != n - n_a
            || scores
                .iter()
                .any(|v| !(v.is_finite() && (0.0..=1.0 + 1e-9).contains(v)))
        {
            return Err(format!(
                "{} calibration scores (must be {}, each in [0, 1])",
                scores.len(),
                n - n_a
            ));
        }
        if part_a.spec.intervals.is_some() || part_a.sets.is_some() {
            return Err("part A's model has prediction sets of its own".into());
        }
        part_a
            .validate()
            .map_err(|e| format!("part A's model: {e}"))?;
        let part_classes = part_a.class_names().map_err(|e| e.to_string())?;
        if part_classes != classes {
            return Err(format!(
                "part A's model has the classes {part_classes:?}, the model {classes:?}"
            ));
        }
        Ok(())
    }

    /// Sets of miscoverage `alpha` at raw inputs `x` of `model` (the model the record is in).
    pub fn sets(
        &self,
        model: &FittedModel,
        iv: &IntervalSpec,
        x: MatRef<'_, f64>,
        alpha: f64,
    ) -> Result<PredictionSets> {
        let (part_a, scores) = match self {
            SetRecord::SplitConformal { part_a, scores } => (part_a, scores),
            SetRecord::JackknifePlus { labels } => {
                return jackknife_sets(model, labels, iv, x, alpha)
            }
        };
        let q = threshold(scores, alpha)?;
        let p = part_a.class_probabilities(x)?;
        let sets = (0..p.nrows())
            .map(|i| {
                let row: Vec<f64> = (0..p.ncols()).map(|j| p[(i, j)]).collect();
                set_of(iv.score, &row, q)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PredictionSets {
            classes: part_a.class_names()?,
            sets,
            threshold: Some(q),
            statement: IntervalStatement::new(iv, alpha, scores.len()),
        })
    }
}

/// A jackknife+ record's labels: one per training row, each a class, each of the sign the
/// posterior's site was fitted on (module doc; a site with `α_i = 0` says nothing).
fn validate_labels(
    model: &FittedModel,
    labels: &[usize],
    n: usize,
    k: usize,
) -> std::result::Result<(), String> {
    if labels.len() != n || labels.iter().any(|&y| y >= k) {
        return Err(format!(
            "{} training labels (must be {n}, each a class index below {k})",
            labels.len()
        ));
    }
    for (c, post) in model
        .site_posteriors()
        .map_err(|e| e.to_string())?
        .iter()
        .enumerate()
    {
        if post.alpha.len() != n {
            return Err(format!(
                "a posterior of {} sites for {n} training labels",
                post.alpha.len()
            ));
        }
        // Binary: class 1 is the positive label; one-vs-rest: member c's positive class is c.
        let positive = if k == 2 && model.classes().is_none() {
            1
        } else {
            c
        };
        if let Some(i) = (0..n).find(|&i| {
            let sign = if labels[i] == positive { 1.0 } else { -1.0 };
            sign * post.alpha[i] < 0.0
        }) {
            return Err(format!(
                "training label {i} is not the one the posterior's site {i} was fitted on"
            ));
        }
    }
    Ok(())
}

/// Jackknife+ sets at raw inputs (module doc; [`plus_set`]).
fn jackknife_sets(
    model: &FittedModel,
    labels: &[usize],
    iv: &IntervalSpec,
    x: MatRef<'_, f64>,
    alpha: f64,
) -> Result<PredictionSets> {
    let n = labels.len();
    crate::conformal::rank(alpha, n)?;
    // Each member's downdate and the cavities it is built from (one `L⁻¹` for both).
    let (downdates, cavities): (Vec<_>, Vec<_>) = model
        .site_posteriors()?
        .into_iter()
        .map(LooDowndate::sites_with_cavities)
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .map(|(d, c)| {
            let m = Marginals {
                mean: c.mean,
                var: c.var,
            };
            (d, m)
        })
        .unzip();
    let p_train = model.latent_class_probabilities(cavities)?;
    let calibration = (0..n)
        .map(|i| true_label_score(iv.score, &row(&p_train, i), labels[i]))
        .collect::<Result<Vec<_>>>()?;
    let xs = model.standardised_inputs(x)?;
    let mut sets = Vec::with_capacity(xs.nrows());
    for lo in (0..xs.nrows()).step_by(BLOCK) {
        let block = xs.as_ref().subrows(lo, BLOCK.min(xs.nrows() - lo));
        let nb = block.nrows();
        // Every class's leave-one-out marginals, flattened to row i·nb + j (model −i at x_j).
        let latent = downdates
            .iter()
            .map(|d| {
                let at = d.at(block)?;
                Ok(Marginals {
                    mean: (0..n * nb).map(|r| at.mean[(r / nb, r % nb)]).collect(),
                    var: (0..n * nb).map(|r| at.var[(r / nb, r % nb)]).collect(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let p = model.latent_class_probabilities(latent)?;
        // Each input's set compares its own n leave-one-out scores: independent across inputs.
        let block_sets = (0..nb)
            .into_par_iter()
            .map(|j| {
                let loo = (0..n)
                    .map(|i| label_scores(iv.score, &row(&p, i * nb + j)))
                    .collect::<Result<Vec<_>>>()?;
                plus_set(&calibration, &loo, alpha)
            })
            .collect::<Result<Vec<_>>>()?;
        sets.extend(block_sets);
    }
    Ok(PredictionSets {
        classes: model.class_names()?,
        sets,
        threshold: None,
        statement: IntervalStatement::new(iv, alpha, n),
    })
}

/// Row i of a matrix.
fn row(m: &Mat<f64>, i: usize) -> Vec<f64> {
    (0..m.ncols()).map(|j| m[(i, j)]).collect()
}

impl FittedModel {
    /// A classifier's class labels in its class order: a binary model's negative then positive
    /// label, a multi-class model's K labels.
    pub fn class_names(&self) -> Result<Vec<String>> {
        if let Some(classes) = self.classes() {
            return Ok(classes.labels.clone());
        }
        match self.task.labels() {
            Some(l) => Ok(vec![l.negative.clone(), l.positive.clone()]),
            None => Err(not_a_classifier(self)),
        }
    }

    /// A classifier's class probabilities at raw inputs (N×K, columns in [`Self::class_names`]
    /// order): `[1 − p, p]` of a binary model's `p(y = +1 | x)`, a multi-class model's
    /// normalised class probabilities.
    pub fn class_probabilities(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if self.classes().is_some() {
            return Ok(self.predict_classes(x)?.probabilities);
        }
        if self.task.labels().is_none() {
            return Err(not_a_classifier(self));
        }
        let (p, _) = self.predict_classification(x)?;
        Ok(Mat::from_fn(p.len(), 2, |i, j| {
            if j == 1 {
                p[i]
            } else {
                1.0 - p[i]
            }
        }))
    }

    /// The site-form posterior(s) a jackknife+ record downdates: a binary classifier's, or
    /// every one-vs-rest member's in class order.
    pub(crate) fn site_posteriors(&self) -> Result<Vec<&GaussianPosterior>> {
        match &self.task {
            Task::Classification { posterior, .. } => Ok(vec![posterior]),
            Task::OneVsRest { members, .. } => members.iter().map(|m| m.posterior()).collect(),
            _ => Err(Error::Unsupported(format!(
                "'{}' has no Gaussian-site posterior for jackknife+ sets; use split-conformal",
                self.method()
            ))),
        }
    }

    /// Class probabilities (rows: points, columns: classes) from the latent marginals of each
    /// of [`Self::site_posteriors`], as the model's own: a binary classifier's likelihood
    /// predictive `[1 − p, p]`, a one-vs-rest model's normalised vote of its members' scores.
    pub(crate) fn latent_class_probabilities(&self, latent: Vec<Marginals>) -> Result<Mat<f64>> {
        if let Task::Classification {
            likelihood,
            input_noise,
            ..
        } = &self.task
        {
            let m = latent.first().ok_or_else(|| not_a_classifier(self))?;
            return Ok(Mat::from_fn(m.mean.len(), 2, |i, j| {
                let p = likelihood.predictive_positive(m.mean[i], m.var[i] + input_noise);
                if j == 1 {
                    p
                } else {
                    1.0 - p
                }
            }));
        }
        self.vote_probabilities(latent)
    }

    /// Prediction sets of level `1 − alpha` at raw inputs (`predict --set`), by the method
    /// the classifier was fitted with (its spec's `intervals`; [`crate::conformal::sets`]).
    pub fn predict_sets(&self, x: MatRef<'_, f64>, alpha: f64) -> Result<PredictionSets> {
        if !self.is_classifier() {
            return Err(not_a_classifier(self));
        }
        let (Some(iv), Some(record)) = (&self.spec.intervals, &self.sets) else {
            return Err(Error::Spec(SpecError::missing(
                SpecOption::Intervals,
                self.method(),
                "prediction sets are prepared when fitting (split-conformal[:F], or jackknife+ \
                 for laplace and ep); refit with one",
            )));
        };
        let mut sets = record.sets(self, iv, x, alpha)?;
        sets.statement = sets.statement.with_duplicates(self.duplicates);
        Ok(sets)
    }
}

fn not_a_classifier(model: &FittedModel) -> Error {
    let what = match model.task {
        Task::Regression { .. } => "a regression model: prediction sets are for classifiers (a regressor's are prediction intervals)",
        _ => "not a classifier",
    };
    Error::Unsupported(format!("'{}' is {what}", model.method()))
}
