//! Objectives over ln-space parameters and the optimiser that minimises them.
//!
//! Every training criterion (negative log evidence, LOO, a PAC-Bayes bound) implements
//! [`Objective`]; [`minimize`] runs L-BFGS on it and reports why it stopped, and
//! [`driver::drive`] is the one driver every model trains through (boxes, seeded restarts,
//! snapping onto the PAC grid).

use serde::{Deserialize, Serialize};

use crate::error::Result;

pub mod driver;
mod line_search;
pub mod scalar;
pub use driver::{boxes, drive, GridSnap, Minimum, Restarts};

/// A differentiable function of a flat parameter vector (θ in ln space and friends).
pub trait Objective {
    /// Number of parameters.
    fn dim(&self) -> usize;
    /// Value and gradient at `params`. An error (e.g. a failed Cholesky) is reported to the
    /// optimiser as an infinitely bad point.
    fn value_and_gradient(&self, params: &[f64]) -> Result<(f64, Vec<f64>)>;
    /// Value only; defaults to the value of [`Objective::value_and_gradient`].
    fn value(&self, params: &[f64]) -> Result<f64> {
        self.value_and_gradient(params).map(|(v, _)| v)
    }
}

/// Why an optimisation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// Gradient norm below tolerance.
    GradientTolerance,
    /// Relative change of the objective below tolerance.
    CostTolerance,
    /// Iteration budget exhausted.
    MaxIterations,
    /// Line search could not make progress.
    LineSearchFailed,
    /// Something else (text in the report).
    Other,
}

/// Result of one optimisation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OptimReport {
    /// Best parameters found.
    pub params: Vec<f64>,
    /// Objective value there.
    pub value: f64,
    /// Iterations taken.
    pub iterations: u64,
    /// Objective evaluations.
    pub evaluations: u64,
    /// Why it stopped.
    pub termination: Termination,
    /// Human-readable detail of the stop reason.
    pub message: String,
}

impl OptimReport {
    /// Whether the run stopped on a convergence test (gradient or relative decrease), rather
    /// than on its iteration budget, a failed line search or something else.
    pub fn converged(&self) -> bool {
        matches!(
            self.termination,
            Termination::GradientTolerance | Termination::CostTolerance
        )
    }

    /// A sentence for the user when the run did not converge (the front ends print or raise
    /// it; the library never prints).
    pub fn note(&self) -> Option<String> {
        let why = match self.termination {
            Termination::GradientTolerance | Termination::CostTolerance => return None,
            Termination::MaxIterations => "hit its iteration limit",
            Termination::LineSearchFailed => "stopped on a failed line search",
            Termination::Other => "stopped without a convergence test passing",
        };
        Some(format!(
            "the optimiser {why} after {} iterations ({} evaluations; {}): the parameters may not be at an optimum",
            self.iterations, self.evaluations, self.message
        ))
    }
}

/// Settings of [`minimize`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LbfgsConfig {
    /// Maximum iterations.
    pub max_iter: usize,
    /// Number of stored correction pairs.
    pub memory: usize,
    /// Stop when `‖∇‖_∞ < grad_tol`.
    pub grad_tol: f64,
    /// Stop when the relative decrease of the objective over an iteration is below this.
    pub cost_tol: f64,
    /// Optional box in parameter space: each parameter is projected onto `[lo, hi]`.
    pub bounds: Option<Vec<(f64, f64)>>,
}

impl Default for LbfgsConfig {
    fn default() -> Self {
        Self {
            max_iter: 200,
            // 30 pairs (scipy's default is 10): with the strong-Wolfe search, ML-II on the
            // N = 2000, D = 8 peer benchmark takes 34 evaluations from scikit-learn's start
            // (scikit-learn's L-BFGS-B 37–60; 49 here with 10 pairs and backtracking).
            memory: 30,
            grad_tol: 1e-5,
            // scipy's L-BFGS-B default (factr = 1e7 times machine epsilon).
            cost_tol: 2.2e-9,
            bounds: None,
        }
    }
}

/// Evaluation that treats an error or a non-finite value as "no good".
fn eval(obj: &dyn Objective, x: &[f64], evals: &mut u64) -> Option<(f64, Vec<f64>)> {
    *evals += 1;
    match obj.value_and_gradient(x) {
        Ok((v, g)) if v.is_finite() && g.iter().all(|g| g.is_finite()) => Some((v, g)),
        _ => None,
    }
}

