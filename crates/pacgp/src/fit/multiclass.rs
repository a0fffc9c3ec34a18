//! The multi-class pipelines: K ≥ 2 classes by one-vs-rest over any binary classifier spec
//! (each class fitted against the rest through [`super::fit`] itself, so every binary method
//! and its menus come as they are), or by the softmax Laplace approximation
//! ([`crate::inference::softmax`]). Both end as one model whose certificate is on the
//! multi-class 0-1 loss of the Gibbs classifier `argmax_k f_k(x)`, with the KL and the
//! prices of every class added up (`crate::model::multiclass`).

use rayon::prelude::*;

use crate::bounds::{ConfidenceTerm, HyperGrid};
use crate::data::{check_class_indices, one_vs_rest_signs, ClassLabels, Dataset, Standardizer};
use crate::error::{Error, Result};
use crate::inference::softmax::evidence::{fit_softmax_ml2, softmax_mode, SoftmaxMlConfig};
use crate::inference::softmax::{class_indices, SoftmaxConfig, SoftmaxPosterior};
use crate::kernel::{start, Kernel};
use crate::loo::LooMode;
use crate::memory::MemoryLimit;
use crate::model::softmax::softmax_certificate;
use crate::model::{CertifyOptions, FitReport, FittedModel, Task};
use crate::optim::OptimReport;
use crate::select::Menu;
use crate::spec::{CheckedFitSpec, ClassifierHypers, FitSpec, SoftmaxSpec};

use crate::plan::{shared_svm_menu, softmax_kernel_menu};

/// The seed of the draws that compare the candidate kernels of a softmax fit: the spec's seed
/// plus this, so that the certificate's own draws (the spec's seed) are independent of the
/// choice they certify.
pub const SOFTMAX_SELECTION_SEED_OFFSET: u64 = 0x005e_1ec7;

/// `one-vs-rest`: for every class k the spec's binary method on the sample relabelled
/// +1 for k and −1 for the rest, each through the one entry point; the model holds the K
/// binary models and its fit report the multi-class certificate's bound.
pub fn one_vs_rest(
    spec: &CheckedFitSpec,
    train: &Dataset,
    classes: ClassLabels,
    limit: MemoryLimit,
) -> Result<FittedModel> {
    let member_spec = spec
        .one_vs_rest_member()
        .ok_or_else(|| Error::Unsupported("not a one-vs-rest spec".into()))?;
    check_class_indices(&train.y, classes.k())?;
    let shared = shared_svm_menu(&member_spec, train.d());
    let (members, mut notes) = if shared.len() > 1 {
        shared_svm_members(spec, &shared, train, &classes, limit)?
    } else {
        (
            fit_members(&member_spec.check()?, train, &classes, limit)?,
            Vec::new(),
        )
    };
    assemble_one_vs_rest(spec, train, classes, members, &mut notes)
}

/// Every class against the rest by the binary spec `member` within `limit`,
/// [`members_at_once`] of them in parallel. Each fit is independent and its result does not
/// depend on the thread it runs on, so the members, and the error of the first class that
/// fails, are those of fitting the classes one after another; the fit's stop signal reaches
/// every class.
fn fit_members(
    member: &CheckedFitSpec,
    train: &Dataset,
    classes: &ClassLabels,
    limit: MemoryLimit,
) -> Result<Vec<FittedModel>> {
    let watch = crate::optim::stop::current();
    let fit_class = |c: usize| {
        let data = Dataset {
            y: one_vs_rest_signs(&train.y, c),
            ..train.clone()
        };
        crate::optim::stop::within(watch.as_ref(), || {
            super::fit_within(member, &data, classes.one_vs_rest(c), limit)
        })
    };
    let order: Vec<usize> = (0..classes.k()).collect();
    let mut members = Vec::with_capacity(classes.k());
    for group in order.chunks(members_at_once(member, train, classes.k(), limit)) {
        let fitted: Vec<Result<FittedModel>> = group.par_iter().map(|&c| fit_class(c)).collect();
        for model in fitted {
            members.push(model?);
        }
    }
    Ok(members)
}

/// How many of K members (one-vs-rest classes, multi-output outputs) are fitted at once: one
/// per worker thread up to K, fewer where that many members' arrays
/// ([`crate::cost::footprint`], each holds its own) would not fit in `limit` (the memory
/// available now, or the user's), so that fitting members in parallel never needs memory a
/// fit of one member at a time would not.
pub(super) fn members_at_once(
    member: &CheckedFitSpec,
    train: &Dataset,
    k: usize,
    limit: MemoryLimit,
) -> usize {
    let threads = rayon::current_num_threads().clamp(1, k.max(1));
    let Some((bytes, _)) = limit.resolve() else {
        return threads;
    };
    let member_bytes = crate::cost::footprint(&member.method, 2)
        .bytes(train.n(), train.d())
        .max(1);
    (bytes / member_bytes).clamp(1, threads as u64) as usize
}

