//! Seed 002 (Zhang's sparse GP in the dual): objectives against dense closed forms and the
//! duality identities of Lemmas 2.1–2.3; the incremental updates of Algorithms 1–3 against
//! from-scratch refits and brute-force step searches; the paper's orthonormal example;
//! Theorem 3.1 on seeded random problems; the sparse posterior against exact GPR.

use faer::Mat;
use pacgp::kernel::Kernel;
use pacgp::linalg::{Cholesky, JitterPolicy};
use pacgp::regression::exact::ExactGp;
use pacgp::regression::greedy::{
    dense_solution, dual_objective, duality_gap, lemma_2_3_lower_bound, primal_objective, select,
    theorem_3_1_bound, Algorithm, GreedyConfig, GreedyProblem, GreedySparseGp, Selection,
    StopReason, StopRule, Update,
};
use pacgp::Error;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A smooth 2-D regression problem with uniform noise.
fn problem_data(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.gen_range(-2.0f64..2.0));
    let y = (0..n)
        .map(|i| x[(i, 0)].sin() + 0.5 * x[(i, 1)] + rng.gen_range(-0.3..0.3))
        .collect();
    (x, y)
}

fn rbf() -> Kernel {
    Kernel::se_iso(0.8, 1.3)
}

/// The full n-vector of dual weights of a selection.
fn full_alpha(n: usize, s: &Selection) -> Vec<f64> {
    let mut a = vec![0.0; n];
    for (&j, v) in s.basis.iter().zip(&s.alpha) {
        a[j] += v;
    }
    a
}

