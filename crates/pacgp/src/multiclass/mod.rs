//! The multi-class Gibbs classifier `argmax_k s_k(x)` over K class scores drawn from a
//! posterior, and its 0-1 risk on a sample labelled by class index:
//!
//! - **independent scores** (one-vs-rest: `s_k = f_k + b_k`, `f_k ~ Q_k` independent):
//!   the vote probabilities `P(argmax_k s_k = j)` and the risk `1 − P(argmax = y)` per point
//!   are one-dimensional integrals, done by quadrature (`quadrature`);
//! - **coupled scores** (the softmax Laplace posterior couples the classes at a point): the
//!   risk is estimated by drawing the K scores of every point `m` times, and made an upper
//!   confidence limit by a kl-inverse of the sample mean (`sampled`).

pub(crate) mod quadrature;
pub(crate) mod sampled;

use faer::{Mat, MatRef};
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
/// independent scores with marginals `scores[k]` (quadrature, `quadrature`).
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

/// The empirical risks of a multi-class Gibbs classifier's draws that bound its majority
/// vote (docs/math.md §7.6), from the vote probabilities `p_j(x_i)` on a labelled sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoteRisks {
    /// Gibbs risk `(1/n) Σ_i [1 − p_{y_i}(x_i)]`.
    pub gibbs: f64,
    /// Tandem risk `(1/n) Σ_i [1 − p_{y_i}(x_i)]²`: both of two independent draws err
    /// (Masegosa et al. 2020).
    pub tandem: f64,
    /// Disagreement `(1/n) Σ_i [1 − Σ_j p_j(x_i)²]`: two independent draws differ.
    pub disagreement: f64,
}

impl VoteRisks {
    /// The risks from `ln p_j(x_i)` ([`ln_vote_matrix`]; rows: points, columns: classes) and
    /// class indices `y`.
    pub fn of_votes(y: &[f64], ln_votes: MatRef<'_, f64>) -> Result<Self> {
        let k = ln_votes.ncols();
        if ln_votes.nrows() != y.len() || y.is_empty() || k < 2 {
            return Err(Error::ShapeMismatch {
                what: "vote probabilities of a majority vote",
                expected: format!("{} points of at least 2 classes", y.len()),
                found: format!("{} × {k}", ln_votes.nrows()),
            });
        }
        check_labels(y, k)?;
        let p = |i: usize, j: usize| ln_votes[(i, j)].exp().clamp(0.0, 1.0);
        let n = y.len() as f64;
        let (mut gibbs, mut tandem, mut disagreement) = (0.0, 0.0, 0.0);
        for (i, &label) in y.iter().enumerate() {
            let miss = 1.0 - p(i, label as usize);
            let agree: f64 = (0..k).map(|j| p(i, j) * p(i, j)).sum();
            gibbs += miss;
            tandem += miss * miss;
            disagreement += (1.0 - agree).max(0.0);
        }
        Ok(Self {
            gibbs: gibbs / n,
            tandem: tandem / n,
            disagreement: disagreement / n,
        })
    }

    /// `(1/n) Σ_i 2p_{y_i}(1 − p_{y_i}) = 2(gibbs − tandem)`: two independent draws differ on
    /// whether they are right, the disagreement of the C-bound on the ½-margin `2p_y − 1`
    /// (at most [`VoteRisks::disagreement`]; equal to it for two classes).
    pub fn correctness_disagreement(&self) -> f64 {
        (2.0 * (self.gibbs - self.tandem)).max(0.0)
    }
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

    /// The vote risks against pairs of independent Monte Carlo draws of the scores at three
    /// points (2·10⁵ pairs): how often the first draw errs, both err, and the two differ.
    #[test]
    fn vote_risks_match_pairs_of_draws() {
        let scores = vec![
            Marginals {
                mean: vec![0.2, 1.0, -0.5],
                var: vec![1.0, 0.3, 2.0],
            },
            Marginals {
                mean: vec![-0.1, 0.9, 0.0],
                var: vec![0.64, 1.5, 0.2],
            },
            Marginals {
                mean: vec![0.4, -1.0, 0.1],
                var: vec![1.44, 0.5, 0.8],
            },
        ];
        let y = [0.0, 1.0, 2.0];
        let risks = VoteRisks::of_votes(&y, ln_vote_matrix(&scores).unwrap().as_ref()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut draw = |i: usize| {
            let s: Vec<f64> = scores
                .iter()
                .map(|m| {
                    let e: f64 = StandardNormal.sample(&mut rng);
                    m.mean[i] + m.var[i].sqrt() * e
                })
                .collect();
            (0..s.len()).fold(0, |b, j| if s[j] > s[b] { j } else { b })
        };
        let pairs = 200_000;
        let (mut gibbs, mut tandem, mut disagree) = (0.0, 0.0, 0.0);
        for _ in 0..pairs {
            for (i, &label) in y.iter().enumerate() {
                let (h, g) = (draw(i), draw(i));
                let (eh, eg) = (h != label as usize, g != label as usize);
                gibbs += f64::from(eh);
                tandem += f64::from(eh && eg);
                disagree += f64::from(h != g);
            }
        }
        let total = (pairs * y.len()) as f64;
        for (mc, exact) in [
            (gibbs, risks.gibbs),
            (tandem, risks.tandem),
            (disagree, risks.disagreement),
        ] {
            assert!(
                (mc / total - exact).abs() < 4e-3,
                "{} vs {exact}",
                mc / total
            );
        }
        let gibbs_quadrature = gibbs_risk_independent(&y, &scores).unwrap();
        assert!((risks.gibbs - gibbs_quadrature).abs() < 1e-12);
        assert!(
            VoteRisks::of_votes(&[0.0, 3.0, 1.0], ln_vote_matrix(&scores).unwrap().as_ref())
                .is_err()
        );
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
