//! Gradient checks by central differences, shared by the unit and integration tests (and
//! usable by anyone adding an analytic gradient): one rule for the step, one for the
//! tolerance, and failures that name the coordinate.
//!
//! **The estimate.** `f'(x) ≈ (f(x + h) − f(x − h)) / (2h)` in each coordinate. Its error is
//! the truncation `h²·|f'''|/6` plus the round-off `≈ ε_mach·|f|/h` of the subtraction
//! (`ε_mach ≈ 2.2e-16`).
//!
//! **The step rule.** The two errors balance at `h ≈ (3 ε_mach |f| / |f'''|)^{1/3}`, about
//! `1e-5` for functions and third derivatives of order one — [`DEFAULT_STEP`]. In ln-space
//! coordinates (θ = ln value, the library's convention) this is a relative change of the
//! value, so one step serves every scale. A smaller step (1e-6) suits cheap, well-scaled
//! functions whose third derivative is large (kernels in their inputs, kl⁻¹); a test chooses
//! its step next to its tolerance and says why.
//!
//! **The tolerance rule.** A check passes when, in every coordinate,
//! `|numeric − analytic| ≤ abs + rel·min(|numeric|, |analytic|)` ([`Tolerance`]). Using the
//! smaller magnitude means the check is never looser than `t·(1 + |numeric|)` or
//! `t·(1 + |analytic|)`, the two forms tests have used. Pick the tolerance at least ~100× the
//! error estimate above ([`central_difference_error`]), so a pass is not luck and any wrong
//! term (typically ≥ 1e-3 relative) fails; the usual choice is [`Tolerance::mixed`]`(1e-6)`.
//!
//! The `assert_*` functions panic on a failed check (they exist to be called from tests) and
//! the panic points at the calling line (`#[track_caller]`); nothing in the library's
//! model-fitting paths calls them.

use crate::optim::Objective;

/// Default central-difference step for coordinates of order one (ln-space parameters).
pub const DEFAULT_STEP: f64 = 1e-5;

/// Acceptance rule for one coordinate: `|numeric − analytic| ≤ abs + rel·min(|numeric|, |analytic|)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute part, what a gradient near zero may be off by.
    pub abs: f64,
    /// Relative part, scaled by the smaller of the two magnitudes.
    pub rel: f64,
}

impl Tolerance {
    /// `t·(1 + |g|)`: relative for large gradients, absolute `t` near zero (the usual choice).
    pub const fn mixed(t: f64) -> Self {
        Self { abs: t, rel: t }
    }

    /// A purely absolute tolerance, for quantities of known order one.
    pub const fn absolute(t: f64) -> Self {
        Self { abs: t, rel: 0.0 }
    }

    /// The largest difference allowed between `numeric` and `analytic`.
    pub fn allowed(&self, numeric: f64, analytic: f64) -> f64 {
        self.abs + self.rel * numeric.abs().min(analytic.abs())
    }
}

/// Error estimate of a central difference with step `h` for a function of magnitude
/// `f_scale` whose third derivative has magnitude `third_derivative_scale`:
/// truncation `h²·f'''/6` plus round-off `ε_mach·|f|/h`.
pub fn central_difference_error(h: f64, f_scale: f64, third_derivative_scale: f64) -> f64 {
    h * h * third_derivative_scale / 6.0 + f64::EPSILON * f_scale / h
}

/// Central difference `(f(x + h) − f(x − h)) / (2h)` of a function of one variable.
pub fn central_difference(mut f: impl FnMut(f64) -> f64, x: f64, h: f64) -> f64 {
    (f(x + h) - f(x - h)) / (2.0 * h)
}

/// Central-difference gradient of `f` at `x`, one coordinate at a time with step `h`
/// (`2·len(x)` evaluations of `f`).
pub fn central_difference_gradient(
    mut f: impl FnMut(&[f64]) -> f64,
    x: &[f64],
    h: f64,
) -> Vec<f64> {
    let mut p = x.to_vec();
    (0..x.len())
        .map(|k| {
            p[k] = x[k] + h;
            let up = f(&p);
            p[k] = x[k] - h;
            let down = f(&p);
            p[k] = x[k];
            (up - down) / (2.0 * h)
        })
        .collect()
}

/// The coordinate where an analytic gradient is furthest from its numerical estimate,
/// measured against the tolerance (`ratio ≤ 1` passes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorstCoordinate {
    /// Index of the coordinate.
    pub coordinate: usize,
    /// Analytic derivative there.
    pub analytic: f64,
    /// Central-difference estimate there.
    pub numeric: f64,
    /// Difference allowed there by the tolerance.
    pub allowed: f64,
    /// `|numeric − analytic| / allowed` (NaN counts as +∞).
    pub ratio: f64,
}

impl WorstCoordinate {
    /// Whether the whole gradient passed (the worst coordinate is within its tolerance).
    pub fn passed(&self) -> bool {
        self.ratio <= 1.0
    }
}

/// Compare an analytic gradient with a numerical one and return the worst coordinate
/// (`None` for empty gradients).
///
/// # Panics
/// If the two gradients differ in length (a bug in the calling test).
pub fn worst_coordinate(
    analytic: &[f64],
    numeric: &[f64],
    tol: Tolerance,
) -> Option<WorstCoordinate> {
    assert_eq!(analytic.len(), numeric.len(), "gradient lengths differ");
    analytic
        .iter()
        .zip(numeric)
        .enumerate()
        .map(|(coordinate, (&a, &n))| {
            let allowed = tol.allowed(n, a);
            let ratio = (n - a).abs() / allowed;
            WorstCoordinate {
                coordinate,
                analytic: a,
                numeric: n,
                allowed,
                ratio: if ratio.is_nan() { f64::INFINITY } else { ratio },
            }
        })
        .max_by(|a, b| a.ratio.total_cmp(&b.ratio))
}

