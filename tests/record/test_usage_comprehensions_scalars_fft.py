"""Usage outside the standard without a non-standard name (issue 19 item 3), continued, in
a real IPython shell with porter loaded, on real numpy, torch and array-api-strict
arrays: iterating over an array inside comprehensions, a Python scalar of another kind
with an array in a function's arguments, and the dtype categories of the fft
extension's functions. What the standard allows stays ``standard``."""

from __future__ import annotations

import array_api_strict as xp
import numpy as np
import pytest

from tests.record.rewritten import rewritten_text
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
    assert [c.suggestion for c in calls[(3, "enumerate")]] == ["enumerate(xp.unstack(m))"]
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
    text = rewritten_text(source, 0)
    for hook in ("__porter_attr__", "__porter_getitem__", "__porter_type__"):
        assert f"'{hook}'" not in text, text  # a site spelled as a hook: a hooked hook
    assert text.count("__porter_attr__(") == 4  # x.T and y.T, each on both paths of iter's guard


SCALARS_SETUP = """import numpy as np, torch, array_api_strict as xp
i = np.arange(4)
f = np.arange(4.0)
c = i > 1
ti = torch.arange(4)
si = xp.arange(4)
sf = xp.arange(4.0)
"""
SCALARS = """a = np.multiply(i, 0.5)
b = np.add(1.5, i)
d = np.where(c, i, 0.5)
e = torch.multiply(ti, 0.5)
try:
    g = xp.multiply(si, 0.5)
except TypeError:
    g = None
h = np.multiply(f, 0.5)
k = np.add(i, 2)
n = np.where(c, f, 0.5)
o = np.multiply(f, 1j)
p = xp.multiply(sf, 0.5)
q = f * 1j
r = i + True
s = np.where(c, 1, i)
"""


def test_a_python_scalar_of_another_kind_in_a_function_is_outside_the_standard(port_shell):
    calls = _calls(port_shell, SCALARS, SCALARS_SETUP)
    (multiply,) = calls[(1, "numpy.multiply")]
    assert multiply.status == "non_standard_usage"
    assert "Python float with an array of int64" in multiply.message
    assert multiply.suggestion == "xp.multiply(xp.astype(i, xp.float64), 0.5)"
    (add,) = calls[(2, "numpy.add")]
    assert add.suggestion == "xp.add(1.5, xp.astype(i, xp.float64))"
    (where,) = calls[(3, "numpy.where")]
    assert where.status == "non_standard_usage"
    assert where.suggestion == "xp.where(c, xp.astype(i, xp.float64), 0.5)"
    assert _status(calls, 4, "torch.multiply") == {"non_standard_usage"}
    # array-api-strict refuses it (TypeError), recorded as outside the standard
    assert _status(calls, 6, "array_api_strict.multiply") == {"non_standard_usage"}
    _all_standard(
        calls,
        (9, "numpy.multiply"),
        (10, "numpy.add"),
        (11, "numpy.where"),
        (12, "numpy.multiply"),  # a Python complex with a real floating array (2024.12)
        (13, "array_api_strict.multiply"),
        (14, "ndarray.__mul__"),
        (16, "numpy.where"),
    )
    # a Python bool goes with a boolean array only
    (with_bool,) = calls[(15, "ndarray.__add__")]
    assert (with_bool.status, with_bool.suggestion) == ("non_standard_usage", "x + int(...)")


