//! Training objectives built on PAC-Bayes bounds (seed 004): the full PAC-GP.

pub mod pac_gp;
