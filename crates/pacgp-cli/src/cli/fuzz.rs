//! Fuzzing the option parser (issue 43 item 6): arbitrary argument vectors for `fit`,
//! `certify` and `predict` go through clap and on through the mapping into the library —
//! `fit`'s reading options and `FitOptions::check` (and its check on a coded table),
//! `certify`'s options into a certificate of small fitted models, `predict`'s levels into
//! intervals and sets. Every vector must give a clap error, a typed error or a result, never
//! a panic. Cases: `PROPTEST_CASES` (the long run on demand), else a few seconds' worth.

use std::sync::OnceLock;

use clap::{CommandFactory, Parser};
use pacgp::data::{Categorical, CodingOptions, Dataset, InputCoding, LabelMap, Table};
use pacgp::model::FittedModel;
use pacgp::spec::{FitOptions, MethodName};
use proptest::prelude::*;

use super::{Cli, Command};
use crate::commands::csv_options;

/// `PROPTEST_CASES` if set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Values no option's word list holds: numbers at and past their ranges, payloads of the
/// `split:F`, `cv+:K`, `catoni:λ` kinds, durations, sizes, kernels, lists and odd text.
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "0.5",
    "-0.5",
    "1e308",
    "1e-320",
    "nan",
    "inf",
    "-inf",
    "-0",
    "18446744073709551616",
    "auto",
    "split:0.3",
    "split:auto",
    "split:0",
    "split:1.5",
    "catoni:3",
    "catoni:0",
    "catoni:-1",
    "catoni:nan",
    "cv+",
    "cv+:0",
    "cv+:1",
    "cv+:3",
    "split-conformal:2",
    "jackknife+",
    "30s",
    "5m",
    "0s",
    "1e30h",
    "8G",
    "0",
    "none",
    "1.5T",
    "se",
    "se-ard",
    "se-groups(1,1)",
    "se-groups(0)",
    "matern32+linear",
    "poly0",
    "",
    ",",
    "a,b",
    "y",
    "0,1",
    "ignore",
    "drop",
    "x.csv",
    "--",
    "-",
    "é",
];

/// The subcommands fuzzed.
const COMMANDS: &[&str] = &["fit", "certify", "predict"];

/// One option of a subcommand: its `--flag`, the words it accepts (empty: any value) and
/// whether it takes a value.
struct Flag {
    flag: String,
    words: Vec<String>,
    takes_value: bool,
}

/// The paths each of [`COMMANDS`] requires.
fn required(which: usize) -> [&'static str; 4] {
    match COMMANDS[which] {
        "fit" => ["--data", "d.csv", "--out", "m.json"],
        _ => ["--model", "m.json", "--data", "d.csv"],
    }
}

/// The options of each of [`COMMANDS`] but its required paths, from clap (read once): an option without a word list
/// gets the [`VALUES`] clap's parser takes for it (odd numbers and payloads included), so
/// that most vectors get past clap to the library.
fn flags(which: usize) -> &'static [Flag] {
    static F: OnceLock<Vec<Vec<Flag>>> = OnceLock::new();
    &F.get_or_init(|| {
        let cmd = Cli::command();
        (0..COMMANDS.len())
            .map(|which| {
                let sub = cmd.find_subcommand(COMMANDS[which]).expect("a subcommand");
                // The required paths are given once, and only opened by a run.
                let mut flags: Vec<Flag> = sub
                    .get_arguments()
                    .filter_map(flag)
                    .filter(|f| !required(which).contains(&f.flag.as_str()))
                    .collect();
                for f in flags
                    .iter_mut()
                    .filter(|f| f.takes_value && f.words.is_empty())
                {
                    f.words = VALUES
                        .iter()
                        .filter(|v| {
                            let mut argv = vec!["pacgp", COMMANDS[which]];
                            argv.extend(required(which));
                            argv.extend([f.flag.as_str(), v]);
                            Cli::try_parse_from(argv).is_ok()
                        })
                        .map(|v| v.to_string())
                        .collect();
                }
                flags
            })
            .collect()
    })[which]
}

/// A clap argument as a [`Flag`] (None: it has no long name).
fn flag(a: &clap::Arg) -> Option<Flag> {
    Some(Flag {
        flag: format!("--{}", a.get_long()?),
        words: a
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect(),
        takes_value: a.get_action().takes_values(),
    })
}

/// An argument vector for `fit`, `certify` or `predict`: the required paths (mostly), then
/// options in any order, each with a value clap takes for it (mostly), any of [`VALUES`], or
/// no value.
fn argv() -> impl Strategy<Value = Vec<String>> {
    let pick = (
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        0u8..8,
    );
    (0usize..3, 0u8..8, prop::collection::vec(pick, 0..6)).prop_map(
        |(which, required_paths, picks)| {
            let mut argv = vec!["pacgp".to_string(), COMMANDS[which].to_string()];
            if required_paths > 0 {
                argv.extend(required(which).map(String::from));
            }
            let flags = flags(which);
            for (f, v, mode) in picks {
                let f = f.get(flags);
                argv.push(f.flag.clone());
                match mode {
                    0..=5 if f.takes_value && !f.words.is_empty() => {
                        argv.push(v.get(&f.words).clone())
                    }
                    0..=6 if f.takes_value => argv.push(v.get(VALUES).to_string()),
                    _ => {}
                }
            }
            argv
        },
    )
}

