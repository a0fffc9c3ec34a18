//! Seed 002 Algorithms 1–3: choose a sparse dual basis step by step.
//!
//! Costs with `O(1)` kernel evaluations (compare Table 1: greedy `O(k²n²)`, random `O(k²n)`,
//! κ-greedy `O(κk²n)`):
//! - [`Update::Rescale`] (the paper's step `w^k = βw^{k−1} + αx_i`): a step is a 2×2 fit per
//!   candidate from `fᵀc`, `cᵀc`, `cᵀy` — `O(n)` each given the kernel column, plus one
//!   `Kf` for full greedy: `O(n²)` per greedy step, `O(κn)` per κ-greedy step;
//! - [`Update::Refit`] (all weights refit on the grown basis): κ-greedy probes each candidate
//!   with a Cholesky append, `O(kn + k²)` each, `O(κk²n)` in all as in Table 1; full greedy
//!   keeps `L⁻¹A_{S,i}` for every candidate and extends it by one row per step (`O(n²)` for
//!   `Kc_j` plus `O(kn)`), `O(kn² + k²n)` in all, below Table 1's `O(k²n²)`;
//! - [`Algorithm::Random`]: one append per drawn point, `O(k²n)` in all.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::subset::{SubsetFit, SCHUR_RTOL};
use super::GreedyProblem;
use crate::error::{Error, Result};
use crate::linalg::{self, dot};

mod rescaled;
use rescaled::rescale_loop;

/// Which of seed 002's algorithms chooses the basis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "algorithm")]
pub enum Algorithm {
    /// Algorithm 1: the best of all n points at every step.
    Greedy,
    /// Algorithm 2: k points drawn uniformly, refit exactly. Drawn here without replacement
    /// (the first k of a seeded permutation, so one run gives every k); Theorem 3.1 still
    /// bounds the expectation, since a repeated draw would leave the refit unchanged and the
    /// refit's average over the unused points is no higher than over all n.
    Random,
    /// Algorithm 3: the best of `kappa` points drawn uniformly afresh at every step.
    KappaGreedy {
        /// κ, the size of each step's random candidate set (1 ≤ κ ≤ n).
        kappa: usize,
    },
}

/// How a greedy step sets the weights (Algorithm 2 always refits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Update {
    /// Seed 002's step: minimise `R(βw^{k−1} + αx_i)` over `(i, α, β)`.
    Rescale,
    /// Minimise R over all weights of the grown basis `S ∪ {i}` (exact refit).
    Refit,
}

/// When selection stops.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "rule")]
pub enum StopRule {
    /// After exactly this many steps.
    Steps {
        /// Number of steps k.
        k: usize,
    },
    /// When Lemma 2.2's certified `ΔR ≤ ‖∂R/∂w‖²/(2λ)` falls to `target`, or after
    /// `max_steps`. The gap costs `O(n²)` kernel work: every step when the Gram matrix is
    /// held, otherwise at steps growing by 10% (so k may overshoot by up to 10%).
    DeltaR {
        /// Target for ΔR.
        target: f64,
        /// Step cap.
        max_steps: usize,
    },
}

/// Settings of [`select`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GreedyConfig {
    /// Algorithm 1, 2 or 3.
    pub algorithm: Algorithm,
    /// Weight update of the greedy algorithms.
    pub update: Update,
    /// Stopping rule.
    pub stop: StopRule,
    /// Seed of the random draws (Algorithms 2 and 3).
    pub seed: u64,
}

/// Why selection stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The requested number of steps was taken.
    Steps,
    /// The certified ΔR reached the target.
    TargetReached,
    /// No candidate decreased R any more (e.g. the basis spans the data).
    NoImprovement,
}

/// The result of a selection run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Selection {
    /// The index `i_k` chosen (or drawn) at each step.
    pub steps: Vec<usize>,
    /// The distinct basis points with non-zero weight, in order of entry.
    pub basis: Vec<usize>,
    /// Dual weights on `basis`: `w = Σ_j alpha_j x_{basis_j}`.
    pub alpha: Vec<f64>,
    /// `f_i = wᵀx_i` at the n training points.
    pub fitted: Vec<f64>,
    /// `R(w^k)` for k = 0, 1, …, steps (`r_path[0] = R(0)`).
    pub r_path: Vec<f64>,
    /// Lemma 2.2's certified bounds `(k, ‖∂R/∂w‖²/(2λ))` where they were evaluated.
    pub gap_checks: Vec<(usize, f64)>,
    /// Why it stopped.
    pub stop: StopReason,
}

