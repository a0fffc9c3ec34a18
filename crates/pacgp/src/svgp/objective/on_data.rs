//! [`SvgpObjective`]: the assembly's sums over one data set or minibatch held in memory (streamed
//! in blocks), as the optimiser's [`Objective`].

use super::*;

/// The sparse variational classifier's objective on ±1 labels.
pub struct SvgpObjective<'a> {
    assembly: SvgpAssembly,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    stream: Streaming,
}

impl<'a> SvgpObjective<'a> {
    /// The objective with `m` inducing inputs on `(x, y)`, y in ±1 with both classes.
    pub fn new(
        kernel: &Kernel,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        m: usize,
        criterion: SvgpCriterion,
    ) -> Result<Self> {
        check_classifier_inputs(kernel, x, y, m)?;
        Ok(Self {
            assembly: SvgpAssembly::new(kernel, m, x.ncols(), criterion, y.len())?,
            x,
            y,
            stream: Streaming::default(),
        })
    }

    /// The same objective estimated on a minibatch of the sample's rows `(x, y)` (labels
    /// unchecked: a batch may hold one class): the data term's mean over the batch, the KL
    /// spread over (and the bound taken at) the whole sample's N. Unbiased for the ELBO; for
    /// the bound, the bound at the batch's risk (its gradient a stochastic estimate).
    /// A batch is streamed in blocks of [`BATCH_BLOCK_ROWS`] rows, so that every thread takes
    /// part in one step.
    pub fn on_batch<'b>(&self, x: MatRef<'b, f64>, y: &'b [f64]) -> Result<SvgpObjective<'b>> {
        self.assembly.check_rows(x, y, "minibatch")?;
        Ok(SvgpObjective {
            assembly: self.assembly.clone(),
            x,
            y,
            stream: Streaming {
                block_rows: BATCH_BLOCK_ROWS,
                ..self.stream
            },
        })
    }

    /// The same objective with the KL against a split prior's `q_A(v)`
    /// ([`SvgpAssembly::with_prior`]).
    pub fn with_prior(mut self, prior: WhitenedPrior) -> Result<Self> {
        self.assembly = self.assembly.with_prior(prior)?;
        Ok(self)
    }

    /// The same objective streamed in other blocks (the same values to rounding).
    pub fn with_streaming(mut self, stream: Streaming) -> Self {
        self.stream = stream;
        self
    }

    /// What turns sums over rows into the objective (shared with a map-reduce over shards).
    pub fn assembly(&self) -> &SvgpAssembly {
        &self.assembly
    }

    /// Where the parameters live.
    pub fn layout(&self) -> SvgpLayout {
        self.assembly.layout
    }

    /// The kernel structure θ is read into.
    pub fn kernel(&self) -> &Kernel {
        &self.assembly.kernel
    }

    /// The criterion minimised.
    pub fn criterion(&self) -> &SvgpCriterion {
        &self.assembly.criterion
    }

    /// The rows the objective is on.
    pub fn rows(&self) -> (MatRef<'a, f64>, &'a [f64]) {
        (self.x, self.y)
    }

    /// The terms at `p`.
    pub fn terms(&self, p: &[f64]) -> Result<SvgpTerms> {
        Ok(self.evaluate(p, false)?.0)
    }

    fn evaluate(&self, p: &[f64], with_grad: bool) -> Result<(SvgpTerms, Vec<f64>)> {
        let f = self.assembly.factors(p)?;
        let sums = self
            .assembly
            .pass(&f, self.x, self.y, &self.stream, with_grad)?;
        self.assembly.finish(&f, sums)
    }
}

impl Objective for SvgpObjective<'_> {
    fn dim(&self) -> usize {
        self.layout().dim()
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (t, g) = self.evaluate(p, true)?;
        Ok((t.value, g))
    }

    fn value(&self, p: &[f64]) -> Result<f64> {
        Ok(self.evaluate(p, false)?.0.value)
    }
}
