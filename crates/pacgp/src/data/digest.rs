//! The one row digest: SHA-256 of a row's values (inputs then target, as f64 bits). It orders a
//! sample canonically — so that a split depends on the sample and the seed, never on the file's
//! row order — and, sorted and hashed again, identifies the sample a certificate holds on;
//! hashed again in row order, it identifies a sample *in its order* (what a solution indexed
//! by row was computed for). The same hashes count the rows that repeat an earlier row
//! ([`Duplicates`]): every guarantee the library states assumes independent rows, and copies
//! are what breaks that assumption most often.

use std::collections::HashMap;

use faer::MatRef;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Dataset;

/// SHA-256 of row `i` of `data`: its inputs, then its target, as little-endian f64 bits.
pub fn row_digest(data: &Dataset, i: usize) -> [u8; 32] {
    row_digest_of(data.x.as_ref(), &data.y, i)
}

/// [`row_digest`] of row `i` of inputs `x` and targets `y`.
fn row_digest_of(x: MatRef<'_, f64>, y: &[f64], i: usize) -> [u8; 32] {
    let mut h = Sha256::new();
    for j in 0..x.ncols() {
        h.update(x[(i, j)].to_bits().to_le_bytes());
    }
    h.update(y[i].to_bits().to_le_bytes());
    h.finalize().into()
}

/// SHA-256 of `(x, y)` in row order: the shape, then every [`row_digest`] in order (`None`
/// when `y` does not have one target per row).
pub fn ordered_digest(x: MatRef<'_, f64>, y: &[f64]) -> Option<[u8; 32]> {
    if y.len() != x.nrows() {
        return None;
    }
    let mut h = Sha256::new();
    h.update((x.nrows() as u64).to_le_bytes());
    h.update((x.ncols() as u64).to_le_bytes());
    for i in 0..x.nrows() {
        h.update(row_digest_of(x, y, i));
    }
    Some(h.finalize().into())
}

