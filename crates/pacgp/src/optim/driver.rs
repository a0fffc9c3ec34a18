//! The one minimisation driver every trained model goes through: box-constrained L-BFGS over
//! ln-space parameters from a start plus seeded restarts, optionally snapping the kernel's
//! θ onto the PAC grid (docs/math.md §2.4) afterwards, with the optimiser's report. The default
//! boxes live here, once.

use crate::bounds::{HyperGrid, SnapGrid};
use crate::error::Result;

use super::{minimize, multistart, random_starts, LbfgsConfig, Objective, OptimReport};

/// Default boxes in ln space, shared by every driver.
pub mod boxes {
    /// Kernel θ of plain ML-II: scikit-learn's `(1e-5, 1e5)`.
    pub const LN_THETA: (f64, f64) = (-11.512_925_464_970_229, 11.512_925_464_970_229);
    /// Noise variance σ² on standardised targets, `(1e-6, 1e5)`: the lower end is the noise
    /// floor (it keeps the posterior variance positive).
    pub const LN_NOISE: (f64, f64) = (-13.815_510_557_964_274, 11.512_925_464_970_229);
    /// The probit slope λ, `(1e-2, 1e2)`.
    pub const LN_PROBIT_SLOPE: (f64, f64) = (-4.605_170_185_988_091, 4.605_170_185_988_091);
    /// The probit bias b (not in ln space).
    pub const PROBIT_BIAS: (f64, f64) = (-5.0, 5.0);
    /// Unconstrained coordinates (e.g. inducing inputs).
    pub const FREE: (f64, f64) = (f64::NEG_INFINITY, f64::INFINITY);
}

/// Seeded random restarts around the start (uniform within `± spread` in every coordinate).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Restarts {
    /// Restarts besides the given start.
    pub count: usize,
    /// Half-width of the box the restart points are drawn from.
    pub spread: f64,
    /// Seed of the draws.
    pub seed: u64,
}

impl Default for Restarts {
    fn default() -> Self {
        Self {
            count: 0,
            spread: 1.0,
            seed: 0,
        }
    }
}

/// Snap the first `n` parameters (the kernel's θ) onto `grid` after optimising. Their boxes are
/// intersected with the grid's range first, so snapping only rounds (≤ half a grid step) and
/// never clamps. With `refit_free` the other (uncharged) parameters are then minimised again
/// with θ held at its grid value (docs/math.md §9.2: the snap of a coarse grid moves the model,
/// and the free parameters recover most of it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridSnap {
    /// The grid.
    pub grid: SnapGrid,
    /// How many leading parameters are snapped.
    pub n: usize,
    /// Re-minimise the parameters after the first `n` at the snapped θ.
    pub refit_free: bool,
}

impl GridSnap {
    /// The first `n` parameters rounded onto the decimal `grid`, the rest left where they are.
    pub fn decimal(grid: HyperGrid, n: usize) -> Self {
        Self {
            grid: SnapGrid::Decimal(grid),
            n,
            refit_free: false,
        }
    }

    /// The paper's grid for the first `n` parameters.
    pub fn paper(n: usize) -> Self {
        Self::decimal(HyperGrid::default(), n)
    }

    /// The snap of the first `n` parameters onto `grid`, if a grid is given.
    pub fn leading(grid: Option<HyperGrid>, n: usize) -> Option<Self> {
        grid.map(|grid| Self::decimal(grid, n))
    }

    /// The first `n` parameters onto a coarse prior's `grid`, the rest re-minimised there.
    pub fn coarse(grid: SnapGrid, n: usize) -> Self {
        Self {
            grid,
            n,
            refit_free: true,
        }
    }

    /// `params` with the first `n` entries rounded onto the grid.
    pub fn apply(&self, params: &[f64]) -> Vec<f64> {
        let mut p = params.to_vec();
        let snapped = self.grid.round(&p[..self.n]);
        p[..self.n].copy_from_slice(&snapped);
        p
    }

    /// `bounds` with the first `n` boxes intersected with the grid's range.
    fn restrict(&self, bounds: &mut [(f64, f64)]) {
        let (lo, hi) = self.grid.range();
        for b in &mut bounds[..self.n] {
            *b = (b.0.max(lo), b.1.min(hi));
        }
    }
}

