//! Jackknife+ prediction sets from each posterior's leave-one-out models (the module doc of
//! [`super`]): the site downdates of Laplace, EP, IVM and pac-gpc, the linear-response
//! functions of the SVM and of naive mean field, svgp's and pac-svgp's sites removed from
//! `q(u)`, the softmax Laplace's K-dimensional sites removed.

use super::*;
use crate::inference::{ApproxLooKind, ClassifierFit};
use crate::loo::{InducingSiteLoo, MeanFieldLooFunctions, SoftmaxSiteLoo};

/// Most test inputs handled at once by jackknife+ sets (N×block leave-one-out marginals per
/// class).
const BLOCK: usize = 128;

/// Leave-one-out values (N × inputs) one block may hold per array: 2²⁵ numbers, 256 MB; a
/// block holds a few such arrays per class (means, variances, probabilities).
const BLOCK_VALUES: usize = 1 << 25;

/// Test inputs per block against `n` training rows: [`BLOCK`], fewer where N × block would
/// pass [`BLOCK_VALUES`] (33 at N = 10⁶), at least one, so memory stays bounded in N.
pub(super) fn block_inputs(n: usize) -> usize {
    (BLOCK_VALUES / n.max(1)).clamp(1, BLOCK)
}

/// Leave-one-out joint scores (N × inputs, K per score) one softmax block may hold: 2²⁰, each
/// with its K×K factor.
const SOFTMAX_BLOCK_VALUES: usize = 1 << 20;

