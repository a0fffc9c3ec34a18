//! `pacgp reproduce multiclass`: the settings, rows and summary are the library's
//! ([`pacgp::experiments::multiclass`]); this file runs the splits, runs the scikit-learn
//! peers on the same splits when `--peers` names a Python (`scripts/multiclass_peers.py`,
//! compiled into the binary and written beside the tables), and writes the tables (CSV via
//! `csv::Writer`, JSON) and a summary on stdout.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use pacgp::data::Dataset;
use pacgp::experiments::multiclass::{
    self as mc, MulticlassRow, MulticlassSettings, MulticlassSummary, PeerRow, MULTICLASS_SETS,
};
use serde_json::json;

use crate::cli::ReproduceArgs;
use crate::output::{bar, write, write_csv};

/// The peers' script, as shipped in `scripts/`.
const PEER_SCRIPT: &str = include_str!("../../../../scripts/multiclass_peers.py");

/// The settings `--quick`, `--reps` and `--datasets` ask for.
fn settings(a: &ReproduceArgs) -> Result<MulticlassSettings> {
    let mut s = super::scaled(a, MulticlassSettings::quick, MulticlassSettings::full);
    s.splits = a.reps.unwrap_or(s.splits);
    super::choose_datasets(a, &MULTICLASS_SETS, "multiclass", &mut s.datasets)?;
    Ok(s)
}

/// Write a split as the peers read it: the inputs and the class index last, one header row.
fn write_split(path: &Path, d: &Dataset) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut header = d.feature_names.clone();
    header.push("class".into());
    w.write_record(&header)?;
    for i in 0..d.n() {
        let mut row: Vec<String> = (0..d.d()).map(|j| d.x[(i, j)].to_string()).collect();
        row.push(d.y[i].to_string());
        w.write_record(&row)?;
    }
    w.flush()?;
    Ok(())
}

/// Run the peers' script on one split and read its JSON lines.
fn run_peers(
    python: &Path,
    script: &Path,
    dir: &Path,
    set: &str,
    seed: u64,
    data: &Dataset,
    f: f64,
    with_gpc: bool,
) -> Result<Vec<PeerRow>> {
    let (train, test) = mc::split(data, f, seed)?;
    let tr = dir.join(format!("{set}-{seed}-train.csv"));
    let te = dir.join(format!("{set}-{seed}-test.csv"));
    write_split(&tr, &train)?;
    write_split(&te, &test)?;
    let out = Command::new(python)
        .arg(script)
        .args([
            "--train",
            &tr.to_string_lossy(),
            "--test",
            &te.to_string_lossy(),
        ])
        .args(["--dataset", set, "--seed", &seed.to_string()])
        .args(if with_gpc {
            &[][..]
        } else {
            &["--only", "sklearn-svc"][..]
        })
        .output()
        .with_context(|| format!("cannot run {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "the peers' script failed on {set} split {seed}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("peers' output line: {l}")))
        .collect()
}

/// Run the experiment, write `multiclass*.{csv,json}`, print the summary.
pub(super) fn run(a: &ReproduceArgs) -> Result<()> {
    let settings = settings(a)?;
    let peers_dir = a.out.join("multiclass-splits");
    let script = a.out.join("multiclass_peers.py");
    if a.peers.is_some() {
        std::fs::create_dir_all(&peers_dir)
            .with_context(|| format!("creating {}", peers_dir.display()))?;
        write(&script, PEER_SCRIPT)?;
    }
    let mut rows: Vec<MulticlassRow> = Vec::new();
    let mut peers: Vec<PeerRow> = Vec::new();
    for set in &settings.datasets {
        let (data, classes) = mc::load_multiclass_set(&a.data_dir, set)?;
        let seeds = settings.splits_of(set);
        let pb = bar(seeds.len(), &format!("multiclass ({set})"));
        for &seed in &seeds {
            rows.extend(mc::multiclass_rows(set, &data, &classes, seed, &settings)?);
            if let Some(python) = &a.peers {
                let f = settings.test_fraction;
                let gpc = settings.gpc_peer_on(set, seed);
                peers.extend(run_peers(
                    python, &script, &peers_dir, set, seed, &data, f, gpc,
                )?);
            }
            pb.inc(1);
        }
        pb.finish_and_clear();
    }
    let summary = mc::summarise(&rows, &peers);
    super::write_rows_and_summary(a, "multiclass", &rows, &summary)?;
    if !peers.is_empty() {
        write_csv(&a.out.join("multiclass-peers.csv"), &peers)?;
    }
    let table = json!({
        "experiment": "multiclass",
        "settings": settings,
        "summary": summary,
        "peers": peers,
        "rows": rows,
    });
    if !super::write_json(a, "multiclass", &table)? {
        print(&settings, &summary, &a.out)?;
    }
    Ok(())
}

/// The summary table on stdout.
fn print(s: &MulticlassSettings, summary: &[MulticlassSummary], out: &Path) -> Result<()> {
    out!(
        "Multi-class certificates (δ = {}, seeded {:.0}/{:.0} splits; means ± standard errors; peer: scikit-learn on the same splits)",
        s.delta,
        100.0 * (1.0 - s.test_fraction),
        100.0 * s.test_fraction
    );
    out!("dataset  method                    splits  accuracy         peer acc  Δ acc    time ratio  bound            test Gibbs       KL       penalty  worst test−bound");
    let opt = |v: Option<f64>, w: usize, p: usize| {
        v.map_or(format!("{:>w$}", "—"), |x| format!("{x:>w$.p$}"))
    };
    for r in summary {
        out!(
            "{:<8} {:<25} {:>6}  {:.4} ± {:.4}  {}  {}  {}  {:.4} ± {:.4}  {:.4} ± {:.4}  {:>7.2}  {:>7.2}  {:>+.4}",
            r.dataset,
            r.method,
            r.splits,
            r.accuracy,
            r.accuracy_se,
            opt(r.peer_accuracy, 8, 4),
            opt(r.accuracy_minus_peer.map(|d| 100.0 * d), 6, 2),
            opt(r.fit_time_ratio, 10, 2),
            r.bound,
            r.bound_se,
            r.test_gibbs,
            r.test_gibbs_se,
            r.kl,
            r.penalty,
            r.worst_test_minus_bound
        );
    }
    out!("Δ acc: accuracy minus the peer's, in points; time ratio: the peer's fit time over pacgp's (median over splits; > 1: pacgp faster); worst test−bound ≤ 0: every certificate held on its held-out part");
    out!("wrote {}", out.join("multiclass*.{csv,json}").display());
    Ok(())
}