/// One-vs-rest SVMs sharing one (kernel, slack) candidate of the menu, the one of fewest
/// multi-class linear-response leave-one-out errors (`argmax_k f_k^{−i}(x_i) ≠ y_i`, the
/// first on ties): the choice is made for the multi-class error the classifier is used for
/// (each class's own binary LOO, noisy on small samples, chose a different kernel per class)
/// and priced once, `ln |menu|`, instead of once per class. Each class still chooses its μ on
/// the grid. A candidate some class fails on is skipped with a note (still priced).
fn shared_svm_members(
    spec: &CheckedFitSpec,
    menu: &Menu<FitSpec>,
    train: &Dataset,
    classes: &ClassLabels,
    limit: MemoryLimit,
) -> Result<(Vec<FittedModel>, Vec<String>)> {
    let candidates = &menu.items;
    // A candidate that fails to fit, or whose leave-one-out fails (e.g. a singular margin-SV
    // matrix), is skipped with a note and still priced.
    let (chosen, skipped) = menu.by_bound_par_skipping(|candidate, _| {
        let members = fit_members(&candidate.clone().check()?, train, classes, limit)?;
        let mut notes_unused = Vec::new();
        let model = assemble_parts(spec, train, classes.clone(), members, &mut notes_unused);
        let xs = model.x_scaler.transform(train.x.as_ref())?;
        let (approx, _) = model.one_vs_rest_loo(xs.as_ref(), &train.y, LooMode::Approx)?;
        Ok((model, approx.map_or(f64::INFINITY, |(e, _)| e)))
    })?;
    let mut notes: Vec<String> = skipped
        .into_iter()
        .map(|(i, e)| {
            format!(
                "SVM candidate {:?} skipped: {e} (still priced in the menu's ln |candidates|)",
                candidates[i].method
            )
        })
        .collect();
    notes.push(format!(
        "the classes share the SVM kernel and slack of fewest multi-class LR-LOO errors ({:.4}) among the {} candidates",
        chosen.score,
        candidates.len()
    ));
    let Task::OneVsRest { members, .. } = chosen.value.task else {
        unreachable!("assembled as one-vs-rest")
    };
    Ok((members, notes))
}

/// The one-vs-rest model of fitted members, certified (its bound the fit's objective).
fn assemble_one_vs_rest(
    spec: &CheckedFitSpec,
    train: &Dataset,
    classes: ClassLabels,
    members: Vec<FittedModel>,
    notes: &mut Vec<String>,
) -> Result<FittedModel> {
    let mut model = assemble_parts(spec, train, classes, members, notes);
    certified_objective(&mut model, train)?;
    Ok(model)
}

/// The one-vs-rest model of fitted members, their notes prefixed by their class: the
/// members' inputs, scaler and sample size, and the digest of the training sample where it
/// was in this process.
fn assemble_parts(
    spec: &CheckedFitSpec,
    train: &Dataset,
    classes: ClassLabels,
    members: Vec<FittedModel>,
    notes: &mut Vec<String>,
) -> FittedModel {
    let digest = Some(crate::data::sample_digest(train));
    members_model(spec, classes, members, notes, digest)
}

fn members_model(
    spec: &CheckedFitSpec,
    classes: ClassLabels,
    members: Vec<FittedModel>,
    notes: &mut Vec<String>,
    training_digest: Option<String>,
) -> FittedModel {
    for (c, m) in members.iter().enumerate() {
        notes.extend(
            m.report
                .notes
                .iter()
                .map(|n| format!("class '{}' against the rest: {n}", classes.decode(c))),
        );
    }
    let first = &members[0];
    let jitter_used = members
        .iter()
        .map(|m| m.report.jitter_used)
        .fold(0.0, f64::max);
    FittedModel {
        format: crate::model::FORMAT.into(),
        spec: spec.clone(),
        input_coding: Default::default(),
        feature_names: first.feature_names.clone(),
        target_name: first.target_name.clone(),
        n_train: first.n_train,
        holdout: None,
        duplicates: None,
        training_digest,
        x_scaler: first.x_scaler.clone(),
        task: Task::OneVsRest { classes, members },
        report: FitReport {
            jitter_used,
            notes: std::mem::take(notes),
            ..Default::default()
        },
        sets: None,
        svm_solution: None,
    }
}

/// The one-vs-rest model of K binary models fitted outside the in-process pipeline (over data
/// shards), member c trained on class c against the rest of `classes` by the binary `member`
/// spec, all on one sample and scaler: the model an in-process one-vs-rest fit writes for
/// them (each member relabelled "not c" / c, as in process), without the sample's digest or
/// the certificate as its objective (`certify` on the training sample computes it).
pub fn one_vs_rest_from_members(
    member: &CheckedFitSpec,
    classes: ClassLabels,
    mut members: Vec<FittedModel>,
) -> Result<FittedModel> {
    classes.check()?;
    if members.len() != classes.k() {
        return Err(Error::ShapeMismatch {
            what: "one-vs-rest members",
            expected: format!("one per class ({})", classes.k()),
            found: format!("{}", members.len()),
        });
    }
    let first = &members[0];
    let same = |m: &FittedModel| {
        m.spec == *member
            && m.n_train == first.n_train
            && m.x_scaler == first.x_scaler
            && m.feature_names == first.feature_names
    };
    if !members.iter().all(same) {
        return Err(Error::Unsupported(
            "one-vs-rest members must share the binary spec, the sample and the input scaler"
                .into(),
        ));
    }
    for (c, m) in members.iter_mut().enumerate() {
        match &mut m.task {
            Task::Classification { labels, .. } => *labels = classes.one_vs_rest(c),
            _ => {
                return Err(Error::Unsupported(
                    "one-vs-rest members are binary classifiers".into(),
                ))
            }
        }
    }
    let spec = FitSpec::from(member.clone()).into_one_vs_rest().check()?;
    let mut notes = vec!["one-vs-rest over data shards: the sample's digest is not stored".into()];
    let mut model = members_model(&spec, classes, members, &mut notes, None);
    model.report.objective_name = "none (certify computes the multi-class certificate)".into();
    Ok(model)
}

