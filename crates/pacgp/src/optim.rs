//! Objectives over ln-space parameters and the optimiser that minimises them.
//!
//! Every training criterion (negative log evidence, LOO, a PAC-Bayes bound) implements
//! [`Objective`]; [`minimize`] runs L-BFGS on it and reports why it stopped.

use serde::{Deserialize, Serialize};

use crate::error::Result;

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
            memory: 10,
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

/// Coordinates held at a bound by a gradient that pushes outward.
fn active_set(x: &[f64], g: &[f64], bounds: &Option<Vec<(f64, f64)>>) -> Vec<bool> {
    match bounds {
        None => vec![false; x.len()],
        Some(b) => x
            .iter()
            .zip(g)
            .zip(b)
            .map(|((xi, gi), (lo, hi))| (*xi <= *lo && *gi > 0.0) || (*xi >= *hi && *gi < 0.0))
            .collect(),
    }
}

/// Backtracking (Armijo) search along `d` from `x`, projecting onto the box; a failing or
/// non-finite point counts as too long a step.
fn line_search(
    obj: &dyn Objective,
    x: &[f64],
    f: f64,
    g: &[f64],
    d: &[f64],
    cfg: &LbfgsConfig,
    evals: &mut u64,
    max_backtracks: usize,
) -> Option<(Vec<f64>, f64, Vec<f64>)> {
    let mut step = 1.0;
    for _ in 0..max_backtracks {
        let mut xn: Vec<f64> = x.iter().zip(d).map(|(x, d)| x + step * d).collect();
        project(&mut xn, &cfg.bounds);
        let moved: Vec<f64> = xn.iter().zip(x).map(|(a, b)| a - b).collect();
        let decrease = crate::linalg::dot(g, &moved);
        let mut next = 0.5 * step;
        if decrease < 0.0 {
            match eval(obj, &xn, evals) {
                Some((fn_, gn)) if fn_ <= f + 1e-4 * decrease => return Some((xn, fn_, gn)),
                Some((fn_, _)) => {
                    // Minimiser of the quadratic through f, the slope and f(x + step·d),
                    // kept within [0.1, 0.5]·step (Nocedal & Wright §3.5).
                    let slope = decrease / step;
                    let q = -slope * step * step / (2.0 * (fn_ - f - slope * step));
                    if q.is_finite() {
                        next = q.clamp(0.1 * step, 0.5 * step);
                    }
                }
                None => {}
            }
        }
        step = next;
    }
    None
}

/// Two-loop recursion: `d = −H ∇` from the stored pairs (Nocedal & Wright Alg. 7.4).
fn lbfgs_direction(g: &[f64], s_hist: &[Vec<f64>], y_hist: &[Vec<f64>]) -> Vec<f64> {
    let dot = crate::linalg::dot;
    let mut q = g.to_vec();
    let k = s_hist.len();
    let mut a = vec![0.0; k];
    for i in (0..k).rev() {
        let rho = 1.0 / dot(&y_hist[i], &s_hist[i]);
        a[i] = rho * dot(&s_hist[i], &q);
        q.iter_mut()
            .zip(&y_hist[i])
            .for_each(|(q, y)| *q -= a[i] * y);
    }
    let gamma = if k > 0 {
        dot(&s_hist[k - 1], &y_hist[k - 1]) / dot(&y_hist[k - 1], &y_hist[k - 1])
    } else {
        1.0 / g.iter().map(|v| v.abs()).fold(1.0, f64::max)
    };
    q.iter_mut().for_each(|q| *q *= gamma);
    for i in 0..k {
        let rho = 1.0 / dot(&y_hist[i], &s_hist[i]);
        let b = rho * dot(&y_hist[i], &q);
        q.iter_mut()
            .zip(&s_hist[i])
            .for_each(|(q, s)| *q += s * (a[i] - b));
    }
    q.iter_mut().for_each(|q| *q = -*q);
    q
}

/// Minimise `obj` from `x0` with L-BFGS and a backtracking (Armijo) line search.
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
                lbfgs_direction(&pg, &s_hist, &y_hist)
            } else {
                s_hist.clear();
                y_hist.clear();
                let scale = 1.0 / pg.iter().map(|v| v.abs()).fold(1.0, f64::max);
                pg.iter().map(|v| -v * scale).collect()
            };
            for (di, a) in d.iter_mut().zip(&active) {
                if *a {
                    *di = 0.0;
                }
            }
            if crate::linalg::dot(&d, &pg) >= 0.0 {
                continue;
            }
            accepted = line_search(
                obj,
                &x,
                f,
                &g,
                &d,
                cfg,
                &mut evals,
                if attempt == 0 { 30 } else { 12 },
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
}