/// A classifier's leave-one-out models: its binary posteriors' (one, or one per one-vs-rest
/// member), or the softmax posterior's (its rows' K-dimensional sites removed).
enum ClassLoo<'a> {
    Members(Vec<RowLoo<'a>>),
    Softmax(Box<SoftmaxSiteLoo<'a>>),
}

impl<'a> ClassLoo<'a> {
    /// The models of `model`'s record, and their class probabilities at their own rows.
    /// A softmax record's labels are checked against the posterior's sites here too: `load`
    /// checks them, but a model deserialised by serde or given its record by hand is not
    /// loaded.
    fn new(model: &'a FittedModel, record: &LooRecord<'_>) -> Result<(Self, Mat<f64>)> {
        if let Task::Softmax { posterior, .. } = &model.task {
            let loo = SoftmaxSiteLoo::new(posterior)?;
            if loo.labels() != record.labels {
                return Err(Error::Numerical {
                    what: "jackknife+ set record",
                    message: "its training labels are not the ones the softmax posterior was \
                              fitted on"
                        .into(),
                });
            }
            let p = model.softmax_probabilities(loo.training())?;
            return Ok((ClassLoo::Softmax(Box::new(loo)), p));
        }
        let (downdates, cavities) = row_loos(model, record)?;
        let p = model.latent_class_probabilities(cavities)?;
        Ok((ClassLoo::Members(downdates), p))
    }

    /// A posterior's number of training rows that is not `n`, if any.
    fn other_size(&self, n: usize) -> Option<usize> {
        match self {
            ClassLoo::Members(d) => d.iter().map(RowLoo::n).find(|&m| m != n),
            ClassLoo::Softmax(loo) => Some(loo.n()).filter(|&m| m != n),
        }
    }

    /// Test inputs per block against `n` training rows: [`block_inputs`], fewer for
    /// softmax's joint scores.
    fn block_inputs(&self, n: usize) -> usize {
        match self {
            ClassLoo::Members(_) => block_inputs(n),
            ClassLoo::Softmax(_) => (SOFTMAX_BLOCK_VALUES / n.max(1)).clamp(1, BLOCK),
        }
    }

    /// The class probabilities of every training row's model at the rows of `block`, row
    /// `i·nb + j` the model without row i at `x_j`, as the model's own.
    fn probabilities_at(&self, model: &FittedModel, block: MatRef<'_, f64>) -> Result<Mat<f64>> {
        match self {
            ClassLoo::Members(downdates) => {
                let latent = downdates
                    .iter()
                    .map(|d| d.at(block))
                    .collect::<Result<Vec<_>>>()?;
                model.latent_class_probabilities(latent)
            }
            ClassLoo::Softmax(loo) => model.softmax_probabilities(&loo.at(block)?),
        }
    }
}

/// One posterior's leave-one-out models, by training row.
pub(super) enum RowLoo<'a> {
    /// A site posterior's downdate, and the basis point of every row (`None`: outside IVM's
    /// active set, left out by the full model itself).
    Sites {
        downdate: Box<LooDowndate<'a>>,
        basis_of: Option<Vec<Option<usize>>>,
    },
    /// The SVM's posterior (mean `μ·f`, the prior's covariance) with `f` replaced by the
    /// linear-response leave-one-out functions `f^{\l}` (seed 001 eqs. 17.29, 17.31 at x).
    Svm {
        post: &'a GaussianPosterior,
        loo: Box<SvmLooFunctions>,
        mu: f64,
    },
    /// Naive mean field's posterior with its mean shifted by the linear-response leave-one-out
    /// functions (seed 001 eqs. 17.41–17.42 at x, [`MeanFieldLooFunctions`]); its covariance
    /// stays, as the SVM's prior does (a site may have precision 0: no downdate applies).
    MeanField {
        post: &'a GaussianPosterior,
        loo: Box<MeanFieldLooFunctions>,
    },
    /// svgp's or pac-svgp's posterior with row i's rank-one site removed from `q(u)`
    /// (docs/math.md eqs. 12.7–12.8, [`InducingSiteLoo`]).
    Inducing(Box<InducingSiteLoo<'a>>),
    /// SOGP refitted without row i at the stored kernel (its leave-one-out is refits).
    Refits(Vec<GaussianPosterior>),
}

impl RowLoo<'_> {
    /// The latent leave-one-out marginals of every training row at the inputs `block`,
    /// flattened to row `i·nb + j` (model −i at `x_j`).
    pub(super) fn at(&self, block: MatRef<'_, f64>) -> Result<Marginals> {
        let (n, nb) = (self.n(), block.nrows());
        let (downdate, basis_of) = match self {
            RowLoo::Sites { downdate, basis_of } => (downdate, basis_of),
            RowLoo::Svm { post, loo, mu } => return shifted(post, &loo.shifts(block)?, *mu, block),
            RowLoo::MeanField { post, loo } => {
                return shifted(post, &loo.shifts(block)?, 1.0, block)
            }
            RowLoo::Inducing(loo) => return loo.at(block),
            RowLoo::Refits(posts) => return refits_at(posts, block),
        };
        let at = downdate.at(block)?;
        let Some(basis_of) = basis_of else {
            return Ok(Marginals {
                mean: (0..n * nb).map(|r| at.mean[(r / nb, r % nb)]).collect(),
                var: (0..n * nb).map(|r| at.var[(r / nb, r % nb)]).collect(),
            });
        };
        let full = downdate.posterior().predict(block)?;
        let pick = |loo: &Mat<f64>, full: &[f64], r: usize| match basis_of[r / nb] {
            Some(b) => loo[(b, r % nb)],
            None => full[r % nb],
        };
        Ok(Marginals {
            mean: (0..n * nb).map(|r| pick(&at.mean, &full.mean, r)).collect(),
            var: (0..n * nb).map(|r| pick(&at.var, &full.var, r)).collect(),
        })
    }

    /// Number of training rows.
    fn n(&self) -> usize {
        match self {
            RowLoo::Sites {
                basis_of: Some(b), ..
            } => b.len(),
            RowLoo::Sites { downdate, .. } => downdate.n(),
            RowLoo::Svm { loo, .. } => loo.fit().alpha.len(),
            RowLoo::MeanField { loo, .. } => loo.training_margins().len(),
            RowLoo::Inducing(loo) => loo.n(),
            RowLoo::Refits(posts) => posts.len(),
        }
    }
}

/// The marginals of `post` at `block` with row i's mean moved by `scale · shifts[(i, j)]`
/// (flattened to row `i·nb + j`) and the variance kept.
fn shifted(
    post: &GaussianPosterior,
    shifts: &Mat<f64>,
    scale: f64,
    block: MatRef<'_, f64>,
) -> Result<Marginals> {
    let (n, nb) = (shifts.nrows(), block.nrows());
    let full = post.predict(block)?;
    Ok(Marginals {
        mean: (0..n * nb)
            .map(|r| full.mean[r % nb] + scale * shifts[(r / nb, r % nb)])
            .collect(),
        var: (0..n * nb).map(|r| full.var[r % nb]).collect(),
    })
}

