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
//! Jackknife+ (Laplace, EP, IVM, pac-gpc; the SVM, naive mean field, svgp, pac-svgp and softmax
//! below; binary or one-vs-rest, each member by its own kind, `jackknife.rs`): the record
//! keeps every training label; the leave-one-out models are the stored posterior(s) with one site removed
//! ([`crate::loo::LooDowndate::sites`]), their scores of the training labels come from the
//! cavities the downdate is built from ([`crate::loo::site_cavities`]; one `L⁻¹` per
//! posterior for both, the only `O(N³)` step of `predict --set`) and their class
//! probabilities at x from the likelihood's predictive, as the model's own (one-vs-rest: the
//! members' vote). These are the leave-one-out estimates `certify` reports (LA-LOO, LOO-EP,
//! IVM's cavities: [`crate::loo::training_cavities`]; pac-gpc's cavities,
//! [`crate::loo::posterior_cavity_loo`]). A label edited in the file is refused: at a Laplace
//! mode or an EP fixed point the site's `α_i`, `∂ ln Z_i/∂μ_{−i}`, has the sign of the label
//! it was fitted on; and every site's precision must be positive and finite.
//!
//! pac-gpc's sites are trained by its bound, not by an inference method: any `(α, π > 0)` of
//! its site form is the prior times Gaussian sites with `π_i m̃_i = α_i + π_i μ_i`, so removing
//! site i is the posterior without row i's evidence (not retrained), and the downdate above
//! applies unchanged. Its `α_i` has its label's sign only where the bound's minimiser is
//! reached exactly along every direction of the Gram matrix (on Ripley's 250 training rows 119
//! of 250 have the other sign), so its labels are checked by count and range, as IVM's.
//!
//! IVM's sites cover its active set only ([`ActiveSets`]). A row in the active set is left
//! out by removing its site, as above; a row outside it never entered the posterior, so its
//! leave-one-out model is the full model, at every x (the approximation of IVM's cavity LOO:
//! a refit without an active row would select another set, which only refits measure). The
//! record then also keeps the active set's training rows and the standardised training
//! inputs, for the full model's marginals at the rows outside. ADF fits each site against the
//! marginal at its inclusion, not at the end, so IVM's `α_i` need not carry its label's sign:
//! its labels are checked by count and range, and its active rows against the inputs.
//!
//! The SVM's posterior (the prior shifted to mean `μ·f`, seed 001 §17.4) has no sites: its
//! leave-one-out model is the posterior with `f` replaced by the linear-response leave-one-out
//! function `f^{\l}` ([`SvmLooFunctions`]: eqs. 17.29 and 17.31 read at any x; the prior's
//! covariance stays), the estimate `certify` reports. Its record keeps the support vectors'
//! rows (per one-vs-rest member) and the standardised training inputs, as IVM's; `predict
//! --set` solves each SVM again on them (deterministic: the fitted solution) and refuses a
//! record whose solution is not the stored posterior (an edited label).
//!
//! Naive mean field's leave-one-out in `certify` is linear response too (eqs. 17.41–17.42),
//! not its sites' cavities, and a site may have precision 0, so no site is removed: the model
//! without i is the stored posterior with its mean shifted by the linear-response function
//! `f^{\i}(x) − f(x)` ([`crate::loo::MeanFieldLooFunctions`]; one LU of `I + KΛ` per
//! posterior) and its covariance kept (refits without i move the variance by about 1%,
//! `tests/mean_field.rs`); its class probability is the model's own (input noise included,
//! `Task::positive_probability`). At `x_i` it is `certify`'s margin. Its strengths `α_i ≥ 0`
//! carry the label's sign in the posterior's `y_i α_i`, so its labels are checked as
//! Laplace's.
//!
//! svgp's posterior (ELBO-trained; its basis the inducing inputs) has no site per row in its
//! form, but at the ELBO's stationary point every row is a rank-one Gaussian site of `q(u)`
//! (docs/math.md eq. 12.6); the model without i removes it ([`crate::loo::InducingSiteLoo`],
//! eq. 12.7), which at `x_i` is the leave-one-out `certify` reports. The sites are read at the
//! training rows, so its record keeps the standardised training inputs ([`TrainingInputs`]);
//! its labels are checked by count and range (its sites are computed from the record's labels,
//! not stored, so the posterior cannot tell an edited label). pac-svgp's `q(u)` is its bound's
//! stationary point, whose sites are the rows' Gibbs risks weighted by the bound's exchange
//! rate (eq. 12.8): the same record and removal.
//!
//! The softmax Laplace posterior has one K-dimensional site per row, removed by a rank-K
//! Woodbury update ([`crate::loo::SoftmaxSiteLoo`], docs/math.md eq. 10.1); each leave-one-out
//! model's class probabilities are the model's own predictive (its draws). The record keeps the
//! labels only (the posterior's basis is the training sample); at the mode
//! `α_ci = 1{y_i = c} − π̂_ci` is positive for the row's class only, so an edited label is
//! refused.

