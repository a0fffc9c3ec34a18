//! The typed method from the options: each name's home builds its spec (`from_options` in
//! `spec/methods/`, which options it takes and their defaults), from the options' shared
//! readings here (the bound's form, the prior over θ, the likelihood, the classifier split
//! prior, ε's default).

use super::*;
use crate::inference::LikelihoodChoice;
use crate::spec::methods::FromOptions;

impl FitOptions {
    /// The typed method, marking every option it takes as used.
    pub(super) fn method(&self, method: MethodName, u: &mut Unused) -> Result<Method, SpecError> {
        use MethodName as N;
        use SpecOption as O;
        for o in [O::Epsilon] {
            if !method.is_classifier() {
                u.used(o);
            }
        }
        Ok(match method {
            N::Gpr => Method::Gpr(GprSpec::from_options(self, method, u)?),
            N::Vfe | N::Fitc | N::Dtc => Method::Sparse(SparseSpec::from_options(self, method, u)?),
            N::PacGp | N::PacGpSqrt => Method::PacGp(PacGpSpec::from_options(self, method, u)?),
            N::PacSgp | N::PacSgpSqrt => Method::PacSgp(PacSgpSpec::from_options(self, method, u)?),
            N::GreedySparse => {
                Method::GreedySparse(GreedySparseSpec::from_options(self, method, u)?)
            }
            N::PacGpc => Method::PacGpc(PacGpcSpec::from_options(self, method, u)?),
            N::Svm => Method::Svm(SvmSpec::from_options(self, method, u)?),
            N::Svgp | N::PacSvgp => Method::Svgp(SvgpSpec::from_options(self, method, u)?),
            // Every other name is a classifier inference method's ([`Inference`]).
            _ => Method::Classifier(ClassifierSpec::from_options(self, method, u)?),
        })
    }

    /// For a method trained by the ε-band bound and given no ε: ε =
    /// [`DEFAULT_EPSILON_SD`] standard deviations (population, as the target is standardised)
    /// of the targets the fit will see — `data`'s, or with `certify_holdout` its fit rows'
    /// ([`crate::data::holdout_rows`]) — with a note saying so; otherwise the options
    /// unchanged and no note. A constant or empty target is the scaler's error.
    pub fn with_default_epsilon(
        mut self,
        method: MethodName,
        data: &crate::data::Dataset,
    ) -> crate::error::Result<(Self, Option<String>)> {
        if self.epsilon.is_some() || !method.trains_on_epsilon() {
            return Ok((self, None));
        }
        // The held-out rows take no part in any choice of the fit.
        let ys = match self.certify_holdout {
            Some(f) => {
                let (_, fitted) = crate::data::holdout_rows(data, f, self.seed.unwrap_or(0))?;
                let y: Vec<f64> = fitted.iter().map(|&i| data.y[i]).collect();
                crate::data::TargetScaler::fit(&y)?
            }
            None => crate::data::TargetScaler::fit(&data.y)?,
        };
        let (epsilon, sd) = (ys.unscale_length(DEFAULT_EPSILON_SD), ys.sd);
        self.epsilon = Some(epsilon);
        let note = format!(
            "ε = {epsilon} (the default: {DEFAULT_EPSILON_SD:.4} standard deviations of the training targets, {sd})"
        );
        Ok((self, Some(note)))
    }

    /// The options checked for `method` on a table whose columns became the model inputs as
    /// `coding` says ([`FitOptions::input_groups`]), with a note where that grouping chose the
    /// fit's kernel (no kernel given, a column of several one-hot inputs): which kernel, and
    /// how to ask for one lengthscale per input instead.
    pub fn check_on_table(
        mut self,
        method: MethodName,
        coding: &crate::data::InputCoding,
    ) -> Result<(CheckedFitSpec, Option<String>), SpecError> {
        let groups = coding.input_groups();
        let grouped = default_kernel(Some(&groups)) != DEFAULT_KERNEL;
        self.input_groups = (!groups.is_empty()).then_some(groups);
        let spec = self.check(method)?;
        let note = match spec.prior_kernel_spec() {
            Some(kernel) if grouped && self.kernel.is_none() => Some(format!(
                "kernel: {kernel}, the default on one-hot inputs: squared exponential with one \
                 lengthscale per table column (the indicators of one categorical column share \
                 it); the kernel se-ard gives one per input"
            )),
            _ => None,
        };
        Ok((spec, note))
    }

    pub(in crate::spec) fn required_epsilon(&self, method: MethodName) -> Result<f64, SpecError> {
        self.epsilon.ok_or(SpecError::new(
            SpecOption::Epsilon,
            SpecProblem::Missing {
                method,
                why: "it minimises a bound on the ε-band risk; give ε in the target's units".into(),
            },
        ))
    }

