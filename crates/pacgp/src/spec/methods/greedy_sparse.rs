//! `greedy-sparse`'s home: its spec and what it says about itself.

use super::*;

/// `greedy-sparse`: T. Zhang's greedy sparse regression as a certified DTC model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GreedySparseSpec {
    /// Kernel specification.
    pub kernel: String,
    /// Number of basis points k.
    pub basis: Option<usize>,
    /// ε stored for `certify` (target units).
    pub epsilon: Option<f64>,
}

impl MethodSpec for GreedySparseSpec {
    fn name(&self) -> MethodName {
        MethodName::GreedySparse
    }

    stored_epsilon_answers!();

    fn check(&self) -> Result<(), SpecError> {
        options::kernel_ok(&self.kernel)?;
        check_basis(self.basis)?;
        check_epsilon(self.epsilon)
    }

    fn footprint(&self, _k: usize) -> Footprint {
        sparse_footprint(self.basis, 4)
    }

    /// T. Zhang's greedy model is the DTC posterior on its chosen basis.
    fn regression_form(&self) -> Option<RegressionForm> {
        Some(RegressionForm::Sparse(SparseMethod::Dtc))
    }

    fn grid(&self) -> Option<HyperGrid> {
        Some(HyperGrid::wide())
    }

    fn resolve_for_sample(&mut self, n: usize, notes: &mut Vec<String>) -> Result<(), SpecError> {
        resolve_basis(&mut self.basis, n, SpecOption::Inducing, false, notes)
    }
}

impl FromOptions for GreedySparseSpec {
    fn from_options(o: &FitOptions, _: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.used(SpecOption::Inducing);
        Ok(Self {
            kernel: o.kernel_or_default(u),
            basis: o.inducing,
            epsilon: o.epsilon,
        })
    }
}
