"""`%%port` and `%port on` record a cell on one path (`porter_ext.session.cell`): the same
cell gives the same entry either way, its replays and the cell's definitions included."""

from __future__ import annotations

import pytest

from porter_ext.report.codec import cell_to_dict

pytest.importorskip("torch")

CELL = (
    "import numpy as np\n"
    "def scaled(v):\n"
    "    return np.multiply(v, 2.0)\n"
    "x = np.linspace(0.0, 1.0, 8)\n"
    "y = np.sum(scaled(x) ** 2)\n"
)


def _shape(entry) -> dict:
    """What an entry says, without what differs between two runs (times, counts, places)."""
    data = cell_to_dict(entry)
    return {
        "calls": [(c["name"], c["line"], c["col"], c["status"]) for c in data["calls"]],
        "replays": [(r["backend"], r["status"], r["role"]) for r in data["replays"]],
        "outputs": sorted(
            (r["backend"], o["name"], o["within_tolerance"])
            for r in data["replays"]
            for o in r["outputs"]
        ),
        "headline": data["headline"],
    }


def test_port_on_and_the_cell_magic_give_the_same_entry(port_shell):
    port_shell.run_line_magic("port", "backends numpy,torch")
    try:
        assert port_shell.run_cell(f"%%port\n{CELL}", store_history=True).success
        magic = port_shell.user_ns["_port"].entry
        port_shell.run_line_magic("port", "on")
        assert port_shell.run_cell(CELL, store_history=True).success
        port_shell.run_line_magic("port", "off")
        on = port_shell.user_ns["_port"].entry
    finally:
        port_shell.run_line_magic("port", "backends none")
    assert on is not magic and on.execution_count != magic.execution_count
    # the %%port line is the cell's line 0: the calls sit on the same lines either way
    assert _shape(on) == _shape(magic)
    assert {r["backend"] for r in cell_to_dict(on)["replays"]} >= {"numpy", "torch"}
    # what the cell defined is left as written after either run
    assert port_shell.user_ns["scaled"].__code__.co_filename == (
        port_shell.compile.get_code_name(CELL, CELL, on.execution_count)
    )


def test_a_cell_that_does_not_parse_is_kept_with_its_error(port_shell):
    port_shell.run_cell("%%port\nx = (1,\n", store_history=True)
    entry = port_shell.run_line_magic("port", "status")
    from porter_ext.session.session import get_session

    last = get_session(port_shell).cells[-1]
    assert last.error is not None and last.error.type == "SyntaxError"
    assert last.calls == [] and entry is None


def test_a_function_rewritten_under_port_on_runs_in_a_later_cells_worker(port_shell):
    """Code IPython compiles from porter's rewrite (``%port on``) reads its sites from this
    kernel's table by index: a worker replaying a later cell that calls it must hold the
    same table (it failed with IndexError when the worker had its own)."""
    port_shell.run_cell("import numpy as np\nx = np.ones((2, 3))", store_history=True)
    port_shell.run_line_magic("port", "on")
    try:
        assert port_shell.run_cell("def f(v):\n    return v.sum(1)\n", store_history=True).success
    finally:
        port_shell.run_line_magic("port", "off")
    assert port_shell.run_cell("%%port -b numpy\nz = f(x) * 2", store_history=True).success
    replays = cell_to_dict(port_shell.user_ns["_port"].entry)["replays"]
    numpy = next(r for r in replays if r["backend"] == "numpy")
    assert numpy["status"] == "ok", numpy
