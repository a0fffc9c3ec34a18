//! The multi-class Gibbs classifier `argmax_k s_k(x)` over K class scores drawn from a
//! posterior, and its 0-1 risk on a sample labelled by class index:
//!
//! - **independent scores** (one-vs-rest: `s_k = f_k + b_k`, `f_k ~ Q_k` independent):
//!   the vote probabilities `P(argmax_k s_k = j)` and the risk `1 − P(argmax = y)` per point
//!   are one-dimensional integrals, done by quadrature ([`quadrature`]);
//! - **coupled scores** (the softmax Laplace posterior couples the classes at a point): the
//!   risk is estimated by drawing the K scores of every point `m` times, and made an upper
//!   confidence limit by a kl-inverse of the sample mean ([`sampled`]).

pub mod quadrature;
pub mod sampled;

use faer::Mat;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::posterior::Marginals;

pub use quadrature::{ln_vote_probabilities, ln_vote_probability};
pub use sampled::{sampled_gibbs_risk, JointScores, SampledRisk, SamplingCorrection};

/// Check that K score marginals cover the same `n` points and that `y` holds class indices.
fn check_scores(y: &[f64], scores: &[Marginals]) -> Result<usize> {
    let k = scores.len();
    if k < 2 {
        return Err(Error::ShapeMismatch {
            what: "class scores of a multi-class Gibbs classifier",
            expected: "at least 2 classes".into(),
            found: format!("{k}"),
        });
    }
    if y.is_empty() {
        return Err(Error::Empty {
            what: "sample for the multi-class Gibbs risk",
        });
    }
    for m in scores {
        if m.mean.len() != y.len() || m.var.len() != y.len() {
            return Err(Error::ShapeMismatch {
                what: "class scores vs labels",
                expected: format!("{} points", y.len()),
                found: format!("{}", m.mean.len()),
            });
        }
    }
    check_labels(y, k)?;
    Ok(k)
}

/// Labels must be class indices `0..k` (not necessarily all present: a test set may miss one).
pub(crate) fn check_labels(y: &[f64], k: usize) -> Result<()> {
    match y
        .iter()
        .find(|v| !(v.fract() == 0.0 && **v >= 0.0 && **v < k as f64))
    {
        Some(&bad) => Err(Error::InvalidParameter {
            name: "class index",
            value: bad,
            reason: "multi-class labels must be class indices 0, 1, …, K − 1",
        }),
        None => Ok(()),
    }
}

/// Means and standard deviations of the K scores at point `i`.
fn point(scores: &[Marginals], i: usize) -> (Vec<f64>, Vec<f64>) {
    let mean = scores.iter().map(|m| m.mean[i]).collect();
    let sd = scores.iter().map(|m| m.var[i].max(0.0).sqrt()).collect();
    (mean, sd)
}

/// `ln P(argmax_k s_k(x_i) = j)` for every point i (rows) and class j (columns), for K
/// independent scores with marginals `scores[k]` (quadrature, [`quadrature`]).
pub fn ln_vote_matrix(scores: &[Marginals]) -> Result<Mat<f64>> {
    let n = scores.first().map_or(0, |m| m.mean.len());
    if scores.iter().any(|m| m.mean.len() != n || m.var.len() != n) {
        return Err(Error::ShapeMismatch {
            what: "class scores",
            expected: format!("{n} points for every class"),
            found: "classes of different lengths".into(),
        });
    }
    let rows: Vec<Vec<f64>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let (mean, sd) = point(scores, i);
            ln_vote_probabilities(&mean, &sd)
        })
        .collect();
    Ok(Mat::from_fn(n, scores.len(), |i, j| rows[i][j]))
}

/// Empirical risk `(1/n) Σ_i [1 − P(argmax_k s_k(x_i) = y_i)]` of the Gibbs classifier over
/// K independent scores (`y`: class indices), by quadrature.
pub fn gibbs_risk_independent(y: &[f64], scores: &[Marginals]) -> Result<f64> {
    Ok(gibbs_loss_sum_independent(y, scores)? / y.len() as f64)
}

/// The errors `Σ_i [1 − P(argmax_k s_k(x_i) = y_i)]` summed over the sample (the numerator of
/// [`gibbs_risk_independent`], for a sample in parts).
pub fn gibbs_loss_sum_independent(y: &[f64], scores: &[Marginals]) -> Result<f64> {
    check_scores(y, scores)?;
    let risks: Vec<f64> = (0..y.len())
        .into_par_iter()
        .map(|i| {
            let (mean, sd) = point(scores, i);
            let p = ln_vote_probability(&mean, &sd, y[i] as usize).exp();
            (1.0 - p).clamp(0.0, 1.0)
        })
        .collect();
    Ok(risks.iter().sum::<f64>())
}

