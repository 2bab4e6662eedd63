"""The worked examples in notebooks/ run top to bottom in a real kernel."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.slow


def _execute(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    return nb


def _text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        data = out.get("data", {})
        parts.append(data.get("text/plain", ""))
        # the HTML's words, not its style sheet (whose class names spell statuses)
        parts.append(re.sub(r"<style>.*?</style>", "", data.get("text/html", ""), flags=re.S))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_without_errors(path):
    _execute(path)


def test_the_torch_example_shows_each_finding():
    nb = _execute(ROOT / "notebooks" / "01_port_a_torch_function.ipynb")
    by_source = {
        c.source.split("\n", 2)[1] if c.source.startswith("%%port") else c.source: c
        for c in nb.cells
        if c.cell_type == "code"
    }
    original = _text(by_source["def foo(x):"])
    for name in (
        "Tensor.sum",
        "xp.sum(x * x, axis=1)",
        "Tensor.tanh",
        "torch.max",
        "non_standard_usage",
        "xp.maximum",
        "Tensor.max",
    ):
        assert name in original, name
    portable = _text(by_source["def foo_portable(x):"])
    assert "all inside the standard" in portable
    assert "non_standard" not in portable
    assert "non_standard" in _text(by_source["def scale(x):"])
    assert "acknowledged" in _text(by_source["def scale_acknowledged(x):"])


def test_the_devices_example_flags_default_device_creation():
    nb = _execute(ROOT / "notebooks" / "02_devices.ipynb")
    ported = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%port -b")]
    forgetful, jitted, portable = (_text(c) for c in ported)
    assert "default_device_creation" in forgetful and "cpu:1" in forgetful
    assert "replay on strict:device1: error" in forgetful
    assert "traced_device" in jitted and "output d landed on the default device cpu:0" in jitted
    assert "default_device_creation" not in portable and "2/2 replays ok" in portable


def test_notebook_01_in_the_porter_kernel_loads_porter_silently():
    """The porter kernel loads porter itself; the notebook's own ``%load_ext porter_ext``
    (which keeps it working in any kernel) must not print "already loaded"."""
    import json

    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import KernelManager

    spec_dir = ROOT / "kernels" / "porter"
    data = json.loads((spec_dir / "kernel.json").read_text())
    manager = KernelManager(kernel_name="porter")
    manager._kernel_spec = KernelSpec(resource_dir=str(spec_dir), **data)
    path = ROOT / "notebooks" / "01_port_a_torch_function.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, km=manager, timeout=300, resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    assert [c.source[:40] for c in nb.cells if "already loaded" in _text(c)] == []
    assert "non_standard_usage" in "".join(_text(c) for c in nb.cells)
