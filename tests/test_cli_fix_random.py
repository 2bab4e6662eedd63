"""``porter fix`` of a small makemore-like notebook (issue 29 item 1): its cells draw
their weights through torch's generator, and their rewrites verify all the same.

Real kernels through the real console script (slow).
"""

from __future__ import annotations

import json

import nbformat
import pytest

from tests.test_cli_run import notebook, porter

pytestmark = pytest.mark.slow

CELLS = (
    "import torch\nfrom array_api_compat import array_namespace\n",
    "g = torch.Generator().manual_seed(2147483647)\n"
    "C = torch.randn((27, 10), generator=g)\n"
    "W1 = torch.randn((30, 200), generator=g) * 0.2\n"
    "b1 = torch.randn(200, generator=g) * 0.01\n"
    "peak = W1.abs().max()\n",
    "h = torch.tanh(W1.sum(0) + b1)\nprint(tuple(h.shape))\n",
)


def test_a_notebook_drawing_its_weights_with_torch_is_ported(tmp_path):
    """Before, the drawing cell was partial ("1 site(s) left as written; not applicable on
    numpy, strict"), its draws left as the reason."""
    pytest.importorskip("torch")
    pytest.importorskip("array_api_strict")
    source = notebook(tmp_path / "makemore.ipynb", *CELLS)
    ported, report = tmp_path / "ported.ipynb", tmp_path / "fix.json"
    done = porter(
        "fix", str(source), "-o", str(ported), "-b", "numpy,strict", "--report", str(report)
    )
    assert done.returncode == 0, done.stderr
    rewrites = {c["index"]: c["rewrite"] for c in json.loads(report.read_text())["cells"]}
    drawing = rewrites[1]
    assert drawing["status"] == "verified", drawing["reason"]
    assert drawing["verified_on"] == ["torch", "numpy", "strict"]
    assert "W1, b1, peak" in drawing["reason"]
    assert "drawn by torch's generator" in drawing["reason"]
    # the next cell reads the drawn weights as inputs: judged by value on every backend
    assert rewrites[2]["status"] == "verified", rewrites[2]["reason"]
    assert rewrites[2]["verified_on"] == ["torch", "numpy", "strict"]
    nb = nbformat.read(ported, as_version=4)
    assert "peak = xp.max(xp.abs(W1))" in nb.cells[1].source
    assert "C = torch.randn((27, 10), generator=g)" in nb.cells[1].source
    assert "h = xp.tanh(xp.sum(W1, axis=0) + b1)" in nb.cells[2].source
