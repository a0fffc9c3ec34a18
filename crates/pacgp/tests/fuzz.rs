//! Fuzzing by proptest (issue 11 item 7, issue 43 item 6): the CSV reader on arbitrary bytes
//! and on mutated valid files, the categorical / missing-value encoder on small mixed tables,
//! and the kernel expression grammar on arbitrary and grammar-shaped strings. Every input must
//! give `Ok` or a typed error, never a panic; what comes back `Ok` must satisfy the invariants
//! the numerical code assumes. The other targets: `model_file_fuzz.rs` (edited model files,
//! loaded and certified) and the option parser in `pacgp-cli` (`src/cli/fuzz.rs`).
//!
//! Case counts keep the normal test run to a few seconds. The long run on demand sets
//! `PROPTEST_CASES` and names one target, in release:
//! `PROPTEST_CASES=1000000 cargo test --release -p pacgp --test fuzz encoder_never_panics`
//! (docs/test-vectors.md lists the targets, their rates and the last long run). Failing
//! inputs are kept in `proptest-regressions/`; each finding is also a named regression test.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use pacgp::data::*;
use pacgp::kernel::Kernel;
use proptest::prelude::*;

mod common;
use common::fuzz_cases as cases;

/// A fresh file holding `bytes` (named `.csv.gz` when `gz`, compressed then).
fn file_with(bytes: &[u8], gz: bool) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("pacgp-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let i = NEXT.fetch_add(1, Ordering::Relaxed);
    if gz {
        use std::io::Write;
        let p = dir.join(format!("f{i}.csv.gz"));
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        p
    } else {
        let p = dir.join(format!("f{i}.csv"));
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

/// What a successful load promises: consistent shapes, finite numbers, ±1 labels.
fn check_dataset(d: &Dataset, classify: bool) {
    assert_eq!(d.x.nrows(), d.y.len());
    assert!(d.n() > 0 && d.d() > 0);
    assert_eq!(d.feature_names.len(), d.d());
    assert!(!d.feature_names.contains(&d.target_name));
    for i in 0..d.n() {
        for j in 0..d.d() {
            assert!(d.x[(i, j)].is_finite());
        }
    }
    assert!(d.y.iter().all(|v| v.is_finite()));
    if classify {
        check_binary_labels(&d.y).unwrap();
    }
}

/// Every reader entry point under several option sets, then scaling of what loads.
fn exercise(p: &Path) {
    let optionss = [
        CsvOptions::default(),
        CsvOptions {
            missing: MissingPolicy::DropRows,
            target: TargetSpec::Index(0),
            ..Default::default()
        },
        CsvOptions {
            missing: MissingPolicy::Zero,
            yes_no: true,
            target: TargetSpec::Name("y".into()),
            drop_columns: vec!["a".into()],
            ..Default::default()
        },
        // Tables as they come: text columns one-hot coded, missing cells filled with means.
        CsvOptions {
            missing: MissingPolicy::Mean,
            categorical: Categorical::Auto,
            unknown_category: UnknownCategory::Ignore,
            ..Default::default()
        },
        CsvOptions {
            no_header: true,
            missing: MissingPolicy::DropRows,
            categorical: Categorical::Auto,
            ..Default::default()
        },
    ];
    for opts in &optionss {
        if let Ok(d) = load_csv(p, opts) {
            check_dataset(&d, false);
            if let Ok(s) = Standardizer::fit(d.x.as_ref(), &d.feature_names) {
                assert!(s.mean.iter().chain(&s.sd).all(|v| v.is_finite()));
                assert!(s.sd.iter().all(|&v| v > 0.0));
                let z = s.transform(d.x.as_ref()).unwrap();
                assert!((0..z.nrows()).all(|i| (0..z.ncols()).all(|j| z[(i, j)].is_finite())));
            }
            if let Ok(t) = TargetScaler::fit_column(&d.y, &d.target_name) {
                assert!(t.mean.is_finite() && t.sd > 0.0 && t.sd <= MAX_TARGET_SD);
                assert!(t.transform(&d.y).iter().all(|v| v.is_finite()));
            }
        }
        // The coding fitted on a file reads the same file again into the same rows, as
        // `certify` does with a model's training file.
        if let Ok(t) = read_training(p, opts, false) {
            let again = read_for_model(
                p,
                &t.coding,
                &t.data.feature_names,
                TargetRead::Number(&t.data.target_name),
            )
            .expect("a training file reads again with its own coding");
            assert_eq!(again.x, t.data.x);
            assert_eq!(again.y.as_deref(), Some(&t.data.y[..]));
        }
        if let Ok((d, map)) = load_csv_classification(p, opts) {
            check_dataset(&d, true);
            assert_ne!(map.negative, map.positive);
        }
    }
    let names = ["a".to_string(), "b".to_string()];
    let _ = load_columns(p, &names, Some("y"), &InputCoding::default());
    let labels = LabelMap {
        negative: "0".into(),
        positive: "1".into(),
    };
    let _ = load_columns_labelled(p, &names[..1], "y", &labels, &InputCoding::default());
    let out = p.with_extension("out");
    let (tr, te) = (out.with_extension("tr"), out.with_extension("te"));
    if let Ok(s) = split_file(p, 0.5, 3, &tr, &te) {
        assert!(s.n_train > 0 && s.n_test > 0);
        // The parts read back as the whole did (same header, rows unchanged).
        let whole = load_csv(p, &CsvOptions::default());
        let parts = (
            load_csv(&tr, &CsvOptions::default()),
            load_csv(&te, &CsvOptions::default()),
        );
        if let (Ok(w), (Ok(a), Ok(b))) = (whole, parts) {
            assert_eq!((a.n() + b.n(), &a.feature_names), (w.n(), &w.feature_names));
        }
    }
    for f in [p, &tr, &te] {
        let _ = std::fs::remove_file(f);
    }
}

/// Pieces CSV files are made of, odd ones included.
const CSV_TOKENS: &[&str] = &[
    ",", ",", "\n", "\n", "\r\n", "\"", ";", "\t", " ", "a", "b", "y", "1", "-2.5e3", "0", "NaN",
    "?", "NA", "yes", "n", "1e400", "1e155", "-1e308", "inf", "é", "\u{0}", "\u{feff}", "x1",
];

/// A valid file the mutations start from: quoted header cells, a label-like target.
const VALID: &str = "\"a\",b,y\n1,2.5,0\n-3,4e2,1\n5,,1\n7,8,0\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2048), ..ProptestConfig::default() })]

    #[test]
    fn csv_reader_never_panics_on_arbitrary_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        gz in any::<bool>(),
    ) {
        exercise(&file_with(&bytes, gz));
    }

    #[test]
    fn csv_reader_never_panics_on_token_soup(
        toks in prop::collection::vec(prop::sample::select(CSV_TOKENS), 0..80),
    ) {
        exercise(&file_with(toks.concat().as_bytes(), false));
    }

    #[test]
    fn csv_reader_never_panics_on_mutated_valid_files(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 1..6),
    ) {
        let mut bytes = VALID.as_bytes().to_vec();
        for (at, op, b) in edits {
            let i = at.index(bytes.len() + 1);
            match op {
                0 => bytes.insert(i, b),
                1 if i < bytes.len() => { bytes.remove(i); }
                _ if i < bytes.len() => bytes[i] = b,
                _ => bytes.push(b),
            }
        }
        exercise(&file_with(&bytes, false));
    }
}

