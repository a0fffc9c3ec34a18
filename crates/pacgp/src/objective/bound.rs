//! The one skeleton of a bound objective (docs/math.md §2.3, eq. 5; paper 004 eq. 14): every
//! method trained on its PAC-Bayes bound minimises `B(R_S(Q), KL(Q‖P) + penalty(θ))` over a
//! latent family, and only how the family reports `R_S`, `KL` and pulls the bound's partials
//! back to its parameters differs.
//!
//! [`MinimisedBound`] is the bound, set once: δ, the form, the confidence term and the
//! constant penalty (checked by [`BoundTarget::new`]), plus a coarse hyperparameter prior's
//! θ-dependent surrogate. [`LatentFamily`] is what a method brings (dense sites, inducing
//! inputs, a split posterior); [`BoundObjective`] joins the two into the optimiser's
//! [`Objective`]. The families: full PAC-GP (`pac_gp`), its per-point noise
//! (`pac_gp_hetero`), the classifier trained by its bound (`pac_gpc`), sparse PAC-SGP in
//! process (`pac_sgp`), with per-point noise (`pac_sgp_hetero`) and over in-process shards
//! (`pac_sgp_sharded`), and the dense split prior's two (`gp_split`). What has no family
//! takes the bound from the same [`MinimisedBound::at`]: the sharded PAC-SGP's reduce step
//! between the workers' passes (shared with its family's pull-back), the sparse variational
//! classifier (one objective for its bound and its ELBO, also summed over shards) and the
//! sparse split prior (a derivative-free search over Q's noise).

use crate::bounds::{BoundKind, BoundTarget, BoundValue, ConfidenceTerm, HyperGrid};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::optim::Objective;
use crate::prior::{BoundLevers, HyperPrior, ThetaPenalty};

/// The bound a method minimises: δ, form, confidence term and constant penalty (one checked
/// [`BoundTarget`]) and the surrogate `−ln π(θ)` of a coarse hyperparameter prior, if any.
#[derive(Clone, Debug)]
pub struct MinimisedBound {
    target: BoundTarget,
    theta_prior: ThetaPenalty,
}

/// The bound at one parameter vector: its value and partials, and the gradient of the
/// θ-dependent penalty in θ (zeros without a hyperparameter prior).
#[derive(Clone, Debug, PartialEq)]
pub struct BoundAt {
    /// `B` and `∂B/∂R_S`, `∂B/∂C`.
    pub value: BoundValue,
    d_penalty: Vec<f64>,
    n: usize,
}

/// `(R_S, KL, bound)` at one parameter vector, for every bound objective.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundTerms {
    /// Empirical Gibbs risk `R_S(Q)`.
    pub empirical_risk: f64,
    /// `KL(Q‖P)`.
    pub kl: f64,
    /// The bound.
    pub bound: f64,
}

impl MinimisedBound {
    /// The bound with a constant penalty (nats): a grid's `T·ln L`, a menu's price.
    pub fn new(delta: f64, term: ConfidenceTerm, kind: BoundKind, penalty: f64) -> Result<Self> {
        Ok(Self {
            target: BoundTarget::new(delta, term, kind, penalty)?,
            theta_prior: ThetaPenalty::constant(0.0),
        })
    }

    /// The bound on a kernel's θ as the levers say: the default grid's `T·ln L` for
    /// `kernel`'s parameters, or nothing constant and the coarse prior's surrogate
    /// (docs/math.md §9.2); the levers' confidence term.
    pub fn on_theta(
        delta: f64,
        kind: BoundKind,
        levers: &BoundLevers,
        kernel: &Kernel,
    ) -> Result<Self> {
        Self::on_grid(delta, kind, levers, kernel, &HyperGrid::default())
    }

    /// The same bound with a coarse hyperparameter prior's surrogate `−ln π(θ)` for
    /// `kernel`'s θ added to the constant penalty (docs/math.md §9.2).
    pub fn with_hyper_prior(mut self, prior: HyperPrior, kernel: &Kernel) -> Result<Self> {
        self.theta_prior = self.theta_prior.with_prior(prior, kernel)?;
        Ok(self)
    }

    /// The same bound with θ held at `theta` (a family whose θ is not a parameter): the
    /// hyperparameter prior's surrogate there becomes a constant.
    pub fn with_theta_fixed(mut self, theta: &[f64]) -> Self {
        self.theta_prior = ThetaPenalty::constant(self.theta_prior.at(theta).0);
        self
    }

    /// [`MinimisedBound::on_theta`] with the penalty of `grid` instead of the default grid's.
    pub fn on_grid(
        delta: f64,
        kind: BoundKind,
        levers: &BoundLevers,
        kernel: &Kernel,
        grid: &HyperGrid,
    ) -> Result<Self> {
        match levers.hyper_prior {
            None => Self::new(delta, levers.term, kind, grid.penalty(kernel.n_params())),
            Some(prior) => {
                Self::new(delta, levers.term, kind, 0.0)?.with_hyper_prior(prior, kernel)
            }
        }
    }

    /// δ, the confidence term, the form and the constant penalty.
    pub fn target(&self) -> &BoundTarget {
        &self.target
    }

