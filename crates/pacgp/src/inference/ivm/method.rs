//! The IVM as a classifier inference method ([`ClassifierInference`]): its fit, cold refits
//! (greedy selection has no state to restart from) and ML-II on its active set's evidence
//! (seed 003 §3.3.1).

use super::ml2::{ivm_ml2, IvmMl2Config};
use super::{ivm, IvmConfig};
use crate::error::{Error, Result};
use crate::inference::{check_active_set, ActiveSetSlot};
use crate::inference::{ClassifierFit, ClassifierInference, LeftOut, Ml2Fit, Ml2Settings, Problem};
use crate::inference::{FitWork, InferenceMethod, InferenceOptions, InferenceSettings};
use crate::inference::{LikelihoodChoice, NamedInference};
use crate::likelihood::Likelihood;
use crate::vocabulary::{MethodName, SpecOption};
use crate::vocabulary::{SpecError, DEFAULT_BASIS};

impl ClassifierInference for IvmConfig {
    fn name(&self) -> &'static str {
        "ivm"
    }

    fn fit(&self, p: Problem<'_>) -> Result<ClassifierFit> {
        ivm(p.kernel, p.lik, p.x, p.y, self)
    }

    /// A cold IVM on the N − 1 rows; a full active set (d = N) becomes all of them.
    fn refit_without(&self, p: Problem<'_>, out: &LeftOut<'_>) -> Result<ClassifierFit> {
        let _ = out;
        let cfg = IvmConfig {
            active_set: self.active_set.min(p.y.len()),
            ..*self
        };
        ivm(p.kernel, p.lik, p.x, p.y, &cfg)
    }

    /// Three rounds of (selection, ML-II on the active set) with this method's settings, θ
    /// snapped onto the grid before the final selection.
    fn ml2(&self, p: Problem<'_>, settings: &Ml2Settings) -> Result<Option<Ml2Fit>> {
        let mut c = IvmMl2Config::new(self.active_set, 3);
        c.ivm = *self;
        c.snap = Some(settings.grid);
        c.kernel_optim.stall = settings.stall;
        let r = ivm_ml2(p.kernel, p.lik, p.x, p.y, &c)?;
        let report = r.kernel_reports.last().cloned().ok_or(Error::Empty {
            what: "IVM ML-II rounds",
        })?;
        Ok(Some((r.fit, report)))
    }
}

/// Flop-equivalents per unit of IVM's `N·M²` (each of M inclusions updates the N points'
/// site moments against the active set; scalar loops): 50, read from the cost model's ivm
/// row (31 ms a candidate at N = 2 000, M = 100).
const IVM_ENTRY_FLOPS: f64 = 50.0;

/// `ivm` in the fit spec: the active-set size d.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IvmSpec {
    /// Active-set size d (`None`: the default, at most N).
    pub active_set: Option<usize>,
}

impl InferenceSettings for IvmSpec {
    fn check(&self) -> std::result::Result<(), SpecError> {
        check_active_set(self.active_set)
    }

    /// d rows chosen among N: more than N is refused.
    fn active_set(&mut self) -> Option<ActiveSetSlot<'_>> {
        Some(ActiveSetSlot {
            size: &mut self.active_set,
            capped: false,
        })
    }

    fn method(&self, _seed: u64) -> Result<(InferenceMethod, Likelihood)> {
        let d = self.active_set.unwrap_or(DEFAULT_BASIS);
        Ok((
            InferenceMethod::new(IvmConfig::new(d)),
            Likelihood::probit(),
        ))
    }

    /// The active set's cross-covariances, its site updates and its factor.
    fn fit_work(&self) -> FitWork {
        FitWork::ActiveSet {
            basis: self.active_set,
            entry_flops: IVM_ENTRY_FLOPS,
            resident: 3,
        }
    }
}

impl NamedInference for IvmSpec {
    const NAME: MethodName = MethodName::Ivm;
    const READS: &'static [SpecOption] = &[SpecOption::ActiveSet];
    const LIKELIHOODS: LikelihoodChoice = LikelihoodChoice::Probit;

    fn from_options(o: &InferenceOptions) -> Self {
        Self {
            active_set: o.active_set,
        }
    }
}
