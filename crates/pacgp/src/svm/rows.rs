//! Kernel rows for the solvers: from a precomputed Gram matrix, or computed from the inputs
//! on demand (SE rows, with a constant term for the certified SVM's prior kernel, through the
//! vectorised exp).

use super::*;

/// A precomputed Gram matrix (plus a diagonal shift), optionally restricted to a subset of
/// its rows (the training set of a leave-one-out refit).
pub struct DenseRows<'a> {
    gram: MatRef<'a, f64>,
    shift: f64,
    index: Option<&'a [usize]>,
}

impl<'a> DenseRows<'a> {
    /// `k = gram + shift·I`.
    pub fn new(gram: MatRef<'a, f64>, shift: f64) -> Self {
        Self {
            gram,
            shift,
            index: None,
        }
    }

    /// `k` restricted to rows/columns `index` of `gram` (`index` strictly increasing).
    pub fn subset(gram: MatRef<'a, f64>, shift: f64, index: &'a [usize]) -> Self {
        Self {
            gram,
            shift,
            index: Some(index),
        }
    }

    fn map(&self, i: usize) -> usize {
        self.index.map_or(i, |ix| ix[i])
    }
}

impl KernelRows for DenseRows<'_> {
    fn n(&self) -> usize {
        self.index.map_or(self.gram.nrows(), |ix| ix.len())
    }
    fn diag(&self, i: usize) -> f64 {
        let g = self.map(i);
        self.gram[(g, g)] + self.shift
    }
    fn fill_row(&self, i: usize, cols: &[usize], out: &mut [f64]) {
        let gi = self.map(i);
        let col = self.gram.col(gi); // symmetric: column gi = row gi, contiguous
        for (o, &j) in out.iter_mut().zip(cols) {
            *o = col[self.map(j)];
        }
        if let Some(t) = cols.iter().position(|&j| j == i) {
            out[t] += self.shift;
        }
    }
}

/// Kernel rows computed from the inputs (an LRU cache in [`smo`] keeps the recent ones).
/// Stationary kernels `σ²k(‖(x − x')/l‖²)` use `‖u‖² + ‖u'‖² − 2u·u'` on rescaled rows.
pub struct InputRows {
    kernel: Kernel,
    rows: Vec<f64>, // row-major, rescaled by the lengthscales for stationary kernels
    sq_norms: Vec<f64>,
    d: usize,
    n: usize,
    stationary: Option<(f64, Profile)>,
    /// A constant term of the kernel (only with a stationary body; else in `kernel`).
    offset: f64,
    shift: f64,
}

impl InputRows {
    /// `k = K(x, x) + shift·I` for `kernel` on the rows of `x`.
    pub fn new(kernel: &Kernel, x: MatRef<'_, f64>, shift: f64) -> Result<Self> {
        kernel.check_input_dim(x.ncols())?;
        let (n, d) = (x.nrows(), x.ncols());
        // A constant term (the certified SVM's bias prior `k + σ_b²`) is an offset of every entry.
        let (body, offset) = match kernel {
            Kernel::Sum { left, right } => match right.as_ref() {
                Kernel::Constant { ln_variance } => (left.as_ref(), Some(ln_variance.exp())),
                _ => (kernel, None),
            },
            _ => (kernel, None),
        };
        let stationary = match body {
            Kernel::Scale { ln_variance, inner } => match inner.as_ref() {
                Kernel::Stationary {
                    profile,
                    ln_lengthscale,
                    groups,
                } => Some((
                    ln_variance.exp(),
                    *profile,
                    crate::kernel::per_input(ln_lengthscale, groups.as_deref()).into_owned(),
                )),
                _ => None,
            },
            Kernel::Stationary {
                profile,
                ln_lengthscale,
                groups,
            } => Some((
                1.0,
                *profile,
                crate::kernel::per_input(ln_lengthscale, groups.as_deref()).into_owned(),
            )),
            _ => None,
        };
        let offset = if stationary.is_some() {
            offset.unwrap_or(0.0)
        } else {
            0.0
        };
        let scale = |j: usize| match &stationary {
            Some((_, _, ln_l)) if ln_l.len() == 1 => (-ln_l[0]).exp(),
            Some((_, _, ln_l)) => (-ln_l[j]).exp(),
            None => 1.0,
        };
        let scales: Vec<f64> = (0..d).map(scale).collect();
        let mut rows = vec![0.0; n * d];
        for i in 0..n {
            for j in 0..d {
                rows[i * d + j] = x[(i, j)] * scales[j];
            }
        }
        let sq_norms = rows.chunks(d.max(1)).map(|r| dot(r, r)).take(n).collect();
        Ok(Self {
            kernel: kernel.clone(),
            rows,
            sq_norms,
            d,
            n,
            stationary: stationary.map(|(v, p, _)| (v, p)),
            offset,
            shift,
        })
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.rows[i * self.d..(i + 1) * self.d]
    }

