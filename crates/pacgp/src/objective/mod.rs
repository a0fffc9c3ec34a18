//! Training objectives built on PAC-Bayes bounds (seed 004): full PAC-GP and sparse PAC-SGP;
//! classifiers trained by their bound (PAC-GPC) and certified with a split prior.

pub mod gpc_split;
pub mod pac_gp;
pub mod pac_gp_hetero;
pub mod pac_gpc;
pub mod pac_sgp;
