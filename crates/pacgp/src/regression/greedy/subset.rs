//! The exact refit of `R` over a growing basis S by Cholesky appends (seed 002 Algorithm 2's
//! "find α minimising R(Σ_j α_j x_{i_j})", and the refit step of the greedy variants).
//!
//! Over S with kernel columns `C = K_{:,S}` the objective is
//! `R(α_S) = ‖y‖²/(2n) − b_Sᵀα_S + ½α_SᵀA_Sα_S` with the normal matrix
//! `A_S = CᵀC/n + λK_SS` and `b_S = Cᵀy/n`. With `L Lᵀ = A_S` and `z = L⁻¹b_S` the minimum is
//! `R_S = ‖y‖²/(2n) − ½‖z‖²` at `α_S = L⁻ᵀz`. Appending column `c` of point j costs one
//! forward solve: `a = Cᵀc/n + λc_S`, `l = L⁻¹a`, `δ² = cᵀc/n + λc_j − ‖l‖²` (the Schur
//! complement), `z_j = (cᵀy/n − lᵀz)/δ`, and R drops by `½z_j²`: `O(kn)` for `a`, `O(k²)`
//! for `l`, never a refactorisation.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatRef, Par};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::linalg::dot;

/// Relative size of the Schur complement below which a column adds nothing new to the basis.
pub(crate) const SCHUR_RTOL: f64 = 1e-12;

/// What appending one column would do (computed without changing the fit).
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    /// `l = L⁻¹a`, the new row of the factor without its diagonal.
    pub l: Vec<f64>,
    /// `δ²`, the Schur complement of the new column in `A_{S∪j}`.
    pub schur: f64,
    /// `cᵀy/n`.
    pub b: f64,
    /// `½ z_j²`, the decrease of R (0 for a dependent column).
    pub gain: f64,
}

impl Probe {
    /// Whether the column is independent of the basis (a positive Schur complement).
    pub fn is_independent(&self) -> bool {
        let d = self.schur + dot(&self.l, &self.l);
        self.schur > SCHUR_RTOL * d && d > 0.0
    }
}

/// `R` refit on a growing basis (see the module doc).
#[derive(Clone, Debug)]
pub(crate) struct SubsetFit {
    n: usize,
    lambda: f64,
    r_zero: f64,
    /// Basis indices, in order of entry.
    pub idx: Vec<usize>,
    /// Kernel columns `C = K_{:,S}` of the basis, column-major (n×k).
    cols: Vec<f64>,
    /// Rows of the lower factor L of `A_S`, row r holding `L_{r,0..=r}`.
    rows: Vec<Vec<f64>>,
    /// `z = L⁻¹b_S`.
    z: Vec<f64>,
}

impl SubsetFit {
    /// The empty basis for n points, `R = R(0)`.
    pub fn new(n: usize, lambda: f64, r_zero: f64) -> Self {
        Self {
            n,
            lambda,
            r_zero,
            idx: Vec::new(),
            cols: Vec::new(),
            rows: Vec::new(),
            z: Vec::new(),
        }
    }

    /// Basis size k.
    pub fn len(&self) -> usize {
        self.idx.len()
    }

    /// `min_{α_S} R`.
    pub fn objective(&self) -> f64 {
        self.r_zero - 0.5 * dot(&self.z, &self.z)
    }

    /// `L⁻¹v` by forward substitution (`O(k²)`).
    pub fn solve_lower(&self, v: &[f64]) -> Vec<f64> {
        let mut out = Vec::with_capacity(v.len());
        for (r, row) in self.rows.iter().enumerate() {
            let s = v[r] - dot(&row[..r], &out);
            out.push(s / row[r]);
        }
        out
    }

