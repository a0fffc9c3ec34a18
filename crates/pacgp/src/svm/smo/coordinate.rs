//! The bias-free SMO step (`svm::smo`): choosing the coordinate of largest second-order gain
//! `G_t²/Q_tt` among violators, and the step's gradient update fused with the next choice, in
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

    proptest! {
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
