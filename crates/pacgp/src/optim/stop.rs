//! Stopping a fit early and keeping what it found (issue 43, item 2): a time limit and an
//! interrupt flag, consulted by the optimisers ([`super::minimize`], [`super::multistart`] and
//! the minibatch Adam loop) once per iteration.
//!
//! A fit runs under a [`StopSignal`] through [`watch`], which installs it for the calling thread
//! (and, through [`Watch::enter`], for the worker threads a fit fans out to). When the signal
//! fires, each optimiser returns its best point so far ([`super::Termination::Stopped`]) and the
//! optimisers started after it return their start; nothing else is cut short, so the posterior,
//! the leave-one-out and every certificate input are computed exactly at the parameters held.
//! A PAC-Bayes certificate holds for any posterior chosen from the training sample, so it is as
//! valid for the parameters reached as for an optimum; only the optimum is lost. [`watch`]
//! returns what happened as a [`StoppedEarly`] record, which the fit stores in its report.
//!
//! The signal lives in a thread-local scope, not on the [`super::LbfgsConfig`] every method
//! builds, so that each method that optimises gets it without code of its own; it is set only
//! by [`watch`] and [`Watch::enter`], and a thread outside any scope never stops early.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// When a fit should stop early: a deadline, an interrupt flag (set by a Ctrl-C handler), both
/// or neither.
#[derive(Clone, Debug, Default)]
pub struct StopSignal {
    /// The time limit and the instant it ends.
    deadline: Option<(Duration, Instant)>,
    /// Set from outside (a signal handler, another thread) to stop.
    interrupt: Option<Arc<AtomicBool>>,
    /// Counts the optimiser iterations as they are done, for a front end's progress bar.
    progress: Option<Arc<AtomicU64>>,
}

impl StopSignal {
    /// A signal that never fires.
    pub fn never() -> Self {
        Self::default()
    }

    /// Also fire once `limit` has passed from now.
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        let now = Instant::now();
        let at = now.checked_add(limit);
        // A limit beyond what an `Instant` can hold is no limit.
        self.deadline = at.map(|at| (limit, at));
        self
    }

    /// Also fire once `flag` is set.
    pub fn with_interrupt(mut self, flag: Arc<AtomicBool>) -> Self {
        self.interrupt = Some(flag);
        self
    }

    /// Also count every optimiser iteration of the fit into `counter` as it is done (the
    /// iterations the [`StoppedEarly`] record counts), for a progress bar read from outside.
    pub fn with_progress(mut self, counter: Arc<AtomicU64>) -> Self {
        self.progress = Some(counter);
        self
    }

    /// Whether the signal can fire at all.
    pub fn is_armed(&self) -> bool {
        self.deadline.is_some() || self.interrupt.is_some()
    }

    /// The reason to stop now, if any; an interrupt is named before a passed deadline.
    fn reason_now(&self) -> Option<StopReason> {
        if self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            return Some(StopReason::Interrupted);
        }
        match self.deadline {
            Some((limit, at)) if Instant::now() >= at => Some(StopReason::TimeLimit {
                seconds: limit.as_secs_f64(),
            }),
            _ => None,
        }
    }
}

/// A time limit as a user writes it: seconds (`30`, `2.5`), or a number with the unit `s`, `m`
/// or `h` (`30s`, `5m`, `1.5h`); zero stops at the first iteration.
pub fn parse_time_limit(text: &str) -> crate::error::Result<Duration> {
    const HOW: &str =
        "a time limit is a number of seconds, or a number with s, m or h (30s, 5m, 1.5h)";
    let bad = |reason: &str| crate::Error::InvalidSpec {
        spec: text.to_string(),
        reason: reason.to_string(),
    };
    let t = text.trim().to_ascii_lowercase();
    let (number, scale) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        _ => (&t[..], 1.0),
    };
    let value: f64 = number.trim().parse().map_err(|_| bad(HOW))?;
    let seconds = value * scale;
    if !(seconds >= 0.0) {
        return Err(bad("a time limit cannot be negative"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| bad("a time limit must be finite"))
}

/// Why a fit stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum StopReason {
    /// The time limit (`--time-limit`, Python's `time_limit`) passed.
    TimeLimit {
        /// The limit, in seconds.
        seconds: f64,
    },
    /// Interrupted (Ctrl-C, or the interrupt flag set by the caller).
    Interrupted,
}

/// A fit whose optimisers were stopped before their convergence tests: the reason and the
/// optimiser iterations done (over every optimiser run of the fit). Flat in JSON:
/// `{"reason": "time_limit", "seconds": 30.0, "iterations": 12}` (serde's `flatten` does not
/// combine with `deny_unknown_fields`, so this record accepts unknown fields).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoppedEarly {
    /// Why.
    #[serde(flatten)]
    pub reason: StopReason,
    /// Optimiser iterations done before the stop.
    pub iterations: u64,
}

