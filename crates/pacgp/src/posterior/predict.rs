//! A posterior's predictions: latent marginals and covariances at test inputs, in blocks of
//! rows sized so that any number of test points needs a bounded amount of memory.

use super::*;

impl GaussianPosterior {
    /// Latent mean and variance at the rows of `x` (one point per row).
    pub fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals> {
        self.check_inputs(x)?;
        self.predict_in_blocks(x, block_rows(self.n_basis()))
    }

    /// [`GaussianPosterior::predict`] on checked inputs, `rows` rows of `x` at a time: memory
    /// O(rows·M) whatever N* (10⁶ test points against 10⁴ training points would be 80 GB
    /// as one N*×M matrix). Each row's mean and variance come from its own column of the
    /// block's products, the same for any `rows`.
    pub(crate) fn predict_in_blocks(&self, x: MatRef<'_, f64>, rows: usize) -> Result<Marginals> {
        let n = x.nrows();
        let (mut mean, mut var) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for lo in (0..n).step_by(rows.max(1)) {
            let part = self.predict_at(x.subrows(lo, rows.min(n - lo)))?;
            mean.extend(part.mean);
            var.extend(part.var);
        }
        Ok(Marginals { mean, var })
    }

    /// Latent mean alone at the rows of `x`: `m(x) + K(x, B)α`, O(N*·M) — what a label or a
    /// regressor's point prediction needs, without the variances' O(N*·M²) solves.
    pub fn predict_mean(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        self.check_inputs(x)?;
        let (n, rows) = (x.nrows(), block_rows(self.n_basis()));
        let mut mean = Vec::with_capacity(n);
        for lo in (0..n).step_by(rows) {
            let part = x.subrows(lo, rows.min(n - lo));
            let kbx = self.prior.cross_at(self.basis.as_ref(), part)?;
            mean.extend(self.mean_from_cross(part, &kbx)?);
        }
        Ok(mean)
    }

    /// `m(x_i) + Σ_m K(b_m, x_i) α_m` from the cross-covariance `kbx = K(B, x)` (M×N*, one
    /// contiguous column per input, summed in the order of m), columns in parallel.
    pub(super) fn mean_from_cross(&self, x: MatRef<'_, f64>, kbx: &Mat<f64>) -> Result<Vec<f64>> {
        let prior_mean = self.prior.mean_at(x)?;
        let weighted = linalg::mat_t_vec(kbx, &self.alpha);
        Ok(prior_mean
            .iter()
            .zip(&weighted)
            .map(|(p, w)| p + w)
            .collect())
    }

    /// The posterior covariance `Cov_Q[f(x_i), f(z_j)]` between the rows of `x` and `z`.
    pub fn covariance(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check_inputs(x)?;
        self.check_inputs(z)?;
        self.covariance_at(x, z)
    }

    /// [`GaussianPosterior::predict`] on inputs already checked.
    pub(crate) fn predict_at(&self, x: MatRef<'_, f64>) -> Result<Marginals> {
        if x.nrows() == 1 {
            // faer solves one right-hand side by another kernel than several, whose last bits
            // differ (by up to 2 ulp): a lone row (one row to predict, or the last of a block
            // boundary) is predicted beside a copy of itself, so that a row's prediction does
            // not depend on how many rows share its block.
            let pair = Mat::from_fn(2, x.ncols(), |_, j| x[(0, j)]);
            let m = self.predict_rows(pair.as_ref())?;
            return Ok(Marginals {
                mean: vec![m.mean[0]],
                var: vec![m.var[0]],
            });
        }
        self.predict_rows(x)
    }

    /// [`GaussianPosterior::predict_at`] of two rows or more: one cross-covariance
    /// `K(B, x)` (M×N*, computed in that layout so that no transpose is copied) gives the
    /// means and, through the stored factors, the variances `k(x,x) − Σ_j s_j ‖A_j‖²`.
    pub(super) fn predict_rows(&self, x: MatRef<'_, f64>) -> Result<Marginals> {
        Ok(self.marginals_and_projections(x)?.0)
    }

    /// The marginals at the rows of `x` (two or more) and the projections `(s_j, A_j)` of
    /// [`Self::projections`] they were read from.
    fn marginals_and_projections(&self, x: MatRef<'_, f64>) -> Result<(Marginals, Projections)> {
        let kbx = self.prior.cross_at(self.basis.as_ref(), x)?; // M×N*
        let mean = self.mean_from_cross(x, &kbx)?;
        let prior = self.prior.diag_at(x)?;
        let mut reduction = vec![0.0; x.nrows()];
        let projections = self.projections(kbx)?;
        for (sign, a) in &projections {
            for (r, v) in reduction.iter_mut().zip(linalg::col_sq_norms(a)) {
                *r += sign * v;
            }
        }
        let var = prior
            .iter()
            .zip(&reduction)
            .map(|(p, r)| (p - r).max(0.0))
            .collect();
        Ok((Marginals { mean, var }, projections))
    }

