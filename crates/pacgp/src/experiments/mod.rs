//! The seed papers' experiments as library functions returning tables.

pub mod classification;
pub mod intervals;
pub mod multiclass;
pub mod opper_winther;
pub mod pac_gp;
pub mod pac_sgp;
pub mod tighter_bounds;
pub mod tighter_classifiers;
pub mod zhang;

/// The rows grouped by `key`, groups and rows in first-seen order: what every experiment's
/// summary averages over (one group per data set and method).
pub fn groups_in_order<T, K: PartialEq>(rows: &[T], key: impl Fn(&T) -> K) -> Vec<(K, Vec<&T>)> {
    let mut groups: Vec<(K, Vec<&T>)> = Vec::new();
    for r in rows {
        let k = key(r);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    groups
}
