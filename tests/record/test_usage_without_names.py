"""Usage outside the standard that no non-standard name gives away (issue 19 item 3), in a
real IPython shell with porter loaded, on real numpy, torch and array-api-strict arrays:
true division of integers, a float written into an integer array, mixed kinds of dtype
in a function's arguments, attributes the standard lacks, in-place targets reached
through an attribute. What the standard allows stays ``standard``."""

from __future__ import annotations

import numpy as np
import pytest

import porter_ext
from tests.replay.isolation import run, same_as_plain

pytest.importorskip("torch")

SETUP = """import numpy as np, torch
i = np.arange(4)
f = np.arange(4.0)
ti = torch.arange(4)
tf = torch.arange(4.0)
"""


def _calls(ip, cell: str, setup: str = SETUP) -> dict[tuple[int, str], list]:
    """The records of ``cell`` (run under ``%%port --no-replay``), by (line, name)."""
    porter_ext.clear_caches()
    assert run(ip, setup).success
    result = run(ip, "%%port --no-replay --quiet\n" + cell)
    assert result.success, result.output
    return _by_site(ip.user_ns["_port"])


def _by_site(port) -> dict[tuple[int, str], list]:
    found: dict[tuple[int, str], list] = {}
    for call in port.entry.calls:
        found.setdefault((call.line, call.name), []).append(call)
    return found


def _status(calls: dict, line: int, name: str) -> set[str]:
    assert (line, name) in calls, f"{name} not recorded on line {line}: {sorted(calls)}"
    return {c.status for c in calls[(line, name)]}


def test_true_division_of_integer_arrays_is_outside_the_standard(port_shell):
    calls = _calls(
        port_shell,
        "a = np.arange(5) / np.arange(1, 6)\nb = i / 2\nc = np.divide(i, i + 1)\n"
        "d = 2 / ti\ne = f / 2\ng = np.divide(f, 2)\nh = i // 2\nk = tf / tf\n",
    )
    flagged = [
        (1, "ndarray.__truediv__"),
        (2, "ndarray.__truediv__"),
        (3, "numpy.divide"),
        (4, "Tensor.__rtruediv__"),
    ]
    for line, name in flagged:
        (call,) = calls[(line, name)]
        assert call.status == "non_standard_usage", call
        assert "xp.astype(" in call.suggestion and "float64" in call.suggestion, call
    assert "true division" in calls[(2, "ndarray.__truediv__")][0].message
    assert calls[(4, "Tensor.__rtruediv__")][0].suggestion == "... / xp.astype(x, xp.float64)"
    standard = [
        (5, "ndarray.__truediv__"),
        (6, "numpy.divide"),
        (7, "ndarray.__floordiv__"),
        (8, "Tensor.__truediv__"),
    ]
    for line, name in standard:
        assert _status(calls, line, name) == {"standard"}


def test_mixed_kinds_and_integer_inputs_of_functions_are_outside_the_standard(port_shell):
    calls = _calls(
        port_shell,
        "a = np.logaddexp(f, i)\nb = np.maximum(f, i)\nc = np.exp(i)\nd = torch.maximum(tf, ti)\n"
        "e = np.maximum(f, f)\ng = np.exp(f)\nh = np.maximum(i, i)\nk = np.sqrt(f)\n",
    )
    (logaddexp,) = calls[(1, "numpy.logaddexp")]
    assert logaddexp.status == "non_standard_usage" and "floating-point" in logaddexp.message
    assert logaddexp.suggestion == "xp.logaddexp(f, xp.astype(i, xp.float64))"
    (maximum,) = calls[(2, "numpy.maximum")]
    assert maximum.status == "non_standard_usage" and "mixes float64 and int64" in maximum.message
    assert maximum.suggestion == "xp.maximum(f, xp.astype(i, xp.float64))"
    (exp,) = calls[(3, "numpy.exp")]
    assert (exp.status, exp.suggestion) == (
        "non_standard_usage",
        "xp.exp(xp.astype(i, xp.float64))",
    )
    assert _status(calls, 4, "torch.maximum") == {"non_standard_usage"}
    standard = [(5, "numpy.maximum"), (6, "numpy.exp"), (7, "numpy.maximum"), (8, "numpy.sqrt")]
    for line, name in standard:
        assert _status(calls, line, name) == {"standard"}


def test_one_site_judges_each_dtype_on_the_fast_path(port_shell):
    """The guards of a site check dtypes: a loop that gives the same site a float array,
    then an integer one, then a float one records both verdicts, counted right."""
    calls = _calls(
        port_shell,
        "for v in (f, f, i, i, f):\n    a = v / 2\n    b = np.exp(v)\n    c = np.maximum(f, v)\n",
    )
    for line, name in ((2, "ndarray.__truediv__"), (3, "numpy.exp"), (4, "numpy.maximum")):
        counts = {c.status: c.count for c in calls[(line, name)]}
        assert counts == {"standard": 3, "non_standard_usage": 2}, (name, counts)


