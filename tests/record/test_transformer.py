"""The call-site rewrite leaves Python's frame-sensitive calls and IPython's own alone."""

from __future__ import annotations

import ast

import numpy as np

from porter_ext.record import run_recorded
from porter_ext.record.transformer import transform
from tests.record.rewritten import rewritten_text


def test_frame_sensitive_builtins_keep_working():
    source = (
        "class A:\n    def f(self):\n        return 1\n"
        "class B(A):\n    def f(self):\n        return super().f() + 1\n"
        "n = B().f()\nloc = sorted(locals())[:1]\nv = eval('n + 1')\n"
    )
    ns: dict = {}
    run = run_recorded(source, ns)
    assert run.exception is None
    assert ns["n"] == 2 and ns["v"] == 3


def test_keywords_named_like_the_hooks_parameters_pass_through():
    ns: dict = {}
    run = run_recorded("def g(site=0, f=0):\n    return site + f\nr = g(site=1, f=2)\n", ns)
    assert run.exception is None and ns["r"] == 3


def test_ipython_calls_are_not_rewritten():
    tree = transform(ast.parse("get_ipython().run_line_magic('time', 'x = np.ones(2)')"), 0)
    assert "__porter_pre__" not in ast.unparse(tree)


def test_sites_carry_cell_line_column_and_spelling():
    text = rewritten_text("y = np.concatenate([a])", 7)
    assert "__porter_pre__((7, 1, 4, 'concatenate', " in text
    assert text.endswith("np.concatenate))([a])")


def test_generators_lambdas_and_comprehensions_are_recorded():
    ns = {"np": np, "a": np.ones(3)}
    run = run_recorded(
        "f = lambda v: np.exp(v)\nr = [f(a) for _ in range(2)]\ns = sum(np.sum(a) for _ in range(3))\n",
        ns,
    )
    assert run.exception is None
    counts = {c.name: c.count for c in run.calls}
    assert counts == {"numpy.exp": 2, "numpy.sum": 3}


def test_a_rerun_of_the_same_source_reuses_the_rewrite_under_its_own_label_and_file():
    from porter_ext.record.cell import RecordSettings

    source = "def g(v):\n    return np.exp(v)\ny = g(np.ones(2))\nz = 1 / 0\n"
    for cell in (11, 12):
        ns = {"np": np}
        run = run_recorded(source, ns, RecordSettings(cell=cell))
        assert [(c.name, c.line, c.origin_cell) for c in run.calls if c.name == "numpy.exp"] == [
            ("numpy.exp", 2, None)
        ]
        assert ns["g"].__code__.co_filename == f"<porter-cell-{cell}>"
        assert run.error.line == 4 and run.error.type == "ZeroDivisionError"


def test_python_semantics_are_kept():
    source = (
        "it = iter([1, 2, 3])\n"
        "first = abs(next(it))\n"
        "class A:\n    def f(self):\n        return __class__.__name__\n"
        "class B(A):\n    def f(self):\n        return super().f() + '!'\n"
        "def gen(n):\n    for i in range(n):\n        yield np.float64(i) * 2\n"
        "g = list(gen(3))\n"
        "match g:\n    case [0.0, x, *rest]:\n        m = x\n"
        "x = np.arange(3)\n"
        "x[1] = 5\n"
        "y = x[-1:]\n"
        "s = 0\n"
        "s += x[1]\n"
        "t = [1, 2]\n"
        "t += [3]\n"
    )
    ns = {"np": np}
    run = run_recorded(source, ns)
    assert run.exception is None, run.exception
    assert ns["first"] == 1 and next(ns["it"]) == 2  # next(it) ran once
    assert ns["B"]().f() == "A!" and ns["m"] == 2.0
    assert ns["x"].tolist() == [0, 5, 2] and ns["y"].tolist() == [2]
    assert ns["s"] == 5 and ns["t"] == [1, 2, 3]
