//! Jackknife+ against split-conformal prediction sets of a classifier on a shipped
//! classification set: mean coverage and mean set size at α = 0.1 over 20 seeded 70/30 splits
//! (seeds 0..20; the model's seed is the split's), LAC and APS (one fit per split, method and
//! score).
//!
//! `cargo run -p pacgp --example jackknife_sets -- [crabs|breast-cancer|ripley|iris|wine] [METHOD] [ROWS]`
//! (default crabs and laplace; the binary sets as `pacgp reproduce` loads them,
//! [`load_uci_sets`]; iris and wine with their 3 classes, one-vs-rest; METHOD one with
//! jackknife+ sets: laplace, ep, ivm, pac-gpc, mean-field, svm; ROWS: a seeded subsample of
//! that many rows, drawn once before the splits, for methods too slow for the whole set).

use pacgp::data::{read_training, train_test_split, CsvOptions, TargetKind, TrainingLabels};
use pacgp::experiments::classification::load_uci_sets;
use pacgp::spec::{FitOptions, IntervalMethod, IntervalScore, MethodName};

const SPLITS: u64 = 20;
const ALPHA: f64 = 0.1;

fn main() -> pacgp::Result<()> {
    let name = std::env::args().nth(1).unwrap_or_else(|| "crabs".into());
    let method_name: MethodName = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "laplace".into())
        .parse()
        .map_err(|e| pacgp::Error::Unsupported(format!("{e}")))?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let (mut data, classes) = match name.as_str() {
        "iris" | "wine" => {
            let file = root.join(format!("{name}/{name}.csv"));
            let t = read_training(file, &CsvOptions::default(), TargetKind::Classes)?;
            (t.data, t.classes)
        }
        _ => (
            load_uci_sets(&root, std::slice::from_ref(&name))?
                .remove(0)
                .1,
            None,
        ),
    };
    if let Some(rows) = std::env::args().nth(3) {
        let rows: usize = rows
            .parse()
            .map_err(|e| pacgp::Error::Unsupported(format!("ROWS: {e}")))?;
        if rows < data.n() {
            let (kept, _) = train_test_split(data.n(), 1.0 - rows as f64 / data.n() as f64, 0)?;
            data = data.subset(&kept);
        }
    }
    // A row's label as a class index: K classes' own, a binary set's ±1 → 0 or 1.
    let class_of = |y: f64| match classes {
        Some(_) => y as usize,
        None => usize::from(y > 0.0),
    };
    let methods = [
        ("jackknife+", IntervalMethod::JackknifePlus),
        (
            "split-conformal:0.5",
            IntervalMethod::SplitConformal { fraction: 0.5 },
        ),
    ];
    println!(
        "{name}: N = {}, {method_name}, α = {ALPHA}, {SPLITS} seeded 70/30 splits",
        data.n()
    );
    println!("sets | score | mean coverage | mean set size");
    for (label, method) in methods {
        // [LAC, APS] × (coverage, size), averaged over the splits.
        let mut sums = [[0.0; 2]; 2];
        for seed in 0..SPLITS {
            let (fit_rows, test_rows) = train_test_split(data.n(), 0.3, seed)?;
            let (sample, test) = (data.subset(&fit_rows), data.subset(&test_rows));
            for (s, score) in [IntervalScore::Lac, IntervalScore::Aps]
                .into_iter()
                .enumerate()
            {
                let spec = FitOptions {
                    intervals: Some(method),
                    interval_score: Some(score),
                    seed: Some(seed),
                    ..Default::default()
                }
                .check(method_name)?;
                let labels = match &classes {
                    Some(c) => TrainingLabels::Classes(c.clone()),
                    None => TrainingLabels::None,
                };
                let model = pacgp::fit::fit(&spec, &sample, labels)?;
                let sets = model.predict_sets(test.x.as_ref(), ALPHA)?;
                let n = test.n() as f64;
                let hits = sets
                    .sets
                    .iter()
                    .zip(&test.y)
                    .filter(|(set, y)| set.contains(&class_of(**y)))
                    .count();
                sums[s][0] += hits as f64 / n / SPLITS as f64;
                sums[s][1] +=
                    sets.sets.iter().map(Vec::len).sum::<usize>() as f64 / n / SPLITS as f64;
            }
        }
        for (s, score) in ["lac", "aps"].iter().enumerate() {
            println!("{label} | {score} | {:.4} | {:.3}", sums[s][0], sums[s][1]);
        }
    }
    Ok(())
}
