#!/usr/bin/env bash
# The project's test command (README, CI): the Rust workspace's tests, then the Python module's
# tests against a fresh build of the module in a virtual environment.
#   PACGP_VENV   where the venv lives (default .venv; created if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
# The library's docs build without a warning (broken or private intra-doc links); ~25 s.
RUSTDOCFLAGS="-D warnings" cargo doc -p pacgp --no-deps

venv=${PACGP_VENV:-.venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
export VIRTUAL_ENV="$PWD/$venv" PATH="$PWD/$venv/bin:$PATH"
python -m pip install -q --disable-pip-version-check maturin pytest scikit-learn numpy pandas dask distributed
# The module is built for the stable ABI (abi3); a per-version build left by an older checkout
# would be imported before it, so it goes.
rm -f python/pacgp/_pacgp.cpython-*.so
# The dev profile (dependencies at opt-level 3, ours at 1) reuses what `cargo test` just built;
# the tests use small data, so release optimisation would only lengthen the build.
maturin develop -q
# The agreement tests compare with this binary (built by `cargo test --workspace`).
export PACGP_CLI="$PWD/target/debug/pacgp"
python -m pytest -q python/tests
