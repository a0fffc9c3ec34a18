//! The SVM's home in the spec: its spec and what it says about itself.

use super::*;

/// The SVM's kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SvmKernel {
    /// SE at the lengthscales {½, 1, 2}·√D, chosen by the linear-response leave-one-out.
    Menu,
    /// SE with this lengthscale (standardised inputs).
    Lengthscale(f64),
    /// A kernel specification with its initial values.
    Given(String),
}

/// The SVM's slack penalty; `None` scans the default menu by the linear-response LOO.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SvmSlack {
    /// `C Σ ξ_i`.
    Linear {
        /// Box constraint C (`None`: the menu 0.1, 1, 10, 100).
        c: Option<f64>,
    },
    /// `Σ ξ_i²/(2v)`.
    Quadratic {
        /// Input-noise variance v (`None`: the menu 0.3, 1.3, 3).
        v: Option<f64>,
    },
}

/// `svm`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvmSpec {
    /// The kernel (or the menu of lengthscales).
    pub kernel: SvmKernel,
    /// The slack penalty.
    pub slack: SvmSlack,
    /// Dual solver.
    pub solver: SvmSolver,
    /// Fit a free bias from the data (no certificate) instead of a constant term in the prior.
    pub bias: bool,
}

impl MethodSpec for SvmSpec {
    fn name(&self) -> MethodName {
        MethodName::Svm
    }

    fn check(&self) -> Result<(), SpecError> {
        match &self.kernel {
            SvmKernel::Menu => {}
            SvmKernel::Lengthscale(l) => {
                options::positive(SpecOption::Lengthscale, *l, "an RBF lengthscale")?
            }
            SvmKernel::Given(k) => options::kernel_ok(k)?,
        }
        match self.slack {
            SvmSlack::Linear { c: Some(c) } => {
                options::positive(SpecOption::C, c, "a box constraint")
            }
            SvmSlack::Quadratic { v: Some(v) } => {
                options::positive(SpecOption::InputNoise, v, "a noise variance")
            }
            _ => Ok(()),
        }
    }

    /// Two `N × N` matrices at once.
    fn footprint(&self, _k: usize) -> Footprint {
        Footprint::Dense { matrices: 2 }
    }

    fn one_vs_rest_member(&self) -> Result<(), SpecError> {
        Ok(())
    }

    /// The linear response of seed 001 eqs. 17.29/17.31 ([`crate::svm::loo::SvmLooFunctions`]).
    fn jackknife_loo(&self) -> Option<JackknifeLoo> {
        Some(JackknifeLoo::LinearResponse)
    }

    /// Its posterior's basis is the support vectors.
    fn active_set(&self) -> bool {
        true
    }
}

impl FromOptions for SvmSpec {
    fn from_options(o: &FitOptions, _: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.takes(&[O::Slack, O::Bias, O::Solver, O::Kernel, O::Lengthscale]);
        let kernel = match (&o.kernel, o.lengthscale) {
            (Some(_), Some(_)) => {
                return Err(SpecError::conflict(
                    SpecOption::Lengthscale,
                    SpecOption::Kernel,
                    "the lengthscale is that of svm's default SE kernel; a given kernel carries its own",
                ))
            }
            (Some(k), None) => SvmKernel::Given(k.clone()),
            (None, Some(l)) => SvmKernel::Lengthscale(l),
            (None, None) => SvmKernel::Menu,
        };
        let slack = match o.slack.unwrap_or(SlackKind::Linear) {
            SlackKind::Linear => {
                u.used(SpecOption::C);
                if o.input_noise.is_some() {
                    return Err(SpecError::not_for(
                        SpecOption::InputNoise,
                        MethodName::Svm,
                        "mean-field and svm with the quadratic slack",
                    ));
                }
                SvmSlack::Linear { c: o.c }
            }
            SlackKind::Quadratic => {
                u.used(SpecOption::InputNoise);
                if o.c.is_some() {
                    return Err(SpecError::not_for(
                        SpecOption::C,
                        MethodName::Svm,
                        "svm with the linear slack (the quadratic slack's variance is input_noise)",
                    ));
                }
                SvmSlack::Quadratic { v: o.input_noise }
            }
        };
        Ok(Self {
            kernel,
            slack,
            solver: o.solver.unwrap_or(SvmSolver::Smo),
            bias: o.bias.unwrap_or(false),
        })
    }
}
