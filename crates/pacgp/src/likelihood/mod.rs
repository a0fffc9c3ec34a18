//! Likelihoods for GP classification.