/// An SVM's [`RowLoo`] and its leave-one-out marginals at the training rows: `model` is the
/// binary SVM (or one-vs-rest member c), `y` the ±1 labels it was fitted on. The SVM is
/// solved again on the record's inputs and labels with the model's kernel and settings (the
/// solver is deterministic, so this is the fitted solution), and refused unless its support
/// vectors and `μ y α` are the stored posterior's (an edited label or input). At `x_i` the
/// model without i has the linear-response margin `m_i` (eq. 17.29/17.31), so its decision is
/// `y_i m_i` and its latent mean `μ(y_i m_i − b)`.
fn svm_row_loo<'a>(
    model: &'a FittedModel,
    y: Vec<f64>,
    active: Option<&ActiveSets>,
    c: usize,
) -> Result<(RowLoo<'a>, Marginals)> {
    let refused = |message: String| Error::Numerical {
        what: "jackknife+ set record",
        message,
    };
    let (Task::Svm { posterior, mu, .. }, Some(a)) = (&model.task, active) else {
        return Err(refused(
            "an SVM's record keeps its support vectors and inputs".into(),
        ));
    };
    let kernel = posterior.kernel().clone();
    let fit = model.svm_fit(a.x.as_ref(), &y)?.into_owned();
    let sv: Vec<usize> = (0..y.len()).filter(|&i| fit.alpha[i] > 0.0).collect();
    let same = |b: usize, &i: &usize| {
        let want = mu * y[i] * fit.alpha[i];
        (want - posterior.alpha[b]).abs() <= 1e-8 * want.abs().max(1.0)
    };
    if sv != a.rows[c] || !sv.iter().enumerate().all(|(b, i)| same(b, i)) {
        return Err(refused(
            "the SVM solved again on the record's labels and inputs is not the stored one \
             (an edited label or input)"
                .into(),
        ));
    }
    let b = fit.b;
    let loo = SvmLooFunctions::new(fit, kernel, a.x.clone(), y.clone())?;
    let margins = loo.training_margins()?;
    let at_rows = posterior.predict(a.x.as_ref())?;
    let calibration = Marginals {
        mean: (0..y.len()).map(|i| mu * (y[i] * margins[i] - b)).collect(),
        var: at_rows.var,
    };
    let row_loo = RowLoo::Svm {
        post: posterior,
        loo: Box::new(loo),
        mu: *mu,
    };
    Ok((row_loo, calibration))
}

/// Naive mean field's [`RowLoo`] and its leave-one-out marginals at the training rows: the
/// mean-field quantities read back from the stored posterior as `certify` reads them from its
/// fit ([`crate::loo::mean_field_parts`]), `y` the ±1 labels. At `x_i` the model without i has
/// the latent mean `y_i m_i` with `m_i` `certify`'s margin (eq. 17.41), and the posterior's
/// variance.
fn mean_field_row_loo<'a>(
    model: &'a FittedModel,
    post: &'a GaussianPosterior,
    y: &[f64],
) -> Result<(RowLoo<'a>, Marginals)> {
    let method = model.inference_method()?;
    let (Task::Classification { likelihood, .. }, ApproxLooKind::LinearResponse) =
        (&model.task, method.approximate_loo())
    else {
        return Err(Error::Unsupported(format!(
            "'{}' is not naive mean field",
            model.method()
        )));
    };
    let fit = ClassifierFit::of_posterior(post.clone(), "the stored mean-field posterior");
    let mf = crate::loo::mean_field_parts(&fit, likelihood, y, method.input_noise())?;
    let loo = MeanFieldLooFunctions::new(&mf, y)?;
    let at_rows = post.predict(post.basis.as_ref())?;
    let calibration = Marginals {
        mean: (0..y.len())
            .map(|i| y[i] * loo.training_margins()[i])
            .collect(),
        var: at_rows.var,
    };
    let row_loo = RowLoo::MeanField {
        post,
        loo: Box::new(loo),
    };
    Ok((row_loo, calibration))
}

