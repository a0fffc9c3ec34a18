//! The bias-free SMO step (`svm::smo`): choosing the coordinate of largest second-order gain
//! `G_t²/Q_tt` among violators, its partner of largest joint gain and the two coordinates'
//! box-constrained Newton step, and the step's gradient update fused with the next choice, in
//! vectorised lanes that choose as the plain scan in index order does.

use crate::vector_math::VectorLoop;

/// A running bias-free selection: the violator of largest second-order gain `G_t²/Q_tt` (the
/// first on ties) and the largest violation seen.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SingleChoice {
    pub(super) best: Option<usize>,
    pub(super) best_gain: f64,
    pub(super) max_violation: f64,
}

impl SingleChoice {
    /// Coordinate t with its violation and `1/max(Q_tt, TAU)` (a product, not a division: this
    /// runs for every active coordinate at every step). A gain above the running best (≥ 0)
    /// implies a positive violation.
    #[inline(always)]
    pub(super) fn consider(&mut self, t: usize, violation: f64, inv_curvature: f64) {
        self.max_violation = self.max_violation.max(violation);
        let gain = violation * violation * inv_curvature;
        if gain > self.best_gain {
            self.best_gain = gain;
            self.best = Some(t);
        }
    }

    /// The coordinate to step, with the largest violation; `None` once it is below `eps`.
    pub(super) fn step(self, eps: f64) -> Option<(usize, f64)> {
        if self.max_violation < eps {
            return None;
        }
        self.best.map(|t| (t, self.max_violation))
    }
}

/// The bias-free KKT violation of a coordinate with gradient `g` and value `a` in `[0, c]`:
/// `−g` if it can rise, `g` if it can fall, else 0 (0 for a NaN gradient). Comparisons, not
/// `f64::max`, so that loops over it vectorise.
#[inline(always)]
pub(super) fn violation(g: f64, a: f64, c: f64) -> f64 {
    let rise = if (a < c) & (-g > 0.0) { -g } else { 0.0 };
    let fall = if (a > 0.0) & (g > 0.0) { g } else { 0.0 };
    if rise > fall {
        rise
    } else {
        fall
    }
}

/// Two coordinates `(i, j)` of the bias-free dual `½αᵀQα − 1ᵀα` on the box `[0, C]²`: their
/// gradients, their curvatures `Q_ii`, `Q_jj` (floored at `TAU`), `Q_ij`, and their values.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pair {
    pub(super) g: [f64; 2],
    pub(super) q: [f64; 2],
    pub(super) q_ij: f64,
    pub(super) a: [f64; 2],
    pub(super) c: f64,
}

impl Pair {
    /// The joint second-order gain of partner t for coordinate i (twice the decrease of the
    /// unconstrained 2×2 Newton step), `(Q_tt G_i² − 2Q_it G_i G_t + Q_ii G_t²)/(Q_ii Q_tt − Q_it²)`;
    /// `None` for a (near-)singular pair, e.g. a repeated input, whose Newton step is unbounded.
    pub(super) fn gain(g: [f64; 2], q: [f64; 2], q_ij: f64) -> Option<f64> {
        let det = q[0] * q[1] - q_ij * q_ij;
        (det > 1e-10 * q[0] * q[1])
            .then(|| (q[1] * g[0] * g[0] - 2.0 * q_ij * g[0] * g[1] + q[0] * g[1] * g[1]) / det)
    }

    /// The change of the pair's objective for steps `d`.
    fn objective(&self, d: [f64; 2]) -> f64 {
        0.5 * (self.q[0] * d[0] * d[0] + 2.0 * self.q_ij * d[0] * d[1] + self.q[1] * d[1] * d[1])
            + self.g[0] * d[0]
            + self.g[1] * d[1]
    }

    /// The minimiser over coordinate `k`'s box with the other's step fixed at `other`.
    fn best_alone(&self, k: usize, other: f64) -> f64 {
        let g = self.g[k] + self.q_ij * other;
        (self.a[k] - g / self.q[k]).clamp(0.0, self.c) - self.a[k]
    }

    /// The steps `(d_i, d_j)` minimising the pair's objective on the box: the Newton step if
    /// it stays inside, else the best point of the box's edges (the convex problem's minimum
    /// is on one of them), each edge minimised over the free coordinate by clipping. Never
    /// worse than coordinate i's step alone (also a candidate), so the dual decreases.
    pub(super) fn newton_step(&self) -> [f64; 2] {
        let det = self.q[0] * self.q[1] - self.q_ij * self.q_ij;
        let newton = [
            -(self.q[1] * self.g[0] - self.q_ij * self.g[1]) / det,
            -(self.q[0] * self.g[1] - self.q_ij * self.g[0]) / det,
        ];
        let inside = |k: usize| {
            let v = self.a[k] + newton[k];
            (0.0..=self.c).contains(&v)
        };
        if det > 0.0 && inside(0) && inside(1) {
            return newton;
        }
        let alone = [self.best_alone(0, 0.0), 0.0];
        let mut best = (self.objective(alone), alone);
        for k in 0..2 {
            for bound in [0.0, self.c] {
                if !bound.is_finite() {
                    continue;
                }
                let mut d = [0.0; 2];
                d[k] = bound - self.a[k];
                d[1 - k] = self.best_alone(1 - k, d[k]);
                let value = self.objective(d);
                if value < best.0 {
                    best = (value, d);
                }
            }
        }
        best.1
    }
}

