//! GP regression.

pub mod exact;
