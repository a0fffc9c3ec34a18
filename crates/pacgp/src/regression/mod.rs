//! GP regression: exact, and sparse with inducing inputs (also as sums over data shards).

pub mod exact;
pub mod greedy;
pub mod point_noise;
pub mod sharded;
pub mod sparse;
