//! Projected L-BFGS in a box (Byrd, Lu, Nocedal & Zhu 1995, simplified): the two-loop
//! direction on the free variables, a strong-Wolfe line search, projection onto the box, seeded
//! multistart; why it stopped goes into the [`OptimReport`].

use super::*;

/// Evaluation that treats an error or a non-finite value as "no good".
pub(super) fn eval(obj: &dyn Objective, x: &[f64], evals: &mut u64) -> Option<(f64, Vec<f64>)> {
    *evals += 1;
    match obj.value_and_gradient(x) {
        Ok((v, g)) if v.is_finite() && g.iter().all(|g| g.is_finite()) => Some((v, g)),
        _ => None,
    }
}

pub(super) fn project(x: &mut [f64], bounds: &Option<Vec<(f64, f64)>>) {
    if let Some(b) = bounds {
        for (xi, (lo, hi)) in x.iter_mut().zip(b) {
            *xi = xi.clamp(*lo, *hi);
        }
    }
}

/// Projected gradient: components pushing against an active bound are zeroed.
pub(super) fn projected_grad(x: &[f64], g: &[f64], bounds: &Option<Vec<(f64, f64)>>) -> Vec<f64> {
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
pub(super) fn active_set(
    x: &[f64],
    g: &[f64],
    bounds: &Option<Vec<(f64, f64)>>,
) -> Vec<Option<f64>> {
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
pub(super) fn hold_at_bounds(d: &mut [f64], x: &[f64], bounds: &Option<Vec<(f64, f64)>>) {
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
pub(super) fn lbfgs_direction(
    g: &[f64],
    s_hist: &[Vec<f64>],
    y_hist: &[Vec<f64>],
    free: &[bool],
) -> Vec<f64> {
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
/// (`line_search::wolfe`) along the projected path.
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
                message: format!("value {v:.4e}"),
            })
        }
        Err(e) => return Err(e),
    };
    evals += 1;
    let (mut s_hist, mut y_hist): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (Vec::new(), Vec::new());
    let mut termination = Termination::MaxIterations;
    let mut iterations = 0;
    // The objective at the start and after each iteration, for the stall rule.
    let mut values = vec![f];
    let mut stall_fall = 0.0;
    for it in 0..cfg.max_iter {
        if stop::requested() {
            // The iterates only ever decrease f: the current point is the best seen.
            termination = Termination::Stopped;
            iterations = it as u64;
            break;
        }
        iterations = it as u64 + 1;
        let pg = projected_grad(&x, &g, &cfg.bounds);
        if pg.iter().all(|v| v.abs() < cfg.grad_tol) {
            termination = Termination::GradientTolerance;
            iterations = it as u64;
            break;
        }
        let active = active_set(&x, &g, &cfg.bounds);
        let tolerated = cfg.cost_tol * f.abs().max(1.0);
        let (mut accepted, mut predicted_small) = (None, false);
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

            let slope = crate::linalg::dot(&d, &pg);
            if slope >= 0.0 {
                continue;
            }
            if attempt == 0 && !s_hist.is_empty() && -0.5 * slope <= tolerated {
                // The quasi-Newton model's decrease at its minimiser (the full step) is below
                // what the cost tolerance counts: near an optimum a line search would only
                // probe round-off, so both attempts get a short budget, and failing them is
                // convergence. A model that underestimates (e.g. from few pairs) still gets
                // its step where one exists.
                predicted_small = true;
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
                match (predicted_small, attempt) {
                    (true, _) => 3,
                    (false, 0) => 20,
                    (false, _) => 10,
                },
            );
            if accepted.is_some() {
                break;
            }
        }
        if accepted.is_none() && predicted_small {
            termination = Termination::CostTolerance;
            iterations = it as u64;
            break;
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
        stop::count_iteration();
        if decrease.abs() <= cfg.cost_tol * f.abs().max(1.0) {
            termination = Termination::CostTolerance;
            break;
        }
        values.push(f);
        if let Some(fall) = cfg.stall.and_then(|s| s.fired(&values)) {
            termination = Termination::Stalled;
            stall_fall = fall;
            break;
        }
    }
    let message = match termination {
        Termination::GradientTolerance => format!("projected gradient below {:e}", cfg.grad_tol),
        Termination::CostTolerance => format!("relative decrease below {:e}", cfg.cost_tol),
        Termination::MaxIterations => format!("reached {} iterations", cfg.max_iter),
        Termination::LineSearchFailed => "line search found no decrease".into(),
        Termination::Other => String::new(),
        Termination::Stalled => stall_message(cfg.stall, stall_fall),
        Termination::Stopped => match stop::fired_reason() {
            Some(StopReason::TimeLimit { seconds }) => {
                format!("stopped at the best point so far: the time limit of {seconds} s passed")
            }
            _ => "stopped at the best point so far: interrupted".into(),
        },
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

/// Why the stall rule stopped a run: the fall over its window against the amount it asks.
fn stall_message(stall: Option<Stall>, fall: f64) -> String {
    let Some(s) = stall else {
        return String::new();
    };
    format!(
        "the objective fell by {fall:.2e} over the last {} iterations, less than {:e}",
        s.iterations, s.decrease
    )
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
        if best.is_some() && stop::requested() {
            // Stopped early: the best run so far stands; the other starts are not tried.
            break;
        }
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