use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{FittedModel, Task};
use crate::conformal::sets::PredictionSets;
use crate::conformal::sets::{label_scores_into, plus_set, set_of, threshold, true_label_score};
use crate::conformal::IntervalStatement;
use crate::error::{Error, Result};
use crate::loo::LooDowndate;
use crate::posterior::{GaussianPosterior, Marginals};
use crate::spec::{IntervalMethod, IntervalSpec, SpecError, SpecOption};
use crate::svm::loo::SvmLooFunctions;

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
        /// IVM: the active sets' rows and the training inputs (module doc); `None` where
        /// every posterior's basis is the training sample.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        active: Option<ActiveSets>,
        /// svgp: the standardised training inputs its rows' sites are read at (module doc);
        /// `None` for the others.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inputs: Option<TrainingInputs>,
    },
}

/// The standardised training inputs (N×D) of a jackknife+ record whose leave-one-out is read
/// at the training rows but whose posterior's basis is not them (svgp's inducing inputs).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingInputs {
    /// The inputs, in the labels' row order.
    #[serde(with = "crate::linalg::serde_mat")]
    pub x: Mat<f64>,
}

/// The active sets of IVM's site posteriors (module doc): which training row each basis point
/// is, and the standardised training inputs the rows outside are predicted at.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActiveSets {
    /// For every site posterior (`FittedModel::site_posteriors` order), the training row of
    /// each of its basis points, in basis order.
    pub rows: Vec<Vec<usize>>,
    /// The standardised training inputs (N×D), in the labels' row order.
    #[serde(with = "crate::linalg::serde_mat")]
    pub x: Mat<f64>,
}

impl ActiveSets {
    /// Shapes against `n` training rows and the posteriors, and every active row's inputs
    /// equal to its basis point's (to the bit: both are rows of one standardised sample).
    fn validate(&self, posts: &[&GaussianPosterior], n: usize) -> std::result::Result<(), String> {
        if self.rows.len() != posts.len() || self.x.nrows() != n {
            return Err(format!(
                "active sets of {} posteriors over {} training inputs (must be {} over {n})",
                self.rows.len(),
                self.x.nrows(),
                posts.len()
            ));
        }
        for (c, (rows, post)) in self.rows.iter().zip(posts).enumerate() {
            crate::loo::cavity::basis_positions(rows, n).map_err(|e| e.to_string())?;
            let basis = post.basis.as_ref();
            if rows.len() != basis.nrows() || self.x.ncols() != basis.ncols() {
                return Err(format!(
                    "posterior {c}: {} active rows of {} inputs for a basis of {}×{}",
                    rows.len(),
                    self.x.ncols(),
                    basis.nrows(),
                    basis.ncols()
                ));
            }
            let differs =
                |b: usize| (0..basis.ncols()).any(|j| self.x[(rows[b], j)] != basis[(b, j)]);
            if let Some(b) = (0..rows.len()).find(|&b| differs(b)) {
                return Err(format!(
                    "posterior {c}: training row {} is not the input of basis point {b}",
                    rows[b]
                ));
            }
        }
        Ok(())
    }
}