/// A bias-free step's gradient update `G += d·Q_i·` over every coordinate, fused with the
/// next selection: the same choice as [`SingleChoice::consider`] over the coordinates in
/// order (the first of largest gain). It runs in lanes of four under [`vectorised`], each
/// lane keeping its largest violation, its largest gain and that gain's first index; the
/// lanes are then merged (ties to the smaller index).
pub(super) struct CoordinateStep<'a> {
    pub(super) grad: &'a mut [f64],
    pub(super) qi: &'a [f64],
    pub(super) d: f64,
    pub(super) alpha: &'a [f64],
    pub(super) inv_curvature: &'a [f64],
    pub(super) c: f64,
}

const LANES: usize = 4;

/// The running maxima of one lane of [`CoordinateStep`] (the index as a double, exact below
/// 2⁵³, so that the lane's selects are all on doubles and vectorise).
#[derive(Clone, Copy, Default)]
struct Lane {
    violation: f64,
    gain: f64,
    index: f64,
}

impl Lane {
    /// Coordinate k: update its gradient and fold its violation and gain into the lane.
    #[inline(always)]
    fn step(&mut self, k: f64, g: &mut f64, (q, a, inv): (f64, f64, f64), (d, c): (f64, f64)) {
        *g += q * d;
        let v = violation(*g, a, c);
        self.violation = if v > self.violation {
            v
        } else {
            self.violation
        };
        let gain = v * v * inv;
        let better = gain > self.gain;
        self.gain = if better { gain } else { self.gain };
        self.index = if better { k } else { self.index };
    }
}

impl VectorLoop for CoordinateStep<'_> {
    type Output = SingleChoice;
    #[inline(always)]
    fn run(self) -> SingleChoice {
        let mut lanes = [Lane::default(); LANES];
        let n = self.grad.len();
        let whole = n - n % LANES;
        let dc = (self.d, self.c);
        for (chunk, (((g, q), a), inv)) in self.grad[..whole]
            .chunks_exact_mut(LANES)
            .zip(self.qi[..whole].chunks_exact(LANES))
            .zip(self.alpha[..whole].chunks_exact(LANES))
            .zip(self.inv_curvature[..whole].chunks_exact(LANES))
            .enumerate()
        {
            for l in 0..LANES {
                let k = (chunk * LANES + l) as f64;
                lanes[l].step(k, &mut g[l], (q[l], a[l], inv[l]), dc);
            }
        }
        for k in whole..n {
            let coordinate = (self.qi[k], self.alpha[k], self.inv_curvature[k]);
            lanes[0].step(k as f64, &mut self.grad[k], coordinate, dc);
        }
        merge(lanes)
    }
}

/// [`CoordinateStep`] on a shrunk active set (indices increasing): the same lanes over the
/// active coordinates, gathered by index.
pub(super) struct ActiveCoordinateStep<'a> {
    pub(super) step: CoordinateStep<'a>,
    pub(super) active: &'a [usize],
}

impl VectorLoop for ActiveCoordinateStep<'_> {
    type Output = SingleChoice;
    #[inline(always)]
    fn run(self) -> SingleChoice {
        let s = self.step;
        let mut lanes = [Lane::default(); LANES];
        let dc = (s.d, s.c);
        let mut chunks = self.active.chunks_exact(LANES);
        for chunk in &mut chunks {
            for l in 0..LANES {
                let k = chunk[l];
                let coordinate = (s.qi[k], s.alpha[k], s.inv_curvature[k]);
                lanes[l].step(k as f64, &mut s.grad[k], coordinate, dc);
            }
        }
        for &k in chunks.remainder() {
            let coordinate = (s.qi[k], s.alpha[k], s.inv_curvature[k]);
            lanes[0].step(k as f64, &mut s.grad[k], coordinate, dc);
        }
        merge(lanes)
    }
}