impl Selection {
    /// Number of steps taken.
    pub fn k(&self) -> usize {
        self.steps.len()
    }

    /// `R(w^k)` after the last step.
    pub fn r(&self) -> f64 {
        *self.r_path.last().expect("r_path holds R(0)")
    }
}

fn check_config(problem: &GreedyProblem<'_>, cfg: &GreedyConfig) -> Result<()> {
    if let Algorithm::KappaGreedy { kappa } = cfg.algorithm {
        if kappa == 0 || kappa > problem.n() {
            return Err(Error::InvalidParameter {
                name: "κ (candidates per step)",
                value: kappa as f64,
                reason: "must lie in 1..=n",
            });
        }
    }
    match cfg.stop {
        StopRule::Steps { k } | StopRule::DeltaR { max_steps: k, .. } if k == 0 => {
            Err(Error::InvalidParameter {
                name: "number of steps k",
                value: 0.0,
                reason: "must be at least 1",
            })
        }
        StopRule::DeltaR { target, .. } if !(target > 0.0 && target.is_finite()) => {
            Err(Error::InvalidParameter {
                name: "target ΔR",
                value: target,
                reason: "must be positive and finite",
            })
        }
        _ => Ok(()),
    }
}

/// Run Algorithm 1, 2 or 3 on `problem` (see the module doc for costs). Full greedy forms
/// the Gram matrix if the problem does not hold it.
pub fn select(problem: &GreedyProblem<'_>, cfg: &GreedyConfig) -> Result<Selection> {
    check_config(problem, cfg)?;
    let owned;
    let problem = if cfg.algorithm == Algorithm::Greedy && problem.gram().is_none() {
        owned = problem.clone().with_gram()?;
        &owned
    } else {
        problem
    };
    let mut run = Run::new(problem, cfg);
    match (cfg.algorithm, cfg.update) {
        (Algorithm::Random, _) => random(problem, &mut run)?,
        (_, Update::Rescale) => rescale_loop(problem, cfg.algorithm, &mut run)?,
        (_, Update::Refit) => refit_loop(problem, cfg.algorithm, &mut run)?,
    }
    Ok(run.finish())
}

/// Bookkeeping shared by the loops: the path, the stopping rule and the RNG.
struct Run {
    stop: StopRule,
    rng: ChaCha8Rng,
    steps: Vec<usize>,
    r_path: Vec<f64>,
    gap_checks: Vec<(usize, f64)>,
    next_check: usize,
    reason: StopReason,
    basis: Vec<usize>,
    alpha: Vec<f64>,
    fitted: Vec<f64>,
}

impl Run {
    fn new(problem: &GreedyProblem<'_>, cfg: &GreedyConfig) -> Self {
        Self {
            stop: cfg.stop,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            steps: Vec::new(),
            r_path: vec![problem.r_zero()],
            gap_checks: Vec::new(),
            next_check: 1,
            reason: StopReason::Steps,
            basis: Vec::new(),
            alpha: Vec::new(),
            fitted: vec![0.0; problem.n()],
        }
    }

    fn max_steps(&self) -> usize {
        match self.stop {
            StopRule::Steps { k } => k,
            StopRule::DeltaR { max_steps, .. } => max_steps,
        }
    }

    /// Record a step; `true` when selection should go on. `state` gives the current
    /// `(basis, alpha, fitted)` for the gap check.
    fn record(
        &mut self,
        problem: &GreedyProblem<'_>,
        i: usize,
        r: f64,
        state: impl FnOnce() -> (Vec<usize>, Vec<f64>, Vec<f64>),
    ) -> Result<bool> {
        self.steps.push(i);
        self.r_path.push(r);
        let k = self.steps.len();
        let done = k >= self.max_steps();
        if let StopRule::DeltaR { target, .. } = self.stop {
            if done || k >= self.next_check {
                let (basis, alpha, fitted) = state();
                let gap = gradient_bound(problem, &basis, &alpha, &fitted)?;
                self.gap_checks.push((k, gap));
                self.next_check = if problem.gram().is_some() {
                    k + 1
                } else {
                    (k + 1).max((1.1 * k as f64).ceil() as usize)
                };
                self.basis = basis;
                self.alpha = alpha;
                self.fitted = fitted;
                if gap <= target {
                    self.reason = StopReason::TargetReached;
                    return Ok(false);
                }
            }
        }
        Ok(!done)
    }

