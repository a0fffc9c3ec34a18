//! `gpr`'s home: its spec, the checks of its noise options and what it says about itself.

use super::*;

/// `gpr`: exact GP regression, θ and σ² by ML-II.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GprSpec {
    /// Kernel specification (structure and initial values).
    pub kernel: String,
    /// Initial noise variance σ² (standardised targets).
    pub noise_init: f64,
    /// Seeded random restarts of the optimiser.
    pub restarts: usize,
    /// Snap θ onto the wide PAC grid so the model can be certified.
    pub snap: bool,
    /// ε of the ε-band loss stored for `certify` (target units).
    pub epsilon: Option<f64>,
    /// σ² kept at this value (≥ 0, on the targets' fitted scale) instead of fitted by ML-II
    /// from `noise_init` (absent from older files: fitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<f64>,
    /// Known noise variances added to σ² on the diagonal (scikit-learn's `alpha`): one value
    /// for every row, or one per row (empty: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alpha: Vec<f64>,
    /// θ kept as given (ln values, the kernel's parameter order), on the inputs as given: a
    /// kernel fixed in advance is a prior chosen without the data, so it prices nothing, and
    /// the inputs are not standardised by the sample's spread (absent: θ by ML-II).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_params: Option<Vec<f64>>,
    /// Standardise the targets by the sample's mean and spread (scikit-learn's `normalize_y`),
    /// or fit them as given with prior mean 0 (absent from older files: standardised).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub normalize_y: bool,
    /// Several targets fitted together share one θ and σ², chosen by the sum of their log
    /// marginal likelihoods (scikit-learn's multi-output regressor), instead of one kernel
    /// per output (absent from older files: one per output; one target: no difference).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_kernel: bool,
    /// ML-II starts on a seeded subsample of this many rows, then runs on all rows from there
    /// (at least N rows: no warm start). Absent: [`crate::kernel::start::wide_pretrain`]'s
    /// default, a warm start on wide inputs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pretrain: Option<usize>,
}

/// Serde's default of a flag that is on unless written.
fn yes() -> bool {
    true
}

/// Whether a flag has its default, on (it is then not written).
fn is_yes(b: &bool) -> bool {
    *b
}

impl GprSpec {
    /// The known noise variances `αᵢ` of a sample of `n` rows (all 0 without `alpha`); `None`
    /// where `alpha` has neither one value nor `n`.
    pub fn alpha_at(&self, n: usize) -> Option<Vec<f64>> {
        match self.alpha.len() {
            0 => Some(vec![0.0; n]),
            1 => Some(vec![self.alpha[0]; n]),
            m if m == n => Some(self.alpha.clone()),
            _ => None,
        }
    }
}

impl MethodSpec for GprSpec {
    fn name(&self) -> MethodName {
        MethodName::Gpr
    }

    stored_epsilon_answers!();

    fn check(&self) -> Result<(), SpecError> {
        options::kernel_ok(&self.kernel)?;
        check_noise_init(self.noise_init)?;
        check_gpr_noise(self)?;
        check_epsilon(self.epsilon)
    }

    /// Five `N × N` matrices at once.
    fn footprint(&self, _k: usize) -> Footprint {
        Footprint::Dense { matrices: 5 }
    }

    fn regression_form(&self) -> Option<RegressionForm> {
        Some(RegressionForm::Exact)
    }

    /// The wide grid where θ is snapped for a certificate (none for θ kept as given).
    fn grid(&self) -> Option<HyperGrid> {
        (self.snap && self.kernel_params.is_none()).then(HyperGrid::wide)
    }

    /// A kernel fixed in advance sees the inputs as given.
    fn scales_inputs(&self) -> bool {
        self.kernel_params.is_none()
    }

    fn scales_targets(&self) -> bool {
        self.normalize_y
    }

    fn shares_kernel(&self) -> bool {
        self.shared_kernel
    }
}

/// gpr's fixed noise and known per-row variances: every value finite and ≥ 0, and some
/// noise on every row (σ² fixed at 0 needs `alpha` positive everywhere); θ kept as given
/// must be finite.
fn check_gpr_noise(s: &GprSpec) -> Result<(), SpecError> {
    let non_negative = |option, v: f64| match v >= 0.0 && v.is_finite() {
        true => Ok(()),
        false => Err(SpecError::out_of_range(
            option,
            v,
            "finite and ≥ 0 (a noise variance)",
        )),
    };
    if let Some(v) = s.noise {
        non_negative(SpecOption::Noise, v)?;
    }
    for &a in &s.alpha {
        non_negative(SpecOption::Alpha, a)?;
    }
    if s.noise == Some(0.0) && s.alpha.is_empty() {
        return Err(SpecError::out_of_range(
            SpecOption::Noise,
            0,
            "positive and finite (a noise variance; 0 only with known per-row variances)",
        ));
    }
    if s.noise == Some(0.0) && s.alpha.contains(&0.0) {
        return Err(SpecError::conflict(
            SpecOption::Alpha,
            SpecOption::Noise,
            "a row with alpha 0 and a noise variance of 0 has no noise at all",
        ));
    }
    if let Some(p) = s.pretrain {
        if s.kernel_params.is_some() {
            return Err(SpecError::conflict(
                SpecOption::Pretrain,
                SpecOption::KernelParams,
                "θ kept as given is not optimised, so there is no search to warm-start",
            ));
        }
        if p < 2 {
            return Err(SpecError::out_of_range(
                SpecOption::Pretrain,
                p,
                "at least 2 rows",
            ));
        }
    }
    if let Some(p) = &s.kernel_params {
        if s.noise.is_none() {
            return Err(SpecError::missing(
                SpecOption::Noise,
                MethodName::Gpr,
                "θ kept as given (kernel_params) fits nothing, so the noise variance is given too",
            ));
        }
        if let Some(v) = p.iter().find(|v| !v.is_finite()) {
            return Err(SpecError::out_of_range(
                SpecOption::KernelParams,
                v,
                "finite (ln values of the kernel's hyperparameters)",
            ));
        }
    }
    Ok(())
}

impl FromOptions for GprSpec {
    fn from_options(o: &FitOptions, _: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.takes(&[
            O::NoiseInit,
            O::Restarts,
            O::Snap,
            O::Noise,
            O::Alpha,
            O::KernelParams,
            O::NormalizeY,
            O::SharedKernel,
            O::Pretrain,
        ]);
        Ok(Self {
            kernel: o.kernel_or_default(u),
            noise_init: o.noise_init.unwrap_or(0.1),
            restarts: o.restarts.unwrap_or(0),
            snap: o.snap.unwrap_or(true),
            epsilon: o.epsilon,
            noise: o.noise,
            alpha: o.alpha.clone().unwrap_or_default(),
            kernel_params: o.kernel_params.clone(),
            normalize_y: o.normalize_y.unwrap_or(true),
            shared_kernel: o.shared_kernel.unwrap_or(false),
            pretrain: o.pretrain,
        })
    }
}
