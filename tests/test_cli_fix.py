"""``porter fix``: a notebook rewritten where replays verify it, and the ported notebook runs.

Real kernels through the real console script (slow); the shipped example is fixed once
per module.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from porter_ext.report.model import NON_STANDARD_STATUSES
from tests.test_cli_run import notebook, porter

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parent.parent / "notebooks" / "01_port_a_torch_function.ipynb"
BACKENDS = "numpy,jax,strict"


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("fix")
    ported, report = out / "ported.ipynb", out / "fix.json"
    done = porter("fix", str(EXAMPLE), "-o", str(ported), "-b", BACKENDS,
                  "--report", str(report))  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done, ported, json.loads(report.read_text())


def test_fix_applies_the_verified_rewrite_and_reports_what_it_refused(fixed):
    done, ported, report = fixed
    nb = nbformat.read(ported, as_version=4)
    cell = nb.cells[3].source
    assert cell.startswith(
        "%%port\nfrom array_api_compat import array_namespace\n\ndef foo(x):\n    xp = array_namespace(x)\n"
    )
    assert "return xp.astype(xp.max(x) > 0, xp.float32) * r" in cell
    rewrites = {c["index"]: c["rewrite"] for c in report["cells"] if c["rewrite"]}
    assert rewrites[3]["status"] == "verified"
    assert rewrites[3]["verified_on"] == ["torch", "numpy", "jax", "strict"]
    # cell 1 rewrites a chained call whose array has no name: its replay says why not
    assert rewrites[1]["status"] == "refused" and "NameError" in rewrites[1]["reason"]
    assert nb.cells[1].source == nbformat.read(EXAMPLE, as_version=4).cells[1].source
    assert (
        "porter: cell 3: verified (5 site(s), verified on torch, numpy, jax, strict)" in done.stdout
    )
    assert "porter: cell 1: not rewritten: it does not run on torch" in done.stdout
    assert nb.metadata["porter"] == {"ported_from": EXAMPLE.name}
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    # the plan opens the summary on stderr, the fixes it made marked automatic
    assert "porter: port plan" in done.stderr and "[fixed automatically] Tensor.sum" in done.stderr


def test_the_ported_notebook_runs_and_its_verified_cells_have_no_findings(fixed, tmp_path):
    from nbclient import NotebookClient

    from porter_ext.headless import kernel_manager

    _, ported, _ = fixed
    nb = nbformat.read(ported, as_version=4)
    NotebookClient(nb, km=kernel_manager(), timeout=300).execute()  # raises on any error
    run = tmp_path / "run.json"
    done = porter("run", str(ported), "-b", BACKENDS, "-o", str(run))
    assert done.returncode == 0, done.stderr
    cells = {c["index"]: c for c in json.loads(run.read_text())["cells"]}
    foo = cells[3]
    assert not [c for c in foo["calls"] if c["status"] in NON_STANDARD_STATUSES]
    assert {r["backend"]: r["status"] for r in foo["replays"] if r["role"] == "target"} == {
        "numpy": "ok", "jax": "ok", "strict": "ok",
    }  # fmt: skip


def test_later_cells_are_verified_with_the_earlier_rewrites_in_effect(tmp_path):
    pytest.importorskip("torch")
    source = notebook(
        tmp_path / "two.ipynb",
        "import torch\nx = torch.ones(2, 3)",
        "def f(x):\n    return x.sum(1)\n\ny0 = f(x)",
        "z = f(x) * 2",
    )
    out, report = tmp_path / "two.ported.ipynb", tmp_path / "two.json"
    done = porter("fix", str(source), "-o", str(out), "-b", "numpy", "--report", str(report))
    assert done.returncode == 0, done.stderr
    cells = json.loads(report.read_text())["cells"]
    assert cells[1]["rewrite"]["status"] == "verified"
    # cell 2 calls the portable f: its replay on numpy runs (the original f fails there)
    numpy = next(r for r in cells[2]["replays"] if r["backend"] == "numpy")
    assert numpy["status"] == "ok", numpy
    assert "xp.sum(x, axis=1)" in nbformat.read(out, as_version=4).cells[1].source


def test_fix_refuses_bad_paths_before_running(tmp_path):
    done = porter("fix", str(EXAMPLE), "-o", str(EXAMPLE))
    assert done.returncode == 2 and "the input itself" in done.stderr
    other = tmp_path / "mine.ipynb"
    other.write_text("{}")
    done = porter("fix", str(EXAMPLE), "-o", str(other))
    assert done.returncode == 2 and "not a notebook porter ported" in done.stderr
    done = porter("fix", str(EXAMPLE))
    assert done.returncode == 2 and "-o" in done.stderr
