//! The bound-trained sparse variational classifier with a data-dependent prior (the classifier
//! form of docs/math.md §9.3.2). The sample is split by the library's one [`SampleSplit`]; on
//! part A alone: the input scaler, the kernel's wide start, and θ_A, Z_A and `q_A(v)` by the
//! evidence lower bound ([`fit_svgp`]). The prior is `P_A = ∫ p(f|v) q_A(v) dv`. On part B,
//! `q(v) = N(m, L_qL_qᵀ)` at θ_A and Z_A (pinned), started at `q_A`, minimises the PAC-Bayes
//! bound of part B alone:
//!
//! `R(Q) ≤ kl⁻¹(R_{S_B}(Q), (KL(q‖q_A) + ln|F| + ln(2√N_B/δ))/N_B)`,
//!
//! where Q and `P_A` share `p(f|v)`, so `KL(Q‖P_A) = KL(q‖q_A)` on the M whitened values
//! ([`WhitenedPrior`]). θ and Z are chosen without part B, so they cost nothing; a fraction
//! fixed in advance costs nothing, the best of {0.3, 0.5, 0.7} by the bound costs `ln 3`.
//! Where the grid of θ costs more than the KL the split saves (tens of nats for a few
//! lengthscales against a KL near zero at the start), this certificate is the tighter one.

use faer::Mat;

use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm, PosteriorAgainst};
use crate::data::{Dataset, SampleSplit, Standardizer};
use crate::error::{Error, Result};
use crate::kernel::{start, Kernel};
use crate::objective::gp_split::SplitFraction;
use crate::optim::OptimReport;
use crate::posterior::{Covariance, GaussianPosterior, Prior};
use crate::regression::whitened_blocks::kuu_factor;

use super::fit::{
    fit_svgp, minimise, whitened_posterior, SvgpCriterionSpec, SvgpFit, SvgpSettings,
};
use super::objective::{SvgpObjective, SvgpTerms};
use super::{WhitenedPrior, WhitenedQ};

/// A sparse variational classifier trained on part B against part A's posterior.
#[derive(Clone, Debug)]
pub struct SvgpSplitFit {
    /// What part A fixed: the parts, the input scaler and the prior `P_A` (part A's ELBO fit,
    /// whose own certificate, on part A against `GP(0, k)`, is not this model's).
    pub split: SplitPartA,
    /// The fraction F of part A.
    pub fraction: f64,
    /// `q(v)` on part B (L_q's diagonal non-negative).
    pub q: WhitenedQ,
    /// Q in the shared form (θ_A, Z_A, `q`).
    pub posterior: GaussianPosterior,
    /// The certificate of Q's latent Gibbs classifier on part B against `P_A`.
    pub certificate: Certificate,
    /// The bound's terms at the end (the Gibbs risk on B, `KL(q‖q_A)`).
    pub terms: SvgpTerms,
    /// The optimiser's report on part B.
    pub report: OptimReport,
}

/// Train the sparse variational classifier on part B of a seeded split of `train` (raw
/// inputs, ±1 labels) by its bound against part A's posterior (module doc). `st` gives M, the
/// bound's form, δ, the link, the optimiser's budget and the seed (of the split too); its
/// criterion must be a bound.
pub fn fit_svgp_split_prior(
    kernel_init: &Kernel,
    train: &Dataset,
    st: &SvgpSettings,
    fraction: SplitFraction,
) -> Result<SvgpSplitFit> {
    let SvgpCriterionSpec::Bound { .. } = st.criterion else {
        return Err(Error::Unsupported(
            "a split prior is for the bound-trained classifier (pac-svgp); the evidence lower \
             bound has no prior to choose"
                .into(),
        ));
    };
    crate::data::check_binary_labels(&train.y)?;
    let chosen = fraction.menu()?.by_bound(|&f, price| {
        let fit = fit_fraction(kernel_init, train, st, f, price)?;
        let bound = fit.certificate.bound;
        Ok((fit, bound))
    })?;
    Ok(chosen.value)
}

/// What part A of a split fixes: the parts, the input scaler, the prior (part A's ELBO fit)
/// and part B standardised by that scaler. `fit` and `certify` both build it here, so that
/// `certify` refits part A exactly as the fit did.
#[derive(Clone, Debug)]
pub struct SplitPartA {
    /// Part A's fit by the evidence lower bound (θ_A, Z_A, `q_A`, `P_A`).
    pub prior: SvgpFit,
    /// The input scaler, fitted on part A.
    pub x_scaler: Standardizer,
    /// Rows of part A (indices into the training sample).
    pub part_a: Vec<usize>,
    /// Rows of part B.
    pub part_b: Vec<usize>,
    /// Part B's inputs, standardised by part A's scaler.
    pub xb: Mat<f64>,
    /// Part B's ±1 labels.
    pub yb: Vec<f64>,
    /// Where the kernel started on part A, when the wide start moved it.
    pub start_note: Option<String>,
}