def test_a_value_of_a_higher_kind_written_into_an_array_is_outside_the_standard(port_shell):
    calls = _calls(
        port_shell,
        "i[0] = 2.5\nti[1] = 0.5\ni[1:3] = f[:2]\nf[0] = 3\nf[1] = 0.5\ni[2] = 7\n"
        "for v in (1, 1.5, 2):\n    i[3] = v\n",
    )
    (into_int,) = calls[(1, "ndarray.__setitem__")]
    assert into_int.status == "non_standard_usage"
    assert "Python float into an array of int64" in into_int.message
    assert into_int.suggestion == "x[key] = int(value)"
    assert _status(calls, 2, "Tensor.__setitem__") == {"non_standard_usage"}
    (array_into_int,) = calls[(3, "ndarray.__setitem__")]
    assert array_into_int.suggestion == "x[key] = xp.astype(value, xp.int64)"
    for line in (4, 5, 6):
        assert _status(calls, line, "ndarray.__setitem__") == {"standard"}
    counts = {c.status: c.count for c in calls[(8, "ndarray.__setitem__")]}
    assert counts == {"standard": 2, "non_standard_usage": 1}


ATTRIBUTES_SETUP = """import numpy as np, torch
x = np.ones((2, 3))
t = torch.ones(2, 3, requires_grad=True)
(t * 2).sum().backward()
class Box:
    itemsize = nbytes = grad = 1
box = Box()
"""


def test_attribute_reads_outside_the_standard_are_recorded(port_shell):
    calls = _calls(
        port_shell,
        "a = x.itemsize\nb = x.nbytes\nc = t.grad\nd = t.data\ne = x.flat\n"
        "f = box.itemsize + box.nbytes + box.grad\ng = x.shape\n",
        ATTRIBUTES_SETUP,
    )
    for line, name in enumerate(
        ("ndarray.itemsize", "ndarray.nbytes", "Tensor.grad", "Tensor.data", "ndarray.flat"), 1
    ):
        (call,) = calls[(line, name)]
        assert (call.kind, call.status) == ("attribute", "non_standard"), call
    assert not [key for key in calls if key[0] == 6]  # the person's own attributes
    assert port_shell.user_ns["c"] is port_shell.user_ns["t"].grad


AUGMENTED_SETUP = """import torch
p = torch.ones(3, requires_grad=True)
(p * 2).sum().backward()
lr = 0.1
class Layer:
    def __init__(self):
        self.w = torch.zeros(3)
        self.n = 0
layer = Layer()
"""
AUGMENTED = """p.data += -lr * p.grad
layer.w -= 0.5 * p.grad
layer.n += 1
for _ in range(3):
    p.data *= 2
"""


def test_in_place_targets_reached_through_an_attribute_are_recorded(port_shell):
    probe = "(p.tolist(), layer.w.tolist(), layer.n, p.grad.tolist())"
    port = same_as_plain(port_shell, AUGMENTED_SETUP, AUGMENTED, "--no-replay --quiet", probe)
    calls = _by_site(port)
    (data,) = calls[(1, "Tensor.data")]
    assert (data.kind, data.status, data.col) == ("attribute", "non_standard", 0)
    (iadd,) = calls[(1, "Tensor.__iadd__")]
    assert (iadd.kind, iadd.status) == ("operator", "standard")
    assert (1, "Tensor.__rmul__") in calls and (1, "Tensor.grad") in calls
    assert (2, "Tensor.__isub__") in calls  # a tensor held by the person's own object
    assert not [key for key in calls if key[0] == 3]  # an int attribute: plain Python
    assert [c.count for c in calls[(5, "Tensor.__imul__")]] == [3]
    assert [c.count for c in calls[(5, "Tensor.data")]] == [3]


def test_an_augmented_attribute_that_raises_raises_as_it_would(port_shell):
    same_as_plain(port_shell, AUGMENTED_SETUP, "layer.missing += 1\n", "--no-replay --quiet", "1")
    result = run(port_shell, "%%port --no-replay --quiet\nx = 1\nlayer.missing += 1\n")
    assert isinstance(result.error_in_exec, AttributeError)
    assert "line 2" in result.output or "----> 2" in result.output, result.output


PARTIAL_SETUP = """import numpy as np, torch, array_api_strict as xp
m = np.ones((2, 3))
tm = torch.ones(2, 3)
v = np.ones(3)
"""