    /// [`Run::record`] of the step that appended `j` to the exact refit `fit`.
    fn record_refit(
        &mut self,
        problem: &GreedyProblem<'_>,
        j: usize,
        fit: &SubsetFit,
    ) -> Result<bool> {
        self.record(problem, j, fit.objective(), || refit_state(fit))
    }

    fn set_state(&mut self, (basis, alpha, fitted): (Vec<usize>, Vec<f64>, Vec<f64>)) {
        self.basis = basis;
        self.alpha = alpha;
        self.fitted = fitted;
    }

    fn finish(self) -> Selection {
        Selection {
            steps: self.steps,
            basis: self.basis,
            alpha: self.alpha,
            fitted: self.fitted,
            r_path: self.r_path,
            gap_checks: self.gap_checks,
            stop: self.reason,
        }
    }
}

/// An exact refit's `(basis, α, fitted values)`, as [`Run::record`] and [`Run::set_state`]
/// take them.
fn refit_state(fit: &SubsetFit) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
    (fit.idx.clone(), fit.alpha(), fit.fitted())
}

/// `K v` from the held Gram matrix, or column block by column block (`O(n²)` kernel work).
fn gram_times(problem: &GreedyProblem<'_>, v: &[f64]) -> Result<Vec<f64>> {
    if let Some(g) = problem.gram() {
        return Ok(linalg::mat_vec(g, v));
    }
    let n = problem.n();
    let mut out = vec![0.0; n];
    let block = 256;
    for start in (0..n).step_by(block) {
        let idx: Vec<usize> = (start..(start + block).min(n)).collect();
        let cols = problem.columns(&idx)?;
        for (c, &j) in idx.iter().enumerate() {
            let vj = v[j];
            for (o, k) in out.iter_mut().zip(cols.col_as_slice(c)) {
                *o += vj * k;
            }
        }
    }
    Ok(out)
}

/// Lemma 2.2: `‖∂R/∂w‖²/(2λ) = gᵀKg/(2λ)`, `g = (f − y)/n + λα` (α zero off the basis).
fn gradient_bound(
    problem: &GreedyProblem<'_>,
    basis: &[usize],
    alpha: &[f64],
    fitted: &[f64],
) -> Result<f64> {
    let n = problem.n() as f64;
    let lambda = problem.lambda();
    let mut g: Vec<f64> = fitted
        .iter()
        .zip(problem.y())
        .map(|(f, y)| (f - y) / n)
        .collect();
    for (&j, a) in basis.iter().zip(alpha) {
        g[j] += lambda * a;
    }
    Ok(dot(&g, &gram_times(problem, &g)?) / (2.0 * lambda))
}

/// κ distinct indices drawn uniformly from 0..n.
fn candidates(rng: &mut ChaCha8Rng, n: usize, kappa: usize) -> Vec<usize> {
    rand::seq::index::sample(rng, n, kappa).into_vec()
}

// ---------------------------------------------------------------------------------------
// Algorithm 2: random basis, exact refit.

fn random(problem: &GreedyProblem<'_>, run: &mut Run) -> Result<()> {
    let n = problem.n();
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut run.rng);
    let mut fit = SubsetFit::new(n, problem.lambda(), problem.r_zero());
    for &j in order.iter().take(run.max_steps()) {
        let c = problem.column(j)?;
        let probe = fit.probe(j, &c, problem.y());
        if probe.is_independent() {
            fit.append(j, c, probe)?;
        }
        if !run.record_refit(problem, j, &fit)? {
            break;
        }
    }
    run.set_state(refit_state(&fit));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Algorithms 1 and 3 with the exact refit on the grown basis.

/// Full greedy's per-candidate state: rows of `P = L⁻¹A_{S,:}` (k×n), `t = Pᵀz`, the Schur
/// complements `s_i = d_i − ‖P_{:,i}‖²` and `b = Ky/n`.
struct AllCandidates {
    p_rows: Vec<Vec<f64>>,
    t: Vec<f64>,
    schur: Vec<f64>,
    d: Vec<f64>,
    b: Vec<f64>,
}

