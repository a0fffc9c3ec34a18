//! GP regression: exact, and sparse with inducing inputs (also as sums over data shards).

pub mod exact;
pub mod greedy;
pub mod inducing_init;
pub(crate) mod point_noise;
pub mod row_blocks;
pub mod sharded;
pub mod sparse;
#[cfg(test)]
pub(crate) mod sparse_reference;
pub(crate) mod sparse_sums;
pub(crate) mod whitened_blocks;
