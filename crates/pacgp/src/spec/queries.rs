//! What a fit spec says: its method's name, whether it is multi-class, its ε, confidence
//! term, grid, the kernel it starts from, and whether it has a leave-one-out estimate.

use super::*;

impl FitSpec {
    /// The method's name as users spell it (a multi-class spec: its binary method's, or
    /// laplace for softmax; [`FitSpec::multiclass`] says which).
    pub fn method_name(&self) -> MethodName {
        method_name_of(&self.method)
    }

    /// How a multi-class spec learns its classes (`None`: a binary or regression method).
    pub fn multiclass(&self) -> Option<MultiClass> {
        match &self.method {
            Method::OneVsRest(_) => Some(MultiClass::OneVsRest),
            Method::Softmax(_) => Some(MultiClass::Softmax),
            _ => None,
        }
    }

    /// The binary spec of every class of a one-vs-rest spec (the same δ and seed).
    pub fn one_vs_rest_member(&self) -> Option<FitSpec> {
        match &self.method {
            Method::OneVsRest(inner) => Some(FitSpec {
                method: (**inner).clone(),
                delta: self.delta,
                seed: self.seed,
                intervals: None,
                certify_holdout: None,
            }),
            _ => None,
        }
    }

    /// The one-vs-rest spec of a binary classifier spec (the same δ, seed, holdout and
    /// prediction sets).
    pub fn into_one_vs_rest(self) -> FitSpec {
        FitSpec {
            method: Method::OneVsRest(Box::new(self.method)),
            delta: self.delta,
            seed: self.seed,
            intervals: self.intervals,
            certify_holdout: self.certify_holdout,
        }
    }
}

/// svgp's leave-one-out, as [`FitSpec::approximate_loo_only`] words it.
const SVGP_APPROXIMATE_LOO: &str = "its rows' sites removed from q(u) (loo approx); an exact one \
     would train q(u), Z and θ again for every row";

/// See [`FitSpec::has_leave_one_out`].
fn has_leave_one_out(method: &Method) -> bool {
    match method {
        Method::PacGp(s) => !matches!(s.prior, PacPrior::Split(_)),
        Method::PacSgp(s) => !matches!(s.prior, PacPrior::Split(_)),
        Method::Classifier(c) => !matches!(c.hypers, ClassifierHypers::Split(_)),
        Method::PacGpc(c) => !matches!(c.hypers, ClassifierHypers::Split(_)),
        Method::Svgp(s) => s.split.is_none(),
        Method::Softmax(_) => true,
        Method::OneVsRest(inner) => has_leave_one_out(inner),
        Method::Gpr(_) | Method::Sparse(_) | Method::GreedySparse(_) | Method::Svm(_) => true,
    }
}

/// The name users spell a method with (see [`FitSpec::method_name`]).
fn method_name_of(method: &Method) -> MethodName {
    use MethodName as N;
    match method {
        Method::Gpr(_) => N::Gpr,
        Method::Sparse(s) => match s.approximation {
            SparseMethod::Vfe => N::Vfe,
            SparseMethod::Fitc => N::Fitc,
            SparseMethod::Dtc => N::Dtc,
        },
        Method::PacGp(s) => match s.bound {
            BoundKind::Kl => N::PacGp,
            BoundKind::Sqrt => N::PacGpSqrt,
        },
        Method::PacSgp(s) => match s.bound {
            BoundKind::Kl => N::PacSgp,
            BoundKind::Sqrt => N::PacSgpSqrt,
        },
        Method::GreedySparse(_) => N::GreedySparse,
        Method::Classifier(c) => c.inference.name(),
        Method::PacGpc(_) => N::PacGpc,
        Method::Svm(_) => N::Svm,
        Method::Svgp(s) => match s.bound {
            None => N::Svgp,
            Some(_) => N::PacSvgp,
        },
        Method::OneVsRest(inner) => method_name_of(inner),
        Method::Softmax(_) => N::Laplace,
    }
}

