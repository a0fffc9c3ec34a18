//! Sequential minimal optimisation for the SVM dual (Platt 1999) with libsvm's refinements
//! (Chang & Lin 2011, `svm.cpp` `Solver`): second-order working-set selection (Fan, Chen &
//! Lin 2005, WSS 2), shrinking with gradient reconstruction, and an LRU cache of kernel rows
//! so `k` is never held (N too large for `N²` doubles works with `O(N·rows)` memory).
//!
//! In libsvm's form we minimise `g(α) = ½ αᵀ Q α − eᵀα`, `Q_ij = y_i y_j k_ij`, with gradient
//! `G = Qα − e`; `W = −g`. With a bias the pair `(i, j)` maximising the second-order gain
//! `(G-gap)²/(Q_ii + Q_jj − 2 y_i y_j Q_ij)` among violating pairs is updated analytically
//! (keeping `Σ y_i α_i`); it stops when `m(α) − M(α) < ε` (the maximal violating pair's
//! gap). Without a bias there is no equality constraint: the coordinate i with the largest
//! second-order gain `G_i²/Q_ii` among violators is updated together with the violator j of
//! largest joint gain, by the pair's box-constrained Newton step (two-coordinate working sets
//! for SVMs without offset, Steinwart, Hush & Scovel 2011; on Wisconsin at C = 100 they need
//! 1 100–1 200 steps where the coordinate alone needed 22 000–33 000); stop: max violation < ε.
//! Each step costs `O(N)` plus at most two kernel rows (`O(N·D)` each when not cached).

use std::sync::Arc;

use super::row_cache::Cache;
use super::{field_of, report, KernelRows, Row, SvmConfig};
use crate::error::{Error, Result};
use crate::inference::ConvergenceReport;
use crate::vector_math::vectorised;

mod coordinate;
use coordinate::{violation, ActiveCoordinateStep, CoordinateStep, Pair, SingleChoice};

mod shrinking;

/// libsvm's `TAU`: curvature floor for non-positive-definite pairs.
const TAU: f64 = 1e-12;

/// Solver state (libsvm `Solver` with an explicit active list instead of swapped indices).
struct Smo<'a> {
    rows: &'a dyn KernelRows,
    y: &'a [f64],
    c: f64,
    eps: f64,
    alpha: Vec<f64>,
    grad: Vec<f64>,
    grad_bar: Vec<f64>, // Σ_{j at upper bound} C Q_ij (for reconstruction after shrinking)
    qd: Vec<f64>,
    /// `max(Q_ii, TAU)`, the curvature of a bias-free coordinate step, and its inverse.
    qd_floor: Vec<f64>,
    inv_qd_floor: Vec<f64>,
    /// The bias-free selection made by the last [`Smo::update_single`] (cleared whenever the
    /// active set changes).
    next_single: Option<SingleChoice>,
    active: Vec<usize>,
    is_active: Vec<bool>,
    epoch: u64,
    cache: Cache,
    unshrunk: bool,
    all: Vec<usize>,
    kernel_rows_computed: usize,
}

impl<'a> Smo<'a> {
    fn new(rows: &'a dyn KernelRows, y: &'a [f64], cfg: &SvmConfig) -> Self {
        let n = y.len();
        Self {
            rows,
            y,
            c: cfg.slack.upper(),
            eps: cfg.tol,
            alpha: vec![0.0; n],
            grad: vec![-1.0; n],
            grad_bar: vec![0.0; n],
            qd: (0..n).map(|i| rows.diag(i)).collect(),
            qd_floor: (0..n).map(|i| rows.diag(i).max(TAU)).collect(),
            inv_qd_floor: (0..n).map(|i| 1.0 / rows.diag(i).max(TAU)).collect(),
            next_single: None,
            active: (0..n).collect(),
            is_active: vec![true; n],
            epoch: 0,
            cache: Cache::new(n, cfg.cache_mb),
            unshrunk: false,
            all: (0..n).collect(),
            kernel_rows_computed: 0,
        }
    }

    /// Signed row `Q_i·`, valid on the active set (or everywhere if `full`).
    fn row(&mut self, i: usize, full: bool) -> Row {
        if let Some(r) = self.cache.lookup(i, self.epoch, full) {
            return r;
        }
        let n = self.y.len();
        let complete = full || self.active.len() == n;
        let cols: &[usize] = if complete { &self.all } else { &self.active };
        let mut vals = vec![0.0; cols.len()];
        self.rows.fill_row(i, cols, &mut vals);
        let mut r = vec![0.0; n];
        let yi = self.y[i];
        for (&j, v) in cols.iter().zip(vals) {
            r[j] = yi * self.y[j] * v;
        }
        self.kernel_rows_computed += 1;
        let r = Arc::new(r);
        self.cache.insert(i, Arc::clone(&r), self.epoch, complete);
        r
    }

