//! Shrinking (libsvm's `do_shrinking`): bound variables that cannot move at the current gap leave
//! the active set, for the pair and the single-coordinate solvers; the set is restored once when
//! the gap first falls to 10ε.

use super::*;

impl Smo<'_> {
    /// libsvm `do_shrinking`: drop bound variables that cannot move at the current gap;
    /// unshrink once when the gap first falls to 10ε.
    pub(super) fn shrink_pair(&mut self) {
        let (mut g1, mut g2) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for &t in &self.active {
            if self.y[t] > 0.0 {
                if !self.upper(t) {
                    g1 = g1.max(-self.grad[t]);
                }
                if !self.lower(t) {
                    g2 = g2.max(self.grad[t]);
                }
            } else {
                if !self.upper(t) {
                    g2 = g2.max(-self.grad[t]);
                }
                if !self.lower(t) {
                    g1 = g1.max(self.grad[t]);
                }
            }
        }
        if !self.unshrunk && g1 + g2 <= 10.0 * self.eps {
            self.unshrunk = true;
            self.reconstruct();
        }
        let keep = |s: &Self, t: usize| {
            let (g, y) = (s.grad[t], s.y[t]);
            if s.upper(t) {
                if y > 0.0 {
                    !(-g > g1)
                } else {
                    !(-g > g2)
                }
            } else if s.lower(t) {
                if y > 0.0 {
                    !(g > g2)
                } else {
                    !(g > g1)
                }
            } else {
                true
            }
        };
        self.retain_active(keep);
    }

    pub(super) fn retain_active(&mut self, keep: impl Fn(&Self, usize) -> bool) {
        let kept: Vec<usize> = self
            .active
            .iter()
            .copied()
            .filter(|&t| keep(self, t))
            .collect();
        if kept.len() < self.active.len() {
            for &t in &self.active {
                self.is_active[t] = false;
            }
            for &t in &kept {
                self.is_active[t] = true;
            }
            self.active = kept;
            self.next_single = None;
        }
    }

    /// Bias-free shrinking: bound variables pushed outward by more than the current violation.
    pub(super) fn shrink_single(&mut self) {
        let m = self
            .active
            .iter()
            .map(|&t| self.violation(t))
            .fold(0.0f64, f64::max);
        if !self.unshrunk && m <= 10.0 * self.eps {
            self.unshrunk = true;
            self.reconstruct();
        }
        self.retain_active(|s, t| {
            let g = s.grad[t];
            !((s.lower(t) && g > m) || (s.upper(t) && -g > m))
        });
    }
}