    /// `C = K_{:,S}` as an n×k matrix view.
    fn basis_columns(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.cols, self.n, self.len())
    }

    /// The normal-matrix column `a = Cᵀc/n + λc_S` of a candidate with kernel column `c`.
    pub fn cross_column(&self, c: &[f64]) -> Vec<f64> {
        let n = self.n as f64;
        self.cols
            .chunks_exact(self.n)
            .zip(&self.idx)
            .map(|(cj, &j)| dot(cj, c) / n + self.lambda * c[j])
            .collect()
    }

    /// [`Self::probe`] for every column of `cands` (n×κ, the kernel columns of points
    /// `idx`), with `CᵀK_{:,idx}` as one matrix product (`O(κkn)`) and one forward solve
    /// per candidate (`O(κk²)`).
    pub fn probe_batch(&self, idx: &[usize], cands: MatRef<'_, f64>, y: &[f64]) -> Vec<Probe> {
        let n = self.n as f64;
        let k = self.len();
        let mut ctc = crate::memory::zeros(k, idx.len());
        if k > 0 {
            // A thin product (k, κ ≪ n): sequential, as `linalg` passes `Par` per call.
            matmul(
                ctc.as_mut(),
                Accum::Replace,
                self.basis_columns().transpose(),
                cands,
                1.0,
                Par::Seq,
            );
        }
        (0..idx.len())
            .into_par_iter()
            .map(|c| {
                let col = cands
                    .col(c)
                    .try_as_col_major()
                    .expect("contiguous")
                    .as_slice();
                let a: Vec<f64> = (0..k)
                    .map(|r| ctc[(r, c)] / n + self.lambda * col[self.idx[r]])
                    .collect();
                self.probe_with(idx[c], col, y, self.solve_lower(&a))
            })
            .collect()
    }

    /// The effect of appending point j with kernel column `c`, given `l = L⁻¹a` (from
    /// [`Self::cross_column`] and [`Self::solve_lower`], or maintained by the caller).
    pub fn probe_with(&self, j: usize, c: &[f64], y: &[f64], l: Vec<f64>) -> Probe {
        let n = self.n as f64;
        let d = dot(c, c) / n + self.lambda * c[j];
        let schur = d - dot(&l, &l);
        let b = dot(c, y) / n;
        let gain = if schur > SCHUR_RTOL * d && d > 0.0 {
            let zj = (b - dot(&l, &self.z)) / schur.sqrt();
            0.5 * zj * zj
        } else {
            0.0
        };
        Probe { l, schur, b, gain }
    }

    /// [`Self::probe_with`] computing `l` from scratch (`O(kn + k²)`).
    pub fn probe(&self, j: usize, c: &[f64], y: &[f64]) -> Probe {
        let l = self.solve_lower(&self.cross_column(c));
        self.probe_with(j, c, y, l)
    }

    /// Append point j with its kernel column and its probe (`O(k)` beyond the probe).
    pub fn append(&mut self, j: usize, c: Vec<f64>, probe: Probe) -> Result<()> {
        if !probe.is_independent() {
            return Err(Error::NotPositiveDefinite {
                what: "normal matrix CᵀC/n + λK_SS of the greedy basis",
                pivot: self.len(),
                jitter_tried: 0.0,
            });
        }
        let delta = probe.schur.sqrt();
        let zj = (probe.b - dot(&probe.l, &self.z)) / delta;
        let mut row = probe.l;
        row.push(delta);
        self.rows.push(row);
        self.z.push(zj);
        self.idx.push(j);
        self.cols.extend_from_slice(&c);
        Ok(())
    }

    /// `α_S = L⁻ᵀz` by back substitution (`O(k²)`).
    pub fn alpha(&self) -> Vec<f64> {
        let k = self.len();
        let mut a = self.z.clone();
        for r in (0..k).rev() {
            a[r] /= self.rows[r][r];
            let ar = a[r];
            for (c, v) in a.iter_mut().enumerate().take(r) {
                *v -= self.rows[r][c] * ar;
            }
        }
        a
    }

    /// Fitted values `f = Cα_S` at the n training points (`O(kn)`).
    pub fn fitted(&self) -> Vec<f64> {
        let a = self.alpha();
        let mut f = vec![0.0; self.n];
        for (c, ac) in self.cols.chunks_exact(self.n).zip(&a) {
            for (fi, ci) in f.iter_mut().zip(c) {
                *fi += ac * ci;
            }
        }
        f
    }
}
