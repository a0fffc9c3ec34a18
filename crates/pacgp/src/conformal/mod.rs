//! Distribution-free prediction intervals for every regressor: jackknife+, CV+ and split
//! conformal (Barber, Candès, Ramdas & Tibshirani, "Predictive inference with the jackknife+",
//! Ann. Statist. 49(1), 2021; Lei et al., JASA 2018), with absolute or GP-std-normalised
//! conformity scores (J+GP: Jaber et al. 2025; GPR-CP: Papadopoulos, TPAMI 2024).
//!
//! With `n` calibration scores and `k = ⌊α(n+1)⌋`, write `q̂⁻{v_i}` for the k-th smallest and
//! `q̂⁺{v_i}` for the `(n+1−k)`-th smallest of `v_1..v_n` (= the `⌈(1−α)(n+1)⌉`-th; Barber et
//! al. eq. 2). With `μ̂_i` the model that did not see point i and `R_i` its score there:
//!
//! - **jackknife+** (Barber et al. eq. 6, Thm. 1): `[q̂⁻{μ̂_{−i}(x) − R_i s_{−i}(x)},
//!   q̂⁺{μ̂_{−i}(x) + R_i s_{−i}(x)}]` with the N leave-one-out models; coverage ≥ 1 − 2α.
//!   Here the LOO models are the GP at its fitted parameters without point i, in closed form
//!   ([`crate::loo::LooDowndate`]): no refits;
//! - **CV+** (§4, Thm. 4): the same with the model refitted without i's fold (the whole fit,
//!   hyperparameters included); coverage ≥ 1 − 2α − min{2(1 − 1/K)/(n/K + 1), (1 − K/n)/(K + 1)};
//! - **split conformal**: `μ̂_A(x) ± q̂⁺{R_i} s_A(x)` with the fit refitted on part A and the
//!   scores of part B; coverage ≥ 1 − α.
//!
//! `s(x) = 1` for absolute scores `R_i = |y_i − μ̂(x_i)|`, and `s(x) = σ̂(x)` — the model's
//! predictive standard deviation of a new observation — for normalised scores
//! `R_i = |y_i − μ̂(x_i)|/σ̂(x_i)` (the guarantees hold for any score the fit computes
//! symmetrically in its training points).
//!
//! Every guarantee is over exchangeable draws of the training points and the new point. For
//! CV+ and split conformal the refitted models include the whole fit, so it holds as stated.
//! Jackknife+ here holds the hyperparameters (and a sparse model's inducing inputs) at the
//! values fitted on all N points: its guarantee is exact when they do not depend on the
//! sample, and approximate when, as usual, they were fitted on it (`pacgp reproduce intervals`
//! measures the coverage that results).
//!
//! **Ties.** Training rows with identical inputs are left out together: jackknife+'s model
//! for row i is fitted without every row whose inputs equal x_i (leave-one-group-out,
//! [`crate::loo::LooDowndate::exact_by_groups`]), and CV+ puts such rows in one fold. With a
//! copy of row i left in, the model reproduces y_i, every residual is 0 and the interval
//! collapses to the mean; grouped, a copied sample gives the intervals of its distinct rows.
//! Without ties nothing changes. The stated coverage still assumes exchangeable (independent)
//! rows, which copies are not: the statement says so when the sample's duplicated share is
//! above [`crate::data::DUPLICATE_WARN_SHARE`] ([`IntervalStatement::with_duplicates`]).
//!
//! [`sets`]: a classifier's prediction sets by split conformal with the LAC or APS score, on
//! the same ranks and quantile as the intervals here.

mod method;
pub mod sets;

pub use method::{
    IntervalMethod, IntervalScore, IntervalSpec, DEFAULT_CALIBRATION_SPLIT, DEFAULT_CV_FOLDS,
};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::Duplicates;
use crate::error::{Error, Result};

/// Prediction intervals at a set of inputs, in the target's units, with what they guarantee.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictionIntervals {
    /// Lower ends.
    pub lower: Vec<f64>,
    /// Upper ends.
    pub upper: Vec<f64>,
    /// The method, level and guarantee.
    pub statement: IntervalStatement,
}

