//! LU with partial pivoting for the nonsymmetric systems of linear-response LOO (mean field's
//! `I + KΛ`, the SVM's bordered margin-SV matrix): faer's blocked factorisation, in place in
//! an owned matrix, with every work space of the size of the data allocated fallibly
//! ([`crate::memory::try_scratch`], [`crate::memory::try_zeros`]) where faer's
//! `partial_piv_lu()` would abort.
//!
//! A singular matrix is not an error here: faer divides by the zero pivot, so the solutions
//! and the inverse hold `±∞` or NaN, which the callers check (they report a singular matrix
//! by the non-finite LOO margins it gives).

use faer::dyn_stack::MemStack;
use faer::linalg::lu::partial_pivoting::{factor, inverse, solve};
use faer::perm::PermRef;
use faer::{Mat, MatMut, MatRef};

use crate::error::{Error, Result};
use crate::memory::{try_scratch, try_zeros};

/// `P A = L U` of a square matrix, stored as faer stores it: `L` (unit lower, its diagonal
/// implied) below the diagonal of one matrix and `U` on and above it, with the row permutation.
#[derive(Clone, Debug)]
pub struct Lu {
    lu: Mat<f64>,
    perm_fwd: Vec<usize>,
    perm_inv: Vec<usize>,
}

impl Lu {
    /// Factors `a` (square) in place. The parallelism is faer's global setting, as in
    /// `partial_piv_lu()`, so the factor is the same bits as faer's own.
    pub fn factor(mut a: Mat<f64>, what: &'static str) -> Result<Self> {
        let n = a.nrows();
        if a.ncols() != n {
            return Err(Error::ShapeMismatch {
                what,
                expected: format!("a square matrix of {n} rows"),
                found: format!("{n} × {}", a.ncols()),
            });
        }
        let par = faer::get_global_parallelism();
        let (mut perm_fwd, mut perm_inv) = (vec![0usize; n], vec![0usize; n]);
        let req = factor::lu_in_place_scratch::<usize, f64>(n, n, par, Default::default());
        let mut buf = try_scratch(req, n, what)?;
        factor::lu_in_place(
            a.as_mut(),
            &mut perm_fwd,
            &mut perm_inv,
            par,
            MemStack::new(&mut buf),
            Default::default(),
        );
        Ok(Self {
            lu: a,
            perm_fwd,
            perm_inv,
        })
    }

    /// The order of the factored matrix.
    pub fn dim(&self) -> usize {
        self.lu.nrows()
    }

