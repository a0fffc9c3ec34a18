//! The bound-trained regressors' home (`pac-gp`, `pac-sgp` and their sqrt forms): their specs
//! and what they say about themselves.

use super::*;

/// `pac-gp`, `pac-gp-sqrt`: a full GP trained by its bound on the ε-band risk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacGpSpec {
    /// Kernel specification.
    pub kernel: String,
    /// Initial σ² (the paper starts at 1).
    pub noise_init: f64,
    /// ε of the ε-band loss (target units).
    pub epsilon: f64,
    /// The bound minimised: kl or sqrt.
    pub bound: BoundKind,
    /// Confidence constant.
    pub xi: Xi,
    /// Prior over θ.
    pub prior: PacPrior,
}

/// `pac-sgp`, `pac-sgp-sqrt`: a sparse GP (FITC form) trained by its bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacSgpSpec {
    /// Kernel specification.
    pub kernel: String,
    /// ε of the ε-band loss (target units).
    pub epsilon: f64,
    /// The bound minimised: kl or sqrt.
    pub bound: BoundKind,
    /// Confidence constant.
    pub xi: Xi,
    /// Number of inducing inputs M.
    pub inducing: Option<usize>,
    /// Where the inducing inputs start (not used by the split prior, which fits Z on part A).
    pub inducing_init: InducingInit,
    /// Prior over θ.
    pub prior: PacPrior,
    /// How the optimiser runs on large samples (not with the split prior).
    #[serde(default, skip_serializing_if = "OptimSchedule::is_default")]
    pub schedule: OptimSchedule,
}

/// The name of a bound-trained regressor trained on the `bound` form.
fn pac_name(bound: BoundKind, kl: MethodName, sqrt: MethodName) -> MethodName {
    match bound {
        BoundKind::Kl => kl,
        BoundKind::Sqrt => sqrt,
    }
}

impl MethodSpec for PacGpSpec {
    fn name(&self) -> MethodName {
        pac_name(self.bound, MethodName::PacGp, MethodName::PacGpSqrt)
    }

    pac_regressor_answers!();

    fn check(&self) -> Result<(), SpecError> {
        options::kernel_ok(&self.kernel)?;
        check_noise_init(self.noise_init)?;
        check_epsilon(Some(self.epsilon))?;
        options::check_pac_prior(self.prior, self.bound, self.name())
    }

    /// Five `N × N` matrices at once, as gpr's.
    fn footprint(&self, _k: usize) -> Footprint {
        Footprint::Dense { matrices: 5 }
    }

    fn regression_form(&self) -> Option<RegressionForm> {
        Some(RegressionForm::Exact)
    }
}

impl MethodSpec for PacSgpSpec {
    fn name(&self) -> MethodName {
        pac_name(self.bound, MethodName::PacSgp, MethodName::PacSgpSqrt)
    }

    pac_regressor_answers!();

    /// The split prior runs its own fits, so it takes no optimiser schedule.
    fn check(&self) -> Result<(), SpecError> {
        options::kernel_ok(&self.kernel)?;
        check_basis(self.inducing)?;
        options::check_schedule(&self.schedule)?;
        if self.split_prior() && !self.schedule.is_default() {
            let option = match self.schedule.pretrain {
                Some(_) => SpecOption::Pretrain,
                None => SpecOption::MaxIter,
            };
            return Err(SpecError::conflict(
                option,
                SpecOption::Prior,
                "the split prior runs its own fits on parts A and B",
            ));
        }
        check_epsilon(Some(self.epsilon))?;
        options::check_pac_prior(self.prior, self.bound, self.name())
    }

    fn footprint(&self, _k: usize) -> Footprint {
        sparse_footprint(self.inducing, 4)
    }

    /// The FITC form of its posterior (α_s = 1).
    fn regression_form(&self) -> Option<RegressionForm> {
        Some(RegressionForm::Sparse(SparseMethod::Fitc))
    }

    fn resolve_for_sample(&mut self, n: usize, notes: &mut Vec<String>) -> Result<(), SpecError> {
        resolve_basis(&mut self.inducing, n, SpecOption::Inducing, false, notes)
    }
}

impl FromOptions for PacGpSpec {
    fn from_options(o: &FitOptions, name: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.takes(&[O::NoiseInit, O::Bound]);
        let bound = o.pac_bound(name)?;
        Ok(Self {
            kernel: o.kernel_or_default(u),
            noise_init: o.noise_init.unwrap_or(1.0),
            epsilon: o.required_epsilon(name)?,
            bound,
            xi: o.take_xi(u),
            prior: o.pac_prior(u)?,
        })
    }
}

impl FromOptions for PacSgpSpec {
    fn from_options(o: &FitOptions, name: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.takes(&[
            O::Inducing,
            O::InducingInit,
            O::Bound,
            O::Pretrain,
            O::MaxIter,
        ]);
        let bound = o.pac_bound(name)?;
        let prior = o.pac_prior(u)?;
        if matches!(prior, PacPrior::Split(_)) && o.inducing_init.is_some() {
            return Err(SpecError::conflict(
                SpecOption::InducingInit,
                SpecOption::Prior,
                "the split prior fits the inducing inputs on part A by VFE",
            ));
        }
        Ok(Self {
            kernel: o.kernel_or_default(u),
            epsilon: o.required_epsilon(name)?,
            bound,
            xi: o.take_xi(u),
            inducing: o.inducing,
            inducing_init: o.inducing_init.unwrap_or(InducingInit::KMeans),
            prior,
            schedule: o.schedule(),
        })
    }
}