fn project(x: &mut [f64], bounds: &Option<Vec<(f64, f64)>>) {
    if let Some(b) = bounds {
        for (xi, (lo, hi)) in x.iter_mut().zip(b) {
            *xi = xi.clamp(*lo, *hi);
        }
    }
}

/// Projected gradient: components pushing against an active bound are zeroed.
fn projected_grad(x: &[f64], g: &[f64], bounds: &Option<Vec<(f64, f64)>>) -> Vec<f64> {
    match bounds {
        None => g.to_vec(),
        Some(b) => x
            .iter()
            .zip(g)
            .zip(b)
            .map(|((xi, gi), (lo, hi))| {
                if (*xi <= *lo && *gi > 0.0) || (*xi >= *hi && *gi < 0.0) {
                    0.0
                } else {
                    *gi
                }
            })
            .collect(),
    }
}

/// Coordinates within `ε` of a bound that the gradient pushes towards (Bertsekas 1982, the
/// ε-active set of projected Newton methods), with that bound: they step onto it, the others
/// take the quasi-Newton step. `ε = min(1e-3, ‖x − P(x − ∇f)‖_∞)` shrinks to 0 at a KKT point.
/// Without it, a coordinate just short of its bound stays free, the quasi-Newton step carries
/// it over the bound, the projection bends the step, and the line search finds no decrease
/// along it (ML-II with σ_f² at scikit-learn's upper bound 1e5).
fn active_set(x: &[f64], g: &[f64], bounds: &Option<Vec<(f64, f64)>>) -> Vec<Option<f64>> {
    let Some(b) = bounds else {
        return vec![None; x.len()];
    };
    let eps = x
        .iter()
        .zip(g)
        .zip(b)
        .map(|((xi, gi), (lo, hi))| (xi - (xi - gi).clamp(*lo, *hi)).abs())
        .fold(0.0_f64, f64::max)
        .min(1e-3);
    x.iter()
        .zip(g)
        .zip(b)
        .map(|((xi, gi), (lo, hi))| {
            if *xi <= lo + eps && *gi > 0.0 {
                Some(*lo)
            } else if *xi >= hi - eps && *gi < 0.0 {
                Some(*hi)
            } else {
                None
            }
        })
        .collect()
}

/// Zero the direction's entries that would leave the box at once (a free coordinate on its
/// bound that the quasi-Newton step pushes outward), and those that would reach their bound
/// within a millionth of a unit step, so that the path's first breakpoint
/// ([`line_search::max_step`]) is not a vanishing step.
fn hold_at_bounds(d: &mut [f64], x: &[f64], bounds: &Option<Vec<(f64, f64)>>) {
    let Some(b) = bounds else {
        return;
    };
    for ((di, xi), (lo, hi)) in d.iter_mut().zip(x).zip(b) {
        let room = if *di > 0.0 { hi - xi } else { xi - lo };
        if *di != 0.0 && room < 1e-6 * di.abs() {
            *di = 0.0;
        }
    }
}

/// Two-loop recursion: `d = −H ∇` from the stored pairs (Nocedal & Wright Alg. 7.4),
/// restricted to the free coordinates (`free[i]`): coordinates held at a bound are left
/// out of every pair, so the curvature their gradient entries picked up does not bend the
/// step of the others (the reduced Hessian of L-BFGS-B's subspace step). Pairs whose
/// reduced curvature `sᵀy` is not positive are skipped.
fn lbfgs_direction(g: &[f64], s_hist: &[Vec<f64>], y_hist: &[Vec<f64>], free: &[bool]) -> Vec<f64> {
    let dot = |a: &[f64], b: &[f64]| -> f64 {
        a.iter()
            .zip(b)
            .zip(free)
            .filter(|(_, f)| **f)
            .map(|((a, b), _)| a * b)
            .sum()
    };
    let mut q: Vec<f64> = g
        .iter()
        .zip(free)
        .map(|(g, f)| if *f { *g } else { 0.0 })
        .collect();
    let pairs: Vec<(usize, f64)> = (0..s_hist.len())
        .filter_map(|i| {
            let sy = dot(&s_hist[i], &y_hist[i]);
            let scale = (dot(&s_hist[i], &s_hist[i]) * dot(&y_hist[i], &y_hist[i])).sqrt();
            (sy > 1e-12 * scale).then_some((i, 1.0 / sy))
        })
        .collect();
    let mut a = vec![0.0; pairs.len()];
    for (k, &(i, rho)) in pairs.iter().enumerate().rev() {
        a[k] = rho * dot(&s_hist[i], &q);
        q.iter_mut()
            .zip(&y_hist[i])
            .zip(free)
            .filter(|(_, f)| **f)
            .for_each(|((q, y), _)| *q -= a[k] * y);
    }
    let gamma = match pairs.last() {
        Some(&(i, rho)) => 1.0 / (rho * dot(&y_hist[i], &y_hist[i])),
        None => 1.0 / g.iter().map(|v| v.abs()).fold(1.0, f64::max),
    };
    q.iter_mut().for_each(|q| *q *= gamma);
    for (k, &(i, rho)) in pairs.iter().enumerate() {
        let b = rho * dot(&y_hist[i], &q);
        q.iter_mut()
            .zip(&s_hist[i])
            .zip(free)
            .filter(|(_, f)| **f)
            .for_each(|((q, s), _)| *q += s * (a[k] - b));
    }
    q.iter_mut().for_each(|q| *q = -*q);
    q
}

