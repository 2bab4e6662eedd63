"""``porter fix``: a notebook rewritten where replays verify it, and the ported notebook runs.

Real kernels through the real console script (slow); the shipped example is fixed once
per module.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from porter_ext.model.report import NON_STANDARD_STATUSES
from tests.test_cli_run import notebook, porter

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parent.parent / "notebooks" / "01_port_a_torch_function.ipynb"
BACKENDS = "numpy,jax,strict"


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("fix")
    ported, report = out / "ported.ipynb", out / "fix.json"
    done = porter("fix", str(EXAMPLE), "-o", str(ported), "-b", BACKENDS, "--report", str(report))
    assert done.returncode == 0, done.stderr
    return done, ported, json.loads(report.read_text())


def test_fix_applies_the_verified_rewrite_and_reports_what_it_refused(fixed):
    done, ported, report = fixed
    nb = nbformat.read(ported, as_version=4)
    cell = nb.cells[3].source
    # cell 1 imports array_namespace already: the rewrite does not import it again
    assert cell.startswith("%%port\ndef foo(x):\n    xp = array_namespace(x)\n"), cell
    assert "from array_api_compat import" not in cell
    assert "return xp.astype(xp.max(x) > 0, xp.float32) * r" in cell
    rewrites = {c["index"]: c["rewrite"] for c in report["cells"] if c["rewrite"]}
    assert rewrites[3]["status"] == "verified"
    assert rewrites[3]["verified_on"] == ["torch", "numpy", "jax", "strict"]
    assert (
        "porter: cell 3: verified (5 site(s), verified on torch, numpy, jax, strict)" in done.stdout
    )
    assert nb.metadata["porter"] == {"ported_from": EXAMPLE.name}
    # the summary counts every code cell: rewritten, refused, or with nothing to rewrite
    code_cells = sum(c.cell_type == "code" for c in nb.cells)
    summary = next(line for line in done.stdout.splitlines() if "cell(s) rewritten" in line)
    counts = [
        int(n) for n in re.findall(r"(\d+) (?:cell\(s\) rewritten|refused|with nothing)", summary)
    ]
    assert len(counts) == 3 and sum(counts) == code_cells, summary
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    # the plan opens the summary on stderr, the fixes it made marked automatic
    assert "porter: port plan" in done.stderr and "[applied] Tensor.sum" in done.stderr


def test_fix_rewrites_the_cell_that_creates_the_array(fixed):
    """Cell 1 makes ``x`` with a chained creation call: the creation stays in torch (the
    entry point), ``xp`` is taken from its result, and the reshape goes through ``xp``."""
    done, ported, report = fixed
    cell = nbformat.read(ported, as_version=4).cells[1].source
    assert cell.endswith(
        "x = torch.linspace(-1, 1, 12)\nxp = array_namespace(x)\nx = xp.reshape(x, (3, 4))"
    ), cell
    assert cell.count("array_namespace") == 2  # the cell's own import, and the one use
    rewrite = next(c["rewrite"] for c in report["cells"] if c["index"] == 1)
    assert rewrite["status"] == "verified", rewrite
    assert rewrite["verified_on"] == ["torch"]
    # numpy, jax and strict replays of a cell that makes torch arrays never touch them
    assert "not applicable on numpy, jax, strict" in rewrite["reason"]
    assert "porter: cell 1: verified (1 site(s), verified on torch" in done.stdout


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
    assert not [c for c in cells[1]["calls"] if c["status"] in NON_STANDARD_STATUSES]
    assert {r["backend"]: r["status"] for r in foo["replays"] if r["role"] == "target"} == {
        "numpy": "ok",
        "jax": "ok",
        "strict": "ok",
    }


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


DEVICES = EXAMPLE.parent / "02_devices.ipynb"


def _rewrites(report_path: Path) -> dict:
    report = json.loads(report_path.read_text())
    return {c["index"]: c for c in report["cells"]}


def _fix_notebook(tmp_path: Path, name: str, *sources: str) -> tuple:
    """``porter fix -b numpy`` on a notebook of ``sources``: (result, ported path, cells)."""
    source = notebook(tmp_path / f"{name}.ipynb", *sources)
    out, report = tmp_path / f"{name}.ported.ipynb", tmp_path / f"{name}.json"
    done = porter("fix", str(source), "-o", str(out), "-b", "numpy", "--report", str(report))
    assert done.returncode == 0, done.stderr
    return done, out, _rewrites(report)


def _run_and_replay(ported: Path, tmp_path: Path, backends: str) -> dict:
    """The ported notebook executed by nbclient (raises on any error), then under porter run."""
    from nbclient import NotebookClient

    from porter_ext.headless import kernel_manager

    nb = nbformat.read(ported, as_version=4)
    NotebookClient(nb, km=kernel_manager(), timeout=300).execute()
    run = tmp_path / "run.json"
    done = porter("run", str(ported), "-b", backends, "-o", str(run))
    assert done.returncode == 0, done.stderr
    return {c["index"]: c for c in json.loads(run.read_text())["cells"]}


def test_fix_on_the_devices_notebook_rewrites_cell_1_and_the_port_runs(tmp_path):
    pytest.importorskip("jax")
    ported, report = tmp_path / "02.ported.ipynb", tmp_path / "02.json"
    done = porter("fix", str(DEVICES), "-o", str(ported), "--report", str(report))
    assert done.returncode == 0, done.stderr
    cell = nbformat.read(ported, as_version=4).cells[1].source
    assert "x = np.arange(12.0)\nxp = array_namespace(x)\nx = xp.reshape(x, (4, 3))" in cell
    assert cell.endswith("jax.devices()")  # no verified rewrite: left as written
    assert cell.count("from array_api_compat import") == 1  # the cell's own, not repeated
    rewrite = _rewrites(report)[1]["rewrite"]
    assert rewrite["status"] == "partial" and rewrite["verified_on"] == ["numpy"], rewrite
    assert [s["name"] for s in rewrite["sites"] if s["applied"]] == ["ndarray.reshape"]
    assert "porter: cell 1: partial" in done.stdout
    cells = _run_and_replay(ported, tmp_path, "numpy")
    names = {c["name"] for c in cells[1]["calls"] if c["status"] in NON_STANDARD_STATUSES}
    assert names == {"jax.devices"}, names  # the reshape finding is gone


FUNCTIONS = (
    "import torch\nfrom array_api_compat import array_namespace\nx = torch.ones(2, 3)",
    "def f(x):\n    return x.sum(1)\n\n\ndef unused(x):\n    return x.mean(0)",
    "y = f(x) * 2",
    "def h(x):\n    return unused(x)",  # reads unused, never runs it: no verdict on it
)


def test_a_function_only_cell_is_verified_at_its_first_call(tmp_path):
    pytest.importorskip("torch")
    done, out, cells = _fix_notebook(tmp_path, "defs", *FUNCTIONS)
    rewrite = cells[1]["rewrite"]
    # f is verified where cell 2 calls it; unused is left as written, and says why
    assert rewrite["status"] == "partial", rewrite
    assert rewrite["verified_on"] == ["torch", "numpy"]
    assert "verified f at its call in cell 2 (line 1: `y = f(x) * 2`)" in rewrite["reason"]
    assert "unused: never called in this notebook" in rewrite["reason"]
    sites = {s["name"]: s for s in rewrite["sites"]}
    assert sites["Tensor.sum"]["applied"] and not sites["Tensor.mean"]["applied"]
    assert "never called in this notebook" in sites["Tensor.mean"]["reason"]
    assert any("verified f of cell 1" in n for n in cells[2]["notes"])
    # the import an earlier cell provides is not repeated
    ported = nbformat.read(out, as_version=4).cells[1].source
    assert ported == (
        "def f(x):\n    xp = array_namespace(x)\n    return xp.sum(x, axis=1)\n\n\n"
        "def unused(x):\n    return x.mean(0)"
    )
    assert "porter: cell 1: partial" in done.stdout
    after = _run_and_replay(out, tmp_path, "numpy")
    # the ported f runs in cell 2: its replay on numpy works (the original's failed)
    assert {r["backend"]: r["status"] for r in after[2]["replays"] if r["role"] == "target"} == {
        "numpy": "ok"
    }


def test_a_function_only_cell_is_refused_when_its_call_disagrees(tmp_path):
    pytest.importorskip("torch")
    done, out, cells = _fix_notebook(
        tmp_path,
        "bag",
        "import torch\nx = torch.ones(2, 3)",
        "def g(x):\n    return x.sum(1)",
        "class Bag:\n    def sum(self, axis):\n        return 2.0\n\nw = x * g(Bag())",
        "def never(x):\n    return x.sum(0)",
    )
    rewrite = cells[1]["rewrite"]
    assert rewrite["status"] == "refused", rewrite
    assert rewrite["reason"].startswith(
        "refused g at its call in cell 2 (line 5: `w = x * g(Bag())`): it does not run on torch"
    ), rewrite["reason"]
    assert "Bag" in rewrite["reason"]
    assert cells[3]["rewrite"]["status"] == "refused"
    assert cells[3]["rewrite"]["reason"] == "never: never called in this notebook"
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].source == "def g(x):\n    return x.sum(1)"
    assert "porter: cell 1: not rewritten: refused g at its call in cell 2" in done.stdout


def test_a_definition_whose_parameter_no_run_has_typed_waits_for_its_first_call(tmp_path):
    """attacks/72: ``def g(a): return a.sum(0)`` (a parameter named as no array of the
    notebook) is rewritten, verified where a later cell first calls it, and a definition
    nothing calls says so; both were left with no rewrite and no word."""
    done, out, cells = _fix_notebook(
        tmp_path,
        "params",
        "import numpy as np\nx = np.ones((2, 3))",
        "def g(a):\n    return a.sum(0)",
        "def h(a):\n    return a.max(0)",
        "s = g(x)",
    )
    g, h = cells[1]["rewrite"], cells[2]["rewrite"]
    assert g is not None and g["status"] == "verified", g
    assert "verified g at its call in cell 3" in g["reason"]
    assert h is not None and h["status"] == "refused" and "never called" in h["reason"], h
    ported = nbformat.read(out, as_version=4).cells
    assert "xp.sum(a, axis=0)" in ported[1].source
    assert ported[2].source == "def h(a):\n    return a.max(0)"


NORM = (
    "class Norm:\n"
    "    def __init__(self, n):\n"
    "        self.scale = torch.ones(n)\n"
    "\n"
    "    def __call__(self, x):\n"
    "        m = x.mean(1, keepdim=True)\n"
    "        return (x - m) * self.scale\n"
)


def test_a_class_only_cell_is_verified_where_a_later_cell_makes_and_calls_it(tmp_path):
    """ch04's ``class LayerNorm(nn.Module)`` then ``ln = LayerNorm(6); out = ln(x)``: the
    class cell ran none of its methods, so it said "nothing it defines ran in this cell";
    its rewrite is now verified at the later cell that makes an instance and runs the
    rewritten methods (its replay builds the instance from the rewritten class)."""
    pytest.importorskip("torch")
    done, out, cells = _fix_notebook(
        tmp_path,
        "norm",
        "import torch\nx = torch.arange(6.0).reshape(2, 3)",
        NORM,
        "norm = Norm(3)\ny = norm(x)\nprint(y)",
    )
    rewrite = cells[1]["rewrite"]
    assert rewrite["status"] in ("verified", "partial"), rewrite
    assert "verified Norm at its call in cell 2" in rewrite["reason"], rewrite["reason"]
    assert "torch" in rewrite["verified_on"], rewrite
    ported = nbformat.read(out, as_version=4).cells[1].source
    assert "xp.mean(x, axis=1, keepdims=True)" in ported, ported
    _run_and_replay(out, tmp_path, "numpy")  # the ported notebook runs end to end


def test_a_class_is_verified_where_an_instance_made_earlier_runs_its_methods(tmp_path):
    """makemore part 5: the layers' classes, an instance made in one cell (``model =
    Sequential([...])``, which runs ``__init__`` only: no verdict there) and run in a later
    one (``logits = model(Xb)``, which never names the class). That replay gives the
    earlier instance, its own copy, the rewritten class before the cell runs (it would
    run the class as written otherwise), and the class is verified there."""
    pytest.importorskip("torch")
    done, out, cells = _fix_notebook(
        tmp_path,
        "held",
        "import torch\nx = torch.arange(6.0).reshape(2, 3)",
        NORM,
        "layers = [Norm(3)]",  # makes one, runs no rewritten method: no verdict
        "y = layers[0](x)\nprint(y)",
    )
    rewrite = cells[1]["rewrite"]
    assert rewrite["status"] in ("verified", "partial"), rewrite
    assert "verified Norm at its call in cell 3" in rewrite["reason"], rewrite["reason"]
    assert not any("Norm" in n for n in cells[2].get("notes", [])), cells[2]
    # numpy has no ``keepdim``: only the rewritten method runs there, so the earlier
    # instance did run it (the class as written would fail on numpy)
    assert rewrite["verified_on"] == ["torch", "numpy"], rewrite
    ported = nbformat.read(out, as_version=4).cells[1].source
    assert "xp.mean(x, axis=1, keepdims=True)" in ported, ported
    _run_and_replay(out, tmp_path, "numpy")