    /// A dense-form posterior's marginals at the rows of `x` (those of [`Self::predict`]) and
    /// `w(x) = L_Σᵀ K_B⁻¹ k(B, x)` (M×N*), from one `K(B, x)` and one set of solves: the
    /// covariance of the basis parts `K(x, B)K_B⁻¹f_B` of two inputs under Q is `w(x)ᵀw(z)`
    /// (the sparse variational classifier's leave-one-out, [`crate::loo::inducing`]).
    pub(crate) fn predict_with_basis_factor(
        &self,
        x: MatRef<'_, f64>,
    ) -> Result<(Marginals, Mat<f64>)> {
        self.check_inputs(x)?;
        if !matches!(self.cov, Covariance::Dense { .. }) {
            return Err(Error::Unsupported(
                "a basis covariance factor L_Σᵀ K_B⁻¹ k(B, x) needs the dense form".into(),
            ));
        }
        if x.nrows() == 1 {
            // A lone row beside a copy of itself, as `predict_at` predicts it.
            let pair = Mat::from_fn(2, x.ncols(), |_, j| x[(0, j)]);
            let (m, w) = self.predict_with_basis_factor(pair.as_ref())?;
            let marginals = Marginals {
                mean: vec![m.mean[0]],
                var: vec![m.var[0]],
            };
            return Ok((marginals, w.subcols(0, 1).to_owned()));
        }
        let (marginals, mut projections) = self.marginals_and_projections(x)?;
        // The dense form's projections are `L_K⁻¹k` (added) and `L_Σᵀ K⁻¹k` (subtracted).
        match projections.pop() {
            Some((_, w)) => Ok((marginals, w)),
            None => Err(Error::Unsupported(
                "the posterior is its prior: it has no basis covariance".into(),
            )),
        }
    }

    /// [`GaussianPosterior::covariance`] on inputs already checked:
    /// `k_P(x,z) − Σ_j s_j A_j(x)ᵀ A_j(z)` with the projections of [`Self::projections`].
    pub(crate) fn covariance_at(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut c = self.prior.cross_at(x, z)?;
        let ax = self.projections(self.prior.cross_at(self.basis.as_ref(), x)?)?;
        let az = self.projections(self.prior.cross_at(self.basis.as_ref(), z)?)?;
        for ((sign, a), (_, b)) in ax.iter().zip(&az) {
            let p = product_tn(a, b)?;
            for j in 0..c.ncols() {
                for i in 0..c.nrows() {
                    c[(i, j)] -= sign * p[(i, j)];
                }
            }
        }
        Ok(c)
    }

    /// The posterior covariance matrix of the rows of `x` on inputs already checked:
    /// `K_P(x,x) − Σ_j s_j A_jᵀA_j`, its lower triangle copied to the upper.
    pub(crate) fn covariance_gram_at(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut c = self.prior.gram_at(x)?;
        for (sign, a) in self.projections(self.prior.cross_at(self.basis.as_ref(), x)?)? {
            let p = product_tn(&a, &a)?;
            for j in 0..c.ncols() {
                for i in 0..c.nrows() {
                    c[(i, j)] -= sign * p[(i, j)];
                }
            }
        }
        for j in 0..c.ncols() {
            for i in 0..j {
                c[(i, j)] = c[(j, i)];
            }
        }
        Ok(c)
    }

    /// Whether the covariance is the prior's (every site precision 0, as the SVM's shifted
    /// prior): then `R = 0` and nothing is subtracted from the prior's covariance.
    pub(super) fn covariance_is_prior(&self) -> bool {
        matches!(&self.cov, Covariance::Sites { sqrt_pi, .. } if sqrt_pi.iter().all(|&s| s == 0.0))
    }

    /// The projections of prior covariances `k = k_P(B, x)` (M×N*, one column per input)
    /// whose signed squared norms make `kᵀ R k`: `(+1, L_B⁻¹Π½k)` for the site form;
    /// `(+1, L_uu⁻¹k)` and `(−1, L_B⁻¹L_uu⁻¹k)` for the whitened form;
    /// `(+1, L_K⁻¹k)` and `(−1, L_Σᵀ K⁻¹ k)` for the dense form. Its M×N* copies and
    /// products come from [`crate::memory::try_zeros`].
    pub(super) fn projections(&self, mut a: Mat<f64>) -> Result<Projections> {
        Ok(match &self.cov {
            // Every site precision 0 (the SVM's shifted prior): R = 0, nothing to subtract.
            _ if self.covariance_is_prior() => vec![],
            Covariance::Sites { sqrt_pi, chol_b } => {
                scale_rows(&mut a, sqrt_pi);
                solve_lower_by_columns(chol_b, &mut a);
                vec![(1.0, a)]
            }
            Covariance::WhitenedPrecision { chol_kuu, chol_b } => {
                solve_lower_by_columns(chol_kuu, &mut a);
                let mut b = linalg::try_clone(a.as_ref(), "L_B⁻¹L_uu⁻¹k at test rows")?;
                solve_lower_by_columns(chol_b, &mut b);
                vec![(1.0, a), (-1.0, b)]
            }
            Covariance::Dense {
                chol_kb,
                chol_sigma,
            } => {
                // w = L_K⁻¹k: ‖w‖² = kᵀK⁻¹k; z = L_K⁻ᵀw = K⁻¹k; ‖L_Σᵀz‖² = kᵀK⁻¹ΣK⁻¹k.
                solve_lower_by_columns(chol_kb, &mut a);
                let mut z = linalg::try_clone(a.as_ref(), "K⁻¹k at test rows")?;
                chol_kb.solve_upper_in_place(z.as_mut());
                let t = linalg::try_product(
                    chol_sigma.l().transpose(),
                    z.as_ref(),
                    "L_Σᵀ K⁻¹k at test rows",
                )?;
                vec![(1.0, a), (-1.0, t)]
            }
        })
    }
}