impl FitSpec {
    /// Whether the model has a leave-one-out estimate to put beside its certificate: not a
    /// split prior's (its certificate is on part B, fitted with θ from part A). pac-gpc's is
    /// its sites' cavities only, svgp's and pac-svgp's their sites removed from q(u),
    /// softmax's its rows' K-dimensional sites removed.
    pub fn has_leave_one_out(&self) -> bool {
        has_leave_one_out(&self.method)
    }

    /// The leave-one-out `certify` computes for `request`: `auto` is the fast approximation
    /// where the model has one; a mode asked of a model without one is an error.
    pub fn leave_one_out(&self, request: LooRequest) -> crate::error::Result<Option<LooMode>> {
        match request {
            LooRequest::None => Ok(None),
            LooRequest::Auto => Ok(self.has_leave_one_out().then_some(LooMode::Approx)),
            LooRequest::Mode(mode @ (LooMode::Exact | LooMode::Both))
                if self.has_leave_one_out() =>
            {
                match self.approximate_loo_only() {
                    Some(why) => Err(crate::error::Error::Unsupported(format!(
                        "{}'s leave-one-out is {why}",
                        self.method_name().name()
                    ))),
                    None => Ok(Some(mode)),
                }
            }
            LooRequest::Mode(mode) if self.has_leave_one_out() => Ok(Some(mode)),
            LooRequest::Mode(_) => Err(crate::error::Error::NoLeaveOneOut {
                model: self.method_name().name(),
                why: self.without_leave_one_out_why(),
            }),
        }
    }