/// The selection of lanes that each saw their coordinates in increasing order: the largest
/// violation, and the largest gain at its smallest index.
#[inline(always)]
fn merge(lanes: [Lane; LANES]) -> SingleChoice {
    let mut choice = SingleChoice::default();
    for lane in lanes {
        choice.max_violation = choice.max_violation.max(lane.violation);
        let index = lane.index as usize;
        let first = choice.best.is_none_or(|b| index < b);
        let tie = lane.gain == choice.best_gain && lane.gain > 0.0 && first;
        if lane.gain > choice.best_gain || tie {
            choice.best_gain = lane.gain;
            choice.best = Some(index);
        }
    }
    choice
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector_math::vectorised;
    use proptest::prelude::*;

    /// The scan the lanes replace, as it was written before them: every coordinate of
    /// `active` in order, its gradient updated, then its violation and gain compared with the
    /// best so far (the first of largest gain wins).
    fn scan(
        grad: &mut [f64],
        qi: &[f64],
        d: f64,
        alpha: &[f64],
        inv: &[f64],
        c: f64,
        active: &[usize],
    ) -> SingleChoice {
        let mut pick = SingleChoice::default();
        for &k in active {
            grad[k] += qi[k] * d;
            let (g, a) = (grad[k], alpha[k]);
            let rise = if a < c { (-g).max(0.0) } else { 0.0 };
            let fall = if a > 0.0 { g.max(0.0) } else { 0.0 };
            let violation = rise.max(fall);
            pick.max_violation = pick.max_violation.max(violation);
            let gain = violation * violation * inv[k];
            if violation > 0.0 && gain > pick.best_gain {
                pick.best_gain = gain;
                pick.best = Some(k);
            }
        }
        pick
    }

    /// Coordinates drawn from a few values, so that equal gains (ties) and coordinates at
    /// either bound are common.
    fn coordinate() -> impl Strategy<Value = (f64, f64, f64, f64)> {
        (
            prop::sample::select(vec![-2.0, -0.5, 0.0, 0.5, 2.0]),
            prop::sample::select(vec![-1.0, 0.0, 1.0]),
            prop::sample::select(vec![0.0, 0.5, 1.0]),
            prop::sample::select(vec![0.5, 1.0, 2.0]),
        )
    }

    /// Positive-definite 2×2 curvatures, gradients, values in the box (often at a bound) and
    /// a finite or infinite C (the quadratic slack's box).
    fn pair() -> impl Strategy<Value = Pair> {
        (
            (0.05..3.0f64, 0.05..3.0f64, -0.99..0.99f64),
            (-3.0..3.0f64, -3.0..3.0f64),
            (0usize..3, 0usize..3, 0.0..1.0f64),
            prop::sample::select(vec![0.5, 2.0, f64::INFINITY]),
        )
            .prop_map(|((qi, qj, r), (gi, gj), (bi, bj, u), c)| {
                let at = |b: usize| match b {
                    0 => 0.0,
                    1 if c.is_finite() => c,
                    _ => u * c.min(2.0),
                };
                Pair {
                    g: [gi, gj],
                    q: [qi, qj],
                    q_ij: r * (qi * qj).sqrt(),
                    a: [at(bi), at(bj)],
                    c,
                }
            })
    }

    proptest! {
        /// The pair's step is the minimiser of the box-constrained 2×2 problem: it stays in
        /// the box and satisfies its KKT conditions (necessary and sufficient for a convex
        /// problem): zero gradient inside, non-negative at 0, non-positive at C.
        #[test]
        fn pair_step_solves_the_box_problem(p in pair()) {
            let d = p.newton_step();
            for k in 0..2 {
                let a = p.a[k] + d[k];
                let g = p.g[k] + p.q[k] * d[k] + p.q_ij * d[1 - k];
                prop_assert!((-1e-12..=p.c + 1e-12).contains(&a), "α {a} outside [0, {}]", p.c);
                let tol = 1e-9 * (1.0 + p.g[0].abs() + p.g[1].abs());
                if a <= 1e-12 {
                    prop_assert!(g >= -tol, "at 0 with gradient {g}");
                } else if a >= p.c - 1e-12 {
                    prop_assert!(g <= tol, "at C with gradient {g}");
                } else {
                    prop_assert!(g.abs() <= tol, "inside with gradient {g}");
                }
            }
        }

        /// The vectorised lanes make the scan's choice (the first coordinate of largest gain,
        /// the largest violation) and the same gradient bits, on all coordinates and on a
        /// shrunk active set.
        #[test]
        fn lanes_choose_as_the_scan(
            coords in prop::collection::vec(coordinate(), 1..40),
            d in prop::sample::select(vec![-0.75, 0.0, 0.25, 1.0]),
            keep in prop::collection::vec(any::<bool>(), 40),
        ) {
            let c = 1.0;
            let grad: Vec<f64> = coords.iter().map(|t| t.0).collect();
            let qi: Vec<f64> = coords.iter().map(|t| t.1).collect();
            let alpha: Vec<f64> = coords.iter().map(|t| t.2).collect();
            let inv: Vec<f64> = coords.iter().map(|t| t.3).collect();
            let n = grad.len();
            let all: Vec<usize> = (0..n).collect();
            let shrunk: Vec<usize> = (0..n).filter(|&k| keep[k]).collect();
            for active in [&all, &shrunk] {
                let (mut expected, mut got) = (grad.clone(), grad.clone());
                let want = scan(&mut expected, &qi, d, &alpha, &inv, c, active);
                let step = CoordinateStep {
                    grad: &mut got,
                    qi: &qi,
                    d,
                    alpha: &alpha,
                    inv_curvature: &inv,
                    c,
                };
                let pick = if active.len() == n {
                    vectorised(step)
                } else {
                    vectorised(ActiveCoordinateStep { step, active })
                };
                prop_assert_eq!(pick.best, want.best);
                prop_assert_eq!(pick.best_gain.to_bits(), want.best_gain.to_bits());
                prop_assert_eq!(pick.max_violation.to_bits(), want.max_violation.to_bits());
                prop_assert_eq!(&got, &expected);
            }
        }
    }
}
