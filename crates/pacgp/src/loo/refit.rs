//! Exact leave-one-out by refitting: one driver over a refit closure ([`refit_loo`]),
//! parallel over the left-out rows with rayon (results in the order of `rows`, whatever the
//! thread schedule), and the refit of every model built on it.
//!
//! A classifier refits from the warm start its method reads off the full-data fit
//! ([`crate::inference::ClassifierInference::warm_start`], in each method's home): Laplace
//! from the mode `f̂`, EP from the sites, naive mean field from its embedding strengths, each
//! without row i; IVM and SOGP refit cold.
//! Exact and sparse GP regression refit in closed form at fixed hyperparameters (sparse: at
//! fixed inducing inputs Z too).

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::{LooClassification, LooResult};
use crate::error::{Error, Result};
use crate::inference::{entries_at, ClassifierFit, ConvergenceStatus, InferenceMethod};
use crate::inference::{LeftOut, Problem, WarmStart};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::posterior::GaussianPosterior;
use crate::regression::exact::ExactGp;
use crate::regression::sparse::SparseGp;

/// The prediction at the left-out point of one refit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Refit {
    /// Predictive mean at `x_i` of the model fitted without row i.
    pub mean: f64,
    /// Its predictive variance (latent for classifiers, noise included for regression).
    pub var: f64,
    /// Whether the refit met its stopping rule (false: it ran out of iterations).
    pub converged: bool,
}

/// Run `refit(train, i)` for every `i` in `rows`, where `train` lists the other rows
/// `0..n` (in order), in parallel; results come back in the order of `rows`. Where refits
/// fail, one of their errors is returned. `T` is what a refit keeps: its prediction at `x_i`
/// ([`Refit`]) or, for jackknife+ sets, the whole leave-one-out posterior.
pub fn refit_loo<T, F>(n: usize, rows: &[usize], refit: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&[usize], usize) -> Result<T> + Sync,
{
    check_rows(n, rows)?;
    rows.par_iter()
        .map(|&i| {
            let train: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            refit(&train, i)
        })
        .collect()
}

fn check_rows(n: usize, rows: &[usize]) -> Result<()> {
    if n < 2 {
        return Err(Error::Empty {
            what: "leave-one-out training set (needs at least two points)",
        });
    }
    if let Some(&i) = rows.iter().find(|&&i| i >= n) {
        return Err(Error::ShapeMismatch {
            what: "leave-one-out rows",
            expected: format!("row indices below {n}"),
            found: format!("{i}"),
        });
    }
    Ok(())
}

/// Rows `train` of `x`.
fn rows_of(x: MatRef<'_, f64>, train: &[usize]) -> Mat<f64> {
    Mat::from_fn(train.len(), x.ncols(), |r, c| x[(train[r], c)])
}

/// Every row's model refitted without it by `method` (cold) at fixed kernel and likelihood,
/// in parallel, in row order: the leave-one-out models jackknife+ sets read at any input for
/// a classifier whose leave-one-out is refits (SOGP). Refused before any refit where the N
/// posteriors (M basis points each: `m` of `method`'s active set, D inputs) would not fit in
/// the memory available now.
pub fn classifier_refit_posteriors(
    method: &InferenceMethod,
    (kernel, lik): (&Kernel, &Likelihood),
    x: MatRef<'_, f64>,
    y: &[f64],
    m: usize,
) -> Result<Vec<GaussianPosterior>> {
    crate::inference::check_classification(x, y, lik)?;
    let n = y.len();
    check_rows(n, &[])?;
    // Each refit keeps its basis (M × D), its factors and its site vectors (about 2M² + M·D).
    crate::memory::check_matrices(n, m, 2 * m + x.ncols(), "the N leave-one-out refits")?;
    let start = WarmStart::None;
    let data = RefitData { kernel, lik, x, y };
    let all: Vec<usize> = (0..n).collect();
    refit_loo(n, &all, |train, i| {
        Ok(data.without(method, &start, train, i)?.posterior)
    })
}

/// A classifier's fixed kernel, likelihood and full sample, refitted without one row.
struct RefitData<'a> {
    kernel: &'a Kernel,
    lik: &'a Likelihood,
    x: MatRef<'a, f64>,
    y: &'a [f64],
}