/// Pieces kernel expressions are made of, odd ones included.
const SPEC_TOKENS: &[&str] = &[
    "se",
    "se-ard",
    "rbf",
    "matern12",
    "matern32-ard",
    "matern52",
    "linear",
    "linear-ard",
    "poly",
    "poly2",
    "poly0",
    "poly64",
    "poly65",
    "poly99999999999",
    "const",
    "const-ard",
    "-ard",
    "+",
    "+",
    "*",
    "*",
    " ",
    "SE",
    "ß",
    "",
];

/// What a parsed kernel promises: it fits `d` inputs, its parameters round-trip, and it
/// evaluates to a finite, non-negative value on the diagonal.
fn check_kernel(k: &Kernel, spec: &str, d: usize) {
    k.check_input_dim(d).unwrap();
    let n_base = 1 + spec.matches(['+', '*']).count();
    assert!(n_base <= Kernel::MAX_BASE_KERNELS);
    let theta = k.params();
    assert_eq!(theta.len(), k.n_params());
    assert_eq!(k.param_names().len(), k.n_params());
    let mut k2 = k.clone();
    k2.set_params(&theta).unwrap();
    let x: Vec<f64> = (0..d).map(|j| 0.3 * j as f64 - 0.2).collect();
    let kxx = k.eval(&x, &x);
    assert!(kxx.is_finite() && kxx >= 0.0, "{spec}: k(x, x) = {kxx}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(4096), ..ProptestConfig::default() })]

    #[test]
    fn kernel_grammar_never_panics_on_arbitrary_strings(s in any::<String>(), d in 1usize..4) {
        if let Ok(k) = Kernel::from_spec(&s, d) {
            check_kernel(&k, &s, d);
        }
    }

    #[test]
    fn kernel_grammar_never_panics_on_grammar_soup(
        toks in prop::collection::vec(prop::sample::select(SPEC_TOKENS), 0..40),
        d in 1usize..4,
    ) {
        let s = toks.concat();
        if let Ok(k) = Kernel::from_spec(&s, d) {
            check_kernel(&k, &s, d);
        }
    }
}

#[test]
fn kernel_expressions_are_bounded_in_size() {
    let product = |n: usize| vec!["se"; n].join("*");
    // The product of 3,333 factors from issue 11 is refused before anything is built.
    let e = Kernel::from_spec(&product(3333), 2)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("3333 base kernels") && e.contains("at most 32"),
        "{e}"
    );
    // The bound is exact: 32 factors (or terms) parse, 33 do not.
    let k = Kernel::from_spec(&product(32), 2).unwrap();
    assert_eq!(k.n_params(), 64); // each SE factor: one lengthscale, one signal variance
    assert!(Kernel::from_spec(&product(33), 2).is_err());
    assert!(Kernel::from_spec(&vec!["linear"; 32].join("+"), 2).is_ok());
    assert!(Kernel::from_spec(&vec!["linear"; 33].join("+"), 2).is_err());
    // A very long expression (1 MB) is refused as quickly, without deep recursion.
    assert!(Kernel::from_spec(&product(200_000), 2).is_err());
    // Polynomial degrees: 1..=64; a degree past u32 is not a whole number we take.
    assert!(Kernel::from_spec("poly64", 1).is_ok());
    for bad in ["poly0", "poly65", "poly3000000000", "poly99999999999"] {
        let e = Kernel::from_spec(bad, 1).unwrap_err().to_string();
        assert!(e.contains("degree"), "{bad}: {e}");
    }
}

