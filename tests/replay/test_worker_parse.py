"""A replay's worker runs the rewrite the person's kernel compiled: it neither parses nor
rewrites the cell (issue 17 item 4, "parse once": the kernel parses a cell once per run,
and workers receive what they need from it)."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.record import cell as record_cell
from porter_ext.record import compiled
from porter_ext.record.cell import RecordSettings, exported_rewrite, run_recorded
from porter_ext.record.syntax import CellSyntax
from tests.replay.isolation import replays, run, shell

SOURCE = "y = np.sum(x * 2)\nz = x[0] + 1\n"


def test_a_run_given_the_kernels_rewrite_neither_parses_nor_rewrites(monkeypatch):
    settings = RecordSettings(cell=7)
    kernel = run_recorded(SOURCE, {"np": np, "x": np.arange(3.0)}, settings)
    data = exported_rewrite(SOURCE, settings)
    assert data is not None
    compiled.clear()  # as in a worker: nothing compiled there

    def refused(*args, **kwargs):
        raise AssertionError("the worker parsed or rewrote the cell")

    monkeypatch.setattr(record_cell, "rewrite_and_compile", refused)
    monkeypatch.setattr("porter_ext.record.syntax.parse", refused)
    syntax = CellSyntax(SOURCE, "<porter-cell-7@numpy>")
    syntax.compiled = data
    ns = {"np": np, "x": np.arange(3.0)}
    replayed = run_recorded(SOURCE, ns, settings, filename="<porter-cell-7@numpy>", syntax=syntax)
    assert replayed.error is None and ns["y"] == 6.0 and ns["z"] == 1.0
    assert [(c.name, c.line, c.col) for c in replayed.calls] == [
        (c.name, c.line, c.col) for c in kernel.calls
    ]


def test_a_rewrite_made_for_another_namespace_is_not_taken(monkeypatch):
    # ``range`` rebound by the person changes the rewrite: the worker makes its own
    settings = RecordSettings(cell=8)
    source = "t = 0\nfor i in range(3):\n    t += x[i]\n"
    run_recorded(source, {"np": np, "x": np.arange(3.0)}, settings)
    data = exported_rewrite(source, settings)
    syntax = CellSyntax(source)
    syntax.compiled = data
    ns = {"np": np, "x": np.arange(3.0), "range": lambda n: [0, 1, 2][:n]}
    replayed = run_recorded(source, ns, settings, syntax=syntax)
    assert replayed.error is None and ns["t"] == 3.0


@pytest.mark.slow
def test_a_local_worker_compiles_nothing():
    """A local worker compiles no cell the kernel compiled: each cell reads the cache of
    compiled rewrites where it runs. The first cell empties it (in the kernel and, when
    replayed, in the worker: its code is the kernel's, so the worker compiles nothing);
    the second reads it: 1 in the kernel (the cell itself), 0 in the worker, so its
    replay differs from the original by exactly 1."""
    ip = shell()
    run(ip, "import numpy as np\nx = np.arange(4.0)")
    run(ip, "%%port -b numpy --quiet\nimport porter_ext.record.compiled as kept\nkept.clear()")
    result = run(ip, "%%port -b numpy --quiet\nn = float(len(kept._cache))")
    assert result.success, result.output
    assert ip.user_ns["n"] == 1.0
    [replay] = replays(ip.user_ns["_port"]).values()
    assert replay.status == "ok", (replay.error, replay.reason)
    [output] = [o for o in replay.outputs if o.name == "n"]
    assert output.max_abs_err == 1.0  # the worker's cache: empty
