"""``porter fix`` on the statements of ``%time``/``%timeit`` lines (issue 19): the run
records their calls at their line and column, and the fix stage rewrites them there, the
line staying the magic it was; a statement whose rewrite does not verify is listed as
refused with its reason, the magic as written."""

from __future__ import annotations

import pytest

from porter_ext.fix.magic_args import close_code_magics, open_code_magics
from tests.fix.test_fix_idioms import porter_fix
from tests.test_cli_run import notebook

SETUP = (
    "import torch\nX = torch.linspace(-1, 1, 6).reshape(2, 3)\n"
    "i = torch.arange(1, 7)\nj = torch.full((6,), 4)"
)


def test_a_magic_line_opens_at_its_own_columns_and_closes_as_the_magic():
    cell = "y = 1\n  %timeit -n1 -r1 z = x.sum(0)\n%time w = x.sum(1)  # note\n%ls -l\n"
    opened, magics = open_code_magics(cell)
    lines = opened.split("\n")
    assert lines[1].index("z = x.sum(0)") == cell.split("\n")[1].index("z = x.sum(0)")
    assert lines[1].lstrip().startswith("if 1:") and lines[3] == "%ls -l"
    assert lines[2].index("w = x.sum(1)") == 6
    rewritten = opened.replace("x.sum(0)", "xp.sum(x, axis=0)").replace(
        "x.sum(1)", "xp.sum(x, axis=1)"
    )
    closed, lost = close_code_magics("xp = array_namespace(x)\n" + rewritten, magics)
    assert lost == []
    assert closed == (
        "xp = array_namespace(x)\ny = 1\n  %timeit -n1 -r1 z = xp.sum(x, axis=0)\n"
        "%time w = xp.sum(x, axis=1)  # note\n%ls -l\n"
    )
    # a rewrite that broke the one-line statement apart: that line is reported lost
    split = opened.replace("if 1: w = x.sum(1)", "if 1:\n    w = x.sum(1)")
    assert close_code_magics(split, magics)[1] == [3]
    # a compound statement cannot follow ``if 1:`` on its line: left masked
    assert open_code_magics("%timeit for k in range(3): f(k)\n")[1] == {}


@pytest.mark.slow
def test_porter_fix_rewrites_a_timeit_statement_and_refuses_one_that_changes_results(tmp_path):
    pytest.importorskip("torch")
    source = notebook(
        tmp_path / "nb.ipynb",
        SETUP,
        "%timeit -n1 -r1 m = X.abs().mean()\nb = X.sum(1)",
        "%time q = torch.div(i, j, rounding_mode='trunc')\nc = X.sum(0)",
    )
    cells, report = porter_fix(source, "numpy")
    assert "%timeit -n1 -r1 m = xp.mean(xp.abs(X))\n" in cells[1], cells[1]
    assert "b = xp.sum(X, axis=1)" in cells[1], cells[1]
    assert "%time q = torch.div(i, j, rounding_mode='trunc')\n" in cells[2], cells[2]
    assert "c = xp.sum(X, axis=0)" in cells[2], cells[2]
    entries = {c["index"]: c for c in report["cells"]}
    timed = entries[1]["rewrite"]
    assert timed["status"] == "verified", timed
    assert {(s["line"], s["name"], s["applied"]) for s in timed["sites"]} >= {
        (1, "Tensor.abs", True),
        (1, "Tensor.mean", True),
    }
    division = next(s for s in entries[2]["rewrite"]["sites"] if s["name"] == "torch.div")
    assert (division["line"], division["applied"]) == (1, False)
    assert division["reason"].startswith("left out: alone, it changes the result"), division