/// Cells of a mixed table: numbers (odd ones included), text, yes/no, dates, the default
/// missing tokens and cells that look like numbers but are not.
const CELL_TOKENS: &[&str] = &[
    "1",
    "0",
    "-2.5",
    "3e2",
    "1e400",
    "-1e308",
    "inf",
    "NaN",
    "nan",
    "",
    "?",
    "NA",
    "N/A",
    "na",
    "a",
    "b",
    "c",
    "yes",
    "n",
    "no",
    "2020-01-31",
    "2020-01-31T12:00:00",
    "1,000",
    "é",
    "x y",
];

/// Column names, repeats included (a pandas frame may hold two columns of one name).
const NAME_TOKENS: &[&str] = &["a", "b", "c", "y", "a", "", "NA", "é"];

/// A fuzzed table: header, rows of its width (as the CSV reader and the Python bridge hand
/// them over) but the row `ragged` picks, one cell short; numbered as file lines from 2.
fn table_of(names: &[&str], cells: &[&str], n_rows: usize, ragged: Option<usize>) -> Table {
    let width = names.len();
    Table {
        source: "fuzz".into(),
        header: names.iter().map(|s| s.to_string()).collect(),
        rows: (0..n_rows)
            .map(|i| {
                let w = width - usize::from(ragged == Some(i));
                let row = (0..w).map(|j| cells[(i * width + j) % cells.len()].to_string());
                (i as u64 + 2, row.collect())
            })
            .collect(),
    }
}