    /// kl for `pac-gp`/`pac-sgp`, sqrt for the `-sqrt` methods; `bound` may say the same.
    pub(in crate::spec) fn pac_bound(&self, method: MethodName) -> Result<BoundKind, SpecError> {
        let named = matches!(method, MethodName::PacGpSqrt | MethodName::PacSgpSqrt);
        match (self.bound, named) {
            (None | Some(BoundName::Kl), false) => Ok(BoundKind::Kl),
            (None | Some(BoundName::Sqrt), true) => Ok(BoundKind::Sqrt),
            (Some(BoundName::Sqrt), false) => Ok(BoundKind::Sqrt),
            (Some(b), _) => Err(SpecError::not_for(
                SpecOption::Bound,
                method,
                &format!(
                    "{} as {b} (pac-gp and pac-sgp take kl or sqrt)",
                    if b == BoundName::Catoni {
                        "the classifier split prior"
                    } else {
                        "pac-gp and pac-sgp"
                    }
                ),
            )),
        }
    }

    pub(in crate::spec) fn take_xi(&self, u: &mut Unused) -> Xi {
        u.used(SpecOption::Xi);
        self.xi.unwrap_or(Xi::Maurer)
    }

    /// The grid, a coarse prior, or the split prior (not both of the last two).
    pub(in crate::spec) fn pac_prior(&self, u: &mut Unused) -> Result<PacPrior, SpecError> {
        u.used(SpecOption::Prior);
        u.used(SpecOption::HyperPrior);
        match (self.prior, self.hyper_prior) {
            (Some(_), Some(_)) => Err(SpecError::conflict(
                SpecOption::HyperPrior,
                SpecOption::Prior,
                "the split prior fits θ on part A at no charge",
            )),
            (Some(f), None) => Ok(PacPrior::Split(f)),
            (None, Some(h)) => Ok(PacPrior::Coarse(h)),
            (None, None) => Ok(PacPrior::Grid),
        }
    }

    /// Probit unless given; logistic where the method takes it: an inference method says so
    /// ([`LikelihoodChoice`]), pac-gpc (Laplace's start) and the sparse variational classifiers
    /// (whose expected log-likelihood is by quadrature) take it.
    pub(in crate::spec) fn likelihood_for(
        &self,
        method: MethodName,
        u: &mut Unused,
    ) -> Result<LikelihoodName, SpecError> {
        use LikelihoodChoice as C;
        let choice = Inference::reads(method).map_or(C::ProbitOrLogistic, |(_, c)| c);
        match (self.likelihood, choice) {
            (_, C::Fixed) | (None, _) => Ok(LikelihoodName::Probit),
            (Some(LikelihoodName::Logistic), C::ProbitOrLogistic)
            | (Some(LikelihoodName::Probit), _) => {
                u.used(SpecOption::Likelihood);
                Ok(self.likelihood.unwrap_or(LikelihoodName::Probit))
            }
            (Some(LikelihoodName::Logistic), C::Probit) => Err(SpecError::not_for(
                SpecOption::Likelihood,
                method,
                "laplace, pac-gpc, svgp and pac-svgp as logistic (the others need the probit's tilted moments in closed form)",
            )),
        }
    }

    /// The classifier split prior's options when `prior` is given (laplace, pac-gpc).
    pub(in crate::spec) fn split_classifier(
        &self,
        method: MethodName,
        u: &mut Unused,
    ) -> Result<Option<SplitClassifierSpec>, SpecError> {
        use SpecOption as O;
        let Some(fraction) = self.prior else {
            return Ok(None);
        };
        if !matches!(method, MethodName::Laplace | MethodName::PacGpc) {
            return Ok(None);
        }
        for o in [
            O::Prior,
            O::Bound,
            O::PriorScale,
            O::PriorKernel,
            O::BothDirections,
        ] {
            u.used(o);
        }
        let catoni =
            match self.bound {
                None | Some(BoundName::Kl) => false,
                Some(BoundName::Catoni) => true,
                Some(BoundName::Sqrt) => return Err(SpecError::not_for(
                    O::Bound,
                    method,
                    "pac-gp and pac-sgp as sqrt (the classifier split prior takes kl or catoni)",
                )),
            };
        Ok(Some(SplitClassifierSpec {
            kernel: self.kernel_or_default(u),
            fraction,
            catoni,
            prior_scale: self.prior_scale.unwrap_or(PriorScale::Fixed(1.0)),
            prior_kernel: self.prior_kernel.unwrap_or(PriorKernel::Kernel),
            both_directions: self.both_directions.unwrap_or(false),
        }))
    }
}
