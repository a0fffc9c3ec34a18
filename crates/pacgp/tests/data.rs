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
        Err(Error::MissingValue { line, column }) => {
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
        Err(Error::Csv { line, message, .. }) => {
            assert_eq!(line, 3);
            assert!(message.contains("'b'"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    let na = tmp_csv("na.csv", "a,b,y\n1,NA,3\n");
    assert!(matches!(
        load_csv(&na, &CsvOptions::default()),
        Err(Error::MissingValue { line: 2, .. })
    ));

    let inf = tmp_csv("inf.csv", "a,y\n1,inf\n2,3\n");
    assert!(matches!(
        load_csv(&inf, &CsvOptions::default()),
        Err(Error::Csv { line: 2, .. })
    ));

    let empty = tmp_csv("empty.csv", "");
    assert!(matches!(
        load_csv(&empty, &CsvOptions::default()),
        Err(Error::Empty { .. })
    ));
    let header_only = tmp_csv("header.csv", "a,b,y\n");
    assert!(matches!(
        load_csv(&header_only, &CsvOptions::default()),
        Err(Error::Empty { .. })
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
fn standardisation_round_trips_and_rejects_constant_columns() {
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
    let c = faer::Mat::from_fn(4, 2, |i, j| if j == 1 { 7.0 } else { i as f64 });
    match Standardizer::fit(c.as_ref(), &names) {
        Err(Error::ConstantColumn { column }) => assert_eq!(column, "b"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.transform(faer::Mat::zeros(2, 3).as_ref()),
        Err(Error::ShapeMismatch { .. })
    ));
    let t = TargetScaler::fit(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert!((t.unscale_mean(t.transform(&[3.0])[0]) - 3.0).abs() < 1e-14);
    assert!((t.scale_length(t.sd) - 1.0).abs() < 1e-15);
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
    // Without the yes/no reading the votes are not numbers: a typed CSV error.
    let plain = CsvOptions {
        missing: MissingPolicy::Zero,
        ..Default::default()
    };
    assert!(matches!(
        load_csv_classification(&p, &plain),
        Err(Error::Csv { .. })
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
        Err(Error::MissingValue { .. })
    ));
}