/// A small coded table (a number, a three-level text column, a numeric target): the
/// coding `check_on_table` sees and the data the models are fitted and certified on.
fn table_data() -> &'static (InputCoding, Dataset) {
    static D: OnceLock<(InputCoding, Dataset)> = OnceLock::new();
    D.get_or_init(|| {
        let rows = (0..16)
            .map(|i| {
                let x = (i as f64 * 0.37).sin() * 3.0;
                let colour = ["red", "green", "blue"][i % 3];
                let y = x.cos() + if i % 3 == 0 { 0.5 } else { -0.2 };
                (
                    i as u64 + 2,
                    vec![x.to_string(), colour.into(), y.to_string()],
                )
            })
            .collect();
        let table = Table {
            source: "fuzz".into(),
            header: vec!["x".into(), "colour".into(), "y".into()],
            rows,
        };
        let opts = CodingOptions {
            categorical: Categorical::Auto,
            ..Default::default()
        };
        let coding = InputCoding::fit(&table, &[0, 1], Some(2), &opts)
            .unwrap()
            .coding;
        let names = coding.input_names();
        let x = coding.apply(&table, &names, Some(2)).unwrap().x;
        let y = table
            .rows
            .iter()
            .map(|(_, r)| r[2].parse().unwrap())
            .collect();
        let data = Dataset::with_names(x, y, names, "y".into()).unwrap();
        (coding, data)
    })
}

/// A regressor (gpr, with ε) and a binary classifier (laplace on the sign of the target),
/// fitted once on [`table_data`]'s rows, with the data each is certified on.
fn models() -> &'static Vec<(FittedModel, Dataset)> {
    static M: OnceLock<Vec<(FittedModel, Dataset)>> = OnceLock::new();
    M.get_or_init(|| {
        let (_, data) = table_data();
        let gpr = FitOptions {
            kernel: Some("se".into()),
            epsilon: Some(0.3),
            ..Default::default()
        };
        let spec = gpr.check(MethodName::Gpr).unwrap();
        let gpr = pacgp::fit::fit(&spec, data, None::<LabelMap>).unwrap();
        let mut signs = data.clone();
        signs.y = data
            .y
            .iter()
            .map(|v| if *v > 0.3 { 1.0 } else { -1.0 })
            .collect();
        let spec = FitOptions::default().check(MethodName::Laplace).unwrap();
        let lap = pacgp::fit::fit(&spec, &signs, Some(LabelMap::signs())).unwrap();
        vec![(gpr, data.clone()), (lap, signs)]
    })
}

/// How far a parsed command line got: the library refused it, or accepted it (a checked fit
/// spec, a certificate, predictions).
#[derive(Debug, PartialEq)]
enum Reached {
    Refused,
    Accepted,
}

/// A parsed command line taken as far as the library goes without fitting.
fn exercise(cli: Cli) -> Reached {
    let (coding, data) = table_data();
    let accepted = match cli.command {
        Command::Fit(a) => {
            let read = csv_options(&a.data);
            let (method, options) = (a.method(), a.options());
            let checked = options
                .with_default_epsilon(method, data)
                .ok()
                .and_then(|(o, _)| o.clone().check(method).ok().map(|_| o))
                .map(|o| o.check_on_table(method, coding));
            read.is_ok() && matches!(checked, Some(Ok(_)))
        }
        Command::Certify(a) => {
            let mut any = false;
            for (m, d) in models() {
                for r in m.certify(d, &a.options()).unwrap_or_default() {
                    let b = r.certificate.bound;
                    assert!((0.0..=1.0).contains(&b), "{a:?}: bound {b}");
                    any = true;
                }
            }
            any
        }
        Command::Predict(a) => {
            let mut any = a.interval.is_none() && a.set.is_none();
            for (m, d) in models() {
                if let Some(level) = a.interval {
                    any |= m.predict_intervals(d.x.as_ref(), 1.0 - level).is_ok();
                }
                if let Some(level) = a.set {
                    any |= m.predict_sets(d.x.as_ref(), 1.0 - level).is_ok();
                }
            }
            any
        }
        _ => unreachable!("only fit, certify and predict are fuzzed"),
    };
    if accepted {
        Reached::Accepted
    } else {
        Reached::Refused
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1024), ..ProptestConfig::default() })]

    /// Argument vectors of options in any order, the required ones present or not.
    #[test]
    fn option_parser_never_panics(argv in argv()) {
        if let Ok(cli) = Cli::try_parse_from(&argv) {
            exercise(cli);
        }
    }
}

/// The fuzzed vectors reach the library, not only clap's refusals: of 600 drawn, about half
/// parse, and of those many are refused and many accepted by the library.
#[test]
fn the_fuzzed_vectors_reach_the_library() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = argv();
    let (mut parsed, mut refused, mut accepted) = (0, 0, 0);
    for _ in 0..600 {
        let argv = strategy.new_tree(&mut runner).unwrap().current();
        if let Ok(cli) = Cli::try_parse_from(&argv) {
            parsed += 1;
            match exercise(cli) {
                Reached::Refused => refused += 1,
                Reached::Accepted => accepted += 1,
            }
        }
    }
    // 294, 141 and 153 when written.
    assert!(
        parsed >= 200 && refused >= 50 && accepted >= 50,
        "{parsed} parsed, {refused} refused, {accepted} accepted"
    );
}
