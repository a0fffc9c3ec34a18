//! Training the sparse variational classifier: Z placed by k-means (or another
//! [`InducingInit`]), q(v) starting at the prior, θ, Z, m and L_q minimised together with θ
//! boxed to the PAC grid's range — on all rows by the driver's L-BFGS, θ then snapped onto the
//! grid and (Z, m, L_q) re-minimised there, or by Adam on seeded minibatches with θ snapped and
//! pinned for the last fifth of the steps — and the certificate of the result through the
//! shared posterior, on all rows.
//!
//! Z and q are the posterior's free parameters (the prior GP(0, k_θ) does not depend on them),
//! so the certificate charges only θ's grid, `T·ln 1201`, whichever criterion trained it.

use faer::{Mat, MatRef};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::Cholesky;
use crate::objective::bound::MinimisedBound;
use crate::optim::{
    boxes, Adam, AdamConfig, GridSnap, LbfgsConfig, Objective, OptimReport, Search, Termination,
};
use crate::posterior::GaussianPosterior;
use crate::regression::inducing_init::{initial_inducing_with_targets, InducingInit};
use crate::regression::whitened_blocks::kuu_factor;

use super::objective::{check_classifier_inputs, SvgpCriterion, SvgpObjective, SvgpTerms};
use super::point::Link;
use super::{SvgpLayout, WhitenedQ};

/// Which objective trains the classifier.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "criterion")]
pub enum SvgpCriterionSpec {
    /// The evidence lower bound (SVGP).
    Elbo,
    /// Its own PAC-Bayes bound on the Gibbs classifier's 0-1 risk.
    Bound {
        /// kl-inverse or Pinsker.
        kind: BoundKind,
    },
}

/// The settings of [`fit_svgp`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SvgpSettings {
    /// Number of inducing inputs M.
    pub m: usize,
    /// The objective.
    pub criterion: SvgpCriterionSpec,
    /// The likelihood's link (the ELBO's and the predictive probabilities'; the bound is on
    /// the latent Gibbs classifier, whichever the link).
    pub link: Link,
    /// Confidence δ of the certificate (and of the bound minimised).
    pub delta: f64,
    /// The confidence constant of the certificate (and of the bound minimised).
    pub term: ConfidenceTerm,
    /// How Z starts.
    pub init: InducingInit,
    /// Whether Z is trained (else it stays where `init` put it).
    pub train_inducing: bool,
    /// Whether θ is trained (else it stays at the start's, snapped onto the grid).
    pub train_kernel: bool,
    /// Seed of Z's start (and of the minibatches).
    pub seed: u64,
    /// L-BFGS iteration budget, or the number of Adam steps with a batch.
    pub max_iter: usize,
    /// Rows per minibatch: `None` trains on all rows at once by L-BFGS; `Some(B)` by Adam on
    /// seeded minibatches of B rows ([`minimise_on_batches`]).
    pub batch: Option<usize>,
}

/// The L-BFGS iteration budget of a fit when none is given.
pub const DEFAULT_MAX_ITER: usize = 1000;
/// The number of Adam steps of a minibatch fit when none is given.
pub const DEFAULT_STEPS: usize = 2000;

/// The likelihood of the sparse variational classifier with `link` (its Gibbs classifier is
/// the latent one, `sgn f(x)`, whichever the link).
pub fn svgp_likelihood(link: Link) -> Likelihood {
    match link {
        Link::Probit => Likelihood::probit(),
        Link::Logit => Likelihood::Logistic,
    }
}

/// The link of a sparse variational classifier's likelihood ([`svgp_likelihood`]'s inverse).
pub fn svgp_link(lik: &Likelihood) -> Result<Link> {
    match lik {
        Likelihood::Logistic => Ok(Link::Logit),
        l if *l == Likelihood::probit() => Ok(Link::Probit),
        l => Err(Error::Unsupported(format!(
            "the sparse variational classifier's likelihood is the probit or the logit, not {}",
            l.name()
        ))),
    }
}

