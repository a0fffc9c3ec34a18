//! Datasets: CSV loading, validation, standardisation, splits and k-fold.

use faer::MatRef;

use crate::error::{Error, Result};

/// Reject NaN or infinite entries, naming the first one found.
pub fn check_finite(x: MatRef<'_, f64>, what: &'static str) -> Result<()> {
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            if !x[(i, j)].is_finite() {
                return Err(Error::NonFinite { what, row: i, col: j });
            }
        }
    }
    Ok(())
}
