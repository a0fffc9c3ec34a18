//! What a checked fit spec makes, short of fitting: the likelihood and inference method it
//! names, the candidate menus its choices are made from and their prices, the split prior's
//! and the sparse variational classifier's settings. [`crate::fit`] fits with them and [`crate::model`]'s `certify` re-derives the
//! same choices from them, so a fit and its certificate price the same menus.

use crate::certificate::PenaltyTerm;
use crate::error::Result;
use crate::inference::InferenceMethod;
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::objective::gpc_split::{SplitPriorConfig, PRIOR_SCALES};
use crate::prior::HyperPrior;
use crate::select::Menu;
use crate::spec::{
    CheckedFitSpec, FitSpec, HyperPriorName, Inference, LikelihoodName, Method, PriorKernel,
    PriorScale, SplitClassifierSpec, SvgpSpec, SvmKernel, SvmSlack, SvmSpec, DEFAULT_BASIS,
};
use crate::svgp::fit::{DEFAULT_MAX_ITER, DEFAULT_STEPS};
use crate::svgp::point::Link;
use crate::svgp::{SvgpCriterionSpec, SvgpSettings};
use crate::svm::Slack;

/// The inference method and likelihood of a classifier spec (its home's
/// [`crate::inference::InferenceSettings::method`]; `seed`: SOGP's visiting order).
pub fn inference_method(i: &Inference, seed: u64) -> Result<(InferenceMethod, Likelihood)> {
    i.settings().method(seed)
}

/// The menu of [`classifier_candidates`], chosen by the bound (`ln 9`).
pub fn classifier_menu(d: usize) -> Menu<Kernel> {
    Menu::charged(classifier_candidates(d), "kernel σ_f²·SE(l)")
}

/// The candidate kernels `σ_f²·SE(l)` on standardised inputs whose bound is compared:
/// `σ_f² ∈ {1, 4, 16}`, `l ∈ {½, 1, 2}·√D`, fixed before seeing data.
pub fn classifier_candidates(d: usize) -> Vec<Kernel> {
    let base = (d as f64).sqrt();
    let mut out = Vec::new();
    for sf2 in [1.0, 4.0, 16.0] {
        for m in [0.5, 1.0, 2.0] {
            out.push(Kernel::se_iso(m * base, sf2));
        }
    }
    out
}

/// The coarse hyperparameter prior a spec names.
pub fn hyper_prior(name: HyperPriorName) -> HyperPrior {
    match name {
        HyperPriorName::Gaussian => HyperPrior::gaussian(),
        HyperPriorName::Uniform => HyperPrior::uniform(),
    }
}

/// The lengthscales scanned on standardised inputs, fixed before seeing data: `{½, 1, 2}·√D`.
pub fn svm_lengthscales(d: usize) -> Vec<f64> {
    let base = (d as f64).sqrt();
    [0.5, 1.0, 2.0].iter().map(|m| m * base).collect()
}

/// The default slack menus: C ∈ {0.1, 1, 10, 100} (linear) or v ∈ {0.3, 1.3, 3} (quadratic).
pub fn default_slacks(quadratic: bool) -> Vec<Slack> {
    if quadratic {
        [0.3, 1.3, 3.0].map(|v| Slack::Quadratic { v }).to_vec()
    } else {
        [0.1, 1.0, 10.0, 100.0]
            .map(|c| Slack::Linear { c })
            .to_vec()
    }
}

/// The kernel and slack menus of an SVM spec for `d` inputs: a given kernel (or SE with a
/// given lengthscale) fixes the kernel, else SE at [`svm_lengthscales`]; a given C or v fixes
/// the slack, else [`default_slacks`].
pub fn svm_candidates(s: &SvmSpec, d: usize) -> Result<(Vec<Kernel>, Vec<Slack>)> {
    let slacks = match s.slack {
        SvmSlack::Linear { c: Some(c) } => vec![Slack::Linear { c }],
        SvmSlack::Quadratic { v: Some(v) } => vec![Slack::Quadratic { v }],
        SvmSlack::Linear { c: None } => default_slacks(false),
        SvmSlack::Quadratic { v: None } => default_slacks(true),
    };
    let kernels = match &s.kernel {
        SvmKernel::Given(spec) => vec![Kernel::from_spec(spec, d)?],
        SvmKernel::Lengthscale(l) => vec![Kernel::se_iso(*l, 1.0)],
        SvmKernel::Menu => svm_lengthscales(d)
            .into_iter()
            .map(|l| Kernel::se_iso(l, 1.0))
            .collect(),
    };
    Ok((kernels, slacks))
}

/// The menu of an SVM spec as specs of one candidate each, in [`svm_candidates`]' order
/// (kernels outer, slacks inner): what a one-vs-rest SVM chooses one of for all its classes
/// ([`crate::fit::multiclass`]). A spec without a menu is its own only candidate.
pub fn svm_menu_specs(s: &SvmSpec, d: usize) -> Vec<SvmSpec> {
    let kernels = match &s.kernel {
        SvmKernel::Menu => svm_lengthscales(d)
            .into_iter()
            .map(SvmKernel::Lengthscale)
            .collect(),
        given => vec![given.clone()],
    };
    let slacks: Vec<SvmSlack> = match s.slack {
        SvmSlack::Linear { c: None } | SvmSlack::Quadratic { v: None } => {
            let quadratic = matches!(s.slack, SvmSlack::Quadratic { .. });
            default_slacks(quadratic)
                .into_iter()
                .map(|slack| match slack {
                    Slack::Linear { c } => SvmSlack::Linear { c: Some(c) },
                    Slack::Quadratic { v } => SvmSlack::Quadratic { v: Some(v) },
                })
                .collect()
        }
        given => vec![given],
    };
    kernels
        .iter()
        .flat_map(|k| {
            slacks.iter().map(move |&slack| SvmSpec {
                kernel: k.clone(),
                slack,
                ..s.clone()
            })
        })
        .collect()
}

