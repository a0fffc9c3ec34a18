//! Seeded random permutations, train/test splits, k-fold, and the one sample split of a
//! training sample into parts A and B ([`SampleSplit`]) that data-dependent priors and split
//! conformal use.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::csv::{parse_table, read_text, Header};
use super::{canonical_order, Dataset};
use crate::error::{check_open_unit, Error, Result};

/// Seeded train/test split: a random permutation (ChaCha8), the first `round(test_frac·n)`
/// indices form the test set. (The permutation differs from numpy's for the same seed.)
pub fn train_test_split(n: usize, test_frac: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    check_open_unit("test fraction", test_frac)?;
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

/// The rows of a seeded subsample of `k` of `n` rows in increasing order (the first `k` of
/// [`permutation`]), or `None` when `k` is at least `n` (the whole sample).
pub fn subsample(n: usize, k: usize, seed: u64) -> Option<Vec<usize>> {
    if k >= n {
        return None;
    }
    let mut rows = permutation(n, seed);
    rows.truncate(k);
    rows.sort_unstable();
    Some(rows)
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

/// The size of part A of `n` rows at fraction F: `round(F·N)`.
pub fn part_a_size(n: usize, fraction: f64) -> usize {
    (fraction * n as f64).round() as usize
}

/// How a training sample is split into parts A (fraction F) and B: the one split of the
/// library (the split priors of regression and classification, split conformal).
///
/// The rows are first put in their canonical order ([`canonical_order`]: sorted by the row
/// digest), which depends on the sample alone, then permuted by the seed. So the parts are
/// fixed by the sample, F and the seed before any fitting, and the same sample in any file
/// order gives the same parts — which is what lets `certify` re-derive them from the sample.
/// Part A is the permutation's first `round(F·N)` rows (its last ones when `swapped`): a
/// uniformly random subset whatever the canonical order, so parts A and B of an i.i.d. sample
/// are independent i.i.d. samples — what a bound on B with a prior from A needs.
/// Stratified, each class c gets `round(F·N_c)` rows in A, clamped to `[1, N_c − 1]`, taken in
/// permutation order, so both parts hold every class. That makes one part's class counts
/// depend on the other's, so it is only for choices made inside one part (the nested halves
/// of a classifier's part A), never for the split a certificate's sample comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleSplit {
    /// Fraction F of the sample in part A, in (0, 1).
    pub fraction: f64,
    /// Seed of the permutation.
    pub seed: u64,
    /// Split each class (distinct target value) separately.
    pub stratified: bool,
    /// Part A from the end of the permutation instead of its start.
    pub swapped: bool,
}

impl SampleSplit {
    /// An unstratified split at `fraction` with `seed`, part A first.
    pub fn new(fraction: f64, seed: u64) -> Self {
        Self {
            fraction,
            seed,
            stratified: false,
            swapped: false,
        }
    }

    /// Rows of parts A and B of `data` (indices into it, each part in permutation order).
    /// An error when a part would be empty, or, stratified, a class has a single row.
    pub fn parts(&self, data: &Dataset) -> Result<(Vec<usize>, Vec<usize>)> {
        check_open_unit("split fraction F", self.fraction)?;
        let n = data.n();
        let order = canonical_order(data);
        let perm: Vec<usize> = permutation(n, self.seed)
            .into_iter()
            .map(|p| order[p])
            .collect();
        let in_a = if self.stratified {
            self.stratified_membership(data, &perm)?
        } else {
            let n_a = part_a_size(n, self.fraction);
            if n < 2 || n_a == 0 || n_a >= n {
                return Err(Error::InvalidParameter {
                    name: "split fraction F",
                    value: self.fraction,
                    reason: "leaves part A or part B empty",
                });
            }
            let first = if self.swapped { n - n_a } else { 0 };
            (0..n).map(|p| p >= first && p < first + n_a).collect()
        };
        let (a, b): (Vec<_>, Vec<_>) = perm.iter().zip(&in_a).partition(|(_, &a)| a);
        Ok((
            a.into_iter().map(|(&r, _)| r).collect(),
            b.into_iter().map(|(&r, _)| r).collect(),
        ))
    }

    /// Whether each position of `perm` goes to part A, class by class.
    fn stratified_membership(&self, data: &Dataset, perm: &[usize]) -> Result<Vec<bool>> {
        let class_of = |r: usize| data.y[r].to_bits();
        let mut counts = std::collections::BTreeMap::<u64, usize>::new();
        for &r in perm {
            *counts.entry(class_of(r)).or_default() += 1;
        }
        if let Some((&c, _)) = counts.iter().find(|(_, &n_c)| n_c < 2) {
            return Err(Error::InvalidParameter {
                name: "stratified split",
                value: f64::from_bits(c),
                reason: "this class has a single row, so it cannot be in both parts",
            });
        }
        let in_a_count = |n_c: usize| part_a_size(n_c, self.fraction).clamp(1, n_c - 1);
        let mut seen = std::collections::BTreeMap::<u64, usize>::new();
        Ok(perm
            .iter()
            .map(|&r| {
                let n_c = counts[&class_of(r)];
                let k = seen.entry(class_of(r)).or_default();
                let position = *k;
                *k += 1;
                if self.swapped {
                    position >= n_c - in_a_count(n_c)
                } else {
                    position < in_a_count(n_c)
                }
            })
            .collect())
    }
}

/// The rows a fit with `certify_holdout` F keeps out and the rows it fits: part A of the one
/// sample split at F with `seed` (held out) and part B (fitted), each in permutation order.
/// Fixed by the sample, F and the seed alone, before anything is fitted. A fraction outside
/// (0, 1), an empty held-out part or fewer than 2 rows to fit is a [`SpecError`] on
/// `certify_holdout`.
///
/// [`SpecError`]: crate::vocabulary::SpecError
pub fn holdout_rows(
    sample: &Dataset,
    fraction: f64,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let refuse = |why: String| {
        Error::Spec(crate::vocabulary::SpecError::out_of_range(
            crate::vocabulary::SpecOption::CertifyHoldout,
            fraction,
            &why,
        ))
    };
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(refuse(
            "in (0, 1) (the fraction of the sample kept out of the fit)".into(),
        ));
    }
    let n = sample.n();
    let n_holdout = part_a_size(n, fraction);
    if n_holdout == 0 || n < n_holdout + 2 {
        return Err(refuse(format!(
            "a fraction that leaves at least 1 held-out row and 2 rows to fit (N = {n} gives {n_holdout} held out)"
        )));
    }
    SampleSplit::new(fraction, seed).parts(sample)
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
    let same = super::same_file;
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

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    /// 20 rows, classes ±1 with 14 and 6 rows, inputs distinct.
    fn sample() -> Dataset {
        let x = Mat::from_fn(20, 2, |i, j| (i * 7 + j * 3) as f64 * 0.37);
        let y = (0..20)
            .map(|i| if i % 10 < 7 { 1.0 } else { -1.0 })
            .collect();
        Dataset::new(x, y).unwrap()
    }

    #[test]
    fn a_subsample_is_the_head_of_the_seeded_permutation_sorted() {
        let rows = subsample(50, 12, 7).unwrap();
        let mut want = permutation(50, 7)[..12].to_vec();
        want.sort_unstable();
        assert_eq!(rows, want);
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
        assert_ne!(rows, subsample(50, 12, 8).unwrap());
        assert_eq!(subsample(50, 50, 7), None);
        assert_eq!(subsample(50, 80, 7), None);
    }

    #[test]
    fn unstratified_parts_are_the_permutation_of_the_canonical_order() {
        let data = sample();
        let (order, perm) = (canonical_order(&data), permutation(20, 9));
        let (a, b) = SampleSplit::new(0.3, 9).parts(&data).unwrap();
        let want: Vec<usize> = perm.iter().map(|&p| order[p]).collect();
        assert_eq!(a, want[..6]);
        assert_eq!(b, want[6..]);
        let swapped = SampleSplit {
            swapped: true,
            ..SampleSplit::new(0.3, 9)
        };
        let (a, b) = swapped.parts(&data).unwrap();
        assert_eq!((a, b), (want[14..].to_vec(), want[..14].to_vec()));
    }

    #[test]
    fn stratified_parts_hold_every_class_in_proportion() {
        let data = sample();
        for (fraction, swapped) in [(0.3, false), (0.5, true), (0.9, false), (0.05, true)] {
            let split = SampleSplit {
                fraction,
                seed: 4,
                stratified: true,
                swapped,
            };
            let (a, b) = split.parts(&data).unwrap();
            let count = |rows: &[usize], c: f64| rows.iter().filter(|&&r| data.y[r] == c).count();
            for (c, n_c) in [(1.0, 14), (-1.0, 6)] {
                let want = part_a_size(n_c, fraction).clamp(1, n_c - 1);
                assert_eq!(count(&a, c), want, "class {c} at F = {fraction}");
                assert_eq!(count(&b, c), n_c - want);
            }
            let mut all: Vec<usize> = a.iter().chain(&b).copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..20).collect::<Vec<_>>());
        }
    }

    #[test]
    fn the_parts_do_not_depend_on_the_file_order() {
        let data = sample();
        let shuffle = permutation(20, 77);
        let shuffled = data.subset(&shuffle);
        for stratified in [false, true] {
            let split = SampleSplit {
                stratified,
                ..SampleSplit::new(0.5, 3)
            };
            let (a, _) = split.parts(&data).unwrap();
            let (a2, _) = split.parts(&shuffled).unwrap();
            let rows = |d: &Dataset, r: &[usize]| -> Vec<[u8; 32]> {
                r.iter().map(|&i| crate::data::row_digest(d, i)).collect()
            };
            assert_eq!(rows(&data, &a), rows(&shuffled, &a2));
        }
    }

    #[test]
    fn a_class_of_one_row_or_an_empty_part_is_refused() {
        let x = Mat::from_fn(5, 1, |i, _| i as f64);
        let one = Dataset::new(x.clone(), vec![1.0, 1.0, 1.0, 1.0, -1.0]).unwrap();
        let split = SampleSplit {
            stratified: true,
            ..SampleSplit::new(0.5, 0)
        };
        assert!(matches!(
            split.parts(&one),
            Err(Error::InvalidParameter {
                name: "stratified split",
                ..
            })
        ));
        let data = Dataset::new(x, vec![0.0; 5]).unwrap();
        assert!(SampleSplit::new(0.05, 0).parts(&data).is_err());
        assert!(SampleSplit::new(1.0, 0).parts(&data).is_err());
    }
}