    fn eval(&self, i: usize, j: usize) -> f64 {
        match self.stationary {
            Some((var, profile)) => {
                let r2 = if i == j {
                    0.0
                } else {
                    (self.sq_norms[i] + self.sq_norms[j] - 2.0 * dot(self.row(i), self.row(j)))
                        .max(0.0)
                };
                var * profile.value_and_slope(r2).0 + self.offset
            }
            None => self.kernel.eval(self.row(i), self.row(j)),
        }
    }
}

/// Dot product in four independent lanes (lets the compiler vectorise it).
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for t in 0..4 {
            s[t] += x[t] * y[t];
        }
    }
    let tail: f64 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    (s[0] + s[1]) + (s[2] + s[3]) + tail
}

impl KernelRows for InputRows {
    fn n(&self) -> usize {
        self.n
    }
    fn diag(&self, i: usize) -> f64 {
        self.eval(i, i) + self.shift
    }
    fn fill_row(&self, i: usize, cols: &[usize], out: &mut [f64]) {
        if cols.len() * self.d.max(1) > 200_000 {
            out.par_chunks_mut(4096)
                .zip(cols.par_chunks(4096))
                .for_each(|(o, c)| self.fill_block(i, c, o));
        } else {
            self.fill_block(i, cols, out);
        }
    }
}

impl InputRows {
    /// Entries `(i, j)` for `j` in `cols`: squared-exponential kernels take their exponentials
    /// in one vectorised pass ([`crate::vector_math::exp_in_place`]), others entry by entry.
    fn fill_block(&self, i: usize, cols: &[usize], out: &mut [f64]) {
        match self.stationary {
            Some((var, Profile::SquaredExponential)) => {
                let ui = self.row(i);
                for (o, &j) in out.iter_mut().zip(cols) {
                    let r2 = if i == j {
                        0.0
                    } else {
                        (self.sq_norms[i] + self.sq_norms[j] - 2.0 * dot(ui, self.row(j))).max(0.0)
                    };
                    *o = -0.5 * r2;
                }
                crate::vector_math::exp_in_place(out);
                for o in out.iter_mut() {
                    *o = var * *o + self.offset;
                }
            }
            _ => {
                for (o, &j) in out.iter_mut().zip(cols) {
                    *o = self.eval(i, j);
                }
            }
        }
        if let Some(t) = cols.iter().position(|&j| j == i) {
            out[t] += self.shift;
        }
    }
}

/// Kernel rows computed once and kept for every solve on the same kernel and inputs (the
/// SVM menu's slacks for one kernel, and their leave-one-out): whole rows of [`InputRows`]
/// on first use, each solve's diagonal shift added on reading ([`SharedRows::shifted`]).
/// Every entry has the bits [`InputRows`] gives it. Memory: up to N² doubles.
pub struct SharedRows {
    inner: InputRows,
    all: Vec<usize>,
    rows: Vec<std::sync::OnceLock<Vec<f64>>>,
}

impl SharedRows {
    /// The rows of `kernel` on the rows of `x`, none computed yet.
    pub fn new(kernel: &Kernel, x: MatRef<'_, f64>) -> Result<Self> {
        let inner = InputRows::new(kernel, x, 0.0)?;
        let n = inner.n();
        Ok(Self {
            inner,
            all: (0..n).collect(),
            rows: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
        })
    }

    /// Whether `n` points' rows for `kernels` kernels fit in `cache_mb` megabytes.
    pub fn fit_in(n: usize, kernels: usize, cache_mb: f64) -> bool {
        (n as f64).powi(2) * 8.0 * kernels as f64 <= cache_mb * 1024.0 * 1024.0
    }

    /// These rows with `shift` added on the diagonal (a slack's `v`; 0 for the linear slack).
    pub fn shifted(&self, shift: f64) -> ShiftedRows<'_> {
        ShiftedRows {
            shared: self,
            shift,
        }
    }

    fn row(&self, i: usize) -> &[f64] {
        self.rows[i].get_or_init(|| {
            let mut r = vec![0.0; self.all.len()];
            self.inner.fill_row(i, &self.all, &mut r);
            r
        })
    }
}

/// [`SharedRows`] with a diagonal shift, for one solve.
pub struct ShiftedRows<'a> {
    shared: &'a SharedRows,
    shift: f64,
}

impl KernelRows for ShiftedRows<'_> {
    fn n(&self) -> usize {
        self.shared.inner.n()
    }
    fn diag(&self, i: usize) -> f64 {
        self.shared.inner.diag(i) + self.shift
    }
    fn fill_row(&self, i: usize, cols: &[usize], out: &mut [f64]) {
        let row = self.shared.row(i);
        for (o, &j) in out.iter_mut().zip(cols) {
            *o = row[j];
        }
        if let Some(t) = cols.iter().position(|&j| j == i) {
            out[t] += self.shift;
        }
    }
}
