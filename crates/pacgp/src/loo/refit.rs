//! Exact leave-one-out by refitting: one driver over a refit closure ([`refit_loo`]),
//! parallel over the left-out rows with rayon (results in the order of `rows`, whatever the
//! thread schedule), and the refit of every model built on it.
//!
//! Warm starts where the method has one: Laplace starts Newton from the full-data mode `f̂`
//! without row i, EP from the full-data sites without site i (`τ̃ = π`, `ν̃ = α + πμ`, see
//! [`super::cavity`]), naive mean field from its embedding strengths without `α_i`. IVM
//! (greedy selection) and SOGP (online sweeps) have no state to restart from and refit cold.
//! Exact and sparse GP regression refit in closed form at fixed hyperparameters (sparse: at
//! fixed inducing inputs Z too).

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::{LooClassification, LooResult};
use crate::error::{Error, Result};
use crate::inference::ep::{ep_warm, EpSites};
use crate::inference::laplace::laplace_warm;
use crate::inference::mean_field::mean_field_warm;
use crate::inference::sogp::{sogp, SweepOrder};
use crate::inference::{ivm, ClassifierFit, ConvergenceStatus, InferenceMethod};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::posterior::Covariance;
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
/// `0..n` (in order), in parallel; results come back in the order of `rows`. The first error
/// (in row order) is returned.
pub fn refit_loo<F>(n: usize, rows: &[usize], refit: F) -> Result<Vec<Refit>>
where
    F: Fn(&[usize], usize) -> Result<Refit> + Sync,
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

/// Entries `train` of `v`.
fn entries_of(v: &[f64], train: &[usize]) -> Vec<f64> {
    train.iter().map(|&j| v[j]).collect()
}

/// What a classifier refit starts from.
enum Start {
    /// The method's own initial state.
    Cold,
    /// Laplace: the full-data mode `f̂`.
    Mode(Vec<f64>),
    /// EP: the full-data sites.
    Sites(EpSites),
    /// Mean field: the full-data embedding strengths `α_mf = y ∘ α`.
    Strengths(Vec<f64>),
}

impl Start {
    /// The warm start the method allows, read off the full-data fit (`Cold` for IVM, SOGP).
    fn from_fit(method: &InferenceMethod, fit: &ClassifierFit, y: &[f64]) -> Result<Self> {
        let post = &fit.posterior;
        let full_basis = fit.basis_indices.is_none() && post.alpha.len() == y.len();
        match method {
            InferenceMethod::Laplace(_) if full_basis => Ok(Start::Mode(training_means(fit)?)),
            InferenceMethod::Ep(_) if full_basis => {
                let Covariance::Sites { sqrt_pi, .. } = &post.cov else {
                    return Ok(Start::Cold);
                };
                let mu = training_means(fit)?;
                let tau: Vec<f64> = sqrt_pi.iter().map(|s| s * s).collect();
                // ν̃ = α + πμ (super::cavity module doc).
                let nu = (0..y.len())
                    .map(|i| post.alpha[i] + tau[i] * mu[i])
                    .collect();
                Ok(Start::Sites(EpSites { tau, nu }))
            }
            InferenceMethod::MeanField(_) if full_basis => Ok(Start::Strengths(
                y.iter().zip(&post.alpha).map(|(y, a)| y * a).collect(),
            )),
            _ => Ok(Start::Cold),
        }
    }
}

/// `μ = Kα` at the basis (the training inputs for full-basis fits).
fn training_means(fit: &ClassifierFit) -> Result<Vec<f64>> {
    let post = &fit.posterior;
    Ok(crate::linalg::mat_vec(
        &post.kernel().gram(post.basis.as_ref())?,
        &post.alpha,
    ))
}

/// SOGP's visiting order on the data without row i: a given sequence loses i and renumbers
/// the rows after it; a shuffled order keeps its seed (so it is a different permutation of
/// the N − 1 rows).
fn order_without(order: &SweepOrder, i: usize) -> Result<SweepOrder> {
    Ok(match order {
        SweepOrder::Given(idx) => {
            let kept: Vec<usize> = idx
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| if j > i { j - 1 } else { j })
                .collect();
            if kept.is_empty() {
                return Err(Error::Empty {
                    what: "SOGP sweep order without the left-out row",
                });
            }
            SweepOrder::Given(kept)
        }
        other => other.clone(),
    })
}

/// The method's fit on `(xt, yt)`, the data without row `i`, from `start`.
fn fit_without(
    method: &InferenceMethod,
    kernel: &Kernel,
    lik: &Likelihood,
    xt: MatRef<'_, f64>,
    yt: &[f64],
    start: &Start,
    train: &[usize],
    i: usize,
) -> Result<ClassifierFit> {
    match (method, start) {
        (InferenceMethod::Laplace(cfg), Start::Mode(f)) => {
            laplace_warm(kernel, lik, xt, yt, cfg, &entries_of(f, train))
        }
        (InferenceMethod::Ep(cfg), Start::Sites(s)) => {
            let init = EpSites {
                tau: entries_of(&s.tau, train),
                nu: entries_of(&s.nu, train),
            };
            Ok(ep_warm(kernel, lik, xt, yt, cfg, &init)?.0)
        }
        (InferenceMethod::MeanField(cfg), Start::Strengths(a)) => {
            Ok(mean_field_warm(kernel, lik, xt, yt, cfg, &entries_of(a, train))?.fit)
        }
        (InferenceMethod::Ivm(cfg), _) => {
            // A full active set (d = N) becomes all N − 1 points.
            let cfg = ivm::IvmConfig {
                active_set: cfg.active_set.min(yt.len()),
                ..*cfg
            };
            ivm::ivm(kernel, lik, xt, yt, &cfg)
        }
        (InferenceMethod::Sogp { config, order }, _) => {
            sogp(kernel, lik, xt, yt, config, &order_without(order, i)?)
        }
        (m, _) => m.fit(kernel, lik, xt, yt),
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
        Some(fit) => Start::from_fit(method, fit, y)?,
        None => Start::Cold,
    };
    let refits = refit_loo(y.len(), rows, |train, i| {
        let (xt, yt) = (rows_of(x, train), entries_of(y, train));
        let fit = fit_without(method, kernel, lik, xt.as_ref(), &yt, &start, train, i)?;
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
            entries_of(y, train),
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
        let post = gp.posterior(rows_of(x, train).as_ref(), &entries_of(y, train))?;
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
        &entries_of(y, rows),
    )
}
