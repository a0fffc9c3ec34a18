//! `vfe`, `fitc` and `dtc`'s home: their spec and what it says about itself.

use super::*;

/// `vfe`, `fitc`, `dtc`: sparse GP regression by its own objective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SparseSpec {
    /// Which approximation.
    pub approximation: SparseMethod,
    /// Kernel specification.
    pub kernel: String,
    /// Initial noise variance σ².
    pub noise_init: f64,
    /// Number of inducing inputs M (`None`: the default, at most N).
    pub inducing: Option<usize>,
    /// Where the inducing inputs start.
    pub inducing_init: InducingInit,
    /// ε stored for `certify` (target units).
    pub epsilon: Option<f64>,
    /// How the optimiser runs on large samples (absent from older files: the defaults).
    #[serde(default, skip_serializing_if = "OptimSchedule::is_default")]
    pub schedule: OptimSchedule,
}

impl MethodSpec for SparseSpec {
    fn name(&self) -> MethodName {
        match self.approximation {
            SparseMethod::Vfe => MethodName::Vfe,
            SparseMethod::Fitc => MethodName::Fitc,
            SparseMethod::Dtc => MethodName::Dtc,
        }
    }

    stored_epsilon_answers!();

    fn check(&self) -> Result<(), SpecError> {
        options::kernel_ok(&self.kernel)?;
        check_noise_init(self.noise_init)?;
        check_basis(self.inducing)?;
        options::check_schedule(&self.schedule)?;
        check_epsilon(self.epsilon)
    }

    fn footprint(&self, _k: usize) -> Footprint {
        sparse_footprint(self.inducing, 4)
    }

    fn regression_form(&self) -> Option<RegressionForm> {
        Some(RegressionForm::Sparse(self.approximation))
    }

    fn grid(&self) -> Option<HyperGrid> {
        Some(HyperGrid::default())
    }

    fn resolve_for_sample(&mut self, n: usize, notes: &mut Vec<String>) -> Result<(), SpecError> {
        resolve_basis(&mut self.inducing, n, SpecOption::Inducing, false, notes)
    }
}

impl FromOptions for SparseSpec {
    fn from_options(o: &FitOptions, name: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.takes(&[
            O::NoiseInit,
            O::Inducing,
            O::InducingInit,
            O::Pretrain,
            O::MaxIter,
        ]);
        Ok(Self {
            approximation: match name {
                MethodName::Vfe => SparseMethod::Vfe,
                MethodName::Fitc => SparseMethod::Fitc,
                _ => SparseMethod::Dtc,
            },
            kernel: o.kernel_or_default(u),
            noise_init: o.noise_init.unwrap_or(0.1),
            inducing: o.inducing,
            inducing_init: o.inducing_init.unwrap_or(InducingInit::KMeans),
            epsilon: o.epsilon,
            schedule: o.schedule(),
        })
    }
}
