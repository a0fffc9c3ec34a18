//! The sparse online GP as a classifier inference method ([`ClassifierInference`]): its
//! fit, and cold refits over the same visiting order without the left-out row (online
//! sweeps have no approximate leave-one-out).

use super::{sogp, SogpConfig, SweepOrder};
use crate::error::{Error, Result};
use crate::inference::{ApproxLooKind, ClassifierFit, ClassifierInference, LeftOut, Problem};

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
