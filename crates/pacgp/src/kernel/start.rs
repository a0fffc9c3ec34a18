//! Where ML-II starts a stationary kernel's lengthscales on wide inputs: the median heuristic.
//!
//! Every lengthscale starts at 1 by default, as in scikit-learn, GPyTorch and GPflow. On
//! standardised inputs the expected squared distance between two rows is `2D`, so at `l = 1`
//! a squared exponential kernel is about `exp(−D)` between typical rows: with hundreds of
//! inputs (a table with one-hot coded text columns) the Gram matrix is numerically the
//! identity, the marginal likelihood is flat around the start and L-BFGS stops there after a
//! few iterations with a model no better than the mean. Wide inputs instead start every
//! lengthscale at the median distance between rows (the median heuristic of kernel methods,
//! Schölkopf & Smola 2002 §4.4; Gretton et al. 2012, JMLR 13, §8), where the kernel between a
//! median pair is `exp(−½)` for the squared exponential: neither diagonal nor constant.
//!
//! The start is a function of the (standardised) inputs and the seed only, never the targets.
//! It does not touch a certificate either way: gpr's θ is snapped onto the grid and priced by
//! the grid's union bound over every θ on it (`T·ln L`), whatever the start.
//!
//! From that start the fit gains most of its evidence in a few dozen iterations and then creeps
//! on, lengthscales of inputs without signal drifting towards the box's end; on wide inputs it
//! stops by a stall rule instead ([`WIDE_STALL`]), where further iterations cannot matter.

use faer::MatRef;

use super::Kernel;
use crate::data::split::subsample;
use crate::optim::Stall;

/// Inputs above which a stationary kernel's lengthscales start at the median distance. At
/// `l = 1` a typical pair's SE kernel value is then below `exp(−20) ≈ 2·10⁻⁹`; at or below
/// it the start stays 1, so the fits of narrower data (Boston's 13 inputs, scikit-learn's
/// examples, every published number the project reproduces) do not move.
pub const WIDE_INPUTS: usize = 20;

/// The stall rule of ML-II on wide inputs ([`wide_stall`]): stop once the negative log
/// marginal likelihood (nats, summed over the rows and targets) fell by less than 0.1 over the
/// last 10 L-BFGS iterations. Between the two ends of such a window the Bayes factor is below
/// `e^0.1 ≈ 1.1`, far under what evidence can tell apart (Jeffreys' "barely worth mentioning"
/// reaches 3; Kass & Raftery 1995, §3.2), and a run that gains that little per ten iterations
/// is only drifting lengthscales of inputs without signal towards the box's end. On the
/// 341-input table of `scripts/make_wide_table.py` (N = 2 300) it stops at iteration 103 of
/// the cap's 200, 0.37 nats below the capped run's evidence, with the same test RMSE (22.71
/// against 22.75). An amount of 0.01 would stop there only at iteration 143.
pub const WIDE_STALL: Stall = Stall {
    iterations: 10,
    decrease: 0.1,
};

/// The stall rule for ML-II on `inputs` inputs: [`WIDE_STALL`] above [`WIDE_INPUTS`], none at
/// or below (those fits run to the usual tests and keep their bits).
pub fn wide_stall(inputs: usize) -> Option<Stall> {
    (inputs > WIDE_INPUTS).then_some(WIDE_STALL)
}

/// Rows of the seeded subsample ML-II starts on for wide inputs ([`wide_pretrain`]).
///
/// On the 341-input table of `scripts/make_wide_table.py` (N = 2 300, 77 parameters) the fit
/// from the median start spends 103 iterations on all rows; from a warm start on 500 rows
/// (128 iterations there, each 1% of one on all rows) it needs 54 on all rows, 1.8× less CPU
/// time, with test RMSE 22.07 against 22.71. A start on 1 000 rows left 65 on all rows.
pub const WIDE_PRETRAIN_ROWS: usize = 500;

/// The warm start of gpr's ML-II on `inputs` inputs and `n` rows: above [`WIDE_INPUTS`] and
/// from twice [`WIDE_PRETRAIN_ROWS`] rows, the search first runs on that many seeded rows,
/// where an evaluation costs `(k/N)³` of one on all rows and most of the iterations over a
/// wide kernel's many lengthscales are spent; none otherwise (those fits keep their bits).
pub fn wide_pretrain(inputs: usize, n: usize) -> Option<usize> {
    (inputs > WIDE_INPUTS && n >= 2 * WIDE_PRETRAIN_ROWS).then_some(WIDE_PRETRAIN_ROWS)
}