/// What a set of prediction intervals is and guarantees.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalStatement {
    /// The method (`jackknife+`, `cv+:K`, `split-conformal:F`).
    pub method: String,
    /// The conformity score (`absolute`, `gp-std`).
    pub score: String,
    /// The level asked for, `1 − α`.
    pub level: f64,
    /// Number of calibration scores n.
    pub n_scores: usize,
    /// The finite-sample lower bound on the coverage of a new exchangeable point.
    pub guaranteed_coverage: f64,
    /// The guarantee in words, with its reference and conditions.
    pub statement: String,
    /// The training sample's duplicated rows, when their share is above
    /// [`crate::data::DUPLICATE_WARN_SHARE`] (the statement then says the guarantee assumes
    /// independent rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<Duplicates>,
}

/// The guarantee of `spec`'s intervals in words, with its reference and conditions.
fn interval_words(spec: &IntervalSpec, alpha: f64, n: usize, guaranteed_coverage: f64) -> String {
    let (reference, condition) = match spec.method {
        IntervalMethod::JackknifePlus => (
            "Barber et al. 2021, Thm. 1",
            "; the hyperparameters are held at their fitted values, which makes it exact when they do not depend on the sample and approximate when they were fitted on it",
        ),
        IntervalMethod::CvPlus { .. } => ("Barber et al. 2021, Thm. 4", ""),
        IntervalMethod::SplitConformal { .. } => ("Lei et al. 2018, Thm. 2.2", ""),
    };
    let score = match spec.score {
        IntervalScore::Absolute => "absolute residuals",
        _ => "residuals over the GP's predictive sd",
    };
    format!(
        "{} ({score}) at level {:.4}: a new point drawn exchangeably with the {n} \
         training points falls inside with probability ≥ {guaranteed_coverage:.4} \
         ({reference}{condition})",
        spec.method,
        1.0 - alpha
    )
}

impl IntervalStatement {
    /// The statement of `spec`'s intervals (or, for a classification score, sets) at
    /// miscoverage `alpha` from `n` scores.
    pub fn new(spec: &IntervalSpec, alpha: f64, n: usize) -> Self {
        let guaranteed_coverage = guarantee(spec.method, alpha, n);
        let words = match spec.score.is_classification() {
            true => sets::statement_words(spec, alpha, n, guaranteed_coverage),
            false => interval_words(spec, alpha, n, guaranteed_coverage),
        };
        Self {
            method: spec.method.to_string(),
            score: spec.score.to_string(),
            level: 1.0 - alpha,
            n_scores: n,
            guaranteed_coverage,
            statement: words,
            duplicates: None,
        }
    }

    /// The statement of CV+ intervals whose folds (`fold_of`, every training row's fold) differ
    /// in size by more than one row, which happens when rows with identical inputs are kept in
    /// one fold: Barber et al.'s Thm. 4 assumes folds of equal size (`n = Km`), so the
    /// statement gives the sizes and calls its guarantee approximate. Folds within one row of
    /// each other (plain k-fold when K does not divide n) keep the statement as it is.
    pub fn with_fold_sizes(mut self, fold_of: &[usize], folds: usize) -> Self {
        let mut size = vec![0usize; folds];
        for &f in fold_of {
            if let Some(s) = size.get_mut(f) {
                *s += 1;
            }
        }
        let (least, most) = (
            size.iter().copied().min().unwrap_or(0),
            size.iter().copied().max().unwrap_or(0),
        );
        if most > least + 1 {
            self.statement.push_str(&format!(
                "; its {folds} folds hold {least} to {most} rows (rows with identical inputs \
                 stay in one fold), while Thm. 4 assumes folds of equal size, so this \
                 guarantee is approximate"
            ));
        }
        self
    }

