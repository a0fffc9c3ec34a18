//! Approximate inference for GP classification.
