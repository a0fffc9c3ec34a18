//! What [`Model`]'s methods convert between Python and the library: certify options from
//! Python's words, samples from numpy arrays with the model's names, the raw inputs every
//! prediction reads, the report's content that both report pages render, and the tuples of
//! numpy arrays the predictions return.

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use faer::MatRef;
use pacgp::bounds::ConfidenceTerm;
use pacgp::data::Dataset;
use pacgp::model::{CertifyOptions, FittedModel, GibbsPredictor};
use pacgp::spec::values::BadValue;
use pacgp::spec::LooRequest;
use pacgp::Error;

use super::Model;
use crate::errors::PyWording;
use crate::{compute_threads, to_dataset, to_mat, Mat2, Vec1};

/// The library's certify options from Python's words.
pub(super) fn certify_options(
    epsilons: Vec<f64>,
    delta: Option<f64>,
    term: Option<&str>,
    predictor: Option<&str>,
    loo: &str,
) -> PyResult<CertifyOptions> {
    let word = |e: BadValue| PyValueError::new_err(e.to_string());
    Ok(CertifyOptions {
        epsilons,
        delta,
        term: term
            .map(str::parse::<ConfidenceTerm>)
            .transpose()
            .map_err(word)?,
        predictor: predictor
            .map(str::parse::<GibbsPredictor>)
            .transpose()
            .map_err(word)?,
        loo: loo.parse::<LooRequest>().map_err(word)?,
    })
}

/// The library's error as Python's, a spec error (a bad α) as a ValueError in the library's
/// own option names: how interval and set predictions report.
pub(super) fn plain_words(e: Error) -> PyErr {
    crate::errors::lib_err(e, &PyWording::new(None))
}

/// A report's test sample, read by `read` from its inputs and targets: both given or neither
/// (then none); one without the other is refused.
pub(super) fn test_sample<X, Y, T>(
    x: &Option<X>,
    y: &Option<Y>,
    read: impl FnOnce(&X, &Y) -> PyResult<T>,
) -> PyResult<Option<T>> {
    match (x, y) {
        (Some(x), Some(y)) => read(x, y).map(Some),
        (None, None) => Ok(None),
        _ => Err(PyValueError::new_err(
            "a test sample needs both x_test and y_test",
        )),
    }
}

/// Three arrays handed to numpy without copying (each `Vec` becomes the array's buffer).
pub(super) type Arrays3<'py> = (Vec1<'py>, Vec1<'py>, Vec1<'py>);

/// Interval ends and the statement as JSON.
pub(super) type IntervalArrays<'py> = (Vec1<'py>, Vec1<'py>, String);

/// A predictive mean and its joint covariance.
pub(super) type MeanCov<'py> = (Vec1<'py>, Mat2<'py>);

/// Multi-class predictions: class probabilities N×K, their ln scores before normalisation N×K,
/// the predicted class index N, the classes' latent means N×K and variances N×K.
pub(super) type Classes<'py> = (
    Mat2<'py>,
    Mat2<'py>,
    Bound<'py, PyArray1<usize>>,
    Mat2<'py>,
    Mat2<'py>,
);

impl Model {
    /// `f` on the raw inputs `x` (a matrix) with `n_threads` workers, the library's errors
    /// turned into Python's: the step every prediction shares.
    pub(super) fn at_inputs<T: Send>(
        &self,
        py: Python<'_>,
        x: &PyReadonlyArray2<'_, f64>,
        n_threads: Option<i64>,
        f: impl FnOnce(&FittedModel, MatRef<'_, f64>) -> pacgp::Result<T> + Send,
    ) -> PyResult<T> {
        let xm = to_mat(x, "X")?;
        compute_threads(py, n_threads, || f(&self.inner, xm.as_ref()))
    }

    /// A sample on which to evaluate or certify: inputs and targets (classifiers: −1/+1).
    pub(super) fn sample(
        &self,
        x: &PyReadonlyArray2<'_, f64>,
        y: &PyReadonlyArray1<'_, f64>,
    ) -> PyResult<Dataset> {
        let mut data = to_dataset(x, y)?;
        data.feature_names = self.inner.feature_names.clone();
        data.target_name = self.inner.target_name.clone();
        Ok(data)
    }

    /// A report's content on `sample` and the optional `test` sample, by `report` (the one- or
    /// the multi-output report) with certify's defaults and `loo`, on `n_threads` workers.
    pub(super) fn report_content<S: Sync, C: Send>(
        &self,
        py: Python<'_>,
        (sample, test): (S, Option<S>),
        loo: &str,
        n_threads: Option<i64>,
        report: impl FnOnce(&FittedModel, &S, Option<&S>, &CertifyOptions) -> pacgp::Result<C> + Send,
    ) -> PyResult<C> {
        let opts = certify_options(Vec::new(), None, None, None, loo)?;
        compute_threads(py, n_threads, || {
            report(&self.inner, &sample, test.as_ref(), &opts)
        })
    }
}
