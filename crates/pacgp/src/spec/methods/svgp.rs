//! `svgp` and `pac-svgp`'s home in the spec: their spec, their default minibatch and what
//! they say about themselves.

use super::*;

/// `svgp`, `pac-svgp`: the sparse variational GP classifier (probit; docs/math.md §12): θ, the
/// inducing inputs Z and `q(v) = N(m, L_qL_qᵀ)` trained together by the evidence lower bound
/// or by the PAC-Bayes bound of the Gibbs classifier, θ snapped onto the PAC grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvgpSpec {
    /// Kernel specification (structure and start).
    pub kernel: String,
    /// `None`: trained by the evidence lower bound (svgp); else by the PAC-Bayes bound of this
    /// form (pac-svgp).
    pub bound: Option<BoundKind>,
    /// Number of inducing inputs M (`None`: the default, at most N).
    pub inducing: Option<usize>,
    /// Where the inducing inputs start.
    pub inducing_init: InducingInit,
    /// The likelihood's link (probit unless given).
    #[serde(default, skip_serializing_if = "LikelihoodName::is_probit")]
    pub likelihood: LikelihoodName,
    /// The optimiser's iteration budget (a warm start on a subsample is not offered): L-BFGS
    /// iterations, or Adam steps with a batch.
    #[serde(default, skip_serializing_if = "OptimSchedule::is_default")]
    pub schedule: OptimSchedule,
    /// Rows per minibatch (`None`: all rows at once, by L-BFGS; a large sample gets
    /// [`DEFAULT_SVGP_BATCH`] when the spec is resolved for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    /// pac-svgp's data-dependent prior ([`crate::svgp::split`]): θ, Z and `q_A` by the
    /// evidence lower bound on part A, the bound on part B; `None`: `GP(0, k)`, θ on the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitFraction>,
}

impl SvgpSpec {
    /// The fewest rows one of its fits sees on a sample of `n`: N, or with a split prior the
    /// smaller part at any of its fractions (M must fit both parts).
    pub fn smallest_part(&self, n: usize) -> usize {
        let fractions = self.split.map_or(Ok(Vec::new()), |f| f.candidates());
        fractions.unwrap_or_default().iter().fold(n, |least, &f| {
            let a = crate::data::part_a_size(n, f).min(n);
            least.min(a).min(n - a)
        })
    }
}

/// The minibatch of the sparse variational classifier when N·M² exceeds
/// [`FULL_BATCH_WORK`] and no batch is given.
pub const DEFAULT_SVGP_BATCH: usize = 1024;
/// Above this N·M² the sparse variational classifier trains on minibatches by default: one
/// full-batch evaluation costs about 10·N·M² flops, 3·10⁹ at this size (tens of milliseconds),
/// so a thousand L-BFGS iterations stay within a minute on two cores.
pub const FULL_BATCH_WORK: f64 = 3e8;

impl MethodSpec for SvgpSpec {
    fn name(&self) -> MethodName {
        match self.bound {
            None => MethodName::Svgp,
            Some(_) => MethodName::PacSvgp,
        }
    }

    /// It is trained by its own objective, so a warm start on a subsample is not offered.
    fn check(&self) -> Result<(), SpecError> {
        options::kernel_ok(&self.kernel)?;
        check_basis(self.inducing)?;
        if self.schedule.pretrain.is_some() {
            return Err(SpecError::not_for(
                SpecOption::Pretrain,
                self.name(),
                "gpr, vfe, fitc, dtc and pac-sgp",
            ));
        }
        if self.batch == Some(0) {
            return Err(SpecError::out_of_range(
                SpecOption::BatchSize,
                0,
                "at least 1 row",
            ));
        }
        options::check_schedule(&self.schedule)
    }

    /// Its `M × M` matrices and the inputs' second copy; the rows are streamed in blocks.
    fn footprint(&self, _k: usize) -> Footprint {
        Footprint::Streamed {
            basis: self.inducing.unwrap_or(DEFAULT_BASIS),
            square: 60,
        }
    }

    fn split_prior(&self) -> bool {
        self.split.is_some()
    }

    fn one_vs_rest_member(&self) -> Result<(), SpecError> {
        member_without_split(self.split_prior(), self.name())
    }

    fn grid(&self) -> Option<HyperGrid> {
        (!self.split_prior()).then(HyperGrid::default)
    }

    fn prior_kernel_spec(&self) -> Option<&str> {
        Some(&self.kernel)
    }

    fn approximate_loo_only(&self) -> Option<&'static str> {
        Some(
            "its rows' sites removed from q(u) (loo approx); an exact one would train q(u), Z \
             and θ again for every row",
        )
    }

    fn jackknife_loo(&self) -> Option<JackknifeLoo> {
        (!self.split_prior()).then_some(JackknifeLoo::InducingSites)
    }

    /// M within the smallest part any fit sees; minibatches where N·M² exceeds
    /// [`FULL_BATCH_WORK`] and no batch is given.
    fn resolve_for_sample(&mut self, n: usize, notes: &mut Vec<String>) -> Result<(), SpecError> {
        let rows = self.smallest_part(n);
        resolve_basis(&mut self.inducing, rows, SpecOption::Inducing, true, notes)?;
        let m = self.inducing.unwrap_or(DEFAULT_BASIS) as f64;
        if self.batch.is_none() && n as f64 * m * m > FULL_BATCH_WORK {
            self.batch = Some(DEFAULT_SVGP_BATCH.min(n));
            notes.push(format!(
                "N·M² = {:.1e} > {FULL_BATCH_WORK:.0e}: trained by Adam on minibatches of {} rows (give the batch size to choose, or a batch of N for L-BFGS on all rows)",
                n as f64 * m * m,
                DEFAULT_SVGP_BATCH.min(n)
            ));
        }
        Ok(())
    }
}

impl FromOptions for SvgpSpec {
    fn from_options(o: &FitOptions, name: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.takes(&[O::Inducing, O::InducingInit, O::MaxIter, O::BatchSize]);
        let likelihood = o.likelihood_for(name, u)?;
        let (bound, split) = match name {
            MethodName::PacSvgp => {
                u.used(SpecOption::Bound);
                u.used(SpecOption::Prior);
                (Some(o.pac_bound(name)?), o.prior)
            }
            _ => (None, None),
        };
        Ok(Self {
            kernel: o.kernel_or_default(u),
            bound,
            inducing: o.inducing,
            inducing_init: o.inducing_init.unwrap_or(InducingInit::KMeans),
            likelihood,
            schedule: o.schedule(),
            batch: o.batch_size,
            split,
        })
    }
}
