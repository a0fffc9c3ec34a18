//! The derandomised certificates on a multi-class majority vote over one-vs-rest members: its grid
//! of forms, the least of them, and every form beside the C-bound (module doc of [`super`]).

use super::*;

/// Every form of a multi-class vote's grid ([`derandomised_majority_vote`]).
fn majority_vote_grid(
    risks: &VoteRisks,
    kl: f64,
    (n, errors): (usize, usize),
    spec: &CertificateSpec,
    which: Grid,
) -> Result<Vec<GridPoint>> {
    if n == 0 || errors > n {
        return Err(Error::ShapeMismatch {
            what: "errors of a majority vote",
            expected: format!("at most {n} of at least one row"),
            found: format!("{errors}"),
        });
    }
    let with_c_bound = which == Grid::WithCBound;
    let gibbs = FirstTerm {
        scale: 1.0,
        margin: 0.0,
        risk: risks.gibbs,
        kl,
        grid: 3 + usize::from(with_c_bound),
        n,
    };
    let tandem = FirstTerm {
        risk: risks.tandem,
        kl: 2.0 * kl,
        ..gibbs
    };
    let mut points = vec![
        gibbs.over(spec, DerandomisedForm::FirstOrder, 0.5)?,
        gibbs.plus(
            spec,
            DerandomisedForm::Disagreement,
            (risks.disagreement, 2.0 * kl),
        )?,
        tandem.over(spec, DerandomisedForm::Tandem, 0.25)?,
    ];
    if with_c_bound {
        points.push(gibbs.c_bound(spec, (risks.correctness_disagreement(), 2.0 * kl))?);
    }
    Ok(points)
}

/// The derandomised certificate on a multi-class model's predicted class, the majority vote
/// of its Gibbs classifier, from the sample's vote risks, `KL(Q‖P)` and the vote's `errors`
/// on the sample: the least of the first-order, disagreement and tandem forms (module doc).
pub fn derandomised_majority_vote(
    risks: &VoteRisks,
    kl: f64,
    (n, errors): (usize, usize),
    spec: &CertificateSpec,
) -> Result<DeployedCertificate> {
    let points = majority_vote_grid(risks, kl, (n, errors), spec, Grid::Certificate)?;
    let predictor = DeployedPredictor::PredictedClass;
    Ok(deployed(least(points), predictor, n, errors, None, spec))
}

/// The comparison of `pacgp reproduce deployed` for a multi-class vote: each form of
/// [`derandomised_majority_vote`] and the C-bound of its ½-margin `2p_y − 1` (the
/// disagreement there is on whether two draws are right, `E 2p_y(1 − p_y)`), priced `ln 4`.
pub fn majority_vote_forms_with_c_bound(
    risks: &VoteRisks,
    kl: f64,
    (n, errors): (usize, usize),
    spec: &CertificateSpec,
) -> Result<Vec<DeployedCertificate>> {
    let points = majority_vote_grid(risks, kl, (n, errors), spec, Grid::WithCBound)?;
    let predictor = DeployedPredictor::PredictedClass;
    Ok(points
        .into_iter()
        .map(|p| deployed(p, predictor, n, errors, None, spec))
        .collect())
}
