//! Training objectives built on PAC-Bayes bounds (seed 004): full PAC-GP and sparse PAC-SGP.

pub mod pac_gp;
pub mod pac_gpc;
pub mod pac_sgp;
