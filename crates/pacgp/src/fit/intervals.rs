//! The interval record of a regression fit with prediction intervals (`fit --intervals`):
//! jackknife+ checks the closed-form leave-one-out applies (`O(N)` for an exact GP: the
//! downdate is built at `predict`), CV+ and split conformal refit the
//! spec on parts of the sample ([`crate::conformal`] for the math, [`IntervalRecord`] for what
//! is stored); and the set record of a classifier's split-conformal prediction sets
//! ([`set_record`], [`SetRecord`]). Rows with identical inputs stay together: one jackknife+
//! group, one CV+ fold.

use crate::conformal::scores;
use crate::conformal::sets::true_label_score;
use crate::data::{input_groups, Dataset, TrainingLabels};
use crate::error::{Error, Result};
use crate::loo::LooDowndate;
use crate::model::intervals::{downdate_form, regression_parts, DowndateForm};
use crate::model::{
    ActiveSets, FittedModel, FoldModel, IntervalRecord, SetRecord, StandardisedSample, Task,
    TrainingInputs,
};
use crate::spec::{CheckedFitSpec, IntervalMethod, IntervalSpec};

/// Rows of the sample in its canonical order (independent of the file's row order), so that
/// folds and splits depend on the sample and the seed only.
fn canonical(data: &Dataset, idx: &[usize]) -> Vec<usize> {
    let order = crate::data::canonical_order(data);
    idx.iter().map(|&i| order[i]).collect()
}

/// CV+'s K folds of `data` as (train, test) rows: seeded k-fold over the canonical order, then
/// every group of rows with identical inputs moved into the fold of its member that comes
/// first in that order (so a copy of a row is never fitted on when the row is scored). Without
/// ties the folds are plain k-fold's.
fn cv_folds(data: &Dataset, k: usize, seed: u64) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    let order = crate::data::canonical_order(data);
    let folds = crate::data::k_fold(data.n(), k, seed)?;
    let groups = input_groups(data.x.as_ref());
    if groups.is_empty() {
        return Ok(folds
            .into_iter()
            .map(|(train, test)| (canonical(data, &train), canonical(data, &test)))
            .collect());
    }
    // Fold of every canonical position, then of every row.
    let mut fold_at = vec![0; data.n()];
    for (f, (_, test)) in folds.iter().enumerate() {
        for &p in test {
            fold_at[p] = f;
        }
    }
    let mut position = vec![0; data.n()];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }
    for g in &groups {
        let lead = g.iter().map(|&i| position[i]).min().unwrap_or(0);
        for &i in g {
            fold_at[position[i]] = fold_at[lead];
        }
    }
    (0..k)
        .map(|f| {
            let (test, train): (Vec<usize>, Vec<usize>) =
                order.iter().partition(|&&i| fold_at[position[i]] == f);
            if test.is_empty() || train.is_empty() {
                return Err(Error::InvalidParameter {
                    name: "CV+ folds",
                    value: k as f64,
                    reason: "leave a fold empty once rows with identical inputs are kept in one \
                             fold: the sample has too few distinct inputs for K folds",
                });
            }
            Ok((train, test))
        })
        .collect()
}

/// The record of `iv` for `model`, fitted by `spec` on `data`. CV+ and split conformal
/// refit `spec` (unresolved, without intervals) on parts of `data`.
pub fn interval_record(
    spec: &CheckedFitSpec,
    iv: &IntervalSpec,
    data: &Dataset,
    model: &FittedModel,
) -> Result<IntervalRecord> {
    let refit = spec.without_intervals();
    let part = |rows: &[usize]| -> Result<FoldModel> {
        FoldModel::of(&super::fit(&refit, &data.subset(rows), None)?)
    };
    let score_of = |fold: &FoldModel, rows: &[usize]| -> Result<Vec<f64>> {
        let held = data.subset(rows);
        let (mean, sd) = fold.predict(held.x.as_ref())?;
        Ok(scores(iv.score, &held.y, &mean, &sd))
    };
    match iv.method {
        IntervalMethod::JackknifePlus => {
            let (noise, ys) = regression_parts(model)?;
            let sample = match downdate_form(&model.spec) {
                Some(DowndateForm::Exact) => {
                    let groups = input_groups(model.posterior()?.basis.as_ref());
                    LooDowndate::check_exact(model.posterior()?, noise, &groups)?;
                    None
                }
                Some(DowndateForm::Sparse { alpha_s }) => {
                    let x = model.x_scaler.transform(data.x.as_ref())?;
                    let y = ys.transform(&data.y);
                    let groups = input_groups(x.as_ref());
                    let post = &model.posterior()?;
                    LooDowndate::sparse_by_groups(post, noise, alpha_s, x.as_ref(), &y, &groups)?;
                    Some(StandardisedSample { x, y })
                }
                None => {
                    return Err(Error::Unsupported(format!(
                        "jackknife+ needs {}'s posterior fitted on the whole sample",
                        model.method()
                    )))
                }
            };
            Ok(IntervalRecord::JackknifePlus { sample })
        }
        IntervalMethod::CvPlus { folds } => {
            let n = data.n();
            let (mut fold_of, mut all) = (vec![0; n], vec![0.0; n]);
            let mut models = Vec::with_capacity(folds);
            for (f, (train, test)) in cv_folds(data, folds, spec.seed)?.into_iter().enumerate() {
                let fold = part(&train)?;
                for (&i, s) in test.iter().zip(score_of(&fold, &test)?) {
                    (fold_of[i], all[i]) = (f, s);
                }
                models.push(fold);
            }
            Ok(IntervalRecord::CvPlus {
                folds: models,
                fold_of,
                scores: all,
            })
        }
        IntervalMethod::SplitConformal { fraction } => {
            let (a, b) = crate::data::SampleSplit::new(fraction, spec.seed).parts(data)?;
            let part_a = Box::new(part(&a)?);
            let scores = score_of(&part_a, &b)?;
            Ok(IntervalRecord::SplitConformal { part_a, scores })
        }
    }
}

