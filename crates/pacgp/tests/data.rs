//! Data layer: loading the shipped sets, and a clear typed error for every bad input.

use pacgp::data::*;
use pacgp::Error;
use std::path::PathBuf;

fn repo(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(p)
}

fn tmp_csv(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pacgp-data-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn shipped_regression_sets_load_with_expected_shapes() {
    let b = load_csv(
        repo("data/boston-housing/boston.csv"),
        &CsvOptions::default(),
    )
    .unwrap();
    assert_eq!((b.n(), b.d()), (506, 13));
    assert_eq!(b.target_name, "MEDV");
    let k = load_csv(
        repo("data/kin40k/kin40k_train.csv.gz"),
        &CsvOptions::default(),
    )
    .unwrap();
    assert_eq!((k.n(), k.d()), (10000, 8));
    let s = load_csv(
        repo("data/snelson-1d/snelson_train.csv"),
        &CsvOptions::default(),
    )
    .unwrap();
    assert_eq!((s.n(), s.d()), (200, 1));
}

#[test]
fn breast_cancer_labels_map_2_to_minus_and_4_to_plus() {
    let opts = CsvOptions {
        drop_columns: vec!["sample_code_number".into()],
        ..Default::default()
    };
    let (d, map) = load_csv_classification(
        repo("data/breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv"),
        &opts,
    )
    .unwrap();
    assert_eq!((d.n(), d.d()), (683, 9));
    assert_eq!((map.negative.as_str(), map.positive.as_str()), ("2", "4"));
    assert_eq!(d.y.iter().filter(|v| **v > 0.0).count(), 239);
    check_binary_labels(&d.y).unwrap();
}

#[test]
fn house_votes_missing_rejected_by_default_and_dropped_on_request() {
    // Votes are y/n text: recode to numbers first in a temp copy.
    let text = std::fs::read_to_string(repo("data/house-votes-84/house_votes_84.csv")).unwrap();
    let coded: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                l.to_string()
            } else {
                let cells: Vec<&str> = l.split(',').collect();
                let (votes, class) = cells.split_at(cells.len() - 1);
                let v: Vec<&str> = votes
                    .iter()
                    .map(|c| match *c {
                        "y" => "1",
                        "n" => "0",
                        _ => "",
                    })
                    .collect();
                format!("{},{}", v.join(","), class[0])
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let p = tmp_csv("votes.csv", &coded);
    match load_csv_classification(&p, &CsvOptions::default()) {
        Err(Error::Table(TableError::MissingValue { line, column, .. })) => {
            assert_eq!(line, 2);
            assert_eq!(column, "V11");
        }
        other => panic!("expected MissingValue, got {other:?}"),
    }
    let opts = CsvOptions {
        missing: MissingPolicy::DropRows,
        ..Default::default()
    };
    let (d, map) = load_csv_classification(&p, &opts).unwrap();
    assert_eq!(d.n(), 232); // complete cases of house-votes-84
    assert_eq!(map.negative, "democrat");
}

#[test]
fn bad_inputs_give_typed_errors() {
    let missing = load_csv("/nonexistent/file.csv", &CsvOptions::default());
    assert!(matches!(missing, Err(Error::Io { .. })));

    let ragged = tmp_csv("ragged.csv", "a,b,y\n1,2,3\n4,5\n");
    assert!(matches!(
        load_csv(&ragged, &CsvOptions::default()),
        Err(Error::Csv { line: 3, .. })
    ));

    let text = tmp_csv("text.csv", "a,b,y\n1,2,3\n4,x,5\n");
    match load_csv(&text, &CsvOptions::default()) {
        Err(Error::Table(TableError::TextColumns { found, .. })) => {
            assert_eq!(found, "'b' ('x' at line 3)")
        }
        other => panic!("{other:?}"),
    }

    let na = tmp_csv("na.csv", "a,b,y\n1,NA,3\n2,4,5\n");
    assert!(matches!(
        load_csv(&na, &CsvOptions::default()),
        Err(Error::Table(TableError::MissingValue { line: 2, .. }))
    ));

    let inf = tmp_csv("inf.csv", "a,y\n1,inf\n2,3\n");
    assert!(matches!(
        load_csv(&inf, &CsvOptions::default()),
        Err(Error::Csv { line: 2, .. })
    ));

    let empty = tmp_csv("empty.csv", "");
    assert!(matches!(
        load_csv(&empty, &CsvOptions::default()),
        Err(Error::NoDataRows { .. })
    ));
    let header_only = tmp_csv("header.csv", "a,b,y\n");
    assert!(matches!(
        load_csv(&header_only, &CsvOptions::default()),
        Err(Error::NoDataRows { .. })
    ));

    let ok = tmp_csv("ok.csv", "a,b,y\n1,2,3\n4,5,6\n");
    let wrong = CsvOptions {
        target: TargetSpec::Name("price".into()),
        ..Default::default()
    };
    assert!(matches!(
        load_csv(&ok, &wrong),
        Err(Error::ColumnNotFound { .. })
    ));

    let one_class = tmp_csv("one.csv", "a,y\n1,0\n2,0\n");
    assert!(matches!(
        load_csv_classification(&one_class, &CsvOptions::default()),
        Err(Error::NotBinary { n_classes: 1, .. })
    ));
    let three = tmp_csv("three.csv", "a,y\n1,0\n2,1\n3,2\n");
    assert!(matches!(
        load_csv_classification(&three, &CsvOptions::default()),
        Err(Error::NotBinary { n_classes: 3, .. })
    ));
}

#[test]
fn dataset_new_rejects_nan_shapes_and_empty() {
    let x = faer::Mat::from_fn(3, 2, |i, j| (i + j) as f64);
    assert!(matches!(
        Dataset::new(x.clone(), vec![1.0, 2.0]),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        Dataset::new(x.clone(), vec![1.0, f64::NAN, 2.0]),
        Err(Error::NonFinite {
            what: "targets",
            row: 1,
            ..
        })
    ));
    let mut xn = x.clone();
    xn[(2, 1)] = f64::INFINITY;
    assert!(matches!(
        Dataset::new(xn, vec![1.0; 3]),
        Err(Error::NonFinite { row: 2, col: 1, .. })
    ));
    assert!(matches!(
        Dataset::new(faer::Mat::zeros(0, 2), vec![]),
        Err(Error::Empty { .. })
    ));
}

#[test]
fn standardisation_round_trips() {
    let x = faer::Mat::from_fn(5, 2, |i, j| (i * i) as f64 + 3.0 * j as f64);
    let names = vec!["a".to_string(), "b".to_string()];
    let s = Standardizer::fit(x.as_ref(), &names).unwrap();
    let z = s.transform(x.as_ref()).unwrap();
    for j in 0..2 {
        let m: f64 = (0..5).map(|i| z[(i, j)]).sum::<f64>() / 5.0;
        let v: f64 = (0..5).map(|i| z[(i, j)].powi(2)).sum::<f64>() / 5.0;
        assert!(m.abs() < 1e-14 && (v - 1.0).abs() < 1e-12);
    }
    let back = s.inverse_transform(z.as_ref());
    for i in 0..5 {
        for j in 0..2 {
            assert!((back[(i, j)] - x[(i, j)]).abs() < 1e-12);
        }
    }
    assert!(matches!(
        s.transform(faer::Mat::zeros(2, 3).as_ref()),
        Err(Error::ShapeMismatch { .. })
    ));
    let t = TargetScaler::fit(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert!((t.unscale_mean(t.transform(&[3.0])[0]) - 3.0).abs() < 1e-14);
    assert!((pacgp::data::standardised_length(t.unscale_length(0.3), t.sd) - 0.3).abs() < 1e-15);
}

#[test]
fn splits_are_seeded_disjoint_and_cover() {
    let (tr, te) = train_test_split(506, 0.2, 7).unwrap();
    assert_eq!(te.len(), 101);
    assert_eq!(tr.len() + te.len(), 506);
    let mut all: Vec<usize> = tr.iter().chain(&te).copied().collect();
    all.sort();
    assert_eq!(all, (0..506).collect::<Vec<_>>());
    assert_eq!(
        train_test_split(506, 0.2, 7).unwrap(),
        (tr.clone(), te.clone())
    );
    assert_ne!(train_test_split(506, 0.2, 8).unwrap().1, te);
    assert!(train_test_split(10, 1.5, 0).is_err());

    let folds = k_fold(23, 5, 1).unwrap();
    let mut seen = [0; 23];
    for (train, test) in &folds {
        assert_eq!(train.len() + test.len(), 23);
        for &i in test {
            seen[i] += 1;
            assert!(!train.contains(&i));
        }
    }
    assert!(seen.iter().all(|&c| c == 1));
    assert!(k_fold(3, 4, 0).is_err());
    assert!(k_fold(3, 1, 0).is_err());
}

#[test]
fn label_map_from_numeric_values() {
    let (y, map) = LabelMap::from_values(&[4.0, 2.0, 4.0]).unwrap();
    assert_eq!(y, vec![1.0, -1.0, 1.0]);
    assert_eq!(map.decode(-1.0), "2");
    assert!(check_binary_labels(&[1.0, 1.0]).is_err());
    assert!(check_binary_labels(&[1.0, 0.0]).is_err());
}

#[test]
fn yes_no_attributes_and_missing_as_zero() {
    let p = repo("data/house-votes-84/house_votes_84.csv");
    // Without the yes/no reading (or --categorical) the votes are text: a typed error.
    let plain = CsvOptions {
        missing: MissingPolicy::Zero,
        ..Default::default()
    };
    assert!(matches!(
        load_csv_classification(&p, &plain),
        Err(Error::Table(TableError::TextColumns { .. }))
    ));
    let opts = CsvOptions {
        missing: MissingPolicy::Zero,
        yes_no: true,
        ..Default::default()
    };
    let (d, map) = load_csv_classification(&p, &opts).unwrap();
    assert_eq!((d.n(), d.d()), (435, 16)); // every row kept, abstentions read as 0
    assert_eq!(map.positive, "republican");
    let count = |v: f64| {
        (0..d.n())
            .flat_map(|i| (0..d.d()).map(move |j| (i, j)))
            .filter(|&(i, j)| d.x[(i, j)] == v)
            .count()
    };
    assert_eq!(count(1.0) + count(-1.0) + count(0.0), 435 * 16);
    // 392 of the 435·16 votes are missing in the UCI file (the R export's empty fields).
    assert_eq!(count(0.0), 392);
    // A missing target still fails.
    let t = tmp_csv("votes_missing_target.csv", "a,b\ny,r\nn,\n");
    assert!(matches!(
        load_csv_classification(&t, &opts),
        Err(Error::Table(TableError::MissingTarget { .. }))
    ));
    // The same matrix, coded as two-category columns (n → −1, y → +1), missing → 0.
    let cat = CsvOptions {
        missing: MissingPolicy::Zero,
        categorical: Categorical::Auto,
        ..Default::default()
    };
    let (c, _) = load_csv_classification(&p, &cat).unwrap();
    assert_eq!(c.x, d.x);
    assert_eq!(c.y, d.y);
}

// ---- The bad-input corpus of issue 11 (data layer) ----

/// The message of an error, as the CLI prints it.
fn message<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
    r.expect_err("expected an error").to_string()
}

/// A front end's wording written out here (options as `--flag`), to check that hints name
/// the option that helps with its value.
struct Flags;

impl pacgp::spec::Wording for Flags {
    fn option(&self, option: pacgp::spec::SpecOption) -> String {
        format!("--{}", option.name())
    }
    fn method(&self, method: pacgp::spec::MethodName) -> String {
        format!("--method {method}")
    }
    fn without_loo(&self) -> String {
        "--loo none".into()
    }
    fn table_option(&self, option: TableOption) -> String {
        format!("--{}", option.name())
    }
    fn table_setting(&self, option: TableOption, values: &[&str]) -> Option<String> {
        Some(format!("--{} {}", option.name(), values.join("|")))
    }
}

/// The error in [`Flags`]' words.
fn flagged<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
    r.expect_err("expected an error").message(&Flags)
}