/// The signed projections `(s_j, A_j)` of prior covariances whose squared norms make `kᵀ R k`
/// ([`GaussianPosterior::projections`]).
type Projections = Vec<(f64, Mat<f64>)>;

/// Bytes of one N*_b × M matrix of a prediction block (64 MB): a block holds one or two (the
/// cross-covariance, solved in place into the projections), so predicting any number of rows needs
/// a few hundred MB beyond the model, whatever N* and M.
pub(super) const PREDICT_BLOCK_BYTES: usize = 64 << 20;

/// Most rows of a prediction block: 4096 rows already make the triangular solves
/// matrix-matrix products (their cost per row, O(M²), does not fall with more).
pub(super) const PREDICT_BLOCK_ROWS: usize = 4096;

/// Rows of test inputs predicted at once against `m` basis points: [`PREDICT_BLOCK_ROWS`],
/// fewer where an N*_b × M matrix would pass [`PREDICT_BLOCK_BYTES`] (194 rows against an
/// exact GP on 43 152 training rows), at least one.
pub(super) fn block_rows(m: usize) -> usize {
    (PREDICT_BLOCK_BYTES / (8 * m.max(1))).clamp(1, PREDICT_BLOCK_ROWS)
}

/// `aᵀb` (N*×N* for projections of two sets of test points) in a buffer from
/// [`crate::memory::try_zeros`]: the product a test set too large for it asks for.
pub(super) fn product_tn(a: &Mat<f64>, b: &Mat<f64>) -> Result<Mat<f64>> {
    let mut p = crate::memory::try_zeros(a.ncols(), b.ncols(), "a posterior covariance")?;
    faer::linalg::matmul::matmul(
        p.as_mut(),
        faer::Accum::Replace,
        a.transpose(),
        b.as_ref(),
        1.0,
        faer::get_global_parallelism(),
    );
    Ok(p)
}

/// Right-hand sides (columns) one task of [`solve_lower_by_columns`] solves, about: enough
/// that each task's triangular solve runs at matrix-product speed.
const SOLVE_COLUMNS: usize = 256;

/// `A ← L⁻¹A` for the M×N* projections of a prediction block: the columns cut into equal
/// chunks of about [`SOLVE_COLUMNS`], as many as a multiple of the worker threads so that
/// none waits for a last chunk (never one column alone: faer rounds a lone right-hand side
/// differently), each solved sequentially, the chunks in parallel. A chunk's columns
/// stay in cache (M = 5000: 48 GFLOP/s on one core for 256 columns, 34 for 2000 at once) and
/// the tasks need no fork-join inside the solve; a column's values do not depend on the
/// chunking (`predictions_do_not_depend_on_the_block_size`).
pub(super) fn solve_lower_by_columns(chol: &Cholesky, a: &mut Mat<f64>) {
    use rayon::prelude::*;
    let n = a.ncols();
    let threads = rayon::current_num_threads().max(1);
    let chunks = n
        .div_ceil(SOLVE_COLUMNS)
        .next_multiple_of(threads)
        .min(n / 2)
        .max(1);
    let mut parts = Vec::with_capacity(chunks);
    let mut rest = a.as_mut();
    for c in 0..chunks {
        let width = (c + 1) * n / chunks - c * n / chunks;
        let (head, tail) = rest.split_at_col_mut(width);
        parts.push(head);
        rest = tail;
    }
    parts
        .into_par_iter()
        .for_each(|part| chol.solve_lower_in_place_seq(part));
}

/// Multiply row i of `a` by `s[i]` (`diag(s) A`), one contiguous column at a time, columns in
/// parallel.
pub(super) fn scale_rows(a: &mut Mat<f64>, s: &[f64]) {
    use rayon::prelude::*;
    debug_assert_eq!(a.nrows(), s.len());
    a.par_col_iter_mut().for_each(|c| {
        let c = c
            .try_as_col_major_mut()
            .expect("an owned matrix")
            .as_slice_mut();
        for (v, si) in c.iter_mut().zip(s) {
            *v *= si;
        }
    });
}