/// Assert that `analytic` matches `numeric` within `tol` in every coordinate; the panic
/// message names `what`, the worst coordinate and both values.
///
/// # Panics
/// When a coordinate is outside the tolerance, or the lengths differ.
#[track_caller]
pub fn assert_gradients_close(analytic: &[f64], numeric: &[f64], tol: Tolerance, what: &str) {
    if let Some(w) = worst_coordinate(analytic, numeric, tol) {
        assert!(
            w.passed(),
            "{what}: coordinate {} analytic {:e} vs central difference {:e} \
             (|diff| {:e} > allowed {:e})",
            w.coordinate,
            w.analytic,
            w.numeric,
            (w.numeric - w.analytic).abs(),
            w.allowed
        );
    }
}

/// Check `analytic` against the central-difference gradient of `f` at `x` with step `h`.
///
/// # Panics
/// When a coordinate is outside `tol` (the message names `what` and the coordinate).
#[track_caller]
pub fn assert_gradient_close(
    f: impl FnMut(&[f64]) -> f64,
    x: &[f64],
    analytic: &[f64],
    h: f64,
    tol: Tolerance,
    what: &str,
) {
    let numeric = central_difference_gradient(f, x, h);
    assert_gradients_close(analytic, &numeric, tol, what);
}

/// Check an [`Objective`]'s analytic gradient at `x` against the central differences of its
/// value with step `h` (both unwrapped: a failed evaluation panics too).
///
/// # Panics
/// When an evaluation fails or a coordinate is outside `tol` (the message names `what`).
#[track_caller]
pub fn assert_objective_gradient<O: Objective + ?Sized>(
    obj: &O,
    x: &[f64],
    h: f64,
    tol: Tolerance,
    what: &str,
) {
    let (_, analytic) = obj.value_and_gradient(x).unwrap();
    assert_gradient_close(|q| obj.value(q).unwrap(), x, &analytic, h, tol, what);
}

/// One-variable form of [`assert_gradient_close`].
///
/// # Panics
/// When the derivative is outside `tol`.
#[track_caller]
pub fn assert_derivative_close(
    f: impl FnMut(f64) -> f64,
    x: f64,
    analytic: f64,
    h: f64,
    tol: Tolerance,
    what: &str,
) {
    let numeric = central_difference(f, x, h);
    assert_gradients_close(&[analytic], &[numeric], tol, what);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f(x) = Σ sin(x_k)·x_{k+1} + x₀³: the estimate agrees with the known gradient to the
    /// error the step rule predicts.
    #[test]
    fn central_differences_of_a_known_function() {
        let f = |x: &[f64]| x[0].sin() * x[1] + x[1].sin() * x[2] + x[0].powi(3);
        let x: [f64; 3] = [0.3, -1.2, 2.0];
        let grad = [
            x[0].cos() * x[1] + 3.0 * x[0] * x[0],
            x[0].sin() + x[1].cos() * x[2],
            x[1].sin(),
        ];
        let numeric = central_difference_gradient(f, &x, DEFAULT_STEP);
        let bound = 100.0 * central_difference_error(DEFAULT_STEP, 3.0, 7.0);
        for k in 0..3 {
            assert!((numeric[k] - grad[k]).abs() < bound, "coordinate {k}");
        }
        assert_gradient_close(f, &x, &grad, DEFAULT_STEP, Tolerance::mixed(1e-8), "known");
        assert!((central_difference(f64::exp, 1.0, 1e-5) - 1.0f64.exp()).abs() < 1e-9);
    }

    /// A wrong coordinate is found and named, and NaN never passes.
    #[test]
    fn worst_coordinate_names_the_wrong_one() {
        let analytic = [1.0, 2.0, 3.0];
        let numeric = [1.0, 2.1, 3.000_000_1];
        let w = worst_coordinate(&analytic, &numeric, Tolerance::mixed(1e-6)).unwrap();
        assert_eq!(w.coordinate, 1);
        assert!(!w.passed());
        let w = worst_coordinate(&[f64::NAN], &[0.0], Tolerance::mixed(1.0)).unwrap();
        assert!(!w.passed());
        assert!(worst_coordinate(&[], &[], Tolerance::mixed(1.0)).is_none());
        let r = std::panic::catch_unwind(|| {
            assert_gradients_close(&analytic, &numeric, Tolerance::mixed(1e-6), "demo")
        });
        assert!(r.is_err());
    }

    /// The acceptance region is never wider than `t(1 + |numeric|)` or `t(1 + |analytic|)`.
    #[test]
    fn tolerance_is_no_looser_than_either_mixed_form() {
        let t = Tolerance::mixed(1e-6);
        for &(n, a) in &[(10.0, 10.1), (-3.0, 2.0), (0.0, 5.0), (1e3, 1e3 + 1e-3)] {
            let allowed = t.allowed(n, a);
            assert!(allowed <= 1e-6 * (1.0 + f64::abs(n)) && allowed <= 1e-6 * (1.0 + f64::abs(a)));
        }
        assert_eq!(Tolerance::absolute(1e-7).allowed(5.0, 5.0), 1e-7);
    }
}
