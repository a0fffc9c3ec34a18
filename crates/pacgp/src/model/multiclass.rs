//! Multi-class models in use: class predictions, test metrics, the certificate on the
//! multi-class 0-1 loss and its prices, re-derived from the spec (the softmax Laplace's
//! parts are in [`super::softmax`]).
//!
//! One-vs-rest: the posterior is the product `Q = Π_k Q_k` of the K binary posteriors over
//! the K latent functions and the prior the product of theirs, so `KL(Q‖P) = Σ_k KL(Q_k‖P_k)`;
//! class k's score is `s_k = f_k + b_k` (plus the probit's label noise for the noisy
//! predictor), and the Gibbs classifier predicts `argmax_k s_k(x)`. Every class chose its
//! θ (or kernel, slack, μ) from its binary spec's menu or grid; the union bound over the
//! K-tuples of choices charges the sum of the K binary prices (`K·ln 9` for the candidate
//! menu, `K·T·ln 1201` on the grid), each re-derived by the class's own binary model from
//! the outer spec. `predict`'s class is the Gibbs classifier's majority vote, certified
//! beside it by [`crate::certificate::deployed::derandomised_majority_vote`].

use faer::{Mat, MatRef};

use super::certify::Resolved;
use super::{CertificateReport, Evaluation, FittedModel, Task};
use crate::certificate::deployed::{
    derandomised_majority_vote, majority_vote_forms_with_c_bound, DeployedCertificate,
};
use crate::certificate::{
    Certificate, CertificateSpec, GibbsLoss, GibbsPredictor, MultiClassRisk, PenaltyTerm,
};
use crate::data::{one_vs_rest_signs, ClassLabels, Dataset};
use crate::error::{Error, Result};
use crate::loo::{LooEstimator, LooMode};
use crate::multiclass::{argmax_rows, ln_vote_matrix, normalised_probabilities, VoteRisks};
use crate::posterior::{GaussianPosterior, Marginals};

/// Class predictions of a multi-class model at a set of inputs.
#[derive(Clone, Debug)]
pub struct ClassPrediction {
    /// `ln p_j(x_i)` (rows: points, columns: classes) before normalisation: the ln vote
    /// probabilities of the Gibbs classifier (one-vs-rest), or the ln softmax predictive.
    pub ln_scores: Mat<f64>,
    /// The class probabilities `p_j(x_i)`, each row normalised to sum to 1.
    pub probabilities: Mat<f64>,
    /// The most probable class of each point (index into the labels).
    pub labels: Vec<usize>,
    /// Every class's latent marginals (one-vs-rest: its binary posterior's `f_k + b_k`).
    pub latent: Vec<Marginals>,
}

/// The one-vs-rest leave-one-out errors: the approximate one with its estimator, the exact one.
type OneVsRestLoo = (Option<(f64, LooEstimator)>, Option<f64>);

impl FittedModel {
    /// The K class labels of a multi-class model.
    pub fn classes(&self) -> Option<&ClassLabels> {
        self.task.classes()
    }

    /// The one-vs-rest members, or an error naming the model.
    pub(super) fn members(&self) -> Result<(&ClassLabels, &[FittedModel])> {
        match &self.task {
            Task::OneVsRest { classes, members } => Ok((classes, members)),
            _ => Err(Error::Unsupported(format!(
                "'{}' is not a multi-class model",
                self.method()
            ))),
        }
    }

    /// The K class scores `s_k = f_k + b_k` (plus the probit's label-noise variance for the
    /// noisy predictor) at standardised inputs: the marginals the Gibbs classifier draws.
    pub(super) fn class_scores(
        &self,
        xs: MatRef<'_, f64>,
        predictor: GibbsPredictor,
    ) -> Result<Vec<Marginals>> {
        let (_, members) = self.members()?;
        let latent = members
            .iter()
            .map(|m| m.posterior()?.predict(xs))
            .collect::<Result<Vec<_>>>()?;
        self.scores_of_latent(latent, predictor)
    }

    /// The K class scores `s_k = f_k + b_k` (plus the probit's label-noise variance for the
    /// noisy predictor) from the members' latent marginals `f_k`, in class order.
    fn scores_of_latent(
        &self,
        latent: Vec<Marginals>,
        predictor: GibbsPredictor,
    ) -> Result<Vec<Marginals>> {
        let (_, members) = self.members()?;
        if latent.len() != members.len() {
            return Err(Error::ShapeMismatch {
                what: "latent marginals of the one-vs-rest members",
                expected: format!("{} classes", members.len()),
                found: format!("{}", latent.len()),
            });
        }
        members
            .iter()
            .zip(latent)
            .map(|(m, mut s)| {
                let g = m.gibbs_classifier(predictor)?;
                let noise = g.noise_slope.map_or(0.0, |l| 1.0 / (l * l));
                s.mean.iter_mut().for_each(|v| *v += g.bias);
                s.var.iter_mut().for_each(|v| *v += noise);
                Ok(s)
            })
            .collect()
    }

