//! A later file read for a saved model: the model's input coding applied, and the target read
//! as the model's task reads it (a number, ±1 labels or class indices).

use std::path::Path;

use faer::Mat;

use super::super::{shown, ClassLabels, InputCoding, LabelMap};
use super::{parse_table, parse_target, read_text, Header};
use crate::error::{Error, Result};

/// The target column of a file read for a saved model.
#[derive(Clone, Copy, Debug)]
pub enum TargetRead<'a> {
    /// Not read (prediction); the model's target name, which a headerless file may lack.
    Skip(&'a str),
    /// A numeric column of this name.
    Number(&'a str),
    /// A label column of this name, mapped to ±1.
    Labels(&'a str, &'a LabelMap),
    /// A label column of this name, mapped to class indices.
    Classes(&'a str, &'a ClassLabels),
}

/// The rows of a file read for a saved model.
#[derive(Clone, Debug)]
pub struct ModelRows {
    /// Coded inputs of the rows kept.
    pub x: Mat<f64>,
    /// Their targets, if read.
    pub y: Option<Vec<f64>>,
    /// File lines of the rows kept.
    pub lines: Vec<u64>,
    /// File lines of the rows the model's missing-value policy `drop` left out.
    pub dropped: Vec<u64>,
}

/// −1/+1 for a label cell; numeric labels may be written differently ("4" vs "4.0").
fn label_sign(labels: &LabelMap, source: &str, line: u64, cell: &str) -> Result<f64> {
    labels
        .encode(cell)
        .or_else(|e| match cell.parse::<f64>() {
            Ok(v) => labels.encode(&v.to_string()).map_err(|_| e),
            Err(_) => Err(e),
        })
        .map_err(|_| Error::Csv {
            path: source.to_string(),
            line,
            message: format!(
                "label '{}' is neither '{}' nor '{}'",
                shown(cell),
                shown(&labels.negative),
                shown(&labels.positive)
            ),
        })
}

/// Read a file for a saved model: its inputs `features` through the model's `coding` (the
/// same columns, vocabulary, fills and missing-value policy as in training) and the target.
pub fn read_for_model(
    path: impl AsRef<Path>,
    coding: &InputCoding,
    features: &[String],
    target: TargetRead<'_>,
) -> Result<ModelRows> {
    let path = path.as_ref();
    let (name, read) = match target {
        TargetRead::Skip(n) => (n, false),
        TargetRead::Number(n) | TargetRead::Labels(n, _) | TargetRead::Classes(n, _) => (n, true),
    };
    let mode = match &coding.headerless {
        Some(names) => Header::Model {
            names,
            target: name,
        },
        None => Header::First,
    };
    let raw = parse_table(path, &read_text(path)?, mode)?;
    let t = &raw.table;
    let tcol = read.then(|| t.column(name)).transpose()?;
    let enc = coding.apply(t, features, tcol)?;
    let y = tcol
        .map(|j| {
            enc.rows
                .iter()
                .map(|&i| {
                    let (line, cells) = &t.rows[i];
                    match target {
                        TargetRead::Labels(_, map) => label_sign(map, &t.source, *line, &cells[j]),
                        TargetRead::Classes(_, classes) => {
                            classes.encode(&cells[j]).map_err(|e| Error::Csv {
                                path: t.source.clone(),
                                line: *line,
                                message: e.to_string(),
                            })
                        }
                        _ => parse_target(&t.source, *line, &t.header[j], &cells[j]),
                    }
                })
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    Ok(ModelRows {
        lines: enc.rows.iter().map(|&i| t.rows[i].0).collect(),
        dropped: enc.dropped.iter().map(|&i| t.rows[i].0).collect(),
        x: enc.x,
        y,
    })
}

/// Load the named columns of a CSV (for applying a saved model to new data): inputs in the
/// order of `features`, read with `coding`, and, if `target` is given, the numeric target
/// column.
pub fn load_columns(
    path: impl AsRef<Path>,
    features: &[String],
    target: Option<&str>,
    coding: &InputCoding,
) -> Result<(Mat<f64>, Option<Vec<f64>>)> {
    let target = target.map_or(TargetRead::Skip(""), TargetRead::Number);
    let r = read_for_model(path, coding, features, target)?;
    Ok((r.x, r.y))
}

/// As [`load_columns`], with the target's labels mapped to ±1 by `labels` (classification).
pub fn load_columns_labelled(
    path: impl AsRef<Path>,
    features: &[String],
    target: &str,
    labels: &LabelMap,
    coding: &InputCoding,
) -> Result<(Mat<f64>, Vec<f64>)> {
    let r = read_for_model(path, coding, features, TargetRead::Labels(target, labels))?;
    Ok((r.x, r.y.unwrap_or_default()))
}
