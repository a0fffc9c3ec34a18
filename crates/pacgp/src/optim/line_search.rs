//! Line searches along a projected L-BFGS direction: the path `x(α) = P(x + αd)` (P the
//! projection onto the box), `φ(α) = f(x(α))`, `φ'(α) = ∇f(x(α))ᵀ dx/dα`, over steps up to the
//! path's first breakpoint ([`max_step`]).
//!
//! [`wolfe`] looks for a step with sufficient decrease and a flattened slope (the strong Wolfe
//! conditions, `φ(α) ≤ φ(0) + c₁αφ'(0)` and `|φ'(α)| ≤ c₂|φ'(0)|`; Nocedal & Wright 2006,
//! Alg. 3.5 bracketing and Alg. 3.6 zoom, with safeguarded cubic interpolation, the
//! conditions of L-BFGS-B's `dcsrch`: c₁ = 1e-3, c₂ = 0.9): the curvature pairs it leaves are
//! the ones a quasi-Newton model needs, and it lengthens a step that was too short, where a
//! backtracking search only shortens. A point where the objective fails (a Cholesky that fails
//! even with jitter) or is non-finite counts as too long a step.

use super::{eval, project, LbfgsConfig, Objective};

/// An accepted point: parameters, value, gradient.
pub(super) type Point = (Vec<f64>, f64, Vec<f64>);

/// Sufficient-decrease constant c₁ (L-BFGS-B's ftol).
const C1: f64 = 1e-3;
/// Curvature constant c₂ (L-BFGS-B's gtol).
const C2: f64 = 0.9;
/// Relative bracket width at which a zoom settles for its lower end (L-BFGS-B's xtol).
const XTOL: f64 = 0.1;

/// One evaluated step along the path.
#[derive(Clone)]
struct Step {
    alpha: f64,
    value: f64,
    slope: f64,
    point: Option<Point>,
}

/// The path's point, value and slope at `alpha` (`None` where the objective fails).
fn probe(
    obj: &dyn Objective,
    x: &[f64],
    d: &[f64],
    alpha: f64,
    cfg: &LbfgsConfig,
    evals: &mut u64,
) -> Step {
    let mut xn: Vec<f64> = x.iter().zip(d).map(|(x, d)| x + alpha * d).collect();
    project(&mut xn, &cfg.bounds);
    match eval(obj, &xn, evals) {
        Some((f, g)) => {
            // dx/dα: d on coordinates strictly inside their box, 0 on clamped ones.
            let slope = path_slope(&xn, x, d, alpha, &g);
            Step {
                alpha,
                value: f,
                slope,
                point: Some((xn, f, g)),
            }
        }
        None => Step {
            alpha,
            value: f64::INFINITY,
            slope: f64::NAN,
            point: None,
        },
    }
}

/// `φ'(α)`: the gradient along the coordinates the projection did not clamp at `alpha`.
fn path_slope(xn: &[f64], x: &[f64], d: &[f64], alpha: f64, g: &[f64]) -> f64 {
    xn.iter()
        .zip(x)
        .zip(d)
        .zip(g)
        .filter(|(((xn, x), d), _)| **x + alpha * **d == **xn)
        .map(|(((_, _), d), g)| d * g)
        .sum()
}

/// The first breakpoint of the path: the largest step that keeps every coordinate inside its
/// box (∞ without a box), as L-BFGS-B's `stpmax`. A search that stops there leaves that
/// coordinate on its bound, in the next iteration's active set; past it the path would bend
/// and its slope jump, which no step could make flat (the strong Wolfe condition fails there).
pub(super) fn max_step(x: &[f64], d: &[f64], cfg: &LbfgsConfig) -> f64 {
    let Some(b) = &cfg.bounds else {
        return f64::INFINITY;
    };
    x.iter()
        .zip(d)
        .zip(b)
        .filter(|((_, d), _)| **d != 0.0)
        .map(|((x, d), (lo, hi))| if *d > 0.0 { (hi - x) / d } else { (lo - x) / d })
        .fold(f64::INFINITY, f64::min)
        .max(0.0)
}

