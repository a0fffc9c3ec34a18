//! The sparse online GP as a classifier inference method ([`ClassifierInference`]): its
//! fit, and cold refits over the same visiting order without the left-out row (online
//! sweeps have no approximate leave-one-out).

use super::{sogp, SogpConfig, SweepOrder};
use crate::error::{Error, Result};
use crate::inference::{check_active_set, ActiveSetSlot};
use crate::inference::{ApproxLooKind, ClassifierFit, ClassifierInference, LeftOut, Problem};
use crate::inference::{FitWork, InferenceMethod, InferenceOptions, InferenceSettings};
use crate::inference::{LikelihoodChoice, NamedInference};
use crate::likelihood::Likelihood;
use crate::vocabulary::{MethodName, SpecOption};
use crate::vocabulary::{SpecError, DEFAULT_BASIS};

/// SOGP's settings and the order its sweeps visit the points in.
#[derive(Clone, Debug)]
pub struct SogpMethod {
    /// Memory limit, novelty tolerance, sweeps.
    pub config: SogpConfig,
    /// Visiting order of every sweep.
    pub order: SweepOrder,
}

impl ClassifierInference for SogpMethod {
    fn name(&self) -> &'static str {
        "sogp"
    }

    fn fit(&self, p: Problem<'_>) -> Result<ClassifierFit> {
        sogp(p.kernel, p.lik, p.x, p.y, &self.config, &self.order)
    }

    fn approximate_loo(&self) -> ApproxLooKind {
        ApproxLooKind::RefitsOnly
    }

    fn refit_without(&self, p: Problem<'_>, out: &LeftOut<'_>) -> Result<ClassifierFit> {
        let order = order_without(&self.order, out.row)?;
        sogp(p.kernel, p.lik, p.x, p.y, &self.config, &order)
    }
}

/// SOGP's visiting order on the data without row i: a given sequence loses i and renumbers
/// the rows after it; a shuffled order keeps its seed (so it is a different permutation of
/// the N − 1 rows).
fn order_without(order: &SweepOrder, i: usize) -> Result<SweepOrder> {
    Ok(match order {
        SweepOrder::Given(idx) => {
            let kept: Vec<usize> = idx
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| if j > i { j - 1 } else { j })
                .collect();
            if kept.is_empty() {
                return Err(Error::Empty {
                    what: "SOGP sweep order without the left-out row",
                });
            }
            SweepOrder::Given(kept)
        }
        other => other.clone(),
    })
}

/// Flop-equivalents per unit of SOGP's `N·M²` (per row an update of the M × M `C` and `Q`,
/// and at a full basis a deletion of the same size, in element loops): 300, read from the
/// cost model's sogp row (0.2 s a candidate at N = 2 000, M = 100: 2 000 updates, 1 900
/// deletions).
const SOGP_ENTRY_FLOPS: f64 = 300.0;

/// `sogp` in the fit spec: the most basis vectors kept.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SogpSpec {
    /// The most basis vectors kept (`None`: the default, at most N).
    pub active_set: Option<usize>,
}

impl InferenceSettings for SogpSpec {
    fn check(&self) -> std::result::Result<(), SpecError> {
        check_active_set(self.active_set)
    }

    /// At most M basis vectors: more than N never fills, so it is capped at N.
    fn active_set(&mut self) -> Option<ActiveSetSlot<'_>> {
        Some(ActiveSetSlot {
            size: &mut self.active_set,
            capped: true,
        })
    }

    /// The sweeps visit the points in an order shuffled by `seed`.
    fn method(&self, seed: u64) -> Result<(InferenceMethod, Likelihood)> {
        let method = InferenceMethod::new(SogpMethod {
            config: SogpConfig {
                max_basis: self.active_set.unwrap_or(DEFAULT_BASIS),
                ..Default::default()
            },
            order: SweepOrder::Shuffled { seed },
        });
        Ok((method, Likelihood::probit()))
    }

    /// The basis rows, and the candidates' certificates' `N × M` cross-covariances in their
    /// threads: 11–24 `N·M` resident at M = 100 and 200.
    fn fit_work(&self) -> FitWork {
        FitWork::ActiveSet {
            basis: self.active_set,
            entry_flops: SOGP_ENTRY_FLOPS,
            resident: 12,
        }
    }
}

impl NamedInference for SogpSpec {
    const NAME: MethodName = MethodName::Sogp;
    const READS: &'static [SpecOption] = &[SpecOption::ActiveSet];
    const LIKELIHOODS: LikelihoodChoice = LikelihoodChoice::Probit;

    fn from_options(o: &InferenceOptions) -> Self {
        Self {
            active_set: o.active_set,
        }
    }
}
