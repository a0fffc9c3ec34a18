//! The experiment's table: means and standard errors over the splits per (dataset, kernel, lever),
//! and the held-out lower limit's excess over each bound.

use super::*;

/// The test Gibbs risk's 99% lower confidence limit minus the bound
/// ([`crate::bounds::held_out_lower_limit`]; NaN for rows without a test size).
pub fn test_lower_minus_bound(r: &TighterRow) -> f64 {
    crate::bounds::held_out_lower_limit(r.test_gibbs, r.n_test, crate::experiments::HELD_OUT_DELTA)
        .map_or(f64::NAN, |l| l - r.bound)
}

/// Means over the splits per (dataset, kernel, lever), with standard errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TighterSummary {
    /// Dataset name.
    pub dataset: String,
    /// Kernel family.
    pub kernel: KernelChoice,
    /// Lever name.
    pub lever: String,
    /// Number of splits.
    pub reps: usize,
    /// Mean bound.
    pub bound: f64,
    /// Standard error of the bound.
    pub bound_se: f64,
    /// Mean of (bound / reference bound) − 1 over the splits.
    pub rel_to_reference: f64,
    /// Mean test Gibbs risk.
    pub test_gibbs: f64,
    /// Its standard error.
    pub test_gibbs_se: f64,
    /// Mean test MSE.
    pub test_mse: f64,
    /// Mean KL.
    pub kl: f64,
    /// Mean penalty.
    pub penalty: f64,
    /// Mean certificate sample size.
    pub n_bound: f64,
    /// Largest 99% lower confidence limit of the test Gibbs risk minus bound
    /// ([`test_lower_minus_bound`]); > 0 means the test set contradicts a certificate.
    #[serde(default)]
    pub worst_test_lower_minus_bound: f64,
    /// Largest test Gibbs risk minus bound over the splits (must be ≤ 0 for a valid table).
    pub worst_test_minus_bound: f64,
}

/// Per (dataset, kernel, lever): means, standard errors, the bound relative to the reference
/// on the same split, and the worst test-risk excess over the bound.
pub fn summarise(rows: &[TighterRow]) -> Vec<TighterSummary> {
    crate::experiments::groups_in_order(rows, |r| (r.dataset.clone(), r.kernel, r.lever.clone()))
        .into_iter()
        .map(|((d, k, l), g)| {
            let col = |f: fn(&TighterRow) -> f64| g.iter().map(|r| f(r)).collect::<Vec<f64>>();
            let rel: Vec<f64> = g
                .iter()
                .filter_map(|r| {
                    rows.iter()
                        .find(|q| {
                            q.dataset == d
                                && q.kernel == k
                                && q.rep == r.rep
                                && q.lever == Lever::Reference.name()
                        })
                        .map(|q| r.bound / q.bound - 1.0)
                })
                .collect();
            let (bound, bound_se) = mean_se(&col(|r| r.bound));
            let (test_gibbs, test_gibbs_se) = mean_se(&col(|r| r.test_gibbs));
            TighterSummary {
                dataset: d,
                kernel: k,
                lever: l,
                reps: g.len(),
                bound,
                bound_se,
                rel_to_reference: mean_se(&rel).0,
                test_gibbs,
                test_gibbs_se,
                test_mse: mean_se(&col(|r| r.test_mse)).0,
                kl: mean_se(&col(|r| r.kl)).0,
                penalty: mean_se(&col(|r| r.penalty)).0,
                n_bound: mean_se(&col(|r| r.n_bound as f64)).0,
                worst_test_lower_minus_bound: worst(&g, test_lower_minus_bound),
                worst_test_minus_bound: worst(&g, |r| r.test_gibbs - r.bound),
            }
        })
        .collect()
}