impl SvgpSettings {
    /// M inducing inputs placed by k-means and trained, the probit link, the criterion's
    /// defaults otherwise.
    pub fn new(m: usize, criterion: SvgpCriterionSpec, delta: f64, seed: u64) -> Self {
        Self {
            m,
            criterion,
            link: Link::Probit,
            delta,
            term: ConfidenceTerm::Maurer,
            init: InducingInit::KMeans,
            train_inducing: true,
            train_kernel: true,
            seed,
            max_iter: DEFAULT_MAX_ITER,
            batch: None,
        }
    }

    /// The loss the certificate bounds: the latent Gibbs classifier's 0-1 error.
    pub fn gibbs_loss(&self) -> GibbsLoss {
        GibbsLoss::Classification(GibbsClassifier::latent(&svgp_likelihood(self.link)))
    }

    /// θ's price: the PAC grid's `T·ln L` for `nk` parameters.
    pub fn theta_choice(nk: usize) -> PenaltyTerm {
        PenaltyTerm::grid(&HyperGrid::default(), nk)
    }

    /// The criterion the objective minimises for a kernel of `nk` parameters.
    pub fn objective_criterion(&self, nk: usize) -> Result<SvgpCriterion> {
        self.criterion_priced(Self::theta_choice(nk).nats)
    }

    /// The criterion with the bound's choices priced `price` nats (θ's grid, or a split
    /// prior's fraction).
    pub(crate) fn criterion_priced(&self, price: f64) -> Result<SvgpCriterion> {
        Ok(match self.criterion {
            SvgpCriterionSpec::Elbo => SvgpCriterion::Elbo(self.link),
            SvgpCriterionSpec::Bound { kind } => SvgpCriterion::Bound {
                bound: MinimisedBound::new(self.delta, self.term, kind, price)?,
                classifier: GibbsClassifier::latent(&svgp_likelihood(self.link)),
            },
        })
    }

    /// The driver's search: θ boxed to the grid's range (or pinned at `theta0`) and snapped
    /// onto the grid with the rest re-minimised, Z free (or pinned at `z0`), m and L_q free.
    /// Both objectives are per point (O(1)), so the gradient tolerance is `1e-5/N`: scipy's
    /// `pgtol` on the summed ELBO, as GPflow's SVGP is usually run.
    pub(crate) fn search(
        &self,
        layout: SvgpLayout,
        n: usize,
        theta0: &[f64],
        z0: MatRef<'_, f64>,
    ) -> Search {
        let grid = HyperGrid::default();
        let theta = (
            boxes::LN_THETA.0.max(grid.min_log),
            boxes::LN_THETA.1.min(grid.max_log),
        );
        let mut bounds: Vec<(f64, f64)> = theta0
            .iter()
            .map(|&t| match self.train_kernel {
                true => theta,
                // Pinned, inside the grid's range (where the snap will put it).
                false => {
                    let t = t.clamp(theta.0, theta.1);
                    (t, t)
                }
            })
            .collect();
        for a in 0..layout.m {
            for t in 0..layout.d {
                let z = z0[(a, t)];
                bounds.push(if self.train_inducing {
                    boxes::FREE
                } else {
                    (z, z)
                });
            }
        }
        bounds.extend(std::iter::repeat_n(
            boxes::FREE,
            layout.dim() - bounds.len(),
        ));
        let mut snap = GridSnap::decimal(grid, layout.nk);
        snap.refit_free = true;
        let lbfgs = LbfgsConfig {
            max_iter: self.max_iter,
            grad_tol: 1e-5 / n as f64,
            ..Default::default()
        };
        Search {
            bounds,
            snap: Some(snap),
            warm_lbfgs: lbfgs.clone(),
            lbfgs,
        }
    }
}