    /// The statement for a training sample with `duplicates`: above the warning share, it
    /// records them and says that the guarantee assumes independent rows (a copy is not an
    /// independent draw; rows with identical inputs were left out together, which keeps the
    /// interval from collapsing but cannot restore the assumption).
    pub fn with_duplicates(mut self, duplicates: Option<Duplicates>) -> Self {
        if let Some(d) = duplicates.filter(Duplicates::warns) {
            // A regressor's jackknife+ and CV+ leave rows with identical inputs out together;
            // split conformal's calibration part is the seeded split's, ties or not, and a
            // classifier's jackknife+ removes each row's site alone.
            let sets = self
                .score
                .parse::<IntervalScore>()
                .is_ok_and(IntervalScore::is_classification);
            let grouped = if self.method.starts_with("split") || sets {
                ""
            } else {
                " (rows with identical inputs were left out together)"
            };
            self.statement.push_str(&format!(
                "; but {} of the {} training rows repeat an earlier row exactly, and the guarantee \
                 assumes independent rows: it does not hold if they are copies{grouped}",
                d.rows, d.n
            ));
            self.duplicates = Some(d);
        }
        self
    }
}

/// The coverage each method guarantees at miscoverage α from n scores (module doc).
pub fn guarantee(method: IntervalMethod, alpha: f64, n: usize) -> f64 {
    match method {
        IntervalMethod::SplitConformal { .. } => 1.0 - alpha,
        IntervalMethod::JackknifePlus => 1.0 - 2.0 * alpha,
        IntervalMethod::CvPlus { folds } => {
            let (k, n) = (folds as f64, n as f64);
            let slack = (2.0 * (1.0 - 1.0 / k) / (n / k + 1.0)).min((1.0 - k / n) / (k + 1.0));
            1.0 - 2.0 * alpha - slack
        }
    }
}

/// `k = ⌊α(n+1)⌋`, the rank of the lower quantile (the upper is the `(n+1−k)`-th smallest).
/// `k = 0` would make the interval infinite, so α below `1/(n+1)` is an error.
pub fn rank(alpha: f64, n: usize) -> Result<usize> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(Error::InvalidParameter {
            name: "interval level 1 − α",
            value: 1.0 - alpha,
            reason: "must lie in (0, 1)",
        });
    }
    // α = 1 − level carries rounding of order 1e-16: a product within 1e-9 of a whole number
    // is that number.
    let k = (alpha * (n as f64 + 1.0) + 1e-9).floor() as usize;
    if k == 0 {
        return Err(Error::InvalidParameter {
            name: "interval level 1 − α",
            value: 1.0 - alpha,
            reason: "is too high for the number of calibration scores: it needs α ≥ 1/(n + 1), \
                     else the interval is the whole line (the set every label)",
        });
    }
    Ok(k.min(n))
}

/// `[q̂⁻{lo_i}, q̂⁺{hi_i}]`: the k-th smallest of `lo` and the `(n+1−k)`-th smallest of `hi`
/// (both slices are reordered).
pub fn plus_interval(lo: &mut [f64], hi: &mut [f64], k: usize) -> (f64, f64) {
    let n = lo.len();
    debug_assert!(k >= 1 && k <= n && hi.len() == n);
    let (_, lower, _) = lo.select_nth_unstable_by(k - 1, f64::total_cmp);
    let (_, upper, _) = hi.select_nth_unstable_by(n - k, f64::total_cmp);
    (*lower, *upper)
}

/// Conformity scores `|y − μ|/s` (`s` = 1 for absolute scores, the predictive sd for gp-std).
pub fn scores(score: IntervalScore, y: &[f64], mean: &[f64], sd: &[f64]) -> Vec<f64> {
    (0..y.len())
        .map(|i| {
            let r = (y[i] - mean[i]).abs();
            match score {
                IntervalScore::GpStd => r / sd[i],
                _ => r,
            }
        })
        .collect()
}

