//! Seeded random permutations, train/test splits and k-fold.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::csv::{parse_table, read_text, Header};
use crate::error::{Error, Result};

/// Seeded train/test split: a random permutation (ChaCha8), the first `round(test_frac·n)`
/// indices form the test set. (The permutation differs from numpy's for the same seed.)
pub fn train_test_split(n: usize, test_frac: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(test_frac > 0.0 && test_frac < 1.0) {
        return Err(Error::InvalidParameter {
            name: "test fraction",
            value: test_frac,
            reason: "must lie in (0, 1)",
        });
    }
    let n_test = (test_frac * n as f64).round() as usize;
    if n_test == 0 || n_test >= n {
        return Err(Error::InvalidParameter {
            name: "test fraction",
            value: test_frac,
            reason: "leaves an empty train or test set for this number of rows",
        });
    }
    let perm = permutation(n, seed);
    Ok((perm[n_test..].to_vec(), perm[..n_test].to_vec()))
}

/// A seeded random permutation of `0..n`.
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    idx
}

/// Seeded k-fold: `k` (train, test) pairs; every index is a test index exactly once.
pub fn k_fold(n: usize, k: usize, seed: u64) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    if k < 2 || k > n {
        return Err(Error::InvalidParameter {
            name: "k",
            value: k as f64,
            reason: "k-fold needs 2 ≤ k ≤ n",
        });
    }
    let perm = permutation(n, seed);
    Ok((0..k)
        .map(|f| {
            let (lo, hi) = (f * n / k, (f + 1) * n / k);
            let test = perm[lo..hi].to_vec();
            let train = perm[..lo].iter().chain(&perm[hi..]).copied().collect();
            (train, test)
        })
        .collect())
}

/// What [`split_file`] wrote: the two files and how many data rows each holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileSplit {
    /// The training part.
    pub train_path: PathBuf,
    /// The test part.
    pub test_path: PathBuf,
    /// Data rows in the training part.
    pub n_train: usize,
    /// Data rows in the test part.
    pub n_test: usize,
}

/// The default outputs of [`split_file`], next to `data`: `f.csv` gives `f.train.csv` and
/// `f.test.csv` (`f.csv.gz` gives `f.train.csv.gz`, written compressed).
pub fn default_split_paths(data: &Path) -> (PathBuf, PathBuf) {
    let name = data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (body, gz) = match name.strip_suffix(".gz") {
        Some(b) => (b, ".gz"),
        None => (name.as_str(), ""),
    };
    let (stem, ext) = match body.rfind('.') {
        Some(i) if i > 0 => body.split_at(i),
        _ => (body, ""),
    };
    let part = |which: &str| data.with_file_name(format!("{stem}.{which}{ext}{gz}"));
    (part("train"), part("test"))
}

/// Split the data rows of a CSV file into a training and a test file by the seeded
/// permutation of [`train_test_split`]: `round(test_fraction·N)` rows go to the test file.
/// Each part starts with the original header line and keeps its rows in file order, each
/// copied byte for byte (cells unchanged); a path ending in `.gz` is written compressed.
/// The file is checked as [`load_csv`](super::load_csv) checks it (header names unique,
/// every row as long as the header), but cells need not be numbers.
pub fn split_file(
    data: &Path,
    test_fraction: f64,
    seed: u64,
    train_out: &Path,
    test_out: &Path,
) -> Result<FileSplit> {
    check_outputs(data, train_out, test_out)?;
    let text = read_text(data)?;
    let table = parse_table(data, &text, Header::First)?;
    let (mut train, mut test) = train_test_split(table.table.rows.len(), test_fraction, seed)?;
    train.sort_unstable();
    test.sort_unstable();
    let eol = if text[table.header_span.end..].starts_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let part = |rows: &[usize]| {
        let mut out = String::with_capacity(text.len());
        for span in std::iter::once(&table.header_span).chain(rows.iter().map(|&i| &table.spans[i]))
        {
            out.push_str(&text[span.clone()]);
            out.push_str(eol);
        }
        out
    };
    write_text(train_out, &part(&train))?;
    write_text(test_out, &part(&test))?;
    Ok(FileSplit {
        train_path: train_out.to_path_buf(),
        test_path: test_out.to_path_buf(),
        n_train: train.len(),
        n_test: test.len(),
    })
}

/// The two outputs must differ from each other and from the input.
fn check_outputs(data: &Path, train_out: &Path, test_out: &Path) -> Result<()> {
    let same = |a: &Path, b: &Path| {
        a == b
            || matches!(
                (std::fs::canonicalize(a), std::fs::canonicalize(b)),
                (Ok(x), Ok(y)) if x == y
            )
    };
    let bad = |p: &Path, reason: &str| Error::InvalidSpec {
        spec: p.display().to_string(),
        reason: reason.to_string(),
    };
    if same(train_out, test_out) {
        return Err(bad(
            train_out,
            "the train and test outputs are the same file",
        ));
    }
    for out in [train_out, test_out] {
        if same(data, out) {
            return Err(bad(out, "an output would overwrite the input data file"));
        }
    }
    Ok(())
}

/// Write `text` to `path`, gzip-compressed if the name ends in `.gz`.
fn write_text(path: &Path, text: &str) -> Result<()> {
    let io = |source| Error::Write {
        path: path.display().to_string(),
        source,
    };
    let bytes = if path.extension().is_some_and(|e| e == "gz") {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text.as_bytes()).map_err(io)?;
        enc.finish().map_err(io)?
    } else {
        text.as_bytes().to_vec()
    };
    std::fs::write(path, bytes).map_err(io)
}
