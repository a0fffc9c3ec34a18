//! A multi-output regressor in use ([`Task::MultiOutput`]): one regressor per output, so its
//! predictions, test metrics, intervals and leave-one-out are each member's on its own column.
//!
//! Its certificates: each output's at δ, as a regressor's (each holds with probability
//! ≥ 1 − δ on its own); and the joint one, every output's at δ/K, so that with probability
//! ≥ 1 − δ all K hold at once (a union bound over the outputs) — in particular the mean of the
//! K outputs' ε-band Gibbs risks is then at most the mean of their bounds. A kernel shared by
//! the outputs (gpr's `shared_kernel`) changes none of this: each output's θ is still a point
//! of the grid its certificate prices, whichever rows chose it.

use faer::MatRef;
use serde::{Deserialize, Serialize};

use super::{
    CertificateReport, CertifyOptions, Evaluation, FittedModel, RegressionPrediction, Task,
};
use crate::data::Outputs;
use crate::error::{Error, Result};
use crate::spec::LooRequest;

/// One output's certificates (one per ε), by its target's name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputCertificate {
    /// The output's target column.
    pub target: String,
    /// Its certificates, one per ε, as a regressor's.
    pub certificates: Vec<CertificateReport>,
}

/// All outputs certified at once: each at δ/K, so that with probability ≥ 1 − δ every one of
/// the K·(number of ε) bounds holds together (union bound over the outputs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JointCertificate {
    /// The joint confidence δ: all bounds hold at once with probability ≥ 1 − δ.
    pub delta: f64,
    /// Each output's share δ/K.
    pub delta_per_output: f64,
    /// Each output's certificates at δ/K (without leave-one-out, which is each output's own).
    pub outputs: Vec<OutputCertificate>,
    /// For each ε (in order), the mean over the outputs of their bounds at δ/K: a bound on the
    /// mean of the K outputs' ε-band Gibbs risks, with probability ≥ 1 − δ.
    pub mean_bound: Vec<f64>,
}

/// A multi-output regressor's certificates: each output's on its own, and all at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputCertificates {
    /// Each output's certificates at δ, in output order.
    pub outputs: Vec<OutputCertificate>,
    /// All outputs at once, by a union bound.
    pub joint: JointCertificate,
}

impl FittedModel {
    /// A multi-output regressor's members (output order), or an error naming the model.
    pub fn output_members(&self) -> Result<&[FittedModel]> {
        match &self.task {
            Task::MultiOutput { members } => Ok(members),
            _ => Err(Error::Unsupported(format!(
                "this {} model has one target ('{}'), not several",
                self.method(),
                self.target_name
            ))),
        }
    }

    /// The target names the model predicts: its members' for a multi-output regressor, else
    /// its one target's.
    pub fn target_names(&self) -> Vec<String> {
        match &self.task {
            Task::MultiOutput { members } => {
                members.iter().map(|m| m.target_name.clone()).collect()
            }
            _ => vec![self.target_name.clone()],
        }
    }

    /// Each output's predictions at raw inputs, in output order.
    pub fn predict_outputs(&self, x: MatRef<'_, f64>) -> Result<Vec<RegressionPrediction>> {
        self.output_members()?
            .iter()
            .map(|m| m.predict_regression(x))
            .collect()
    }

    /// Each output's test metrics on `test` (its targets named as the model's, in order).
    pub fn evaluate_outputs(
        &self,
        test: &Outputs,
        epsilon: Option<f64>,
    ) -> Result<Vec<Evaluation>> {
        let members = self.matched_outputs(test)?;
        members
            .iter()
            .zip(test.samples())
            .map(|(m, s)| m.evaluate(s, epsilon))
            .collect()
    }