/// Most rows the median is taken over (a seeded subsample of larger samples): 1 000 rows give
/// 499 500 pairs, enough for a median to about 0.2% and a few hundred million flops at
/// hundreds of inputs.
pub const MEDIAN_ROWS: usize = 1000;

/// The median Euclidean distance `‖xᵢ − xⱼ‖` over the pairs `i < j` of `x`'s rows (over a
/// subsample of [`MEDIAN_ROWS`] rows drawn with `seed` when there are more), the mean of the
/// two middle values for an even count; `None` with fewer than two rows or a median of 0 (more
/// than half the pairs identical), where no scale can be read off.
pub fn median_distance(x: MatRef<'_, f64>, seed: u64) -> Option<f64> {
    let mut d = pair_distances(x, &median_rows(x.nrows(), seed));
    let m = crate::metrics::median(&mut d)?;
    (m > 0.0 && m.is_finite()).then_some(m)
}

/// The rows of a sample of `n` rows that [`median_distance`] takes the median over, in
/// increasing order: the seeded subsample of [`MEDIAN_ROWS`] rows when there are more, else
/// all. A fit over shards gathers these rows to its driver ([`crate::fit::sharded`]); there,
/// at most [`MEDIAN_ROWS`] rows, [`median_distance`] takes them all, in the same order.
pub fn median_rows(n: usize, seed: u64) -> Vec<usize> {
    subsample(n, MEDIAN_ROWS, seed).unwrap_or_else(|| (0..n).collect())
}

/// The distances between every pair of the given rows of `x`.
fn pair_distances(x: MatRef<'_, f64>, rows: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(rows.len() * rows.len().saturating_sub(1) / 2);
    for (a, &i) in rows.iter().enumerate() {
        for &j in &rows[a + 1..] {
            let s: f64 = (0..x.ncols())
                .map(|t| (x[(i, t)] - x[(j, t)]).powi(2))
                .sum();
            out.push(s.sqrt());
        }
    }
    out
}

/// Where ML-II starts `kernel` on the inputs `x` (as the optimiser sees them): with more than
/// [`WIDE_INPUTS`] inputs and a stationary part, every stationary lengthscale at the median
/// distance (returned with the kernel); otherwise `None`, the kernel's own start.
pub fn wide_start(kernel: &Kernel, x: MatRef<'_, f64>, seed: u64) -> Option<(Kernel, f64)> {
    if x.ncols() <= WIDE_INPUTS || !kernel.has_stationary() {
        return None;
    }
    let l = median_distance(x, seed)?;
    Some((kernel.with_stationary_lengthscales(l), l))
}

/// How [`wide_start_noted`]'s note begins (a model file's notes say whether its fit started
/// wide).
pub const WIDE_START_NOTE: &str = "lengthscales started at";

/// [`wide_start`] for a fit's report: the kernel to start from and, where the start moved, a
/// note saying where and why (`flat`: what the start 1 does to this method's objective).
pub fn wide_start_noted(
    kernel: Kernel,
    x: MatRef<'_, f64>,
    seed: u64,
    flat: &str,
) -> (Kernel, Option<String>) {
    match wide_start(&kernel, x, seed) {
        Some((wide, l)) => {
            let note = format!(
                "{WIDE_START_NOTE} {l:.4}, the median distance between the {} standardised inputs of the rows (the median heuristic; above {WIDE_INPUTS} inputs the start 1 {flat})",
                x.ncols(),
            );
            (wide, Some(note))
        }
        None => (kernel, None),
    }
}

impl Kernel {
    /// Whether any base kernel is stationary (has lengthscales a distance scale applies to).
    pub fn has_stationary(&self) -> bool {
        match self {
            Kernel::Stationary { .. } => true,
            Kernel::Scale { inner, .. } => inner.has_stationary(),
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.has_stationary() || right.has_stationary()
            }
            _ => false,
        }
    }

    /// This kernel with every stationary base kernel's lengthscales set to `l` (other
    /// hyperparameters unchanged).
    pub fn with_stationary_lengthscales(&self, l: f64) -> Kernel {
        let mut k = self.clone();
        k.set_stationary_lengthscales(l.ln());
        k
    }

    /// Set every stationary base kernel's ln lengthscales to `ln_l`.
    fn set_stationary_lengthscales(&mut self, ln_l: f64) {
        match self {
            Kernel::Stationary { ln_lengthscale, .. } => ln_lengthscale.fill(ln_l),
            Kernel::Scale { inner, .. } => inner.set_stationary_lengthscales(ln_l),
            Kernel::Sum { left, right } | Kernel::Product { left, right } => {
                left.set_stationary_lengthscales(ln_l);
                right.set_stationary_lengthscales(ln_l);
            }
            _ => {}
        }
    }
}