/// Part A of the split of `train` at fraction `f` seeded by `st.seed` (module doc).
pub fn part_a_prior(
    kernel_init: &Kernel,
    train: &Dataset,
    st: &SvgpSettings,
    f: f64,
) -> Result<SplitPartA> {
    let (part_a, part_b) = SampleSplit::new(f, st.seed).parts(train)?;
    let (a, b) = (train.subset(&part_a), train.subset(&part_b));
    check_both_classes(&a.y, &b.y, f)?;
    let x_scaler = Standardizer::fit(a.x.as_ref(), &a.feature_names)?;
    let (xa, xb) = (
        x_scaler.transform(a.x.as_ref())?,
        x_scaler.transform(b.x.as_ref())?,
    );
    let (kernel, start_note) = start::wide_start_noted(
        kernel_init.clone(),
        xa.as_ref(),
        st.seed,
        "leaves q(u) at the prior",
    );
    let on_a = SvgpSettings {
        criterion: SvgpCriterionSpec::Elbo,
        ..*st
    };
    let prior = fit_svgp(&kernel, xa.as_ref(), &a.y, &on_a)?;
    Ok(SplitPartA {
        prior,
        x_scaler,
        part_a,
        part_b,
        xb,
        yb: b.y,
        start_note,
    })
}

/// Each part of the split at fraction `f` holds both labels (±1): part A for its ELBO fit, part
/// B for a certificate of a classifier.
fn check_both_classes(y_a: &[f64], y_b: &[f64], f: f64) -> Result<()> {
    let both = |y: &[f64]| y.contains(&1.0) && y.contains(&-1.0);
    let reason = if !both(y_a) {
        "part A of the split holds one class only: use a larger sample or fraction"
    } else if !both(y_b) {
        "part B of the split holds one class only: use a larger sample or a smaller fraction"
    } else {
        return Ok(());
    };
    Err(Error::InvalidParameter {
        name: "split fraction F",
        value: f,
        reason,
    })
}

impl SplitPartA {
    /// The certificate of Q's (`q`) latent Gibbs classifier on part B against `P_A` under
    /// `loss`: the one computation behind the fit's certificate and `certify`'s.
    pub fn certify_on_b(
        &self,
        q: &GaussianPosterior,
        loss: &GibbsLoss,
        spec: &CertificateSpec,
    ) -> Result<Certificate> {
        let p_a = Prior::Conditioned(Box::new(self.prior.posterior.clone()));
        let charged = PosteriorAgainst::new(q, &p_a)?;
        let marginals = q.predict(self.xb.as_ref())?;
        Certificate::of_predictions(&charged, &marginals, &self.yb, loss, spec)
    }

    /// The posterior Q of a stored model rebuilt on this part A: `q(v)` read off `stored`
    /// (`m = L_uuᵀα`, `L_q = L_uu⁻¹L_Σ` with part A's `L_uu`) and written over θ_A and Z_A
    /// again, so that Q and `P_A` are siblings of one factorisation.
    pub fn posterior_of(&self, stored: &GaussianPosterior) -> Result<GaussianPosterior> {
        let m = self.prior.q.mean.len();
        let Covariance::Dense { chol_sigma, .. } = &stored.cov else {
            return Err(Error::Unsupported(
                "a sparse variational classifier's posterior is in the dense form over Z".into(),
            ));
        };
        if stored.alpha.len() != m || chol_sigma.dim() != m {
            return Err(Error::ShapeMismatch {
                what: "stored sparse variational posterior",
                expected: format!("{m} inducing inputs (part A's)"),
                found: format!("{}", stored.alpha.len()),
            });
        }
        let (_, l_uu) = kuu_factor(&self.prior.kernel, self.prior.z.as_ref())?;
        let mut sqrt = chol_sigma.l().to_owned();
        l_uu.solve_lower_in_place(sqrt.as_mut());
        let l = l_uu.l();
        let mean = (0..m)
            .map(|i| (i..m).map(|j| l[(j, i)] * stored.alpha[j]).sum())
            .collect();
        let q = WhitenedQ { mean, sqrt }.with_positive_diagonal();
        whitened_posterior(&self.prior.kernel, self.prior.z.clone(), &q)
    }
}

/// The fit at one fraction `f`, its choice priced `price`.
fn fit_fraction(
    kernel_init: &Kernel,
    train: &Dataset,
    st: &SvgpSettings,
    f: f64,
    price: &PenaltyTerm,
) -> Result<SvgpSplitFit> {
    let split = part_a_prior(kernel_init, train, st, f)?;
    let SplitPartA { prior, xb, yb, .. } = &split;
    let on_b = SvgpSettings {
        train_kernel: false,
        train_inducing: false,
        ..*st
    };
    let pinned = WhitenedPrior::new(&prior.kernel, prior.z.clone(), prior.q.clone())?;
    let obj = SvgpObjective::new(
        &prior.kernel,
        xb.as_ref(),
        yb,
        st.m,
        on_b.criterion_priced(price.nats)?,
    )?
    .with_prior(pinned)?;
    // θ and Z stay at part A's: pinned by the boxes, and no snap onto θ's grid (θ_A is on it).
    let mut search = on_b.search(
        obj.layout(),
        yb.len(),
        &prior.kernel.params(),
        prior.z.as_ref(),
    );
    search.snap = None;
    let min = minimise(
        &obj,
        &on_b,
        &search,
        &prior.kernel,
        prior.z.as_ref(),
        &prior.q,
    )?;
    let spec = CertificateSpec::new(st.delta, st.term, vec![price.clone()]);
    let certificate = split.certify_on_b(&min.posterior, &st.gibbs_loss(), &spec)?;
    Ok(SvgpSplitFit {
        split,
        fraction: f,
        q: min.q,
        posterior: min.posterior,
        certificate,
        terms: min.terms,
        report: min.report,
    })
}