/// A trained sparse variational classifier with its certificate.
#[derive(Clone, Debug)]
pub struct SvgpFit {
    /// The kernel at the snapped θ.
    pub kernel: Kernel,
    /// The inducing inputs Z (M×D).
    pub z: Mat<f64>,
    /// q(v) with L_q's diagonal non-negative.
    pub q: WhitenedQ,
    /// The posterior in the shared form (dense covariance over Z).
    pub posterior: GaussianPosterior,
    /// The certificate of the latent Gibbs classifier (θ priced by the grid).
    pub certificate: Certificate,
    /// The objective's parts at the end.
    pub terms: SvgpTerms,
    /// The optimiser's report.
    pub report: OptimReport,
}

/// Train the sparse variational classifier on ±1 labels from `kernel_init`.
pub fn fit_svgp(
    kernel_init: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    st: &SvgpSettings,
) -> Result<SvgpFit> {
    check_classifier_inputs(kernel_init, x, y, st.m)?;
    let z0 = initial_inducing_with_targets(
        kernel_init,
        GREEDY_PLACEMENT_NOISE,
        x,
        y,
        st.m,
        st.init,
        st.seed,
    )?;
    check_distinct_rows(z0.as_ref())?;
    let nk = kernel_init.n_params();
    let obj = SvgpObjective::new(kernel_init, x, y, st.m, st.objective_criterion(nk)?)?;
    let search = st.search(obj.layout(), y.len(), &kernel_init.params(), z0.as_ref());
    let min = minimise(
        &obj,
        st,
        &search,
        kernel_init,
        z0.as_ref(),
        &WhitenedQ::prior(st.m),
    )?;
    let spec = CertificateSpec::new(st.delta, st.term, vec![SvgpSettings::theta_choice(nk)]);
    let certificate = Certificate::of_posterior(&min.posterior, x, y, &st.gibbs_loss(), &spec)?;
    Ok(SvgpFit {
        kernel: min.kernel,
        z: min.z,
        q: min.q,
        posterior: min.posterior,
        certificate,
        terms: min.terms,
        report: min.report,
    })
}

/// What [`minimise`] reaches: the parameters unpacked (L_q's diagonal made non-negative), the
/// shared posterior, the objective's terms there and the optimiser's report.
pub(crate) struct Minimised {
    pub kernel: Kernel,
    pub z: Mat<f64>,
    pub q: WhitenedQ,
    pub posterior: GaussianPosterior,
    pub terms: SvgpTerms,
    pub report: OptimReport,
}

/// Minimise `obj` from (θ of `kernel_init`, `z0`, `q0`) within `search`: on all rows by
/// L-BFGS, or by Adam on seeded minibatches of the objective's rows (as `st` says).
pub(crate) fn minimise(
    obj: &SvgpObjective<'_>,
    st: &SvgpSettings,
    search: &Search,
    kernel_init: &Kernel,
    z0: MatRef<'_, f64>,
    q0: &WhitenedQ,
) -> Result<Minimised> {
    let (x, y) = obj.rows();
    let layout = obj.layout();
    let p0 = layout.pack(kernel_init, z0, q0);
    let (params, report) = match st.batch {
        None => {
            let min = search.minimise(obj, None, &p0)?.0;
            (min.params, min.report)
        }
        Some(batch) => {
            let adam = AdamConfig {
                steps: st.max_iter,
                ..Default::default()
            };
            let (mut xb, mut yb) = (Mat::<f64>::zeros(0, x.ncols()), Vec::new());
            let mut on_rows = |rows: &[usize], p: &[f64]| {
                gather_rows(x, y, rows, &mut xb, &mut yb);
                Ok(obj.on_batch(xb.as_ref(), &yb)?.value_and_gradient(p)?.1)
            };
            let steps = AdamSteps {
                n: y.len(),
                batch,
                adam,
                seed: st.seed,
            };
            minimise_on_batches(&p0, search, &steps, &mut on_rows, &|p| obj.value(p))?
        }
    };
    let terms = obj.terms(&params)?;
    let (kernel, z, q) = layout.unpack(kernel_init, &params)?;
    let q = q.with_positive_diagonal();
    let posterior = whitened_posterior(&kernel, z.clone(), &q)?;
    Ok(Minimised {
        kernel,
        z,
        q,
        posterior,
        terms,
        report,
    })
}