/// Minimiser of the cubic through two steps' values and slopes (Nocedal & Wright eq. 3.59),
/// kept inside `[lo, hi]`; bisection where the cubic has no minimiser there.
fn cubic_min(a: &Step, b: &Step, lo: f64, hi: f64) -> f64 {
    let d1 = a.slope + b.slope - 3.0 * (a.value - b.value) / (a.alpha - b.alpha);
    let disc = d1 * d1 - a.slope * b.slope;
    let mid = 0.5 * (lo + hi);
    if !(disc >= 0.0) || !disc.is_finite() {
        return mid;
    }
    let d2 = (b.alpha - a.alpha).signum() * disc.sqrt();
    let t = b.alpha - (b.alpha - a.alpha) * (b.slope + d2 - d1) / (b.slope - a.slope + 2.0 * d2);
    if t.is_finite() {
        t.clamp(lo, hi)
    } else {
        mid
    }
}

/// A strong-Wolfe step along `d` from `x` (module doc), starting at `alpha0`, within
/// `max_evals` evaluations; if the budget runs out, the best point with sufficient decrease.
#[allow(clippy::too_many_arguments)]
pub(super) fn wolfe(
    obj: &dyn Objective,
    x: &[f64],
    f: f64,
    g: &[f64],
    d: &[f64],
    alpha0: f64,
    cfg: &LbfgsConfig,
    evals: &mut u64,
    max_evals: usize,
) -> Option<Point> {
    let slope0 = crate::linalg::dot(g, d);
    if !(slope0 < 0.0) {
        return None;
    }
    let origin = Step {
        alpha: 0.0,
        value: f,
        slope: slope0,
        point: None,
    };
    let cap = max_step(x, d, cfg);
    let armijo = |s: &Step| s.value <= f + C1 * s.alpha * slope0;
    let curvature = |s: &Step| s.slope.abs() <= -C2 * slope0;
    let mut prev = origin.clone();
    let mut alpha = alpha0.min(cap);
    let mut used = 0;
    while used < max_evals {
        let cur = probe(obj, x, d, alpha, cfg, evals);
        used += 1;
        if cur.point.is_none() || !armijo(&cur) || (prev.alpha > 0.0 && cur.value >= prev.value) {
            return zoom(
                obj,
                x,
                f,
                d,
                slope0,
                prev,
                cur,
                cfg,
                evals,
                max_evals - used,
            );
        }
        if curvature(&cur) {
            return cur.point;
        }
        if cur.slope >= 0.0 {
            return zoom(
                obj,
                x,
                f,
                d,
                slope0,
                cur,
                prev,
                cfg,
                evals,
                max_evals - used,
            );
        }
        if cur.alpha >= cap {
            return cur.point; // a coordinate has reached its bound
        }
        // Still descending steeply: lengthen, by the cubic's minimiser within [1.1α, 4α].
        let next = cubic_min(&prev, &cur, 1.1 * cur.alpha, 4.0 * cur.alpha).min(cap);
        prev = cur;
        alpha = next;
    }
    prev.point
}

