"""`porter run | report | backends` through the real console script and real kernels."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "notebooks" / "01_port_a_torch_function.ipynb"

pytestmark = pytest.mark.slow


def porter(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    exe = shutil.which("porter") or str(Path(sys.executable).parent / "porter")
    return subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory) -> tuple[dict, str]:
    """The example's report and what `porter run` printed."""
    out = tmp_path_factory.mktemp("run") / "report.json"
    result = porter("run", str(EXAMPLE), "-o", str(out), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "report written" in result.stdout
    return json.loads(out.read_text()), result.stdout


@pytest.fixture(scope="module")
def example_report(example_run) -> dict:
    return example_run[0]


def test_run_prints_the_reports_summary_in_its_words(example_run):
    """Issue 27: the counts line `porter run` prints is the report's ``summary.text``,
    the line the HTML report and porter's JupyterLab renderer show."""
    report, printed = example_run
    assert f"porter: {EXAMPLE.name}: {report['summary']['text']}\n" in printed


def _calls(report: dict, index: int) -> dict[str, dict]:
    [cell] = [c for c in report["cells"] if c["index"] == index]
    return {c["name"]: c for c in cell["calls"]}


def test_run_writes_the_contract_report(example_report):
    report = example_report
    assert report["schema"] == "porter.report/1"
    assert report["source"]["notebook"] == EXAMPLE.name
    assert set(report["summary"]) == {
        "cells",
        "calls",
        "non_standard",
        "device_findings",
        "replays_ok",
        "replays_failed",
        "mismatches",
        "text",
    }
    backends = report["environment"]["backends"]
    assert any(b["library"] == "torch" and b["available"] for b in backends)
    assert all(b["reason"] for b in backends if not b["available"])


def test_run_names_the_ported_functions_findings(example_report):
    nb = nbformat.read(EXAMPLE, as_version=4)
    original = next(i for i, c in enumerate(nb.cells) if "def foo(x)" in c.source)
    portable = next(i for i, c in enumerate(nb.cells) if "def foo_portable" in c.source)
    calls = _calls(example_report, original)
    assert calls["Tensor.sum"]["suggestion"] == "xp.sum(x * x, axis=1)"
    assert calls["Tensor.tanh"]["status"] == "non_standard"
    assert calls["torch.max"]["status"] == "non_standard_usage"
    assert "xp.maximum" in calls["torch.max"]["suggestion"]
    assert calls["Tensor.max"]["status"] == "non_standard"
    portable_calls = _calls(example_report, portable)
    assert [
        c for c in portable_calls.values() if c["status"] not in ("standard", "host_sync")
    ] == []
    statuses = [
        {c["status"] for c in cell["calls"] if "exp2" in c["name"]}
        for cell in example_report["cells"]
        if any("exp2" in c["name"] for c in cell["calls"])
    ]
    assert {"non_standard"} in statuses and {"acknowledged"} in statuses


def test_fail_on_exits_1_when_findings_match(tmp_path):
    out = tmp_path / "r.json"
    result = porter("run", str(EXAMPLE), "-o", str(out), "--fail-on", "non_standard")
    assert result.returncode == 1
    assert out.exists()


def test_a_raising_cell_is_recorded_and_the_run_goes_on(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import numpy as np\na = np.exp(np.ones(2))\nraise RuntimeError('boom')"
        ),
        nbformat.v4.new_code_cell("b = np.transpose(np.ones((2, 2)))"),
    ]
    path = tmp_path / "raises.ipynb"
    nbformat.write(nb, path)
    out = tmp_path / "r.json"
    result = porter("run", str(path), "-o", str(out))
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    first, second = report["cells"]
    assert first["error"]["type"] == "RuntimeError" and first["error"]["line"] == 3
    assert second["calls"][0]["name"] == "numpy.transpose"


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "no such file"), ("{not json", "not a valid notebook")],
)
def test_bad_notebooks_exit_2_with_one_line(tmp_path, content, reason):
    path = tmp_path / "bad.ipynb"
    if content is not None:
        path.write_text(content)
    result = porter("run", str(path))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0]


def test_usage_errors_exit_2():
    assert porter("run").returncode == 2
    assert porter("run", str(EXAMPLE), "--fail-on", "everything").returncode == 2


def test_backends_lists_what_it_sees():
    result = porter("backends", "--json")
    assert result.returncode == 0
    entries = json.loads(result.stdout)
    by_library = {}
    for e in entries:
        by_library.setdefault(e["library"], []).append(e)
    assert any(e["available"] for e in by_library["numpy"])
    assert all(not e["available"] and e["reason"] for e in by_library.get("cupy", []))


DEVICES = ROOT / "notebooks" / "02_devices.ipynb"


@pytest.mark.parametrize("fmt", ["json", "html", "md"])
def test_run_with_backends_fills_replays_in_every_format(tmp_path, fmt):
    out = tmp_path / f"devices.{fmt}"
    result = porter("run", str(DEVICES), "-b", "numpy,torch", "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    if fmt == "json":
        report = json.loads(text)
        replayed = [c for c in report["cells"] if c["replays"]]
        assert replayed
        backends = {r["backend"] for c in replayed for r in c["replays"]}
        # cells with their own -b keep it; the others get -b numpy,torch
        assert {"numpy", "torch", "jax:cpu:1"} <= backends
        assert report["summary"]["device_findings"] >= 1
    elif fmt == "html":
        assert text.lstrip().lower().startswith("<!doctype html")
        assert "default_device_creation" in text
    else:
        assert r"default\_device\_creation" in text and "| backend |" in text


def test_run_rejects_an_unknown_backend_with_the_valid_ones():
    result = porter("run", str(EXAMPLE), "-b", "tensorflow")
    assert result.returncode == 2
    assert "numpy" in result.stderr


def test_report_converts_json_and_names_bad_fields(tmp_path, example_report):
    src = tmp_path / "r.json"
    src.write_text(json.dumps(example_report))
    result = porter("report", str(src), "--format", "md", "-o", str(tmp_path / "r.md"))
    assert result.returncode == 0, result.stderr
    assert "Tensor.sum" in (tmp_path / "r.md").read_text()
    example_report["cells"][0]["calls"][0]["status"] = "weird"
    src.write_text(json.dumps(example_report))
    result = porter("report", str(src))
    assert result.returncode == 2
    assert "status" in result.stderr and "weird" in result.stderr


def test_a_reader_that_goes_away_stops_porter_quietly(tmp_path):
    """``porter lint . | head``: the closed pipe is not an internal error."""
    import subprocess
    import sys

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text("import numpy as np\n" + "y = np.concatenate([x, x])\n" * 3000)
    process = subprocess.Popen(
        [sys.executable, "-m", "porter_ext.cli", "lint", str(package), "--format", "text"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.read(10)
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait() == 141
    assert err == ""