/// The set record of `model`, a classifier fitted by `spec` on `data` with `labels`. Split
/// conformal: the spec (without sets or holdout) refitted on the seeded part A of the one
/// sample split at F, and the conformity scores of part B's labels under it; jackknife+: the
/// training labels, checked against the model's sites and its sets' downdate
/// ([`crate::conformal::sets`]).
pub fn set_record(
    spec: &CheckedFitSpec,
    iv: &IntervalSpec,
    data: &Dataset,
    labels: TrainingLabels,
    model: &FittedModel,
) -> Result<SetRecord> {
    let k = match &labels {
        TrainingLabels::Classes(c) => Some(c.k()),
        _ => None,
    };
    let fraction = match iv.method {
        IntervalMethod::SplitConformal { fraction } => fraction,
        IntervalMethod::JackknifePlus => return jackknife_set_record(data, k, model),
        IntervalMethod::CvPlus { .. } => {
            return Err(Error::Unsupported(format!(
                "a classifier's prediction sets are split-conformal or jackknife+, not {}",
                iv.method
            )))
        }
    };
    let (a, b) = crate::data::SampleSplit::new(fraction, spec.seed).parts(data)?;
    let part_a = super::fit(&spec.without_intervals(), &data.subset(&a), labels)?;
    let held = data.subset(&b);
    let p = part_a.class_probabilities(held.x.as_ref())?;
    let scores = (0..held.n())
        .map(|i| {
            let row: Vec<f64> = (0..p.ncols()).map(|j| p[(i, j)]).collect();
            true_label_score(iv.score, &row, class_index(held.y[i], k)?)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(SetRecord::SplitConformal {
        part_a: Box::new(part_a),
        scores,
    })
}

/// A jackknife+ set record: the training labels as class indices (and IVM's and the SVM's
/// active sets, [`active_sets`]; svgp's standardised training inputs), refused (as on load)
/// when they are not the ones the model's sites were fitted on (IVM's, pac-gpc's and svgp's:
/// by count and range), or its posteriors have no downdate ([`LooDowndate::check_sites`],
/// `O(N)`: the downdate itself is built at `predict --set`).
fn jackknife_set_record(
    data: &Dataset,
    k: Option<usize>,
    model: &FittedModel,
) -> Result<SetRecord> {
    let labels = data
        .y
        .iter()
        .map(|&y| class_index(y, k))
        .collect::<Result<Vec<_>>>()?;
    // The SVM's and mean field's leave-one-out is linear response, not a site downdate.
    if crate::spec::site_form_classifier(&model.spec.method) {
        for post in model.site_posteriors()? {
            LooDowndate::check_sites(post)?;
        }
    }
    let active = match crate::spec::active_set_classifier(&model.spec.method) {
        true => Some(active_sets(data, &labels, model)?),
        false => None,
    };
    let inputs = match crate::spec::training_inputs_classifier(&model.spec.method) {
        true => Some(TrainingInputs {
            x: model.x_scaler.transform(data.x.as_ref())?,
        }),
        false => None,
    };
    let record = SetRecord::JackknifePlus {
        labels,
        active,
        inputs,
    };
    record.validate(model).map_err(|message| Error::Numerical {
        what: "jackknife+ set record",
        message,
    })?;
    Ok(record)
}

/// IVM's active sets as `certify`'s leave-one-out finds them: each binary model refitted at
/// its stored kernel on the standardised sample with the labels it was fitted on
/// ([`FittedModel::inference_method`]; IVM is deterministic, so the refit is the fit), its
/// training rows read off the refit's basis. The record's check that each row's input is its
/// basis point's refuses a refit that selected another set. `O(N·d²)` per model, as its fit.
fn active_sets(data: &Dataset, labels: &[usize], model: &FittedModel) -> Result<ActiveSets> {
    let x = model.x_scaler.transform(data.x.as_ref())?;
    let rows = model
        .site_models()?
        .into_iter()
        .zip(model.site_signs(labels)?)
        .map(|(m, y)| {
            if let Task::Svm { .. } = &m.task {
                // The support vectors' rows: the posterior's basis, in order.
                let fit = m.svm_fit(x.as_ref(), &y)?;
                return Ok((0..y.len()).filter(|&i| fit.alpha[i] > 0.0).collect());
            }
            let Task::Classification {
                posterior,
                likelihood,
                ..
            } = &m.task
            else {
                return Err(Error::Unsupported(format!(
                    "'{}' has no Gaussian-site posterior for jackknife+ sets",
                    m.method()
                )));
            };
            let fit = m
                .inference_method()?
                .fit(posterior.kernel(), likelihood, x.as_ref(), &y)?;
            Ok(fit.basis_indices.unwrap_or_else(|| (0..y.len()).collect()))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ActiveSets { rows, x })
}

/// The class index of a target: `0..K` as given for K classes, else ±1 → 0 (negative) or 1.
fn class_index(y: f64, k: Option<usize>) -> Result<usize> {
    match k {
        Some(k) if y >= 0.0 && y.fract() == 0.0 && (y as usize) < k => Ok(y as usize),
        Some(k) => Err(Error::InvalidParameter {
            name: "class index",
            value: y,
            reason: if k > 0 {
                "must be a whole number below K"
            } else {
                "no classes"
            },
        }),
        None => Ok(usize::from(y > 0.0)),
    }
}
