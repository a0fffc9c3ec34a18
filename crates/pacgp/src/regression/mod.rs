//! GP regression: exact and sparse.

pub mod exact;
pub mod sparse;