    /// A one-vs-rest model's class probabilities from its members' latent marginals: the
    /// normalised vote of the Gibbs classifier the members' spec names ([`Self::predict_classes`]).
    pub(super) fn vote_probabilities(&self, latent: Vec<Marginals>) -> Result<Mat<f64>> {
        let scores = self.scores_of_latent(latent, self.trained_predictor_of_members())?;
        Ok(normalised_probabilities(&ln_vote_matrix(&scores)?))
    }

    /// Class probabilities at raw inputs: the probability that the certified Gibbs classifier
    /// `argmax_k s_k(x)` says j (one-vs-rest, by quadrature), normalised per row; the
    /// predicted class is the most probable (the Gibbs classifier's majority vote).
    pub fn predict_classes(&self, x: MatRef<'_, f64>) -> Result<ClassPrediction> {
        let xs = self.standardised_inputs(x)?;
        if let Task::Softmax { .. } = &self.task {
            return self.softmax_predict(xs.as_ref());
        }
        let latent = self.class_scores(xs.as_ref(), self.trained_predictor_of_members())?;
        let ln_scores = ln_vote_matrix(&latent)?;
        let probabilities = normalised_probabilities(&ln_scores);
        Ok(ClassPrediction {
            labels: argmax_rows(&probabilities),
            ln_scores,
            probabilities,
            latent,
        })
    }

    /// The Gibbs classifier the members' spec names.
    fn trained_predictor_of_members(&self) -> GibbsPredictor {
        match &self.task {
            Task::OneVsRest { members, .. } => members
                .first()
                .map_or(GibbsPredictor::Latent, |m| m.trained_predictor()),
            _ => GibbsPredictor::Latent,
        }
    }

    /// Test metrics of a multi-class model (`test.y`: class indices): the error rate of the
    /// predicted class, the log loss of the class probabilities and the Gibbs error.
    pub(super) fn evaluate_multiclass(&self, test: &Dataset) -> Result<Evaluation> {
        if let Task::Softmax { .. } = &self.task {
            return self.softmax_evaluate(test);
        }
        let (classes, _) = self.members()?;
        crate::multiclass::check_labels(&test.y, classes.k())?;
        let xs = self.standardised_inputs(test.x.as_ref())?;
        let scores = self.class_scores(xs.as_ref(), self.trained_predictor_of_members())?;
        let ln_scores = ln_vote_matrix(&scores)?;
        let p = normalised_probabilities(&ln_scores);
        let labels = argmax_rows(&p);
        let n = test.n() as f64;
        let errors = labels
            .iter()
            .zip(&test.y)
            .filter(|(l, y)| **l as f64 != **y)
            .count();
        let log_loss = -(0..test.n())
            .map(|i| ln_normalised(&ln_scores, i, test.y[i] as usize))
            .sum::<f64>()
            / n;
        Ok(Evaluation {
            n: test.n(),
            error_rate: Some(errors as f64 / n),
            log_loss: Some(log_loss),
            gibbs_risk: Some(
                GibbsLoss::MultiClass(MultiClassRisk::Quadrature)
                    .empirical_risk_of(&test.y, scores.as_slice())?,
            ),
            ..Default::default()
        })
    }

    /// The one-vs-rest certificate on the multi-class 0-1 loss on the training sample (class
    /// indices): `KL = Σ_k KL_k`, the prices of every class, the risk by quadrature; and the
    /// one-vs-rest leave-one-out error from the classes' binary ones.
    pub(super) fn certify_one_vs_rest(
        &self,
        sample: &Dataset,
        r: &Resolved,
        loo: Option<LooMode>,
    ) -> Result<Vec<CertificateReport>> {
        let (classes, members) = self.members()?;
        crate::data::check_class_indices(&sample.y, classes.k())?;
        let choices = self.multiclass_choices()?;
        self.check_scalers(sample)?;
        for (c, m) in members.iter().enumerate() {
            let relabelled = Dataset {
                y: one_vs_rest_signs(&sample.y, c),
                ..sample.clone()
            };
            m.check_training_sample(&relabelled)?;
        }
        let xs = self.standardised_inputs(sample.x.as_ref())?;
        let scores = self.class_scores(xs.as_ref(), r.predictor)?;
        let posteriors = members
            .iter()
            .map(FittedModel::posterior)
            .collect::<Result<Vec<&GaussianPosterior>>>()?;
        let spec = CertificateSpec::new(r.delta, r.term, choices);
        let loss = GibbsLoss::MultiClass(MultiClassRisk::Quadrature);
        let certificate = Certificate::of_predictions(
            posteriors.as_slice(),
            scores.as_slice(),
            &sample.y,
            &loss,
            &spec,
        )?;
        let kl = certificate.kl;
        let mut report = CertificateReport::new(certificate, None);
        let trained = self.trained_predictor_of_members();
        let voters = if r.predictor == trained {
            scores
        } else {
            self.class_scores(xs.as_ref(), trained)?
        };
        report.deployed = Some(Self::derandomised_vote(&voters, &sample.y, kl, &spec)?);
        if let Some(mode) = loo {
            let (approx, exact) = self.one_vs_rest_loo(xs.as_ref(), &sample.y, mode)?;
            report.loo_error = approx.map(|(e, _)| e);
            report.loo_estimator = approx.map(|(_, est)| est);
            report.loo_exact_error = exact;
        }
        Ok(vec![report])
    }

