//! An SVM model's decision function and its dual in scikit-learn's terms (`decision_function`,
//! `support_`, `dual_coef_`, `intercept_`): the certified posterior's mean is `μ·f_SVM` over
//! the support vectors, `f_SVM(x) = Σ_i y_iα_i k(x, x_i) + b` on standardised inputs with the
//! prior kernel (which holds the constant term of a certified SVM; `b = 0` there).

use std::borrow::Cow;
use std::collections::HashMap;

use faer::MatRef;

use super::{FittedModel, Task};
use crate::error::{Error, Result};
use crate::svm::SvmFit;

/// The dual of an SVM: support vectors as training rows, their coefficients `y_iα_i`, the bias.
#[derive(Clone, Debug, PartialEq)]
pub struct SvmDual {
    /// Training rows of the support vectors, in the posterior's basis order.
    pub support: Vec<usize>,
    /// `y_iα_i` of every support vector.
    pub dual_coef: Vec<f64>,
    /// The bias b (0 for a certified SVM: it is the prior kernel's constant term).
    pub intercept: f64,
}

impl FittedModel {
    /// The SVM's solution on its standardised sample `(x, y)`: the fit's own where it is kept
    /// for this very problem (the one solving again would give), else the SVM solved again
    /// with the model's kernel and settings.
    pub(crate) fn svm_fit(&self, x: MatRef<'_, f64>, y: &[f64]) -> Result<Cow<'_, SvmFit>> {
        let Task::Svm {
            posterior, config, ..
        } = &self.task
        else {
            return Err(Error::Unsupported(format!(
                "'{}' is not an SVM",
                self.method()
            )));
        };
        let kernel = posterior.kernel();
        let cached = self.svm_solution.as_deref();
        match cached.and_then(|s| s.for_problem(kernel, config, x, y)) {
            Some(fit) => Ok(Cow::Borrowed(fit)),
            None => crate::svm::svm(kernel, x, y, config).map(Cow::Owned),
        }
    }

    fn svm_parts(&self) -> Result<(f64, f64)> {
        match &self.task {
            Task::Svm { mu, bias, .. } => Ok((*mu, *bias)),
            _ => Err(Error::Unsupported(format!(
                "'{}' is not an SVM",
                self.method()
            ))),
        }
    }

    /// `f_SVM(x) = mean(x)/μ + b` at raw inputs: positive for the second label.
    pub fn svm_decision(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        let (mu, bias) = self.svm_parts()?;
        let m = self
            .posterior()?
            .predict(self.standardised_inputs(x)?.as_ref())?;
        Ok(m.mean.iter().map(|v| v / mu + bias).collect())
    }

    /// The dual, with the support vectors found among the raw training inputs `x_train` (their
    /// standardised rows are the basis bit for bit; another sample is an error).
    pub fn svm_dual(&self, x_train: MatRef<'_, f64>) -> Result<SvmDual> {
        let (mu, bias) = self.svm_parts()?;
        let xs = self.standardised_inputs(x_train)?;
        let key = |row: Vec<f64>| row.iter().map(|v| v.to_bits()).collect::<Vec<u64>>();
        let mut rows: HashMap<Vec<u64>, usize> = HashMap::new();
        for i in (0..xs.nrows()).rev() {
            rows.insert(key((0..xs.ncols()).map(|j| xs[(i, j)]).collect()), i);
        }
        let b = &self.posterior()?.basis;
        let support = (0..b.nrows())
            .map(|r| {
                rows.get(&key((0..b.ncols()).map(|j| b[(r, j)]).collect()))
                    .copied()
                    .ok_or_else(|| Error::NotTrainingSample {
                        reason: format!("support vector {r} is not one of its rows"),
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SvmDual {
            support,
            dual_coef: self.posterior()?.alpha.iter().map(|a| a / mu).collect(),
            intercept: bias,
        })
    }
}
