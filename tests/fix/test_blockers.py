"""Whole-cell porting (issue 29 item 4): a cell whose rewritten sites do not verify on a
backend because another site was left as written keeps its verified sites, and says
which line keeps it from that backend and why, one line each (`porter_ext.fix.blockers`)."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.fix.blockers import cell_line
from tests.fix.test_chains import _has
from tests.fix.test_fix_idioms import _fix, porter_fix
from tests.test_cli_run import notebook

MEDIAN = "m = np.median(A, axis=0)\ns = A.sum(0)\nc = np.cumsum(A, axis=0)\n"
NUMPY = "import numpy as np\nA = np.arange(12.0).reshape(4, 3)\n"


def test_a_site_left_as_written_that_differs_elsewhere_blames_itself_not_the_rewrite(
    port_shell,
):
    """``np.median`` has no rewrite; on torch it gives another ``m`` (as the original cell
    does there) and on strict it fails. On main every rewritten site was blamed ("left
    out: alone, it changes the result on torch (m: ...)") and the cell refused."""
    pytest.importorskip("torch")
    rewrite = _fix(port_shell, NUMPY, MEDIAN, "--in-process -b torch,strict")
    assert rewrite.status == "partial", rewrite.reason
    assert rewrite.verified_on == ["numpy"]
    _has(rewrite.source, "s = xp.sum(A, axis=0)\n", "c = xp.cumulative_sum(A, axis=0)\n")
    assert [s.applied for s in rewrite.sites] == [False, True, True]
    median = rewrite.sites[0]
    assert median.reason.startswith("left as written (the standard has no median"), median.reason
    assert median.reason.endswith(
        "; gives another m on torch, as the original cell does there; fails on strict: "
        "AttributeError: module 'array_api_strict' has no attribute 'median'"
    ), median.reason
    assert rewrite.reason.startswith(
        # line 2 of the cell as its editor counts it (below the %%port line)
        "1 site(s) left as written; not verified on torch, strict: line 2 "
        "`m = np.median(A, axis=0)`: left as written ("
    ), rewrite.reason
    ported = {"A": port_shell.user_ns["A"], "np": np}
    exec(rewrite.source, ported)
    np.testing.assert_array_equal(ported["c"], port_shell.user_ns["c"])


def test_a_finding_with_no_rewrite_that_fails_elsewhere_is_named_with_its_line(port_shell):
    """``X[[True, False]]`` of a 2-D tensor (a Python list of booleans as an index) has no
    rewrite and fails on strict; the rewritten line after it is kept, verified where the cell runs, and the
    reason names the cell's line 2 (below its %%port line), not the rewritten source's
    (imports added above). (``X[0]`` and ``X[[1, 0]]``, once the example, are now
    rewritten ``X[0, ...]`` and ``xp.take(X, xp.asarray([1, 0]), axis=0)``.)"""
    pytest.importorskip("torch")
    setup = "import torch\nX = torch.linspace(-1, 1, 6).reshape(2, 3)\n"
    cell = "first = X[[True, False]]\nh = first.sum(0)\n"
    rewrite = _fix(port_shell, setup, cell, "--in-process -b strict")
    assert rewrite.status == "partial", rewrite.reason
    assert rewrite.verified_on == ["torch"]
    index = next(s for s in rewrite.sites if s.name == "Tensor.__getitem__")
    assert (index.line, index.col, index.original, index.applied) == (
        1,
        8,
        "X[[True, False]]",
        False,
    )
    assert index.reason.startswith(
        "left as written (no rewrite proposed); fails on strict: IndexError: "
    ), index.reason
    assert "not verified on strict: line 2 `first = X[[True, False]]`: left as written (no " in (
        rewrite.reason
    )
    assert "h = xp.sum(first, axis=0)\n" in rewrite.source


def test_the_replays_lines_are_placed_in_the_cell():
    original = "a = f(x)\nb = x.sum(0)\nc = g(b)\n"
    rewritten = "import y\n\na = f(x)\nxp = ns(x)\nb = xp.sum(x, axis=0)\nc = g(b)\n"
    assert cell_line(original, rewritten, 3) == (1, False)
    assert cell_line(original, rewritten, 5) == (2, True)
    assert cell_line(original, rewritten, 6) == (3, False)
    assert cell_line(original, rewritten, 1) is None  # the added import
    # a block of changed lines with added ones among them: each where it reads alike
    original = "k = np.sum(A > 3)\ns = A.sum(0)\n"
    rewritten = "xp = array_namespace(A)\nk = xp.sum(A > 3)\ns = xp.sum(A, axis=0)\n"
    assert [cell_line(original, rewritten, n) for n in (1, 2, 3)] == [None, (1, True), (2, True)]


@pytest.mark.slow
def test_porter_fix_keeps_the_verified_sites_and_names_the_blocking_one(tmp_path):
    pytest.importorskip("torch")
    source = notebook(
        tmp_path / "nb.ipynb",
        NUMPY,
        MEDIAN,
        "print(float(s[0]), float(c[-1, -1]))",
    )
    cells, report = porter_fix(source, "torch,strict")
    assert "s = xp.sum(A, axis=0)" in cells[1] and "m = np.median(A, axis=0)" in cells[1]
    rewrite = report["cells"][1]["rewrite"]
    assert rewrite["status"] == "partial", rewrite["reason"]
    median = next(s for s in rewrite["sites"] if s["name"] == "numpy.median")
    assert "fails on strict: AttributeError" in median["reason"], median["reason"]
    namespace: dict = {}
    for cell in cells[:2]:
        exec(cell, namespace)
    assert float(namespace["s"][0]) == 18.0


def test_every_finding_of_the_run_has_a_site_with_the_tables_reason(port_shell):
    """makemore's update, ``p.data += -lr * p.grad`` over a list of parameters: the codemod
    has no site for a write's target nor for an attribute of a loop's variable, so the
    report said nothing of those findings ("no rewrite proposed", as the benchmark put
    it). Each finding the run recorded now has a site, left as written with the reason
    its table entry gives (autograd)."""
    pytest.importorskip("torch")
    setup = (
        "import torch\ng = torch.Generator().manual_seed(1)\n"
        "W = torch.randn(3, 2, generator=g, requires_grad=True)\n"
        "X = torch.randn(5, 3, generator=g)\nparameters = [W]\n"
    )
    body = (
        "loss = (X @ W).mean()\nloss.backward()\n"
        "for p in parameters:\n    p.data += -0.1 * p.grad\n"
    )
    rewrite = _fix(port_shell, setup, body, "-b numpy")
    by_name = {s.name: s for s in rewrite.sites}
    for name in ("Tensor.data", "Tensor.grad"):
        site = by_name[name]
        assert site.line == 4 and not site.applied, site
        assert site.reason.startswith("autograd is outside the standard"), site
    assert by_name["Tensor.grad"].original == "p.grad"