#[test]
fn repeated_header_name_is_an_error_naming_it() {
    // Reading by name would take column 1 twice.
    let p = tmp_csv("dup.csv", "x1,x1,y\n1,2,3\n4,5,6\n");
    match load_csv(&p, &CsvOptions::default()) {
        Err(Error::DuplicateColumn {
            name,
            first,
            second,
            ..
        }) => assert_eq!((name.as_str(), first, second), ("x1", 1, 2)),
        other => panic!("{other:?}"),
    }
    // Also when a saved model's columns are looked up by name in a new file.
    let msg = message(load_columns(
        &p,
        &["x1".to_string()],
        Some("y"),
        &InputCoding::default(),
    ));
    assert!(
        msg.contains("'x1' appears twice") && msg.contains("columns 1 and 2"),
        "{msg}"
    );
    // Quoted and unquoted spellings of one name are the same name.
    let q = tmp_csv("dup_quoted.csv", "\"a\",b,a\n1,2,3\n");
    assert!(matches!(
        load_csv(&q, &CsvOptions::default()),
        Err(Error::DuplicateColumn {
            first: 1,
            second: 3,
            ..
        })
    ));
}

#[test]
fn constant_input_columns_are_kept_unscaled_with_a_note() {
    // Column b is constant (UCI ionosphere's second column is all zeros): scikit-learn's
    // StandardScaler keeps it with scale 1; so do we, and say so.
    let x = faer::Mat::from_fn(4, 3, |i, j| match j {
        1 => 0.0,
        2 => 2.5,
        _ => i as f64,
    });
    let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let s = Standardizer::fit(x.as_ref(), &names).unwrap();
    assert_eq!(s.sd[1], 1.0);
    assert_eq!(s.sd[2], 1.0);
    assert_eq!((s.mean[1], s.mean[2]), (0.0, 2.5));
    // Column a: mean 1.5, population sd √1.25.
    assert_eq!(s.mean[0], 1.5);
    assert!((s.sd[0] - 1.25_f64.sqrt()).abs() < 1e-15);
    let listed: Vec<(usize, &str, f64)> = s
        .constant
        .iter()
        .map(|c| (c.index, c.name.as_str(), c.value))
        .collect();
    assert_eq!(listed, vec![(1, "b", 0.0), (2, "c", 2.5)]);
    let notes = s.notes();
    assert_eq!(notes.len(), 2);
    assert!(
        notes[0].contains("'b'") && notes[0].contains("unscaled"),
        "{}",
        notes[0]
    );
    let z = s.transform(x.as_ref()).unwrap();
    for i in 0..4 {
        assert_eq!((z[(i, 1)], z[(i, 2)]), (0.0, 0.0));
    }
    // New data is shifted but not scaled in such a column.
    let new = faer::Mat::from_fn(1, 3, |_, j| [0.0, 3.0, 1.0][j]);
    let zn = s.transform(new.as_ref()).unwrap();
    assert_eq!((zn[(0, 1)], zn[(0, 2)]), (3.0, -1.5));
    // The list survives the model file's JSON; a file without it (older models) still loads.
    let back: Standardizer = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back, s);
    let old: Standardizer = serde_json::from_str(r#"{"mean":[1.0],"sd":[2.0]}"#).unwrap();
    assert!(old.constant.is_empty());
    // Equal values whose mean is not exactly representable still count as constant (the
    // computed variance is rounding error: scikit-learn's test var ≤ Nε·var + (N·mean·ε)²).
    let tenth = faer::Mat::from_fn(10, 1, |_, _| 0.1);
    let s = Standardizer::fit(tenth.as_ref(), &names[..1]).unwrap();
    assert_eq!(s.constant.len(), 1);
    // A small but real spread is not constant, whatever the scale of the values.
    let tiny = faer::Mat::from_fn(4, 1, |i, _| 1e-20 * i as f64);
    let s = Standardizer::fit(tiny.as_ref(), &names[..1]).unwrap();
    assert!(s.constant.is_empty());
    assert!((s.sd[0] - 1e-20 * 1.25_f64.sqrt()).abs() < 1e-35);
}

