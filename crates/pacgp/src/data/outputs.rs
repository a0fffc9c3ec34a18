//! A multi-output regression sample: K ≥ 2 real targets observed at the same inputs, held as
//! one [`Dataset`] per output (the same inputs and input names, each with its own targets and
//! target name), so that each output's model, certificate and digest are a regressor's.

use faer::Mat;

use super::Dataset;
use crate::error::{Error, Result};

/// K ≥ 2 real targets at the same inputs, one [`Dataset`] per output, in output order.
#[derive(Clone, Debug)]
pub struct Outputs {
    samples: Vec<Dataset>,
}

impl Outputs {
    /// The outputs `targets[j]` (each of N values, named `target_names[j]`) at inputs `x` (N×D,
    /// columns named `feature_names`): at least two, distinct names, each validated as a
    /// [`Dataset`].
    pub fn new(
        x: Mat<f64>,
        targets: Vec<Vec<f64>>,
        feature_names: Vec<String>,
        target_names: Vec<String>,
    ) -> Result<Self> {
        if targets.len() != target_names.len() {
            return Err(Error::ShapeMismatch {
                what: "target names of a multi-output sample",
                expected: format!("{} names, one per target column", targets.len()),
                found: format!("{} names", target_names.len()),
            });
        }
        let samples = targets
            .into_iter()
            .zip(target_names)
            .map(|(y, name)| Dataset::with_names(x.clone(), y, feature_names.clone(), name))
            .collect::<Result<Vec<_>>>()?;
        Self::from_samples(samples)
    }

    /// The outputs of `samples`, which must share their inputs (bit for bit) and input names
    /// and have distinct target names; at least two.
    pub fn from_samples(samples: Vec<Dataset>) -> Result<Self> {
        let Some(first) = samples.first() else {
            return Err(too_few(0));
        };
        if samples.len() < 2 {
            return Err(too_few(samples.len()));
        }
        for s in &samples[1..] {
            let same_inputs = s.x.nrows() == first.x.nrows()
                && s.x.ncols() == first.x.ncols()
                && (0..s.x.ncols()).all(|j| s.x.col(j).iter().eq(first.x.col(j).iter()));
            if !same_inputs || s.feature_names != first.feature_names {
                return Err(Error::Unsupported(format!(
                    "the outputs '{}' and '{}' are not observed at the same inputs (a multi-output sample has one row of inputs for all its targets)",
                    first.target_name, s.target_name
                )));
            }
        }
        for (j, s) in samples.iter().enumerate() {
            if samples[..j].iter().any(|t| t.target_name == s.target_name) {
                return Err(Error::Unsupported(format!(
                    "the target '{}' is named twice in a multi-output sample",
                    s.target_name
                )));
            }
        }
        Ok(Self { samples })
    }

    /// The number of outputs K.
    pub fn k(&self) -> usize {
        self.samples.len()
    }

    /// The number of rows N.
    pub fn n(&self) -> usize {
        self.samples[0].n()
    }

    /// The number of inputs D.
    pub fn d(&self) -> usize {
        self.samples[0].d()
    }

    /// Each output's sample (inputs and its targets), in output order.
    pub fn samples(&self) -> &[Dataset] {
        &self.samples
    }

    /// The target names, in output order.
    pub fn target_names(&self) -> Vec<String> {
        self.samples.iter().map(|s| s.target_name.clone()).collect()
    }

    /// The rows `idx` of every output.
    pub fn subset(&self, idx: &[usize]) -> Self {
        Self {
            samples: self.samples.iter().map(|s| s.subset(idx)).collect(),
        }
    }
}

/// A multi-output sample with fewer than two outputs, refused with the way forward.
fn too_few(k: usize) -> Error {
    Error::Unsupported(format!(
        "a multi-output sample needs at least two target columns, not {k} (one target is a plain regression fit)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> Mat<f64> {
        Mat::from_fn(4, 2, |i, j| (i + 2 * j) as f64)
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn outputs_share_their_inputs_and_keep_their_names() {
        let ys = vec![vec![1.0, 2.0, 3.0, 4.0], vec![0.0, -1.0, 0.5, 2.0]];
        let o = Outputs::new(x(), ys, names(&["u", "v"]), names(&["a", "b"])).unwrap();
        assert_eq!((o.k(), o.n(), o.d()), (2, 4, 2));
        assert_eq!(o.target_names(), ["a", "b"]);
        assert_eq!(o.samples()[1].y, [0.0, -1.0, 0.5, 2.0]);
        let part = o.subset(&[3, 1]);
        assert_eq!(part.samples()[0].y, [4.0, 2.0]);
        assert_eq!(part.samples()[1].x[(0, 1)], 5.0);
    }

    #[test]
    fn one_output_a_repeated_name_or_other_inputs_are_refused() {
        let one = Outputs::new(x(), vec![vec![1.0; 4]], names(&["u", "v"]), names(&["a"]));
        assert!(one.unwrap_err().to_string().contains("at least two"));
        let twice = Outputs::new(
            x(),
            vec![vec![1.0; 4], vec![2.0; 4]],
            names(&["u", "v"]),
            names(&["a", "a"]),
        );
        assert!(twice.unwrap_err().to_string().contains("named twice"));
        let a = Dataset::new(x(), vec![1.0; 4]).unwrap();
        let mut other = x();
        other[(2, 0)] += 1e-12;
        let b = Dataset::with_names(other, vec![1.0; 4], a.feature_names.clone(), "b".into());
        let e = Outputs::from_samples(vec![a, b.unwrap()]).unwrap_err();
        assert!(e.to_string().contains("same inputs"));
        let short = Outputs::new(
            x(),
            vec![vec![1.0; 4], vec![1.0; 3]],
            names(&["u", "v"]),
            names(&["a", "b"]),
        );
        assert!(short.is_err());
    }
}