    fn upper(&self, i: usize) -> bool {
        self.alpha[i] >= self.c
    }
    fn lower(&self, i: usize) -> bool {
        self.alpha[i] <= 0.0
    }

    /// Gradient (and `grad_bar`) of a warm start `α0` (feasibility is the caller's).
    fn warm_start(&mut self, alpha0: &[f64]) {
        let n = self.y.len();
        self.alpha = alpha0.iter().map(|a| a.clamp(0.0, self.c)).collect();
        let f = field_of(self.rows, self.y, &self.alpha);
        for i in 0..n {
            self.grad[i] = self.y[i] * f[i] - 1.0; // (Qα)_i − 1
        }
        if self.c.is_finite() {
            let at_upper: Vec<f64> = (0..n)
                .map(|j| if self.upper(j) { self.c } else { 0.0 })
                .collect();
            let fb = field_of(self.rows, self.y, &at_upper);
            for i in 0..n {
                self.grad_bar[i] = self.y[i] * fb[i];
            }
        }
    }

    /// libsvm `reconstruct_gradient`: `G_i = Ḡ_i − 1 + Σ_{j free} Q_ij α_j` for inactive i.
    fn reconstruct(&mut self) {
        let n = self.y.len();
        if self.active.len() == n {
            return;
        }
        let inactive: Vec<usize> = (0..n).filter(|&i| !self.is_active[i]).collect();
        for &i in &inactive {
            self.grad[i] = self.grad_bar[i] - 1.0;
        }
        let free: Vec<usize> = (0..n)
            .filter(|&j| !self.upper(j) && !self.lower(j))
            .collect();
        for j in free {
            let r = self.row(j, true);
            let a = self.alpha[j];
            for &i in &inactive {
                self.grad[i] += a * r[i];
            }
        }
        self.active = (0..n).collect();
        self.is_active = vec![true; n];
        self.epoch += 1;
        self.next_single = None;
    }

    /// WSS 2 (Fan, Chen & Lin 2005, libsvm `select_working_set`): `None` when optimal.
    fn select_pair(&mut self) -> Option<(usize, usize)> {
        let mut gmax = f64::NEG_INFINITY;
        let mut imax = None;
        for &t in &self.active {
            let y = self.y[t];
            if y > 0.0 {
                if !self.upper(t) && -self.grad[t] >= gmax {
                    gmax = -self.grad[t];
                    imax = Some(t);
                }
            } else if !self.lower(t) && self.grad[t] >= gmax {
                gmax = self.grad[t];
                imax = Some(t);
            }
        }
        let i = imax?;
        let qi = self.row(i, false);
        let mut gmax2 = f64::NEG_INFINITY;
        let mut jmin = None;
        let mut obj_min = f64::INFINITY;
        let yi = self.y[i];
        for &j in &self.active {
            let (gd, gj) = if self.y[j] > 0.0 {
                if self.lower(j) {
                    continue;
                }
                (gmax + self.grad[j], self.grad[j])
            } else {
                if self.upper(j) {
                    continue;
                }
                (gmax - self.grad[j], -self.grad[j])
            };
            gmax2 = gmax2.max(gj);
            if gd > 0.0 {
                // quad = Q_ii + Q_jj − 2 y_i y_j Q_ij in the unsigned kernel
                let quad = self.qd[i] + self.qd[j] - 2.0 * yi * self.y[j] * qi[j];
                let obj = -(gd * gd) / if quad > 0.0 { quad } else { TAU };
                if obj <= obj_min {
                    obj_min = obj;
                    jmin = Some(j);
                }
            }
        }
        if gmax + gmax2 < self.eps {
            return None;
        }
        jmin.map(|j| (i, j))
    }

    /// The analytic two-variable update (libsvm `Solve`, inner block), then `G` and `Ḡ`.
    fn update_pair(&mut self, i: usize, j: usize) {
        let qi = self.row(i, false);
        let qj = self.row(j, false);
        let c = self.c;
        let (old_i, old_j) = (self.alpha[i], self.alpha[j]);
        let (mut ai, mut aj) = (old_i, old_j);
        if self.y[i] != self.y[j] {
            let quad = (self.qd[i] + self.qd[j] + 2.0 * qi[j]).max(TAU);
            let delta = (-self.grad[i] - self.grad[j]) / quad;
            let diff = ai - aj;
            ai += delta;
            aj += delta;
            if diff > 0.0 {
                if aj < 0.0 {
                    aj = 0.0;
                    ai = diff;
                }
            } else if ai < 0.0 {
                ai = 0.0;
                aj = -diff;
            }
            if diff > 0.0 {
                if ai > c {
                    ai = c;
                    aj = c - diff;
                }
            } else if aj > c {
                aj = c;
                ai = c + diff;
            }
        } else {
            let quad = (self.qd[i] + self.qd[j] - 2.0 * qi[j]).max(TAU);
            let delta = (self.grad[i] - self.grad[j]) / quad;
            let sum = ai + aj;
            ai -= delta;
            aj += delta;
            clip_to_box_on_sum(&mut ai, &mut aj, sum, c);
            clip_to_box_on_sum(&mut aj, &mut ai, sum, c);
        }
        self.alpha[i] = ai;
        self.alpha[j] = aj;
        let (di, dj) = (ai - old_i, aj - old_j);
        for &k in &self.active {
            self.grad[k] += qi[k] * di + qj[k] * dj;
        }
        self.update_grad_bar(i, old_i);
        self.update_grad_bar(j, old_j);
    }

