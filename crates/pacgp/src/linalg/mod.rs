//! Dense linear algebra over faer: a Cholesky factor that escalates jitter and reports
//! it, log-determinants, triangular and SPD solves, and the diagonal of an inverse; an LU
//! with partial pivoting ([`Lu`]) for the nonsymmetric systems of linear-response LOO.
//!
//! Every GP computation in the crate goes through [`Cholesky`]; no explicit inverse is
//! formed where a solve does.

use faer::dyn_stack::MemStack;
use faer::linalg::cholesky::llt::factor::{self, LltRegularization};
use faer::linalg::triangular_solve;
use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut, MatRef, Par};
use rayon::prelude::*;

use crate::error::{Error, Result};

mod cholesky;
mod lu;
mod products;
pub use cholesky::*;
pub use lu::*;
pub use products::*;

pub mod scratch;

/// Matrices at least this large are factored and multiplied with rayon threads.
pub const PAR_THRESHOLD: usize = 512;

/// Whether two matrices have the same shape and entries (faer's `==` asserts equal shapes).
pub fn same_mat(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> bool {
    a.nrows() == b.nrows() && a.ncols() == b.ncols() && a == b
}

/// The rows `rows` of `a`, in that order.
pub fn select_rows(a: MatRef<'_, f64>, rows: &[usize]) -> Mat<f64> {
    Mat::from_fn(rows.len(), a.ncols(), |i, j| a[(rows[i], j)])
}

/// The parallelism to use for an `n × n` dense operation.
pub fn par_for(n: usize) -> Par {
    if n >= PAR_THRESHOLD {
        Par::rayon(0)
    } else {
        Par::Seq
    }
}

/// The parallelism for a triangular solve of order `n` with `ncols` right-hand sides: a single
/// column is solved sequentially, because faer's parallel matrix-vector update splits the
/// inner dimension by thread count and would round differently on one thread or many.
fn solve_par(n: usize, ncols: usize) -> Par {
    if ncols < 2 {
        Par::Seq
    } else {
        par_for(n.max(ncols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(n: usize) -> Mat<f64> {
        let b = Mat::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4);
        let mut a = &b * b.transpose();
        for i in 0..n {
            a[(i, i)] += 1.0;
        }
        a
    }

    #[test]
    fn solve_and_inverse_agree_with_identity() {
        let a = spd(9);
        let c = Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "A").unwrap();
        assert_eq!(c.jitter(), 0.0);
        let inv = c.inverse().unwrap();
        let prod = &a * &inv;
        for i in 0..9 {
            for j in 0..9 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((prod[(i, j)] - e).abs() < 1e-12);
            }
        }
        let d = c.inverse_diag().unwrap();
        for i in 0..9 {
            assert!((d[i] - inv[(i, i)]).abs() < 1e-13);
        }
        assert!((c.inverse_trace().unwrap() - d.iter().sum::<f64>()).abs() < 1e-12);
        // L⁻¹ written into a used buffer equals a fresh one, upper triangle zero included.
        let li = c.l_inverse().unwrap();
        assert_eq!(
            c.l_inverse_in(Some(Mat::from_fn(9, 9, |_, _| 7.0)))
                .unwrap(),
            li
        );
        assert_eq!(c.l_inverse_in(Some(Mat::zeros(3, 3))).unwrap(), li);
        let b: Vec<f64> = (0..9).map(|i| i as f64).collect();
        let x = c.solve_vec(&b);
        for i in 0..9 {
            let ax: f64 = (0..9).map(|j| a[(i, j)] * x[j]).sum();
            assert!((ax - b[i]).abs() < 1e-12);
        }
    }

    #[test]
    fn symmetrise_copies_the_lower_triangle_at_every_block_size() {
        // Odd orders around the recursion's leaf and above it (its halves are unequal).
        for n in [1, 5, 256, 257, 700, 1031] {
            let mut a = Mat::from_fn(n, n, |i, j| if i >= j { (i * n + j) as f64 } else { -1.0 });
            symmetrise_from_lower(&mut a);
            for j in 0..n {
                for i in 0..n {
                    assert_eq!(
                        a[(i, j)],
                        (i.max(j) * n + i.min(j)) as f64,
                        "n = {n}, ({i}, {j})"
                    );
                }
            }
        }
    }

    #[test]
    fn large_factors_fill_check_and_clear_in_parallel_as_small_ones_do() {
        // Above PAR_THRESHOLD the fill, the finiteness check and the upper clear run by columns
        // in parallel; into a used buffer they must give the fresh factor, upper zeros included.
        let n = PAR_THRESHOLD + 88;
        let a = spd(n);
        let fresh = Cholesky::factor_plus_diag(
            a.as_ref(),
            |i| i as f64 / n as f64,
            &JitterPolicy::none(),
            "A",
        )
        .unwrap();
        let used = Mat::from_fn(n, n, |_, _| 7.0);
        let again = Cholesky::factor_plus_diag_in(
            a.as_ref(),
            |i| i as f64 / n as f64,
            Some(used),
            &JitterPolicy::none(),
            "A",
        )
        .unwrap();
        assert_eq!(again, fresh);
        let l = fresh.l();
        let llt = l * l.transpose();
        for j in 0..n {
            for i in 0..n {
                if i < j {
                    assert_eq!(l[(i, j)], 0.0);
                }
                let d = if i == j { i as f64 / n as f64 } else { 0.0 };
                assert!((llt[(i, j)] - a[(i, j)] - d).abs() < 1e-10);
            }
        }
        // The lower triangle of A⁻¹ into used buffers equals the fresh one there.
        let inv = fresh.inverse_lower().unwrap();
        let (inv_in, _) = fresh
            .inverse_lower_in(
                Some(Mat::from_fn(n, n, |_, _| 3.0)),
                Some(Mat::from_fn(n, n, |_, _| 5.0)),
            )
            .unwrap();
        for j in 0..n {
            for i in j..n {
                assert_eq!(inv_in[(i, j)], inv[(i, j)]);
            }
        }
        // The first non-finite entry of the lower triangle, in column order, is the one named.
        let mut bad = a.clone();
        bad[(n - 3, n - 40)] = f64::NAN;
        bad[(n - 1, n - 2)] = f64::INFINITY;
        bad[(2, n - 1)] = f64::NAN; // above the diagonal: never read
        match Cholesky::factor(bad.as_ref(), &JitterPolicy::default(), "A") {
            Err(Error::NonFinite { row, col, .. }) => assert_eq!((row, col), (n - 3, n - 40)),
            other => panic!("expected NonFinite, got {other:?}"),
        }
    }

    #[test]
    fn factor_is_lower_triangular_and_reproduces_a() {
        let a = spd(40);
        let c = Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "A").unwrap();
        let l = c.l();
        let llt = l * l.transpose();
        for j in 0..40 {
            for i in 0..40 {
                if i < j {
                    assert_eq!(l[(i, j)], 0.0);
                }
                assert!((llt[(i, j)] - a[(i, j)]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn weighted_gram_and_column_helpers_match_dense_products() {
        let a = Mat::from_fn(7, 30, |i, j| ((i * 5 + j * 11) % 13) as f64 / 13.0 - 0.5);
        let w: Vec<f64> = (0..30).map(|j| (j as f64 - 10.0) / 7.0).collect();
        let dense =
            &a * Mat::from_fn(30, 30, |i, j| if i == j { w[i] } else { 0.0 }) * a.transpose();
        let fast = weighted_gram(&a, &w).unwrap();
        let b = Mat::from_fn(7, 30, |i, j| (i + j) as f64 / 9.0);
        let atb = a.transpose() * &b;
        let (dots, norms) = (col_dots(&a, &b), col_sq_norms(&a));
        let x: Vec<f64> = (0..30).map(|j| j as f64 / 30.0).collect();
        let xm: Vec<f64> = (0..7).map(|i| 1.0 - i as f64 / 7.0).collect();
        let (ax, atx) = (mat_vec(&a, &x), mat_t_vec(&a, &xm));
        for i in 0..7 {
            for j in 0..7 {
                assert!((fast[(i, j)] - dense[(i, j)]).abs() < 1e-12);
            }
            let e: f64 = (0..30).map(|j| a[(i, j)] * x[j]).sum();
            assert!((ax[i] - e).abs() < 1e-12);
        }
        for j in 0..30 {
            assert!((dots[j] - atb[(j, j)]).abs() < 1e-12);
            let n2: f64 = (0..7).map(|i| a[(i, j)] * a[(i, j)]).sum();
            assert!((norms[j] - n2).abs() < 1e-12);
            let e: f64 = (0..7).map(|i| a[(i, j)] * xm[i]).sum();
            assert!((atx[j] - e).abs() < 1e-12);
        }
    }

    /// The chunked lower-triangle product equals the dense `A diag(w) Aᵀ` (to rounding) with
    /// and without weights, across several chunks, and leaves the strict upper triangle alone.
    #[test]
    fn syrk_lower_add_matches_dense_product() {
        let (m, k) = (9, 2 * SYRK_CHUNK + 37);
        let a = Mat::from_fn(m, k, |i, j| ((i * 5 + j * 11) % 13) as f64 / 13.0 - 0.5);
        let w: Vec<f64> = (0..k).map(|j| (j as f64 - 200.0) / 97.0).collect();
        for weights in [None, Some(&w[..])] {
            let mut out = Mat::from_fn(m, m, |i, j| if i < j { 7.0 } else { 1.0 });
            syrk_lower_add(out.as_mut(), a.as_ref(), weights);
            for j in 0..m {
                for i in 0..m {
                    let dense: f64 = (0..k)
                        .map(|t| a[(i, t)] * a[(j, t)] * weights.map_or(1.0, |w| w[t]))
                        .sum();
                    if i < j {
                        assert_eq!(out[(i, j)], 7.0);
                    } else {
                        assert!((out[(i, j)] - 1.0 - dense).abs() < 1e-12 * k as f64);
                    }
                }
            }
            symmetrise_from_lower(&mut out);
            assert_eq!(out[(0, m - 1)], out[(m - 1, 0)]);
        }
    }

    /// A product with lower triangular factors equals the dense product of the factors with
    /// their strict upper triangles zeroed (which it must not read: they hold junk here), on
    /// either side and on both, square and rectangular.
    /// `try_product` is `&a * &b` bit for bit, and `try_clone` the matrix itself, on random
    /// matrices of several shapes (one column, one row, square above [`PAR_THRESHOLD`], and
    /// a transposed factor as the callers pass); `weighted_gram` still matches its loop.
    #[test]
    fn fallible_products_and_clones_are_the_infallible_bits() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(43);
        let mut random = |r: usize, c: usize| Mat::from_fn(r, c, |_, _| rng.gen::<f64>() - 0.5);
        for (m, k, n) in [
            (7, 5, 3),
            (600, 40, 1),
            (1, 9, 1),
            (1, 1, 9),
            (530, 530, 530),
            (3, 700, 2),
        ] {
            let (a, b) = (random(m, k), random(k, n));
            let got = try_product(a.as_ref(), b.as_ref(), "A B").unwrap();
            assert!(
                same_mat(got.as_ref(), (&a * &b).as_ref()),
                "{m}×{k} · {k}×{n}"
            );
            let at = random(k, m);
            let got_t = try_product(at.transpose(), b.as_ref(), "AᵀB").unwrap();
            assert!(
                same_mat(got_t.as_ref(), (at.transpose() * &b).as_ref()),
                "transposed {m}×{k}"
            );
            assert!(same_mat(
                try_clone(a.as_ref(), "A").unwrap().as_ref(),
                a.as_ref()
            ));
            let mut diff = got.clone();
            subtract_from((&a * &b).as_ref(), &mut diff);
            assert!(diff.col_iter().all(|c| c.iter().all(|&v| v == 0.0)));
        }
        // `product` keeps its own (par_for) parallelism, and equals the plain loop to rounding.
        let (a, b) = (random(6, 4), random(4, 5));
        let p = product(a.as_ref(), b.as_ref(), "A B").unwrap();
        for i in 0..6 {
            for j in 0..5 {
                let e: f64 = (0..4).map(|t| a[(i, t)] * b[(t, j)]).sum();
                assert!((p[(i, j)] - e).abs() < 1e-14);
            }
        }
    }

    /// An inverse beside a factor whose `n × n` cannot be had is [`Error::OutOfMemory`]
    /// naming it, not an abort: the one refusal [`crate::memory::try_zeros`] makes (a buffer
    /// above its checked size and above the memory available), with "available" set just
    /// below the inverse's 72 MB on this thread (the factor itself is already held).
    #[test]
    fn inverses_that_do_not_fit_are_typed_errors() {
        let n = 3000;
        let c = Cholesky::from_lower(
            Mat::from_fn(n, n, |i, j| if i == j { 2.0 } else { 0.0 }),
            0.0,
        );
        let bytes = crate::memory::matrices_bytes(1, n, n).unwrap();
        let refused = |r: Result<()>| match r {
            Err(Error::OutOfMemory {
                what,
                rows,
                cols,
                bytes: Some(b),
            }) => {
                assert_eq!((rows, cols, b), (n, n, bytes));
                what
            }
            other => panic!("{other:?}"),
        };
        crate::memory::with_available_memory(bytes - 1, || {
            assert_eq!(
                refused(c.l_inverse().map(drop)),
                "the inverse of a Cholesky factor"
            );
            assert_eq!(
                refused(c.inverse().map(drop)),
                "the inverse of a Cholesky factor"
            );
            assert_eq!(
                refused(c.inverse_lower().map(drop)),
                "the inverse of a Cholesky factor"
            );
            assert_eq!(
                refused(c.inverse_diag().map(drop)),
                "the inverse of a Cholesky factor"
            );
            assert_eq!(
                refused(c.inverse_trace().map(drop)),
                "the inverse of a Cholesky factor"
            );
            // With L⁻¹ given (reused storage), the second buffer is A⁻¹'s.
            let l_inv = Mat::from_fn(n, n, |i, j| if i == j { 0.5 } else { 0.0 });
            let r = c.inverse_lower_in(Some(l_inv), None).map(drop);
            assert_eq!(refused(r), "the inverse of a factored matrix");
            assert_eq!(refused(try_product(c.l(), c.l(), "L L").map(drop)), "L L");
        });
        // With the machine's own memory the same calls succeed: diag(A⁻¹) = ¼ (A = 4I).
        let d = c.inverse_diag().unwrap();
        assert!(d.iter().all(|&v| v == 0.25));
        assert_eq!(c.inverse_trace().unwrap(), 0.25 * n as f64);
    }

    #[test]
    fn product_with_lower_reads_only_the_lower_triangles() {
        let n = 11;
        let junk_above = |i: usize, j: usize| {
            if i < j {
                1e6
            } else {
                ((i * 3 + j * 7) % 5) as f64 / 5.0 - 0.3
            }
        };
        let l = Mat::from_fn(n, n, junk_above);
        let l_clean = Mat::from_fn(n, n, |i, j| if i < j { 0.0 } else { l[(i, j)] });
        let b = Mat::from_fn(n, 4, |i, j| ((i * 5 + j) % 7) as f64 / 7.0 - 0.5);
        let a = Mat::from_fn(4, n, |i, j| ((i + j * 2) % 9) as f64 / 9.0 - 0.4);
        let close = |x: &Mat<f64>, y: &Mat<f64>| {
            assert_eq!(x.shape(), y.shape());
            for j in 0..x.ncols() {
                for i in 0..x.nrows() {
                    assert!((x[(i, j)] - y[(i, j)]).abs() < 1e-13, "({i}, {j})");
                }
            }
        };
        close(
            &product_with_lower(l.as_ref(), true, b.as_ref(), false),
            &(&l_clean * &b),
        );
        close(
            &product_with_lower(a.as_ref(), false, l.as_ref(), true),
            &(&a * &l_clean),
        );
        close(
            &product_with_lower(l.as_ref(), true, l.as_ref(), true),
            &(&l_clean * &l_clean),
        );
        close(
            &product_with_lower(a.as_ref(), false, b.as_ref(), false),
            &(&a * &b),
        );
    }

    #[test]
    fn ln_det_matches_product_of_eigen_free_2x2() {
        let a = Mat::from_fn(2, 2, |i, j| [[4.0, 1.0], [1.0, 3.0]][i][j]);
        let c = Cholesky::factor(a.as_ref(), &JitterPolicy::none(), "A").unwrap();
        assert!((c.ln_det() - 11f64.ln()).abs() < 1e-14);
    }

    #[test]
    fn singular_matrix_gets_jitter_reported() {
        // Rank one: ones(3,3).
        let a = Mat::from_fn(3, 3, |_, _| 1.0);
        let c = Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "ones").unwrap();
        assert!(c.jitter() > 0.0);
    }

    #[test]
    fn indefinite_matrix_is_a_typed_error() {
        let a = Mat::from_fn(2, 2, |i, j| if i == j { -1.0 } else { 0.0 });
        match Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "neg") {
            Err(Error::NotPositiveDefinite {
                what, jitter_tried, ..
            }) => {
                assert_eq!(what, "neg");
                assert!(jitter_tried > 0.0);
            }
            other => panic!("expected NotPositiveDefinite, got {other:?}"),
        }
    }

    #[test]
    fn nan_is_rejected() {
        let mut a = spd(3);
        a[(2, 1)] = f64::NAN;
        assert!(matches!(
            Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "A"),
            Err(Error::NonFinite { .. })
        ));
    }

    /// `f` on a rayon pool of `threads` threads, as `pacgp --threads` runs it.
    fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(f)
    }

    /// Deterministic reductions: the ordered sum equals the plain sequential chunked sum
    /// bit for bit, and A x, the single-column solves and the factor (sizes above both
    /// parallel thresholds) are the same bits on one, two and three threads; A x matches a
    /// naive loop to rounding.
    #[test]
    fn reductions_are_bit_identical_on_any_thread_count() {
        let n = 700;
        let terms: Vec<f64> = (0..n)
            .map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0)
            .collect();
        let sum = |_| {
            ordered_par_sum(n, 2, |j, acc| {
                acc[0] += terms[j];
                acc[1] += terms[j] * terms[j];
            })
        };
        let mut expect = [0.0; 2];
        for chunk in terms.chunks(SUM_CHUNK) {
            expect[0] += chunk.iter().sum::<f64>();
            expect[1] += chunk.iter().map(|t| t * t).sum::<f64>();
        }
        let a = spd(n);
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let run = |threads| {
            on_threads(threads, || {
                let c = Cholesky::factor(a.as_ref(), &JitterPolicy::default(), "A").unwrap();
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                let mut out = bits(&sum(()));
                out.extend(bits(&mat_vec(&a, &x)));
                out.extend(bits(&c.solve_vec(&x)));
                out.extend(bits(&col_to_vec(c.l().col(n / 2).as_mat())));
                out
            })
        };
        let one = run(1);
        assert_eq!(one[..2], [expect[0].to_bits(), expect[1].to_bits()]);
        assert!(one == run(2) && one == run(3));
        let ax = mat_vec(&a, &x);
        for i in (0..n).step_by(97) {
            let naive: f64 = (0..n).map(|j| a[(i, j)] * x[j]).sum();
            assert!((ax[i] - naive).abs() < 1e-12 * n as f64);
        }
    }
}

/// Serde support for faer matrices as `{ "nrows", "ncols", "data" (column-major) }`.
pub mod serde_mat {
    use faer::Mat;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Repr {
        nrows: usize,
        ncols: usize,
        data: Vec<f64>,
    }

    /// Serialize a matrix.
    pub fn serialize<S: Serializer>(m: &Mat<f64>, s: S) -> Result<S::Ok, S::Error> {
        let mut data = Vec::with_capacity(m.nrows() * m.ncols());
        for j in 0..m.ncols() {
            for i in 0..m.nrows() {
                data.push(m[(i, j)]);
            }
        }
        Repr {
            nrows: m.nrows(),
            ncols: m.ncols(),
            data,
        }
        .serialize(s)
    }

    /// Deserialize a matrix, checking that the data length matches the shape.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Mat<f64>, D::Error> {
        let r = Repr::deserialize(d)?;
        if r.data.len() != r.nrows * r.ncols {
            return Err(serde::de::Error::custom(format!(
                "matrix data has {} entries, expected {}×{}",
                r.data.len(),
                r.nrows,
                r.ncols
            )));
        }
        Ok(Mat::from_fn(r.nrows, r.ncols, |i, j| {
            r.data[j * r.nrows + i]
        }))
    }
}