/// The interval ends at every test input j from per-point centres and spreads:
/// `centre(i, j) ∓ R_i·spread(i, j)` over the n calibration points i (jackknife+, CV+).
pub fn plus_intervals(
    n_test: usize,
    scores: &[f64],
    k: usize,
    centre: impl Fn(usize, usize) -> f64 + Sync,
    spread: impl Fn(usize, usize) -> f64 + Sync,
) -> (Vec<f64>, Vec<f64>) {
    (0..n_test)
        .into_par_iter()
        .map(|j| {
            let mut lo: Vec<f64> = (0..scores.len())
                .map(|i| centre(i, j) - scores[i] * spread(i, j))
                .collect();
            let mut hi: Vec<f64> = (0..scores.len())
                .map(|i| centre(i, j) + scores[i] * spread(i, j))
                .collect();
            plus_interval(&mut lo, &mut hi, k)
        })
        .unzip()
}

/// The `(n+1−k)`-th smallest score, `q̂⁺{R_i}` (split conformal).
pub fn upper_score(scores: &[f64], k: usize) -> f64 {
    let mut v = scores.to_vec();
    let n = v.len();
    *v.select_nth_unstable_by(n - k, f64::total_cmp).1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranks of the two quantiles: ⌊α(n+1)⌋ and ⌈(1−α)(n+1)⌉ = n + 1 − ⌊α(n+1)⌋.
    #[test]
    fn ranks() {
        assert_eq!(rank(1.0 - 0.9, 99).unwrap(), 10); // α(n+1) = 10 despite 1 − 0.9 < 0.1
        assert_eq!(rank(0.1, 98).unwrap(), 9);
        assert_eq!(rank(0.05, 19).unwrap(), 1);
        assert!(rank(0.05, 18).is_err()); // ⌈0.95·19⌉ = 19 > 18: infinite
        assert!(rank(0.0, 10).is_err());
        for n in 1..200 {
            for a in [0.01, 0.05, 0.1, 0.2, 0.5] {
                if let Ok(k) = rank(a, n) {
                    let upper = ((1.0 - a) * (n as f64 + 1.0) - 1e-9).ceil() as usize;
                    assert_eq!(n + 1 - k, upper, "n {n} α {a}");
                }
            }
        }
    }

    /// On 1..=n the quantiles are the order statistics themselves.
    #[test]
    fn order_statistics() {
        let mut lo: Vec<f64> = (1..=19).rev().map(f64::from).collect();
        let mut hi = lo.clone();
        let k = rank(0.1, 19).unwrap(); // 2
        assert_eq!(plus_interval(&mut lo, &mut hi, k), (2.0, 18.0));
        assert_eq!(upper_score(&[3.0, 1.0, 2.0, 5.0, 4.0], 1), 5.0);
    }

    /// CV+'s slack vanishes at K = n (jackknife+) and is ≈ 2K/n for n ≫ K.
    #[test]
    fn cv_plus_guarantee() {
        let a = 0.1;
        let jk = guarantee(IntervalMethod::JackknifePlus, a, 100);
        assert!((guarantee(IntervalMethod::CvPlus { folds: 100 }, a, 100) - jk).abs() < 1e-12);
        let g = guarantee(IntervalMethod::CvPlus { folds: 10 }, a, 10_000);
        assert!((jk - g - 2.0 * 9.0 / 10_010.0).abs() < 1e-12);
    }

    /// Folds within one row of each other keep CV+'s statement; folds made unequal by kept
    /// ties say their sizes and that Thm. 4's guarantee is then approximate.
    #[test]
    fn unequal_folds_are_stated() {
        let spec = IntervalSpec {
            method: IntervalMethod::CvPlus { folds: 3 },
            score: IntervalScore::Absolute,
        };
        let plain = IntervalStatement::new(&spec, 0.1, 10);
        let near = plain
            .clone()
            .with_fold_sizes(&[0, 0, 0, 0, 1, 1, 1, 2, 2, 2], 3);
        assert_eq!(near, plain);
        let uneven = plain
            .clone()
            .with_fold_sizes(&[0, 0, 0, 0, 0, 1, 1, 1, 2, 2], 3);
        assert!(uneven.statement.ends_with(
            "its 3 folds hold 2 to 5 rows (rows with identical inputs stay in one fold), while \
             Thm. 4 assumes folds of equal size, so this guarantee is approximate"
        ));
        assert_eq!(uneven.guaranteed_coverage, plain.guaranteed_coverage);
    }
}