    /// `Ḡ` changes when α_i enters or leaves the upper bound.
    fn update_grad_bar(&mut self, i: usize, old: f64) {
        if !self.c.is_finite() {
            return;
        }
        let (was, is) = (old >= self.c, self.upper(i));
        if was != is {
            let r = self.row(i, true);
            let s = if is { self.c } else { -self.c };
            for k in 0..self.y.len() {
                self.grad_bar[k] += s * r[k];
            }
        }
    }

    /// Bias-free: the violating coordinate with the largest `G_i²/Q_ii` (`None`: optimal).
    /// Reuses the choice [`Self::update_single`] made in its gradient pass when the active set
    /// has not changed since.
    fn select_single(&mut self) -> Option<(usize, f64)> {
        let choice = self.next_single.take().unwrap_or_else(|| {
            let mut pick = SingleChoice::default();
            for &t in &self.active {
                pick.consider(t, self.violation(t), self.inv_qd_floor[t]);
            }
            pick
        });
        choice.step(self.eps)
    }

    /// The bias-free KKT violation of coordinate t ([`violation`]).
    fn violation(&self, t: usize) -> f64 {
        violation(self.grad[t], self.alpha[t], self.c)
    }

    /// The bias-free step from coordinate i: with its partner ([`Self::partner`]) the pair's
    /// box-constrained Newton step, else `α_i ← clip(α_i − G_i/Q_ii, 0, C)`. The last gradient
    /// pass also makes the next selection (the same scan [`Self::select_single`] would make).
    fn update_single(&mut self, i: usize) {
        let qi = self.row(i, false);
        let step = match self.partner(i, &qi) {
            Some(j) => {
                let pair = Pair {
                    g: [self.grad[i], self.grad[j]],
                    q: [self.qd_floor[i], self.qd_floor[j]],
                    q_ij: qi[j],
                    a: [self.alpha[i], self.alpha[j]],
                    c: self.c,
                };
                let [di, dj] = pair.newton_step();
                (di, (dj != 0.0).then_some((j, dj)))
            }
            None => {
                let old = self.alpha[i];
                (
                    (old - self.grad[i] / self.qd_floor[i]).clamp(0.0, self.c) - old,
                    None,
                )
            }
        };
        let (di, second) = step;
        let old_i = self.alpha[i];
        self.alpha[i] = old_i + di;
        match second {
            Some((j, dj)) => {
                let qj = self.row(j, false);
                let old_j = self.alpha[j];
                self.alpha[j] = old_j + dj;
                self.add_to_gradient(&qi, di);
                self.fused_step(&qj, dj);
                self.update_grad_bar(i, old_i);
                self.update_grad_bar(j, old_j);
            }
            None => {
                self.fused_step(&qi, di);
                self.update_grad_bar(i, old_i);
            }
        }
    }

    /// The violator `j ≠ i` of largest joint gain with i ([`Pair::gain`]), if that gain is
    /// larger than i's alone (the first on ties; none if no other coordinate violates).
    fn partner(&self, i: usize, qi: &[f64]) -> Option<usize> {
        let (gi, qii) = (self.grad[i], self.qd_floor[i]);
        let mut best = (gi * gi * self.inv_qd_floor[i], None);
        for &t in &self.active {
            if t == i || self.violation(t) <= 0.0 {
                continue;
            }
            if let Some(gain) = Pair::gain([gi, self.grad[t]], [qii, self.qd_floor[t]], qi[t]) {
                if gain > best.0 {
                    best = (gain, Some(t));
                }
            }
        }
        best.1
    }

    /// `G += d·Q_i·` on the active coordinates.
    fn add_to_gradient(&mut self, qi: &[f64], d: f64) {
        if d == 0.0 {
            return;
        }
        if self.active.len() == self.y.len() {
            for (g, q) in self.grad.iter_mut().zip(qi) {
                *g += q * d;
            }
        } else {
            for &k in &self.active {
                self.grad[k] += qi[k] * d;
            }
        }
    }

