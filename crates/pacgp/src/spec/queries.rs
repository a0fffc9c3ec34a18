//! What a fit spec says: its method's name, whether it is multi-class, its ε, confidence
//! term, grid, the kernel it starts from, and whether it has a leave-one-out estimate.

use super::*;

impl FitSpec {
    /// The method's name as users spell it (a multi-class spec: its binary method's, or
    /// laplace for softmax; [`FitSpec::multiclass`] says which).
    pub fn method_name(&self) -> MethodName {
        self.method.home().name()
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

impl FitSpec {
    /// Whether the model has a leave-one-out estimate to put beside its certificate: not a
    /// split prior's (its certificate is on part B, fitted with θ from part A). pac-gpc's is
    /// its sites' cavities only, svgp's and pac-svgp's their sites removed from q(u),
    /// softmax's its rows' K-dimensional sites removed.
    pub fn has_leave_one_out(&self) -> bool {
        !self.method.home().split_prior()
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
        self.method.home().approximate_loo_only()
    }

    /// Whether the posterior's sites are trained by the bound (pac-gpc, binary or one-vs-rest),
    /// so that its only leave-one-out is their cavities (and its sites' `α_i` need not carry
    /// their labels' signs).
    pub(crate) fn trained_sites(&self) -> bool {
        self.method.home().trained_sites()
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
        self.method.home().epsilon()
    }

    /// The confidence constant a bound-trained regressor was trained with (Maurer's else).
    pub fn confidence_term(&self) -> ConfidenceTerm {
        match self.method.home().xi() {
            Xi::Maurer => ConfidenceTerm::Maurer,
            Xi::Sharp => ConfidenceTerm::Sharp,
        }
    }

    /// Whether the inputs are standardised by the training sample's means and deviations
    /// (every method but gpr with θ kept as given, whose kernel is fixed in advance).
    pub fn scales_inputs(&self) -> bool {
        self.method.home().scales_inputs()
    }

    /// Whether several targets fitted together share one kernel (gpr's `shared_kernel`).
    pub fn shares_kernel(&self) -> bool {
        self.method.home().shares_kernel()
    }

    /// Whether a regressor's targets are standardised (every one but gpr without
    /// `normalize_y`).
    pub fn scales_targets(&self) -> bool {
        self.method.home().scales_targets()
    }

    /// The uniform grid θ is snapped onto and priced by, if the method has one (the split
    /// priors and coarse hyperparameter priors have their own; candidate menus have none; a
    /// one-vs-rest spec: every class's).
    pub fn grid(&self) -> Option<HyperGrid> {
        self.method.home().grid()
    }

    /// The kernel specification of the prior whose θ the spec prices on a grid or coarse prior
    /// (the stored kernel must have its structure); `None` where a menu or a split prior
    /// fixes the prior's kernel.
    pub fn prior_kernel_spec(&self) -> Option<&str> {
        self.method.home().prior_kernel_spec()
    }
}