fn refit_loop(problem: &GreedyProblem<'_>, algorithm: Algorithm, run: &mut Run) -> Result<()> {
    let n = problem.n();
    let (nf, lambda, y) = (n as f64, problem.lambda(), problem.y());
    let mut fit = SubsetFit::new(n, lambda, problem.r_zero());
    let mut all = problem
        .gram()
        .filter(|_| algorithm == Algorithm::Greedy)
        .map(|g| {
            let d: Vec<f64> = linalg::col_sq_norms(g)
                .iter()
                .enumerate()
                .map(|(i, cc)| cc / nf + lambda * g[(i, i)])
                .collect();
            AllCandidates {
                p_rows: Vec::new(),
                t: vec![0.0; n],
                schur: d.clone(),
                d,
                b: linalg::mat_t_vec(g, y).iter().map(|v| v / nf).collect(),
            }
        });
    for _ in 0..run.max_steps() {
        let chosen = match (&all, algorithm) {
            (Some(ac), _) => match best_of_all(ac) {
                Some(j) => {
                    let c = problem.column(j)?;
                    let l: Vec<f64> = ac.p_rows.iter().map(|row| row[j]).collect();
                    let probe = fit.probe_with(j, &c, y, l);
                    Some((j, c, probe))
                }
                None => None,
            },
            (None, Algorithm::KappaGreedy { kappa }) => {
                let cand = candidates(&mut run.rng, n, kappa);
                let cols = problem.columns(&cand)?;
                let probes = fit.probe_batch(&cand, cols.as_ref(), y);
                let best = (0..cand.len()).filter(|&c| probes[c].gain > 0.0).fold(
                    None,
                    |b: Option<usize>, c| match b {
                        Some(b) if probes[b].gain >= probes[c].gain => Some(b),
                        _ => Some(c),
                    },
                );
                best.map(|c| (cand[c], cols.col_as_slice(c).to_vec(), probes[c].clone()))
            }
            _ => unreachable!("full greedy always holds the Gram matrix"),
        };
        let Some((j, c, probe)) = chosen else {
            run.reason = StopReason::NoImprovement;
            break;
        };
        if let (Some(ac), Some(g)) = (all.as_mut(), problem.gram()) {
            extend_candidates(ac, g, &c, &probe.l, nf, lambda, j, probe.schur);
        }
        fit.append(j, c, probe)?;
        if !run.record_refit(problem, j, &fit)? {
            break;
        }
    }
    run.set_state(refit_state(&fit));
    Ok(())
}

/// The candidate with the largest refit gain `½(b_i − t_i)²/s_i`, if any gains.
fn best_of_all(ac: &AllCandidates) -> Option<usize> {
    (0..ac.t.len())
        .into_par_iter()
        .filter(|&i| ac.schur[i] > SCHUR_RTOL * ac.d[i] && ac.d[i] > 0.0)
        .map(|i| (i, (ac.b[i] - ac.t[i]).powi(2) / ac.schur[i]))
        .filter(|(_, g)| *g > 0.0)
        .reduce_with(|a, b| {
            if b.1 > a.1 || (b.1 == a.1 && b.0 < a.0) {
                b
            } else {
                a
            }
        })
        .map(|(i, _)| i)
}

/// Add the row of `P = L⁻¹A_{S,:}` for the new basis point j: `A_{j,i} = (Kc)_i/n + λc_i`,
/// `P_{new,i} = (A_{j,i} − l_jᵀP_{:,i})/δ_j`; then `t += P_new z_j`, `s −= P_new²`.
#[allow(clippy::too_many_arguments)]
fn extend_candidates(
    ac: &mut AllCandidates,
    gram: &faer::Mat<f64>,
    c: &[f64],
    l: &[f64],
    nf: f64,
    lambda: f64,
    j: usize,
    schur: f64,
) {
    let kc = linalg::mat_t_vec(gram, c);
    let delta = schur.sqrt();
    let zj = (ac.b[j] - ac.t[j]) / delta;
    let mut row: Vec<f64> = (0..kc.len()).map(|i| kc[i] / nf + lambda * c[i]).collect();
    for (lr, pr) in l.iter().zip(&ac.p_rows) {
        for (v, p) in row.iter_mut().zip(pr) {
            *v -= lr * p;
        }
    }
    for v in &mut row {
        *v /= delta;
    }
    for (i, v) in row.iter().enumerate() {
        ac.t[i] += v * zj;
        ac.schur[i] -= v * v;
    }
    ac.p_rows.push(row);
}