def test_a_python_complex_with_a_real_array_is_standard_from_2024_12(port_shell):
    cell = "q = f * 1j\no = np.multiply(f, 1j)\n"
    porter_calls = _calls(port_shell, cell, SCALARS_SETUP)
    assert _status(porter_calls, 1, "ndarray.__mul__") == {"standard"}
    assert run(port_shell, SCALARS_SETUP).success
    result = run(port_shell, "%%port --no-replay --quiet --version 2023.12\n" + cell)
    assert result.success, result.output
    older = _by_site(port_shell.user_ns["_port"])
    (mul,) = older[(1, "ndarray.__mul__")]
    assert (mul.status, mul.suggestion) == (
        "non_standard_usage",
        "xp.astype(x, xp.complex128) * ...",
    )
    (multiply,) = older[(2, "numpy.multiply")]  # before 2024.12 functions take arrays
    assert (multiply.status, multiply.suggestion) == (
        "non_standard_usage",
        "xp.multiply(xp.astype(f, xp.complex128), xp.asarray(1j, dtype=xp.complex128))",
    )
    assert "from 2024.12" in multiply.message


FFT_SETUP = """import numpy as np, torch
x = np.linspace(0.0, 1.0, 8)
z = x.astype(np.complex128)
i = np.arange(8)
t32 = torch.linspace(0.0, 1.0, 8)
"""
FFT = """a = np.fft.fft(x)
b = np.fft.ifft(x)
c = np.fft.fftn(x)
d = np.fft.irfft(x)
e = np.fft.hfft(x)
g = np.fft.rfft(i)
h = np.fft.fft(i)
k = torch.fft.fft(t32)
n = np.fft.fftshift(i)
o = np.fft.fft(z)
p = np.fft.rfft(x)
q = np.fft.irfft(z)
r = np.fft.ihfft(x)
s = np.fft.fftshift(x)
u = np.fft.fftfreq(8)
w = np.fft.hfft(z)
"""


def test_fft_inputs_outside_their_dtype_category_are_outside_the_standard(port_shell):
    calls = _calls(port_shell, FFT, FFT_SETUP)
    complex_only = [(1, "fft"), (2, "ifft"), (3, "fftn"), (4, "irfft"), (5, "hfft")]
    for line, name in complex_only:
        (call,) = calls[(line, f"numpy.fft.{name}")]
        assert call.status == "non_standard_usage", call
        assert "complex floating-point" in call.message, call
        assert call.suggestion == f"xp.fft.{name}(xp.astype(x, xp.complex128))", call
    assert "xp.fft.rfft" in calls[(1, "numpy.fft.fft")][0].message  # the half spectrum
    (rfft,) = calls[(6, "numpy.fft.rfft")]
    assert (rfft.status, rfft.suggestion) == (
        "non_standard_usage",
        "xp.fft.rfft(xp.astype(i, xp.float64))",
    )
    (of_int,) = calls[(7, "numpy.fft.fft")]
    assert of_int.suggestion == "xp.fft.fft(xp.astype(i, xp.complex128))"
    (single,) = calls[(8, "torch.fft.fft")]
    assert (single.status, single.suggestion) == (
        "non_standard_usage",
        "xp.fft.fft(xp.astype(t32, xp.complex64))",  # the precision of float32
    )
    (shift,) = calls[(9, "numpy.fft.fftshift")]
    assert shift.status == "non_standard_usage" and "xp.roll(" in shift.suggestion
    # the rewrite keeps the values and the integer dtype, on array-api-strict
    for shape in ((8,), (3, 4), (2, 3, 5)):
        values = np.arange(int(np.prod(shape))).reshape(shape)
        rolled = eval(shift.suggestion, {"xp": xp, "x": xp.asarray(values)})
        assert rolled.dtype == xp.int64
        np.testing.assert_array_equal(np.asarray(rolled), np.fft.fftshift(values))
    _all_standard(
        calls,
        (10, "numpy.fft.fft"),
        (11, "numpy.fft.rfft"),
        (12, "numpy.fft.irfft"),
        (13, "numpy.fft.ihfft"),
        (14, "numpy.fft.fftshift"),
        (15, "numpy.fft.fftfreq"),
        (16, "numpy.fft.hfft"),
    )


def _all_standard(calls: dict, *sites: tuple[int, str]) -> None:
    for line, name in sites:
        assert _status(calls, line, name) == {"standard"}, (line, name)