/// svgp's or pac-svgp's [`RowLoo`] and its leave-one-out marginals at the training rows: its
/// rows' sites read at the record's standardised inputs `x` with the ±1 labels `y` and the
/// criterion it was fitted by ([`InducingSiteLoo`]).
fn inducing_row_loo<'a>(
    model: &FittedModel,
    post: &'a GaussianPosterior,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<(RowLoo<'a>, Marginals)> {
    let Task::Classification { likelihood, .. } = &model.task else {
        return Err(Error::Unsupported(format!(
            "'{}' is not a binary sparse variational classifier",
            model.method()
        )));
    };
    let loo = InducingSiteLoo::new(post, &model.svgp_criterion(likelihood)?, x, y)?;
    let training = loo.training();
    let calibration = Marginals {
        mean: training.mean.clone(),
        var: training.var.clone(),
    };
    let row_loo = RowLoo::Inducing(Box::new(loo));
    Ok((row_loo, calibration))
}

/// The marginals of every refitted model at the rows of `block`, row `i·nb + j` model i at
/// `x_j`.
fn refits_at(posts: &[GaussianPosterior], block: MatRef<'_, f64>) -> Result<Marginals> {
    let per_row = posts
        .par_iter()
        .map(|p| p.predict(block))
        .collect::<Result<Vec<_>>>()?;
    Ok(Marginals {
        mean: per_row
            .iter()
            .flat_map(|m| m.mean.iter().copied())
            .collect(),
        var: per_row.iter().flat_map(|m| m.var.iter().copied()).collect(),
    })
}

/// SOGP's [`RowLoo`] and its leave-one-out marginals at the training rows: the binary model
/// (or one-vs-rest member) refitted without each row at its stored kernel on the record's
/// standardised inputs `x` and ±1 labels `y` ([`crate::loo::classifier_refit_posteriors`],
/// `O(N)` fits). The fit on every row is done again first and refused unless it is the stored
/// posterior (SOGP is deterministic: an edited label or input changes it).
fn refit_row_loo(
    model: &FittedModel,
    post: &GaussianPosterior,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<(RowLoo<'static>, Marginals)> {
    let Task::Classification { likelihood, .. } = &model.task else {
        return Err(Error::Unsupported(format!(
            "'{}' is not a binary classifier refitted for its leave-one-out",
            model.method()
        )));
    };
    let method = model.inference_method()?;
    let full = method.fit(post.kernel(), likelihood, x, y)?.posterior;
    // To 1e-8 relative, as the SVM's check: a fit on another machine may round otherwise.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-8 * a.abs().max(b.abs()).max(1.0);
    let (fb, pb) = (full.basis.as_ref(), post.basis.as_ref());
    let same = full.alpha.len() == post.alpha.len()
        && full
            .alpha
            .iter()
            .zip(&post.alpha)
            .all(|(a, b)| close(*a, *b))
        && fb.nrows() == pb.nrows()
        && fb.ncols() == pb.ncols()
        && (0..pb.ncols()).all(|j| (0..pb.nrows()).all(|i| close(fb[(i, j)], pb[(i, j)])));
    if !same {
        return Err(Error::Numerical {
            what: "jackknife+ set record",
            message: "refitted on the record's inputs and labels, the classifier is not the \
                      stored posterior (an edited label or input)"
                .into(),
        });
    }
    let kernel_lik = (post.kernel(), likelihood);
    let posts = crate::loo::classifier_refit_posteriors(&method, kernel_lik, x, y, post.n_basis())?;
    let at_rows = posts
        .iter()
        .enumerate()
        .map(|(i, p)| p.predict(x.subrows(i, 1)))
        .collect::<Result<Vec<_>>>()?;
    let calibration = Marginals {
        mean: at_rows.iter().map(|m| m.mean[0]).collect(),
        var: at_rows.iter().map(|m| m.var[0]).collect(),
    };
    Ok((RowLoo::Refits(posts), calibration))
}

/// A site posterior's [`RowLoo`] (member c) and its latent leave-one-out marginals at the
/// training rows: the cavities, and IVM's posterior marginals outside its active set
/// ([`crate::loo::training_cavities`]), from one `L⁻¹`.
fn site_row_loo<'a>(
    post: &'a GaussianPosterior,
    active: Option<&ActiveSets>,
    c: usize,
) -> Result<(RowLoo<'a>, Marginals)> {
    let (downdate, cav) = LooDowndate::sites_with_cavities(post)?;
    let (cav, basis_of) = match active {
        None => (cav, None),
        Some(a) => {
            let rows = &a.rows[c];
            let basis_of = crate::loo::cavity::basis_positions(rows, a.x.nrows())?;
            let at_rows = crate::loo::cavity::cavities_at_rows(post, cav, rows, a.x.as_ref())?;
            (at_rows, Some(basis_of))
        }
    };
    let m = Marginals {
        mean: cav.mean,
        var: cav.var,
    };
    let row_loo = RowLoo::Sites {
        downdate: Box::new(downdate),
        basis_of,
    };
    Ok((row_loo, m))
}