    /// The derandomised certificate on the predicted class, the majority vote of the Gibbs
    /// classifier over the class scores `voters` that `predict` uses, at `KL(Q‖P) = kl`.
    fn derandomised_vote(
        voters: &[Marginals],
        y: &[f64],
        kl: f64,
        spec: &CertificateSpec,
    ) -> Result<DeployedCertificate> {
        let (risks, errors) = Self::vote_risks(voters, y)?;
        derandomised_majority_vote(&risks, kl, (y.len(), errors), spec)
    }

    /// The vote risks of the class scores `voters` on the sample and the vote's errors there.
    fn vote_risks(voters: &[Marginals], y: &[f64]) -> Result<(VoteRisks, usize)> {
        let ln_votes = ln_vote_matrix(voters)?;
        let labels = argmax_rows(&normalised_probabilities(&ln_votes));
        let errors = labels
            .iter()
            .zip(y)
            .filter(|(l, y)| **l as f64 != **y)
            .count();
        Ok((VoteRisks::of_votes(y, ln_votes.as_ref())?, errors))
    }

    /// The comparison of `pacgp reproduce deployed` for a one-vs-rest model (see
    /// [`FittedModel::deployed_forms_with_c_bound`]): the vote's forms and its C-bound, from
    /// the voters `predict` uses and `KL = Σ_k KL_k` of its certificate.
    pub(super) fn one_vs_rest_forms_with_c_bound(
        &self,
        sample: &Dataset,
        r: &Resolved,
    ) -> Result<Vec<DeployedCertificate>> {
        let report = self.certify_one_vs_rest(sample, r, None)?.remove(0);
        let xs = self.standardised_inputs(sample.x.as_ref())?;
        let voters = self.class_scores(xs.as_ref(), self.trained_predictor_of_members())?;
        let (risks, errors) = Self::vote_risks(&voters, &sample.y)?;
        let spec = CertificateSpec::new(r.delta, r.term, self.multiclass_choices()?);
        let (kl, n) = (report.certificate.kl, sample.n());
        majority_vote_forms_with_c_bound(&risks, kl, (n, errors), &spec)
    }

    /// The multi-class leave-one-out error of one-vs-rest: each class's binary leave-one-out
    /// decision values `f_k^{−i}(x_i)` (its margins times its ±1 labels), the class of the
    /// largest counted against `y_i`. Approximate (cavities, linear response; refits where a
    /// class has none) and exact (refits) as `mode` asks.
    pub(crate) fn one_vs_rest_loo(
        &self,
        xs: MatRef<'_, f64>,
        y: &[f64],
        mode: LooMode,
    ) -> Result<OneVsRestLoo> {
        let (_, members) = self.members()?;
        let n = y.len();
        let mut approx: Vec<Vec<f64>> = Vec::new();
        let mut exact: Vec<Vec<f64>> = Vec::new();
        let mut estimator = None;
        for (c, m) in members.iter().enumerate() {
            let signs = one_vs_rest_signs(y, c);
            let loo = m.classifier_loo(xs, &signs, mode)?;
            let decision = |margins: &[f64]| -> Vec<f64> {
                margins.iter().zip(&signs).map(|(m, s)| m * s).collect()
            };
            if let Some(a) = &loo.approx {
                approx.push(decision(&a.loo.loo_margins));
                // The weakest estimator of the classes names the whole.
                estimator = Some(match (estimator, a.estimator) {
                    (Some(LooEstimator::Refit), _) | (_, LooEstimator::Refit) => {
                        LooEstimator::Refit
                    }
                    (_, e) => e,
                });
            }
            if let Some(e) = &loo.exact {
                exact.push(decision(&e.loo_margins));
            }
        }
        let error = |d: &[Vec<f64>]| -> Option<f64> {
            (d.len() == members.len()).then(|| {
                let wrong = (0..n)
                    .filter(|&i| {
                        let best =
                            (0..d.len()).fold(0, |b, k| if d[k][i] > d[b][i] { k } else { b });
                        best as f64 != y[i]
                    })
                    .count();
                wrong as f64 / n as f64
            })
        };
        Ok((error(&approx).zip(estimator), error(&exact)))
    }