/// Class probabilities from log-scores, each row normalised to sum to 1 (the quadrature's
/// vote probabilities sum to 1 up to its error; the softmax predictive exactly).
pub fn normalised_probabilities(ln_scores: &Mat<f64>) -> Mat<f64> {
    let (n, k) = (ln_scores.nrows(), ln_scores.ncols());
    let mut p = Mat::zeros(n, k);
    for i in 0..n {
        let m = (0..k)
            .map(|j| ln_scores[(i, j)])
            .fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = (0..k).map(|j| (ln_scores[(i, j)] - m).exp()).sum();
        for j in 0..k {
            p[(i, j)] = (ln_scores[(i, j)] - m).exp() / total;
        }
    }
    p
}

/// The class of largest score in each row (the first on ties).
pub fn argmax_rows(scores: &Mat<f64>) -> Vec<usize> {
    (0..scores.nrows())
        .map(|i| {
            (0..scores.ncols()).fold(0, |best, j| {
                if scores[(i, j)] > scores[(i, best)] {
                    j
                } else {
                    best
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};

    /// Monte Carlo estimate of the vote probabilities at one point.
    fn monte_carlo(mean: &[f64], sd: &[f64], draws: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut wins = vec![0usize; mean.len()];
        for _ in 0..draws {
            let s: Vec<f64> = (0..mean.len())
                .map(|k| {
                    let e: f64 = StandardNormal.sample(&mut rng);
                    mean[k] + sd[k] * e
                })
                .collect();
            let j = (0..s.len()).fold(0, |b, j| if s[j] > s[b] { j } else { b });
            wins[j] += 1;
        }
        wins.iter().map(|w| *w as f64 / draws as f64).collect()
    }

    /// Quadrature against 10⁶ Monte Carlo draws: within 5 standard errors, for spreads from
    /// equal to 20× apart (both quadrature rules are exercised).
    #[test]
    fn vote_probabilities_match_monte_carlo() {
        let cases: [(&[f64], &[f64]); 4] = [
            (&[0.2, -0.1, 0.4], &[1.0, 0.8, 1.2]),
            (&[0.0, 0.5, -0.3, 0.1], &[2.0, 0.1, 1.0, 0.5]),
            (&[1.0, 0.9, 1.1, 0.0, -1.0], &[0.05, 1.0, 0.3, 2.0, 0.6]),
            (&[3.0, -2.0, 0.0], &[0.5, 3.0, 0.4]),
        ];
        let draws = 1_000_000;
        for (c, (mean, sd)) in cases.iter().enumerate() {
            let mc = monte_carlo(mean, sd, draws, c as u64);
            let q: Vec<f64> = ln_vote_probabilities(mean, sd)
                .iter()
                .map(|l| l.exp())
                .collect();
            let total: f64 = q.iter().sum();
            assert!((total - 1.0).abs() < 1e-9, "case {c}: Σ P = {total}");
            for j in 0..mean.len() {
                let se = (mc[j] * (1.0 - mc[j]) / draws as f64).sqrt().max(1e-6);
                assert!(
                    (q[j] - mc[j]).abs() < 5.0 * se,
                    "case {c} class {j}: quadrature {} vs Monte Carlo {} (se {se})",
                    q[j],
                    mc[j]
                );
            }
        }
    }

    #[test]
    fn risk_is_one_minus_the_vote_of_the_label() {
        let scores = vec![
            Marginals {
                mean: vec![1.0, -1.0],
                var: vec![0.5, 0.5],
            },
            Marginals {
                mean: vec![0.0, 0.0],
                var: vec![0.5, 0.5],
            },
            Marginals {
                mean: vec![-1.0, 1.0],
                var: vec![0.5, 0.5],
            },
        ];
        let y = [0.0, 2.0];
        let r = gibbs_risk_independent(&y, &scores).unwrap();
        let p0 = ln_vote_probability(&[1.0, 0.0, -1.0], &[0.5f64.sqrt(); 3], 0).exp();
        assert!((r - (1.0 - p0)).abs() < 1e-14, "{r} vs {}", 1.0 - p0);
        assert!(gibbs_risk_independent(&[0.0, 3.0], &scores).is_err());
        let lv = ln_vote_matrix(&scores).unwrap();
        let p = normalised_probabilities(&lv);
        assert_eq!(argmax_rows(&p), vec![0, 2]);
        assert!(((0..3).map(|j| p[(0, j)]).sum::<f64>() - 1.0).abs() < 1e-15);
    }
}