/// Rows of `data` in a canonical order that does not depend on the file's row order: sorted
/// by [`row_digest`] (identical rows are interchangeable).
pub fn canonical_order(data: &Dataset) -> Vec<usize> {
    let mut keyed: Vec<([u8; 32], usize)> =
        (0..data.n()).map(|i| (row_digest(data, i), i)).collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// SHA-256 of a sample, independent of row order: the sorted [`row_digest`]s (after the
/// number of inputs) hashed again, so duplicated or changed rows change it. Hex.
pub fn sample_digest(data: &Dataset) -> String {
    sample_digest_bytes(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The 32 bytes of [`sample_digest`] (its hex text is these, two digits a byte), for a
/// number derived from the sample without parsing its text.
pub fn sample_digest_bytes(data: &Dataset) -> [u8; 32] {
    let mut rows: Vec<[u8; 32]> = (0..data.n()).map(|i| row_digest(data, i)).collect();
    rows.sort_unstable();
    let mut h = Sha256::new();
    h.update((data.d() as u64).to_le_bytes());
    for r in &rows {
        h.update(r);
    }
    h.finalize().into()
}

/// Share of duplicated rows above which a fit and a certificate warn ([`Duplicates::warning`]):
/// 1%. Natural ties are legitimate (a table of few discrete columns repeats rows), so copies
/// are never refused, only reported.
pub const DUPLICATE_WARN_SHARE: f64 = 0.01;

/// How many rows of a sample repeat an earlier row. A certificate and prediction intervals
/// assume independent rows: an exact copy of a training row is a draw that was not independent
/// (or a very likely tie), so a share above [`DUPLICATE_WARN_SHARE`] is reported with a warning.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Duplicates {
    /// Rows in the sample.
    pub n: usize,
    /// Rows identical to an earlier row, inputs and target ([`row_digest`] equal): the rows a
    /// copy adds.
    pub rows: usize,
    /// Distinct rows that occur more than once.
    pub groups: usize,
    /// Rows whose inputs repeat an earlier row's, whatever their target (includes `rows`):
    /// what jackknife+ and CV+ leave out together ([`input_groups`]).
    pub same_inputs: usize,
    /// `rows / n`.
    pub share: f64,
}

impl Duplicates {
    /// Count the duplicated rows of `data` by their [`row_digest`]s, and the repeated inputs.
    pub fn of(data: &Dataset) -> Self {
        let mut digests: Vec<[u8; 32]> = (0..data.n()).map(|i| row_digest(data, i)).collect();
        digests.sort_unstable();
        let (mut rows, mut groups) = (0, 0);
        for (i, w) in digests.windows(2).enumerate() {
            if w[0] == w[1] {
                rows += 1;
                // The first repeat of a digest starts a group.
                if i == 0 || digests[i - 1] != w[0] {
                    groups += 1;
                }
            }
        }
        let same_inputs = input_groups(data.x.as_ref())
            .iter()
            .map(|g| g.len() - 1)
            .sum();
        let n = data.n();
        Self {
            n,
            rows,
            groups,
            same_inputs,
            share: rows as f64 / n.max(1) as f64,
        }
    }

    /// Whether the share of duplicated rows is above [`DUPLICATE_WARN_SHARE`].
    pub fn warns(&self) -> bool {
        self.share > DUPLICATE_WARN_SHARE
    }

    /// The warning a front end shows (`None` at or below [`DUPLICATE_WARN_SHARE`]): how many
    /// rows are copies, and that the guarantees assume independent rows.
    pub fn warning(&self) -> Option<String> {
        self.warns().then(|| {
            format!(
                "{} of the {} rows ({:.1}%) repeat an earlier row exactly ({} distinct rows occur more than once): \
                 the certificate and the prediction intervals assume independent rows, so if these are copies \
                 rather than natural ties their guarantees do not hold (jackknife+ and CV+ leave rows with \
                 identical inputs out together)",
                self.rows,
                self.n,
                100.0 * self.share,
                self.groups
            )
        })
    }
}

/// Groups of rows of `x` with identical inputs (bit for bit, `-0` = `0`), each in row order,
/// ordered by their first row; rows with inputs of their own are left out (so no groups means
/// no ties).
pub fn input_groups(x: MatRef<'_, f64>) -> Vec<Vec<usize>> {
    let mut by_inputs: HashMap<Vec<u64>, Vec<usize>> = HashMap::new();
    for i in 0..x.nrows() {
        // Adding 0.0 turns −0 into +0, so equal values have equal bits.
        let key = (0..x.ncols())
            .map(|j| (x[(i, j)] + 0.0).to_bits())
            .collect();
        by_inputs.entry(key).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = by_inputs.into_values().filter(|g| g.len() > 1).collect();
    groups.sort_unstable_by_key(|g| g[0]);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    fn sample(rows: &[[f64; 3]]) -> Dataset {
        let x = Mat::from_fn(rows.len(), 2, |i, j| rows[i][j]);
        Dataset::new(x, rows.iter().map(|r| r[2]).collect()).unwrap()
    }

    #[test]
    fn order_and_digest_do_not_depend_on_the_row_order() {
        let a = sample(&[[1.0, 2.0, 1.0], [0.5, -1.0, -1.0], [3.0, 0.0, 1.0]]);
        let b = sample(&[[3.0, 0.0, 1.0], [1.0, 2.0, 1.0], [0.5, -1.0, -1.0]]);
        assert_eq!(sample_digest(&a), sample_digest(&b));
        let rows = |d: &Dataset| -> Vec<[u8; 32]> {
            canonical_order(d)
                .iter()
                .map(|&i| row_digest(d, i))
                .collect()
        };
        assert_eq!(rows(&a), rows(&b));
    }

    /// The hex digest is its bytes two digits each (the softmax seed reads the first eight
    /// bytes as a big-endian number: the first sixteen hex digits' value).
    #[test]
    fn the_hex_digest_spells_its_bytes() {
        let a = sample(&[[1.0, 2.0, 1.0], [0.5, -1.0, -1.0]]);
        let (hex, bytes) = (sample_digest(&a), sample_digest_bytes(&a));
        assert_eq!(hex.len(), 64);
        for (i, b) in bytes.iter().enumerate() {
            assert_eq!(u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap(), *b);
        }
    }

    #[test]
    fn the_ordered_digest_depends_on_the_row_order() {
        let a = sample(&[[1.0, 2.0, 1.0], [0.5, -1.0, -1.0]]);
        let b = sample(&[[0.5, -1.0, -1.0], [1.0, 2.0, 1.0]]);
        let of = |d: &Dataset| ordered_digest(d.x.as_ref(), &d.y);
        assert_eq!(of(&a), of(&a.clone()));
        assert_ne!(of(&a), of(&b));
        assert_eq!(ordered_digest(a.x.as_ref(), &a.y[..1]), None);
    }

    #[test]
    fn a_changed_or_duplicated_row_changes_the_digest() {
        let a = sample(&[[1.0, 2.0, 1.0], [0.5, -1.0, -1.0]]);
        let changed = sample(&[[1.0, 2.0, -1.0], [0.5, -1.0, -1.0]]);
        let doubled = sample(&[[1.0, 2.0, 1.0], [1.0, 2.0, 1.0], [0.5, -1.0, -1.0]]);
        assert_ne!(sample_digest(&a), sample_digest(&changed));
        assert_ne!(sample_digest(&a), sample_digest(&doubled));
    }

    /// Counts by hand: rows 0, 2 and 4 are one row three times (two copies), rows 1 and 3 share
    /// their inputs but not their target, row 5 is alone.
    #[test]
    fn duplicates_are_counted_by_row_and_by_inputs() {
        let d = sample(&[
            [1.0, 2.0, 1.0],
            [0.5, -1.0, -1.0],
            [1.0, 2.0, 1.0],
            [0.5, -1.0, 1.0],
            [1.0, 2.0, 1.0],
            [-0.0, 3.0, 1.0],
        ]);
        let c = Duplicates::of(&d);
        assert_eq!((c.n, c.rows, c.groups, c.same_inputs), (6, 2, 1, 3));
        assert!((c.share - 2.0 / 6.0).abs() < 1e-15);
        assert!(c.warns() && c.warning().unwrap().starts_with("2 of the 6 rows"));
        assert_eq!(input_groups(d.x.as_ref()), vec![vec![0, 2, 4], vec![1, 3]]);
        // −0 and +0 are the same input.
        let signed = sample(&[[0.0, 1.0, 1.0], [-0.0, 1.0, 2.0]]);
        assert_eq!(input_groups(signed.x.as_ref()), vec![vec![0, 1]]);
        let distinct = sample(&[[1.0, 2.0, 1.0], [0.5, -1.0, -1.0]]);
        let c = Duplicates::of(&distinct);
        assert_eq!((c.rows, c.groups, c.same_inputs), (0, 0, 0));
        assert!(c.warning().is_none());
    }

    /// One copy in 100 rows (1%) is not above the threshold; two are.
    #[test]
    fn the_warning_starts_above_one_percent() {
        let rows = |copies: usize| -> Vec<[f64; 3]> {
            (0..100)
                .map(|i| {
                    let v = if i < copies { 0.0 } else { i as f64 };
                    [v, 1.0, 0.0]
                })
                .collect()
        };
        let one = Duplicates::of(&sample(&rows(2)));
        assert_eq!(one.rows, 1);
        assert!(!one.warns());
        let two = Duplicates::of(&sample(&rows(3)));
        assert_eq!(two.rows, 2);
        assert!(two.warns());
    }
}