impl TrainingInputs {
    /// `n` rows of every posterior's input dimension, every value finite.
    fn validate(&self, posts: &[&GaussianPosterior], n: usize) -> std::result::Result<(), String> {
        let d = self.x.ncols();
        if self.x.nrows() != n || posts.iter().any(|p| p.basis.ncols() != d) {
            return Err(format!(
                "{}×{d} training inputs for {n} rows of the posteriors' dimension",
                self.x.nrows()
            ));
        }
        if (0..d).any(|j| self.x.col(j).iter().any(|v| !v.is_finite())) {
            return Err("the training inputs have a value that is not finite".into());
        }
        Ok(())
    }
}

/// What jackknife+ sets read from a record: the training labels, and IVM's and the SVM's
/// active sets or svgp's training inputs.
pub(super) struct LooRecord<'a> {
    labels: &'a [usize],
    active: Option<&'a ActiveSets>,
    inputs: Option<&'a TrainingInputs>,
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
        if let (
            SetRecord::JackknifePlus {
                labels,
                active,
                inputs,
            },
            IntervalMethod::JackknifePlus,
        ) = (self, iv.method)
        {
            if inputs.is_some() != crate::spec::training_inputs_classifier(&spec.method) {
                return Err(format!(
                    "a jackknife+ record {} training inputs for {}: svgp's, pac-svgp's and \
                     sogp's records have them, others not",
                    if inputs.is_some() { "with" } else { "without" },
                    model.method()
                ));
            }
            if let Some(inputs) = inputs {
                check_label_range(labels, n, classes.len())?;
                return inputs.validate(&model.site_posteriors().map_err(|e| e.to_string())?, n);
            }
            if active.is_some() != crate::spec::active_set_classifier(&spec.method) {
                return Err(format!(
                    "a jackknife+ record {} active sets for {}: IVM's and the SVM's records have \
                     them, others not",
                    if active.is_some() { "with" } else { "without" },
                    model.method()
                ));
            }
            return match active {
                None => validate_labels(model, labels, n, classes.len()),
                Some(a) => {
                    check_label_range(labels, n, classes.len())?;
                    a.validate(&model.site_posteriors().map_err(|e| e.to_string())?, n)
                }
            };
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
            SetRecord::JackknifePlus {
                labels,
                active,
                inputs,
            } => {
                let loo = LooRecord {
                    labels,
                    active: active.as_ref(),
                    inputs: inputs.as_ref(),
                };
                return jackknife_sets(model, &loo, iv, x, alpha);
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

/// A jackknife+ record's labels over posteriors on the whole sample: one per training row,
/// each a class, each of the sign the posterior's site was fitted on (module doc; a site with
/// `α_i = 0` says nothing), except pac-gpc's, whose sites are trained by its bound (checked by
/// count and range). A site-form posterior's sites must each have a downdate (`π_i` positive
/// and finite, [`LooDowndate::check_sites`]; mean field's may have precision 0).
fn validate_labels(
    model: &FittedModel,
    labels: &[usize],
    n: usize,
    k: usize,
) -> std::result::Result<(), String> {
    check_label_range(labels, n, k)?;
    if let Task::Softmax { posterior, .. } = &model.task {
        // At the mode `α_ci = 1{y_i = c} − π̂_ci`: positive for the row's own class only.
        if posterior.alpha.iter().any(|a| a.len() != n) {
            return Err(format!("a softmax posterior without {n} sites per class"));
        }
        return match (0..n).find(|&i| !(posterior.alpha[labels[i]][i] > 0.0)) {
            Some(i) => Err(format!(
                "training label {i} is not the one the softmax posterior was fitted on"
            )),
            None => Ok(()),
        };
    }
    let sites = crate::spec::site_form_classifier(&model.spec.method);
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
        if sites {
            LooDowndate::check_sites(post)
                .map_err(|e| format!("posterior {c} has no site downdate for jackknife+ ({e})"))?;
        }
        if model.spec.trained_sites() {
            continue;
        }
        let positive = model.positive_class(c);
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

/// One label per training row, each a class below `k`.
fn check_label_range(labels: &[usize], n: usize, k: usize) -> std::result::Result<(), String> {
    if labels.len() != n || labels.iter().any(|&y| y >= k) {
        return Err(format!(
            "{} training labels (must be {n}, each a class index below {k})",
            labels.len()
        ));
    }
    Ok(())
}

mod jackknife;
use jackknife::jackknife_sets;

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
            Task::Classification { posterior, .. } | Task::Svm { posterior, .. } => {
                Ok(vec![posterior])
            }
            Task::OneVsRest { members, .. } => members.iter().map(|m| m.posterior()).collect(),
            _ => Err(Error::Unsupported(format!(
                "'{}' has no Gaussian-site posterior for jackknife+ sets; use split-conformal",
                self.method()
            ))),
        }
    }

    /// The binary model of each of [`Self::site_posteriors`]: the classifier itself, or every
    /// one-vs-rest member in class order.
    pub(crate) fn site_models(&self) -> Result<Vec<&FittedModel>> {
        match &self.task {
            Task::Classification { .. } | Task::Svm { .. } => Ok(vec![self]),
            Task::OneVsRest { members, .. } => Ok(members.iter().collect()),
            _ => Err(Error::Unsupported(format!(
                "'{}' has no Gaussian-site posterior for jackknife+ sets; use split-conformal",
                self.method()
            ))),
        }
    }

    /// The class that site posterior `c` takes as its positive label: a binary classifier's
    /// class 1, one-vs-rest member c's class c.
    fn positive_class(&self, c: usize) -> usize {
        match self.classes() {
            None => 1,
            Some(_) => c,
        }
    }

    /// The ±1 labels each of [`Self::site_posteriors`] was fitted on, from the training rows'
    /// class indices.
    pub(crate) fn site_signs(&self, labels: &[usize]) -> Result<Vec<Vec<f64>>> {
        let count = self.site_posteriors()?.len();
        Ok((0..count)
            .map(|c| {
                let positive = self.positive_class(c);
                labels
                    .iter()
                    .map(|&y| if y == positive { 1.0 } else { -1.0 })
                    .collect()
            })
            .collect())
    }

    /// Class probabilities (rows: points, columns: classes) from the latent marginals of each
    /// of [`Self::site_posteriors`], as the model's own: a binary model's `[1 − p, p]`
    /// (`Task::positive_probability`), a one-vs-rest model's normalised vote of its members' scores.
    pub(crate) fn latent_class_probabilities(&self, latent: Vec<Marginals>) -> Result<Mat<f64>> {
        if self.task.labels().is_some() {
            let m = latent.first().ok_or_else(|| not_a_classifier(self))?;
            // Rows in parallel: jackknife+ asks N per input, each a predictive integral.
            let p: Vec<f64> = (0..m.mean.len())
                .into_par_iter()
                .map(|i| {
                    // A binary model (`labels()`) always has one.
                    let p = self.task.positive_probability(m.mean[i], m.var[i]);
                    p.unwrap_or(f64::NAN)
                })
                .collect();
            return Ok(Mat::from_fn(p.len(), 2, |i, j| {
                if j == 1 {
                    p[i]
                } else {
                    1.0 - p[i]
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
                 for laplace, ep, ivm, pac-gpc, mean-field, svm and svgp); refit with one",
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

#[cfg(test)]
mod tests;