#[test]
fn constant_target_is_an_error_naming_the_column() {
    match TargetScaler::fit_column(&[3.5, 3.5, 3.5], "MEDV") {
        Err(e @ Error::ConstantTarget { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("'MEDV'") && msg.contains("3.5"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn standardisation_cannot_overflow() {
    // Squares of 1e155 overflow f64; the moments are computed on scaled values instead.
    let big = [1e155, 2e155, 3e155, -4e155];
    let x = faer::Mat::from_fn(4, 1, |i, _| big[i]);
    let s = Standardizer::fit(x.as_ref(), &["a".to_string()]).unwrap();
    // Closed form: mean 0.5e155, population variance (1+4+9+16)/4·1e310 − mean² = 7.25e310.
    assert!((s.mean[0] / 0.5e155 - 1.0).abs() < 1e-15);
    assert!((s.sd[0] / (7.25_f64.sqrt() * 1e155) - 1.0).abs() < 1e-15);
    let json = serde_json::to_string(&s).unwrap();
    assert!(!json.contains("null"), "{json}");
    let z = s.transform(x.as_ref()).unwrap();
    assert!((z[(3, 0)] - (-4.5 / 7.25_f64.sqrt())).abs() < 1e-15);
    // Extremes of opposite sign: x − mean overflows, the standardised value does not.
    let ext = faer::Mat::from_fn(2, 1, |i, _| if i == 0 { -1.7e308 } else { 1.7e308 });
    let s = Standardizer::fit(ext.as_ref(), &["a".to_string()]).unwrap();
    assert_eq!((s.mean[0], s.sd[0]), (0.0, 1.7e308));
    let z = s.transform(ext.as_ref()).unwrap();
    assert_eq!((z[(0, 0)], z[(1, 0)]), (-1.0, 1.0));
    // A target spread beyond 2^500 cannot give variances in its units: a typed error.
    match TargetScaler::fit_column(&[1e300, 2e300, 3e300], "y") {
        Err(e @ Error::Unrepresentable { .. }) => assert!(e.to_string().contains("'y'"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(MAX_TARGET_SD, 2f64.powi(500));
    let t = TargetScaler::fit_column(&[1e150, 2e150, 3e150], "y").unwrap();
    assert!((t.sd / ((2.0_f64 / 3.0).sqrt() * 1e150) - 1.0).abs() < 1e-15);
    assert!(t.unscale_var(1.0).is_finite());
    // A new value too far from a narrow training column to standardise: a typed error.
    let narrow = faer::Mat::from_fn(2, 1, |i, _| i as f64 * 1e-300);
    let s = Standardizer::fit(narrow.as_ref(), &["a".to_string()]).unwrap();
    let far = faer::Mat::from_fn(1, 1, |_, _| 1e10);
    assert!(matches!(
        s.transform(far.as_ref()),
        Err(Error::Unrepresentable { .. })
    ));
}

#[test]
fn scaled_moments_equal_the_direct_formulas_bit_for_bit() {
    // Scaling by a power of two is exact, so on ordinary data nothing changes.
    let mut v = 0.37_f64;
    let data: Vec<f64> = (0..257)
        .map(|i| {
            v = (v * 3.9 * (1.0 - v)).clamp(1e-3, 1.0 - 1e-3); // logistic map
            (v - 0.4) * 10f64.powi(i % 7 - 3)
        })
        .collect();
    let n = data.len() as f64;
    let mean = data.iter().sum::<f64>() / n;
    let sd = (data.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    let m = Moments::of(&data);
    assert_eq!(
        (m.mean.to_bits(), m.sd.to_bits()),
        (mean.to_bits(), sd.to_bits())
    );
    assert!(!m.constant);
}

#[test]
fn other_delimiters_are_named() {
    let semi = tmp_csv("semi.csv", "a;b;y\n1;2;3\n4;5;6\n");
    let msg = message(load_csv(&semi, &CsvOptions::default()));
    assert!(
        msg.contains("';'-separated") && msg.contains("line 1"),
        "{msg}"
    );
    let pipe = tmp_csv("pipe.csv", "a|b|y\n1|2|3\n");
    assert!(message(load_csv(&pipe, &CsvOptions::default())).contains("'|'-separated"));
    // Tab- and space-separated files are read.
    let tab = tmp_csv("tab.tsv", "a\tb\ty\n1\t2\t3\n4\t5\t7\n");
    let d = load_csv(&tab, &CsvOptions::default()).unwrap();
    assert_eq!((d.n(), d.d(), d.y[1]), (2, 2, 7.0));
    let space = tmp_csv("space.txt", "a b  y\n1 2 3\n4 5 7\n");
    assert_eq!(
        load_csv(&space, &CsvOptions::default()).unwrap().x[(1, 1)],
        5.0
    );
    // One column and no other delimiter: no inputs, said plainly.
    let one = tmp_csv("one_col.csv", "y\n1\n2\n");
    let msg = message(load_csv(&one, &CsvOptions::default()));
    assert!(
        msg.contains("no input columns") && msg.contains("'y'"),
        "{msg}"
    );
}

#[test]
fn empty_and_header_only_files_read_naturally() {
    let h = tmp_csv("only_header.csv", "a,b,y\n");
    let msg = message(load_csv(&h, &CsvOptions::default()));
    assert!(
        msg.ends_with("no data rows: the file has only a header line"),
        "{msg}"
    );
    let e = tmp_csv("blank.csv", "\n  \n");
    assert!(
        message(load_csv(&e, &CsvOptions::default())).ends_with("no data rows: the file is empty")
    );
    let all_missing = tmp_csv("all_missing.csv", "a,b,y\n?,1,1\n2,NA,2\n");
    let opts = CsvOptions {
        missing: MissingPolicy::DropRows,
        ..Default::default()
    };
    let msg = message(load_csv(&all_missing, &opts));
    assert!(msg.contains("missing drop leaves none"), "{msg}");
    let msg = flagged(load_csv(&all_missing, &opts));
    assert!(msg.contains("--missing drop leaves none"), "{msg}");
}

#[test]
fn bad_utf8_is_reported_at_its_line() {
    let dir = std::env::temp_dir().join(format!("pacgp-data-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("latin1.csv");
    std::fs::write(&p, b"a,y\n1,2\n3,caf\xe9\n").unwrap();
    match load_csv(&p, &CsvOptions::default()) {
        Err(Error::Csv { line, message, .. }) => {
            assert_eq!(line, 3);
            assert!(
                message.contains("byte 6") && message.contains("0xe9"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Inside a gzip file too.
    use std::io::Write;
    let gz = dir.join("latin1.csv.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(b"a,y\n\xff,2\n").unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    assert!(matches!(
        load_csv(&gz, &CsvOptions::default()),
        Err(Error::Csv { line: 2, .. })
    ));
}

#[test]
fn hints_name_the_option_that_helps_in_the_front_ends_words() {
    let text = tmp_csv("hint_text.csv", "id,b,y\nA7,2,3\n");
    let msg = flagged(load_csv(&text, &CsvOptions::default()));
    assert!(
        msg.contains("--drop id") && !msg.contains("drop_columns"),
        "{msg}"
    );
    let yes = tmp_csv("hint_yes.csv", "v,y\ny,3\n");
    let msg = flagged(load_csv(&yes, &CsvOptions::default()));
    assert!(msg.contains("--categorical auto"), "{msg}");
    let na = tmp_csv("hint_na.csv", "a,y\n?,3\n1,4\n");
    let msg = flagged(load_csv(&na, &CsvOptions::default()));
    assert!(msg.contains("--missing drop|zero|mean"), "{msg}");
    // A regression target that is not numeric points at the classifiers, not at --drop.
    let label = tmp_csv("hint_label.csv", "a,y\n1,cat\n2,dog\n");
    let msg = flagged(load_csv(&label, &CsvOptions::default()));
    assert!(msg.contains("--method") && !msg.contains("--drop"), "{msg}");
    // The library's own words name the options by their names and no flag.
    for p in [&text, &yes, &na, &label] {
        let msg = message(load_csv(p, &CsvOptions::default()));
        assert!(!msg.contains("--"), "{msg}");
    }
}

#[test]
fn dropping_the_target_is_an_error() {
    let p = tmp_csv("drop_target.csv", "a,b,y\n1,2,3\n4,5,6\n");
    let opts = CsvOptions {
        drop_columns: vec!["y".into()],
        ..Default::default()
    };
    match load_csv(&p, &opts) {
        Err(e @ Error::Table(TableError::DroppedTarget { .. })) => {
            assert!(e.to_string().contains("'y'"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    let named = CsvOptions {
        target: TargetSpec::Name("a".into()),
        drop_columns: vec!["b".into(), "a".into()],
        ..Default::default()
    };
    assert!(matches!(
        load_csv_classification(&p, &named),
        Err(Error::Table(TableError::DroppedTarget { .. }))
    ));
    let all = CsvOptions {
        drop_columns: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    // Dropping every input leaves none: the message names the dropped columns and the
    // target, each as what it is.
    let msg = flagged(load_csv(&p, &all));
    assert!(
        msg.contains("--drop a,b leaves only the target column 'y'"),
        "{msg}"
    );
}

#[test]
fn split_file_copies_rows_byte_for_byte() {
    use std::path::Path;
    assert_eq!(
        default_split_paths(Path::new("d/boston.csv")),
        ("d/boston.train.csv".into(), "d/boston.test.csv".into())
    );
    assert_eq!(
        default_split_paths(Path::new("kin.csv.gz")).1,
        PathBuf::from("kin.test.csv.gz")
    );
    assert_eq!(
        default_split_paths(Path::new("plain")).0,
        PathBuf::from("plain.train")
    );
    // Quoted cells, odd spacing, CRLF line ends and blank lines: every data row comes out
    // exactly as written, with the file's line terminator.
    let rows: Vec<String> = (0..10)
        .map(|i| format!("\"{i},5\",  {i} ,tag{i}"))
        .collect();
    let text = format!("\"a\",b,y\r\n{}\r\n\r\n", rows.join("\r\n"));
    let p = tmp_csv("split_src.csv", &text);
    let (tr, te) = (tmp_csv("split_tr.csv", ""), tmp_csv("split_te.csv", ""));
    let done = split_file(&p, 0.3, 5, &tr, &te).unwrap();
    assert_eq!((done.n_train, done.n_test), (7, 3));
    let (_, test_idx) = train_test_split(10, 0.3, 5).unwrap();
    let mut test_idx = test_idx;
    test_idx.sort();
    let expected: String = std::iter::once("\"a\",b,y".to_string())
        .chain(test_idx.iter().map(|&i| rows[i].clone()))
        .map(|l| l + "\r\n")
        .collect();
    assert_eq!(std::fs::read_to_string(&te).unwrap(), expected);
    let train_text = std::fs::read_to_string(&tr).unwrap();
    assert_eq!(train_text.lines().count(), 8);
    // Outputs that collide are refused before anything is written.
    assert!(matches!(
        split_file(&p, 0.3, 5, &p, &te),
        Err(Error::InvalidSpec { .. })
    ));
    assert!(matches!(
        split_file(&p, 0.3, 5, &te, &te),
        Err(Error::InvalidSpec { .. })
    ));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
}

// ---- Tables as they come: categories, missing values, headers (issue 24) ----

/// A table of text cells (lines 2, 3, … as a file would number them).
fn table(header: &[&str], rows: &[&[&str]]) -> Table {
    Table {
        source: "t.csv".into(),
        header: header.iter().map(|h| h.to_string()).collect(),
        rows: rows
            .iter()
            .enumerate()
            .map(|(i, r)| (i as u64 + 2, r.iter().map(|c| c.to_string()).collect()))
            .collect(),
    }
}

fn coding_opts(missing: MissingPolicy, categorical: Categorical) -> CodingOptions {
    CodingOptions {
        missing,
        categorical,
        ..Default::default()
    }
}

#[test]
fn categories_are_one_hot_or_plus_minus_one_with_the_training_vocabulary() {
    let t = table(
        &["colour", "size", "sex", "y"],
        &[
            &["red", "10", "M", "1"],
            &["blue", "2", "F", "2"],
            &["green", "1", "M", "3"],
            &["red", "2", "F", "4"],
        ],
    );
    let opts = coding_opts(MissingPolicy::Reject, Categorical::Auto);
    let f = InputCoding::fit(&t, &[0, 1, 2], Some(3), &opts).unwrap();
    // Sorted levels: blue, green, red one-hot; F → −1, M → +1 in one input.
    assert_eq!(
        f.coding.input_names(),
        ["colour=blue", "colour=green", "colour=red", "size", "sex=M"]
    );
    assert_eq!(
        f.notes,
        ["encoded as categories: colour (3 categories, one input each), sex (F → −1, M → +1)"]
    );
    let e = f
        .coding
        .apply(&t, &f.coding.input_names(), Some(3))
        .unwrap();
    let rows: Vec<Vec<f64>> = (0..4)
        .map(|i| (0..5).map(|j| e.x[(i, j)]).collect())
        .collect();
    assert_eq!(rows[0], [0.0, 0.0, 1.0, 10.0, 1.0]);
    assert_eq!(rows[1], [1.0, 0.0, 0.0, 2.0, -1.0]);
    assert_eq!(rows[2], [0.0, 1.0, 0.0, 1.0, 1.0]);
    // A numeric column named as categorical: levels sorted as numbers (2 < 10).
    let named = coding_opts(
        MissingPolicy::Reject,
        Categorical::Named(vec!["size".into()]),
    );
    let t2 = table(&["size", "y"], &[&["10", "1"], &["2", "2"], &["1", "3"]]);
    let f = InputCoding::fit(&t2, &[0], Some(1), &named).unwrap();
    assert_eq!(f.coding.input_names(), ["size=1", "size=2", "size=10"]);
    // Without categorical columns, every text column is named in one error, with the options.
    let plain = coding_opts(MissingPolicy::Reject, Categorical::None);
    let msg = flagged(InputCoding::fit(&t, &[0, 1, 2], Some(3), &plain));
    assert!(
        msg.contains("'colour' ('red' at line 2), 'sex' ('M' at line 2)")
            && msg.contains("--categorical auto")
            && msg.contains("--drop colour,sex"),
        "{msg}"
    );
}

#[test]
fn an_unseen_category_is_a_typed_error_or_an_all_zero_code() {
    let train = table(&["c", "y"], &[&["a", "1"], &["b", "2"], &["c", "3"]]);
    let opts = coding_opts(MissingPolicy::Reject, Categorical::Auto);
    let mut coding = InputCoding::fit(&train, &[0], Some(1), &opts)
        .unwrap()
        .coding;
    let later = table(&["c", "y"], &[&["b", "1"], &["zebra\0", "2"]]);
    let names = coding.input_names();
    match coding.apply(&later, &names, None) {
        Err(Error::Table(TableError::UnknownCategory {
            line,
            column,
            value,
            known,
            ..
        })) => {
            assert_eq!((line, column.as_str()), (3, "c"));
            assert_eq!((value.as_str(), known.as_str()), ("zebra\\u{0}", "a, b, c"));
        }
        other => panic!("{other:?}"),
    }
    coding.unknown_category = UnknownCategory::Ignore;
    let e = coding.apply(&later, &names, None).unwrap();
    assert_eq!(
        (e.x[(0, 1)], e.x[(1, 0)] + e.x[(1, 1)] + e.x[(1, 2)]),
        (1.0, 0.0)
    );
}

#[test]
fn missing_cells_are_dropped_zeroed_or_filled_with_training_means() {
    let t = table(
        &["a", "c", "y"],
        &[
            &["1", "p", "10"],
            &["?", "q", "20"],
            &["4", "", "30"],
            &["7", "q", "?"],
        ],
    );
    let cat = || Categorical::Named(vec!["c".into()]);
    // The coding of a and c (target y) fitted on `on` under `policy`, and `to` coded by it.
    let code = |on: &Table, policy: MissingPolicy, to: &Table, target: Option<usize>| {
        let f = InputCoding::fit(on, &[0, 1], Some(2), &coding_opts(policy, cat())).unwrap();
        let e = f.coding.apply(to, &f.coding.input_names(), target).unwrap();
        (f, e)
    };
    // Drop: rows 2–4 (a missing input or target) are left out; the vocabulary is row 1's.
    let (f, e) = code(&t, MissingPolicy::DropRows, &t, Some(2));
    assert_eq!(
        (e.rows.clone(), e.dropped.clone()),
        (vec![0], vec![1, 2, 3])
    );
    assert_eq!(f.coding.input_names(), ["a", "c=p"]);
    // Otherwise a missing target is an error naming it, whatever fills the inputs.
    for policy in [
        MissingPolicy::Reject,
        MissingPolicy::Zero,
        MissingPolicy::Mean,
    ] {
        assert!(matches!(
            InputCoding::fit(&t, &[0, 1], Some(2), &coding_opts(policy, cat())),
            Err(Error::Table(TableError::MissingTarget { line: 5, .. }))
        ));
    }
    // Mean: a's mean over its observed training cells (1, 4, 7) = 4; c's code (p → −1,
    // q → +1) has mean (−1 + 1 + 1)/3 = 1/3. Zero: 0 for both.
    let rows = &t.rows[..3];
    let t3 = Table {
        rows: rows.to_vec(),
        ..t.clone()
    };
    let t3 = Table {
        rows: t3
            .rows
            .into_iter()
            .chain([(5, vec!["7".into(), "q".into(), "40".into()])])
            .collect(),
        ..t3
    };
    let (f, e) = code(&t3, MissingPolicy::Mean, &t3, Some(2));
    assert_eq!((e.x[(1, 0)], e.x[(2, 1)]), (4.0, 1.0 / 3.0));
    assert_eq!(
        f.notes[1],
        "missing cells read as the training mean: a (1), c (1)"
    );
    let (_, e) = code(&t3, MissingPolicy::Zero, &t3, Some(2));
    assert_eq!((e.x[(1, 0)], e.x[(2, 1)]), (0.0, 0.0));
    // The fill is the training mean, also for a later file's missing cells.
    let later = table(&["a", "c"], &[&["", "p"]]);
    let (_, e) = code(&t3, MissingPolicy::Mean, &later, None);
    assert_eq!(e.x[(0, 0)], 4.0);
}

#[test]
fn a_column_with_no_observed_value_is_left_out_with_a_note() {
    let t = table(&["a", "empty", "y"], &[&["1", "?", "1"], &["2", "", "2"]]);
    let f = InputCoding::fit(&t, &[0, 1], Some(2), &CodingOptions::default()).unwrap();
    assert_eq!(f.coding.input_names(), ["a"]);
    assert_eq!(f.notes, ["left out column 'empty' with no observed value"]);
}

#[test]
fn a_stored_coding_round_trips_and_old_files_read_as_before() {
    let t = table(
        &["c", "a", "y"],
        &[&["x", "?", "1"], &["y", "3", "2"], &["z", "5", "3"]],
    );
    let opts = coding_opts(MissingPolicy::Mean, Categorical::Auto);
    let f = InputCoding::fit(&t, &[0, 1], Some(2), &opts).unwrap();
    let json = serde_json::to_string(&f.coding).unwrap();
    let back: InputCoding = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f.coding);
    // A model file of an earlier version: yes/no and missing as 0, one number per input.
    let old: InputCoding =
        serde_json::from_str(r#"{"yes_no":true,"missing_as_zero":true}"#).unwrap();
    assert_eq!(old.missing_policy(), MissingPolicy::Zero);
    let votes = table(&["v1", "v2"], &[&["y", ""], &["n", "y"]]);
    let names = ["v1".to_string(), "v2".to_string()];
    let e = old.apply(&votes, &names, None).unwrap();
    assert_eq!((e.x[(0, 0)], e.x[(0, 1)], e.x[(1, 0)]), (1.0, 0.0, -1.0));
    assert!(old.check(&names).is_ok());
    assert!(f.coding.check(&names).is_err());
}

#[test]
fn a_first_line_of_numbers_is_refused_unless_read_without_a_header() {
    let p = tmp_csv("no_header.csv", "1,2,3\n4,5,6\n7,8,10\n");
    let msg = flagged(load_csv(&p, &CsvOptions::default()));
    assert!(
        msg.contains("the first line (1,2,3) is all numbers") && msg.contains("--no_header"),
        "{msg}"
    );
    let opts = CsvOptions {
        no_header: true,
        ..Default::default()
    };
    let t = read_training(&p, &opts, false).unwrap();
    assert_eq!(
        (t.data.n(), t.data.feature_names.clone()),
        (3, vec!["x1".into(), "x2".into()])
    );
    assert_eq!(t.data.y, [3.0, 6.0, 10.0]);
    // A later headerless file with or without the target column reads with the same names.
    let names = &t.data.feature_names;
    let x_only = tmp_csv("no_header_x.csv", "1,2\n4,5\n");
    let r = read_for_model(&x_only, &t.coding, names, TargetRead::Skip("y")).unwrap();
    assert_eq!((r.x[(1, 0)], r.lines.clone()), (4.0, vec![1, 2]));
    let r = read_for_model(&p, &t.coding, names, TargetRead::Number("y")).unwrap();
    assert_eq!(r.y.unwrap(), [3.0, 6.0, 10.0]);
}

#[test]
fn any_two_label_strings_and_the_positive_one_chosen() {
    for (a, b) in [
        ("t", "f"),
        ("M", "F"),
        ("yes", "no"),
        ("true", "false"),
        ("cat", "dog"),
    ] {
        let p = tmp_csv(
            &format!("labels_{a}.csv"),
            &format!("x,y\n1,{a}\n2,{b}\n3,{a}\n"),
        );
        let (d, map) = load_csv_classification(&p, &CsvOptions::default()).unwrap();
        // The second in sorted order is +1 by default.
        let (neg, pos) = if a < b { (a, b) } else { (b, a) };
        assert_eq!((map.negative.as_str(), map.positive.as_str()), (neg, pos));
        assert_eq!(d.y[0], if a == pos { 1.0 } else { -1.0 });
        let opts = CsvOptions {
            positive: Some(neg.into()),
            ..Default::default()
        };
        let (d2, map2) = load_csv_classification(&p, &opts).unwrap();
        assert_eq!(map2.positive, neg);
        assert_eq!(d2.y, d.y.iter().map(|v| -v).collect::<Vec<_>>());
    }
    let p = tmp_csv("labels_numbers.csv", "x,y\n1,4\n2,2\n");
    let four = CsvOptions {
        positive: Some("4.0".into()),
        ..Default::default()
    };
    assert_eq!(load_csv_classification(&p, &four).unwrap().1.positive, "4");
    let none = CsvOptions {
        positive: Some("3".into()),
        ..Default::default()
    };
    assert!(message(load_csv_classification(&p, &none))
        .contains("neither of the two labels, '2' and '4'"));
}

#[test]
fn echoed_cells_are_cut_and_escaped() {
    let long = "7".repeat(10_000_000) + "x";
    let s = shown(&long);
    assert!(
        s.starts_with(&"7".repeat(40)) && s.ends_with("… (10000001 bytes in all)"),
        "{}",
        &s[..60]
    );
    assert_eq!(shown("a\0b\u{7}"), "a\\u{0}b\\u{7}");
    assert_eq!(shown("café"), "café");
}
