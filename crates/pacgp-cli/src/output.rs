//! What every command that writes result files shares: a progress bar and a file writer
//! that names the file in its error.

use std::path::Path;

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
