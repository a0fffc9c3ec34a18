//! Labels of K ≥ 2 classes as they appear in the data, coded by their index `0..K` (the
//! multi-class fits), and the labels a training sample comes with ([`TrainingLabels`]).

use serde::{Deserialize, Serialize};

use super::{shown, LabelMap};
use crate::error::{Error, Result};

/// K ≥ 2 class labels as they appear in the data, in sorted order (numbers numerically, else
/// as text); class `k` is coded `k as f64`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassLabels {
    /// The labels, class 0 first.
    pub labels: Vec<String>,
}

/// The same label, numbers compared as numbers ("4.0" is "4").
fn same_label(a: &str, b: &str) -> bool {
    a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
}

impl ClassLabels {
    /// The distinct values of `cells` (at least two), sorted numerically when all are
    /// numbers, else as text.
    pub fn from_cells(cells: &[&str]) -> Result<Self> {
        let mut distinct: Vec<&str> = Vec::new();
        for c in cells {
            if !distinct.iter().any(|d| d == c) {
                distinct.push(c);
            }
        }
        let numeric: Option<Vec<f64>> = distinct.iter().map(|c| c.parse::<f64>().ok()).collect();
        match numeric {
            Some(v) => {
                let mut order: Vec<usize> = (0..distinct.len()).collect();
                order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
                distinct = order.into_iter().map(|i| distinct[i]).collect();
            }
            None => distinct.sort_unstable(),
        }
        let labels = Self {
            labels: distinct.into_iter().map(str::to_string).collect(),
        };
        labels.check()?;
        Ok(labels)
    }

    /// Number of classes K.
    pub fn k(&self) -> usize {
        self.labels.len()
    }

    /// At least two labels, no two the same (numbers compared as numbers).
    pub fn check(&self) -> Result<()> {
        if self.labels.len() < 2 {
            return Err(Error::NotBinary {
                n_classes: self.labels.len(),
                examples: self
                    .labels
                    .iter()
                    .map(|l| shown(l))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        for (i, a) in self.labels.iter().enumerate() {
            if let Some(b) = self.labels[..i].iter().find(|b| same_label(a, b)) {
                return Err(Error::InvalidSpec {
                    spec: shown(a),
                    reason: format!(
                        "the class labels '{}' and '{}' are the same",
                        shown(b),
                        shown(a)
                    ),
                });
            }
        }
        Ok(())
    }

    /// The index of a raw label (numbers compared as numbers), as the target's value.
    pub fn encode(&self, cell: &str) -> Result<f64> {
        self.labels
            .iter()
            .position(|l| same_label(l, cell))
            .map(|k| k as f64)
            .ok_or_else(|| Error::InvalidSpec {
                spec: shown(cell),
                reason: format!(
                    "not one of the model's {} class labels ({})",
                    self.k(),
                    self.shown_list()
                ),
            })
    }

    /// The raw label of class `k`.
    pub fn decode(&self, k: usize) -> &str {
        &self.labels[k]
    }

    /// Up to five labels, comma separated, for messages.
    pub fn shown_list(&self) -> String {
        let mut s: Vec<String> = self.labels.iter().take(5).map(|l| shown(l)).collect();
        if self.k() > 5 {
            s.push("…".into());
        }
        s.join(", ")
    }

    /// The binary labels of class `k` against the rest: `k` is +1, "not `<k>`" −1.
    pub fn one_vs_rest(&self, k: usize) -> LabelMap {
        LabelMap {
            negative: format!("not {}", self.labels[k]),
            positive: self.labels[k].clone(),
        }
    }
}

/// ±1 targets of class `k` against the rest, from class indices.
pub fn one_vs_rest_signs(y: &[f64], k: usize) -> Vec<f64> {
    y.iter()
        .map(|&c| if c == k as f64 { 1.0 } else { -1.0 })
        .collect()
}

/// Check that targets are class indices `0..k` and every class occurs.
pub fn check_class_indices(y: &[f64], k: usize) -> Result<()> {
    if let Some(&bad) = y
        .iter()
        .find(|v| !(v.fract() == 0.0 && **v >= 0.0 && **v < k as f64))
    {
        return Err(Error::InvalidParameter {
            name: "class index",
            value: bad,
            reason: "multi-class targets must be class indices 0, 1, …, K − 1",
        });
    }
    let mut seen = vec![false; k];
    for &v in y {
        seen[v as usize] = true;
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(Error::InvalidParameter {
            name: "class index",
            value: missing as f64,
            reason: "every class must occur in the training sample (one-vs-rest fits class k against the rest)",
        });
    }
    Ok(())
}

/// The labels a training sample comes with: none (regression, or classifier targets already
/// ±1 with the labels "-1" and "1"), two labels coded ±1, or K classes coded `0..K`.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum TrainingLabels {
    /// No labels given.
    #[default]
    None,
    /// Two labels, targets coded −1/+1.
    Binary(LabelMap),
    /// K classes, targets coded by their index.
    Classes(ClassLabels),
}

impl TrainingLabels {
    /// The number of classes K the cost model counts: the classes given, else 2 (a binary or
    /// regression fit).
    pub fn classes(&self) -> usize {
        match self {
            TrainingLabels::Classes(c) => c.k(),
            _ => 2,
        }
    }
}

impl From<Option<LabelMap>> for TrainingLabels {
    fn from(l: Option<LabelMap>) -> Self {
        l.map_or(TrainingLabels::None, TrainingLabels::Binary)
    }
}

impl From<LabelMap> for TrainingLabels {
    fn from(l: LabelMap) -> Self {
        TrainingLabels::Binary(l)
    }
}

impl From<ClassLabels> for TrainingLabels {
    fn from(c: ClassLabels) -> Self {
        TrainingLabels::Classes(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_sort_numerically_and_encode_numbers_as_numbers() {
        let c = ClassLabels::from_cells(&["10", "2", "2.0", "7", "10"]).unwrap_err();
        assert!(c.to_string().contains("same"), "{c}");
        let c = ClassLabels::from_cells(&["10", "2", "7", "10"]).unwrap();
        assert_eq!(c.labels, ["2", "7", "10"]);
        assert_eq!(c.encode("7.0").unwrap(), 1.0);
        assert!(c.encode("3").is_err());
        let s = ClassLabels::from_cells(&["virginica", "setosa", "versicolor"]).unwrap();
        assert_eq!(s.labels, ["setosa", "versicolor", "virginica"]);
        assert_eq!(s.decode(2), "virginica");
        assert!(ClassLabels::from_cells(&["a", "a"]).is_err());
        assert_eq!(s.one_vs_rest(1).positive, "versicolor");
    }

    #[test]
    fn class_indices_are_checked() {
        assert!(check_class_indices(&[0.0, 1.0, 2.0, 1.0], 3).is_ok());
        assert!(check_class_indices(&[0.0, 1.0, 1.0], 3).is_err());
        assert!(check_class_indices(&[0.0, 1.5, 2.0], 3).is_err());
        assert!(check_class_indices(&[0.0, -1.0, 2.0], 3).is_err());
        assert_eq!(one_vs_rest_signs(&[0.0, 2.0, 1.0], 2), [-1.0, 1.0, -1.0]);
    }
}
