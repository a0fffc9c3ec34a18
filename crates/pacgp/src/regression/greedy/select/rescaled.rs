//! Algorithms 1 and 3 of seed 002 with its rescaled step: the iterate `w = Σ α_j x_{basis_j}` kept
//! in `O(n)` per step, each candidate's best rescaled step, and the loop.

use super::*;

/// The current iterate of the rescaled algorithms: `w = Σ α_j x_{basis_j}`, `f = Kα`,
/// `‖w‖² = αᵀKα`, updated in `O(n)` per step.
struct RescaleState {
    basis: Vec<usize>,
    position: Vec<Option<usize>>,
    alpha: Vec<f64>,
    f: Vec<f64>,
    w_sq: f64,
}

/// The sufficient statistics of one candidate i with kernel column c.
#[derive(Clone, Copy, Debug)]
struct CandidateStats {
    /// `fᵀc`.
    fc: f64,
    /// `cᵀc`.
    cc: f64,
    /// `cᵀy`.
    cy: f64,
    /// `c_i = k(x_i, x_i)`.
    ci: f64,
    /// `f_i`.
    fi: f64,
}

/// The minimiser `(β, a)` of `R(βw + a x_i)` and its value (seed 002 Algorithm 1's step).
///
/// `R(βw + ax_i) = ‖y‖²/(2n) − gᵀs + ½sᵀHs`, `s = (β, a)`, with
/// `H = [[fᵀf/n + λ‖w‖², fᵀc/n + λf_i], [·, cᵀc/n + λc_i]]` and `g = (fᵀy/n, cᵀy/n)`.
/// When H is singular (w = 0, or x_i ∥ w in this metric) the best one-parameter fit is taken.
fn rescaled_step(
    n: f64,
    lambda: f64,
    r_zero: f64,
    ff: f64,
    fy: f64,
    w_sq: f64,
    s: CandidateStats,
) -> (f64, f64, f64) {
    let h11 = ff / n + lambda * w_sq;
    let h12 = s.fc / n + lambda * s.fi;
    let h22 = s.cc / n + lambda * s.ci;
    let (g1, g2) = (fy / n, s.cy / n);
    let det = h11 * h22 - h12 * h12;
    if h11 > 0.0 && h22 > 0.0 && det > 1e-10 * h11 * h22 {
        let beta = (h22 * g1 - h12 * g2) / det;
        let a = (h11 * g2 - h12 * g1) / det;
        return (beta, a, r_zero - 0.5 * (g1 * beta + g2 * a));
    }
    let beta_only = if h11 > 0.0 { g1 * g1 / h11 } else { 0.0 };
    let a_only = if h22 > 0.0 { g2 * g2 / h22 } else { 0.0 };
    if beta_only >= a_only {
        let beta = if h11 > 0.0 { g1 / h11 } else { 1.0 };
        (beta, 0.0, r_zero - 0.5 * beta_only)
    } else {
        // x_i alone (w = 0 or x_i ∥ w).
        (0.0, g2 / h22, r_zero - 0.5 * a_only)
    }
}

impl RescaleState {
    fn new(n: usize) -> Self {
        Self {
            basis: Vec::new(),
            position: vec![None; n],
            alpha: Vec::new(),
            f: vec![0.0; n],
            w_sq: 0.0,
        }
    }

    fn stats(&self, i: usize, c: &[f64], y: &[f64]) -> CandidateStats {
        CandidateStats {
            fc: dot(&self.f, c),
            cc: dot(c, c),
            cy: dot(c, y),
            ci: c[i],
            fi: self.f[i],
        }
    }

    /// `w ← βw + a x_i`, `f ← βf + a c`, `‖w‖² ← β²‖w‖² + 2βaf_i + a²c_i`.
    fn apply(&mut self, i: usize, c: &[f64], beta: f64, a: f64) {
        let fi = self.f[i];
        self.w_sq = beta * beta * self.w_sq + 2.0 * beta * a * fi + a * a * c[i];
        for v in &mut self.alpha {
            *v *= beta;
        }
        match self.position[i] {
            Some(p) => self.alpha[p] += a,
            None => {
                self.position[i] = Some(self.basis.len());
                self.basis.push(i);
                self.alpha.push(a);
            }
        }
        for (fj, cj) in self.f.iter_mut().zip(c) {
            *fj = beta * *fj + a * cj;
        }
    }

