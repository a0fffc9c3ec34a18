//! [`Model`]: a fitted [`FittedModel`] in Python — predictions, evaluation, certificates and the
//! model file's JSON (also its pickle form), all by the library's own methods.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use pacgp::certificate::RiskSum;
use pacgp::model::{FittedModel, Task};

use crate::{compute_threads, compute_with, json, to_mat, to_numpy, to_py_err, wrap, Mat2, Vec1};

mod conversions;
use conversions::{
    certify_options, plain_words, test_sample, Arrays3, Classes, IntervalArrays, MeanCov,
};

/// A fitted pacgp model (any family), immutable.
#[pyclass(frozen, module = "pacgp._pacgp")]
pub struct Model {
    /// The library's model, exactly as `pacgp fit` would save it.
    pub(crate) inner: FittedModel,
}

#[pymethods]
impl Model {
    /// Regression predictions at raw inputs: (mean, latent variance, noisy variance), in the
    /// target's units.
    #[pyo3(signature = (x, n_threads=None))]
    fn predict_regression<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_threads: Option<i64>,
    ) -> PyResult<Arrays3<'py>> {
        let p = self.at_inputs(py, &x, n_threads, FittedModel::predict_regression)?;
        Ok((
            p.mean.into_pyarray(py),
            p.latent_var.into_pyarray(py),
            p.noisy_var.into_pyarray(py),
        ))
    }

    /// The regression predictive mean alone at raw inputs (`predict_regression`'s mean to the
    /// bit, without the variances), in the target's units.
    #[pyo3(signature = (x, n_threads=None))]
    fn predict_mean<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_threads: Option<i64>,
    ) -> PyResult<Vec1<'py>> {
        let mean = self.at_inputs(py, &x, n_threads, FittedModel::predict_regression_mean)?;
        Ok(mean.into_pyarray(py))
    }

    /// Prediction intervals of level 1 − `alpha` at raw inputs by the method the model was
    /// fitted with: (lower, upper, the statement as JSON: method, score, level, guarantee).
    #[pyo3(signature = (x, alpha, n_threads=None))]
    fn predict_intervals<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        alpha: f64,
        n_threads: Option<i64>,
    ) -> PyResult<IntervalArrays<'py>> {
        let xm = to_mat(&x, "X")?;
        let predict = || self.inner.predict_intervals(xm.as_ref(), alpha);
        let iv = compute_with(py, n_threads, predict, plain_words)?;
        Ok((
            iv.lower.into_pyarray(py),
            iv.upper.into_pyarray(py),
            json(&iv.statement)?,
        ))
    }

    /// A classifier's conformal prediction sets of level 1 − `alpha` at raw inputs by the
    /// method it was fitted with: (membership N·K row-major, K, the statement as JSON), the
    /// columns in the model's class order.
    #[pyo3(signature = (x, alpha, n_threads=None))]
    fn predict_sets<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        alpha: f64,
        n_threads: Option<i64>,
    ) -> PyResult<(Bound<'py, PyArray1<bool>>, usize, String)> {
        let xm = to_mat(&x, "X")?;
        let predict = || self.inner.predict_sets(xm.as_ref(), alpha);
        let sets = compute_with(py, n_threads, predict, plain_words)?;
        let k = sets.classes.len();
        let member = sets
            .sets
            .iter()
            .flat_map(|set| (0..k).map(|c| set.contains(&c)));
        Ok((
            member.collect::<Vec<_>>().into_pyarray(py),
            k,
            json(&sets.statement)?,
        ))
    }

    /// A binary classifier's labels at raw inputs, ±1: the sign of `μ(x) + b` (what
    /// `predict` returns and the deployed certificate covers).
    #[pyo3(signature = (x, n_threads=None))]
    fn predict_labels<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_threads: Option<i64>,
    ) -> PyResult<Vec1<'py>> {
        let labels = self.at_inputs(py, &x, n_threads, FittedModel::predict_labels)?;
        Ok(labels.into_pyarray(py))
    }

    /// Classifier predictions at raw inputs: (p(y = +1 | x), latent mean, latent variance).
    #[pyo3(signature = (x, n_threads=None))]
    fn predict_classification<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_threads: Option<i64>,
    ) -> PyResult<Arrays3<'py>> {
        let (p, m) = self.at_inputs(py, &x, n_threads, FittedModel::predict_classification)?;
        Ok((
            p.into_pyarray(py),
            m.mean.into_pyarray(py),
            m.var.into_pyarray(py),
        ))
    }

    /// Predictive mean and joint covariance of new observations at raw inputs (target units,
    /// noise on the diagonal): scikit-learn's `predict(return_cov=True)`.
    #[pyo3(signature = (x, n_threads=None))]
    fn predict_regression_cov<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_threads: Option<i64>,
    ) -> PyResult<MeanCov<'py>> {
        let (mean, cov) = self.at_inputs(py, &x, n_threads, FittedModel::predict_regression_cov)?;
        Ok((mean.into_pyarray(py), to_numpy(py, &cov)))
    }

    /// `n_samples` seeded joint draws of new observations at raw inputs (rows: inputs,
    /// columns: draws) and the jitter the predictive covariance's factor needed.
    #[pyo3(signature = (x, n_samples, seed, n_threads=None))]
    fn sample_regression<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_samples: usize,
        seed: u64,
        n_threads: Option<i64>,
    ) -> PyResult<(Mat2<'py>, f64)> {
        let (draws, jitter) = self.at_inputs(py, &x, n_threads, |m, x| {
            m.sample_regression(x, n_samples, seed)
        })?;
        Ok((to_numpy(py, &draws), jitter))
    }

    /// The parameters `[θ…, ln σ²]` of an exact GP regressor's log marginal likelihood, with
    /// their names.
    #[getter]
    fn evidence_params(&self) -> PyResult<(Vec<f64>, Vec<String>)> {
        self.inner.evidence_params().map_err(to_py_err)
    }

    /// An exact GP regressor's log marginal likelihood at `params = [θ…, ln σ²]` (default:
    /// the model's own) on its standardised targets, and its gradient if `gradient`.
    #[pyo3(signature = (params=None, gradient=false, n_threads=None))]
    fn log_evidence(
        &self,
        py: Python<'_>,
        params: Option<Vec<f64>>,
        gradient: bool,
        n_threads: Option<i64>,
    ) -> PyResult<(f64, Option<Vec<f64>>)> {
        let e = compute_threads(py, n_threads, || {
            self.inner.log_evidence(params.as_deref(), gradient)
        })?;
        Ok((e.value, e.gradient))
    }

    /// A binary Laplace classifier's log evidence at kernel hyperparameters `theta` (ln values
    /// in `kernel_params` order; default: the model's own) on its raw training inputs `x` and
    /// ±1 labels `y`, and its gradient in θ if `gradient`.
    #[pyo3(signature = (x, y, theta=None, gradient=false, n_threads=None))]
    fn classifier_log_evidence(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        theta: Option<Vec<f64>>,
        gradient: bool,
        n_threads: Option<i64>,
    ) -> PyResult<(f64, Option<Vec<f64>>)> {
        let labels = y.as_slice()?.to_vec();
        let e = self.at_inputs(py, &x, n_threads, |m, x| {
            m.classifier_log_evidence(x, &labels, theta.as_deref(), gradient)
        })?;
        Ok((e.value, e.gradient))
    }

    /// An SVM's decision values `f_SVM(x) = mean(x)/μ + b` at raw inputs.
    #[pyo3(signature = (x, n_threads=None))]
    fn svm_decision<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_threads: Option<i64>,
    ) -> PyResult<Vec1<'py>> {
        let d = self.at_inputs(py, &x, n_threads, FittedModel::svm_decision)?;
        Ok(d.into_pyarray(py))
    }

    /// An SVM's dual: (support vectors as rows of the raw training inputs `x_train`, their
    /// coefficients `y_iα_i`, the bias b).
    fn svm_dual(
        &self,
        x_train: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<(Vec<usize>, Vec<f64>, f64)> {
        let xm = to_mat(&x_train, "X")?;
        let d = self.inner.svm_dual(xm.as_ref()).map_err(to_py_err)?;
        Ok((d.support, d.dual_coef, d.intercept))
    }

    /// An SVM's scale μ of the posterior mean and its bias b (`f_SVM = mean/μ + b`, so the
    /// latent mean with the bias is `mean + μb`); None for other models.
    #[getter]
    fn svm_scale_bias(&self) -> Option<(f64, f64)> {
        match &self.inner.task {
            Task::Svm { mu, bias, .. } => Some((*mu, *bias)),
            _ => None,
        }
    }

    /// Multi-class predictions at raw inputs: (class probabilities N×K, their ln scores before
    /// normalisation N×K, the predicted class index N, the classes' latent means N×K and
    /// variances N×K).
    #[pyo3(signature = (x, n_threads=None))]
    fn predict_classes<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        n_threads: Option<i64>,
    ) -> PyResult<Classes<'py>> {
        let p = self.at_inputs(py, &x, n_threads, FittedModel::predict_classes)?;
        let latent = faer::Mat::from_fn(p.labels.len(), p.latent.len(), |i, k| p.latent[k].mean[i]);
        let latent_var =
            faer::Mat::from_fn(p.labels.len(), p.latent.len(), |i, k| p.latent[k].var[i]);
        Ok((
            to_numpy(py, &p.probabilities),
            to_numpy(py, &p.ln_scores),
            p.labels.into_pyarray(py),
            to_numpy(py, &latent),
            to_numpy(py, &latent_var),
        ))
    }

    /// The K class labels of a multi-class model (`None` for the others).
    #[getter]
    fn classes(&self) -> Option<Vec<String>> {
        self.inner.classes().map(|c| c.labels.clone())
    }

    /// How a multi-class model learns its classes: "one-vs-rest", "softmax", or `None`.
    #[getter]
    fn multiclass(&self) -> Option<String> {
        self.inner.spec.multiclass().map(|m| m.to_string())
    }

    /// Test metrics as JSON (`pacgp evaluate --json`'s fields); classifiers take y as −1/+1,
    /// multi-class models as class indices.
    #[pyo3(signature = (x, y, epsilon=None, n_threads=None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        epsilon: Option<f64>,
        n_threads: Option<i64>,
    ) -> PyResult<String> {
        let test = self.sample(&x, &y)?;
        let e = compute_threads(py, n_threads, || self.inner.evaluate(&test, epsilon))?;
        json(&e)
    }

    /// The self-contained HTML page of `pacgp report` on the training sample `(x, y)` and,
    /// optionally, a test sample: the same content (`FittedModel::report`, certify's defaults)
    /// rendered by the same `pacgp_report::render`.
    #[pyo3(signature = (x, y, x_test=None, y_test=None, title="model", loo="auto", n_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn report_html(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        x_test: Option<PyReadonlyArray2<'_, f64>>,
        y_test: Option<PyReadonlyArray1<'_, f64>>,
        title: &str,
        loo: &str,
        n_threads: Option<i64>,
    ) -> PyResult<String> {
        let samples = (
            self.sample(&x, &y)?,
            test_sample(&x_test, &y_test, |x, y| self.sample(x, y))?,
        );
        let content = self.report_content(py, samples, loo, n_threads, FittedModel::report)?;
        Ok(pacgp_report::render(&content, title))
    }

    /// [`Model::report_html`] of a multi-output regressor: `y` (and `y_test`) with one column
    /// per output (`FittedModel::report_outputs`, rendered by `pacgp_report::render_outputs`).
    #[pyo3(signature = (x, y, x_test=None, y_test=None, title="model", loo="auto", n_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn report_outputs_html(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray2<'_, f64>,
        x_test: Option<PyReadonlyArray2<'_, f64>>,
        y_test: Option<PyReadonlyArray2<'_, f64>>,
        title: &str,
        loo: &str,
        n_threads: Option<i64>,
    ) -> PyResult<String> {
        let samples = (
            crate::to_outputs(&x, &y)?,
            test_sample(&x_test, &y_test, crate::to_outputs)?,
        );
        let content =
            self.report_content(py, samples, loo, n_threads, FittedModel::report_outputs)?;
        Ok(pacgp_report::render_outputs(&content, title))
    }

    /// Certificates on the training sample as a JSON list of `pacgp certify --json` objects
    /// (one per ε). `None` takes the model's own: its δ, the confidence term it was trained
    /// with (`term`: maurer|seeger|sharp|catoni:λ), its Gibbs classifier (`predictor`:
    /// latent|noisy); `loo`: auto (the fast one where the model has one)|approx|exact|both|none.
    #[pyo3(signature = (x, y, epsilons=Vec::new(), delta=None, term=None, predictor=None, loo="auto", n_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn certify(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        epsilons: Vec<f64>,
        delta: Option<f64>,
        term: Option<&str>,
        predictor: Option<&str>,
        loo: &str,
        n_threads: Option<i64>,
    ) -> PyResult<String> {
        let sample = self.sample(&x, &y)?;
        let opts = certify_options(epsilons, delta, term, predictor, loo)?;
        let reports = compute_threads(py, n_threads, || self.inner.certify(&sample, &opts))?;
        json(&reports)
    }

    /// A multi-output regressor's certificates on its training sample (inputs `x`, targets
    /// `y`, N × K) as JSON: each output's at δ and all outputs at once at δ/K each
    /// (`FittedModel::certify_outputs`); `epsilons`, `delta`, `term`, `loo` as in `certify`.
    #[pyo3(signature = (x, y, epsilons=Vec::new(), delta=None, term=None, loo="auto", n_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn certify_outputs(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray2<'_, f64>,
        epsilons: Vec<f64>,
        delta: Option<f64>,
        term: Option<&str>,
        loo: &str,
        n_threads: Option<i64>,
    ) -> PyResult<String> {
        let sample = crate::to_outputs(&x, &y)?;
        let opts = certify_options(epsilons, delta, term, None, loo)?;
        let certs = compute_threads(py, n_threads, || self.inner.certify_outputs(&sample, &opts))?;
        json(&certs)
    }

    /// A multi-output regressor's models, one per output (output order); `None` for a model
    /// of one target.
    #[getter]
    fn outputs(&self) -> Option<Vec<Model>> {
        let members = self.inner.output_members().ok()?;
        Some(members.iter().cloned().map(crate::wrap).collect())
    }

    /// A binary classifier's Gibbs loss summed over some rows of its training sample (raw
    /// inputs, labels −1/+1): `(loss, rows)`, the map step of its certificate over shards
    /// (`FittedModel::gibbs_risk_sum`); `delta`, `term`, `predictor` as in `certify`.
    #[pyo3(signature = (x, y, delta=None, term=None, predictor=None, n_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn gibbs_risk_sum(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        delta: Option<f64>,
        term: Option<&str>,
        predictor: Option<&str>,
        n_threads: Option<i64>,
    ) -> PyResult<(f64, usize)> {
        let opts = certify_options(Vec::new(), delta, term, predictor, "none")?;
        let (xm, y) = (to_mat(&x, "inputs")?, y.as_slice()?.to_vec());
        let sum = compute_threads(py, n_threads, || {
            self.inner.gibbs_risk_sum(xm.as_ref(), &y, &opts)
        })?;
        Ok((sum.loss, sum.rows))
    }

    /// The certificate (JSON of one report, as `certify` gives) from the Gibbs loss summed
    /// over the whole training sample (`FittedModel::certify_risk_sum`, the reduce step).
    #[pyo3(signature = (loss, rows, delta=None, term=None, predictor=None))]
    fn certify_risk_sum(
        &self,
        loss: f64,
        rows: usize,
        delta: Option<f64>,
        term: Option<&str>,
        predictor: Option<&str>,
    ) -> PyResult<String> {
        let opts = certify_options(Vec::new(), delta, term, predictor, "none")?;
        let report = self
            .inner
            .certify_risk_sum(RiskSum { loss, rows }, &opts)
            .map_err(to_py_err)?;
        json(&report)
    }

    /// The same model with the input coding `coding_json` (from `fit_input_coding`), stored in
    /// the model file; its inputs are then named as the coding names them.
    fn with_input_coding(&self, coding_json: &str) -> PyResult<Model> {
        crate::table::with_input_coding(&self.inner, coding_json).map(wrap)
    }

    /// Whether the model reads tables through a stored input coding (it was fitted on one).
    #[getter]
    fn has_input_coding(&self) -> bool {
        !self.inner.input_coding.columns.is_empty()
    }

    /// The table columns the model reads, in order.
    #[getter]
    fn table_columns(&self) -> Vec<String> {
        crate::table::table_columns(&self.inner)
    }

    /// Code a later table (`columns[j][i]`: the text of row i, column j; "" if missing) with
    /// the model's stored coding; `unknown_category` "error" or "ignore" overrides the stored
    /// rule. The inputs of the rows kept and their indices.
    #[pyo3(signature = (columns, names, unknown_category=None))]
    fn encode_table<'py>(
        &self,
        py: Python<'py>,
        columns: Vec<Vec<String>>,
        names: Vec<String>,
        unknown_category: Option<&str>,
    ) -> PyResult<(Mat2<'py>, Vec<usize>)> {
        crate::table::encode_table(py, &self.inner, columns, names, unknown_category)
    }

    /// The model file's JSON text (what `pacgp fit --out` writes).
    fn to_json(&self) -> PyResult<String> {
        json(&self.inner)
    }

    /// A model from a model file's JSON text, validated as `pacgp` validates files.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Model> {
        FittedModel::from_json(text, "model JSON")
            .map(wrap)
            .map_err(to_py_err)
    }

    /// Pickle through the model file's JSON: `Model.from_json(text)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let rebuild = slf.get_type().getattr("from_json")?;
        Ok((rebuild, (slf.get().to_json()?,)))
    }

    /// Method name as on the command line (`gpr`, `pac-gp`, `laplace`, ...).
    #[getter]
    fn method(&self) -> String {
        self.inner.method().to_string()
    }

    /// The fit spec (method, options, δ, seed) as JSON, as the model file stores it.
    #[getter]
    fn spec_json(&self) -> PyResult<String> {
        json(&self.inner.spec)
    }

    /// Training size N.
    #[getter]
    fn n_train(&self) -> usize {
        self.inner.n_train
    }

    /// Number of input columns D.
    #[getter]
    fn n_features(&self) -> usize {
        self.inner.feature_names.len()
    }

    /// Whether the model classifies (GP classifier or SVM).
    #[getter]
    fn is_classifier(&self) -> bool {
        self.inner.is_classifier()
    }

    /// The kernel in words, values on the standardised scale.
    #[getter]
    fn kernel(&self) -> String {
        self.inner.kernel().describe()
    }

    /// Kernel hyperparameters θ (ln values) and their names.
    #[getter]
    fn kernel_params(&self) -> (Vec<f64>, Vec<String>) {
        let k = self.inner.kernel();
        (k.params(), k.param_names())
    }

    /// The fitted kernel as the library's JSON tree (ln values, on standardised inputs): what
    /// `kernel_` rebuilds a scikit-learn kernel object from.
    #[getter]
    fn kernel_json(&self) -> PyResult<String> {
        json(self.inner.kernel())
    }

    /// The training standard deviation of every input column (1 for a constant one): a
    /// lengthscale on standardised inputs times it is the lengthscale in the input's units.
    #[getter]
    fn input_scale(&self) -> Vec<f64> {
        self.inner.x_scaler.sd.clone()
    }

    /// Noise variance σ² on the standardised scale (regression models).
    #[getter]
    fn noise_variance(&self) -> Option<f64> {
        match &self.inner.task {
            Task::Regression { noise_variance, .. } => Some(*noise_variance),
            _ => None,
        }
    }

    /// ε stored with the model (target units).
    #[getter]
    fn epsilon(&self) -> Option<f64> {
        self.inner.spec.epsilon()
    }

    /// The fit report (optimiser, objective, penalty terms) as JSON.
    #[getter]
    fn report_json(&self) -> PyResult<String> {
        json(&self.inner.report)
    }

    /// The training sample's duplicated rows as JSON (`null` where the model did not count
    /// them: sharded fits, older files).
    #[getter]
    fn duplicates_json(&self) -> PyResult<String> {
        json(&self.inner.duplicates)
    }

    /// The library's warning about duplicated rows, when their share is above its threshold.
    #[getter]
    fn duplicate_warning(&self) -> Option<String> {
        self.inner.duplicates.and_then(|d| d.warning())
    }

    /// What stopped the fit early (`time_limit=`) and what it means for the certificate, if a
    /// time limit or an interrupt did (`None`: the fit ran to its end).
    #[getter]
    fn stopped_early(&self) -> Option<String> {
        self.inner
            .report
            .stopped_early
            .map(|s| s.sentence("time_limit="))
    }

    fn __repr__(&self) -> String {
        format!(
            "Model(method='{}', n_train={}, kernel='{}')",
            self.inner.method(),
            self.inner.n_train,
            self.kernel()
        )
    }
}
