//! GP regression: exact, and sparse with inducing inputs.

pub mod exact;
pub mod greedy;
pub mod sparse;
