"""The shared table of bad table-reading options (crates/pacgp/tests/fixtures/
bad_table_options.json, also read by the command line's test): the Python module, given the
fixture's table as columns of text cells, refuses each case with a ValueError stating the
library's words for the problem and naming the option as a Python caller passes it."""

import json
from pathlib import Path

import pytest

from pacgp import _pacgp

FIXTURE = json.loads(
    (Path(__file__).parents[2] / "crates/pacgp/tests/fixtures/bad_table_options.json").read_text()
)


def inputs(table):
    """The table's input columns (all but the target, the last) as columns of cells."""
    header, rows = table["header"], table["rows"]
    columns = [[row[j] for row in rows] for j in range(len(header) - 1)]
    return columns, header[:-1]


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: c["says"][:30])
def test_bad_table_option_is_refused_with_the_option_named(case):
    columns, names = inputs(FIXTURE["table"])
    with pytest.raises(ValueError) as e:
        _pacgp.fit_input_coding(columns, names, **case["options"])
    message = str(e.value)
    assert case["says"] in message
    assert case["option"] in message
    assert "--" not in message