/// What the driver found: the parameters to use (snapped if asked) and the optimiser's report
/// (whose `params` are the unsnapped optimum).
#[derive(Clone, Debug)]
pub struct Minimum {
    /// The parameters to use.
    pub params: Vec<f64>,
    /// The optimiser's report at the unsnapped optimum.
    pub report: OptimReport,
    /// Whether `params` were snapped onto a grid.
    pub snapped: bool,
}

/// Minimise `obj` from `x0` within `bounds` (one box per parameter) with L-BFGS, plus seeded
/// restarts; keep the best run; snap the leading parameters onto a grid if asked.
pub fn drive(
    obj: &dyn Objective,
    x0: &[f64],
    mut bounds: Vec<(f64, f64)>,
    lbfgs: &LbfgsConfig,
    restarts: &Restarts,
    snap: Option<&GridSnap>,
) -> Result<Minimum> {
    if bounds.len() != x0.len() || x0.len() != obj.dim() {
        return Err(crate::Error::ShapeMismatch {
            what: "optimiser start and boxes",
            expected: format!("{} parameters", obj.dim()),
            found: format!("{} start values, {} boxes", x0.len(), bounds.len()),
        });
    }
    if let Some(s) = snap {
        s.restrict(&mut bounds);
    }
    // Start inside the box: a start outside it would be projected anyway.
    let start: Vec<f64> = x0
        .iter()
        .zip(&bounds)
        .map(|(x, (lo, hi))| x.clamp(*lo, *hi))
        .collect();
    let cfg = LbfgsConfig {
        bounds: Some(bounds),
        ..lbfgs.clone()
    };
    let report = if restarts.count == 0 {
        minimize(obj, &start, &cfg)?
    } else {
        let starts = random_starts(&start, restarts.spread, restarts.count, restarts.seed);
        multistart(obj, &starts, &cfg)?
    };
    let mut report = report;
    let (params, snapped) = match snap {
        Some(s) if s.refit_free => {
            let theta = s.grid.round(&report.params[..s.n]);
            let free = &report.params[s.n..];
            let free_bounds = &cfg.bounds.as_deref().unwrap_or_default()[s.n..];
            let (params, refit) = refit_free(obj, &theta, free, free_bounds, lbfgs)?;
            report = with_refit(report, &refit);
            (params, true)
        }
        Some(s) => (s.apply(&report.params), true),
        None => (report.params.clone(), false),
    };
    Ok(Minimum {
        params,
        report,
        snapped,
    })
}

/// A warm start for [`drive_warm`]: the same objective on a seeded subsample of the rows.
pub struct WarmStart<'a> {
    /// The objective on the subsample.
    pub objective: &'a dyn Objective,
    /// Rows in the subsample.
    pub rows: usize,
    /// Rows in the whole sample.
    pub of: usize,
}

/// How a warm start went (reported with the fit).
#[derive(Clone, Debug)]
pub struct Pretraining {
    /// Rows in the subsample.
    pub rows: usize,
    /// Rows in the whole sample.
    pub of: usize,
    /// The optimiser's report on the subsample.
    pub report: OptimReport,
}

impl Pretraining {
    /// A line for the fit report's notes.
    pub fn note(&self) -> String {
        let r = &self.report;
        let how = if r.converged() {
            "converged".to_string()
        } else {
            format!("stopped: {}", r.message)
        };
        format!(
            "optimised first on a seeded subsample of {} of the {} rows ({} iterations, {} evaluations, {how}), then on all rows from there",
            self.rows, self.of, r.iterations, r.evaluations
        )
    }
}

/// How a parameter vector is searched: the box of every parameter, where the leading θ is
/// snapped afterwards, and the iteration budgets of the run on all rows and of a warm start.
/// The in-process sparse fits and the sharded fit of the same spec search alike.
#[derive(Clone, Debug)]
pub struct Search {
    /// Box of every parameter.
    pub bounds: Vec<(f64, f64)>,
    /// Where θ is snapped after the search, if anywhere.
    pub snap: Option<GridSnap>,
    /// L-BFGS on all rows.
    pub lbfgs: LbfgsConfig,
    /// L-BFGS of a warm start on a subsample.
    pub warm_lbfgs: LbfgsConfig,
}

