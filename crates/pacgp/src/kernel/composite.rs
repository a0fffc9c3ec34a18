//! Gram and cross-covariance matrices of constants, and of sums, products and scalings of
//! kernels entry by entry from their terms' matrices, so that each term takes its own fast
//! path (e.g. the certified SVM's prior `k + 1` fills `k` with the vectorised exponential).

use faer::Mat;

use super::Kernel;
use crate::error::Result;

impl Kernel {
    /// The `rows`×`cols` matrix of a `Constant`, or of a `Sum`, `Product` or `Scale` (of a
    /// kernel without a fast path of its own) from `of` applied to its parts, with
    /// [`Kernel::eval`]'s arithmetic per entry; `None` for other kernels. A matrix that
    /// cannot be had is [`crate::error::Error::OutOfMemory`].
    pub(super) fn composite_matrix(
        &self,
        (rows, cols): (usize, usize),
        of: impl Fn(&Kernel) -> Result<Mat<f64>>,
    ) -> Option<Result<Mat<f64>>> {
        let constant = |v: f64| {
            let mut m = crate::memory::try_zeros(rows, cols, super::matrices::CROSS)?;
            m.fill(v);
            Ok(m)
        };
        Some(match self {
            Kernel::Constant { ln_variance } => constant(ln_variance.exp()),
            // A constant term (the certified SVM's bias prior) is added in place.
            Kernel::Sum { left, right } => match (left.as_ref(), right.as_ref()) {
                (body, Kernel::Constant { ln_variance }) => {
                    of(body).map(|m| add_constant(m, ln_variance.exp()))
                }
                (Kernel::Constant { ln_variance }, body) => {
                    of(body).map(|m| add_constant(m, ln_variance.exp()))
                }
                _ => of(left).and_then(|a| Ok(zip_with(a, &of(right)?, |a, b| a + b))),
            },
            Kernel::Product { left, right } => {
                of(left).and_then(|a| Ok(zip_with(a, &of(right)?, |a, b| a * b)))
            }
            Kernel::Scale { ln_variance, inner } if inner.stationary_parts().is_none() => {
                let v = ln_variance.exp();
                of(inner).map(|mut m| {
                    for j in 0..m.ncols() {
                        m.col_as_slice_mut(j).iter_mut().for_each(|a| *a *= v);
                    }
                    m
                })
            }
            _ => return None,
        })
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
