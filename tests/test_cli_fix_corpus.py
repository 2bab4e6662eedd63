"""``porter fix`` on idioms of public notebooks that broke porter itself (issue 29, item 5):
a plotting cell, a class whose instances outlive its rewrite, an in-place method on a view.

Real kernels through the real console script (slow).
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tests.test_cli_run import notebook, porter

pytestmark = pytest.mark.slow


def _fix(tmp_path: Path, *sources: str, backends: str = "numpy") -> tuple:
    """``porter fix`` of a notebook of ``sources``: (result, ported cells, report cells)."""
    source = notebook(tmp_path / "nb.ipynb", *sources)
    out, report = tmp_path / "nb.ported.ipynb", tmp_path / "nb.json"
    done = porter("fix", str(source), "-o", str(out), "-b", backends, "--report", str(report))
    assert done.returncode == 0, done.stderr
    cells = {c["index"]: c for c in json.loads(report.read_text())["cells"]}
    return done, nbformat.read(out, as_version=4).cells, cells


def _internal_errors(cells: dict) -> list:
    return [
        (index, cell["error"]["message"])
        for index, cell in cells.items()
        if cell["error"] is not None and cell["error"]["type"] == "PorterInternalError"
    ]


def test_a_plotting_cell_verifies_the_function_it_plots(tmp_path):
    """matplotlib's ``ax.plot(f(x))`` is recorded (an array went into it) as a method of
    a library porter has no adapter for: verifying the cell failed inside porter
    (``SpecError: unknown library 'matplotlib'``), and f was reported never called."""
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    done, ported, cells = _fix(
        tmp_path,
        "import matplotlib\nmatplotlib.use('Agg')\nimport torch\nx = torch.ones(3, 4)",
        "def f(x):\n    return x.sum(1)",
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot(f(x))\nplt.close(fig)",
    )
    assert not _internal_errors(cells), _internal_errors(cells)
    assert "unknown library" not in done.stdout + done.stderr
    rewrite = cells[1]["rewrite"]
    assert rewrite["status"] == "verified", rewrite
    assert "verified f at its call in cell 2" in rewrite["reason"], rewrite["reason"]
    assert "xp.sum(x, axis=1)" in ported[1].source