    /// `R(w) = (‖f‖² − 2fᵀy + ‖y‖²)/(2n) + (λ/2)‖w‖²`.
    fn objective(&self, problem: &GreedyProblem<'_>) -> f64 {
        let n = problem.n() as f64;
        let y = problem.y();
        let sq: f64 = self.f.iter().zip(y).map(|(f, y)| (f - y).powi(2)).sum();
        sq / (2.0 * n) + 0.5 * problem.lambda() * self.w_sq
    }
}

pub(super) fn rescale_loop(
    problem: &GreedyProblem<'_>,
    algorithm: Algorithm,
    run: &mut Run,
) -> Result<()> {
    let n = problem.n();
    let (nf, lambda, r0, y) = (n as f64, problem.lambda(), problem.r_zero(), problem.y());
    let mut st = RescaleState::new(n);
    // Full greedy: cᵀc and cᵀy of every column once, Kf at every step.
    let full = match (algorithm, problem.gram()) {
        (Algorithm::Greedy, Some(g)) => Some((g, linalg::col_sq_norms(g), linalg::mat_t_vec(g, y))),
        _ => None,
    };
    let mut r = r0;
    for _ in 0..run.max_steps() {
        let ff = dot(&st.f, &st.f);
        let fy = dot(&st.f, y);
        let best = match (&full, algorithm) {
            (Some((g, cc, cy)), _) => {
                let kf = linalg::mat_t_vec(g, &st.f);
                (0..n)
                    .into_par_iter()
                    .map(|i| {
                        let s = CandidateStats {
                            fc: kf[i],
                            cc: cc[i],
                            cy: cy[i],
                            ci: g[(i, i)],
                            fi: st.f[i],
                        };
                        let (b, a, v) = rescaled_step(nf, lambda, r0, ff, fy, st.w_sq, s);
                        (i, b, a, v)
                    })
                    .reduce_with(better)
                    .map(|(i, b, a, v)| (i, b, a, v, g.col_as_slice(i).to_vec()))
            }
            (None, Algorithm::KappaGreedy { kappa }) => {
                let cand = candidates(&mut run.rng, n, kappa);
                let cols = problem.columns(&cand)?;
                (0..cand.len())
                    .into_par_iter()
                    .map(|c| {
                        let i = cand[c];
                        let s = st.stats(i, cols.col_as_slice(c), y);
                        let (b, a, v) = rescaled_step(nf, lambda, r0, ff, fy, st.w_sq, s);
                        (c, b, a, v)
                    })
                    .reduce_with(better)
                    .map(|(c, b, a, v)| (cand[c], b, a, v, cols.col_as_slice(c).to_vec()))
            }
            _ => unreachable!("full greedy always holds the Gram matrix"),
        };
        let Some((i, beta, a, value)) = best.as_ref().map(|b| (b.0, b.1, b.2, b.3)) else {
            break;
        };
        if value >= r {
            run.reason = StopReason::NoImprovement;
            break;
        }
        st.apply(i, &best.expect("checked").4, beta, a);
        r = st.objective(problem);
        let more = run.record(problem, i, r, || {
            (st.basis.clone(), st.alpha.clone(), st.f.clone())
        })?;
        if !more {
            break;
        }
    }
    run.set_state((st.basis, st.alpha, st.f));
    Ok(())
}

/// The lower objective value; ties to the lower index (deterministic under rayon).
fn better(a: (usize, f64, f64, f64), b: (usize, f64, f64, f64)) -> (usize, f64, f64, f64) {
    if b.3 < a.3 || (b.3 == a.3 && b.0 < a.0) {
        b
    } else {
        a
    }
}
