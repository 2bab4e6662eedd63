"""The CLI's side of workers: `porter backends` says which specs a worker provides,
`porter install-kernels` installs both kernelspecs, and `porter run -b jax:cpu:1` works
with no XLA_FLAGS in the environment (the worker provides the second device)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ENV = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"JAX_PLATFORMS": "cpu"}


def porter(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "porter_ext.cli", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
    )


def test_backends_name_the_specs_workers_provide():
    pytest.importorskip("jax")
    listed = {b["spec"]: b for b in json.loads(porter("backends", "--json").stdout)}
    assert listed["jax:cpu:1"]["worker"] is True and listed["jax:cpu:1"]["available"]
    assert listed["numpy"]["worker"] is False
    assert "from a worker" in porter("backends").stdout


def test_install_kernels_installs_the_porter_kernel(tmp_path):
    """The worker's spec is not installed where the Launcher lists kernels, unless a
    gateway's host asks for it (--worker)."""
    (tmp_path / "one").mkdir()
    (tmp_path / "both").mkdir()
    done = porter("install-kernels", "--prefix", str(tmp_path / "one"))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "one/share/jupyter/kernels").iterdir()) == ["porter"]
    done = porter("install-kernels", "--worker", "--prefix", str(tmp_path / "both"))
    assert done.returncode == 0, done.stderr
    for name in ("porter", "porter-worker"):
        kernels = tmp_path / "both/share/jupyter/kernels"
        spec = json.loads((kernels / name / "kernel.json").read_text())
        assert spec["language"] == "python"
    assert porter("install-kernels", "--user", "--sys-prefix").returncode == 2


def test_the_package_does_not_list_the_worker_kernel():
    """A pip install puts only the porter kernel where Jupyter lists kernels (the wheel's
    data files), and local workers start from the spec inside the package."""
    import tomllib

    from porter_ext.replay.worker_kernel import kernel_spec_file

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    data = project["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert [k for k in data.values() if "kernels/" in k] == ["share/jupyter/kernels/porter"]
    assert json.loads(kernel_spec_file().read_text())["metadata"]["porter"] == "worker"


@pytest.mark.slow
def test_porter_run_on_a_second_jax_device_without_xla_flags(tmp_path):
    pytest.importorskip("jax")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import numpy as np\nx = np.arange(4.0)"),
        nbformat.v4.new_code_cell("y = np.exp(x)"),
    ]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    out = tmp_path / "report.json"
    done = porter("run", str(path), "-b", "jax:cpu:1", "-o", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    cells = json.loads(out.read_text())["cells"]
    replay = next(r for r in cells[1]["replays"] if r["backend"] == "jax:cpu:1")
    assert replay["status"] == "ok", replay
    assert replay["outputs"][0]["device"] == "cpu:1"
    assert replay["worker"].startswith("local worker")