/// What a coded table promises the numerical code: one column of `x` per model input, the
/// inputs grouped by table column with every group non-empty, finite codes, and the kept and
/// dropped rows together the table's rows, each once and in order.
fn check_encoded(coding: &InputCoding, table: &Table, e: &Encoded) {
    let groups = coding.input_groups();
    assert!(groups.iter().all(|&g| g > 0), "{groups:?}");
    assert_eq!(groups.iter().sum::<usize>(), e.x.ncols());
    assert_eq!(coding.input_names().len(), e.x.ncols());
    assert_eq!(e.x.nrows(), e.rows.len());
    assert!(!e.rows.is_empty());
    assert!(e.rows.windows(2).all(|w| w[0] < w[1]));
    assert!(e.dropped.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(e.rows.len() + e.dropped.len(), table.rows.len());
    assert!(e.dropped.iter().all(|i| !e.rows.contains(i)));
    if coding.missing_policy() != MissingPolicy::DropRows {
        assert!(e.dropped.is_empty());
    }
    for i in 0..e.x.nrows() {
        for j in 0..e.x.ncols() {
            assert!(e.x[(i, j)].is_finite(), "x[{i}, {j}] = {}", e.x[(i, j)]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(4096), ..ProptestConfig::default() })]

    /// The categorical / missing-value encoder on small mixed tables under every option:
    /// fitting gives a typed error or a coding that reads its own table back into rows the
    /// numerical code can use, and reads a second table of the same header without panicking.
    #[test]
    fn encoder_never_panics_on_mixed_tables(
        names in prop::collection::vec(prop::sample::select(NAME_TOKENS), 1..5),
        cells in prop::collection::vec(prop::sample::select(CELL_TOKENS), 1..40),
        later in prop::collection::vec(prop::sample::select(CELL_TOKENS), 1..20),
        (n_rows, n_later) in (0usize..9, 0usize..5),
        ragged in prop::option::of((any::<prop::sample::Index>(), any::<bool>())),
        target in prop::option::of(any::<prop::sample::Index>()),
        policy in 0u8..4,
        categorical in 0u8..3,
        named in prop::collection::vec(prop::sample::select(NAME_TOKENS), 0..3),
        max_categories in prop::option::of(0usize..4),
        na_values in prop::option::of(prop::collection::vec(prop::sample::select(CELL_TOKENS), 0..4)),
        (yes_no, ignore_unknown) in (any::<bool>(), any::<bool>()),
    ) {
        // One row in the training table or the later one may be short; one target index in
        // each width + 1 is past the last column.
        let ragged = ragged.map(|(at, later)| (at.index(9), later));
        let short = |later| ragged.filter(|r| r.1 == later).map(|r| r.0);
        let table = table_of(&names, &cells, n_rows, short(false));
        let target = target.map(|t| t.index(names.len() + 1));
        let inputs: Vec<usize> = (0..names.len()).filter(|&j| Some(j) != target).collect();
        let opts = CodingOptions {
            max_categories,
            yes_no,
            missing: [
                MissingPolicy::Reject,
                MissingPolicy::DropRows,
                MissingPolicy::Zero,
                MissingPolicy::Mean,
            ][policy as usize],
            missing_cells: na_values.map(MissingCells::new).unwrap_or_default(),
            categorical: match categorical {
                0 => Categorical::None,
                1 => Categorical::Auto,
                _ => Categorical::Named(named.iter().map(|s| s.to_string()).collect()),
            },
            unknown_category: if ignore_unknown {
                UnknownCategory::Ignore
            } else {
                UnknownCategory::Error
            },
        };
        if let Ok(fitted) = InputCoding::fit(&table, &inputs, target, &opts) {
            let coding = fitted.coding;
            let features = coding.input_names();
            coding.check(&features).unwrap();
            // Fitting reads the vocabulary and fills; applying reads every cell, and may
            // refuse one (a non-finite number). Its own table's columns and categories are
            // never unknown to it.
            match coding.apply(&table, &features, target) {
                Ok(own) => check_encoded(&coding, &table, &own),
                Err(e) => prop_assert!(
                    !matches!(
                        e,
                        pacgp::Error::Table(TableError::UnknownCategory { .. })
                            | pacgp::Error::ColumnNotFound { .. }
                    ),
                    "its own table: {e}"
                ),
            }
            let other = table_of(&names, &later, n_later, short(true));
            if let Ok(e) = coding.apply(&other, &features, target) {
                check_encoded(&coding, &other, &e);
            }
        }
    }
}