    /// The certificates of a multi-output regressor on its training sample (every output's
    /// column): each output's at δ, and all outputs at once at δ/K each
    /// ([`JointCertificate`]); ε, δ and the confidence term as in [`FittedModel::certify`].
    pub fn certify_outputs(
        &self,
        sample: &Outputs,
        opts: &CertifyOptions,
    ) -> Result<OutputCertificates> {
        let members = self.matched_outputs(sample)?;
        let delta = opts.delta.unwrap_or(self.spec.delta);
        let per_output = delta / members.len() as f64;
        let joint_opts = CertifyOptions {
            delta: Some(per_output),
            loo: LooRequest::None,
            ..opts.clone()
        };
        let certify_all = |o: &CertifyOptions| -> Result<Vec<OutputCertificate>> {
            members
                .iter()
                .zip(sample.samples())
                .map(|(m, s)| {
                    Ok(OutputCertificate {
                        target: m.target_name.clone(),
                        certificates: m.certify(s, o)?,
                    })
                })
                .collect()
        };
        let outputs = certify_all(opts)?;
        let joint = certify_all(&joint_opts)?;
        Ok(OutputCertificates {
            outputs,
            joint: JointCertificate {
                delta,
                delta_per_output: per_output,
                mean_bound: mean_bounds(&joint),
                outputs: joint,
            },
        })
    }

    /// The members, checked against a sample's outputs: the same targets in the same order.
    pub(super) fn matched_outputs(&self, sample: &Outputs) -> Result<&[FittedModel]> {
        let members = self.output_members()?;
        let want = self.target_names();
        if sample.target_names() != want {
            return Err(Error::Unsupported(format!(
                "the sample's targets {:?} are not the model's {:?} (in that order)",
                sample.target_names(),
                want
            )));
        }
        Ok(members)
    }

    /// A loaded multi-output model's members: at least two valid regressors of the model's
    /// spec, on its inputs and training size, with distinct targets whose names,
    /// joined by commas, are the model's target name.
    pub(super) fn check_outputs(&self, members: &[FittedModel]) -> Result<()> {
        let bad = |m: String| Error::Numerical {
            what: "multi-output model",
            message: m,
        };
        if members.len() < 2 {
            return Err(bad(format!("{} outputs (at least two)", members.len())));
        }
        for m in members {
            let which = format!("output '{}'", m.target_name);
            if m.format != super::FORMAT {
                return Err(bad(format!("{which}: format '{}'", m.format)));
            }
            m.validate().map_err(|e| bad(format!("{which}: {e}")))?;
            if !matches!(m.task, Task::Regression { .. }) {
                return Err(bad(format!("{which}: not a single-output regressor")));
            }
            if *m.spec != *self.spec {
                return Err(bad(format!("{which}: its spec is not the model's")));
            }
            // Each output keeps its own input scaler: with a holdout, each output holds out
            // its own rows (the split is by the rows' digests, targets included).
            if m.feature_names != self.feature_names || m.n_train != self.n_train {
                return Err(bad(format!(
                    "{which}: its inputs or training size differ from the model's"
                )));
            }
        }
        if self.spec.shares_kernel() && !one_kernel(members) {
            return Err(bad(
                "its outputs share one kernel, but their θ or σ² differ".to_string(),
            ));
        }
        let names = self.target_names();
        if names
            .iter()
            .enumerate()
            .any(|(j, t)| names[..j].contains(t))
        {
            return Err(bad(format!("a target is named twice in {names:?}")));
        }
        if names.join(",") != self.target_name {
            return Err(bad(format!(
                "target name '{}' is not its outputs' {names:?} joined by commas",
                self.target_name
            )));
        }
        Ok(())
    }
}

/// Whether every member has the first's kernel parameters and noise variance.
fn one_kernel(members: &[FittedModel]) -> bool {
    let of = |m: &FittedModel| match &m.task {
        Task::Regression {
            posterior,
            noise_variance,
            ..
        } => Some((posterior.kernel().params(), noise_variance.to_bits())),
        _ => None,
    };
    let first = of(&members[0]);
    first.is_some() && members.iter().all(|m| of(m) == first)
}

/// Asked of a multi-output regressor what only each output has (one sample's certificate, a
/// held-out bound on one target): refused with the way forward.
pub(super) fn certified_per_output() -> Error {
    Error::Unsupported(
        "a multi-output model is certified on all its target columns at once, each output by its own regressor (certify_outputs)"
            .into(),
    )
}

/// For each ε, the mean over the outputs of their bounds.
fn mean_bounds(outputs: &[OutputCertificate]) -> Vec<f64> {
    let k = outputs.len() as f64;
    let per_eps = outputs.first().map_or(0, |o| o.certificates.len());
    (0..per_eps)
        .map(|e| {
            outputs
                .iter()
                .map(|o| o.certificates[e].certificate.bound)
                .sum::<f64>()
                / k
        })
        .collect()
}