/// `argmin_α R` over the basis S, from scratch: `(K_SNK_NS/n + λK_SS)α = K_SNy/n`.
fn scratch_refit(gram: &Mat<f64>, y: &[f64], lambda: f64, basis: &[usize]) -> Vec<f64> {
    let (n, k) = (y.len(), basis.len());
    let nf = n as f64;
    let a = Mat::from_fn(k, k, |p, q| {
        let (i, j) = (basis[p], basis[q]);
        (0..n).map(|t| gram[(t, i)] * gram[(t, j)]).sum::<f64>() / nf + lambda * gram[(i, j)]
    });
    let b: Vec<f64> = basis
        .iter()
        .map(|&i| (0..n).map(|t| gram[(t, i)] * y[t]).sum::<f64>() / nf)
        .collect();
    Cholesky::factor(a.as_ref(), &JitterPolicy::none(), "A_S")
        .unwrap()
        .solve_vec(&b)
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

fn cfg(algorithm: Algorithm, update: Update, k: usize, seed: u64) -> GreedyConfig {
    GreedyConfig {
        algorithm,
        update,
        stop: StopRule::Steps { k },
        seed,
    }
}

const ALL: [(Algorithm, Update); 5] = [
    (Algorithm::Greedy, Update::Rescale),
    (Algorithm::Greedy, Update::Refit),
    (Algorithm::KappaGreedy { kappa: 7 }, Update::Rescale),
    (Algorithm::KappaGreedy { kappa: 7 }, Update::Refit),
    (Algorithm::Random, Update::Refit),
];

/// Lemma 2.1 (`R(ŵ) = Q(α̂)`), zero gradient at the optimum, Lemma 2.2's identity
/// `R(w) − Q(α') = ‖∂R/∂w‖²/(2λ) ≥ ΔR(w)` and Lemma 2.3's `ΔQ(α) ≥ (1/2n)Σ(f̂ − y + λnα)²`.
#[test]
fn objectives_and_duality_identities() {
    let (x, y) = problem_data(40, 1);
    let k = rbf();
    let gram = k.gram(x.as_ref()).unwrap();
    let lambda = 0.02;
    let opt = dense_solution(&gram, &y, lambda).unwrap();
    // Eq. 4 by its defining identity: λnα̂ = y − Kα̂.
    for i in 0..y.len() {
        assert!(rel_close(
            lambda * 40.0 * opt.alpha[i],
            y[i] - opt.fitted[i],
            1e-10
        ));
    }
    let q_hat = dual_objective(&gram, &y, lambda, &opt.alpha);
    assert!(
        rel_close(opt.r_hat, q_hat, 1e-12),
        "{} vs {q_hat}",
        opt.r_hat
    );
    assert!(rel_close(
        opt.r_hat,
        primal_objective(&gram, &y, lambda, &opt.alpha),
        1e-12
    ));
    assert!(duality_gap(&gram, &y, lambda, &opt.alpha).gradient_bound < 1e-12);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for _ in 0..20 {
        let alpha: Vec<f64> = (0..40).map(|_| rng.gen_range(-0.5..0.5)).collect();
        let gap = duality_gap(&gram, &y, lambda, &alpha);
        let r = primal_objective(&gram, &y, lambda, &alpha);
        assert!(rel_close(gap.primal, r, 1e-14));
        assert!(rel_close(
            gap.primal - gap.dual_at_residuals,
            gap.gradient_bound,
            1e-9
        ));
        assert!(r - opt.r_hat <= gap.gradient_bound * (1.0 + 1e-12));
        let dq = opt.delta_q(&gram, &y, lambda, &alpha);
        assert!(rel_close(
            dq,
            q_hat - dual_objective(&gram, &y, lambda, &alpha),
            1e-12
        ));
        assert!(rel_close(
            opt.delta_r(&gram, &y, lambda, &alpha),
            r - opt.r_hat,
            1e-14
        ));
        assert!(dq >= lemma_2_3_lower_bound(&opt.fitted, &y, lambda, &alpha) * (1.0 - 1e-12));
        // Weak duality: every dual value lies below every primal value.
        assert!(dual_objective(&gram, &y, lambda, &alpha) <= r);
    }
}

/// Every algorithm's incrementally kept weights, fit and objective path agree with a
/// from-scratch evaluation (and, where it refits, a from-scratch solve) to 1e-9.
#[test]
fn incremental_updates_match_scratch() {
    let (x, y) = problem_data(60, 3);
    let kern = rbf();
    let gram = kern.gram(x.as_ref()).unwrap();
    let lambda = 0.01;
    let p = GreedyProblem::new(&kern, x.as_ref(), &y, lambda).unwrap();
    for (algorithm, update) in ALL {
        let s = select(&p, &cfg(algorithm, update, 25, 4)).unwrap();
        assert_eq!(s.k(), 25, "{algorithm:?} {update:?}");
        let alpha = full_alpha(60, &s);
        let f = pacgp::linalg::mat_vec(&gram, &alpha);
        for i in 0..60 {
            assert!(
                rel_close(f[i], s.fitted[i], 1e-9),
                "{algorithm:?} {update:?}"
            );
        }
        let r = primal_objective(&gram, &y, lambda, &alpha);
        assert!(
            rel_close(r, s.r(), 1e-9),
            "{algorithm:?} {update:?}: {r} {}",
            s.r()
        );
        if update == Update::Refit || algorithm == Algorithm::Random {
            let a = scratch_refit(&gram, &y, lambda, &s.basis);
            for (u, v) in a.iter().zip(&s.alpha) {
                assert!(rel_close(*u, *v, 1e-9), "{algorithm:?}: {u} vs {v}");
            }
        }
        // R decreases along the path (every step is a minimisation over a superset).
        for w in s.r_path.windows(2) {
            assert!(w[1] <= w[0] * (1.0 + 1e-12));
        }
    }
}

/// Algorithm 1's rescaled step, by brute force: at each of the first steps, the chosen
/// `(i, β, α)` attains `min_i min_{β,α} R(βw + αx_i)` computed from scratch for every i.
#[test]
fn rescaled_greedy_step_is_the_brute_force_minimum() {
    let (x, y) = problem_data(30, 5);
    let kern = rbf();
    let gram = kern.gram(x.as_ref()).unwrap();
    let lambda = 0.01;
    let p = GreedyProblem::new(&kern, x.as_ref(), &y, lambda).unwrap();
    let s = select(&p, &cfg(Algorithm::Greedy, Update::Rescale, 6, 0)).unwrap();
    for k in 1..6 {
        let prev = select(&p, &cfg(Algorithm::Greedy, Update::Rescale, k, 0)).unwrap();
        let w = full_alpha(30, &prev);
        let best = (0..30)
            .map(|i| {
                // Two-column least squares in (β, α) on the basis {w, x_i}.
                let mut e = vec![0.0; 30];
                e[i] = 1.0;
                let r = |b: f64, a: f64| {
                    let v: Vec<f64> = (0..30).map(|t| b * w[t] + a * e[t]).collect();
                    primal_objective(&gram, &y, lambda, &v)
                };
                // R is quadratic: recover H and g from values, minimise exactly.
                let r0 = r(0.0, 0.0);
                let (h11, h22) = (
                    r(1.0, 0.0) + r(-1.0, 0.0) - 2.0 * r0,
                    r(0.0, 1.0) + r(0.0, -1.0) - 2.0 * r0,
                );
                let h12 = r(1.0, 1.0) - r(1.0, 0.0) - r(0.0, 1.0) + r0;
                let g1 = -(r(1.0, 0.0) - r(-1.0, 0.0)) / 2.0;
                let g2 = -(r(0.0, 1.0) - r(0.0, -1.0)) / 2.0;
                let det = h11 * h22 - h12 * h12;
                if det > 1e-12 * h11 * h22 {
                    let (b, a) = ((h22 * g1 - h12 * g2) / det, (h11 * g2 - h12 * g1) / det);
                    r(b, a)
                } else {
                    r(0.0, g2 / h22).min(if h11 > 0.0 { r(g1 / h11, 0.0) } else { r0 })
                }
            })
            .fold(f64::INFINITY, f64::min);
        assert!(
            rel_close(best, s.r_path[k + 1], 1e-9),
            "step {}: {best} vs {}",
            k + 1,
            s.r_path[k + 1]
        );
    }
}

/// Algorithm 1 with the exact refit, by brute force: each step adds the point whose
/// from-scratch refit is lowest.
#[test]
fn refit_greedy_step_is_the_brute_force_minimum() {
    let (x, y) = problem_data(25, 6);
    let kern = rbf();
    let gram = kern.gram(x.as_ref()).unwrap();
    let lambda = 0.005;
    let p = GreedyProblem::new(&kern, x.as_ref(), &y, lambda).unwrap();
    let s = select(&p, &cfg(Algorithm::Greedy, Update::Refit, 8, 0)).unwrap();
    for k in 0..8 {
        let basis = &s.steps[..k];
        let best = (0..25)
            .filter(|i| !basis.contains(i))
            .map(|i| {
                let mut b = basis.to_vec();
                b.push(i);
                let a = scratch_refit(&gram, &y, lambda, &b);
                let mut full = vec![0.0; 25];
                for (&j, v) in b.iter().zip(&a) {
                    full[j] = *v;
                }
                primal_objective(&gram, &y, lambda, &full)
            })
            .fold(f64::INFINITY, f64::min);
        assert!(rel_close(best, s.r_path[k + 1], 1e-9), "step {}", k + 1);
    }
}

/// Seed 002 §3.2's example: `x_i = e_i`, `y_i = 1`, n = d. Then `ŵ = Σe_i/(1 + λn)` and every
/// k-subset is a best k-term approximation with `ΔR = (1 − k/n)/(2(1 + λn))`.
#[test]
fn orthonormal_example_of_section_3_2() {
    let n = 20;
    let x = Mat::from_fn(n, n, |i, j| if i == j { 1.0 } else { 0.0 });
    let y = vec![1.0; n];
    let kern = Kernel::Linear {
        ln_variance: vec![0.0],
    };
    let lambda = 0.03;
    let p = GreedyProblem::new(&kern, x.as_ref(), &y, lambda)
        .unwrap()
        .with_gram()
        .unwrap();
    let opt = dense_solution(p.gram().unwrap(), &y, lambda).unwrap();
    let c = 1.0 + lambda * n as f64;
    // R(ŵ) = ½(1 − 1/c)² + (λn/2)/c² ... = ½(λn)/c.
    assert!(rel_close(opt.r_hat, 0.5 * lambda * n as f64 / c, 1e-12));
    for (algorithm, update) in ALL {
        let s = select(&p, &cfg(algorithm, update, 12, 9)).unwrap();
        for k in 1..=12 {
            let dr = s.r_path[k] - opt.r_hat;
            let exact = (1.0 - k as f64 / n as f64) / (2.0 * c);
            assert!(
                rel_close(dr, exact, 1e-10),
                "{algorithm:?} {update:?} k={k}: {dr} vs {exact}"
            );
        }
    }
}

/// Theorem 3.1 on 12 seeded random problems (RBF and linear kernels, λ from 1e-3 to 1):
/// pointwise at every k for greedy (both updates), and for the randomised algorithms on the
/// mean over 10 runs (the theorem bounds their expectation).
#[test]
fn theorem_3_1_holds_on_random_problems() {
    let mut worst: f64 = 0.0;
    for seed in 0..12u64 {
        let (x, y) = problem_data(40, 100 + seed);
        let kern = if seed % 2 == 0 {
            rbf()
        } else {
            Kernel::Linear {
                ln_variance: vec![0.3],
            }
        };
        let lambda = [1e-3, 1e-2, 0.1, 1.0][(seed % 4) as usize];
        let p = GreedyProblem::new(&kern, x.as_ref(), &y, lambda)
            .unwrap()
            .with_gram()
            .unwrap();
        let r_hat = dense_solution(p.gram().unwrap(), &y, lambda).unwrap().r_hat;
        let kmax = 30;
        for (algorithm, update) in ALL {
            let runs = if algorithm == Algorithm::Greedy {
                1
            } else {
                10
            };
            let mut mean = vec![0.0; kmax + 1];
            for run in 0..runs {
                let s = select(&p, &cfg(algorithm, update, kmax, run)).unwrap();
                for k in 0..=kmax {
                    // A run that stops early keeps its last objective.
                    let r = s.r_path[k.min(s.k())];
                    mean[k] += (r - r_hat) / runs as f64;
                }
            }
            for (k, m) in mean.iter().enumerate() {
                let b = p.bound(k);
                assert!(
                    *m <= b * (1.0 + 1e-12),
                    "{algorithm:?} seed {seed} k {k}: {m} > {b}"
                );
                if k > 0 {
                    worst = worst.max(m / b);
                }
            }
        }
    }
    // The bound is not vacuous here: the largest mean ΔR(k)/bound(k) over k ≥ 1 is 0.87.
    assert!(worst > 0.5, "ΔR/bound at most {worst}");
}

/// The bound itself: `R(0)` at k = 0 and `O(1/k)` decay.
#[test]
fn theorem_3_1_bound_formula() {
    assert!(rel_close(theorem_3_1_bound(2.0, 1.0, 0.5, 0), 2.0, 1e-15));
    // (M² + λ)² = 2.25, λ²k = 0.25k: 2·2.25/(0.25k + 2.25).
    assert!(rel_close(
        theorem_3_1_bound(2.0, 1.0, 0.5, 9),
        4.5 / 4.5,
        1e-15
    ));
}

/// The greedy regressor's posterior is the DTC posterior on its basis with σ² = nλ: its mean
/// equals the refit model's prediction, and with the whole training set as the basis both
/// equal exact GP regression with noise σ².
#[test]
fn sparse_posterior_matches_refit_and_exact_gpr() {
    let (x, y) = problem_data(50, 7);
    let (xt, _) = problem_data(20, 8);
    let kern = rbf();
    let noise = 0.05;
    for (algorithm, update) in ALL {
        let gp = GreedySparseGp::fit(&kern, noise, x.as_ref(), &y, &cfg(algorithm, update, 15, 1))
            .unwrap();
        let post = gp.posterior(x.as_ref(), &y).unwrap();
        assert_eq!(post.cov.jitter(), 0.0);
        let m = post.predict(xt.as_ref()).unwrap().mean;
        let direct = gp.predict_mean(xt.as_ref()).unwrap();
        for (a, b) in m.iter().zip(&direct) {
            assert!(
                rel_close(*a, *b, 1e-8),
                "{algorithm:?} {update:?}: {a} vs {b}"
            );
        }
        assert!(post.kl_to_prior().unwrap().is_finite() && post.kl_to_prior().unwrap() >= 0.0);
        // The refit objective is the minimum over the basis: no higher than the path's end.
        assert!(gp.objective <= gp.selection.r() * (1.0 + 1e-12));
    }
    let (xs, ys) = problem_data(12, 9);
    let all = GreedySparseGp::fit(
        &kern,
        noise,
        xs.as_ref(),
        &ys,
        &cfg(Algorithm::Greedy, Update::Refit, 12, 0),
    )
    .unwrap();
    assert_eq!(all.n_basis(), 12);
    let exact = ExactGp::fit(
        kern.clone(),
        noise,
        xs.clone(),
        ys.clone(),
        &JitterPolicy::none(),
    )
    .unwrap();
    let me = exact.predict(xt.as_ref()).unwrap().mean;
    let mg = all
        .posterior(xs.as_ref(), &ys)
        .unwrap()
        .predict(xt.as_ref())
        .unwrap();
    for (a, b) in me.iter().zip(&mg.mean) {
        assert!(rel_close(*a, *b, 1e-7), "{a} vs {b}");
    }
}

/// Stopping at a target ΔR certified by Lemma 2.2 stops as soon as the gap bound is met.
#[test]
fn target_delta_r_stops_with_a_certified_gap() {
    let (x, y) = problem_data(60, 11);
    let kern = rbf();
    let lambda = 0.01;
    let p = GreedyProblem::new(&kern, x.as_ref(), &y, lambda)
        .unwrap()
        .with_gram()
        .unwrap();
    let r_hat = dense_solution(p.gram().unwrap(), &y, lambda).unwrap().r_hat;
    let c = GreedyConfig {
        algorithm: Algorithm::Greedy,
        update: Update::Refit,
        stop: StopRule::DeltaR {
            target: 1e-3,
            max_steps: 60,
        },
        seed: 0,
    };
    let s = select(&p, &c).unwrap();
    assert_eq!(s.stop, StopReason::TargetReached);
    let (k, gap) = *s.gap_checks.last().unwrap();
    assert_eq!(k, s.k());
    assert!(gap <= 1e-3 && s.r() - r_hat <= gap);
    // One step earlier the certificate was not met.
    let before = s.gap_checks[s.gap_checks.len() - 2];
    assert!(before.1 > 1e-3 && before.0 == k - 1);
}

/// Bad input is a typed error.
#[test]
fn bad_input_is_a_typed_error() {
    let (x, y) = problem_data(10, 12);
    let kern = rbf();
    assert!(matches!(
        GreedyProblem::new(&kern, x.as_ref(), &y, 0.0),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        GreedyProblem::new(&kern, x.as_ref(), &y[..9], 0.1),
        Err(Error::ShapeMismatch { .. })
    ));
    let mut ynan = y.clone();
    ynan[3] = f64::NAN;
    assert!(matches!(
        GreedyProblem::new(&kern, x.as_ref(), &ynan, 0.1),
        Err(Error::NonFinite { .. })
    ));
    let p = GreedyProblem::new(&kern, x.as_ref(), &y, 0.1).unwrap();
    for bad in [
        cfg(Algorithm::KappaGreedy { kappa: 0 }, Update::Rescale, 3, 0),
        cfg(Algorithm::KappaGreedy { kappa: 11 }, Update::Rescale, 3, 0),
        cfg(Algorithm::Greedy, Update::Rescale, 0, 0),
    ] {
        assert!(matches!(
            select(&p, &bad),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert!(matches!(
        GreedySparseGp::fit(
            &kern,
            -1.0,
            x.as_ref(),
            &y,
            &cfg(Algorithm::Greedy, Update::Refit, 3, 0)
        ),
        Err(Error::InvalidParameter { .. })
    ));
}

/// Theorem 3.1's report: `M` is the largest feature norm `√k(x_i, x_i)` (for the linear
/// kernel, the largest Euclidean row norm), and each row pairs the path's ΔR with the bound.
#[test]
fn theorem_3_1_report() {
    let (x, y) = problem_data(30, 13);
    let kern = Kernel::Linear {
        ln_variance: vec![0.0],
    };
    let p = GreedyProblem::new(&kern, x.as_ref(), &y, 0.05)
        .unwrap()
        .with_gram()
        .unwrap();
    let r_hat = dense_solution(p.gram().unwrap(), &y, 0.05).unwrap().r_hat;
    let s = select(&p, &cfg(Algorithm::Greedy, Update::Rescale, 10, 0)).unwrap();
    let t = p.theorem_3_1(&s.r_path, r_hat);
    let m = (0..30)
        .map(|i| (x[(i, 0)].powi(2) + x[(i, 1)].powi(2)).sqrt())
        .fold(0.0f64, f64::max);
    assert!(rel_close(t.max_norm, m, 1e-14));
    assert!(rel_close(
        t.r_zero,
        y.iter().map(|v| v * v).sum::<f64>() / 60.0,
        1e-14
    ));
    assert_eq!(t.rows.len(), s.r_path.len());
    for row in &t.rows {
        assert!(rel_close(row.delta_r, s.r_path[row.k] - r_hat, 1e-14));
        assert!(rel_close(
            row.bound,
            theorem_3_1_bound(t.r_zero, m, 0.05, row.k),
            1e-14
        ));
        assert!(row.delta_r <= row.bound);
    }
}