    /// Why the model's only leave-one-out is its approximation (`loo approx`), as a clause;
    /// `None` where refits give an exact one.
    fn approximate_loo_only(&self) -> Option<&'static str> {
        match &self.method {
            _ if self.trained_sites() => Some(
                "its sites' cavities (loo approx); an exact one would train its bound again for \
                 every row",
            ),
            Method::Svgp(_) => Some(SVGP_APPROXIMATE_LOO),
            Method::Softmax(_) => Some(
                "its rows' sites removed from the Laplace posterior (loo approx); an exact one \
                 would find the mode again for every row",
            ),
            Method::OneVsRest(inner) if matches!(**inner, Method::Svgp(_)) => {
                Some(SVGP_APPROXIMATE_LOO)
            }
            _ => None,
        }
    }

    /// Whether the posterior's sites are trained by the bound (pac-gpc, binary or one-vs-rest),
    /// so that its only leave-one-out is their cavities (and its sites' `α_i` need not carry
    /// their labels' signs).
    pub(crate) fn trained_sites(&self) -> bool {
        match &self.method {
            Method::PacGpc(_) => true,
            Method::OneVsRest(inner) => matches!(**inner, Method::PacGpc(_)),
            _ => false,
        }
    }

    /// Why the model has no leave-one-out estimate, as a clause: only a split prior's has none.
    fn without_leave_one_out_why(&self) -> &'static str {
        " (a split prior's certificate is on part B, with θ fitted on part A)"
    }

    /// Whether the method learns class labels (two, or K with a multi-class spec).
    pub fn is_classifier(&self) -> bool {
        self.method_name().is_classifier()
    }

    /// ε of the ε-band loss the model is trained with or stores for `certify` (target units).
    pub fn epsilon(&self) -> Option<f64> {
        match &self.method {
            Method::Gpr(s) => s.epsilon,
            Method::Sparse(s) => s.epsilon,
            Method::PacGp(s) => Some(s.epsilon),
            Method::PacSgp(s) => Some(s.epsilon),
            Method::GreedySparse(s) => s.epsilon,
            Method::Classifier(_)
            | Method::PacGpc(_)
            | Method::Svm(_)
            | Method::Svgp(_)
            | Method::OneVsRest(_)
            | Method::Softmax(_) => None,
        }
    }

    /// The confidence constant a bound-trained regressor was trained with (Maurer's else).
    pub fn confidence_term(&self) -> ConfidenceTerm {
        let xi = match &self.method {
            Method::PacGp(s) => s.xi,
            Method::PacSgp(s) => s.xi,
            _ => Xi::Maurer,
        };
        match xi {
            Xi::Maurer => ConfidenceTerm::Maurer,
            Xi::Sharp => ConfidenceTerm::Sharp,
        }
    }

    /// Whether the inputs are standardised by the training sample's means and deviations
    /// (every method but gpr with θ kept as given, whose kernel is fixed in advance).
    pub fn scales_inputs(&self) -> bool {
        !matches!(&self.method, Method::Gpr(s) if s.kernel_params.is_some())
    }

    /// Whether several targets fitted together share one kernel (gpr's `shared_kernel`).
    pub fn shares_kernel(&self) -> bool {
        matches!(&self.method, Method::Gpr(s) if s.shared_kernel)
    }

    /// Whether a regressor's targets are standardised (every one but gpr without
    /// `normalize_y`).
    pub fn scales_targets(&self) -> bool {
        !matches!(&self.method, Method::Gpr(s) if !s.normalize_y)
    }

    /// The uniform grid θ is snapped onto and priced by, if the method has one (the split
    /// priors and coarse hyperparameter priors have their own; candidate menus have none; a
    /// one-vs-rest spec: every class's).
    pub fn grid(&self) -> Option<HyperGrid> {
        if let Some(member) = self.one_vs_rest_member() {
            return member.grid();
        }
        match &self.method {
            Method::Gpr(s) => (s.snap && s.kernel_params.is_none()).then(HyperGrid::wide),
            Method::GreedySparse(_) => Some(HyperGrid::wide()),
            Method::Sparse(_) => Some(HyperGrid::default()),
            Method::Svgp(s) => s.split.is_none().then(HyperGrid::default),
            Method::PacGp(PacGpSpec { prior, .. }) | Method::PacSgp(PacSgpSpec { prior, .. }) => {
                (*prior == PacPrior::Grid).then(HyperGrid::default)
            }
            Method::Classifier(ClassifierSpec { hypers, .. })
            | Method::PacGpc(PacGpcSpec { hypers, .. })
            | Method::Softmax(SoftmaxSpec { hypers }) => {
                matches!(hypers, ClassifierHypers::Grid { .. }).then(HyperGrid::default)
            }
            Method::Svm(_) | Method::OneVsRest(_) => None,
        }
    }

    /// The kernel specification of the prior whose θ the spec prices on a grid or coarse prior
    /// (the stored kernel must have its structure); `None` where a menu or a split prior
    /// fixes the prior's kernel.
    pub fn prior_kernel_spec(&self) -> Option<&str> {
        let method = match &self.method {
            Method::OneVsRest(inner) => inner.as_ref(),
            other => other,
        };
        match method {
            Method::Gpr(s) => Some(&s.kernel),
            Method::Sparse(s) => Some(&s.kernel),
            Method::GreedySparse(s) => Some(&s.kernel),
            Method::Svgp(s) => Some(&s.kernel),
            Method::PacGp(s) if !matches!(s.prior, PacPrior::Split(_)) => Some(&s.kernel),
            Method::PacSgp(s) if !matches!(s.prior, PacPrior::Split(_)) => Some(&s.kernel),
            Method::Classifier(ClassifierSpec {
                hypers: ClassifierHypers::Grid { kernel },
                ..
            })
            | Method::PacGpc(PacGpcSpec {
                hypers: ClassifierHypers::Grid { kernel },
                ..
            })
            | Method::Softmax(SoftmaxSpec {
                hypers: ClassifierHypers::Grid { kernel },
            }) => Some(kernel),
            _ => None,
        }
    }
}
