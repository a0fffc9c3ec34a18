//! The Gibbs risk of coupled class scores by sampling, made an honest upper limit.
//!
//! At every point i the K scores are jointly Gaussian, `s_i ~ N(m_i, Σ_i)`; the risk
//! `r_i = P(argmax_k s_ik ≠ y_i)` has no closed form. Draw `m` score vectors at every point,
//! independently across points and draws, and count the errors: the `N = n·m` indicators are
//! independent Bernoulli variables whose mean is the empirical Gibbs risk `R_S(Q) = (1/n) Σ r_i`.
//! Their moment generating function is at most that of `Binomial(N, R_S(Q))` (AM–GM over the
//! `r_i`, Hoeffding 1963 §4), so Chernoff's bound holds for their mean `R̂`:
//!
//! `P(R_S(Q) > kl⁻¹(R̂, ln(2/δ_s)/N)) ≤ δ_s`,
//!
//! the sampling correction of Langford & Caruana (2002) and Pérez-Ortiz et al. (2021, the
//! `ln(2/δ′)/m` term of their certificates; their two-sided 2 is kept, which is
//! conservative), with their m sampled networks replaced by the N independent draws. The
//! PAC-Bayes bound is then taken at `δ − δ_s` and holds with probability `1 − δ` over the
//! sample and the draws together.

use faer::Mat;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_open_unit, Error, Result};
use crate::special::kl_inverse;

/// Coupled class scores on a sample: at point i the mean `m_i` (row i) and the lower
/// Cholesky factor `L_i` of the covariance `Σ_i = L_i L_iᵀ` (K×K).
#[derive(Clone, Debug)]
pub struct JointScores {
    /// Means, one row per point, one column per class.
    pub mean: Mat<f64>,
    /// Lower Cholesky factors of the per-point covariances.
    pub chol: Vec<Mat<f64>>,
}

impl JointScores {
    /// Number of points.
    pub fn n(&self) -> usize {
        self.mean.nrows()
    }

    /// Number of classes.
    pub fn k(&self) -> usize {
        self.mean.ncols()
    }

    /// Shapes agree (a factor per point, each K×K).
    pub fn check(&self) -> Result<()> {
        let k = self.k();
        if self.chol.len() != self.n() || self.chol.iter().any(|l| l.nrows() != k || l.ncols() != k)
        {
            return Err(Error::ShapeMismatch {
                what: "coupled class scores",
                expected: format!("{} factors of {k}×{k}", self.n()),
                found: format!("{} factors", self.chol.len()),
            });
        }
        Ok(())
    }

    /// `draws` score vectors at point i from the random stream `(seed, i)`: the same seed
    /// gives the same draws whatever the number of threads.
    pub fn draws_at(
        &self,
        i: usize,
        draws: usize,
        seed: u64,
    ) -> impl Iterator<Item = Vec<f64>> + '_ {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(i as u64);
        let k = self.k();
        let l = &self.chol[i];
        (0..draws).map(move |_| {
            let e: Vec<f64> = (0..k).map(|_| StandardNormal.sample(&mut rng)).collect();
            (0..k)
                .map(|a| self.mean[(i, a)] + (0..=a).map(|b| l[(a, b)] * e[b]).sum::<f64>())
                .collect()
        })
    }
}

/// The class of the largest entry (the first on ties).
fn argmax(s: &[f64]) -> usize {
    (0..s.len()).fold(0, |b, j| if s[j] > s[b] { j } else { b })
}

/// The sample mean of `1{argmax_k s_ik ≠ y_i}` over `draws` draws at every point (seeded).
pub fn sampled_gibbs_risk(y: &[f64], scores: &JointScores, draws: usize, seed: u64) -> Result<f64> {
    scores.check()?;
    if y.len() != scores.n() || y.is_empty() {
        return Err(Error::ShapeMismatch {
            what: "labels vs coupled class scores",
            expected: format!("{} labels", scores.n()),
            found: format!("{}", y.len()),
        });
    }
    super::check_labels(y, scores.k())?;
    if draws == 0 {
        return Err(Error::InvalidParameter {
            name: "draws per point",
            value: 0.0,
            reason: "must be at least 1",
        });
    }
    let errors: Vec<usize> = (0..y.len())
        .into_par_iter()
        .map(|i| {
            scores
                .draws_at(i, draws, seed)
                .filter(|s| argmax(s) != y[i] as usize)
                .count()
        })
        .collect();
    Ok(errors.iter().sum::<usize>() as f64 / (y.len() * draws) as f64)
}

