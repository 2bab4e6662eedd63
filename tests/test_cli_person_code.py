"""`porter run` records the person's code beside the notebook (issue 26): the example
notebook 03 and its module ``norms.py``, and a module in a folder given with --paths.
Real kernels and workers through the console script; mirrors porter_ext/headless.py and
porter_ext/record/person_code.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.test_cli_run import notebook, porter

pytestmark = pytest.mark.slow
pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parent.parent / "notebooks" / "03_port_a_module.ipynb"


@pytest.fixture(scope="module")
def example_run(tmp_path_factory) -> dict:
    """Notebook 03 and its module copied into a folder of their own, run once."""
    folder = tmp_path_factory.mktemp("example03")
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)
    shutil.copy(EXAMPLE.parent / "norms.py", folder / "norms.py")
    out = folder / "report.json"
    done = porter("run", str(folder / EXAMPLE.name), "-b", "numpy,strict", "-o", str(out))
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    return {"report": json.loads(out.read_text()), "said": said, "folder": folder}


def test_the_modules_calls_are_findings_at_its_file_and_line(example_run):
    cells = example_run["report"]["cells"]
    calls = [c for cell in cells for c in cell["calls"]]
    from_module = {c["name"]: c["origin"] for c in calls if (c["origin"] or {}).get("file")}
    assert set(from_module) >= {"Tensor.pow", "Tensor.sum", "Tensor.sqrt"}
    assert {o["file"] for o in from_module.values()} == {"norms.py"}
    assert from_module["Tensor.pow"]["line"] == 5
    assert not any(c["name"].startswith("norms.") for c in calls)  # not another library


def test_a_replay_failing_inside_the_module_is_placed_there(example_run):
    cells = example_run["report"]["cells"]
    failures = [
        r["error"]
        for cell in cells
        for r in cell["replays"]
        if r["backend"] == "numpy" and r["status"] == "error"
    ]
    assert any(e.get("file") == "norms.py" and e["file_line"] == 5 for e in failures), failures
    # the calling line as the notebook's editor counts it: below the cell's %%port line
    assert "norms.py line 5, called from line 2" in example_run["said"]


def test_paths_names_a_folder_of_the_persons_code(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helpers_elsewhere.py").write_text("def g(m):\n    return m.sum(1)\n")
    (tmp_path / "nb").mkdir()
    nb = notebook(
        tmp_path / "nb" / "n.ipynb",
        f"import sys, torch\nsys.path.insert(0, {str(lib)!r})\nfrom helpers_elsewhere import g",
        "y = g(torch.ones(2, 2))",
    )
    out = tmp_path / "r.json"
    without = porter("run", str(nb), "-o", str(out))
    assert without.returncode == 0, without.stderr
    names = [c["name"] for cell in json.loads(out.read_text())["cells"] for c in cell["calls"]]
    assert "Tensor.sum" not in names  # outside the person's folders: another library
    with_paths = porter("run", str(nb), "-o", str(out), "--force", "--paths", str(lib))
    assert with_paths.returncode == 0, with_paths.stderr
    calls = [c for cell in json.loads(out.read_text())["cells"] for c in cell["calls"]]
    [summed] = [c for c in calls if c["name"] == "Tensor.sum"]
    assert summed["origin"]["file"] == "../lib/helpers_elsewhere.py"
    missing = porter("run", str(nb), "-o", str(out), "--force", "--paths", str(tmp_path / "no"))
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "does not exist" in missing.stderr


def test_lint_of_the_module_uses_what_the_run_recorded(example_run):
    """`porter lint norms.py` alone cannot know ``m`` is a tensor; with the run's report
    it flags ``m.pow(2)`` and the rest with their suggestions."""
    folder = example_run["folder"]
    alone = porter("lint", str(folder / "norms.py"), "--format", "json")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert json.loads(alone.stdout)["findings"] == []
    informed = porter(
        "lint",
        str(folder / "norms.py"),
        "--format",
        "json",
        "--from-report",
        str(folder / "report.json"),
    )
    assert informed.returncode == 1, informed.stderr
    findings = {f["name"]: f for f in json.loads(informed.stdout)["findings"]}
    assert set(findings) == {"Tensor.pow", "Tensor.sum", "Tensor.sqrt"}
    assert findings["Tensor.pow"]["line"] == 5
    assert findings["Tensor.pow"]["suggestion"] == "xp.pow(m, 2)"
    bad = porter("lint", str(folder / "norms.py"), "--from-report", str(folder / "norms.py"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