impl StoppedEarly {
    /// What happened and what it means for the certificate, for the front ends to print.
    /// `limit_flag` names the time limit as the front end spells it (`--time-limit 30s`;
    /// a name ending in `=` takes the value without a space: `time_limit=30s`).
    pub fn sentence(&self, limit_flag: &str) -> String {
        let how = match self.reason {
            StopReason::TimeLimit { seconds } => {
                let space = if limit_flag.ends_with('=') { "" } else { " " };
                format!("by {limit_flag}{space}{}", format_seconds(seconds))
            }
            StopReason::Interrupted => "by an interrupt".to_string(),
        };
        let its = if self.iterations == 1 {
            "iteration"
        } else {
            "iterations"
        };
        format!(
            "stopped early {how} after {} optimiser {its}: the certificate is exact for the hyperparameters reached, which are not the optimum",
            self.iterations
        )
    }
}

/// `30s`, `1.5s`: a limit in seconds as a user would write it.
fn format_seconds(seconds: f64) -> String {
    format!("{seconds}s")
}

/// One fit's stop signal and what it saw: shared by the threads the fit runs on.
#[derive(Debug)]
pub struct Watch {
    signal: StopSignal,
    fired: OnceLock<StopReason>,
    iterations: AtomicU64,
}

impl Watch {
    /// Run `f` under this watch on the calling thread (for a fit's worker threads: take
    /// [`current`] before fanning out, enter it in each task).
    pub fn enter<T>(self: &Arc<Self>, f: impl FnOnce() -> T) -> T {
        let previous = CURRENT.with(|c| c.replace(Some(Arc::clone(self))));
        // Restored on the way out, unwinding included.
        struct Restore(Option<Arc<Watch>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = previous);
            }
        }
        let _restore = Restore(previous);
        f()
    }

    /// Whether to stop: once fired, always.
    fn should_stop(&self) -> bool {
        if self.fired.get().is_some() {
            return true;
        }
        match self.signal.reason_now() {
            Some(reason) => {
                let _ = self.fired.set(reason);
                true
            }
            None => false,
        }
    }

    /// The record, if the signal fired.
    fn record(&self) -> Option<StoppedEarly> {
        self.fired.get().map(|reason| StoppedEarly {
            reason: *reason,
            iterations: self.iterations.load(Ordering::Relaxed),
        })
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Watch>>> = const { RefCell::new(None) };
}

/// Run `f` (a fit) under `signal`; its result and, if the signal fired while it ran, the
/// [`StoppedEarly`] record. A signal that cannot fire, given inside a watched fit, leaves the
/// enclosing watch in force: a fit nested in another (one-vs-rest's classes, a conformal
/// refit) stops with it, and reports the enclosing record.
pub fn watch<T>(signal: &StopSignal, f: impl FnOnce() -> T) -> (T, Option<StoppedEarly>) {
    if !signal.is_armed() {
        if let Some(outer) = current() {
            let out = f();
            return (out, outer.record());
        }
    }
    let w = Arc::new(Watch {
        signal: signal.clone(),
        fired: OnceLock::new(),
        iterations: AtomicU64::new(0),
    });
    let out = w.enter(f);
    (out, w.record())
}

/// The watch the calling thread runs under, to [`Watch::enter`] on worker threads.
pub fn current() -> Option<Arc<Watch>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Run `f` under `watch` if there is one (a worker thread's task of a watched fit).
pub fn within<T>(watch: Option<&Arc<Watch>>, f: impl FnOnce() -> T) -> T {
    match watch {
        Some(w) => w.enter(f),
        None => f(),
    }
}

/// Whether the optimiser should stop now (false outside a watched fit). Checked once per
/// iteration.
pub(crate) fn requested() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(|w| w.should_stop()))
}