/// The noise variance under which greedy placement (`InducingInit::Greedy`) regresses the ±1
/// labels: the labels' own variance, so no point is fitted as if it were exact.
const GREEDY_PLACEMENT_NOISE: f64 = 1.0;

/// Share of Adam's steps taken with θ free; the rest run with θ snapped onto the grid.
const FREE_THETA_SHARE: f64 = 0.8;

/// A minibatch run: N rows, B rows per step, Adam's schedule and the seed of the draws.
#[derive(Clone, Copy, Debug)]
pub struct AdamSteps {
    /// The sample size N the rows are drawn from.
    pub n: usize,
    /// Rows per minibatch B (at most N).
    pub batch: usize,
    /// The number of steps and the step sizes.
    pub adam: AdamConfig,
    /// Seed of the draws.
    pub seed: u64,
}

/// The gradient of the minibatch objective on the given rows (indices into the N rows, in
/// the order drawn) at the parameters: where the rows are is the caller's (in this process,
/// or on data shards).
pub type BatchGradient<'a> = dyn FnMut(&[usize], &[f64]) -> Result<Vec<f64>> + 'a;

/// Minimise from `p0` by Adam ([`AdamConfig`]'s schedule) on seeded minibatches of `B` rows
/// drawn without replacement from the N rows (a fresh draw each step; `gradient` evaluates
/// the minibatch objective on them), within `search`'s boxes: the first
/// `FREE_THETA_SHARE` (80%) of the steps with θ free, then θ rounded onto `search`'s grid and
/// pinned there. The report carries `full_value` (the objective on all rows) at the end; a run
/// of fixed length has no convergence test, and says so.
pub fn minimise_on_batches(
    p0: &[f64],
    search: &Search,
    steps: &AdamSteps,
    gradient: &mut BatchGradient<'_>,
    full_value: &dyn Fn(&[f64]) -> Result<f64>,
) -> Result<(Vec<f64>, OptimReport)> {
    let AdamSteps { n, adam, seed, .. } = *steps;
    if steps.batch == 0 {
        return Err(Error::InvalidParameter {
            name: "batch size",
            value: 0.0,
            reason: "must be at least 1",
        });
    }
    let batch = steps.batch.min(n);
    let nk = search.snap.as_ref().map_or(0, |s| s.n);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5356_4750_6261_7463);
    let mut params = p0.to_vec();
    let mut bounds = search.bounds.clone();
    let mut state = Adam::new(params.len(), adam);
    let free_steps = (FREE_THETA_SHARE * adam.steps as f64).round() as usize;
    let snap_theta = |params: &mut [f64], bounds: &mut [(f64, f64)]| {
        if let Some(snap) = &search.snap {
            for (k, t) in snap.grid.round(&params[..nk]).into_iter().enumerate() {
                params[k] = t;
                bounds[k] = (t, t);
            }
        }
    };
    let mut taken = adam.steps;
    for step in 0..adam.steps {
        if crate::optim::stop::requested() {
            // Stopped early: keep the parameters reached (θ snapped below).
            taken = step;
            break;
        }
        if step == free_steps {
            snap_theta(&mut params, &mut bounds);
        }
        crate::optim::stop::count_iteration();
        let rows = rand::seq::index::sample(&mut rng, n, batch).into_vec();
        let grad = gradient(&rows, &params)?;
        if grad.len() != params.len() {
            return Err(Error::ShapeMismatch {
                what: "minibatch gradient",
                expected: format!("{} entries", params.len()),
                found: format!("{}", grad.len()),
            });
        }
        state.step(&mut params, &grad, &bounds);
    }
    if free_steps >= taken {
        snap_theta(&mut params, &mut bounds);
    }
    let value = full_value(&params)?;
    let (termination, message) = if taken < adam.steps {
        (
            Termination::Stopped,
            format!(
                "Adam stopped early after {taken} of {} steps on minibatches of {batch} rows (θ snapped onto the grid)",
                adam.steps
            ),
        )
    } else {
        (
            Termination::Other,
            format!(
                "Adam, {} steps on minibatches of {batch} rows (θ snapped onto the grid after {free_steps}); a stochastic run of fixed length has no convergence test",
                adam.steps
            ),
        )
    };
    let report = OptimReport {
        params: params.clone(),
        value,
        iterations: taken as u64,
        evaluations: taken as u64 + 1,
        termination,
        message,
    };
    Ok((params, report))
}