    /// The bound at empirical risk `risk` and `kl` on `n` points, with the kernel's
    /// log-hyperparameters `theta` (empty where θ is fixed) priced by the hyperparameter prior.
    pub fn at(&self, theta: &[f64], risk: f64, kl: f64, n: usize) -> BoundAt {
        let (penalty, d_penalty) = self.theta_prior.at(theta);
        BoundAt {
            value: self.target.at_with(risk, kl, n, penalty),
            d_penalty,
            n,
        }
    }

    /// `(R_S, KL, bound)` at `theta`.
    pub fn terms(&self, theta: &[f64], risk: f64, kl: f64, n: usize) -> BoundTerms {
        BoundTerms {
            empirical_risk: risk,
            kl,
            bound: self.at(theta, risk, kl, n).value.value,
        }
    }
}

impl BoundAt {
    /// Adds the penalty's share `(∂B/∂C)·∂penalty/∂θ / N` to the leading θ entries of `grad`.
    pub fn add_penalty_gradient(&self, grad: &mut [f64]) {
        let (d_c, nf) = (self.value.d_complexity, self.n as f64);
        for (g, dp) in grad.iter_mut().zip(&self.d_penalty) {
            *g += d_c * dp / nf;
        }
    }
}

/// The empirical risk and the KL a family reports at one parameter vector.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RiskAndKl {
    /// `R_S(Q)`.
    pub risk: f64,
    /// `KL(Q‖P)`, as the certificate states it.
    pub kl: f64,
    /// What the minimised bound charges on top of the KL (a round-off guard; usually 0).
    pub kl_charge: f64,
}

impl RiskAndKl {
    /// The risk and the KL with nothing charged on top.
    pub fn new(risk: f64, kl: f64) -> Self {
        Self {
            risk,
            kl,
            kl_charge: 0.0,
        }
    }
}

/// A family of posteriors a bound is minimised over: how many parameters, on how many
/// points, where θ sits, and the risk and KL at a parameter vector with the pull-back of the
/// bound's partials to the parameters.
pub trait LatentFamily {
    /// What one evaluation keeps for its gradient.
    type Evaluation;

    /// Number of parameters.
    fn dim(&self) -> usize;

    /// The sample size N the bound is taken at.
    fn sample_size(&self) -> usize;

    /// How many leading parameters are the kernel's log-hyperparameters a hyperparameter
    /// prior prices (0 where θ is fixed).
    fn n_theta(&self) -> usize;

    /// `R_S`, `KL` (and a charge) at `p`, with what the gradient needs.
    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, Self::Evaluation)>;

    /// `∇_p B` at `p` from the bound's partials (`∂B/∂R_S`, `∂B/∂C`; the θ prior's share is
    /// added by the skeleton).
    fn pull_back(&self, p: &[f64], eval: Self::Evaluation, bound: &BoundValue) -> Result<Vec<f64>>;

    /// `R_S`, `KL` (and a charge) at `p` alone: [`LatentFamily::evaluate`]'s, or less work
    /// where a family can skip what only its gradient needs.
    fn risk_and_kl(&self, p: &[f64]) -> Result<RiskAndKl> {
        Ok(self.evaluate(p)?.0)
    }
}

/// A latent family and the bound minimised over it: the optimiser's objective.
pub struct BoundObjective<F> {
    family: F,
    bound: MinimisedBound,
}

impl<F: LatentFamily> BoundObjective<F> {
    /// The bound over `family`.
    pub fn over(family: F, bound: MinimisedBound) -> Self {
        Self { family, bound }
    }

    /// The latent family.
    pub fn family(&self) -> &F {
        &self.family
    }

    /// The latent family and the bound, apart (to build another objective from them).
    pub fn into_parts(self) -> (F, MinimisedBound) {
        (self.family, self.bound)
    }

    /// The latent family, to change how it evaluates (not what).
    pub fn family_mut(&mut self) -> &mut F {
        &mut self.family
    }

    /// The bound minimised.
    pub fn bound(&self) -> &MinimisedBound {
        &self.bound
    }

    /// `(R_S, KL, bound)` at `p`, without gradients (the bound at the stated KL).
    pub fn terms(&self, p: &[f64]) -> Result<BoundTerms> {
        let rk = self.family.risk_and_kl(p)?;
        let theta = &p[..self.family.n_theta()];
        Ok(self
            .bound
            .terms(theta, rk.risk, rk.kl, self.family.sample_size()))
    }

    /// `(R_S, KL, bound)` and `∇_p B` at `p`, the bound as minimised (at the KL with its
    /// charge): the one place value and gradient are assembled.
    pub fn terms_and_gradient(&self, p: &[f64]) -> Result<(BoundTerms, Vec<f64>)> {
        let (rk, eval) = self.family.evaluate(p)?;
        let theta = &p[..self.family.n_theta()];
        let n = self.family.sample_size();
        let at = self.bound.at(theta, rk.risk, rk.kl + rk.kl_charge, n);
        let mut grad = self.family.pull_back(p, eval, &at.value)?;
        at.add_penalty_gradient(&mut grad);
        let terms = BoundTerms {
            empirical_risk: rk.risk,
            kl: rk.kl,
            bound: at.value.value,
        };
        Ok((terms, grad))
    }
}

impl<F: LatentFamily> Objective for BoundObjective<F> {
    fn dim(&self) -> usize {
        self.family.dim()
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (terms, grad) = self.terms_and_gradient(p)?;
        Ok((terms.bound, grad))
    }
}
