"""The README's Python quick start runs as written and prints the figures it quotes (the
numbers with a decimal point in the ``text`` block after it), from the repository's root."""

import contextlib
import io
import os
import re

from conftest import ROOT

MARKER = "<!-- checked by python/tests/test_docs.py"


def figures(text):
    return re.findall(r"-?\d+\.\d+", text)


def test_readme_python_quick_start_prints_its_figures():
    readme = (ROOT / "README.md").read_text()
    rest = readme[readme.index(MARKER):]
    code = rest.split("```python\n", 1)[1].split("```", 1)[0]
    quoted = rest.split("```text\n", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    printed = set(figures(out.getvalue()))
    assert figures(quoted), "the README quotes no figures"
    for f in figures(quoted):
        assert f in printed, f"the README quotes {f}; the code printed {out.getvalue()!r}"