def test_fewer_indices_than_axes_without_an_ellipsis_are_outside_the_standard(port_shell):
    calls = _calls(
        port_shell,
        "a = m[1]\nb = tm[:1]\nm[0] = 2.0\nc = m[None]\n"
        "d = m[1, ...]\ne = m[..., 1]\nf = m[1, :]\ng = v[1]\nh = m[m > 0]\nk = m[m[:, 0] > 0]\n",
        PARTIAL_SETUP,
    )
    (one_index,) = calls[(1, "ndarray.__getitem__")]
    assert (one_index.status, one_index.suggestion) == ("non_standard_usage", "m[1, ...]")
    assert "1 of the 2 axes" in one_index.message
    assert [c.suggestion for c in calls[(2, "Tensor.__getitem__")]] == ["tm[:1, ...]"]
    assert _status(calls, 3, "ndarray.__setitem__") == {"non_standard_usage"}
    assert [c.suggestion for c in calls[(4, "ndarray.__getitem__")]] == ["m[None, ...]"]
    for line in (5, 6, 7, 8, 9):
        assert _status(calls, line, "ndarray.__getitem__") == {"standard"}, line
    # a boolean mask as the sole index covers its own axes (the mask's read is m[:, 0])
    assert _status(calls, 10, "ndarray.__getitem__") == {"standard"}


ITERATION = """total = 0.0
for row in m:
    total = total + float(row[0, ...])
for i, r in enumerate(tm):
    total = total + i
n = len(m) + len(v)
rows = list(m)
for e in v:
    total = total + 1
for k in [1, 2]:
    total = total + k
for key in {"a": 1}:
    total = total + len(key)
def walk(a):
    return [float(r[0, ...]) for r in list(a)]
w = walk(m)
"""


def test_iteration_over_an_array_and_its_len_are_outside_the_standard(port_shell):
    probe = "(total, n, [r.tolist() for r in rows], w)"
    port = same_as_plain(port_shell, PARTIAL_SETUP, ITERATION, "--no-replay --quiet", probe)
    calls = _by_site(port)
    (loop,) = calls[(2, "iter")]
    assert (loop.status, loop.suggestion, loop.library) == (
        "non_standard_usage",
        "xp.unstack(x)",
        "numpy",
    )
    assert "not iterable" in loop.message
    (numbered,) = calls[(4, "enumerate")]
    # written with the person's expressions, and rewritten so by porter fix
    assert (numbered.library, numbered.suggestion) == ("torch", "enumerate(xp.unstack(tm))")
    assert [c.count for c in calls[(6, "len")]] == [1, 1]  # a 2-D and a 1-D array
    # written with the person's expressions (issue 29 item 3)
    assert sorted(c.suggestion for c in calls[(6, "len")]) == ["m.shape[0]", "v.shape[0]"]
    assert [c.suggestion for c in calls[(7, "list")]] == ["list(xp.unstack(m))"]
    assert [c.count for c in calls[(15, "list")]] == [1]  # inside the person's function
    # a 1-D array's elements are its integer indices; lists and dicts are plain Python
    assert not [key for key in calls if key[0] in (8, 10, 12)], sorted(calls)


def test_a_loop_over_what_cannot_be_iterated_raises_as_it_would(port_shell):
    same_as_plain(port_shell, PARTIAL_SETUP, "for a in 3:\n    pass\n", "--no-replay --quiet", "1")
    result = run(port_shell, "%%port --no-replay --quiet\nx = 1\nfor a in x:\n    pass\n")
    assert isinstance(result.error_in_exec, TypeError)
    assert "not iterable" in str(result.error_in_exec)


def test_numpy_global_generator_functions_are_recorded(port_shell):
    """``np.random.choice`` and ``np.random.randn`` are methods of NumPy's global
    ``RandomState``, bound once in ``numpy.random``: recorded by that name, like the
    module function ``np.random.seed``; a method of the person's own object is not (the
    calls inside it are)."""
    setup = (
        SETUP + "class Model:\n    def forward(self, a):\n        return a * 2\nmodel = Model()\n"
    )
    calls = _calls(
        port_shell,
        "np.random.seed(0)\nidx = np.random.choice(10, 3, replace=False)\nz = np.random.randn(2)\n"
        "y = model.forward(f)\n",
        setup,
    )
    assert _status(calls, 1, "numpy.random.seed") == {"non_standard"}
    (choice,) = calls[(2, "numpy.random.choice")]
    assert choice.status == "non_standard" and "rng.choice" in choice.suggestion
    assert _status(calls, 3, "numpy.random.randn") == {"non_standard"}
    # the person's method is not a library's: only the calls inside it are recorded,
    # placed where it is written (a plain cell of the person's)
    assert [name for line, name in calls if line == 4] == ["ndarray.__mul__"]
    assert all(c.origin is not None for c in calls[(4, "ndarray.__mul__")])
    np.random.seed(0)  # the cell drew from the global generator exactly as a plain run
    assert port_shell.user_ns["idx"].tolist() == np.random.choice(10, 3, replace=False).tolist()
