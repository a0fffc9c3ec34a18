"""Shared fixtures: the repository's data sets and the CLI binary the agreement tests compare to."""

import csv
import os
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


def read_csv(path, target, drop=()):
    """Inputs and target of a CSV file with a header (complete rows only), as float arrays."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    keep = [j for j, name in enumerate(header) if name != target and name not in drop]
    t = header.index(target)
    X = np.array([[float(r[j]) for j in keep] for r in rows])
    y = np.array([float(r[t]) for r in rows])
    return X, y


@pytest.fixture(scope="session")
def boston():
    """Boston housing: 506 rows, 13 inputs, target MEDV (k$)."""
    return read_csv(DATA / "boston-housing" / "boston.csv", "MEDV")


@pytest.fixture(scope="session")
def breast_cancer():
    """Wisconsin breast cancer, the 683 complete rows, labels 2 (benign) / 4 (malignant)."""
    path = DATA / "breast-cancer-wisconsin" / "breast_cancer_wisconsin_complete683.csv"
    with open(path) as f:
        header = f.readline().strip().split(",")
    return read_csv(path, header[-1], drop=("sample_code_number",))


@pytest.fixture(scope="session")
def pacgp_cli():
    """The `pacgp` binary built by `cargo test --workspace` (or PACGP_CLI)."""
    path = pathlib.Path(os.environ.get("PACGP_CLI", ROOT / "target" / "debug" / "pacgp"))
    if not path.exists():
        pytest.fail(f"{path} does not exist: run `cargo build -p pacgp-cli` (scripts/test.sh does)")
    return path


@pytest.fixture(scope="session")
def dask_client():
    """One Dask LocalCluster of two worker processes (one thread each) for every Dask test:
    starting a cluster costs seconds, so the tests share it."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    with cluster, Client(cluster) as client:
        yield client
