//! Boston (80/20 split of the peers' protocol, standardised): ML-II RBF-ARD test RMSE and
//! NLPD match scikit-learn's on the same split within 2%. The fixture and how it was made:
//! `tests/fixtures/gen_boston_sklearn.py` → `tests/fixtures/boston_sklearn.json`.

use pacgp::data::{load_csv, CsvOptions, Standardizer, TargetScaler};
use pacgp::kernel::Kernel;
use pacgp::metrics;
use pacgp::regression::exact::{fit_ml2, MlConfig};

#[test]
fn boston_ml2_matches_scikit_learn_within_two_percent() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fx: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/fixtures/boston_sklearn.json")).unwrap(),
    )
    .unwrap();
    let idx = |k: &str| -> Vec<usize> {
        fx[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect()
    };
    let data = load_csv(
        root.join("../../data/boston-housing/boston.csv"),
        &CsvOptions::default(),
    )
    .unwrap();
    let (train, test) = (
        data.subset(&idx("train_index")),
        data.subset(&idx("test_index")),
    );
    let xs = Standardizer::fit(train.x.as_ref(), &train.feature_names).unwrap();
    let ys = TargetScaler::fit(&train.y).unwrap();
    let init = Kernel::se_ard(&[1.0; 13], 1.0);
    let (gp, report) = fit_ml2(
        &init,
        0.1,
        xs.transform(train.x.as_ref()).unwrap(),
        ys.transform(&train.y),
        &MlConfig::default(),
    )
    .unwrap();
    let p = gp
        .predict(xs.transform(test.x.as_ref()).unwrap().as_ref())
        .unwrap();
    let mean: Vec<f64> = p.mean.iter().map(|m| ys.unscale_mean(*m)).collect();
    let var: Vec<f64> = p.noisy_var.iter().map(|v| ys.unscale_var(*v)).collect();
    let rmse = metrics::rmse(&mean, &test.y).unwrap();
    let nlpd = metrics::nlpd(&mean, &var, &test.y).unwrap();
    let (rmse_sk, nlpd_sk, nlml_sk) = (
        fx["test_rmse"].as_f64().unwrap(),
        fx["test_nlpd"].as_f64().unwrap(),
        fx["nlml"].as_f64().unwrap(),
    );
    let nlml = -gp.log_marginal_likelihood();
    eprintln!("pacgp: rmse {rmse:.5} nlpd {nlpd:.5} nlml {nlml:.5} ({report:?})");
    eprintln!("sklearn: rmse {rmse_sk:.5} nlpd {nlpd_sk:.5} nlml {nlml_sk:.5}");
    assert!(
        (rmse - rmse_sk).abs() <= 0.02 * rmse_sk,
        "rmse {rmse} vs {rmse_sk}"
    );
    assert!(
        (nlpd - nlpd_sk).abs() <= 0.02 * nlpd_sk.abs(),
        "nlpd {nlpd} vs {nlpd_sk}"
    );
    // The optimum is at least as good as scikit-learn's (same bounds, same start).
    assert!(
        nlml <= nlml_sk + 1e-3 * nlml_sk.abs(),
        "nlml {nlml} vs {nlml_sk}"
    );
}