    /// `G += d·Q_i·` on the active coordinates, fused with the next selection.
    fn fused_step(&mut self, qi: &[f64], d: f64) {
        let step = CoordinateStep {
            grad: &mut self.grad,
            qi,
            d,
            alpha: &self.alpha,
            inv_curvature: &self.inv_qd_floor,
            c: self.c,
        };
        let pick = if self.active.len() == self.y.len() {
            // Every coordinate active (no shrinking yet, or after reconstruction): contiguous.
            vectorised(step)
        } else {
            vectorised(ActiveCoordinateStep {
                step,
                active: &self.active,
            })
        };
        self.next_single = Some(pick);
    }

    /// Largest KKT violation over all variables (after reconstruction): the final gap.
    fn final_gap(&self, bias: bool) -> f64 {
        if bias {
            let (mut g1, mut g2) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
            for t in 0..self.y.len() {
                let g = self.grad[t];
                if self.y[t] > 0.0 {
                    if !self.upper(t) {
                        g1 = g1.max(-g);
                    }
                    if !self.lower(t) {
                        g2 = g2.max(g);
                    }
                } else {
                    if !self.upper(t) {
                        g2 = g2.max(-g);
                    }
                    if !self.lower(t) {
                        g1 = g1.max(g);
                    }
                }
            }
            (g1 + g2).max(0.0)
        } else {
            (0..self.y.len())
                .map(|t| self.violation(t))
                .fold(0.0, f64::max)
        }
    }
}

/// One side of libsvm's clip for a pair of equal labels, which moves along `α_a + α_b = sum`:
/// with `sum > C`, an `α_a` past `C` is put at `C`; otherwise an `α_b` below 0 is put at 0 (the
/// other taking the rest of `sum` either way). Run with the pair in both orders.
fn clip_to_box_on_sum(a: &mut f64, b: &mut f64, sum: f64, c: f64) {
    if sum > c {
        if *a > c {
            *a = c;
            *b = sum - c;
        }
    } else if *b < 0.0 {
        *b = 0.0;
        *a = sum;
    }
}

/// Run SMO; returns `(α, F = k(y∘α), report)`. A warm start must satisfy the box (it is
/// clipped) and, with a bias, `Σ y_i α_i = 0`.
pub(crate) fn solve(
    rows: &dyn KernelRows,
    y: &[f64],
    cfg: &SvmConfig,
    alpha0: Option<&[f64]>,
) -> Result<(Vec<f64>, Vec<f64>, ConvergenceReport)> {
    let n = y.len();
    let mut s = Smo::new(rows, y, cfg);
    if let Some(a0) = alpha0 {
        s.warm_start(a0);
        if cfg.bias {
            let sy: f64 = (0..n).map(|i| y[i] * s.alpha[i]).sum();
            let scale = s.alpha.iter().sum::<f64>().max(1.0);
            if sy.abs() > 1e-9 * scale {
                return Err(Error::InvalidParameter {
                    name: "SVM warm start Σ y_i α_i",
                    value: sy,
                    reason: "must be 0 when a bias is fitted",
                });
            }
        }
    }
    let period = n.min(1000);
    let mut counter = period + 1;
    let mut iter = 0;
    let mut converged = false;
    while iter < cfg.max_iter {
        counter -= 1;
        if counter == 0 {
            counter = period;
            if cfg.shrinking {
                if cfg.bias {
                    s.shrink_pair();
                } else {
                    s.shrink_single();
                }
            }
        }
        let step = if cfg.bias {
            s.select_pair().map(|(i, j)| (i, Some(j)))
        } else {
            s.select_single().map(|(i, _)| (i, None))
        };
        let step = match step {
            Some(p) => p,
            None => {
                s.reconstruct();
                let again = if cfg.bias {
                    s.select_pair().map(|(i, j)| (i, Some(j)))
                } else {
                    s.select_single().map(|(i, _)| (i, None))
                };
                match again {
                    Some(p) => {
                        counter = 1;
                        p
                    }
                    None => {
                        converged = true;
                        break;
                    }
                }
            }
        };
        iter += 1;
        match step {
            (i, Some(j)) => s.update_pair(i, j),
            (i, None) => s.update_single(i),
        }
    }
    s.reconstruct();
    let gap = s.final_gap(cfg.bias);
    if s.alpha.iter().any(|a| !a.is_finite()) {
        return Err(Error::Numerical {
            what: "SMO",
            message: "non-finite dual variable".into(),
        });
    }
    // F_i = y_i (G_i + 1) = Σ_j k_ij y_j α_j
    let field: Vec<f64> = (0..n).map(|i| y[i] * (s.grad[i] + 1.0)).collect();
    let notes = vec![format!(
        "SMO: {} kernel rows computed, cache capacity {} rows, final gap {gap:.3e}",
        s.kernel_rows_computed, s.cache.capacity
    )];
    Ok((s.alpha, field, report(converged, iter, gap, notes)))
}