/// Rows `rows` of `(x, y)` into `(xb, yb)`, in that order (resized as needed).
fn gather_rows(
    x: MatRef<'_, f64>,
    y: &[f64],
    rows: &[usize],
    xb: &mut Mat<f64>,
    yb: &mut Vec<f64>,
) {
    let d = x.ncols();
    if xb.nrows() != rows.len() {
        *xb = Mat::zeros(rows.len(), d);
    }
    yb.clear();
    for (r, &i) in rows.iter().enumerate() {
        yb.push(y[i]);
        for t in 0..d {
            xb[(r, t)] = x[(i, t)];
        }
    }
}

/// The shared posterior of `q(v) = N(m, L_qL_qᵀ)` over Z (eq. 12.1) in the dense form:
/// `α = L_uu⁻ᵀm`, `Σ_u = L_uu S L_uuᵀ` held as its Cholesky factor `L_uu L_q` (L_q with a
/// non-negative diagonal; a zero on it is a singular S, an error).
pub fn whitened_posterior(
    kernel: &Kernel,
    z: Mat<f64>,
    q: &WhitenedQ,
) -> Result<GaussianPosterior> {
    let m = q.mean.len();
    if z.nrows() != m || q.sqrt.nrows() != m || q.sqrt.ncols() != m {
        return Err(Error::ShapeMismatch {
            what: "sparse variational posterior",
            expected: format!("{m} inducing inputs and an {m}×{m} L_q"),
            found: format!(
                "{} inducing inputs, L_q {}×{}",
                z.nrows(),
                q.sqrt.nrows(),
                q.sqrt.ncols()
            ),
        });
    }
    if (0..m).any(|j| !(q.sqrt[(j, j)] > 0.0)) {
        return Err(Error::Numerical {
            what: "sparse variational posterior",
            message: "L_q has a zero on its diagonal (a singular covariance)".into(),
        });
    }
    let (_, l_uu) = kuu_factor(kernel, z.as_ref())?;
    let alpha = l_uu.solve_upper_vec(&q.mean);
    let l_sigma = l_uu.l() * q.sqrt.as_ref();
    let l_sigma = Mat::from_fn(m, m, |i, j| if i >= j { l_sigma[(i, j)] } else { 0.0 });
    let chol_sigma = Cholesky::from_lower(l_sigma, 0.0);
    Ok(GaussianPosterior::dense(
        kernel.clone(),
        z,
        alpha,
        l_uu,
        chol_sigma,
    ))
}

/// Inducing inputs must be distinct rows (two equal rows make K_uu singular and say nothing
/// more than one).
pub fn check_distinct_rows(z: MatRef<'_, f64>) -> Result<()> {
    let mut rows: Vec<Vec<u64>> = (0..z.nrows())
        .map(|a| (0..z.ncols()).map(|t| z[(a, t)].to_bits()).collect())
        .collect();
    rows.sort_unstable();
    if rows.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::InvalidParameter {
            name: "number of inducing points M",
            value: z.nrows() as f64,
            reason: "the inducing inputs repeat a row (the training inputs have fewer distinct rows than M, or two k-means centres met): use fewer inducing points",
        });
    }
    Ok(())
}
