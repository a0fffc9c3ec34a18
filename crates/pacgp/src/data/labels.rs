//! Class labels: two values as they appear in the data, mapped to −1 and +1.

use serde::{Deserialize, Serialize};

use super::shown;
use crate::error::{Error, Result};

/// Two class labels as they appear in the data, mapped to −1 (`negative`) and +1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelMap {
    /// Label mapped to −1 (the smaller number, or the first string in sorted order).
    pub negative: String,
    /// Label mapped to +1.
    pub positive: String,
}

impl LabelMap {
    /// The labels of targets already coded −1 and +1.
    pub fn signs() -> Self {
        Self {
            negative: "-1".into(),
            positive: "1".into(),
        }
    }

    /// Build from raw cells: exactly two distinct values, numbers ordered numerically.
    pub fn from_cells(cells: &[&str]) -> Result<Self> {
        let mut distinct: Vec<&str> = Vec::new();
        for c in cells {
            if !distinct.contains(c) {
                distinct.push(c);
            }
        }
        if distinct.len() != 2 {
            return Err(Error::NotBinary {
                n_classes: distinct.len(),
                examples: distinct
                    .iter()
                    .take(5)
                    .map(|c| shown(c))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let numeric: Option<Vec<f64>> = distinct.iter().map(|c| c.parse::<f64>().ok()).collect();
        let swap = match numeric {
            Some(v) => v[0] > v[1],
            None => distinct[0] > distinct[1],
        };
        let (a, b) = if swap {
            (distinct[1], distinct[0])
        } else {
            (distinct[0], distinct[1])
        };
        Ok(Self {
            negative: a.to_string(),
            positive: b.to_string(),
        })
    }

    /// The same two labels with `label` coded +1 (`--positive`); an error naming both labels
    /// if it is neither (numbers compare as numbers: "4.0" is "4").
    pub fn with_positive(self, label: &str) -> Result<Self> {
        let same = |a: &str, b: &str| {
            a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
        };
        if same(label, &self.positive) {
            Ok(self)
        } else if same(label, &self.negative) {
            Ok(Self {
                negative: self.positive,
                positive: self.negative,
            })
        } else {
            Err(super::TableError::PositiveNotALabel {
                given: shown(label),
                negative: shown(&self.negative),
                positive: shown(&self.positive),
            }
            .into())
        }
    }

    /// Map numeric labels (any two distinct values) to ±1.
    pub fn from_values(values: &[f64]) -> Result<(Vec<f64>, Self)> {
        let cells: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
        let map = Self::from_cells(&refs)?;
        let y = refs.iter().map(|c| map.encode(c)).collect::<Result<_>>()?;
        Ok((y, map))
    }

    /// −1 or +1 for a raw label.
    pub fn encode(&self, cell: &str) -> Result<f64> {
        if cell == self.negative {
            Ok(-1.0)
        } else if cell == self.positive {
            Ok(1.0)
        } else {
            Err(Error::NotBinary {
                n_classes: 3,
                examples: format!(
                    "{}, {}, {}",
                    shown(&self.negative),
                    shown(&self.positive),
                    shown(cell)
                ),
            })
        }
    }

    /// The raw label for a sign.
    pub fn decode(&self, y: f64) -> &str {
        if y < 0.0 {
            &self.negative
        } else {
            &self.positive
        }
    }
}

/// Check that labels are exactly ±1 and both classes occur.
pub fn check_binary_labels(y: &[f64]) -> Result<()> {
    if let Some(&bad) = y.iter().find(|v| **v != 1.0 && **v != -1.0) {
        return Err(Error::InvalidParameter {
            name: "label",
            value: bad,
            reason: "labels must be −1 or +1",
        });
    }
    let pos = y.iter().filter(|v| **v > 0.0).count();
    if pos == 0 || pos == y.len() {
        return Err(Error::NotBinary {
            n_classes: 1,
            examples: format!("{}", y.first().copied().unwrap_or(0.0)),
        });
    }
    Ok(())
}
