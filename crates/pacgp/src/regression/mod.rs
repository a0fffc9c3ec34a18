//! GP regression: exact, and sparse with inducing inputs (also as sums over data shards).

pub mod exact;
pub mod greedy;
pub mod sharded;
pub mod sparse;
pub mod sparse_sums;