/// Count one optimiser iteration done towards the [`StoppedEarly`] record.
pub(crate) fn count_iteration() {
    CURRENT.with(|c| {
        if let Some(w) = c.borrow().as_ref() {
            w.iterations.fetch_add(1, Ordering::Relaxed);
            if let Some(p) = &w.signal.progress {
                p.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
}

/// The reason the current watch fired, for the optimiser's message.
pub(crate) fn fired_reason() -> Option<StopReason> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|w| w.fired.get().copied()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outside a watch nothing stops; a set flag fires inside one and is recorded with the
    /// iterations counted; the scope is restored afterwards.
    #[test]
    fn a_set_flag_fires_only_inside_its_watch() {
        assert!(!requested());
        let flag = Arc::new(AtomicBool::new(false));
        let signal = StopSignal::never().with_interrupt(Arc::clone(&flag));
        let ((), rec) = watch(&signal, || {
            count_iteration();
            assert!(!requested());
            flag.store(true, Ordering::Relaxed);
            count_iteration();
            assert!(requested());
        });
        let rec = rec.unwrap();
        assert_eq!(rec.reason, StopReason::Interrupted);
        assert_eq!(rec.iterations, 2);
        assert!(!requested());
        let ((), none) = watch(&StopSignal::never(), || assert!(!requested()));
        assert!(none.is_none());
    }

    /// A progress counter sees every iteration counted inside the watch, a nested unarmed
    /// fit's included, and nothing outside it.
    #[test]
    fn a_progress_counter_counts_the_watched_iterations() {
        let counter = Arc::new(AtomicU64::new(0));
        let signal = StopSignal::never()
            .with_interrupt(Arc::new(AtomicBool::new(false)))
            .with_progress(Arc::clone(&counter));
        count_iteration();
        let ((), rec) = watch(&signal, || {
            count_iteration();
            let ((), _) = watch(&StopSignal::never(), count_iteration);
        });
        assert!(rec.is_none());
        assert_eq!(counter.load(Ordering::Relaxed), 2);
    }

    /// A zero limit has passed at once; the record names it and says what it means.
    #[test]
    fn an_expired_deadline_fires_and_is_worded() {
        let signal = StopSignal::never().with_time_limit(Duration::ZERO);
        assert!(signal.is_armed() && !StopSignal::never().is_armed());
        let (stopped, rec) = watch(&signal, requested);
        assert!(stopped);
        let rec = rec.unwrap();
        assert_eq!(rec.reason, StopReason::TimeLimit { seconds: 0.0 });
        let s = rec.sentence("--time-limit");
        assert!(s.starts_with("stopped early by --time-limit 0s after 0 optimiser iterations"));
        assert!(s.contains("exact for the hyperparameters reached"));
        assert!(rec
            .sentence("time_limit=")
            .starts_with("stopped early by time_limit=0s after"));
    }

    /// A fit nested in a watched one under a signal that cannot fire (one-vs-rest's members
    /// call `fit`) stops with the enclosing watch; an armed signal gets its own.
    #[test]
    fn a_nested_unarmed_watch_inherits_the_enclosing_one() {
        let signal = StopSignal::never().with_interrupt(Arc::new(AtomicBool::new(true)));
        let ((inner_stopped, inner), outer) =
            watch(&signal, || watch(&StopSignal::never(), requested));
        assert!(inner_stopped);
        assert_eq!(inner.unwrap().reason, StopReason::Interrupted);
        assert!(outer.is_some());
        let ((own, _), _) = watch(&signal, || {
            let later = StopSignal::never().with_time_limit(Duration::from_secs(3600));
            watch(&later, requested)
        });
        assert!(!own);
    }

    /// A worker thread entering the watch sees it and counts into it.
    #[test]
    fn worker_threads_enter_the_fits_watch() {
        let flag = Arc::new(AtomicBool::new(true));
        let signal = StopSignal::never().with_interrupt(flag);
        let (seen, rec) = watch(&signal, || {
            let w = current();
            std::thread::scope(|s| {
                s.spawn(|| {
                    within(w.as_ref(), || {
                        count_iteration();
                        requested()
                    })
                })
                .join()
                .unwrap()
            })
        });
        assert!(seen);
        assert_eq!(rec.unwrap().iterations, 1);
    }

    /// Seconds with or without a unit; nonsense, negative and infinite limits are refused.
    #[test]
    fn time_limits_parse_in_seconds_minutes_and_hours() {
        let secs = |t: &str| parse_time_limit(t).unwrap().as_secs_f64();
        assert_eq!(secs("30"), 30.0);
        assert_eq!(secs("2.5s"), 2.5);
        assert_eq!(secs(" 5m"), 300.0);
        assert_eq!(secs("1.5H"), 5400.0);
        assert_eq!(secs("0"), 0.0);
        for bad in ["", "s", "-1", "ten", "5 minutes", "inf", "NaN", "3d"] {
            assert!(parse_time_limit(bad).is_err(), "{bad}");
        }
    }

    /// The record round-trips through JSON in its flat form.
    #[test]
    fn the_record_is_flat_json() {
        let rec = StoppedEarly {
            reason: StopReason::TimeLimit { seconds: 30.0 },
            iterations: 12,
        };
        let s = serde_json::to_string(&rec).unwrap();
        assert_eq!(
            s,
            r#"{"reason":"time_limit","seconds":30.0,"iterations":12}"#
        );
        assert_eq!(serde_json::from_str::<StoppedEarly>(&s).unwrap(), rec);
    }
}