/// The model's multi-class certificate on its training sample as the fit report's
/// objective (none for an SVM with a free bias, which has no certificate).
fn certified_objective(model: &mut FittedModel, train: &Dataset) -> Result<()> {
    let opts = CertifyOptions {
        loo: crate::spec::LooRequest::None,
        ..Default::default()
    };
    match model.certify_fit_rows(train, &opts) {
        Ok(c) => {
            model.report.objective = c.first().map(|r| r.certificate.bound);
            model.report.objective_name = "pac_bayes_bound_multiclass_gibbs_error".into();
            Ok(())
        }
        Err(Error::Unsupported(why)) => {
            model.report.objective_name = "none (no certificate)".into();
            model.report.notes.push(why);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// `laplace` with `multiclass softmax`: the shared kernel by ML-II snapped onto the grid
/// (`T·ln 1201`; on more than [`start::WIDE_INPUTS`] inputs from the median distance, stopped
/// by the stall rule, as gpr's: its objective is a log evidence summed over the rows), or the
/// candidate kernel of the lowest certificate (`ln 9`; the candidates are compared with draws
/// independent of the certificate's); the model holds the softmax posterior and its fit
/// report the certificate's bound.
pub fn softmax(
    spec: &CheckedFitSpec,
    s: &SoftmaxSpec,
    train: &Dataset,
    classes: ClassLabels,
) -> Result<FittedModel> {
    check_class_indices(&train.y, classes.k())?;
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let y = class_indices(&train.y, classes.k())?;
    let (kernel, mode, optimiser, notes) = match &s.hypers {
        ClassifierHypers::Grid { kernel } => {
            let mut cfg = SoftmaxMlConfig {
                snap: Some(HyperGrid::default()),
                ..Default::default()
            };
            cfg.lbfgs.stall = start::wide_stall(x.ncols());
            let (k0, note) = start::wide_start_noted(
                Kernel::from_spec(kernel, train.d())?,
                x.as_ref(),
                spec.seed,
                "leaves the evidence flat",
            );
            let (k, mode, report) = fit_softmax_ml2(&k0, x.as_ref(), &y, classes.k(), &cfg)?;
            (k, mode, Some(report), note.into_iter().collect())
        }
        ClassifierHypers::Candidates => {
            let (k, mode) = softmax_by_bound(spec, x.as_ref(), &train.y, &y, classes.k())?;
            (k, mode, None::<OptimReport>, Vec::new())
        }
        ClassifierHypers::Split(_) => {
            return Err(Error::Unsupported(
                "the softmax Laplace has no split prior".into(),
            ))
        }
    };
    let inference = mode.report.clone();
    let posterior = SoftmaxPosterior::from_mode(&kernel, x.as_ref(), mode);
    let report = FitReport {
        jitter_used: posterior.jitter(),
        inference: Some(inference),
        optimiser,
        notes,
        ..Default::default()
    };
    let task = Task::Softmax {
        classes,
        posterior: Box::new(posterior),
        sampling_seed: Some(crate::model::softmax::softmax_sampling_seed(train)),
    };
    let mut model = FittedModel::assemble(spec, train, x_scaler, task, report);
    certified_objective(&mut model, train)?;
    Ok(model)
}

/// The candidate kernel whose softmax posterior has the lowest certificate, compared with
/// draws seeded by the spec's seed plus [`SOFTMAX_SELECTION_SEED_OFFSET`].
fn softmax_by_bound(
    spec: &CheckedFitSpec,
    x: faer::MatRef<'_, f64>,
    y_index: &[f64],
    y: &[usize],
    classes: usize,
) -> Result<(Kernel, crate::inference::softmax::SoftmaxMode)> {
    let menu = softmax_kernel_menu(x.ncols());
    let chosen = menu.by_bound(|k, price| {
        let mode = softmax_mode(k, x, y, classes, &SoftmaxConfig::default(), None)?;
        let post = SoftmaxPosterior::from_mode(k, x, mode.clone());
        let c = softmax_certificate(
            &post,
            x,
            y_index,
            vec![price.clone()],
            spec.delta,
            ConfidenceTerm::Maurer,
            spec.seed.wrapping_add(SOFTMAX_SELECTION_SEED_OFFSET),
        )?;
        Ok((mode, c.bound))
    })?;
    Ok((menu.items[chosen.index].clone(), chosen.value))
}