/// Minimise `obj` from `x0` with L-BFGS and a strong-Wolfe line search
/// ([`line_search::wolfe`]) along the projected path.
///
/// A point where the objective fails (e.g. a Cholesky that fails even with jitter) or is
/// non-finite is treated as too long a step, so the search backs off instead of aborting.
/// The objective must be finite at `x0`.
pub fn minimize(obj: &dyn Objective, x0: &[f64], cfg: &LbfgsConfig) -> Result<OptimReport> {
    let mut evals = 0;
    let mut x = x0.to_vec();
    project(&mut x, &cfg.bounds);
    let (mut f, mut g) = match obj.value_and_gradient(&x) {
        Ok(v) if v.0.is_finite() => v,
        Ok((v, _)) => {
            return Err(crate::Error::Numerical {
                what: "objective at the starting point",
                message: format!("value {v}"),
            })
        }
        Err(e) => return Err(e),
    };
    evals += 1;
    let (mut s_hist, mut y_hist): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (Vec::new(), Vec::new());
    let mut termination = Termination::MaxIterations;
    let mut iterations = 0;
    for it in 0..cfg.max_iter {
        iterations = it as u64 + 1;
        let pg = projected_grad(&x, &g, &cfg.bounds);
        if pg.iter().all(|v| v.abs() < cfg.grad_tol) {
            termination = Termination::GradientTolerance;
            iterations = it as u64;
            break;
        }
        let active = active_set(&x, &g, &cfg.bounds);
        let mut accepted = None;
        // Try the L-BFGS direction; if its line search fails, forget the curvature pairs and
        // try steepest descent once before giving up.
        for attempt in 0..2 {
            let mut d = if attempt == 0 {
                let free: Vec<bool> = active.iter().map(|a| a.is_none()).collect();
                lbfgs_direction(&pg, &s_hist, &y_hist, &free)
            } else {
                s_hist.clear();
                y_hist.clear();
                let scale = 1.0 / pg.iter().map(|v| v.abs()).fold(1.0, f64::max);
                pg.iter().map(|v| -v * scale).collect()
            };
            for ((di, a), xi) in d.iter_mut().zip(&active).zip(&x) {
                if let Some(bound) = a {
                    *di = bound - xi; // onto the bound at α = 1
                }
            }
            hold_at_bounds(&mut d, &x, &cfg.bounds);

            if crate::linalg::dot(&d, &pg) >= 0.0 {
                continue;
            }
            accepted = line_search::wolfe(
                obj,
                &x,
                f,
                &g,
                &d,
                1.0,
                cfg,
                &mut evals,
                if attempt == 0 { 20 } else { 10 },
            );
            if accepted.is_some() {
                break;
            }
        }
        let Some((xn, fn_, gn)) = accepted else {
            termination = Termination::LineSearchFailed;
            break;
        };
        let s: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
        let yv: Vec<f64> = gn.iter().zip(&g).map(|(a, b)| a - b).collect();
        if crate::linalg::dot(&s, &yv)
            > 1e-12 * crate::linalg::dot(&yv, &yv).sqrt() * crate::linalg::dot(&s, &s).sqrt()
        {
            s_hist.push(s);
            y_hist.push(yv);
            if s_hist.len() > cfg.memory {
                s_hist.remove(0);
                y_hist.remove(0);
            }
        }
        let decrease = f - fn_;
        x = xn;
        f = fn_;
        g = gn;
        if decrease.abs() <= cfg.cost_tol * f.abs().max(1.0) {
            termination = Termination::CostTolerance;
            break;
        }
    }
    let message = match termination {
        Termination::GradientTolerance => format!("projected gradient below {:e}", cfg.grad_tol),
        Termination::CostTolerance => format!("relative decrease below {:e}", cfg.cost_tol),
        Termination::MaxIterations => format!("reached {} iterations", cfg.max_iter),
        Termination::LineSearchFailed => "line search found no decrease".into(),
        Termination::Other => String::new(),
    };
    Ok(OptimReport {
        params: x,
        value: f,
        iterations,
        evaluations: evals,
        termination,
        message,
    })
}

