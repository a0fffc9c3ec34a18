//! Q on part B (Laplace with `P_A`'s mean, or sites optimised for the bound), the fit at one
//! fraction and direction, and the menu over fractions and directions.

use super::*;

/// The Laplace posterior of `y` under the prior `N(m₀, K₀)` (Laplace's Newton on the offset
/// from `m₀`, [`crate::inference::laplace`]); returns the sites `α = ∇ln p(f̂)`, `π = W(f̂)`.
pub fn laplace_with_prior_mean(
    prior: &PriorAt,
    lik: &Likelihood,
    y: &[f64],
    cfg: &LaplaceConfig,
) -> Result<SiteParams> {
    lik.require_derivatives("Laplace")?;
    let mode = crate::inference::laplace::find_mode(
        crate::linalg::try_clone(prior.cov.as_ref(), "the prior covariance on part A")?,
        lik,
        y,
        cfg,
        None,
        Some(&prior.mean),
    )?;
    let (lo, hi) = crate::objective::pac_gpc::LN_SITE_PRECISION;
    Ok(SiteParams {
        alpha: mode.derivs.iter().map(|d| d.d1).collect(),
        ln_pi: mode
            .derivs
            .iter()
            .map(|d| (-d.d2).max(1e-300).ln().clamp(lo, hi))
            .collect(),
    })
}

/// One split at a fixed fraction and direction; `menu_choice` is the price of the choice.
#[allow(clippy::too_many_arguments)]
pub(super) fn fit_fraction(
    kernel_init: &Kernel,
    lik: &Likelihood,
    train: &Dataset,
    classifier: GibbsClassifier,
    fraction: f64,
    swapped: bool,
    menu_choice: &PenaltyTerm,
    cfg: &SplitPriorConfig,
) -> Result<SplitPriorFit> {
    let pa = part_a_prior(
        kernel_init,
        lik,
        train,
        classifier,
        fraction,
        swapped,
        menu_choice.nats,
        cfg,
    )?;
    let b = train.subset(&pa.part_b);
    let (latent, xb) = (&pa.latent, &pa.xb);
    let mut choices = vec![menu_choice.clone()];
    choices.extend(pa.choices.iter().cloned());
    let terms = &pa.lambdas;
    let term_price = terms.price();
    let start = laplace_with_prior_mean(latent, lik, &b.y, &cfg.bound.laplace)?;
    let loss = GibbsLoss::Classification(classifier);
    let certify = |sites: &SiteParams, term: ConfidenceTerm| {
        let mut all = choices.clone();
        all.push(term_price.clone());
        let spec = CertificateSpec::new(cfg.bound.delta, term, all);
        let e = SiteEvaluation::new(latent, sites)?;
        let q = posterior_on_b(&pa.prior, xb.as_ref(), sites, &e)?;
        let c = Certificate::of_posterior(&q, xb.as_ref(), &b.y, &loss, &spec)?;
        Ok::<_, Error>((q, c))
    };
    let optimise = |term: ConfidenceTerm, from: &SiteParams| {
        let penalty = menu_choice.nats + term_price.nats;
        let bound = MinimisedBound::new(cfg.bound.delta, term, cfg.bound.kind, penalty)?;
        optimise_sites(
            latent.clone(),
            &b.y,
            classifier,
            &bound,
            from,
            &cfg.bound.lbfgs,
        )
        .map(|r| r.0)
    };
    // The middle λ's sites; with a grid, every λ is scored on them and the best re-optimised.
    let mut term = terms.items[terms.len() / 2];
    let (q_lap, laplace_certificate) = certify(&start, term)?;
    let (posterior, certificate) = if cfg.optimise_sites {
        let mut sites = optimise(term, &start)?;
        if terms.len() > 1 {
            term = terms
                .by_bound(|t, _| Ok((*t, certify(&sites, *t)?.1.bound)))?
                .value;
            sites = optimise(term, &sites)?;
        }
        certify(&sites, term)?
    } else {
        (q_lap, laplace_certificate.clone())
    };
    Ok(SplitPriorFit {
        posterior,
        certificate,
        laplace_certificate,
        fraction,
        lambda: term.catoni_lambda(),
        prior_scale: pa.scale,
        mean_scale: pa.mean_scale,
        prior_kernel: pa.kernel,
        x_scaler: pa.x_scaler,
        part_a: pa.part_a,
        part_b: pa.part_b,
        start_note: pa.start_note,
    })
}

/// Certify a GP classifier with the data-dependent prior of a seeded split of `train` (raw
/// inputs, ±1 labels): module doc.
pub fn fit_classifier_split_prior(
    kernel_init: &Kernel,
    lik: &Likelihood,
    train: &Dataset,
    classifier: GibbsClassifier,
    cfg: &SplitPriorConfig,
) -> Result<SplitPriorFit> {
    BoundTarget::check_confidence(cfg.bound.delta, cfg.bound.term)?;
    crate::data::check_binary_labels(&train.y)?;
    let menu = split_menu(cfg.fraction, cfg.both_directions);
    let chosen = menu.by_bound(|&(f, swapped), price| {
        let fit = fit_fraction(kernel_init, lik, train, classifier, f, swapped, price, cfg)?;
        let bound = fit.certificate.bound;
        Ok((fit, bound))
    })?;
    Ok(chosen.value)
}

/// The menu of (fraction, swapped) pairs a classifier split prior chooses from by its bound:
/// the fractions of `fraction` (one, or 0.3, 0.5, 0.7), each in one direction or both.
pub fn split_menu(fraction: SplitFraction, both_directions: bool) -> Menu<(f64, bool)> {
    let fractions = match fraction {
        SplitFraction::Fixed(f) => vec![f],
        SplitFraction::Menu => FRACTION_MENU.to_vec(),
    };
    let directions: &[bool] = if both_directions {
        &[false, true]
    } else {
        &[false]
    };
    let what = match (fractions.len(), directions.len()) {
        (1, 1) => "split fraction",
        (1, _) => "direction of the split (A→B or B→A)",
        (_, 1) => "split fraction {0.3, 0.5, 0.7}",
        _ => "split fraction {0.3, 0.5, 0.7} and direction",
    };
    let items = fractions
        .iter()
        .flat_map(|&f| directions.iter().map(move |&d| (f, d)))
        .collect();
    Menu::charged(items, what)
}
