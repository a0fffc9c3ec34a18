//! `fit --time-limit` and Ctrl-C (issue 43, item 2): the fit stops at its best point so far,
//! writes the model marked as stopped early, says so, and `certify` certifies it and says so
//! too. No assertion depends on how long anything takes: the time limit is zero, and the
//! interrupt is sent once the process has installed its handler, to a fit far too long to end
//! on its own first.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{fit, ok, pacgp, read_json, repo, s};

const DATA: &str = "data/boston-housing/boston.csv";

/// `--time-limit 0`: the model is written and marked, `fit` (human and JSON) and `certify`
/// (human and JSON) say it stopped early; the same file without the field (as written before
/// it) certifies without the line.
#[test]
fn a_zero_time_limit_writes_a_model_marked_as_stopped_early() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let opts = ["--method", "pac-gp", "--epsilon", "3", "--time-limit", "0"];
    let out = fit(DATA, &model, &opts);
    let stdout = ok(&out);
    let line = "stopped early by --time-limit 0s after 0 optimiser iterations: the certificate is exact for the hyperparameters reached, which are not the optimum";
    assert!(stdout.contains(line), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("warning: {line}")));
    let m = read_json(&model);
    let record = &m["report"]["stopped_early"];
    assert_eq!(record["reason"], "time_limit");
    assert_eq!(record["seconds"], 0.0);
    assert_eq!(record["iterations"], 0);
    assert_eq!(m["report"]["optimiser"]["termination"], "stopped");

    let json_fit: serde_json::Value =
        serde_json::from_str(ok(&fit(DATA, &model, &[&opts[..], &["--json"]].concat())).trim())
            .unwrap();
    assert_eq!(json_fit["stopped_early"]["reason"], "time_limit");
    assert_eq!(json_fit["stopped_early"]["statement"], line);

    let certify = ["certify", "--model", s(&model), "--data", DATA];
    let text = ok(&pacgp(&certify));
    assert!(text.contains(line), "{text}");
    let cert: serde_json::Value =
        serde_json::from_str(ok(&pacgp(&[&certify[..], &["--json"]].concat())).trim()).unwrap();
    assert_eq!(cert["stopped_early"]["iterations"], 0);
    assert!(cert["bound"].as_f64().unwrap() <= 1.0);

    let mut old = m.clone();
    old["report"]
        .as_object_mut()
        .unwrap()
        .remove("stopped_early");
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, serde_json::to_string(&old).unwrap()).unwrap();
    let text = ok(&pacgp(&[
        "certify",
        "--model",
        s(&old_path),
        "--data",
        DATA,
    ]));
    assert!(!text.contains("stopped early"), "{text}");
}

/// A limit the fit never reaches leaves no trace; a limit that is not a duration is a usage
/// error (status 2) that says what a limit looks like.
#[test]
fn a_limit_not_reached_is_silent_and_a_bad_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let fit_until = |limit: &str| {
        let opts = ["--method", "gpr", "--kernel", "se", "--time-limit", limit];
        fit(DATA, &model, &opts)
    };
    let stdout = ok(&fit_until("1h"));
    assert!(!stdout.contains("stopped early"), "{stdout}");
    assert!(read_json(&model)["report"].get("stopped_early").is_none());
    for bad in ["ten", "-5", "3d"] {
        let out = fit_until(bad);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--time-limit"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Whether process `pid` catches SIGINT (bit 2 of `SigCgt` in /proc/PID/status): its Ctrl-C
/// handler is installed.
#[cfg(target_os = "linux")]
fn catches_sigint(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
}

/// Ctrl-C (SIGINT) during a fit of gpr with 5000 restarts (hours in a debug build): the fit
/// stops at its best run so far, writes the model marked as interrupted and says so, and the
/// model certifies. The signal is sent once the handler is installed (the process catches
/// SIGINT), so it cannot kill the process instead.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_stops_the_fit_and_writes_the_model_marked_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pacgp"))
        .args([
            "fit",
            "--data",
            DATA,
            "--method",
            "gpr",
            "--restarts",
            "5000",
            "--epsilon",
            "3",
            "--out",
            s(&model),
        ])
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pacgp");
    let pid = child.id();
    let t0 = Instant::now();
    while !catches_sigint(pid) {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the fit never installed its Ctrl-C handler"
        );
        if child.try_wait().unwrap().is_some() {
            panic!("pacgp exited before it was interrupted");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let stdout = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("interrupted: stopping the fit at its best point so far"),
        "{stderr}"
    );
    assert!(
        stdout.contains("stopped early by an interrupt after"),
        "{stdout}"
    );
    let m = read_json(&model);
    // (The optimiser's report is the best run's: a restart that converged before the signal
    // may be it, so its termination is not asserted.)
    assert_eq!(m["report"]["stopped_early"]["reason"], "interrupted");
    let text = ok(&pacgp(&["certify", "--model", s(&model), "--data", DATA]));
    assert!(text.contains("stopped early by an interrupt"), "{text}");
}
