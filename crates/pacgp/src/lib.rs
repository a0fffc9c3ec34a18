//! # pacgp — Gaussian-process learning with guarantees
//!
//! GP regression and classification whose every fitted model ends as one
//! [`posterior::GaussianPosterior`], so that prediction, `KL(Q‖P)`, Gibbs risk, the
//! PAC-Bayes certificate and leave-one-out estimates are written once for all models.
//!
//! Module map (each mirrors a piece of the math; see `GLOSSARY.md` for notation):
//! - [`kernel`]: covariance functions, θ = ln(value);
//! - [`linalg`]: robust Cholesky with reported jitter, solves, log-determinants;
//! - [`data`]: CSV loading, validation, standardisation, splits;
//! - [`posterior`]: the shared Gaussian posterior;
//! - [`regression`]: exact GP regression with ML-II;
//! - [`loo`]: leave-one-out for every model (closed forms, cavities, linear response, refits);
//! - [`special`], [`bounds`], [`loss`]: kl and its inverse, PAC-Bayes certificates, bounded losses;
//! - [`vector_math`]: a vectorised exponential for bulk kernel fills (runtime SIMD dispatch);
//! - [`threads`]: worker-thread requests resolved the same way for every front end;
//! - [`objective`], [`optim`]: training criteria (PAC-GP) and their minimisation (L-BFGS);
//! - [`spec`]: what a fit is (method, options, δ, seed), checked once;
//! - [`plan`]: what a spec makes short of fitting (likelihood, inference method, menus, prices);
//! - [`fit`]: the fitting pipelines, one entry point from a checked spec to a fitted model;
//! - [`model`]: fitted models as files: predict, evaluate, certify (prices re-derived from the spec);
//! - [`multiclass`]: the multi-class Gibbs classifier's vote probabilities and risk;
//! - [`metrics`]: test-set metrics; [`selective`]: risk–coverage curves for selective classification;
//! - [`experiments`]: the seed papers' experiments as library functions.

pub mod bounds;
pub mod certificate;
pub mod conformal;
pub mod cost;
pub mod data;
pub mod error;
pub mod experiments;
pub mod fit;
pub mod gradcheck;
pub mod inference;
pub mod kernel;
pub mod likelihood;
pub mod linalg;
pub mod loo;
pub mod loss;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod multiclass;
pub mod objective;
pub mod optim;
pub mod plan;
pub mod posterior;
pub mod prior;
pub mod regression;
pub mod select;
pub mod selective;
pub mod spec;
pub mod special;
pub mod svgp;
pub mod svm;
pub mod threads;
pub mod vector_math;
pub mod vocabulary;

pub use error::{Error, Result};
