"""A call made by code another cell wrote carries ``origin`` (CONTRACT.md ``calls[]``):
where that code is written, and where this cell called into it. Real IPython shells
with porter loaded; mirrors porter_ext/session/places.py."""

from __future__ import annotations

import json

from porter_ext.report.codec import report_to_json
from porter_ext.report.load import report_from_json
from porter_ext.session import get_session
from tests.replay.isolation import run

DEFINING = (
    "%%port --no-replay --quiet\n"
    "import numpy as np\n"
    "# the helper\n"
    "def f(x):\n"
    "    label = 'température 🔥'; return np.sum(x, 0) * 2\n"
)
CALLING = "%%port --no-replay --quiet\nnote = 'ça'\ny = f(np.ones((2, 2)))\n"


def _calls(ip) -> list[dict]:
    return json.loads(ip.user_ns["_port"].to_json())["calls"]


def test_a_call_in_a_function_of_an_earlier_cell_carries_where_it_is_written(port_shell):
    ip = port_shell
    first = run(ip, DEFINING)
    assert first.success, first.output
    defining_count = first.execution_count
    second = run(ip, CALLING)
    assert second.success, second.output
    calls = {c["name"]: c for c in _calls(ip)}
    total = calls["numpy.sum"]
    assert total["status"] == "non_standard_usage"
    # where the calling cell called into the code: `f(np.ones((2, 2)))` on its line 2
    assert (total["line"], total["col"], total["end_line"], total["end_col"]) == (2, 4, 2, 22)
    # where it is written: line 4 of the defining cell, columns in characters (the
    # non-ASCII string before it on the line does not move them)
    assert total["origin"] == {
        "index": None,
        "execution_count": defining_count,
        "line": 4,
        "col": 36,
        "end_line": 4,
        "end_col": 48,
        "cell_id": None,
        # the defining %%port cell's body starts on its editor's line 2
        "first_line": 2,
        "editor_line": 5,
        "label": f"In [{defining_count}]",
    }
    assert "in code from cell" not in total["message"]
    # the panel's row is drawn from the resolved origin: the editor's line 5 of the
    # defining cell (its %%port line is line 1), the calling cell named
    rows = json.loads(ip.user_ns["_port"].to_json())["diagnostics"]
    [row] = [r for r in rows if r["name"] == "numpy.sum"]
    assert (row["line"], row["origin"]["first_line"]) == (5, 2)
    assert row["called_from"] == f"In [{second.execution_count}], line 3"
    # the operator is marked over its whole expression, where it is written
    product = calls["ndarray.__mul__"]["origin"]
    assert (product["line"], product["col"], product["end_col"]) == (4, 36, 52)
    # the cell's own calls have none
    assert calls["numpy.ones"]["origin"] is None
    assert (calls["numpy.ones"]["col"], calls["numpy.ones"]["end_col"]) == (6, 21)
    # the JSON is the report's: it validates and loads back the same
    again = report_from_json(report_to_json(get_session(ip).report()))
    [loaded] = [c for c in again.cells[-1].calls if c.name == "numpy.sum"]
    assert loaded.origin is not None and loaded.origin.line == 4 and loaded.origin.col == 36


def test_the_front_ends_cell_id_of_the_defining_cell_is_carried(port_shell):
    ip = port_shell
    ip.parent_header = {"metadata": {"cellId": "cell-def-1"}}
    try:
        assert run(ip, DEFINING).success
        ip.parent_header = {"metadata": {"cellId": "cell-call-2"}}
        assert run(ip, CALLING).success
    finally:
        del ip.parent_header
    [total] = [c for c in _calls(ip) if c["name"] == "numpy.sum"]
    assert total["origin"]["cell_id"] == "cell-def-1"


def test_a_call_written_in_the_cell_itself_has_no_origin(port_shell):
    ip = port_shell
    source = (
        "%%port --no-replay --quiet\nimport numpy as np\n"
        "def g(x):\n    return np.sum(x, 0)\ng(np.ones(2))\n"
    )
    assert run(ip, source).success
    [total] = [c for c in _calls(ip) if c["name"] == "numpy.sum"]
    assert total["origin"] is None and total["line"] == 3
