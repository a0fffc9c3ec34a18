//! # pacgp — Gaussian-process learning with guarantees
//!
//! GP regression and classification whose every fitted model ends as one
//! [`posterior::GaussianPosterior`], so that prediction, `KL(Q‖P)`, Gibbs risk, the
//! PAC-Bayes certificate and leave-one-out estimates are written once for all models.
//!
//! ## From data to a certificate
//!
//! [`prelude`] holds what this takes. A [`data::Dataset`] (built in code, or read from a CSV
//! with [`data::load_csv`]); a checked fit spec ([`spec::FitOptions::check`] with a
//! [`spec::MethodName`]); [`fit::fit`] to a [`model::FittedModel`]; then predict, evaluate, and
//! certify on the training sample, which gives a [`certificate::Certificate`]: an upper bound
//! on the model's risk on new data that holds with probability 1 − δ over the sample.
//!
//! ```
//! use pacgp::prelude::*;
//!
//! // 40 noisy points of sin(x) on [0, 4).
//! let x = Mat::from_fn(40, 1, |i, _| i as f64 / 10.0);
//! let y = (0..40)
//!     .map(|i| (i as f64 / 10.0).sin() + 0.1 * ((i * 7 % 5) as f64 - 2.0))
//!     .collect();
//! let data = Dataset::new(x, y)?;
//!
//! // Exact GP regression, hyperparameters by ML-II; ε = 0.3 (target units) is the half-width
//! // of the ε-band loss the certificate bounds: a prediction more than ε off is an error.
//! let options = FitOptions { epsilon: Some(0.3), ..Default::default() };
//! let spec = options.check(MethodName::Gpr)?;
//! let model = fit(&spec, &data, None)?;
//!
//! // Predictions in target units, at raw inputs.
//! let at = Mat::from_fn(3, 1, |i, _| 0.5 + i as f64);
//! let prediction = model.predict_regression(at.as_ref())?;
//! for (i, mean) in prediction.mean.iter().enumerate() {
//!     assert!((mean - (0.5 + i as f64).sin()).abs() < 0.3);
//! }
//!
//! // The certificate on the training sample, at the spec's δ (0.01).
//! let report = model.certify(&data, &CertifyOptions::default())?.remove(0);
//! let c = &report.certificate;
//! assert_eq!(c.n, 40);
//! assert_eq!(c.delta, 0.01);
//! assert!(c.empirical_risk <= c.bound && c.bound <= 1.0);
//! # Ok::<(), pacgp::Error>(())
//! ```
//!
//! ## Module map
//!
//! Each module mirrors a piece of the math; see `GLOSSARY.md` for notation.
//!
//! - [`prelude`]: the types and functions to fit, predict and certify, in one import;
//! - [`error`]: the one structured error type ([`Error`], [`Result`]);
//! - [`vocabulary`]: the words of methods and options, and the structured spec error;
//! - [`data`]: CSV loading, input coding, labels, validation, standardisation, splits, digests;
//! - [`kernel`]: covariance functions, θ = ln(value);
//! - [`likelihood`]: classification likelihoods `p(y | f)` in log space;
//! - [`linalg`]: robust Cholesky with reported jitter, solves, log-determinants;
//! - `vector_math`: a vectorised exponential for bulk kernel fills (runtime SIMD dispatch);
//! - [`threads`]: worker-thread requests resolved the same way for every front end;
//! - [`memory`], [`cost`]: the memory a fit may use, and what each method needs, checked
//!   before it starts;
//! - [`posterior`]: the shared Gaussian posterior (and the GP prior it is taken against);
//! - [`prior`]: priors that tighten certificates (hyperprior, split priors);
//! - [`regression`]: exact and sparse GP regression, sharded sums, greedy sparse;
//! - [`inference`]: approximate inference for GP classification (Laplace, EP, mean field,
//!   IVM, SOGP, softmax), each binary method in its home behind one trait;
//! - [`svm`]: support vector machines as a GP's MAP, with their certificates and LOO;
//! - [`svgp`]: the sparse variational GP classifier (evidence or bound);
//! - [`multiclass`]: the multi-class Gibbs classifier's vote probabilities and risk;
//! - [`loo`]: leave-one-out for every model (closed forms, cavities, linear response, refits);
//! - [`special`], [`bounds`], [`loss`]: kl and its inverse, PAC-Bayes bounds, bounded losses;
//! - [`certificate`]: the one certificate constructor (risk, KL, δ, every price);
//! - [`select`]: the one menu choice by the bound, charging the menu's price;
//! - [`objective`], [`optim`]: training criteria (evidence, LOO, PAC-GP, ...) and their
//!   minimisation (L-BFGS, the one driver);
//! - [`gradcheck`]: gradient checks by central differences, for tests of analytic gradients;
//! - [`spec`]: what a fit is (method, options, δ, seed), checked once; each method's spec, its
//!   options and what it says about itself in one home ([`spec::MethodSpec`]);
//! - [`plan`]: what a spec makes short of fitting (likelihood, inference method, menus, prices);
//! - [`fit`]: the fitting pipelines, one entry point from a checked spec to a fitted model (a
//!   binary classifier's or regressor's pipeline is its spec's fit half);
//! - [`model`]: fitted models as files: predict, evaluate, certify (prices re-derived from the spec);
//! - [`conformal`]: distribution-free prediction intervals (jackknife+, CV+, split conformal)
//!   and prediction sets;
//! - [`metrics`]: test-set metrics;
//! - [`selective`]: risk–coverage curves for selective classification;
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
pub mod prelude;
pub mod prior;
pub mod regression;
pub mod select;
pub mod selective;
pub mod spec;
pub mod special;
pub mod svgp;
pub mod svm;
pub mod threads;
pub(crate) mod vector_math;
pub mod vocabulary;

pub use error::{Error, Result};