/// Alg. 3.6: shrink the bracket `[lo, hi]` (`lo` has sufficient decrease and the lower value)
/// until a step satisfies both conditions; the best `lo` if the budget runs out.
#[allow(clippy::too_many_arguments)]
fn zoom(
    obj: &dyn Objective,
    x: &[f64],
    f: f64,
    d: &[f64],
    slope0: f64,
    mut lo: Step,
    mut hi: Step,
    cfg: &LbfgsConfig,
    evals: &mut u64,
    budget: usize,
) -> Option<Point> {
    // Steps that move no parameter by more than this resolve nothing the objective's
    // rounding does not blur (L-BFGS-B's stpmin plays this part).
    let scale = x.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    let d_max = d.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    for _ in 0..budget {
        let (a, b) = (lo.alpha.min(hi.alpha), lo.alpha.max(hi.alpha));
        let width = b - a;
        if width * d_max <= 1e-10 * scale {
            break;
        }
        // A bracket within a tenth of its far end that holds a point with sufficient decrease
        // settles for it (L-BFGS-B's dcsrch stops on the same xtol test).
        if lo.point.is_some() && width <= XTOL * b {
            break;
        }
        let (inner_lo, inner_hi) = (a + 0.1 * width, b - 0.1 * width);
        let alpha = if hi.point.is_none() || !hi.slope.is_finite() {
            // No slope past a failed point: the quadratic through lo's value and slope and
            // hi's value if finite, else a step back towards lo.
            let q = if hi.value.is_finite() {
                let dt = hi.alpha - lo.alpha;
                lo.alpha - lo.slope * dt * dt / (2.0 * (hi.value - lo.value - lo.slope * dt))
            } else {
                f64::NAN
            };
            if q.is_finite() {
                q.clamp(inner_lo, inner_hi)
            } else {
                lo.alpha + 0.25 * (hi.alpha - lo.alpha)
            }
        } else {
            cubic_min(&lo, &hi, inner_lo, inner_hi)
        };
        let cur = probe(obj, x, d, alpha, cfg, evals);
        if cur.point.is_none() || cur.value > f + C1 * alpha * slope0 || cur.value >= lo.value {
            hi = cur;
        } else {
            if cur.slope.abs() <= -C2 * slope0 {
                return cur.point;
            }
            if cur.slope * (hi.alpha - lo.alpha) >= 0.0 {
                hi = lo;
            }
            lo = cur;
        }
    }
    lo.point
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Result;

    /// `f(x) = Σ_i w_i (x_i − c_i)²`.
    struct Bowl {
        w: Vec<f64>,
        c: Vec<f64>,
    }

    impl Objective for Bowl {
        fn dim(&self) -> usize {
            self.c.len()
        }
        fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
            let v = (0..p.len())
                .map(|i| self.w[i] * (p[i] - self.c[i]).powi(2))
                .sum();
            let g = (0..p.len())
                .map(|i| 2.0 * self.w[i] * (p[i] - self.c[i]))
                .collect();
            Ok((v, g))
        }
    }

    /// A unit step that is ten times too short is lengthened, and the step taken satisfies
    /// both strong Wolfe conditions.
    #[test]
    fn a_short_step_is_lengthened_to_a_strong_wolfe_point() {
        let obj = Bowl {
            w: vec![1.0, 3.0],
            c: vec![10.0, -5.0],
        };
        let (x, d) = (vec![0.0, 0.0], vec![1.0, -0.5]);
        let (f0, g0) = obj.value_and_gradient(&x).unwrap();
        let slope0 = crate::linalg::dot(&g0, &d);
        let cfg = LbfgsConfig::default();
        let mut evals = 0;
        let (xn, fnew, gn) = wolfe(&obj, &x, f0, &g0, &d, 0.1, &cfg, &mut evals, 20).unwrap();
        let alpha = xn[0];
        assert!(alpha > 0.1, "lengthened: α = {alpha}");
        assert!(fnew <= f0 + C1 * alpha * slope0);
        assert!(crate::linalg::dot(&gn, &d).abs() <= C2 * slope0.abs());
        assert!(evals <= 4, "{evals} evaluations");
    }

    /// The search stops at the path's first breakpoint (that coordinate lands on its bound)
    /// rather than bending the path there.
    #[test]
    fn the_step_stops_at_the_first_bound_it_reaches() {
        let obj = Bowl {
            w: vec![1.0, 1.0],
            c: vec![10.0, 10.0],
        };
        let cfg = LbfgsConfig {
            bounds: Some(vec![(-1.0, 2.0), (-1.0, 20.0)]),
            ..Default::default()
        };
        let (x, d) = (vec![0.0, 0.0], vec![0.5, 0.5]);
        assert_eq!(max_step(&x, &d, &cfg), 4.0);
        let (f0, g0) = obj.value_and_gradient(&x).unwrap();
        let mut evals = 0;
        let (xn, _, _) = wolfe(&obj, &x, f0, &g0, &d, 1.0, &cfg, &mut evals, 20).unwrap();
        assert_eq!(xn, vec![2.0, 2.0]);
    }
}
