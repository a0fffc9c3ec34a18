//! How prediction intervals and sets are made, as a fit's spec names them: the method
//! (jackknife+, CV+, split conformal), the conformity score and their defaults. The spec
//! re-exports these types; their words (`cv+:K`, `gp-std`, …) are parsed in
//! `spec/values.rs` with every other option's.

use serde::{Deserialize, Serialize};

/// A regressor's prediction intervals or a classifier's prediction sets: how they are made and
/// by which conformity score ([`crate::conformal`]); the level is chosen when predicting.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalSpec {
    /// jackknife+, CV+ or split conformal.
    pub method: IntervalMethod,
    /// The conformity score.
    pub score: IntervalScore,
}

/// How a regressor's distribution-free prediction intervals, or a classifier's prediction
/// sets (split conformal only), are made ([`crate::conformal`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Jackknife+ from the closed-form leave-one-out at the fitted parameters (no refits).
    JackknifePlus,
    /// CV+: the fit refitted without each of K folds.
    CvPlus {
        /// Number of folds K ≥ 2.
        folds: usize,
    },
    /// Split conformal: the fit refitted on part A, calibrated on part B.
    SplitConformal {
        /// Fraction of the sample in part A (the proper training part).
        fraction: f64,
    },
}

/// Folds of `cv+` when none are given.
pub const DEFAULT_CV_FOLDS: usize = 10;
/// Fraction of `split-conformal`'s proper training part when none is given.
pub const DEFAULT_CALIBRATION_SPLIT: f64 = 0.5;

/// The conformity score of prediction intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalScore {
    /// `|y − μ(x)|`: intervals of one width around the (leave-one-out) means.
    Absolute,
    /// `|y − μ(x)|/σ(x)` with σ the model's predictive standard deviation: intervals as wide
    /// as the GP says it is unsure (J+GP).
    GpStd,
    /// A classifier's least ambiguous set-valued score `1 − p̂(y|x)` (LAC; Sadinle, Lei &
    /// Wasserman 2019): the smallest sets on average.
    Lac,
    /// A classifier's adaptive prediction sets score, the total probability of the labels at
    /// least as likely as y (APS; Romano, Sesia & Candès 2020), not randomised: sets that grow
    /// where the model is unsure.
    Aps,
}

impl IntervalScore {
    /// Whether the score is a classifier's (prediction sets) rather than a regressor's
    /// (prediction intervals).
    pub fn is_classification(self) -> bool {
        matches!(self, IntervalScore::Lac | IntervalScore::Aps)
    }
}
