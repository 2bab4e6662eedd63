"""The hooks' fast path for indexing (``index_guard`` in guards.py), in a real IPython
shell on real numpy, torch and array-api-strict arrays: a loop cell records the same
calls, statuses, counts and devices with it as without it, and what its guard must not
accept (a value or an index of another kind than before) goes the careful way."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import porter_ext
from porter_ext.record import operations
from porter_ext.record.guards import index_guard
from porter_ext.record.hooks_importlib_bootstrap import UNARY
from porter_ext.record.recorder import Recorder
from tests.replay.isolation import run

torch = pytest.importorskip("torch")

#: the arrays of each library the loop cell runs on (``values`` 1-D float, ``out`` 1-D,
#: ``m`` 2-D, ``idx`` a 1-D integer array)
SETUPS = {
    "numpy": "import numpy as xp\n",
    "torch": "import torch as xp\n",
    "strict": "import array_api_strict as xp\n",
}
ARRAYS = """
values = xp.arange(1.0, 9.0)
out = xp.zeros(8)
m = xp.zeros((8, 2))
idx = xp.arange(8) % 3
plain = [0.0, 1.0]
"""
LOOP = """%%port --no-replay --quiet
def loop(values, out, m, idx, plain):
    for i in range(8):
        out[i] = 1.0 / values[i]
        m[i, 0] = values[i] * 2
        m[i, 1] = 3
        out[i] += m[i, 0]
        w = out[i:i + 1]
        e = m[..., 1]
        k = values[idx[i]]
        plain[i % 2] = plain[0] + 1.0
    s = m[idx, 0]
    t = out[out > 2.0]
    return w, e, k, s, t
r = loop(values, out, m, idx, plain)
"""


def _records(ip, setup: str, cell: str) -> list[tuple]:
    porter_ext.clear_caches()  # no guard remembered from an earlier run (memo.py)
    assert run(ip, setup).success
    result = run(ip, cell)
    assert result.success, result.output
    calls = ip.user_ns["_port"].entry.calls
    return sorted(repr(sorted(dataclasses.asdict(c).items())) for c in calls)


class _Spy:
    """What reached `Recorder.operation` (the careful path) for indexing."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[str, object, object]] = []
        self.sites: list[tuple] = []
        careful = Recorder.operation

        def operation(rec, site, name, a, b, value=UNARY):
            if name in ("__getitem__", "__setitem__"):
                self.seen.append((name, b, value))
                self.sites.append((*site[:4], name))
            return careful(rec, site, name, a, b, value)

        monkeypatch.setattr(Recorder, "operation", operation)


def _without_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(operations, "index_guard", lambda *args: None)


@pytest.mark.parametrize("library", sorted(SETUPS))
def test_a_loop_records_the_same_with_and_without_the_fast_path(port_shell, monkeypatch, library):
    if library == "strict":
        pytest.importorskip("array_api_strict")
    setup = SETUPS[library] + ARRAYS
    fast = _records(port_shell, setup, LOOP)
    # run again: the sites' guards remembered from the first run (memo.py) count it
    assert run(port_shell, setup).success and run(port_shell, LOOP).success
    again = [
        repr(sorted(dataclasses.asdict(c).items())) for c in port_shell.user_ns["_port"].entry.calls
    ]
    assert sorted(again) == fast
    with monkeypatch.context() as patch:
        _without_fast_path(patch)
        careful = _records(port_shell, setup, LOOP)
    assert fast == careful
    assert any("__setitem__" in r and "'count', 8" in r for r in fast), fast


@pytest.mark.parametrize("library", sorted(SETUPS))
def test_a_loop_takes_the_careful_path_once_per_site(port_shell, monkeypatch, library):
    if library == "strict":
        pytest.importorskip("array_api_strict")
    spy = _Spy(monkeypatch)
    _records(port_shell, SETUPS[library] + ARRAYS, LOOP)
    # 8 turns of the loop: the careful path sees each indexing site once (the plain
    # list's sites too: their slots are filled then)
    assert len(spy.sites) == len(set(spy.sites)) >= 15, spy.sites


SLOW_WAYS = """%%port --no-replay --quiet
def writes(a, m):
    for v in (1, 2, 3, 2.5, 4):
        a[0] = v
    for k in ((0, 1), (1, 0), 1, 0):
        y = m[k]
    for b in (a, a * 1.5, a):
        b[1] = 1
    for _ in range(3):
        s = m[a[1:]]
    return y
y = writes(a, m)
"""


def test_what_the_guard_does_not_accept_goes_the_careful_way(port_shell, monkeypatch):
    setup = "import numpy as np\na = np.zeros(3, dtype=np.int64)\nm = np.zeros((2, 2))\n"
    with monkeypatch.context() as patch:
        spy = _Spy(patch)
        fast = _records(port_shell, setup, SLOW_WAYS)
    writes = [(b, v) for name, b, v in spy.seen if name == "__setitem__"]
    # a float written into an integer array after integers, and the integer after it
    assert [v for _, v in writes[:3]] == [1, 2.5, 4], writes
    # a one-index read of a 2-D array after two-index reads
    reads = [b for name, b, _ in spy.seen if name == "__getitem__"]
    assert reads[:2] == [(0, 1), 1], spy.seen
    # a write into an array of another dtype, and back
    assert len(writes) == 6, writes
    with monkeypatch.context() as patch:
        _without_fast_path(patch)
        careful = _records(port_shell, setup, SLOW_WAYS)
    assert fast == careful
    odd = [r for r in fast if "non_standard_usage" in r and "__getitem__'" in r]
    # m[1], m[0]: one index for two axes; m[a[1:]]: an integer array for one of two
    assert len(odd) == 2, fast
    assert any("'count', 2" in r and ", ...]')" in r for r in odd), odd
    assert any("'count', 3" in r and "xp.take" in r for r in odd), odd


def test_the_guard_checks_each_kind_the_verdict_reads():
    x = np.zeros((2, 3), dtype=np.int64)
    mask = np.ones(3, dtype=bool)
    guard = index_guard(x, (0, slice(None, 2)), 1, UNARY)
    assert guard(x, (1, slice(0, 3)), 5) == ("cpu",)
    assert guard(x, (1, slice(0, 3)), 2.5) is None  # float into an int array
    assert guard(x, (1, slice(None, None, -1)), 5) is None  # a negative step
    assert guard(x, 1, 5) is None  # fewer indices than dimensions
    assert guard(x, (1, 2, 3), 5) is None
    assert guard(x.astype(np.float64), (1, slice(0, 3)), 5) is None
    assert guard(x[0], (1, slice(0, 3)), 5) is None  # another rank
    read = index_guard(x, (Ellipsis, mask), UNARY, UNARY)
    assert read(x, (Ellipsis, mask)) == ("cpu", "cpu")
    assert read(x, (Ellipsis, mask.astype(np.int64))) is None
    assert read(x, (None, mask)) is None
    # kinds it does not check: every such index goes the careful way
    assert index_guard(x, [0, 1], UNARY, UNARY) is None
    assert index_guard(x, (0,) * 9, UNARY, UNARY) is None
    assert index_guard(x, 0, [1, 2, 3], UNARY) is None
    assert index_guard(x, slice(np.int64(1), None, np.int64(1)), UNARY, UNARY) is None
