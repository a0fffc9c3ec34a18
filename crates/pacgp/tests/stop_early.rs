//! Stopping a fit early keeps what it found (issue 43, item 2): a fit under an interrupt that
//! is already set, or a time limit already passed, stops every optimiser at its start, says so
//! in the model, and completes the model at the parameters it holds, so that `certify` is
//! exact for them. No test here depends on timing: the signals have fired before the fit
//! starts, or fire at a fixed evaluation of the objective.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pacgp::fit::{fit_until, fit_within};
use pacgp::memory::MemoryLimit;
use pacgp::model::{CertifyOptions, FittedModel};
use pacgp::optim::stop::{watch, StopReason, StopSignal};
use pacgp::optim::{minimize, LbfgsConfig, Objective, Termination};
use pacgp::prelude::*;

mod common;
use common::noisy_sine as sine;

/// Two classes split by the sign of x, with a few labels flipped.
fn classes() -> Dataset {
    let x = Mat::from_fn(40, 1, |i, _| i as f64 / 10.0 - 1.95);
    let y = (0..40)
        .map(|i| if (i < 20) != (i % 9 == 0) { -1.0 } else { 1.0 })
        .collect();
    Dataset::new(x, y).unwrap()
}

fn interrupted() -> StopSignal {
    StopSignal::never().with_interrupt(Arc::new(AtomicBool::new(true)))
}

fn fit_with(method: MethodName, o: FitOptions, data: &Dataset, stop: &StopSignal) -> FittedModel {
    let spec = o.check(method).unwrap();
    fit_until(&spec, data, None, MemoryLimit::Unchecked, stop).unwrap()
}

fn pac_gp_options() -> FitOptions {
    FitOptions {
        kernel: Some("se".into()),
        epsilon: Some(0.3),
        ..Default::default()
    }
}

/// An interrupt set before the fit: pac-gp stops at its start after 0 iterations, the model
/// and the optimiser's report say so, and `certify`'s bound recomputed from the model equals
/// the bound the fit evaluated at the parameters it holds (the certificate is exact for them,
/// though they are not the optimum, whose bound is lower).
#[test]
fn an_interrupted_pac_gp_is_marked_and_certified_at_the_parameters_it_holds() {
    let data = sine();
    let stopped = fit_with(MethodName::PacGp, pac_gp_options(), &data, &interrupted());
    let record = stopped
        .report
        .stopped_early
        .expect("marked as stopped early");
    assert_eq!(record.reason, StopReason::Interrupted);
    assert_eq!(record.iterations, 0);
    let opt = stopped.report.optimiser.as_ref().unwrap();
    assert_eq!(opt.termination, Termination::Stopped);
    assert_eq!(opt.iterations, 0);
    assert!(opt.note().unwrap().contains("stopped early"));

    let certs = stopped.certify(&data, &CertifyOptions::default()).unwrap();
    let cert = &certs[0];
    assert_eq!(cert.stopped_early, Some(record));
    let trained = stopped.report.objective.unwrap();
    let bound = cert.certificate.bound;
    assert!(
        (bound - trained).abs() <= 1e-9 * trained.abs(),
        "certify {bound} vs the fit's bound at its parameters {trained}"
    );

    let full = fit_with(
        MethodName::PacGp,
        pac_gp_options(),
        &data,
        &StopSignal::never(),
    );
    assert!(full.report.stopped_early.is_none());
    let full_bound = full.certify(&data, &CertifyOptions::default()).unwrap()[0]
        .certificate
        .bound;
    assert!(full_bound < bound, "optimum {full_bound} vs start {bound}");
}

/// A time limit of zero has passed when the fit starts: recorded with its length.
#[test]
fn an_expired_time_limit_is_recorded_with_the_limit() {
    let data = sine();
    let stop = StopSignal::never().with_time_limit(Duration::ZERO);
    let m = fit_with(MethodName::Gpr, pac_gp_options(), &data, &stop);
    let record = m.report.stopped_early.unwrap();
    assert_eq!(record.reason, StopReason::TimeLimit { seconds: 0.0 });
    assert!(record
        .sentence("--time-limit")
        .starts_with("stopped early by --time-limit 0s after 0 optimiser iterations"));
    assert!(m.certify(&data, &CertifyOptions::default()).is_ok());
}

/// A fit under a signal that never fires is the model `fit_within` makes, to the bit.
#[test]
fn a_signal_that_never_fires_changes_nothing() {
    let data = sine();
    let spec = pac_gp_options().check(MethodName::PacGp).unwrap();
    let plain = fit_within(&spec, &data, None, MemoryLimit::Unchecked).unwrap();
    let far = StopSignal::never()
        .with_time_limit(Duration::from_secs(3600))
        .with_interrupt(Arc::new(AtomicBool::new(false)));
    let watched = fit_until(&spec, &data, None, MemoryLimit::Unchecked, &far).unwrap();
    assert!(watched.report.stopped_early.is_none());
    assert_eq!(
        plain.posterior().unwrap().kernel().params(),
        watched.posterior().unwrap().kernel().params()
    );
    assert_eq!(plain.report.objective, watched.report.objective);
}

