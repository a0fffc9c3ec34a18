//! The prediction-set record a classifier's fit stores in the model file (`fit --intervals
//! split-conformal:F` on a classifier), validated on load, used by `predict --set` (made by
//! [`crate::fit::intervals::set_record`]; the sets' math is [`crate::conformal::sets`]).
//!
//! Split conformal, as for a regressor's intervals: the spec is refitted on the seeded part A
//! of the sample (the one [`crate::data::SampleSplit`] at F and the spec's seed), and the
//! conformity scores of part B under that model are stored with it. The model `predict`
//! otherwise uses (fitted on the whole sample, with its certificate) is untouched; the sets
//! come from part A's model, so a set need not hold the label `predict` names.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use super::{FittedModel, Task};
use crate::conformal::sets::{set_of, threshold, PredictionSets};
use crate::conformal::IntervalStatement;
use crate::error::{Error, Result};
use crate::spec::{CheckedFitSpec, IntervalMethod, IntervalSpec, SpecError, SpecOption};

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
}

impl SetRecord {
    /// Shapes and values against the spec's sets, the training size and the classes (a damaged
    /// or edited record is an error, never a panic).
    pub fn validate(
        &self,
        spec: &CheckedFitSpec,
        n: usize,
        classes: &[String],
    ) -> std::result::Result<(), String> {
        let Some(iv) = &spec.intervals else {
            return Err("the model has a prediction-set record and its spec no sets".into());
        };
        let (
            SetRecord::SplitConformal { part_a, scores },
            IntervalMethod::SplitConformal { fraction },
        ) = (self, iv.method)
        else {
            return Err(format!(
                "the prediction-set record is split-conformal and the spec says {}",
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

    /// Sets of miscoverage `alpha` at raw inputs `x`.
    pub fn sets(
        &self,
        iv: &IntervalSpec,
        x: MatRef<'_, f64>,
        alpha: f64,
    ) -> Result<PredictionSets> {
        let SetRecord::SplitConformal { part_a, scores } = self;
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
            threshold: q,
            statement: IntervalStatement::new(iv, alpha, scores.len()),
        })
    }
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
                "prediction sets are prepared when fitting (split-conformal[:F]); refit with one",
            )));
        };
        let mut sets = record.sets(iv, x, alpha)?;
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