impl RefitData<'_> {
    /// `method` fitted on the rows `train` (all but `row`) from `start`.
    fn without(
        &self,
        method: &InferenceMethod,
        start: &WarmStart,
        train: &[usize],
        row: usize,
    ) -> Result<ClassifierFit> {
        let (xt, yt) = (rows_of(self.x, train), entries_at(self.y, train));
        let p = Problem {
            kernel: self.kernel,
            lik: self.lik,
            x: xt.as_ref(),
            y: &yt,
        };
        method.refit_without(p, &LeftOut { start, train, row })
    }
}

/// Exact LOO of a GP classifier by refitting `method` (kernel and likelihood fixed) on the
/// data without each of `rows`, in parallel: margins `y_i(μ_{−i} + b)` with the probit's
/// bias b (`Likelihood::bias_and_slope`), in the order of `rows`, and the number of refits
/// that did not converge. With `warm_from` (the fit on all the data) Laplace, EP and mean
/// field start from it (module doc); `None` refits every method from its own initial state.
pub fn classifier_exact_loo(
    method: &InferenceMethod,
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    rows: &[usize],
    warm_from: Option<&ClassifierFit>,
) -> Result<LooClassification> {
    crate::inference::check_classification(x, y, lik)?;
    let start = match warm_from {
        Some(fit) => method.warm_start(fit, y)?,
        None => WarmStart::None,
    };
    let data = RefitData { kernel, lik, x, y };
    let refits = refit_loo(y.len(), rows, |train, i| {
        let fit = data.without(method, &start, train, i)?;
        let m = fit.posterior.predict(x.subrows(i, 1))?;
        Ok(Refit {
            mean: m.mean[0],
            var: m.var[0],
            converged: fit.report.status == ConvergenceStatus::Converged,
        })
    })?;
    let bias = lik.bias_and_slope().0;
    let margins = rows
        .iter()
        .zip(&refits)
        .map(|(&i, r)| y[i] * (r.mean + bias))
        .collect();
    let not_converged = refits.iter().filter(|r| !r.converged).count();
    Ok(LooClassification::from_margins(margins, not_converged))
}

/// Exact LOO of exact GP regression at fixed hyperparameters by refitting on the data
/// without each of `rows` (`O(N³)` per row; the closed form [`super::exact_gp_loo`] gives the
/// same in one factorisation and is the one to use; this is its independent check).
pub fn exact_gp_refit_loo(gp: &ExactGp, rows: &[usize]) -> Result<LooResult> {
    let (x, y) = (gp.x(), gp.y());
    let refits = refit_loo(y.len(), rows, |train, i| {
        let m = ExactGp::fit(
            gp.kernel.clone(),
            gp.noise_variance,
            rows_of(x, train),
            entries_at(y, train),
            &Default::default(),
        )?;
        let p = m.predict(x.subrows(i, 1))?;
        Ok(Refit {
            mean: p.mean[0],
            var: p.noisy_var[0],
            converged: true,
        })
    })?;
    Ok(regression_result(&refits, rows, y))
}

/// Exact LOO of sparse GP regression at fixed `(θ, σ², Z)` by refitting the method's
/// posterior on the data without each of `rows` (`O(NM²)` per row); checks the rank-one
/// cavity [`super::sparse_gp_loo`].
pub fn sparse_gp_refit_loo(
    gp: &SparseGp,
    x: MatRef<'_, f64>,
    y: &[f64],
    rows: &[usize],
) -> Result<LooResult> {
    let refits = refit_loo(y.len(), rows, |train, i| {
        let post = gp.posterior(rows_of(x, train).as_ref(), &entries_at(y, train))?;
        let p = post.predict(x.subrows(i, 1))?;
        Ok(Refit {
            mean: p.mean[0],
            var: p.var[0] + gp.noise_variance,
            converged: true,
        })
    })?;
    Ok(regression_result(&refits, rows, y))
}

/// [`LooResult`] of refits at `rows`.
fn regression_result(refits: &[Refit], rows: &[usize], y: &[f64]) -> LooResult {
    LooResult::from_predictive(
        refits.iter().map(|r| r.mean).collect(),
        refits.iter().map(|r| r.var).collect(),
        &entries_at(y, rows),
    )
}