/// Methods that optimise elsewhere stop too — a sparse regressor and a classifier whose θ is
/// chosen by ML-II on candidates scored on worker threads — and their models certify.
#[test]
fn sparse_and_classifier_fits_stop_and_certify() {
    let data = sine();
    let vfe = fit_with(
        MethodName::Vfe,
        FitOptions {
            inducing: Some(10),
            epsilon: Some(0.3),
            ..Default::default()
        },
        &data,
        &interrupted(),
    );
    assert_eq!(
        vfe.report.stopped_early.map(|s| s.reason),
        Some(StopReason::Interrupted)
    );
    assert!(vfe.certify(&data, &CertifyOptions::default()).is_ok());

    let clf = classes();
    let laplace = fit_with(
        MethodName::Laplace,
        FitOptions {
            select: Some(pacgp::spec::Selection::Ml2),
            kernel: Some("se".into()),
            ..Default::default()
        },
        &clf,
        &interrupted(),
    );
    assert_eq!(laplace.report.stopped_early.map(|s| s.iterations), Some(0));
    let cert = &laplace.certify(&clf, &CertifyOptions::default()).unwrap()[0];
    assert!(cert.stopped_early.is_some());
}

/// One-vs-rest fits each class by the library's `fit`, nested in the multi-class fit: every
/// class's optimiser stops with the enclosing signal.
#[test]
fn one_vs_rest_members_stop_with_the_enclosing_fit() {
    let x = Mat::from_fn(45, 1, |i, _| i as f64 / 10.0);
    let y: Vec<f64> = (0..45)
        .map(|i| ((i / 15) as f64 + (i % 7 == 0) as u8 as f64) % 3.0)
        .collect();
    let data = Dataset::new(x, y).unwrap();
    let spec = FitOptions {
        select: Some(pacgp::spec::Selection::Ml2),
        kernel: Some("se".into()),
        ..Default::default()
    }
    .check(MethodName::Laplace)
    .unwrap();
    let classes = pacgp::data::ClassLabels {
        labels: vec!["a".into(), "b".into(), "c".into()],
    };
    let m = fit_until(
        &spec,
        &data,
        classes,
        MemoryLimit::Unchecked,
        &interrupted(),
    )
    .unwrap();
    assert_eq!(
        m.report.stopped_early.map(|s| s.reason),
        Some(StopReason::Interrupted)
    );
    let json = serde_json::to_value(&m).unwrap();
    let members = json["task"]["members"].as_array().unwrap();
    assert_eq!(members.len(), 3);
    for member in members {
        assert_eq!(
            member["report"]["optimiser"]["termination"], "stopped",
            "{member}"
        );
    }
}

/// `f = Σ (x_i − 3)²` that sets the interrupt flag at its `at`-th evaluation.
struct Tripwire {
    flag: Arc<AtomicBool>,
    at: usize,
    evals: AtomicUsize,
    values: std::sync::Mutex<Vec<f64>>,
}

impl Objective for Tripwire {
    fn dim(&self) -> usize {
        3
    }
    fn value_and_gradient(&self, p: &[f64]) -> pacgp::Result<(f64, Vec<f64>)> {
        if self.evals.fetch_add(1, Ordering::SeqCst) + 1 == self.at {
            self.flag.store(true, Ordering::SeqCst);
        }
        let v = p
            .iter()
            .map(|x| (x - 3.0).powi(2) * (1.0 + x * x))
            .sum::<f64>();
        let g = p
            .iter()
            .map(|x| 2.0 * (x - 3.0) * (1.0 + x * x) + 2.0 * x * (x - 3.0).powi(2))
            .collect();
        self.values.lock().unwrap().push(v);
        Ok((v, g))
    }
}

impl Tripwire {
    fn new(flag: &Arc<AtomicBool>, at: usize) -> Self {
        Self {
            flag: Arc::clone(flag),
            at,
            evals: AtomicUsize::new(0),
            values: Default::default(),
        }
    }
}

/// Interrupted mid-run (at half the evaluations the full run takes), L-BFGS returns the best
/// point it had accepted: its value is one the run saw, below the start's and above the
/// optimum's, it took fewer iterations than the full run, and the record counts them.
#[test]
fn an_interrupt_mid_run_returns_the_best_point_so_far() {
    let start = [-2.0, 0.5, 7.0];
    let never = Arc::new(AtomicBool::new(false));
    let full = minimize(&Tripwire::new(&never, 0), &start, &LbfgsConfig::default()).unwrap();
    assert!(full.converged() && full.evaluations >= 6, "{full:?}");
    let flag = Arc::new(AtomicBool::new(false));
    let obj = Tripwire::new(&flag, full.evaluations as usize / 2);
    let signal = StopSignal::never().with_interrupt(flag);
    let (report, record) = watch(&signal, || {
        minimize(&obj, &start, &LbfgsConfig::default()).unwrap()
    });
    assert_eq!(report.termination, Termination::Stopped, "{report:?}");
    assert!(
        report.iterations >= 1 && report.iterations < full.iterations,
        "{report:?} vs {full:?}"
    );
    let record = record.unwrap();
    assert_eq!(record.iterations, report.iterations);
    let seen = obj.values.lock().unwrap().clone();
    assert!(seen.contains(&report.value));
    assert!(report.value < seen[0] && report.value > full.value);
    assert_eq!(
        obj.value_and_gradient(&report.params).unwrap().0,
        report.value
    );
}

/// A model file written before the field loads without it, and says nothing stopped it.
#[test]
fn a_model_file_without_the_field_loads() {
    let data = sine();
    let stopped = fit_with(MethodName::Gpr, pac_gp_options(), &data, &interrupted());
    let mut json: serde_json::Value = serde_json::to_value(&stopped).unwrap();
    assert!(json["report"]["stopped_early"].is_object());
    json["report"]
        .as_object_mut()
        .unwrap()
        .remove("stopped_early");
    let old: FittedModel = serde_json::from_value(json).unwrap();
    assert!(old.report.stopped_early.is_none());
    let cert = &old.certify(&data, &CertifyOptions::default()).unwrap()[0];
    assert!(cert.stopped_early.is_none());
}
