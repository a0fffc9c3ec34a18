//! Distribution-free prediction sets for classifiers by split conformal prediction (Vovk,
//! Gammerman & Shafer 2005; Lei et al., JASA 2018, Thm. 2.2 for the split form) or by
//! jackknife+ (below), with the LAC or APS conformity score.
//!
//! With `p̂(·|x)` the class probabilities of the model fitted on part A and `s(x, y)` a score
//! that grows as y looks less likely, the `n` scores `s_i = s(x_i, y_i)` of part B calibrate
//! the threshold `q̂ = ` the `⌈(1−α)(n+1)⌉`-th smallest `s_i` ([`super::upper_score`] at
//! [`super::rank`], the same quantile as split-conformal intervals), and the set at x is
//!
//! `C(x) = {y : s(x, y) ≤ q̂}`,
//!
//! which holds the label of a new point drawn exchangeably with part B with probability
//! `≥ 1 − α` (marginally, over part B and the new point; part A is fixed by the seed). The
//! scores:
//!
//! - **LAC** (least ambiguous set-valued classifier; Sadinle, Lei & Wasserman, JASA 2019):
//!   `s(x, y) = 1 − p̂(y|x)`, i.e. the labels with `p̂(y|x) ≥ 1 − q̂`; the smallest sets on
//!   average, possibly empty where no label is likely enough;
//! - **APS** (adaptive prediction sets; Romano, Sesia & Candès, NeurIPS 2020, eq. 5 without the
//!   randomisation `U`): `s(x, y) = Σ_{j: p̂(j|x) ≥ p̂(y|x)} p̂(j|x)`, the probability of every
//!   label at least as likely as y (ties included). Not randomised, so the sets are the
//!   conservative ones: a label is in whenever its randomised score could be ≤ q̂, and the
//!   coverage is still `≥ 1 − α` (the guarantee needs only that calibration and test scores
//!   are the same function of the point).
//!
//! **Jackknife+** (Barber, Candès, Ramdas & Tibshirani, Ann. Statist. 2021, Thm. 1; for sets
//! Romano, Sesia & Candès, NeurIPS 2020, §2.3 "CV+ and jackknife+", Thm. 2). With `p̂_{−i}`
//! the model without training point i, `E_i = s_{−i}(x_i, y_i)` its score of point i's label
//! and `s_{−i}(x, y)` its score of label y at x, the set is
//!
//! `C(x) = {y : #{i : E_i < s_{−i}(x, y)} < (1−α)(n+1)}`
//!
//! (a label is out once its score under model −i exceeds point i's own for at least
//! `⌈(1−α)(n+1)⌉` of the i; [`plus_set`]), and it holds the label of a new exchangeable
//! point with probability `≥ 1 − 2α` when each model −i is a symmetric function of the other
//! n − 1 points. Here the models −i are the classifier's approximate leave-one-out (site i
//! removed from the posterior fitted on all n, [`crate::loo::LooDowndate::sites`]), so the
//! guarantee is approximate and the measured coverage is what tells.
//!
//! Labels are indices into the model's class order (a binary model: its negative label 0,
//! its positive label 1).

use serde::{Deserialize, Serialize};

use super::{rank, upper_score};
use super::{IntervalScore, IntervalSpec};
use crate::error::{Error, Result};

/// Prediction sets at a set of inputs, with what they guarantee.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictionSets {
    /// The model's class labels, in its class order.
    pub classes: Vec<String>,
    /// Each input's set: indices into `classes`, increasing (possibly empty).
    pub sets: Vec<Vec<usize>>,
    /// The calibrated threshold `q̂` on the score (split conformal; `None` for jackknife+,
    /// whose n leave-one-out models each have their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The method, level and guarantee.
    pub statement: super::IntervalStatement,
}

