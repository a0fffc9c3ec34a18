#!/usr/bin/env python3
"""scikit-learn's own GP test modules, run with pacgp's estimators in place of scikit-learn's.

    sklearn_gp_tests.py [--module gpr|gpc|both] [-k EXPR] [--json PATH] [--list-failures]

Runs the test modules of the *installed* scikit-learn (``sklearn.gaussian_process.tests.
test_gpr`` and ``test_gpc``; nothing is fetched) under pytest, with a plugin that, once the
modules are imported and their tests collected, rebinds the module-level names
``GaussianProcessRegressor`` to ``pacgp.GPRegressor`` and ``GaussianProcessClassifier`` to
``pacgp.GPClassifier``. The tests themselves are scikit-learn's, unchanged: they construct
the estimator by scikit-learn's parameter names and check scikit-learn's behaviour, so every
parameter or attribute pacgp lacks, and every documented difference (θ snapped to the PAC
grid, inputs and targets standardised), shows up as a failure.

Prints, per module, the counts of passed, failed, xfailed (a test scikit-learn itself marks
as an expected failure that failed as expected), xpassed and skipped tests, then the failures
grouped by cause: the exception's type and the first line of its message (numbers left as
they are), most frequent first. ``--json PATH`` writes the same as JSON (``{module:
{"counts": {...}, "causes": [[cause, n, [test ids]], ...]}}``) for a test to read; ``-k``
selects tests as pytest's ``-k`` does. Exits 0 whatever the tests' outcomes (an error in the
harness itself exits non-zero).

Needs pytest, scikit-learn and pacgp (importable: ``maturin develop`` in the repository).
"""

import argparse
import collections
import json
import re
import sys

MODULES = {
    "gpr": "sklearn.gaussian_process.tests.test_gpr",
    "gpc": "sklearn.gaussian_process.tests.test_gpc",
}

#: The names a scikit-learn GP test module imports, and pacgp's estimator that takes each one's
#: place.
SUBSTITUTES = {
    "GaussianProcessRegressor": "GPRegressor",
    "GaussianProcessClassifier": "GPClassifier",
}


def cause_of(report):
    """A failed report's cause: ``"ExceptionType: first line of its message"`` (the crash's
    own line as pytest reports it; the message's first non-empty line when it starts with a
    blank one, as numpy's assertion messages do), at most 160 characters, with memory
    addresses (``0x7f…``, which differ between tests) elided."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None:
        return str(report.longrepr).strip().splitlines()[-1][:160]
    kind, _, message = crash.message.partition(":")
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first = re.sub(r"0x[0-9a-f]+", "0x…", lines[0] if lines else "")
    return f"{kind.strip()}: {first}"[:160]


class Substitute:
    """The pytest plugin: pacgp's estimators in the collected modules, and each test's
    outcome recorded (the call phase's, or the setup's when setup failed)."""

    def __init__(self):
        self.outcomes = {}
        self.causes = {}

    def pytest_collection_modifyitems(self, items):
        import pacgp

        for item in items:
            module = item.module
            for name, ours in SUBSTITUTES.items():
                if hasattr(module, name):
                    setattr(module, name, getattr(pacgp, ours))

    def pytest_runtest_logreport(self, report):
        xfail = hasattr(report, "wasxfail")
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if report.skipped:
                outcome = "xfailed" if xfail else "skipped"
            elif report.passed:
                outcome = "xpassed" if xfail else "passed"
            else:
                outcome = "failed"
                self.causes[report.nodeid] = cause_of(report)
            self.outcomes[report.nodeid] = outcome


def run_module(module, keyword=None):
    """Run one of scikit-learn's test modules with pacgp substituted: ``{"counts": {outcome:
    n}, "causes": [[cause, n, [test ids]], ...]}``, the causes most frequent first."""
    import pytest

    plugin = Substitute()
    args = ["-q", "-p", "no:cacheprovider", "-o", "addopts=", "-W", "ignore",
            "--no-header", "-rN", "--pyargs", module]
    if keyword:
        args += ["-k", keyword]
    code = pytest.main(args, plugins=[plugin])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise SystemExit(f"pytest could not run {module} (exit code {int(code)})")
    counts = collections.Counter(plugin.outcomes.values())
    grouped = collections.defaultdict(list)
    for nodeid, cause in plugin.causes.items():
        grouped[cause].append(nodeid.split("::", 1)[-1])
    causes = sorted(([c, len(ids), ids] for c, ids in grouped.items()), key=lambda t: -t[1])
    keys = ("passed", "failed", "xfailed", "xpassed", "skipped")
    return {"counts": {k: counts.get(k, 0) for k in keys}, "causes": causes}


def summary(name, result, list_failures):
    """The printed summary of one module's run."""
    c = result["counts"]
    total = sum(c.values())
    lines = [f"{name}: {c['passed']} passed of {total} "
             f"({c['failed']} failed, {c['xfailed']} xfailed, {c['xpassed']} xpassed, "
             f"{c['skipped']} skipped)"]
    for cause, n, ids in result["causes"]:
        lines.append(f"  {n:4d}  {cause}")
        if list_failures:
            lines.extend(f"          {i}" for i in ids)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", choices=["gpr", "gpc", "both"], default="both")
    parser.add_argument("-k", dest="keyword", default=None, help="pytest's -k expression")
    parser.add_argument("--json", default=None, help="write the results as JSON here")
    parser.add_argument("--list-failures", action="store_true",
                        help="list the failed tests under each cause")
    args = parser.parse_args(argv)
    names = list(MODULES) if args.module == "both" else [args.module]
    results = {name: run_module(MODULES[name], args.keyword) for name in names}
    print()
    for name in names:
        print(summary(f"test_{name}.py", results[name], args.list_failures))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
