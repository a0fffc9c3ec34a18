//! Gram and cross-covariance matrices of constants, and of sums, products and scalings of
//! kernels entry by entry from their terms' matrices, so that each term takes its own fast
//! path (e.g. the certified SVM's prior `k + 1` fills `k` with the vectorised exponential).

use faer::Mat;

use super::Kernel;

impl Kernel {
    /// The `rows`×`cols` matrix of a `Constant`, or of a `Sum`, `Product` or `Scale` (of a
    /// kernel without a fast path of its own) from `of` applied to its parts, with
    /// [`Kernel::eval`]'s arithmetic per entry; `None` for other kernels.
    pub(super) fn composite_matrix(
        &self,
        (rows, cols): (usize, usize),
        of: impl Fn(&Kernel) -> Mat<f64>,
    ) -> Option<Mat<f64>> {
        match self {
            Kernel::Constant { ln_variance } => {
                let v = ln_variance.exp();
                Some(Mat::from_fn(rows, cols, |_, _| v))
            }
            // A constant term (the certified SVM's bias prior) is added in place.
            Kernel::Sum { left, right } => Some(match (left.as_ref(), right.as_ref()) {
                (body, Kernel::Constant { ln_variance }) => {
                    add_constant(of(body), ln_variance.exp())
                }
                (Kernel::Constant { ln_variance }, body) => {
                    add_constant(of(body), ln_variance.exp())
                }
                _ => zip_with(of(left), &of(right), |a, b| a + b),
            }),
            Kernel::Product { left, right } => Some(zip_with(of(left), &of(right), |a, b| a * b)),
            Kernel::Scale { ln_variance, inner } if inner.stationary_parts().is_none() => {
                let v = ln_variance.exp();
                let mut m = of(inner);
                for j in 0..m.ncols() {
                    m.col_as_slice_mut(j).iter_mut().for_each(|a| *a *= v);
                }
                Some(m)
            }
            _ => None,
        }
    }
}

/// `a_ij ← a_ij + v`.
fn add_constant(mut a: Mat<f64>, v: f64) -> Mat<f64> {
    for j in 0..a.ncols() {
        a.col_as_slice_mut(j).iter_mut().for_each(|x| *x += v);
    }
    a
}

/// `a_ij ← f(a_ij, b_ij)` for two matrices of one shape.
fn zip_with(mut a: Mat<f64>, b: &Mat<f64>, f: impl Fn(f64, f64) -> f64) -> Mat<f64> {
    debug_assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    for j in 0..a.ncols() {
        let bj = b.col_as_slice(j);
        for (x, y) in a.col_as_slice_mut(j).iter_mut().zip(bj) {
            *x = f(*x, *y);
        }
    }
    a
}
