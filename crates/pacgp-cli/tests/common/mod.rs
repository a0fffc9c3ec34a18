//! What the CLI's test files share: the repository root, running the built `pacgp` there, a
//! path as text, and a run that must succeed.
// Each test file is its own crate and uses only part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (the shipped data's paths are relative to it).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the built `pacgp` with `args` in the repository root.
pub fn pacgp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pacgp"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run pacgp")
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Requires success; returns stdout.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}
