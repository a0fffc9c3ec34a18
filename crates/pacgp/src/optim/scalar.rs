//! Minimising a function of one variable without a gradient: an evenly spaced grid, then
//! golden-section search on the bracket around the grid's best point. Used where a bound is
//! minimised over a single noise level (the sparse split prior's σ² on part B). An error of
//! the function is returned, never read as an infinite value.

use crate::error::Result;

/// Golden-section steps after the grid (the bracket shrinks by 0.618³⁰ ≈ 5e-7).
const GOLDEN_STEPS: usize = 30;

/// The minimiser of `f` over `[lo, hi]` given as `(lo, hi, step)`: the best point of the grid
/// `lo, lo + step, …, hi`, refined by golden section on the bracket of its neighbours (the
/// refined point is kept only if it is no worse than the grid's best).
pub fn grid_then_golden(
    (lo, hi, step): (f64, f64, f64),
    f: impl Fn(f64) -> Result<f64>,
) -> Result<f64> {
    let n = ((hi - lo) / step).round() as usize;
    let grid: Vec<f64> = (0..=n).map(|k| lo + step * k as f64).collect();
    let vals = grid.iter().map(|t| f(*t)).collect::<Result<Vec<f64>>>()?;
    let k = (0..grid.len())
        .min_by(|&i, &j| vals[i].total_cmp(&vals[j]))
        .unwrap_or(0);
    let (mut a, mut b) = (grid[k.saturating_sub(1)], grid[(k + 1).min(n)]);
    let g = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..GOLDEN_STEPS {
        let (c, d) = (b - g * (b - a), a + g * (b - a));
        if f(c)? < f(d)? {
            b = d;
        } else {
            a = c;
        }
    }
    let mid = 0.5 * (a + b);
    Ok(if f(mid)? <= vals[k] { mid } else { grid[k] })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn finds_the_minimum_between_grid_points_and_keeps_an_edge_minimum() {
        let t = grid_then_golden((-8.0, 4.0, 0.5), |t| Ok((t - 0.3).powi(2))).unwrap();
        assert!((t - 0.3).abs() < 1e-5, "{t}");
        let edge = grid_then_golden((-8.0, 4.0, 0.5), Ok).unwrap();
        assert!((edge + 8.0).abs() < 1e-5, "{edge}");
    }

    #[test]
    fn an_error_of_the_function_is_returned() {
        let r = grid_then_golden((-1.0, 1.0, 0.5), |t| {
            if t > 0.7 {
                Err(Error::Empty { what: "test" })
            } else {
                Ok(t * t)
            }
        });
        assert!(matches!(r, Err(Error::Empty { .. })));
    }
}