    /// What a one-vs-rest fit chose and its price: every class's binary choices, re-derived
    /// by its model from the outer spec's binary method (a class whose spec, labels, inputs
    /// or size differ from the outer model's is refused), summed over the classes.
    pub(super) fn multiclass_choices(&self) -> Result<Vec<PenaltyTerm>> {
        if let Task::Softmax { .. } = &self.task {
            return self.softmax_choices();
        }
        let (classes, members) = self.members()?;
        let mut choices = vec![PenaltyTerm {
            what: format!(
                "one-vs-rest over {} classes: each class's choices below, priced by the union bound over the K-tuples of choices (the sum of the K binary prices)",
                classes.k()
            ),
            nats: 0.0,
        }];
        let shared = self.shared_svm_menu()?;
        if shared.len() > 1 {
            choices.push(shared.price());
        }
        for (c, m) in members.iter().enumerate() {
            for t in m.choices()? {
                choices.push(PenaltyTerm {
                    what: format!("class '{}': {}", classes.decode(c), t.what),
                    nats: t.nats,
                });
            }
        }
        Ok(choices)
    }

    /// The size of the (kernel, slack) menu a one-vs-rest SVM chose one candidate of for all
    /// its classes (1: no shared choice — another method, or an SVM spec without a menu).
    fn shared_svm_menu(&self) -> Result<crate::select::Menu<crate::spec::FitSpec>> {
        let member = self
            .spec
            .one_vs_rest_member()
            .ok_or_else(|| Error::Unsupported(format!("'{}' is not one-vs-rest", self.method())))?;
        let d = self.feature_names.len();
        Ok(crate::plan::shared_svm_menu(&member, d))
    }

    /// A one-vs-rest model's members against the outer model: K ≥ 2 of them, each valid, of
    /// the outer spec's binary method (a one-vs-rest SVM: all of one candidate of its menu),
    /// with class k's labels, the same inputs, scaler and size, and the first one's posterior
    /// the outer model's.
    pub(super) fn check_members(
        &self,
        classes: &ClassLabels,
        members: &[FittedModel],
    ) -> Result<()> {
        classes.check()?;
        let bad = |m: String| Error::Numerical {
            what: "one-vs-rest model",
            message: m,
        };
        if members.len() != classes.k() {
            return Err(bad(format!(
                "{} class models for {} classes",
                members.len(),
                classes.k()
            )));
        }
        let want = self
            .spec
            .one_vs_rest_member()
            .ok_or_else(|| bad(format!("a one-vs-rest task with a {} spec", self.method())))?;
        let shared = crate::plan::shared_svm_menu(&want, self.feature_names.len());
        let allowed = if shared.len() > 1 {
            shared.items
        } else {
            vec![want]
        };
        if members.iter().any(|m| *m.spec != *members[0].spec) {
            return Err(bad(
                "the classes' specs differ (a one-vs-rest SVM shares one candidate)".into(),
            ));
        }
        for (c, m) in members.iter().enumerate() {
            let which = format!("class '{}'", crate::data::shown(classes.decode(c)));
            if m.format != super::FORMAT {
                return Err(bad(format!("{which}: format '{}'", m.format)));
            }
            m.validate().map_err(|e| bad(format!("{which}: {e}")))?;
            if !allowed.iter().any(|a| *m.spec == *a) {
                return Err(bad(format!(
                    "{which}: its spec is not the model's binary method"
                )));
            }
            if !matches!(m.task, Task::Classification { .. } | Task::Svm { .. }) {
                return Err(bad(format!("{which}: not a binary classifier")));
            }
            if m.task.labels() != Some(&classes.one_vs_rest(c)) {
                return Err(bad(format!(
                    "{which}: its labels are not the class against the rest"
                )));
            }
            if m.feature_names != self.feature_names
                || m.x_scaler != self.x_scaler
                || m.n_train != self.n_train
            {
                return Err(bad(format!(
                    "{which}: its inputs, input scaler or training size differ from the model's"
                )));
            }
        }
        Ok(())
    }
}

/// `ln p_j(x_i)` normalised over the classes: `ln_scores[i, j] − ln Σ_k exp(ln_scores[i, k])`.
fn ln_normalised(ln_scores: &Mat<f64>, i: usize, j: usize) -> f64 {
    let k = ln_scores.ncols();
    let m = (0..k)
        .map(|c| ln_scores[(i, c)])
        .fold(f64::NEG_INFINITY, f64::max);
    let lse = m
        + (0..k)
            .map(|c| (ln_scores[(i, c)] - m).exp())
            .sum::<f64>()
            .ln();
    ln_scores[(i, j)] - lse
}
