//! The one row digest: SHA-256 of a row's values (inputs then target, as f64 bits). It orders a
//! sample canonically — so that a split depends on the sample and the seed, never on the file's
//! row order — and, sorted and hashed again, identifies the sample a certificate holds on;
//! hashed again in row order, it identifies a sample *in its order* (what a solution indexed
//! by row was computed for).

use faer::MatRef;
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
    let mut rows: Vec<[u8; 32]> = (0..data.n()).map(|i| row_digest(data, i)).collect();
    rows.sort_unstable();
    let mut h = Sha256::new();
    h.update((data.d() as u64).to_le_bytes());
    for r in &rows {
        h.update(r);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
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
}
