//! Each method family's typed spec from the options: which options it takes, their defaults
//! and ranges (the per-method half of [`FitOptions::check`]).

use super::*;
use crate::inference::{InferenceOptions, LikelihoodChoice};

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
            N::Gpr => {
                for o in [
                    O::NoiseInit,
                    O::Restarts,
                    O::Snap,
                    O::Noise,
                    O::Alpha,
                    O::KernelParams,
                    O::NormalizeY,
                    O::SharedKernel,
                    O::Pretrain,
                ] {
                    u.used(o);
                }
                Method::Gpr(GprSpec {
                    kernel: self.kernel_or_default(u),
                    noise_init: self.noise_init.unwrap_or(0.1),
                    restarts: self.restarts.unwrap_or(0),
                    snap: self.snap.unwrap_or(true),
                    epsilon: self.epsilon,
                    noise: self.noise,
                    alpha: self.alpha.clone().unwrap_or_default(),
                    kernel_params: self.kernel_params.clone(),
                    normalize_y: self.normalize_y.unwrap_or(true),
                    shared_kernel: self.shared_kernel.unwrap_or(false),
                    pretrain: self.pretrain,
                })
            }
            N::Vfe | N::Fitc | N::Dtc => {
                for o in [
                    O::NoiseInit,
                    O::Inducing,
                    O::InducingInit,
                    O::Pretrain,
                    O::MaxIter,
                ] {
                    u.used(o);
                }
                Method::Sparse(SparseSpec {
                    approximation: match method {
                        N::Vfe => SparseMethod::Vfe,
                        N::Fitc => SparseMethod::Fitc,
                        _ => SparseMethod::Dtc,
                    },
                    kernel: self.kernel_or_default(u),
                    noise_init: self.noise_init.unwrap_or(0.1),
                    inducing: self.inducing,
                    inducing_init: self.inducing_init.unwrap_or(InducingInit::KMeans),
                    epsilon: self.epsilon,
                    schedule: self.schedule(),
                })
            }
            N::PacGp | N::PacGpSqrt => {
                for o in [O::NoiseInit, O::Bound] {
                    u.used(o);
                }
                let bound = self.pac_bound(method)?;
                Method::PacGp(PacGpSpec {
                    kernel: self.kernel_or_default(u),
                    noise_init: self.noise_init.unwrap_or(1.0),
                    epsilon: self.required_epsilon(method)?,
                    bound,
                    xi: self.take_xi(u),
                    prior: self.pac_prior(u)?,
                })
            }
            N::PacSgp | N::PacSgpSqrt => {
                for o in [
                    O::Inducing,
                    O::InducingInit,
                    O::Bound,
                    O::Pretrain,
                    O::MaxIter,
                ] {
                    u.used(o);
                }
                let bound = self.pac_bound(method)?;
                let prior = self.pac_prior(u)?;
                if matches!(prior, PacPrior::Split(_)) && self.inducing_init.is_some() {
                    return Err(SpecError::conflict(
                        O::InducingInit,
                        O::Prior,
                        "the split prior fits the inducing inputs on part A by VFE",
                    ));
                }
                Method::PacSgp(PacSgpSpec {
                    kernel: self.kernel_or_default(u),
                    epsilon: self.required_epsilon(method)?,
                    bound,
                    xi: self.take_xi(u),
                    inducing: self.inducing,
                    inducing_init: self.inducing_init.unwrap_or(InducingInit::KMeans),
                    prior,
                    schedule: self.schedule(),
                })
            }
            N::GreedySparse => {
                u.used(O::Inducing);
                Method::GreedySparse(GreedySparseSpec {
                    kernel: self.kernel_or_default(u),
                    basis: self.inducing,
                    epsilon: self.epsilon,
                })
            }
            N::PacGpc => {
                u.used(O::Predictor);
                let likelihood = self.likelihood_for(method, u)?;
                let hypers = match self.split_classifier(method, u)? {
                    Some(split) => ClassifierHypers::Split(split),
                    None => match self.kernel.clone() {
                        Some(kernel) => {
                            u.used(O::Kernel);
                            ClassifierHypers::Grid { kernel }
                        }
                        None => ClassifierHypers::Candidates,
                    },
                };
                Method::PacGpc(PacGpcSpec {
                    likelihood,
                    hypers,
                    predictor: self.predictor.unwrap_or_default(),
                })
            }
            N::Svm => self.svm(u)?,
            N::Svgp | N::PacSvgp => {
                for o in [O::Inducing, O::InducingInit, O::MaxIter, O::BatchSize] {
                    u.used(o);
                }
                let likelihood = self.likelihood_for(method, u)?;
                let (bound, split) = match method {
                    N::PacSvgp => {
                        u.used(O::Bound);
                        u.used(O::Prior);
                        (Some(self.pac_bound(method)?), self.prior)
                    }
                    _ => (None, None),
                };
                Method::Svgp(SvgpSpec {
                    kernel: self.kernel_or_default(u),
                    bound,
                    inducing: self.inducing,
                    inducing_init: self.inducing_init.unwrap_or(InducingInit::KMeans),
                    likelihood,
                    schedule: self.schedule(),
                    batch: self.batch_size,
                    split,
                })
            }
            // Every other name is a classifier inference method's ([`Inference`]).
            _ => self.classifier(method, u)?,
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

    fn required_epsilon(&self, method: MethodName) -> Result<f64, SpecError> {
        self.epsilon.ok_or(SpecError::new(
            SpecOption::Epsilon,
            SpecProblem::Missing {
                method,
                why: "it minimises a bound on the ε-band risk; give ε in the target's units".into(),
            },
        ))
    }

    /// kl for `pac-gp`/`pac-sgp`, sqrt for the `-sqrt` methods; `bound` may say the same.
    fn pac_bound(&self, method: MethodName) -> Result<BoundKind, SpecError> {
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

    fn take_xi(&self, u: &mut Unused) -> Xi {
        u.used(SpecOption::Xi);
        self.xi.unwrap_or(Xi::Maurer)
    }

    /// The grid, a coarse prior, or the split prior (not both of the last two).
    fn pac_prior(&self, u: &mut Unused) -> Result<PacPrior, SpecError> {
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
    fn likelihood_for(
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

    fn classifier(&self, method: MethodName, u: &mut Unused) -> Result<Method, SpecError> {
        use MethodName as N;
        use SpecOption as O;
        u.used(O::Predictor);
        let likelihood = self.likelihood_for(method, u)?;
        let options = InferenceOptions {
            likelihood,
            kappa: self.kappa,
            input_noise: self.input_noise,
            active_set: self.active_set,
        };
        let (inference, reads) = Inference::from_options(method, &options)
            .zip(Inference::reads(method))
            .expect("classifier() is called for inference methods only");
        for o in reads.0 {
            u.used(*o);
        }
        let hypers = match self.split_classifier(method, u)? {
            Some(split) => {
                if self.select.is_some() {
                    return Err(SpecError::conflict(
                        O::Select,
                        O::Prior,
                        "the split prior fits θ by ML-II on part A",
                    ));
                }
                if self.likelihood.is_some() {
                    return Err(split_needs_probit());
                }
                ClassifierHypers::Split(split)
            }
            None => {
                u.used(O::Select);
                let by_ml2 = matches!(method, N::Laplace | N::Ep | N::Ivm);
                if self.select.is_none() && self.kernel.is_some() && !by_ml2 {
                    return Err(SpecError::not_for(
                        O::Kernel,
                        method,
                        "laplace, ep and ivm (ML-II from the given kernel) and the split prior; mean-field and sogp choose among nine fixed SE kernels by the bound",
                    ));
                }
                match (self.selection(), &self.kernel) {
                    (Selection::Bound, None) => ClassifierHypers::Candidates,
                    (Selection::Bound, Some(_)) => {
                        return Err(SpecError::new(
                            O::Kernel,
                            SpecProblem::NotApplicable {
                                method,
                                applies_to: "classifiers with select ml2 (select bound chooses among nine fixed SE kernels)".into(),
                            },
                        ))
                    }
                    (Selection::Ml2, _) => {
                        if !by_ml2 {
                            return Err(SpecError::not_for(
                                O::Select,
                                method,
                                "laplace, ep and ivm as ml2 (ML-II needs an evidence gradient)",
                            ));
                        }
                        ClassifierHypers::Grid {
                            kernel: self.kernel_or_default(u),
                        }
                    }
                }
            }
        };
        // ML-II restarts where θ is fitted by ML-II's L-BFGS (IVM alternates its own rounds).
        let restarts = match (&hypers, method) {
            (ClassifierHypers::Grid { .. }, N::Laplace | N::Ep) => {
                u.used(O::Restarts);
                self.restarts.unwrap_or(0)
            }
            _ => 0,
        };
        Ok(Method::Classifier(ClassifierSpec {
            inference,
            hypers,
            predictor: self.predictor.unwrap_or_default(),
            restarts,
        }))
    }

    /// The classifier split prior's options when `prior` is given (laplace, pac-gpc).
    fn split_classifier(
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

    fn svm(&self, u: &mut Unused) -> Result<Method, SpecError> {
        use SpecOption as O;
        for o in [O::Slack, O::Bias, O::Solver, O::Kernel, O::Lengthscale] {
            u.used(o);
        }
        let kernel = match (&self.kernel, self.lengthscale) {
            (Some(_), Some(_)) => {
                return Err(SpecError::conflict(
                    O::Lengthscale,
                    O::Kernel,
                    "the lengthscale is that of svm's default SE kernel; a given kernel carries its own",
                ))
            }
            (Some(k), None) => SvmKernel::Given(k.clone()),
            (None, Some(l)) => SvmKernel::Lengthscale(l),
            (None, None) => SvmKernel::Menu,
        };
        let slack = match self.slack.unwrap_or(SlackKind::Linear) {
            SlackKind::Linear => {
                u.used(O::C);
                if self.input_noise.is_some() {
                    return Err(SpecError::not_for(
                        O::InputNoise,
                        MethodName::Svm,
                        "mean-field and svm with the quadratic slack",
                    ));
                }
                SvmSlack::Linear { c: self.c }
            }
            SlackKind::Quadratic => {
                u.used(O::InputNoise);
                if self.c.is_some() {
                    return Err(SpecError::not_for(
                        O::C,
                        MethodName::Svm,
                        "svm with the linear slack (the quadratic slack's variance is input_noise)",
                    ));
                }
                SvmSlack::Quadratic {
                    v: self.input_noise,
                }
            }
        };
        Ok(Method::Svm(SvmSpec {
            kernel,
            slack,
            solver: self.solver.unwrap_or(SvmSolver::Smo),
            bias: self.bias.unwrap_or(false),
        }))
    }
}
