"""Tables as they come, from Python: arrays of objects (text columns), NaN cells with
``missing=``, pandas DataFrames. The cells are coded by the library, as ``pacgp fit`` codes a
CSV file, so the certificates equal the CLI's, and the coding travels in the model file:
``pacgp predict`` on the model the estimator wrote gives the estimator's predictions."""

import csv
import json
import subprocess

import numpy as np
import pytest

import pacgp
from conftest import DATA

TOL = dict(rtol=1e-10, atol=1e-10)
APPROX = dict(rel=1e-10, abs=1e-10)
CRABS = DATA / "crabs" / "crabs.csv"
BC = DATA / "breast-cancer-wisconsin" / "breast_cancer_wisconsin.csv"


def cli(binary, *args):
    out = subprocess.run([str(binary), "--threads", "1", *args, "--json"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def rows_of(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def crabs_table():
    """Crabs: the five measurements and `sex` (M/F) as an object array, species as labels."""
    header, rows = rows_of(CRABS)
    keep = [header.index(c) for c in ("FL", "RW", "CL", "CW", "BD", "sex")]
    X = np.array([[float(r[j]) if j != keep[-1] else r[j] for j in keep] for r in rows],
                 dtype=object)
    y = np.array([r[header.index("sp")] for r in rows])
    return X, y


def test_an_object_array_with_a_text_column_fits_as_the_cli_does(pacgp_cli, tmp_path):
    X, y = crabs_table()
    est = pacgp.GPClassifier().fit(X, y)
    assert est.input_notes_ == ["encoded as categories: x5 (F → −1, M → +1)"]
    assert est.n_features_in_ == 6
    # The CLI on the same cells, named as the estimator names them (x0…x5).
    data = tmp_path / "crabs.csv"
    with open(data, "w") as f:
        f.write("x0,x1,x2,x3,x4,x5,sp\n")
        for row, label in zip(X, y):
            f.write(",".join(str(v) for v in row) + f",{label}\n")
    model = tmp_path / "m.json"
    cli(pacgp_cli, "fit", "--data", str(data), "--method", "laplace", "--categorical", "auto",
        "--out", str(model))
    c = cli(pacgp_cli, "certify", "--model", str(model), "--data", str(data))
    assert est.certificate_["bound"] == pytest.approx(c["bound"], **APPROX)
    # The estimator's model file carries the coding: the CLI predicts from it on the CSV.
    mine = tmp_path / "mine.json"
    mine.write_text(est.model_.to_json())
    p = cli(pacgp_cli, "predict", "--model", str(mine), "--data", str(data))
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], p["p_positive"], **TOL)
    assert list(est.predict(X)) == p["label"]
    # An unseen category is a ValueError naming it; "ignore" codes it as zeros.
    X2 = X[:2].copy()
    X2[0, 5] = "unknown"
    with pytest.raises(ValueError, match="category 'unknown'"):
        est.predict(X2)
    ignoring = pacgp.GPClassifier(unknown_category="ignore").fit(X, y)
    assert ignoring.predict(X2).shape == (2,)


def breast_cancer_with_nan():
    header, rows = rows_of(BC)
    X = np.array([[float(c) if c else np.nan for c in r[1:-1]] for r in rows])
    y = np.array([r[-1] for r in rows])
    return X, y


def test_nan_cells_with_missing_mean_equal_the_cli(pacgp_cli, tmp_path):
    X, y = breast_cancer_with_nan()
    assert np.isnan(X).sum() == 16
    est = pacgp.GPClassifier(missing="mean").fit(X, y)
    model = tmp_path / "m.json"
    cli(pacgp_cli, "fit", "--data", str(BC), "--drop", "sample_code_number", "--method",
        "laplace", "--missing", "mean", "--out", str(model))
    c = cli(pacgp_cli, "certify", "--model", str(model), "--data", str(BC))
    assert est.certificate_["bound"] == pytest.approx(c["bound"], **APPROX)
    assert est.certificate_["n"] == 699
    # Without `missing`, NaN is refused the scikit-learn way.
    with pytest.raises(ValueError):
        pacgp.GPClassifier().fit(X, y)
    # missing="drop": fitted on the 683 complete rows; predict refuses incomplete rows,
    # evaluate leaves them out.
    dropped = pacgp.GPClassifier(missing="drop").fit(X, y)
    assert dropped.certificate_["n"] == 683
    with pytest.raises(ValueError, match="missing='drop'"):
        dropped.predict(X)
    assert dropped.evaluate(X, y)["n"] == 683


def test_a_dataframe_with_text_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(CRABS)
    X, y = frame.drop(columns=["sp", "index"]), frame["sp"]
    est = pacgp.GPClassifier().fit(X, y)
    assert list(est.feature_names_in_) == ["FL", "RW", "CL", "CW", "BD", "sex"]
    assert est.input_notes_ == ["encoded as categories: sex (F → −1, M → +1)"]
    Xo, yo = crabs_table()
    same = pacgp.GPClassifier().fit(Xo, yo)
    assert est.certificate_["bound"] == pytest.approx(same.certificate_["bound"], **APPROX)
    np.testing.assert_allclose(est.predict_proba(X), same.predict_proba(Xo), **TOL)
    # Columns are found by name: another order reads the same.
    np.testing.assert_allclose(est.predict_proba(X[X.columns[::-1]]), est.predict_proba(X), **TOL)


def na_category_table():
    """40 rows: a number `x`, a text column `grade` whose categories are "NA" and "b", a few
    cells "-" in a number column `z`, and labels from x and the grade."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    grade = np.where(np.arange(40) % 3 == 0, "NA", "b")
    z = [("-" if i % 7 == 0 else repr(float(v))) for i, v in enumerate(rng.normal(size=40))]
    y = np.where(x + (grade == "NA") * 1.2 > 0.4, "pos", "neg")
    X = np.array([[float(a), g, c] for a, g, c in zip(x, grade, z)], dtype=object)
    return X, y


def write_table(path, X, y):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["x0", "x1", "x2", "y"])
        for row, label in zip(X, y):
            w.writerow([*row, label])


def test_na_values_choose_the_missing_cells_as_fit_na_values_does(pacgp_cli, tmp_path):
    X, y = na_category_table()
    data = tmp_path / "na.csv"
    write_table(data, X, y)
    # By default "NA" is a missing cell: with no `missing`, refused, naming the cell.
    with pytest.raises(ValueError, match="NA"):
        pacgp.GPClassifier().fit(X, y)
    # na_values=["-"]: "NA" is a category and "-" a missing number, filled with the mean;
    # the certificate is the CLI's with --na-values - on the same file.
    est = pacgp.GPClassifier(na_values=["-"], missing="mean").fit(X, y)
    assert any("x1 (NA → −1, b → +1)" in n for n in est.input_notes_), est.input_notes_
    model = tmp_path / "m.json"
    cli(pacgp_cli, "fit", "--data", str(data), "--method", "laplace", "--categorical", "auto",
        "--na-values", "-", "--missing", "mean", "--out", str(model))
    c = cli(pacgp_cli, "certify", "--model", str(model), "--data", str(data))
    assert est.certificate_["bound"] == pytest.approx(c["bound"], **APPROX)
    assert est.certificate_["n"] == 40
    # The cells travel with the model: a later "-" is filled, a later "NA" is the category.
    later = np.array([[0.1, "NA", "-"], [0.2, "b", "0.3"]], dtype=object)
    assert est.predict_proba(later).shape == (2, 2)
    assert json.loads(est.model_.to_json())["input_coding"]["missing_cells"] == ["", "-"]
    # A NaN cell stays missing whatever na_values says (the estimators pass it as ""); with
    # na_values=[] the "-" cells are text, so x2 is a category column and no row is left out
    # but the NaN one.
    with_nan = X.copy()
    with_nan[1, 0] = np.nan
    dropped = pacgp.GPClassifier(na_values=[], missing="drop").fit(with_nan, y)
    assert dropped.certificate_["n"] == 39


def test_a_dataframe_with_dash_cells_reads_them_as_missing_with_na_values(pacgp_cli, tmp_path):
    """A pandas DataFrame whose number column has "-" cells: with na_values=["-"] they are
    missing cells, filled with the training mean as `fit --na-values - --missing mean` fills
    them in the same table written as CSV; without it "-" is text and the column a category."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=40), rng.normal(size=40)
    dash = np.arange(40) % 6 == 0  # rows 0, 6, …, 36: 7 cells
    frame = pd.DataFrame({"a": a, "b": [("-" if d else repr(float(v))) for d, v in zip(dash, b)]})
    y = np.sin(a) + 0.5 * np.where(dash, 0.0, b) + 0.1 * rng.normal(size=40)
    est = pacgp.GPRegressor(na_values=["-"], missing="mean").fit(frame, y)
    assert est.input_notes_ == ["missing cells read as the training mean: b (7)"]
    assert list(est.feature_names_in_) == ["a", "b"]
    assert json.loads(est.model_.to_json())["input_coding"]["missing_cells"] == ["", "-"]
    data, model = tmp_path / "dash.csv", tmp_path / "m.json"
    frame.assign(y=y).to_csv(data, index=False)
    subprocess.run([str(pacgp_cli), "--threads", "1", "fit", "--data", str(data), "--method",
                    "gpr", "--na-values", "-", "--missing", "mean", "--out", str(model)],
                   check=True, capture_output=True)
    p = cli(pacgp_cli, "predict", "--model", str(model), "--data", str(data))
    np.testing.assert_allclose(est.predict(frame), p["mean"], **TOL)
    # Without na_values "-" is a category, so b is 34 categories (33 numbers and "-").
    text = pacgp.GPRegressor(missing="mean").fit(frame, y)
    assert text.input_notes_[0].startswith("encoded as categories: b (34 categories"), \
        text.input_notes_
