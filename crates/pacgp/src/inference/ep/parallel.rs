//! Parallel EP: one sweep proposes every site from the current marginals, and the marginals after
//! it (Anderson-mixed with the history once the sites settle).

use super::*;

/// One parallel sweep: every site from the current marginals; returns the largest change.
pub(super) fn parallel_sweep(
    lik: &Likelihood,
    y: &[f64],
    damping: f64,
    sites: &mut EpSites,
    mu: &[f64],
    var: &[f64],
    ev: &mut Events,
) -> Result<f64> {
    let mut change = 0.0f64;
    for i in 0..y.len() {
        let tau_cav = 1.0 / var[i] - sites.tau[i];
        if !(tau_cav > 0.0) {
            ev.skipped += 1;
            continue;
        }
        let nu_cav = mu[i] / var[i] - sites.nu[i];
        let (tau_p, nu_p) = site_proposal(lik, y[i], tau_cav, nu_cav, ev)?;
        let tau_new = damping * tau_p + (1.0 - damping) * sites.tau[i];
        let nu_new = damping * nu_p + (1.0 - damping) * sites.nu[i];
        change = change
            .max((tau_new - sites.tau[i]).abs())
            .max((nu_new - sites.nu[i]).abs());
        sites.tau[i] = tau_new;
        sites.nu[i] = nu_new;
    }
    Ok(change)
}

/// Marginals after a parallel sweep that proposed the sites `plain`: Anderson-mixed with
/// the history once the sweeps move the sites by less than [`ANDERSON_START`] (a plain
/// fixed-point map), falling back to `plain` where the mixed sites are not a valid
/// posterior. Updates `sites` and builds the new marginals in the buffers of `post`.
pub(super) fn parallel_marginals(
    k: &Mat<f64>,
    sites: &mut EpSites,
    plain: EpSites,
    change: f64,
    last_change: f64,
    anderson: &mut Anderson,
    post: SiteMarginals,
) -> Result<SiteMarginals> {
    let buffers = post.into_buffers();
    if change >= ANDERSON_START {
        *sites = plain;
        return site_marginals(k, sites, false, buffers);
    }
    if change > last_change {
        anderson.reset();
    }
    let mixed = EpSites::from_stacked(&anderson.next(&sites.stacked(), &plain.stacked()));
    match site_marginals(k, &mixed, false, buffers) {
        Ok(p) => {
            *sites = mixed;
            Ok(p)
        }
        Err(_) => {
            anderson.reset();
            *sites = plain;
            site_marginals(k, sites, false, MarginalBuffers::default())
        }
    }
}
