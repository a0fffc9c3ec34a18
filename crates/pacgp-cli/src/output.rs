//! What every command that writes result files shares: a progress bar and a file writer
//! that names the file in its error.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar over `total` fits (hidden when stderr is not a terminal).
pub fn bar(total: usize, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(total as u64);
    pb.set_style(
        ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} fits [{elapsed} / ~{eta}]")
            .expect("valid template"),
    );
    pb.set_message(msg.to_string());
    pb
}

/// `run` with a [`bar`] of `total` steps labelled `msg`, moved by `run`'s progress callback
/// `(done, total)` and cleared when `run` returns: how the experiments report progress.
pub fn with_bar<T>(
    total: usize,
    msg: &str,
    run: impl FnOnce(&mut dyn FnMut(usize, usize)) -> T,
) -> T {
    let pb = bar(total, msg);
    let out = run(&mut |done, _| pb.set_position(done as u64));
    pb.finish_and_clear();
    out
}

/// A spinner on stderr while long work runs (hidden when stderr is not a terminal).
pub fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("valid template"),
    );
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// A long fit's progress on stderr: its estimate printed before it starts, then a bar over
/// the optimiser iterations the estimate expects, with an ETA, moved by the counter the fit
/// counts its iterations into (`StopSignal::with_progress`); a spinner where the estimate
/// counts no optimiser iterations, and nothing beyond the spinner for a short fit.
pub struct FitProgress {
    bar: ProgressBar,
    done: Arc<AtomicBool>,
    poller: Option<JoinHandle<()>>,
}

impl FitProgress {
    /// Start showing the progress of a fit described by `msg`, with its estimate and the
    /// counter its iterations go into.
    pub fn start(
        msg: &str,
        estimate: &pacgp::cost::Estimate,
        threads: usize,
        counter: Arc<AtomicU64>,
    ) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        if !estimate.is_long(threads) {
            return Self {
                bar: spinner(msg),
                done,
                poller: None,
            };
        }
        eprintln!("estimate: {msg}: {}", estimate.sentence(threads));
        if !estimate.work.counts_optimiser_iterations {
            return Self {
                bar: spinner(msg),
                done,
                poller: None,
            };
        }
        let bar = iterations_bar(estimate.work.steps.ceil() as u64, msg);
        let poller = {
            let (bar, done) = (bar.clone(), Arc::clone(&done));
            std::thread::spawn(move || follow(&bar, &counter, &done))
        };
        Self {
            bar,
            done,
            poller: Some(poller),
        }
    }

    /// Clear the bar (the fit ended).
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(p) = self.poller.take() {
            let _ = p.join();
        }
        self.bar.finish_and_clear();
    }
}

/// A bar over `total` expected optimiser iterations, with the time left.
fn iterations_bar(total: u64, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(total.max(1));
    pb.set_style(
        ProgressStyle::with_template(
            "{msg} {bar:30} {pos}/~{len} iterations [{elapsed} / ~{eta} left]",
        )
        .expect("valid template"),
    );
    pb.set_message(msg.to_string());
    pb
}

/// Move `bar` to the iterations counted so far, four times a second, until `done`; past the
/// expected count the length follows the position (the estimate was low).
fn follow(bar: &ProgressBar, counter: &AtomicU64, done: &AtomicBool) {
    while !done.load(Ordering::Relaxed) {
        let at = counter.load(Ordering::Relaxed);
        if bar.length().is_some_and(|len| at >= len) {
            bar.set_length(at + 1);
        }
        bar.set_position(at);
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Write a result file, naming it in the error.
pub fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The datasets folder: `given` if it exists, else (for the default `data`) the folder shipped
/// with the checkout this binary was built from, so `demo` and `reproduce` work from any
/// directory.
pub fn data_dir(given: &Path) -> std::path::PathBuf {
    if given.is_dir() || given != Path::new("data") {
        return given.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

/// Write `Serialize` rows as CSV with a header (`csv::Writer`).
pub fn write_csv<T: serde::Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