impl PredictionSets {
    /// Each set's labels joined by `sep` (`predict --set` writes `|`).
    pub fn joined(&self, sep: &str) -> Vec<String> {
        self.sets
            .iter()
            .map(|s| {
                s.iter()
                    .map(|&c| self.classes[c].as_str())
                    .collect::<Vec<_>>()
                    .join(sep)
            })
            .collect()
    }
}

/// The score `s(x, y)` of every label y from the class probabilities `p` at x (module doc).
pub fn label_scores(score: IntervalScore, p: &[f64]) -> Result<Vec<f64>> {
    let mut out = vec![0.0; p.len()];
    label_scores_into(score, p, &mut out)?;
    Ok(out)
}

/// [`label_scores`] written into `out` (as long as `p`): a jackknife+ set scores every label
/// under each of its N leave-one-out models, without a vector per model.
pub fn label_scores_into(score: IntervalScore, p: &[f64], out: &mut [f64]) -> Result<()> {
    match score {
        IntervalScore::Lac => out.iter_mut().zip(p).for_each(|(o, v)| *o = 1.0 - v),
        // Σ over the labels at least as likely as y, summed in label order.
        IntervalScore::Aps => out
            .iter_mut()
            .zip(p)
            .for_each(|(o, py)| *o = p.iter().filter(|pj| *pj >= py).sum()),
        IntervalScore::Absolute | IntervalScore::GpStd => {
            return Err(Error::Unsupported(format!(
                "{score} is a regression score; a classifier's prediction sets take lac or aps"
            )))
        }
    }
    Ok(())
}

/// The score of the true label `y` (a class index) at a point with class probabilities `p`.
pub fn true_label_score(score: IntervalScore, p: &[f64], y: usize) -> Result<f64> {
    let s = label_scores(score, p)?;
    s.get(y).copied().ok_or_else(|| Error::ShapeMismatch {
        what: "class index of a calibration point",
        expected: format!("below {}", p.len()),
        found: y.to_string(),
    })
}

/// `q̂`: the `⌈(1−α)(n+1)⌉`-th smallest of the n calibration scores (an error for α outside
/// (0, 1) or below `1/(n+1)`, where the set would be every label whatever the scores).
pub fn threshold(scores: &[f64], alpha: f64) -> Result<f64> {
    Ok(upper_score(scores, rank(alpha, scores.len())?))
}

/// `{y : s(x, y) ≤ q̂}` from the class probabilities `p` at x.
pub fn set_of(score: IntervalScore, p: &[f64], q: f64) -> Result<Vec<usize>> {
    Ok(label_scores(score, p)?
        .iter()
        .enumerate()
        .filter(|(_, s)| **s <= q)
        .map(|(y, _)| y)
        .collect())
}

/// The jackknife+ set at one input (module doc): `loo[i·labels + y] = s_{−i}(x, y)` for every
/// training point i and label y (row-major, `labels` per row), `calibration[i] = E_i`; label y
/// is in unless `#{i : E_i < s_{−i}(x, y)} ≥ ⌈(1−α)(n+1)⌉` (an error for α outside (0, 1) or
/// below `1/(n+1)`, where the set would be every label).
pub fn plus_set(calibration: &[f64], loo: &[f64], labels: usize, alpha: f64) -> Result<Vec<usize>> {
    let n = calibration.len();
    let k = rank(alpha, n)?;
    if loo.len() != n * labels {
        return Err(Error::ShapeMismatch {
            what: "leave-one-out label scores of a jackknife+ set",
            expected: format!("{n} rows of {labels} labels"),
            found: format!("{} scores", loo.len()),
        });
    }
    // ⌈(1−α)(n+1)⌉ = n + 1 − k, the rank of jackknife+'s upper quantile ([`super::rank`]).
    Ok((0..labels)
        .filter(|&y| {
            let above = (0..n)
                .filter(|&i| calibration[i] < loo[i * labels + y])
                .count();
            above < n + 1 - k
        })
        .collect())
}

