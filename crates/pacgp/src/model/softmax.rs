//! The softmax Laplace model in use. Its posterior couples the classes at every point, so
//! the Gibbs classifier's risk `P(argmax_k f_k(x_i) ≠ y_i)` is sampled: the certificate
//! draws [`SOFTMAX_DRAWS_PER_POINT`] score vectors at every training point (seeded by the
//! training sample's digest, [`softmax_sampling_seed`], not by a seed anyone picks), spends [`SOFTMAX_DELTA_FRACTION`] of δ on the kl-inverse upper limit of their
//! error rate ([`crate::multiclass::sampled`]) and takes the PAC-Bayes bound at the rest.
//! Predictions are the softmax predictive `E_Q[softmax f(x)]` (GPML Alg. 3.4) by
//! [`SOFTMAX_PREDICTIVE_DRAWS`] draws common to every point.

use faer::{Mat, MatRef};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::certify::Resolved;
use super::multiclass::ClassPrediction;
use super::price::{check_on_grid, check_structure};
use super::{CertificateReport, Evaluation, FittedModel, Task};
use crate::bounds::{ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, MultiClassRisk, PenaltyTerm};
use crate::data::{ClassLabels, Dataset};
use crate::error::{Error, Result};
use crate::inference::softmax::SoftmaxPosterior;
use crate::loo::LooMode;
use crate::multiclass::{argmax_rows, sampled_gibbs_risk, JointScores, SamplingCorrection};
use crate::spec::{ClassifierHypers, Method};

/// Score vectors drawn at every training point for the certificate's sampled risk.
pub const SOFTMAX_DRAWS_PER_POINT: usize = 1000;
/// The share of δ spent on the sampled risk's upper limit.
pub const SOFTMAX_DELTA_FRACTION: f64 = 0.1;
/// Draws of the latent functions for the softmax predictive (common to every point).
pub const SOFTMAX_PREDICTIVE_DRAWS: usize = 1000;
/// Points of one task of the softmax predictive.
const PREDICTIVE_CHUNK: usize = 64;

