"""Rewrites that hold for some ranks or dtypes only (issue 19 item 1): ``np.dot`` is matmul
for 1-D and 2-D operands, ``np.vstack`` is stack of 1-D arrays and concat of others,
``diagonal`` of a 2-D array is ``linalg.diagonal``, ``exp2`` of floats is ``2.0 ** x``.
The source does not show the ranks; the run's verdict at each site picks the entry, and
where the ranks make no rewrite right the site is refused with that reason."""

from __future__ import annotations

import textwrap

import pytest

from porter_ext.fix.rewrite import RunKnowledge, rewrite_source
from tests.fix.test_chains import _has, _same

IMPORTS = {"np": "numpy", "torch": "torch"}
NUMPY = textwrap.dedent(
    """\
    import numpy as np
    A = np.arange(6.0).reshape(2, 3)
    B = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    a = np.arange(3.0)
    b = np.array([2.0, -1.0, 0.5])
    T = np.ones((2, 3, 4))
    """
)
CELL = textwrap.dedent(
    """\
    d = np.dot(A, B)
    s = np.vstack([a, b])
    r = np.vstack((A, A))
    t = np.diagonal(B, 1)
    e = np.exp2(A)
    """
)
ARRAYS = {"A": "numpy", "B": "numpy", "a": "numpy", "b": "numpy", "T": "numpy"}
#: what a run of CELL records at each site
RUN = {
    (1, 4, "numpy.dot"): ("non_standard", "matmul"),
    (2, 4, "numpy.vstack"): ("non_standard", "stack"),
    (3, 4, "numpy.vstack"): ("non_standard", "concat"),
    (4, 4, "numpy.diagonal"): ("non_standard", "linalg.diagonal"),
    (5, 4, "numpy.exp2"): ("non_standard", "pow"),
}


def test_the_ranks_a_run_recorded_choose_the_rewrite():
    alone = rewrite_source(CELL, imports=IMPORTS, arrays=ARRAYS)
    assert not alone.applied
    assert all("depends on values" in s.reason for s in alone.refused)
    result = rewrite_source(CELL, imports=IMPORTS, arrays=ARRAYS, run=RunKnowledge(decided=RUN))
    _has(
        result.source,
        "d = xp.matmul(A, B)\n",
        "s = xp.stack([a, b], axis=0)\n",
        "r = xp.concat((A, A), axis=0)\n",
        "t = xp.linalg.diagonal(B, offset=1)\n",
        "e = 2.0 ** A\n",
    )
    assert not result.refused
    _same(CELL, result.source, ["d", "s", "r", "t", "e"], NUMPY)


def test_ranks_no_standard_call_matches_are_refused_with_the_reason():
    cell = "d = np.dot(T, B)\ns = np.vstack([A, a])\nt = np.diagonal(T)\ne = np.exp2(n)\n"
    run = {
        (1, 4, "numpy.dot"): ("non_standard", "tensordot"),
        (2, 4, "numpy.vstack"): ("non_standard", None),
        (3, 4, "numpy.diagonal"): ("non_standard", None),
        (4, 4, "numpy.exp2"): ("non_standard", None),
    }
    arrays = {**ARRAYS, "n": "numpy"}
    result = rewrite_source(cell, imports=IMPORTS, arrays=arrays, run=RunKnowledge(decided=run))
    assert not result.applied and result.source == cell
    reasons = [s.reason for s in result.refused]
    assert "matmul only for operands of one or two dimensions" in reasons[0]
    assert "several ranks" in reasons[1]
    assert "permute_dims, then linalg.diagonal" in reasons[2]
    assert "cast first, 2.0 ** xp.astype(x, xp.float64)" in reasons[3]


def test_torch_diagonal_of_a_matrix_keeps_its_offset():
    pytest.importorskip("torch")
    setup = "import torch\nM = torch.arange(12.0).reshape(3, 4)\n"
    cell = "w = torch.diagonal(M, offset=1)\nz = torch.exp2(M)\n"
    run = {
        (1, 4, "torch.diagonal"): ("non_standard", "linalg.diagonal"),
        (2, 4, "torch.exp2"): ("non_standard", "pow"),
    }
    result = rewrite_source(
        cell, imports=IMPORTS, arrays={"M": "torch"}, run=RunKnowledge(decided=run)
    )
    _has(result.source, "w = xp.linalg.diagonal(M, offset=1)\n", "z = 2.0 ** M\n")
    _same(cell, result.source, ["w", "z"], setup)


def test_median_is_refused_naming_the_nearest_portable_form():
    result = rewrite_source("y = np.median(A)\n", imports=IMPORTS, arrays=ARRAYS)
    (site,) = result.refused
    assert "the standard has no median" in site.reason and "xp.sort" in site.reason