impl Search {
    /// Minimise `obj` from `x0` (after `warm`'s objective, if any) and snap θ
    /// ([`drive_warm`], no restarts).
    pub fn minimise(
        &self,
        obj: &dyn Objective,
        warm: Option<&WarmStart>,
        x0: &[f64],
    ) -> Result<(Minimum, Option<Pretraining>)> {
        drive_warm(
            obj,
            warm,
            x0,
            self.bounds.clone(),
            &self.lbfgs,
            &self.warm_lbfgs,
            &Restarts::default(),
            self.snap.as_ref(),
        )
    }
}

/// [`drive`] with an optional warm start: minimise `warm`'s objective from `x0` within the
/// same boxes (with `warm_lbfgs`, no restarts, no snap), then `obj` from where it stopped.
/// Large samples reach the optimum's neighbourhood at the subsample's cost per evaluation.
pub fn drive_warm(
    obj: &dyn Objective,
    warm: Option<&WarmStart>,
    x0: &[f64],
    bounds: Vec<(f64, f64)>,
    lbfgs: &LbfgsConfig,
    warm_lbfgs: &LbfgsConfig,
    restarts: &Restarts,
    snap: Option<&GridSnap>,
) -> Result<(Minimum, Option<Pretraining>)> {
    let Some(w) = warm else {
        return Ok((drive(obj, x0, bounds, lbfgs, restarts, snap)?, None));
    };
    let first = drive(
        w.objective,
        x0,
        bounds.clone(),
        warm_lbfgs,
        &Restarts::default(),
        None,
    )?;
    let min = drive(obj, &first.params, bounds, lbfgs, restarts, snap)?;
    let pre = Pretraining {
        rows: w.rows,
        of: w.of,
        report: first.report,
    };
    Ok((min, Some(pre)))
}

/// Re-minimise the free parameters with the leading θ held at its snapped value; the
/// parameters and that run's report.
fn refit_free(
    obj: &dyn Objective,
    theta: &[f64],
    free0: &[f64],
    free_bounds: &[(f64, f64)],
    lbfgs: &LbfgsConfig,
) -> Result<(Vec<f64>, OptimReport)> {
    let mut x0 = theta.to_vec();
    x0.extend_from_slice(free0);
    let mut bounds: Vec<(f64, f64)> = theta.iter().map(|t| (*t, *t)).collect();
    bounds.extend_from_slice(free_bounds);
    let min = drive(obj, &x0, bounds, lbfgs, &Restarts::default(), None)?;
    let mut p = min.params;
    // The box pins θ; copy it back exactly so the penalty sees grid values.
    p[..theta.len()].copy_from_slice(theta);
    Ok((p, min.report))
}

