"""NumPy's array subclasses with semantics of their own (masked arrays, matrices, record
arrays) are never rewritten as plain arrays (issue 28 item 3): replays move them as
plain arrays, so no replay can tell that ``xp.asarray(m, copy=True)`` drops a mask.
Real kernels through ``porter fix`` (attacks 46, 58, 59)."""

from __future__ import annotations

import pytest

from porter_ext.backends import own_semantics
from tests.fix.test_every_call import _fix

pytestmark = pytest.mark.slow

MASKED = (
    "import numpy as np\n"
    "m = np.ma.masked_array([[1.0, 2.0], [1000.0, 4.0]], mask=[[0, 0], [1, 0]])\n"
    "v = np.arange(3.0)"
)


def test_the_numpy_backend_names_its_subclasses_with_their_own_semantics():
    np = pytest.importorskip("numpy")
    assert own_semantics(np.ma.masked_array([1.0], mask=[1])).startswith("numpy.ma.MaskedArray")
    assert own_semantics(np.matrix([[1.0]])).startswith("numpy.matrix")
    assert own_semantics(np.rec.array([(1, 2.0)], dtype=[("a", int), ("b", float)]))
    assert own_semantics(np.ones(2)) is None
    assert own_semantics(np.memmap) is None and own_semantics([1.0]) is None


def test_a_masked_array_is_left_as_written_and_the_plain_one_beside_it_rewritten(tmp_path):
    ported, cells = _fix(
        tmp_path,
        "masked",
        MASKED,
        "c = m.copy()\nf = m.flatten()\nprint(float(c.mean()), float(f.mean()))",
        "g = m.astype(np.float32)\nw = v.copy()\nprint(float(g.mean()), w.tolist())",
    )
    assert ported[1] == "c = m.copy()\nf = m.flatten()\nprint(float(c.mean()), float(f.mean()))"
    first = cells[1]["rewrite"]
    assert first["status"] == "refused", first
    assert "numpy.ma.MaskedArray" in first["reason"], first["reason"]
    assert "m.astype(np.float32)" in ported[2] and "xp.asarray(v, copy=True)" in ported[2]
    sites = {s["name"]: s for s in cells[2]["rewrite"]["sites"]}
    assert not sites["ndarray.astype"]["applied"], sites
    assert "numpy.ma.MaskedArray" in sites["ndarray.astype"]["reason"]


def test_a_matrix_copy_is_left_as_written(tmp_path):
    ported, cells = _fix(
        tmp_path,
        "matrix",
        "import numpy as np\nM = np.matrix([[1.0, 2.0], [3.0, 4.0]])",
        "C = M.copy()\nP = C * C\nprint(P.tolist())",
    )
    assert ported[1] == "C = M.copy()\nP = C * C\nprint(P.tolist())"
    assert "numpy.matrix" in cells[1]["rewrite"]["reason"], cells[1]["rewrite"]


def test_a_function_called_with_a_masked_array_is_left_as_written(tmp_path):
    ported, cells = _fix(
        tmp_path,
        "masked_call",
        MASKED,
        "def flat(a):\n    return a.flatten()",
        "print(flat(v).tolist())",
        "print(float(flat(m).mean()))",
    )
    assert ported[1] == "def flat(a):\n    return a.flatten()"
    reason = cells[1]["rewrite"]["reason"]
    assert "refused flat at its call in cell 3" in reason and "MaskedArray" in reason, reason