/// The seed of a softmax certificate's draws: the first 64 bits of the training sample's
/// [`crate::data::sample_digest`] (independent of the rows' order). Fixed by the sample, it is
/// no free choice: a seed that could be edited could be tried until the sampled risk came
/// out low (a bound moved by up to 0.0008 on iris by editing the spec's seed).
pub fn softmax_sampling_seed(sample: &Dataset) -> u64 {
    let digest = crate::data::digest::sample_digest_bytes(sample);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// The sampling of a softmax certificate seeded by `seed`.
pub fn softmax_sampling(seed: u64) -> SamplingCorrection {
    SamplingCorrection {
        draws_per_point: SOFTMAX_DRAWS_PER_POINT,
        seed,
        delta_fraction: SOFTMAX_DELTA_FRACTION,
    }
}

/// The certificate of a softmax Laplace posterior on its (standardised) training sample
/// `(xs, y)`, with the choices paid for and the draws seeded by `seed`.
pub fn softmax_certificate(
    posterior: &SoftmaxPosterior,
    xs: MatRef<'_, f64>,
    y: &[f64],
    choices: Vec<PenaltyTerm>,
    delta: f64,
    term: ConfidenceTerm,
    seed: u64,
) -> Result<Certificate> {
    let (joint, _) = posterior.predict_joint(xs)?;
    let spec = CertificateSpec::new(delta, term, choices);
    let loss = GibbsLoss::MultiClass(MultiClassRisk::Sampled(softmax_sampling(seed)));
    Certificate::of_predictions(posterior, &joint, y, &loss, &spec)
}

impl FittedModel {
    /// The classes and posterior of a softmax model.
    fn softmax_parts(&self) -> Result<(&ClassLabels, &SoftmaxPosterior)> {
        match &self.task {
            Task::Softmax {
                classes, posterior, ..
            } => Ok((classes, posterior)),
            _ => Err(Error::Unsupported(format!(
                "'{}' is not a softmax model",
                self.method()
            ))),
        }
    }

    /// The softmax predictive `E_Q[softmax f(x)]` at standardised inputs, by draws common to
    /// every point (seeded by the spec's seed), in log space.
    pub(super) fn softmax_predict(&self, xs: MatRef<'_, f64>) -> Result<ClassPrediction> {
        let (_, post) = self.softmax_parts()?;
        let (joint, latent) = post.predict_joint(xs)?;
        let ln_scores = self.softmax_ln_scores(&joint);
        let probabilities = crate::multiclass::normalised_probabilities(&ln_scores);
        Ok(ClassPrediction {
            labels: argmax_rows(&probabilities),
            ln_scores,
            probabilities,
            latent,
        })
    }

    /// The class probabilities (rows: points) of the softmax predictive of `joint`'s scores, as
    /// [`Self::predict_classes`] gives them for the model's own (its draws): those of the
    /// leave-one-out models too ([`crate::loo::SoftmaxSiteLoo`]).
    pub fn softmax_probabilities(&self, joint: &JointScores) -> Result<Mat<f64>> {
        self.softmax_parts()?;
        Ok(crate::multiclass::normalised_probabilities(
            &self.softmax_ln_scores(joint),
        ))
    }

    /// `ln E[softmax s]` per point and class for joint scores `s ~ N(m_i, L_iL_iᵀ)`, by
    /// [`SOFTMAX_PREDICTIVE_DRAWS`] draws common to every point (seeded by the spec's seed),
    /// points in parallel. Its exps and logs are `libm`'s: on a two-core Intel Xeon VM with
    /// AVX-512 (the performance page's machine F) glibc's ran this loop 15× slower on two threads
    /// than `libm`'s (10.7 s against 0.70 s for iris's jackknife+ sets), and 9× slower than
    /// one thread.
    fn softmax_ln_scores(&self, joint: &JointScores) -> Mat<f64> {
        use rayon::prelude::*;
        let (m, c) = (joint.n(), joint.k());
        let mut rng = ChaCha8Rng::seed_from_u64(self.spec.seed);
        let eps: Vec<Vec<f64>> = (0..SOFTMAX_PREDICTIVE_DRAWS)
            .map(|_| (0..c).map(|_| StandardNormal.sample(&mut rng)).collect())
            .collect();
        let ln_s = (SOFTMAX_PREDICTIVE_DRAWS as f64).ln();
        // Points in chunks, one buffer of draws per chunk.
        let mut ln_scores = vec![0.0; m * c];
        ln_scores
            .par_chunks_mut(c * PREDICTIVE_CHUNK)
            .enumerate()
            .for_each(|(chunk, part)| {
                let mut draws = vec![0.0; SOFTMAX_PREDICTIVE_DRAWS * c];
                for (r, out) in part.chunks_exact_mut(c).enumerate() {
                    let i = chunk * PREDICTIVE_CHUNK + r;
                    let l = &joint.chol[i];
                    // ln softmax of every draw (draw s at `s·c`, written in place), then ln
                    // of their mean per class.
                    for (e, d) in eps.iter().zip(draws.chunks_exact_mut(c)) {
                        for (a, fa) in d.iter_mut().enumerate() {
                            *fa =
                                joint.mean[(i, a)] + (0..=a).map(|b| l[(a, b)] * e[b]).sum::<f64>();
                        }
                        let mx = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        let lse = mx + libm::log(d.iter().map(|v| libm::exp(v - mx)).sum::<f64>());
                        for dv in d.iter_mut() {
                            *dv -= lse;
                        }
                    }
                    for (a, o) in out.iter_mut().enumerate() {
                        let class = || draws.iter().skip(a).step_by(c);
                        let mx = class().copied().fold(f64::NEG_INFINITY, f64::max);
                        let s: f64 = class().map(|v| libm::exp(v - mx)).sum();
                        *o = mx + libm::log(s) - ln_s;
                    }
                }
            });
        Mat::from_fn(m, c, |i, a| ln_scores[i * c + a])
    }

    /// Test metrics of a softmax model: the predicted class's error rate, the predictive's
    /// log loss and the sampled Gibbs error (an estimate, seeded by the spec's seed).
    pub(super) fn softmax_evaluate(&self, test: &Dataset) -> Result<Evaluation> {
        let (classes, post) = self.softmax_parts()?;
        crate::multiclass::check_labels(&test.y, classes.k())?;
        let xs = self.standardised_inputs(test.x.as_ref())?;
        let p = self.softmax_predict(xs.as_ref())?;
        let (joint, _) = post.predict_joint(xs.as_ref())?;
        let n = test.n() as f64;
        let errors = p
            .labels
            .iter()
            .zip(&test.y)
            .filter(|(l, y)| **l as f64 != **y)
            .count();
        let log_loss = -(0..test.n())
            .map(|i| p.probabilities[(i, test.y[i] as usize)].ln())
            .sum::<f64>()
            / n;
        Ok(Evaluation {
            n: test.n(),
            error_rate: Some(errors as f64 / n),
            log_loss: Some(log_loss),
            gibbs_risk: Some(sampled_gibbs_risk(
                &test.y,
                &joint,
                SOFTMAX_DRAWS_PER_POINT,
                self.spec.seed,
            )?),
            ..Default::default()
        })
    }

    /// The softmax certificate on the training sample: KL of the coupled posterior, the
    /// spec's price, the sampled risk at a share of δ; with `loo`, its rows' sites removed
    /// (LA-LOO, docs/math.md eq. 10.1: the approximation only, which the spec's checks ask).
    pub(super) fn softmax_certify(
        &self,
        sample: &Dataset,
        r: &Resolved,
        loo: Option<LooMode>,
    ) -> Result<Vec<CertificateReport>> {
        let (classes, post) = self.softmax_parts()?;
        crate::data::check_class_indices(&sample.y, classes.k())?;
        let choices = self.softmax_choices()?;
        self.check_scalers(sample)?;
        let seed = self.softmax_sampling_seed_for(sample)?;
        let xs = self.standardised_inputs(sample.x.as_ref())?;
        let c = softmax_certificate(post, xs.as_ref(), &sample.y, choices, r.delta, r.term, seed)?;
        let mut report = CertificateReport::new(c, None);
        if loo.is_some() {
            report.loo_error = Some(self.softmax_loo_error(post)?);
            report.loo_estimator = Some(crate::loo::LooEstimator::Cavity);
        }
        Ok(vec![report])
    }

    /// The share of training rows whose leave-one-out model (its site removed) predicts
    /// another class than the row's, by the model's own softmax predictive.
    fn softmax_loo_error(&self, post: &SoftmaxPosterior) -> Result<f64> {
        let loo = crate::loo::SoftmaxSiteLoo::new(post)?;
        let p = self.softmax_probabilities(loo.training())?;
        let predicted = argmax_rows(&p);
        let labels = loo.labels();
        let wrong = labels
            .iter()
            .zip(&predicted)
            .filter(|(y, p)| y != p)
            .count();
        Ok(wrong as f64 / labels.len().max(1) as f64)
    }

    /// The seed of the certificate's draws on `sample`: the sample's own
    /// ([`softmax_sampling_seed`]); a recorded seed that is not it is refused.
    fn softmax_sampling_seed_for(&self, sample: &Dataset) -> Result<u64> {
        let derived = softmax_sampling_seed(sample);
        match &self.task {
            Task::Softmax {
                sampling_seed: Some(recorded),
                ..
            } if *recorded != derived => Err(Error::ModelMismatch {
                part: "softmax sampling seed".into(),
                reason: format!(
                    "{recorded} where the training sample gives {derived}: the certificate's draws are seeded by the sample, not chosen"
                ),
            }),
            _ => Ok(derived),
        }
    }

    /// The softmax model's choice and price from its spec: θ on the grid (`T·ln 1201`) or
    /// one of the nine candidate kernels (`ln 9`), shared by the classes.
    pub(super) fn softmax_choices(&self) -> Result<Vec<PenaltyTerm>> {
        let (_, post) = self.softmax_parts()?;
        let Method::Softmax(s) = &self.spec.method else {
            return Err(Error::ModelMismatch {
                part: "task".into(),
                reason: "a softmax task without a softmax spec".into(),
            });
        };
        let kernel = &post.kernel;
        let d = self.feature_names.len();
        match &s.hypers {
            ClassifierHypers::Grid { kernel: spec } => {
                check_structure(kernel, spec, d)?;
                let grid = HyperGrid::default();
                check_on_grid(kernel, &grid)?;
                Ok(vec![PenaltyTerm::grid(&grid, kernel.n_params())])
            }
            ClassifierHypers::Candidates => {
                let candidates = crate::plan::softmax_kernel_menu(d);
                if !candidates.items.contains(kernel) {
                    return Err(Error::ModelMismatch {
                        part: "kernel".into(),
                        reason: format!(
                            "{} is not one of the spec's {} candidate kernels",
                            kernel.describe(),
                            candidates.len()
                        ),
                    });
                }
                Ok(vec![candidates.price()])
            }
            ClassifierHypers::Split(_) => Err(Error::Unsupported(
                "the softmax Laplace has no split prior".into(),
            )),
        }
    }

    /// A softmax model: K ≥ 2 labels for a posterior of K classes on the model's inputs, and
    /// the model's posterior its shared prior.
    pub(super) fn check_softmax(
        &self,
        classes: &ClassLabels,
        post: &SoftmaxPosterior,
    ) -> Result<()> {
        classes.check()?;
        let bad = |m: String| Error::Numerical {
            what: "softmax model",
            message: m,
        };
        if post.classes() != classes.k() {
            return Err(bad(format!(
                "a posterior of {} classes for {} labels",
                post.classes(),
                classes.k()
            )));
        }
        if post.basis.ncols() != self.feature_names.len() || post.basis.nrows() != self.n_train {
            return Err(bad(
                "the posterior's basis is not the training inputs' shape".into(),
            ));
        }
        Ok(())
    }
}