/// Every site posterior's [`RowLoo`] and its latent leave-one-out marginals at the training
/// rows, by the member's kind: an SVM's and mean field's linear response, svgp's sites
/// removed from `q(u)` (a record with training inputs), else the site downdate (one `L⁻¹` or
/// LU per posterior).
pub(super) fn row_loos<'a>(
    model: &'a FittedModel,
    record: &LooRecord<'_>,
) -> Result<(Vec<RowLoo<'a>>, Vec<Marginals>)> {
    let (labels, active) = (record.labels, record.active);
    let inputs = record.inputs.map(|i| i.x.as_ref());
    let posts = model.site_posteriors()?;
    if let Some(a) = active {
        a.validate(&posts, a.x.nrows())
            .map_err(|message| Error::Numerical {
                what: "jackknife+ set record",
                message,
            })?;
    }
    let members = model.site_models()?;
    let signs = model.site_signs(labels)?;
    let per_member = members.into_iter().zip(posts).zip(signs).enumerate();
    per_member
        .map(|(c, ((m, post), y))| match (&m.task, inputs) {
            (Task::Svm { .. }, _) => svm_row_loo(m, y, active, c),
            (Task::Classification { .. }, _) if is_mean_field(m) => mean_field_row_loo(m, post, &y),
            (_, Some(x)) if crate::spec::refit_classifier(&m.spec.method) => {
                refit_row_loo(m, post, x, &y)
            }
            (_, Some(x)) => inducing_row_loo(m, post, x, &y),
            _ => site_row_loo(post, active, c),
        })
        .collect::<Result<Vec<_>>>()
        .map(|v| v.into_iter().unzip())
}

/// Whether a binary classifier was fitted by naive mean field: its inference method's
/// leave-one-out is linear response.
fn is_mean_field(model: &FittedModel) -> bool {
    model
        .inference_method()
        .is_ok_and(|m| m.approximate_loo() == ApproxLooKind::LinearResponse)
}

/// Jackknife+ sets at raw inputs (module doc; [`plus_set`]).
pub(super) fn jackknife_sets(
    model: &FittedModel,
    record: &LooRecord<'_>,
    iv: &IntervalSpec,
    x: MatRef<'_, f64>,
    alpha: f64,
) -> Result<PredictionSets> {
    let labels = record.labels;
    let n = labels.len();
    crate::conformal::rank(alpha, n)?;
    // Every row's leave-one-out model and its probabilities at the row itself.
    let (loo, p_train) = ClassLoo::new(model, record)?;
    if let Some(rows) = loo.other_size(n) {
        return Err(Error::ShapeMismatch {
            what: "training labels of the jackknife+ set record",
            expected: format!("{rows} (the posterior's training rows)"),
            found: format!("{n}"),
        });
    }
    let calibration = (0..n)
        .map(|i| true_label_score(iv.score, &row(&p_train, i), labels[i]))
        .collect::<Result<Vec<_>>>()?;
    let xs = model.standardised_inputs(x)?;
    let mut sets = Vec::with_capacity(xs.nrows());
    let rows = loo.block_inputs(n);
    for lo in (0..xs.nrows()).step_by(rows) {
        let block = xs.as_ref().subrows(lo, rows.min(xs.nrows() - lo));
        let nb = block.nrows();
        // Row i·nb + j: the model without row i at x_j.
        let p = loo.probabilities_at(model, block)?;
        // Each input's set compares its own n leave-one-out scores: independent across inputs.
        let k = p.ncols();
        let block_sets = (0..nb)
            .into_par_iter()
            .map(|j| {
                let (mut loo, mut probs) = (vec![0.0; n * k], vec![0.0; k]);
                for (i, scores) in loo.chunks_exact_mut(k).enumerate() {
                    probs
                        .iter_mut()
                        .enumerate()
                        .for_each(|(y, v)| *v = p[(i * nb + j, y)]);
                    label_scores_into(iv.score, &probs, scores)?;
                }
                plus_set(&calibration, &loo, k, alpha)
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