/// The main run's report, unless the re-minimisation after the snap stopped without
/// converging: then its stop reason, so a cap reached there is reported, not silent.
fn with_refit(report: OptimReport, refit: &OptimReport) -> OptimReport {
    if refit.converged() {
        return report;
    }
    OptimReport {
        termination: refit.termination,
        message: format!(
            "the free parameters' re-minimisation after snapping θ to the grid: {}",
            refit.message
        ),
        ..report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optim::Termination;

    /// `f(x) = Σ (x_i − c_i)²` with its gradient.
    struct Quadratic(Vec<f64>);

    impl Objective for Quadratic {
        fn dim(&self) -> usize {
            self.0.len()
        }
        fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
            let v = p.iter().zip(&self.0).map(|(x, c)| (x - c).powi(2)).sum();
            let g = p.iter().zip(&self.0).map(|(x, c)| 2.0 * (x - c)).collect();
            Ok((v, g))
        }
    }

    /// A re-minimisation after the snap that stops without converging names itself in the
    /// report (its stop reason, not the main run's); a converged one leaves the report alone.
    #[test]
    fn a_refit_that_stops_at_its_cap_is_reported() {
        let main = OptimReport {
            params: vec![0.0],
            value: 1.0,
            iterations: 7,
            evaluations: 9,
            termination: Termination::GradientTolerance,
            message: "gradient below tolerance".into(),
        };
        let capped = OptimReport {
            termination: Termination::MaxIterations,
            message: "reached 3 iterations".into(),
            ..main.clone()
        };
        let r = with_refit(main.clone(), &capped);
        assert_eq!(r.termination, Termination::MaxIterations);
        assert!(
            r.message.contains("re-minimisation after snapping")
                && r.message.contains("3 iterations")
        );
        assert_eq!((r.iterations, r.evaluations), (7, 9));
        assert!(r.note().is_some());
        let fine = with_refit(main.clone(), &main);
        assert_eq!(fine.message, main.message);
        assert!(fine.note().is_none());
    }

    /// The minimiser of a separable quadratic in a box is the clamped centre; snapping only
    /// rounds the leading coordinates, whose box is the grid's range.
    #[test]
    fn boxed_minimum_is_the_clamped_centre_and_snapping_rounds_within_the_grid() {
        let obj = Quadratic(vec![0.123_456, 9.0, -20.0]);
        let m = drive(
            &obj,
            &[0.0, 0.0, 0.0],
            vec![boxes::LN_THETA, boxes::LN_THETA, boxes::LN_NOISE],
            &LbfgsConfig::default(),
            &Restarts::default(),
            Some(&GridSnap::paper(2)),
        )
        .unwrap();
        assert!((m.report.params[0] - 0.123_456).abs() < 1e-6);
        // θ₂ wants 9 but the grid's box stops it at 6; σ² stops at the noise floor.
        assert!((m.report.params[1] - 6.0).abs() < 1e-9);
        assert!((m.report.params[2] - boxes::LN_NOISE.0).abs() < 1e-9);
        assert_eq!(&m.params[..2], &[0.12, 6.0]);
        assert_eq!(m.params[2], m.report.params[2]);
        assert!(m.snapped);
    }

    #[test]
    fn restarts_keep_the_best_run_and_bad_shapes_are_errors() {
        let obj = Quadratic(vec![1.0, -2.0]);
        let r = Restarts {
            count: 3,
            spread: 2.0,
            seed: 7,
        };
        let m = drive(
            &obj,
            &[5.0, 5.0],
            vec![boxes::FREE; 2],
            &LbfgsConfig::default(),
            &r,
            None,
        )
        .unwrap();
        assert!(m.report.value < 1e-10 && !m.snapped);
        assert!(drive(
            &obj,
            &[0.0],
            vec![boxes::FREE; 2],
            &LbfgsConfig::default(),
            &r,
            None
        )
        .is_err());
    }

    /// `f = (x₀ − 0.37)² + (x₁ − x₀)²`: a coupled pair whose free x₁ follows x₀.
    struct Coupled;

    impl Objective for Coupled {
        fn dim(&self) -> usize {
            2
        }
        fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
            let (a, b) = (p[0] - 0.37, p[1] - p[0]);
            Ok((a * a + b * b, vec![2.0 * a - 2.0 * b, 2.0 * b]))
        }
    }

    /// A coarse grid of step 0.25 snaps x₀ = 0.37 to 0.25; re-minimising the free x₁ there
    /// moves it to 0.25 (its minimiser given x₀), where a plain snap leaves it at 0.37.
    #[test]
    fn a_coarse_snap_re_minimises_the_free_parameters_at_the_grid_value() {
        let grid = SnapGrid::Spaced {
            min_log: -6.0,
            max_log: 6.0,
            step: 0.25,
        };
        let run = |snap: GridSnap| {
            drive(
                &Coupled,
                &[0.0, 0.0],
                vec![boxes::FREE; 2],
                &LbfgsConfig::default(),
                &Restarts::default(),
                Some(&snap),
            )
            .unwrap()
            .params
        };
        let coarse = run(GridSnap::coarse(grid, 1));
        assert_eq!(coarse[0], 0.25);
        assert!((coarse[1] - 0.25).abs() < 1e-7, "{coarse:?}");
        let plain = run(GridSnap {
            refit_free: false,
            ..GridSnap::coarse(grid, 1)
        });
        assert_eq!(plain[0], 0.25);
        assert!((plain[1] - 0.37).abs() < 1e-6, "{plain:?}");
    }
}
