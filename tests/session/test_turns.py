"""``%%port`` cells run from two threads each record their own calls (attacks/59 as a
test); a cell whose turn cannot come (the running cell waits for it) runs unrecorded and
says so. Real IPython shells, real worker kernels."""

from __future__ import annotations

import contextlib
import io
import threading

import pytest

from porter_ext.session import get_session
from porter_ext.session.turns import TURNS

pytestmark = pytest.mark.slow

CELLS = {
    "A": "%%port -b numpy,strict\na1 = x.sum(0) * 2\na2 = np.sum(x) + 1",
    "B": "%%port -b numpy,strict\nb1 = z.prod(0) + 3\nb2 = np.sum(z) - 1",
}


def calls_made(entry) -> int:
    return sum(call.count for call in entry.calls)


def test_two_threads_each_record_their_own_cell(port_shell):
    port_shell.run_cell("import numpy as np\nx = np.arange(6.0)\nz = np.ones(6)")
    port_shell.run_cell("%%port -b numpy,strict --quiet\nw = x + z")  # workers start here
    session = get_session(port_shell)
    before = len(session.cells)
    outcomes: dict[str, object] = {}

    def run(name: str) -> None:
        outcomes[name] = port_shell.run_cell(CELLS[name])

    threads = [threading.Thread(target=run, args=(name,)) for name in CELLS]
    with contextlib.redirect_stdout(io.StringIO()):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)  # only against a hang
    assert not any(thread.is_alive() for thread in threads)
    assert all(outcome.success for outcome in outcomes.values()), outcomes
    ns = port_shell.user_ns
    assert (ns["a1"], ns["a2"], ns["b1"], ns["b2"]) == (30.0, 16.0, 4.0, 5.0)
    recorded = {entry.source.splitlines()[0]: entry for entry in session.cells[before:]}
    assert len(recorded) == 2
    for name, cell in CELLS.items():
        entry = recorded[cell.splitlines()[1]]
        assert calls_made(entry) == 4, (name, [(c.name, c.count) for c in entry.calls])
        numpy = [r.status for r in entry.replays if r.backend == "numpy"]
        assert numpy == ["ok", "ok"], [(r.backend, r.reason, r.error) for r in entry.replays]
    later = port_shell.run_cell("%%port -b numpy\nc = x + z")
    assert later.success
    assert {r.status for r in session.cells[-1].replays} == {"ok"}, session.cells[-1].replays


def test_a_cell_that_waits_for_its_own_caller_runs_unrecorded_and_says_so(port_shell, monkeypatch):
    monkeypatch.setattr(TURNS, "wait_for_run", 0.5)
    port_shell.run_cell("import numpy as np, threading\nx = np.arange(3.0)")
    session = get_session(port_shell)
    before = len(session.cells)
    inner = "%%port -b numpy\nb = x * 2\nb.sum()"
    port_shell.user_ns["INNER"] = inner
    outer = (
        "%%port --no-replay\n"
        "a = x + 1\n"
        "t = threading.Thread(target=lambda: get_ipython().run_cell(INNER))\n"
        "t.start()\n"
        "t.join(120)\n"
        "alive = t.is_alive()"
    )
    held = io.StringIO()
    with contextlib.redirect_stdout(held):
        result = port_shell.run_cell(outer)
    assert result.success, held.getvalue()
    ns = port_shell.user_ns
    assert ns["alive"] is False
    assert ns["b"].tolist() == [0.0, 2.0, 4.0]  # the inner cell ran, as without porter
    assert "this %%port cell ran unrecorded" in held.getvalue()
    [entry] = session.cells[before:]  # only the outer cell is in the report
    assert entry.source.startswith("a = x + 1")
    assert [c.name for c in entry.calls if c.kind == "operator"] == ["ndarray.__add__"]
