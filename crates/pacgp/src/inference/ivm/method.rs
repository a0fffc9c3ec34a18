//! The IVM as a classifier inference method ([`ClassifierInference`]): its fit, cold refits
//! (greedy selection has no state to restart from) and ML-II on its active set's evidence
//! (seed 003 §3.3.1).

use super::ml2::{ivm_ml2, IvmMl2Config};
use super::{ivm, IvmConfig};
use crate::error::{Error, Result};
use crate::inference::{ClassifierFit, ClassifierInference, LeftOut, Ml2Fit, Ml2Settings, Problem};

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