/// The one-candidate member specs a one-vs-rest SVM chooses one of for all its classes
/// ([`svm_menu_specs`]): its (kernel, slack) menu, chosen by the multi-class linear-response
/// LOO on the bound's sample, charged `ln |menu|`; empty for any other binary method.
pub fn shared_svm_menu(member: &FitSpec, d: usize) -> Menu<FitSpec> {
    let items = match &member.method {
        Method::Svm(s) => svm_menu_specs(s, d)
            .into_iter()
            .map(|c| FitSpec {
                method: Method::Svm(c),
                ..member.clone()
            })
            .collect(),
        _ => Vec::new(),
    };
    Menu::charged(
        items,
        "SVM kernel × slack shared by the classes, by the multi-class LR-LOO",
    )
}

/// The softmax Laplace's menu: one of [`classifier_candidates`] shared by the classes, chosen
/// by the bound, charged `ln |menu|`.
pub fn softmax_kernel_menu(d: usize) -> Menu<Kernel> {
    Menu::charged(
        classifier_candidates(d),
        "kernel σ_f²·SE(l) shared by the classes",
    )
}

/// The (kernel, slack) menu of an SVM spec (every kernel of [`svm_candidates`] with every
/// slack, kernel outer), chosen by the linear-response LOO error on the bound's sample:
/// charged `ln |menu|`.
pub fn svm_menu(s: &SvmSpec, d: usize) -> Result<Menu<(Kernel, Slack)>> {
    let (kernels, slacks) = svm_candidates(s, d)?;
    let items = kernels
        .iter()
        .flat_map(|k| slacks.iter().map(move |&c| (k.clone(), c)))
        .collect();
    Ok(Menu::charged(items, "SVM kernel × slack by LR-LOO"))
}

/// The prior kernel of a certified SVM: `k` plus a unit constant for the bias.
pub fn svm_prior_kernel(kernel: &Kernel) -> Kernel {
    Kernel::Sum {
        left: Box::new(kernel.clone()),
        right: Box::new(Kernel::Constant { ln_variance: 0.0 }),
    }
}

/// The choices of a certified SVM and their prices: the (kernel, slack) menu by LR-LOO and the
/// μ menu of its certificate ([`crate::svm::certificate::mu_menu`]).
pub fn svm_choices(menu: &Menu<(Kernel, Slack)>) -> Vec<PenaltyTerm> {
    vec![menu.price(), crate::svm::certificate::mu_menu().price()]
}

/// The split prior's settings from its spec: the fraction, the seed, whether B's sites are
/// optimised for the bound (pac-gpc) or Laplace's (laplace), δ, Catoni's λ from part A, and
/// the menus of scales and kernel structures chosen on a nested split of A.
pub fn split_config(
    spec: &CheckedFitSpec,
    split: &SplitClassifierSpec,
    optimise_sites: bool,
) -> SplitPriorConfig {
    let mut config = SplitPriorConfig::new(split.fraction, spec.seed);
    config.optimise_sites = optimise_sites;
    config.bound.delta = spec.delta;
    if split.catoni {
        config.catoni = Some(crate::bounds::CatoniLambda::FromPartA);
    }
    config.prior_scales = match split.prior_scale {
        PriorScale::Fixed(t) => vec![t],
        PriorScale::Auto => PRIOR_SCALES.to_vec(),
    };
    if split.prior_kernel == PriorKernel::Auto {
        config.alt_kernels = vec![Kernel::se_iso(1.0, 1.0)];
    }
    config.both_directions = split.both_directions;
    config
}

/// The library's settings of a checked spec's sparse variational classifier.
pub fn svgp_settings(spec: &CheckedFitSpec, s: &SvgpSpec, n: usize) -> SvgpSettings {
    let criterion = match s.bound {
        None => SvgpCriterionSpec::Elbo,
        Some(kind) => SvgpCriterionSpec::Bound { kind },
    };
    let m = s.inducing.unwrap_or(DEFAULT_BASIS.min(s.smallest_part(n)));
    let mut st = SvgpSettings::new(m, criterion, spec.delta, spec.seed);
    st.link = match s.likelihood {
        LikelihoodName::Probit => Link::Probit,
        LikelihoodName::Logistic => Link::Logit,
    };
    st.term = spec.confidence_term();
    st.init = s.inducing_init;
    // A batch of every row is the full objective: L-BFGS, as the spec's note promises.
    st.batch = s.batch.filter(|&b| b < n);
    let default_iter = match s.batch {
        None => DEFAULT_MAX_ITER,
        Some(_) => DEFAULT_STEPS,
    };
    st.max_iter = s.schedule.max_iter.unwrap_or(default_iter);
    st
}