    /// The row permutation `P`.
    fn perm(&self) -> PermRef<'_, usize> {
        PermRef::new_checked(&self.perm_fwd, &self.perm_inv, self.dim())
    }

    /// Overwrites `rhs` (`n × k`) with `A⁻¹ rhs`; the work space (a copy of `rhs` for the row
    /// permutation) is refused as an error naming `what` where it cannot be had.
    pub fn solve_in_place(&self, rhs: MatMut<'_, f64>, what: &'static str) -> Result<()> {
        let n = self.dim();
        if rhs.nrows() != n {
            return Err(Error::ShapeMismatch {
                what,
                expected: format!("{n} rows"),
                found: format!("{}", rhs.nrows()),
            });
        }
        let par = faer::get_global_parallelism();
        let req = solve::solve_in_place_scratch::<usize, f64>(n, rhs.ncols(), par);
        let mut buf = try_scratch(req, n, what)?;
        let lu = self.lu.as_ref();
        solve::solve_in_place(lu, lu, self.perm(), rhs, par, MemStack::new(&mut buf));
        Ok(())
    }

    /// `A⁻¹ rhs` into a new matrix (fallibly allocated, named `what`).
    pub fn solve(&self, rhs: MatRef<'_, f64>, what: &'static str) -> Result<Mat<f64>> {
        let mut out = try_zeros(rhs.nrows(), rhs.ncols(), what)?;
        out.copy_from(rhs);
        self.solve_in_place(out.as_mut(), what)?;
        Ok(out)
    }

    /// `A⁻¹`: its `n × n` and faer's `n × n` work space are both refused as errors naming
    /// `what` where they cannot be had.
    pub fn inverse(&self, what: &'static str) -> Result<Mat<f64>> {
        let n = self.dim();
        let mut out = try_zeros(n, n, what)?;
        let par = faer::get_global_parallelism();
        let mut buf = try_scratch(inverse::inverse_scratch::<usize, f64>(n, par), n, what)?;
        let lu = self.lu.as_ref();
        inverse::inverse(
            out.as_mut(),
            lu,
            lu,
            self.perm(),
            par,
            MemStack::new(&mut buf),
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::same_mat;
    use faer::linalg::solvers::{DenseSolveCore, Solve};
    use rand::{Rng, SeedableRng};

    fn random(rng: &mut impl Rng, r: usize, c: usize) -> Mat<f64> {
        Mat::from_fn(r, c, |_, _| rng.gen::<f64>() - 0.5)
    }

    /// On random nonsymmetric matrices (orders 1, 7 and 600, where faer's blocked and
    /// parallel paths run) the solve and the inverse are faer's `partial_piv_lu()` bit for bit,
    /// a solve by blocks of columns the whole solve's bits, and `A X = B` holds to rounding
    /// (an independent check of both).
    #[test]
    fn solve_and_inverse_are_faers_partial_piv_lu() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(39);
        for n in [1, 7, 600] {
            let a = random(&mut rng, n, n);
            let b = random(&mut rng, n, 3);
            let lu = Lu::factor(a.clone(), "A").unwrap();
            let theirs = a.partial_piv_lu();
            let x = lu.solve(b.as_ref(), "A⁻¹B").unwrap();
            assert!(same_mat(x.as_ref(), theirs.solve(&b).as_ref()), "n = {n}");
            let inv = lu.inverse("A⁻¹").unwrap();
            assert!(same_mat(inv.as_ref(), theirs.inverse().as_ref()), "n = {n}");
            // Solving by blocks of columns (as the mean-field LOO does) gives the same bits.
            let mut by_blocks = a.clone();
            for start in (0..n).step_by(256) {
                let width = 256.min(n - start);
                lu.solve_in_place(by_blocks.as_mut().subcols_mut(start, width), "A⁻¹A")
                    .unwrap();
            }
            let whole = lu.solve(a.as_ref(), "A⁻¹A").unwrap();
            assert!(same_mat(by_blocks.as_ref(), whole.as_ref()), "n = {n}");
            let (ax, ainv) = (&a * &x, &a * &inv);
            for j in 0..n {
                for i in 0..n {
                    let e = f64::from(u8::from(i == j));
                    assert!((ainv[(i, j)] - e).abs() < 1e-8, "n = {n}");
                }
            }
            for j in 0..3 {
                for i in 0..n {
                    assert!((ax[(i, j)] - b[(i, j)]).abs() < 1e-8, "n = {n}");
                }
            }
        }
    }

    /// A singular matrix is factored without an error, and its solve and inverse are not
    /// finite where faer's are not (the callers' check): here `ones(3, 3)`, rank one.
    #[test]
    fn singular_matrices_give_non_finite_solutions() {
        let a = Mat::from_fn(3, 3, |_, _| 1.0);
        let lu = Lu::factor(a.clone(), "A").unwrap();
        let b = Mat::from_fn(3, 1, |i, _| i as f64);
        let x = lu.solve(b.as_ref(), "x").unwrap();
        let theirs = a.partial_piv_lu().solve(&b);
        assert!(x.col(0).iter().any(|v| !v.is_finite()));
        for i in 0..3 {
            assert_eq!(x[(i, 0)].is_finite(), theirs[(i, 0)].is_finite());
        }
        let inv = lu.inverse("A⁻¹").unwrap();
        assert!(inv.col_iter().any(|c| c.iter().any(|v| !v.is_finite())));
        assert!(matches!(
            Lu::factor(Mat::zeros(2, 3), "A"),
            Err(Error::ShapeMismatch { .. })
        ));
        assert!(matches!(
            lu.solve_in_place(Mat::zeros(2, 1).as_mut(), "x"),
            Err(Error::ShapeMismatch { .. })
        ));
    }

    /// The inverse's `n × n` work space, with "available" set to the bytes of the inverse
    /// itself (which is then allowed), is refused as the typed error: faer's scratch pads its
    /// columns, so it is the larger of the two, and it is checked as [`try_zeros`] checks.
    #[test]
    fn an_inverse_whose_work_space_does_not_fit_is_a_typed_error() {
        let n = 2900; // 67 MB: above the size below which buffers are not checked
        let lu = Lu {
            lu: Mat::identity(n, n),
            perm_fwd: (0..n).collect(),
            perm_inv: (0..n).collect(),
        };
        let bytes = crate::memory::matrices_bytes(1, n, n).unwrap();
        let got = crate::memory::with_available_memory(bytes, || lu.inverse("A⁻¹"));
        match got {
            Err(Error::OutOfMemory {
                what,
                rows,
                cols,
                bytes: Some(b),
            }) => assert!(what == "A⁻¹" && rows == n && cols >= n && b > bytes),
            other => panic!("{other:?}"),
        }
        assert!(crate::memory::with_available_memory(bytes - 1, || lu.inverse("A⁻¹")).is_err());
    }
}
