//! The derandomised certificate on a regressor's posterior mean: the ε-band loss of the mean
//! bounded by a narrower band's Gibbs risk plus the spread term (module doc of [`super`]).

use super::*;

/// The derandomised certificate on a regressor's mean, ε-band loss `band` (the
/// standardised units of `y`), over the fractions [`DERANDOMISED_FRACTIONS`] of its ε; the
/// record states `epsilon_shown` (target units). Another loss is refused: the certificate
/// bounds the ε-band loss only.
pub fn derandomised_regressor(
    sample: &DerandomisedSample<'_>,
    band: &RegressionLoss,
    epsilon_shown: f64,
    spec: &CertificateSpec,
) -> Result<DeployedCertificate> {
    sample.check()?;
    let (y, n) = (sample.y, sample.y.len());
    let m = sample.family.unit_marginals();
    let RegressionLoss::EpsilonBand { epsilon } = *band else {
        return Err(Error::Unsupported(
            "the derandomised certificate on a regressor's mean bounds the ε-band loss only".into(),
        ));
    };
    let errors = loss::bayes_risk_regression(y, m, band)? * n as f64;
    let grid = DERANDOMISED_FRACTIONS.len();
    let (kl, kl_centred) = (sample.family.kl_to_prior(1.0)?, sample.family.kl_centred());
    let points = DERANDOMISED_FRACTIONS
        .iter()
        .map(|&r| {
            let inner = RegressionLoss::new_epsilon_band((1.0 - r) * epsilon)?;
            let band = FirstTerm {
                scale: 1.0,
                margin: r,
                risk: loss::gibbs_risk_regression(y, m, &inner)?,
                kl,
                grid,
                n,
            };
            let spread = loss::spread_risk(m, &vec![r * epsilon; n])?;
            band.plus(spec, DerandomisedForm::Spread, (spread, kl_centred))
        })
        .collect::<Result<Vec<_>>>()?;
    let best = least(points);
    Ok(deployed(
        best,
        DeployedPredictor::PosteriorMean,
        n,
        errors.round() as usize,
        Some(epsilon_shown),
        spec,
    ))
}
