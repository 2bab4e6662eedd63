"""`porter fix` rewrites the person's Python files too (issue 26, item 3): a module's
rewrite is verified by replaying the cells that call it, on every backend asked for, and
written beside the original as NAME.ported.py (``--in-place``: over it, after a backup),
never into a file that changed since the run. Real kernels and workers through the
console script; mirrors porter_ext/fix/files.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from tests.test_cli_run import porter

pytestmark = pytest.mark.slow
pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOK = "03_port_a_module.ipynb"


def _example(folder: Path) -> Path:
    shutil.copy(EXAMPLES / NOTEBOOK, folder / NOTEBOOK)
    shutil.copy(EXAMPLES / "norms.py", folder / "norms.py")
    return folder / NOTEBOOK


@pytest.fixture(scope="module")
def ported(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("fix03")
    nb = _example(folder)
    done = porter(
        "fix",
        str(nb),
        "-o",
        str(folder / "ported.ipynb"),
        "-b",
        "numpy,jax,strict",
        "--report",
        str(folder / "fix.json"),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return {"folder": folder, "said": done.stdout + done.stderr}


def test_the_module_is_ported_beside_the_original_verified_on_every_backend(ported):
    folder = ported["folder"]
    assert (folder / "norms.py").read_text() == (EXAMPLES / "norms.py").read_text()
    text = (folder / "norms.ported.py").read_text()
    assert "xp.sum(xp.pow(m, 2), axis=1, keepdims=True)" in text
    assert "array_namespace" in text and ".pow(2)" not in text
    assert "norms.py: 3 site(s) rewritten, verified on torch, numpy, jax, strict" in ported["said"]
    verdicts = [
        v
        for cell in json.loads((folder / "fix.json").read_text())["cells"]
        for v in cell.get("file_verdicts", [])
    ]
    assert [v["accepted"] for v in verdicts] == [True]
    assert set(verdicts[0]["verified_on"]) >= {"numpy", "jax", "strict"}


def test_the_ported_module_runs_where_the_original_failed(ported, tmp_path):
    """The ported file, imported as the notebook imports its module, gives on NumPy what
    the original gives on torch."""
    import numpy as np
    import torch

    namespace: dict = {}
    exec(
        compile((ported["folder"] / "norms.ported.py").read_text(), "norms.ported.py", "exec"),
        namespace,
    )
    x = np.linspace(-1, 1, 12).reshape(3, 4) + 2
    original: dict = {}
    exec((EXAMPLES / "norms.py").read_text(), original)
    expected = original["cosine_similarity"](torch.asarray(x), torch.asarray(x)).numpy()
    np.testing.assert_allclose(namespace["cosine_similarity"](x, x), expected, rtol=1e-6)


def test_in_place_writes_over_the_file_after_a_backup(tmp_path):
    nb = _example(tmp_path)
    done = porter(
        "fix", str(nb), "-o", str(tmp_path / "p.ipynb"), "-b", "numpy", "--in-place", timeout=900
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "norms.py.orig").read_text() == (EXAMPLES / "norms.py").read_text()
    assert "xp.pow(m, 2)" in (tmp_path / "norms.py").read_text()
    assert not (tmp_path / "norms.ported.py").exists()


def test_a_file_that_changed_since_the_run_is_not_written(tmp_path):
    nb_path = _example(tmp_path)
    nb = nbformat.read(nb_path, as_version=4)
    # the notebook's last cell edits the module after the cells that call it ran
    nb.cells.append(nbformat.v4.new_code_cell("open('norms.py', 'a').write('# edited\\n')"))
    nbformat.write(nb, nb_path)
    done = porter("fix", str(nb_path), "-o", str(tmp_path / "p.ipynb"), "-b", "numpy", timeout=900)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "norms.ported.py").exists()
    assert "norms.py: left as written: it changed since porter ran the notebook" in done.stdout
    assert (tmp_path / "norms.py").read_text().endswith("# edited\n")
