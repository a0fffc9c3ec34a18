#!/usr/bin/env bash
# Build the Python module once as an abi3 wheel (one file for every CPython >= 3.9 on this
# platform: dist/pacgp-<version>-cp39-abi3-<platform>.whl), then check it as a user without
# Rust gets it: installed into a fresh venv with no cargo or rustc on PATH (binary packages
# only), imported from the venv, and the Python tests run against the installed package, not
# python/. Not part of scripts/test.sh: the release build takes about 15 minutes on two cores.
#   PACGP_VENV           the build venv, with maturin (default .venv, as scripts/test.sh)
#   PACGP_WHEEL_PYTHON   the interpreter of the check venv (default python3; any >= 3.9)
#   PACGP_CLI            the `pacgp` binary the CLI agreement tests compare with (default
#                        target/release/pacgp, built here if missing)
#   PACGP_WHEEL_PYTEST   arguments for pytest instead of the whole suite, e.g. "-k 'not dask'"
#   --build-only         build the wheel, skip the check
# Offline, point pip at a directory of wheels with pip's own PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

venv=${PACGP_VENV:-.venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
export VIRTUAL_ENV="$root/$venv" PATH="$root/$venv/bin:$PATH"
python -m pip install -q --disable-pip-version-check maturin
rm -f dist/pacgp-*.whl
# The features (abi3) and the module layout come from pyproject.toml's [tool.maturin].
maturin build --release --out dist
wheels=(dist/pacgp-*-abi3-*.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
    echo "wheel.sh: expected one abi3 wheel in dist/, found: $(ls dist)" >&2
    exit 1
fi
wheel=$root/${wheels[0]}
echo "built $wheel"
[ "${1:-}" = "--build-only" ] && exit 0

cli=${PACGP_CLI:-$root/target/release/pacgp}
[ -x "$cli" ] || cargo build --release -p pacgp-cli

# The check venv, on a PATH without the Rust toolchain.
python_cmd=$(command -v "${PACGP_WHEEL_PYTHON:-python3}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python_cmd" -m venv "$tmp/venv"
unset VIRTUAL_ENV
export PATH="$tmp/venv/bin:/usr/local/bin:/usr/bin:/bin"
for tool in cargo rustc rustup; do
    if command -v "$tool" >/dev/null; then
        echo "wheel.sh: $tool is still on PATH ($(command -v "$tool")): not a check without Rust" >&2
        exit 1
    fi
done
python -m pip install -q --disable-pip-version-check --only-binary=:all: "$wheel[test]" pandas

# From outside the repository, so that `import pacgp` can only find the installed package;
# the plugin fails the run if the tests imported anything else.
cd "$tmp"
cat > wheel_check.py <<'EOF'
import pathlib
import sys

def pytest_sessionfinish(session, exitstatus):
    path = pathlib.Path(sys.modules["pacgp"].__file__).resolve()
    print(f"\npacgp imported from {path.parent}")
    if pathlib.Path(sys.prefix).resolve() not in path.parents:
        print("wheel.sh: the tests did not import the installed package", file=sys.stderr)
        session.exitstatus = 1
EOF
python -c "import sys, pacgp, pacgp._pacgp as m; print('python', sys.version.split()[0], '- pacgp from', m.__file__)"
export PACGP_CLI="$cli"
eval "args=(${PACGP_WHEEL_PYTEST:-})"
python -m pytest -q -p no:cacheprovider -p wheel_check --rootdir "$root" "${args[@]}" \
    "$root/python/tests"