/// Run [`minimize`] from every start and keep the best result (one shared restart loop
/// for every model). Starts where the objective fails are skipped; if all fail, the first
/// error is returned.
pub fn multistart(
    obj: &dyn Objective,
    starts: &[Vec<f64>],
    cfg: &LbfgsConfig,
) -> Result<OptimReport> {
    let mut best: Option<OptimReport> = None;
    let mut first_err = None;
    for s in starts {
        match minimize(obj, s, cfg) {
            Ok(r) => {
                if best.as_ref().is_none_or(|b| r.value < b.value) {
                    best = Some(r);
                }
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    best.ok_or_else(|| {
        first_err.unwrap_or(crate::Error::Empty {
            what: "optimiser start points",
        })
    })
}

/// `x0` followed by `n` points drawn uniformly within `x0 ± spread` (each coordinate),
/// from a seeded RNG.
pub fn random_starts(x0: &[f64], spread: f64, n: usize, seed: u64) -> Vec<Vec<f64>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = vec![x0.to_vec()];
    for _ in 0..n {
        out.push(
            x0.iter()
                .map(|x| x + rng.gen_range(-spread..=spread))
                .collect(),
        );
    }
    out
}

/// Anderson acceleration (type II, Walker & Ni 2011, SIAM J. Numer. Anal. 49(4)) of a
/// fixed-point iteration `x ← T(x)`: from the last `m + 1` pairs `(T(x_i), f_i = T(x_i) − x_i)`
/// the next iterate is `T(x_k) − ΔG γ` with `γ = argmin ‖f_k − ΔF γ‖`, the differences of
/// consecutive pairs in the columns of `ΔG`, `ΔF`. It leaves the fixed points unchanged and
/// turns slow linear convergence into much faster convergence near them.
#[derive(Clone, Debug)]
pub struct Anderson {
    memory: usize,
    g: std::collections::VecDeque<Vec<f64>>,
    f: std::collections::VecDeque<Vec<f64>>,
}

impl Anderson {
    /// An accelerator mixing up to `memory` differences.
    pub fn new(memory: usize) -> Self {
        Self {
            memory,
            g: Default::default(),
            f: Default::default(),
        }
    }

    /// Forget the history (after a rejected step); the next step is the plain `T(x)`.
    pub fn reset(&mut self) {
        self.g.clear();
        self.f.clear();
    }

    /// The next iterate from the current `x` and `g = T(x)`.
    pub fn next(&mut self, x: &[f64], g: &[f64]) -> Vec<f64> {
        let f: Vec<f64> = g.iter().zip(x).map(|(g, x)| g - x).collect();
        self.g.push_back(g.to_vec());
        self.f.push_back(f);
        while self.g.len() > self.memory + 1 {
            self.g.pop_front();
            self.f.pop_front();
        }
        let k = self.g.len();
        if k < 2 {
            return g.to_vec();
        }
        let diff = |h: &std::collections::VecDeque<Vec<f64>>, j: usize| -> Vec<f64> {
            h[j + 1].iter().zip(&h[j]).map(|(a, b)| a - b).collect()
        };
        let df: Vec<Vec<f64>> = (0..k - 1).map(|j| diff(&self.f, j)).collect();
        let dot = crate::linalg::dot;
        // Normal equations of the small least-squares problem, with a relative ridge.
        let mut a = faer::Mat::from_fn(k - 1, k - 1, |i, j| dot(&df[i], &df[j]));
        let ridge = 1e-10
            * (0..k - 1)
                .map(|i| a[(i, i)])
                .sum::<f64>()
                .max(f64::MIN_POSITIVE);
        for i in 0..k - 1 {
            a[(i, i)] += ridge;
        }
        let fk = &self.f[k - 1];
        let b: Vec<f64> = df.iter().map(|c| dot(c, fk)).collect();
        let Ok(chol) = crate::linalg::Cholesky::factor(
            a.as_ref(),
            &crate::linalg::JitterPolicy::none(),
            "Anderson normal equations",
        ) else {
            self.reset();
            return g.to_vec();
        };
        let gamma = chol.solve_vec(&b);
        let mut out = g.to_vec();
        for (j, gj) in gamma.iter().enumerate() {
            let dg = diff(&self.g, j);
            out.iter_mut().zip(&dg).for_each(|(o, d)| *o -= gj * d);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rosenbrock;
    impl Objective for Rosenbrock {
        fn dim(&self) -> usize {
            2
        }
        fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
            let (x, y) = (p[0], p[1]);
            let v = (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2);
            let gx = -2.0 * (1.0 - x) - 400.0 * x * (y - x * x);
            let gy = 200.0 * (y - x * x);
            Ok((v, vec![gx, gy]))
        }
    }

    /// A quadratic that errors (like a failed Cholesky) for x[0] > 2.
    struct FencedQuadratic;
    impl Objective for FencedQuadratic {
        fn dim(&self) -> usize {
            2
        }
        fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
            if p[0] > 2.0 {
                return Err(crate::Error::Numerical {
                    what: "test",
                    message: "fence".into(),
                });
            }
            Ok((
                (p[0] - 1.5).powi(2) + 3.0 * (p[1] + 1.0).powi(2),
                vec![2.0 * (p[0] - 1.5), 6.0 * (p[1] + 1.0)],
            ))
        }
    }

    /// A coordinate a hair short of its bound, with the minimum beyond it: it joins the
    /// ε-active set and steps onto the bound, and the others converge in a few evaluations
    /// (without the ε-active set each quasi-Newton step carried it over the bound and the
    /// bent path gave the line search no decrease).
    #[test]
    fn a_coordinate_just_short_of_its_bound_steps_onto_it() {
        let cfg = LbfgsConfig {
            bounds: Some(vec![(-5.0, 1.0), (-5.0, 5.0), (-5.0, 5.0)]),
            grad_tol: 1e-10,
            cost_tol: 0.0,
            ..Default::default()
        };
        let r = minimize(&CoupledQuadratic, &[1.0 - 1e-9, 0.0, 0.0], &cfg).unwrap();
        assert_eq!(r.params[0], 1.0);
        assert_eq!(r.termination, Termination::GradientTolerance, "{r:?}");
        assert!(r.evaluations < 20, "{r:?}");
    }

    #[test]
    fn an_iteration_limit_is_reported_with_a_note() {
        let cfg = LbfgsConfig {
            max_iter: 3,
            grad_tol: 1e-12,
            cost_tol: 0.0,
            ..Default::default()
        };
        let r = minimize(&Rosenbrock, &[-1.2, 1.0], &cfg).unwrap();
        assert_eq!(r.termination, Termination::MaxIterations);
        assert!(!r.converged());
        assert!(r.note().unwrap().contains("iteration limit"));
        let full = minimize(&Rosenbrock, &[-1.2, 1.0], &LbfgsConfig::default()).unwrap();
        assert!(full.converged() && full.note().is_none(), "{full:?}");
    }

    #[test]
    fn rosenbrock_minimum_is_found() {
        let cfg = LbfgsConfig {
            max_iter: 500,
            grad_tol: 1e-8,
            cost_tol: 0.0,
            ..Default::default()
        };
        let r = minimize(&Rosenbrock, &[-1.2, 1.0], &cfg).unwrap();
        assert!(
            (r.params[0] - 1.0).abs() < 1e-6 && (r.params[1] - 1.0).abs() < 1e-6,
            "{r:?}"
        );
        assert_eq!(r.termination, Termination::GradientTolerance);
    }

    #[test]
    fn failing_region_is_backed_off_not_fatal() {
        let r = minimize(&FencedQuadratic, &[-10.0, 5.0], &LbfgsConfig::default()).unwrap();
        assert!(
            (r.params[0] - 1.5).abs() < 1e-5 && (r.params[1] + 1.0).abs() < 1e-5,
            "{r:?}"
        );
    }

    #[test]
    fn bounds_are_respected() {
        let cfg = LbfgsConfig {
            bounds: Some(vec![(-5.0, 1.0), (0.0, 5.0)]),
            ..Default::default()
        };
        let r = minimize(&FencedQuadratic, &[0.0, 2.0], &cfg).unwrap();
        assert!(
            (r.params[0] - 1.0).abs() < 1e-9 && r.params[1].abs() < 1e-9,
            "{r:?}"
        );
    }

    #[test]
    fn multistart_keeps_the_best_and_is_seeded() {
        let starts = random_starts(&[0.0, 0.0], 3.0, 4, 9);
        assert_eq!(starts, random_starts(&[0.0, 0.0], 3.0, 4, 9));
        let r = multistart(
            &Rosenbrock,
            &starts,
            &LbfgsConfig {
                max_iter: 1000,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(r.value < 1e-8);
    }

    /// `½xᵀAx − bᵀx` with strongly coupled coordinates.
    struct CoupledQuadratic;
    impl Objective for CoupledQuadratic {
        fn dim(&self) -> usize {
            3
        }
        fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
            let a = [[4.0, 1.9, 0.5], [1.9, 1.0, 0.3], [0.5, 0.3, 2.0]];
            let b = [10.0, 1.0, -1.0];
            let g: Vec<f64> = (0..3)
                .map(|i| (0..3).map(|j| a[i][j] * p[j]).sum::<f64>() - b[i])
                .collect();
            let v = 0.5 * (0..3).map(|i| p[i] * (g[i] - b[i])).sum::<f64>();
            Ok((v, g))
        }
    }

    /// With x₀ held at its upper bound 1 the others solve `A_FF x_F = b_F − A_F0`
    /// (KKT), which the free-subspace curvature pairs reach in a few evaluations.
    #[test]
    fn active_bound_leaves_the_free_coordinates_at_their_kkt_point() {
        let cfg = LbfgsConfig {
            bounds: Some(vec![(-5.0, 1.0), (-5.0, 5.0), (-5.0, 5.0)]),
            grad_tol: 1e-10,
            cost_tol: 0.0,
            ..Default::default()
        };
        let r = minimize(&CoupledQuadratic, &[0.0, 0.0, 0.0], &cfg).unwrap();
        // [1.0 0.3; 0.3 2.0] x_F = [1 − 1.9, −1 − 0.5].
        let det = 1.0 * 2.0 - 0.3 * 0.3;
        let (r1, r2) = (1.0 - 1.9, -1.0 - 0.5);
        let want = [
            1.0,
            (2.0 * r1 - 0.3 * r2) / det,
            (1.0 * r2 - 0.3 * r1) / det,
        ];
        for (got, want) in r.params.iter().zip(want) {
            assert!((got - want).abs() < 1e-7, "{r:?} vs {want:?}");
        }
        assert!(r.evaluations < 40, "{r:?}");
    }

    /// On a slowly contracting linear map `x ← Mx + c` (spectral radius 0.95) Anderson mixing
    /// reaches the fixed point `(I − M)⁻¹c` in far fewer steps than plain iteration.
    #[test]
    fn anderson_accelerates_a_linear_fixed_point_iteration() {
        use faer::linalg::solvers::Solve;
        let n = 12;
        let m = |i: usize, j: usize| {
            if i == j {
                0.95 - 0.05 * i as f64
            } else if i.abs_diff(j) == 1 {
                0.02
            } else {
                0.0
            }
        };
        let c: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let step = |x: &[f64]| -> Vec<f64> {
            (0..n)
                .map(|i| (0..n).map(|j| m(i, j) * x[j]).sum::<f64>() + c[i])
                .collect()
        };
        let ia = faer::Mat::from_fn(n, n, |i, j| f64::from(u8::from(i == j)) - m(i, j));
        let fixed = ia
            .as_ref()
            .partial_piv_lu()
            .solve(faer::Mat::from_fn(n, 1, |i, _| c[i]));
        let err = |x: &[f64]| {
            (0..n)
                .map(|i| (x[i] - fixed[(i, 0)]).abs())
                .fold(0.0, f64::max)
        };
        let (mut plain, mut mixed) = (vec![0.0; n], vec![0.0; n]);
        let mut acc = Anderson::new(5);
        for _ in 0..40 {
            plain = step(&plain);
            let g = step(&mixed);
            mixed = acc.next(&mixed, &g);
        }
        assert!(err(&mixed) < 1e-5, "Anderson error {}", err(&mixed));
        assert!(err(&plain) > 1e-2, "plain error {}", err(&plain));
    }
}
