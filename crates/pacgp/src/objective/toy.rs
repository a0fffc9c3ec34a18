//! Small deterministic problems shared by the objectives' unit tests: 2-D inputs on a
//! scrambled grid in [−2, 2)², with a noisy sine target or labels from a curved boundary.

use faer::Mat;

/// `n` rows of the scrambled grid (it repeats after 41 rows).
fn grid(n: usize) -> Mat<f64> {
    Mat::from_fn(n, 2, |i, j| {
        (((i * 17 + j * 29) % 41) as f64 / 41.0) * 4.0 - 2.0
    })
}

/// The grid with targets `sin x₁ + 0.5 x₂` plus a deterministic wiggle.
pub(crate) fn sine(n: usize) -> (Mat<f64>, Vec<f64>) {
    let x = grid(n);
    let wiggle = |i: usize| 0.2 * (((i * 7) % 5) as f64 - 2.0) / 2.0;
    let y = (0..n)
        .map(|i| x[(i, 0)].sin() + 0.5 * x[(i, 1)] + wiggle(i))
        .collect();
    (x, y)
}

/// The grid with labels ±1: the sign of `sin x₁ + 0.4 x₂` plus a deterministic wiggle (not
/// separable by a line).
pub(crate) fn classes(n: usize) -> (Mat<f64>, Vec<f64>) {
    let x = grid(n);
    let wiggle = |i: usize| 0.3 * (((i * 7) % 5) as f64 - 2.0) / 2.0;
    let sign = |t: f64| if t > 0.0 { 1.0 } else { -1.0 };
    let y = (0..n)
        .map(|i| sign(x[(i, 0)].sin() + 0.4 * x[(i, 1)] + wiggle(i)))
        .collect();
    (x, y)
}