/// How a sampled Gibbs risk is made an upper limit: draws per point, their seed, and the
/// share of δ the limit spends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingCorrection {
    /// Draws of the K scores at every point.
    pub draws_per_point: usize,
    /// Seed of the draws.
    pub seed: u64,
    /// The fraction of the certificate's δ spent on the sampling (`δ_s = fraction · δ`).
    pub delta_fraction: f64,
}

/// A sampled risk and its upper confidence limit, as recorded in a certificate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampledRisk {
    /// Draws of the K scores at every point.
    pub draws_per_point: usize,
    /// Total draws N = n · draws per point.
    pub draws: usize,
    /// Seed of the draws.
    pub seed: u64,
    /// δ_s spent on the sampling.
    pub delta_sampling: f64,
    /// δ − δ_s left for the PAC-Bayes bound.
    pub delta_bound: f64,
    /// The sample mean `R̂` of the errors.
    pub sample_mean: f64,
    /// `kl⁻¹(R̂, ln(2/δ_s)/N)`: the empirical risk the bound is taken at.
    pub upper_limit: f64,
}

impl SamplingCorrection {
    /// The sampled risk of the scores on `y` and its upper limit at `fraction · delta`.
    pub fn apply(&self, y: &[f64], scores: &JointScores, delta: f64) -> Result<SampledRisk> {
        check_open_unit("sampling share of δ", self.delta_fraction)?;
        let mean = sampled_gibbs_risk(y, scores, self.draws_per_point, self.seed)?;
        let draws = y.len() * self.draws_per_point;
        let delta_sampling = self.delta_fraction * delta;
        let c = (2.0 / delta_sampling).ln() / draws as f64;
        Ok(SampledRisk {
            draws_per_point: self.draws_per_point,
            draws,
            seed: self.seed,
            delta_sampling,
            delta_bound: delta - delta_sampling,
            sample_mean: mean,
            upper_limit: kl_inverse(mean, c),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::posterior::Marginals;

    /// Independent scores (diagonal factors): the sampled risk agrees with the quadrature
    /// within five standard errors, and its upper limit lies above both.
    #[test]
    fn sampled_risk_agrees_with_quadrature_for_independent_scores() {
        let n = 40;
        let scores: Vec<Marginals> = (0..3)
            .map(|k| Marginals {
                mean: (0..n)
                    .map(|i| ((i * (k + 2)) as f64 * 0.37).sin())
                    .collect(),
                var: (0..n).map(|i| 0.2 + 0.1 * ((i + k) % 4) as f64).collect(),
            })
            .collect();
        let y: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
        let joint = JointScores {
            mean: Mat::from_fn(n, 3, |i, k| scores[k].mean[i]),
            chol: (0..n)
                .map(|i| {
                    Mat::from_fn(
                        3,
                        3,
                        |a, b| if a == b { scores[a].var[i].sqrt() } else { 0.0 },
                    )
                })
                .collect(),
        };
        let exact = super::super::gibbs_risk_independent(&y, &scores).unwrap();
        let c = SamplingCorrection {
            draws_per_point: 5000,
            seed: 7,
            delta_fraction: 0.1,
        };
        let r = c.apply(&y, &joint, 0.01).unwrap();
        let se = (exact * (1.0 - exact) / r.draws as f64).sqrt();
        assert!(
            (r.sample_mean - exact).abs() < 5.0 * se,
            "{} vs {exact}",
            r.sample_mean
        );
        assert!(r.upper_limit > r.sample_mean && r.upper_limit > exact);
        assert_eq!(r.draws, n * 5000);
        assert!((r.delta_sampling - 0.001).abs() < 1e-15 && (r.delta_bound - 0.009).abs() < 1e-15);
        // The same seed gives the same draws.
        assert_eq!(c.apply(&y, &joint, 0.01).unwrap(), r);
    }
}