/// What sets of `spec` at miscoverage α from n calibration scores guarantee, in words.
pub(super) fn statement_words(
    spec: &IntervalSpec,
    alpha: f64,
    n: usize,
    guaranteed_coverage: f64,
) -> String {
    let score = match spec.score {
        IntervalScore::Lac => "LAC, 1 − p(y|x)",
        _ => "APS, not randomised",
    };
    let (points, reference) = match spec.method {
        super::IntervalMethod::JackknifePlus => (
            "training",
            "jackknife+, Barber et al. 2021, Thm. 1, and Romano et al. 2020, Thm. 2, for leave-one-out \
             models symmetric in the other points; here they are the classifier's approximate \
             leave-one-out at the fitted hyperparameters (site i removed, no refits), so the \
             guarantee is approximate",
        ),
        _ => ("calibration", "split conformal, Lei et al. 2018, Thm. 2.2"),
    };
    format!(
        "{} prediction sets ({score}) at level {:.4}: the set of a new point drawn \
         exchangeably with the {n} {points} points holds its label with probability ≥ \
         {guaranteed_coverage:.4} ({reference})",
        spec.method,
        1.0 - alpha
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LAC is one minus the probability; APS sums the labels at least as likely (ties in).
    #[test]
    fn scores_by_hand() {
        let p = [0.5, 0.2, 0.3];
        let lac = label_scores(IntervalScore::Lac, &p).unwrap();
        assert_eq!(lac, vec![0.5, 0.8, 1.0 - 0.3]);
        let aps = label_scores(IntervalScore::Aps, &p).unwrap();
        assert_eq!(aps, vec![0.5, 0.5 + 0.2 + 0.3, 0.5 + 0.3]);
        let tied = label_scores(IntervalScore::Aps, &[0.4, 0.4, 0.2]).unwrap();
        assert_eq!(tied, vec![0.8, 0.8, 0.4 + 0.4 + 0.2]);
        assert!(label_scores(IntervalScore::Absolute, &p).is_err());
        assert!(true_label_score(IntervalScore::Lac, &p, 3).is_err());
    }

    /// On scores 1..=19 the threshold at α = 0.1 is the 18th smallest, and the set keeps the
    /// labels scoring at most that.
    #[test]
    fn threshold_and_set() {
        let scores: Vec<f64> = (1..=19).rev().map(|v| f64::from(v) / 20.0).collect();
        let q = threshold(&scores, 0.1).unwrap();
        assert_eq!(q, 18.0 / 20.0);
        assert!(threshold(&scores, 0.04).is_err()); // ⌈0.96·20⌉ = 20 > 19
        assert!(threshold(&scores, 1.0).is_err());
        let set = set_of(IntervalScore::Lac, &[0.05, 0.1, 0.85], q).unwrap();
        assert_eq!(set, vec![1, 2]); // 1 − 0.05 = 0.95 > 0.9
    }

    /// With n = 9 and α = 0.2, ⌈0.8·10⌉ = 8: a label is out once 8 of the 9 leave-one-out
    /// scores exceed their point's own (strictly), counted here by hand.
    #[test]
    fn plus_set_by_hand() {
        let e = [0.5; 9];
        // Label 0: 7 of 9 above (in); label 1: 8 above (out); label 2: 9 equal (in).
        let loo: Vec<Vec<f64>> = (0..9)
            .map(|i| {
                vec![
                    if i < 7 { 0.9 } else { 0.1 },
                    if i < 8 { 0.6 } else { 0.5 },
                    0.5,
                ]
            })
            .collect();
        let loo = loo.concat();
        assert_eq!(plus_set(&e, &loo, 3, 0.2).unwrap(), vec![0, 2]);
        assert!(plus_set(&e, &loo, 3, 0.05).is_err()); // α < 1/(n+1)
        assert!(plus_set(&e[..8], &loo, 3, 0.2).is_err());
        assert!(plus_set(&e, &loo[..26], 3, 0.2).is_err());
    }
}
