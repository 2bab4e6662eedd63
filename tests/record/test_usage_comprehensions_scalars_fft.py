"""Usage outside the standard without a non-standard name (issue 19 item 3), continued, in
a real IPython shell with porter loaded, on real numpy, torch and array-api-strict
arrays: iterating over an array inside comprehensions, a Python scalar of another kind
with an array in a function's arguments, and the dtype categories of the fft
extension's functions. What the standard allows stays ``standard``."""

from __future__ import annotations

import ast

import pytest

from porter_ext.record.transformer import transform
from tests.record.test_usage_without_names import _by_site, _calls, _status
from tests.replay.isolation import run, same_as_plain

pytest.importorskip("torch")

SETUP = """import numpy as np, torch, array_api_strict as xp
m = np.ones((2, 3))
cube = np.ones((2, 2, 3))
tm = torch.ones(3, 2)
v = np.arange(3)
"""

COMPREHENSIONS = """a = [float(r.sum()) for r in m]
b = {float(r[0, ...]) for r in tm}
c = {k: float(r[0, ...]) for k, r in enumerate(m)}
d = sum(float(r[1, ...]) for r in m)
e = [[float(w[0, ...]) for w in plane] for plane in cube]
f = [(n, float(r[0, ...])) for n in range(2) for r in m if n > 0]
g = [e for e in v]
h = [float(a.sum()) for a in [m, m]]
class Rows:
    rows = m
    sums = [float(r.sum()) for r in rows]
def per_row(x):
    return [float(r.sum()) for r in x]
k = per_row(m) + Rows.sums
gen = (float(r.sum()) for r in m)
m_before = m
m = None
late = list(gen)
m = m_before
"""


def test_iteration_over_an_array_in_comprehensions_is_outside_the_standard(port_shell):
    probe = "(a, sorted(b), c, d, e, f, g, h, k, late)"
    port = same_as_plain(port_shell, SETUP, COMPREHENSIONS, "--no-replay --quiet", probe)
    calls = _by_site(port)
    (listed,) = calls[(1, "iter")]
    assert (listed.status, listed.suggestion, listed.library) == (
        "non_standard_usage",
        "xp.unstack(x)",
        "numpy",
    )
    assert "not iterable" in listed.message
    assert listed.col == len("a = [float(r.sum()) for r in ")  # the comprehension's iterable
    assert listed.end_col == listed.col + 1
    ((line_2,), (line_4,)) = calls[(2, "iter")], calls[(4, "iter")]
    assert (line_2.library, line_2.status) == ("torch", "non_standard_usage")
    assert line_4.status == "non_standard_usage"  # a generator expression
    assert [c.suggestion for c in calls[(3, "enumerate")]] == ["enumerate(xp.unstack(x))"]
    # nested: the outer iterable once, the inner one for each 2-D plane of the cube
    assert sorted(c.count for c in calls[(5, "iter")]) == [1, 2]
    # a later generator's iterable is evaluated for each element of the first
    assert [c.count for c in calls[(6, "iter")]] == [2]
    assert not [key for key in calls if key[0] in (7, 8) and key[1] == "iter"]  # 1-D, a list
    assert [c.count for c in calls[(11, "iter")]] == [1]  # a class body's own name
    assert [c.count for c in calls[(13, "iter")]] == [1]  # inside the person's function
    assert [c.count for c in calls[(15, "iter")]] == [1]  # evaluated when gen was made


def test_a_comprehension_over_what_cannot_be_iterated_raises_as_it_would(port_shell):
    caught = "try:\n    out = [a for a in n]\nexcept TypeError as e:\n    message = str(e)\n"
    same_as_plain(port_shell, SETUP + "n = 3\n", caught, "--no-replay --quiet", "message")
    result = run(port_shell, "%%port --no-replay --quiet\nx = 1\nout = {a for a in n}\n")
    assert isinstance(result.error_in_exec, TypeError)
    assert "not iterable" in str(result.error_in_exec)
    assert "line 2" in result.output or "----> 2" in result.output, result.output


def test_a_comprehension_shadowing_a_plain_name_records_its_own_variable(port_shell):
    """``r`` holds a list in the cell, but inside the comprehension ``r`` is each row."""
    calls = _calls(port_shell, "r = [1, 2]\nsums = [r.sum() for r in m]\n", SETUP)
    assert _status(calls, 2, "ndarray.sum") == {"non_standard"}
    assert _status(calls, 2, "iter") == {"non_standard_usage"}


def test_an_iterable_is_rewritten_once():
    """The iterable of a loop or a comprehension is rewritten once, then called through
    ``iter``: the hooks of an attribute or an index are never themselves hooked."""
    source = "for r in x.T:\n    pass\nfor r in x[0]:\n    pass\na = [v for v in y.T]\n"
    text = ast.unparse(transform(ast.parse(source), 0))
    for hook in ("__porter_attr__", "__porter_getitem__", "__porter_type__"):
        assert f"'{hook}'" not in text, text  # a site spelled as a hook: a hooked hook
    assert text.count("__porter_attr__(") == 4  # x.T and y.T, each on both paths of iter's guard
