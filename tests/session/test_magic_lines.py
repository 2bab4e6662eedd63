"""The code of ``%time``/``%timeit`` lines in recorded cells is recorded like the cell's
own lines, at its line and column as written (turn3:
timeit_line_and_random_choice_not_recorded, the ``%timeit`` part)."""

from __future__ import annotations

import json

import pytest

SETUP = "import numpy as np\nx = np.linspace(-3, 3, 100)\nbins = np.linspace(-5, 5, 20)\n"


@pytest.fixture
def shell(port_shell):
    port_shell.run_cell(SETUP, store_history=True)
    yield port_shell
    port_shell.run_line_magic("port", "off")


def _calls(shell) -> list[tuple[int, int, str, str]]:
    entry = json.loads(shell.user_ns["_port"].to_json())
    return sorted((c["line"], c["col"], c["name"], c["status"]) for c in entry["calls"])


def test_calls_on_time_and_timeit_lines_are_findings_at_their_line_and_column(shell, capsys):
    body = (
        "%time c0, e0 = np.histogram(x, bins)\n"
        "%timeit -n1 -r1 counts, edges = np.histogram(x, bins)\n"
        "c2, e2 = np.histogram(x, bins)\n"
    )
    result = shell.run_cell(f"%%port --no-replay --quiet\n{body}", store_history=True)
    assert result.success
    assert _calls(shell) == [
        (1, 15, "numpy.histogram", "non_standard"),
        (2, 32, "numpy.histogram", "non_standard"),
        (3, 9, "numpy.histogram", "non_standard"),
    ]
    out = capsys.readouterr().out
    assert "Wall time" in out and "per loop" in out  # the magics ran as without porter
    assert "c0" in shell.user_ns and "counts" not in shell.user_ns


def test_columns_on_a_timeit_line_count_characters(shell):
    body = '%timeit -n1 -r1 s = "température 🔥"; c = np.histogram(x, bins)\n'
    shell.run_cell(f"%%port --no-replay --quiet\n{body}", store_history=True)
    col = body.index("np.histogram")
    assert _calls(shell) == [(1, col, "numpy.histogram", "non_standard")]


def test_a_timeit_cell_magic_records_its_setup_and_its_body(shell):
    body = "%%timeit -n1 -r1 b2 = np.sort(bins)\nc2, e2 = np.histogram(x, b2)\n"
    shell.run_cell(f"%%port --no-replay --quiet\n{body}", store_history=True)
    assert _calls(shell) == [
        (1, body.index("np.sort"), "numpy.sort", "standard"),
        (2, 9, "numpy.histogram", "non_standard"),
    ]


def test_a_timeit_line_inside_a_function_of_the_cell_is_recorded_at_its_line(shell):
    body = "def timed():\n    %timeit -n1 -r1 np.histogram(x, bins)\ntimed()\n"
    shell.run_cell(f"%%port --no-replay --quiet\n{body}", store_history=True)
    calls = [c for c in _calls(shell) if c[2] == "numpy.histogram"]
    assert calls == [(2, 20, "numpy.histogram", "non_standard")]


def test_port_on_records_timeit_lines_of_plain_cells_at_their_positions(shell):
    shell.run_line_magic("port", "on")
    shell.run_cell(
        "%timeit -n1 -r1 c3 = np.histogram(x, bins)\ny = np.histogram(x, bins)\n",
        store_history=True,
    )
    assert _calls(shell) == [
        (1, 21, "numpy.histogram", "non_standard"),
        (2, 4, "numpy.histogram", "non_standard"),
    ]
    # a %%port cell under %port on: its own recording puts the line where it is
    shell.run_cell("%%port --no-replay --quiet\n%timeit -n1 -r1 np.histogram(x, bins)\n")
    assert _calls(shell) == [(1, 16, "numpy.histogram", "non_standard")]


def test_a_timeit_typed_outside_recorded_cells_is_left_alone(shell):
    shell.run_cell("%%port --no-replay --quiet\ny = np.histogram(x, bins)\n", store_history=True)
    before = list(shell.ast_transformers)
    result = shell.run_cell("%timeit -n1 -r1 np.histogram(x, bins)\n", store_history=True)
    assert result.success and shell.ast_transformers == before
