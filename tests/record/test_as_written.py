"""After a recorded cell, the functions it made have the code as written (as_written.py)."""

from __future__ import annotations

import numpy as np

from porter_ext.record import as_written
from porter_ext.record.cell import RecordSettings, cell_filename, run_recorded


def _recorded(source: str, ns: dict, cell: int) -> list[str]:
    """Run ``source`` recorded as cell ``cell`` with the earlier cells' functions armed,
    then leave its functions as written; the names of the calls it recorded."""
    filename = cell_filename(cell, source)
    with as_written.armed():
        run = run_recorded(source, ns, RecordSettings(cell=cell), filename=filename)
        as_written.restore(ns, source, filename)
    assert run.exception is None, run.error
    return [c.name for c in run.calls]


def _plain(source: str) -> dict:
    ns = {"np": np, "__name__": "__main__"}
    exec(compile(source, "<plain>", "exec"), ns)
    return ns


def _same(f, g) -> bool:
    return f.__code__.co_names == g.__code__.co_names and f.__code__.co_code == g.__code__.co_code


def test_lambdas_of_one_line_each_get_their_own_code():
    source = "f, g = (lambda v: np.exp(v)), (lambda v: np.sum(v) * 2)\ny = f(1.0) + g(np.ones(2))\n"
    ns = {"np": np, "__name__": "__main__"}
    assert {"numpy.exp", "numpy.sum"} <= set(_recorded(source, ns, 901))
    plain = _plain(source)
    assert _same(ns["f"], plain["f"]) and _same(ns["g"], plain["g"])
    assert ns["f"].__code__.co_filename == "<porter-cell-901>"


def test_functions_made_later_by_a_recorded_function_are_left_as_written_too():
    factory = "import functools\ndef make(k):\n    def inner(v):\n        return np.exp(v) * k\n    return inner\n"
    wrap = (
        "def logged(fn):\n    @functools.wraps(fn)\n    def call(*a):\n        return fn(*a)\n"
        "    return call\n@logged\ndef square(v):\n    return np.square(v)\n"
    )
    ns = {"np": np, "__name__": "__main__"}
    _recorded(factory + wrap, ns, 902)
    # a later recorded cell records the calls inside them, and keeps what it makes as written
    calls = _recorded("h = make(2)\ny = h(1.0) + square(3.0)\n", ns, 903)
    assert {"numpy.exp", "numpy.square"} <= set(calls)
    plain = _plain(factory + wrap)
    assert _same(ns["make"], plain["make"]) and _same(ns["h"], plain["make"](2))
    assert _same(ns["square"].__wrapped__, plain["square"].__wrapped__)
    assert _same(ns["square"], plain["square"])
    # outside a recorded cell they run as written and record nothing
    assert ns["h"](0.0) == 2.0 and ns["square"](2.0) == 4.0
