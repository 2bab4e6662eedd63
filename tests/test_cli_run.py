"""`porter run` keeps its limits and its report whole, whatever a notebook does.

Real kernels through the real console script, so these are slow; each notebook runs once
per module. Mirrors porter_ext/headless.py.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow


def porter(
    *args: str, env: dict | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    exe = shutil.which("porter") or str(Path(sys.executable).parent / "porter")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, env=env)


def notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


def _processes_with(tag: str) -> list[int]:
    """Processes whose environment holds `tag` (the kernel inherits porter's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_cell_past_the_timeout_is_stopped_recorded_and_the_run_goes_on(tmp_path):
    """adv_24: a 25 s sleep under --timeout 3 ran to the end and no timeout was recorded.
    The sleep here is an hour: a run that ends at all (within porter()'s 300 s) was
    stopped, however loaded the machine; the time it takes is a benchmark's business."""
    path = notebook(tmp_path / "slow.ipynb", "import time", "time.sleep(3600)", "x = 1")
    out = tmp_path / "slow.json"
    result = porter("run", str(path), "--timeout", "3", "-o", str(out))
    assert result.returncode == 0, result.stderr
    cells = json.loads(out.read_text())["cells"]
    assert [c["index"] for c in cells] == [0, 1, 2]
    assert cells[1]["error"]["type"] == "TimeoutError"
    assert "3 s" in cells[1]["error"]["message"]
    assert cells[2]["error"] is None  # the interrupted kernel went on


def test_a_cell_that_swallows_the_interrupt_gets_a_fresh_kernel(tmp_path):
    path = notebook(
        tmp_path / "stubborn.ipynb",
        "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass",
        "y = 2",
    )
    out = tmp_path / "stubborn.json"
    result = porter("run", str(path), "--timeout", "2.5", "-o", str(out))  # ends: stopped
    assert result.returncode == 0, result.stderr
    first, second = json.loads(out.read_text())["cells"]
    assert first["error"]["type"] == "TimeoutError"
    assert any("fresh kernel" in n for n in first["notes"])
    assert second["error"] is None and second["index"] == 1


def test_a_kernel_that_dies_ends_the_run_with_exit_2_and_the_report(tmp_path):
    """adv_24: a kernel killed by os._exit hung `porter run` for good."""
    path = notebook(tmp_path / "dies.ipynb", "import os", "os._exit(1)", "x = 1")
    out = tmp_path / "dies.json"
    result = porter("run", str(path), "--timeout", "20", "-o", str(out), timeout=120)
    assert result.returncode == 2  # within 120 s: a run that hung would have raised
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "kernel died in cell 1" in lines[0], result.stderr
    cells = json.loads(out.read_text())["cells"]
    assert [c["index"] for c in cells] == [0, 1, 2]  # every code cell is in the report
    assert cells[1]["error"]["type"] == "DeadKernelError"
    assert cells[2]["error"]["type"] == "NotRun"


HIDING = (
    "import numpy as np\na = np.arange(3.0)",
    "b = a.sum(0)",
    "y = (1,",
    "%port clear",
    "%port off",
    "%unload_ext porter_ext",
    "from porter_ext.session import get_session\nget_session(get_ipython()).cells.clear()",
    "import sys\nprint('KERNEL-STDERR', file=sys.__stderr__, flush=True)",
    "%%port --rtol nan\nnever = 1",
    "d = 1",
)


@pytest.fixture(scope="module")
def hiding_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("hiding")
    path = notebook(d / "hiding.ipynb", *HIDING)
    out = d / "r.json"
    tag = f"PORTER_TEST_TAG={uuid.uuid4().hex}"
    env = {**os.environ, "PORTER_TEST_TAG": tag}
    old = os.umask(0o022)
    try:
        result = porter("run", str(path), "-o", str(out), "--fail-on", "non_standard", env=env)
    finally:
        os.umask(old)
    return result, out, tag


def test_a_notebook_cannot_hide_its_findings(hiding_run):
    """adv_31: `%port clear` erased the earlier findings and `--fail-on` passed."""
    result, out, _ = hiding_run
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text())
    assert [c["index"] for c in report["cells"]] == list(range(len(HIDING)))
    assert report["summary"]["non_standard"] >= 1
    notes = {c["index"]: c.get("notes", []) for c in report["cells"]}
    assert any("%port clear" in n for n in notes[3])
    assert any("%port off" in n for n in notes[4])
    assert any("%unload_ext" in n for n in notes[5])
    usage = report["cells"][8]  # its own bad option: refused, and still in the report
    assert usage["error"]["type"] == "UsageError" and "--rtol" in usage["error"]["message"]


def test_a_cell_that_does_not_parse_is_in_the_report_with_its_line(hiding_run):
    """adv_29: a SyntaxError cell was missing from the report."""
    _, out, _ = hiding_run
    cell = json.loads(out.read_text())["cells"][2]
    assert cell["error"]["type"] == "SyntaxError" and cell["error"]["line"] == 1
    assert cell["source"].rstrip("\n") == "y = (1,"


def test_the_kernel_is_gone_and_its_stderr_stays_out_of_porters(hiding_run):
    result, out, tag = hiding_run
    assert "KERNEL-STDERR" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == "porter: failing on non_standard"  # porter's own line ends it
    assert not [ln for ln in lines if "IPKernelApp" in ln or "Traceback" in ln]
    assert _processes_with(tag) == []
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_a_call_in_code_an_earlier_cell_wrote_names_that_cell_by_notebook_position(tmp_path):
    """CONTRACT.md ``origin``: porter run knows the notebook, so the writing cell is
    named by its position (here 1: a markdown cell comes first) and its execution count."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# cross-cell"),
        nbformat.v4.new_code_cell("import numpy as np\n\ndef f(x):\n    return np.sum(x, 0)"),
        nbformat.v4.new_code_cell("y = f(np.ones((2, 2)))"),
    ]
    path = tmp_path / "cross.ipynb"
    nbformat.write(nb, path)
    out = tmp_path / "cross.json"
    result = porter("run", str(path), "-o", str(out))
    assert result.returncode == 0, result.stderr
    cells = json.loads(out.read_text())["cells"]
    defining = next(c for c in cells if c["index"] == 1)
    [call] = [c for c in cells[-1]["calls"] if c["name"] == "numpy.sum"]
    assert cells[-1]["index"] == 2 and (call["line"], call["col"]) == (1, 4)
    assert call["origin"] == {
        "index": 1,
        "execution_count": defining["execution_count"],
        "line": 4,
        "col": 11,
        "end_line": 4,
        "end_col": 23,
        "cell_id": None,
        "first_line": 1,
        # human-facing: the writing cell's line as its editor counts it, its name
        "editor_line": 4,
        "label": "cell 2 · In [1]",
    }


def test_a_compiled_function_runs_as_in_the_plain_notebook(tmp_path):
    """Issue 26 (item 5): under `porter run` every cell is recorded, and a function that
    torch.compile compiled raised ``InternalTorchDynamoError: KeyError: CallSite`` where
    the notebook ran plainly. Its call is one call now, with a note, and gives what the
    plain run gives (the last cell checks, and raises where it differs)."""
    pytest.importorskip("torch")
    path = notebook(
        tmp_path / "compiled.ipynb",
        "import torch\nx = torch.arange(12.0).reshape(3, 4)",
        "def g(x):\n    return torch.sin(x).sum(1)\ncg = torch.compile(g, backend='eager')",
        "y = cg(x)",
        "assert torch.equal(y, torch.sin(x).sum(1)), y\nassert torch.equal(cg(x + 1), g(x + 1))",
    )
    out = tmp_path / "compiled.json"
    result = porter("run", str(path), "-o", str(out))
    assert result.returncode == 0, result.stderr
    cells = json.loads(out.read_text())["cells"]
    assert [c["error"] for c in cells] == [None] * 4
    [call] = [c for c in cells[2]["calls"] if c["name"] == "torch.compile(g)"]
    assert call["kind"] == "transformation" and call["status"] == "outside_namespace"
    assert "does not record the calls inside it" in call["message"]


#: a cell that has the kernel write, as it exits, which of these libraries it imported
_IMPORTED_AT_EXIT = (
    "%%port --no-replay\nimport atexit, sys\n"
    "atexit.register(exec, \"open(SEEN, 'w').write(repr(sorted(m for m in "
    "('torch', 'jax', 'dask.array') if m in sys.modules)))\", "
    "{{'SEEN': {seen!r}, 'sys': sys}})"
)


def test_the_environment_is_described_without_importing_every_library_in_the_kernel(tmp_path):
    """Issue 29 (time): the report's environment lists every library porter knows, and
    the kernel imported torch, JAX and Dask after the last cell only to describe them
    (5 s of a run of 20). A process of its own describes them while the notebook runs;
    the kernel describes what it imported itself, and the report is the same."""
    from dataclasses import asdict

    from porter_ext.backends import list_backends

    seen = tmp_path / "seen.txt"
    path = notebook(
        tmp_path / "plain.ipynb",
        "import numpy as np\nx = np.ones(3)\ny = x + 1",
        _IMPORTED_AT_EXIT.format(seen=str(seen)),
    )
    out = tmp_path / "plain.json"
    result = porter("run", str(path), "-b", "numpy", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert seen.read_text() == "[]"  # the kernel, at its exit, had imported none of them
    described = json.loads(out.read_text())["environment"]["backends"]
    assert described == [{**asdict(b), "devices": list(b.devices)} for b in list_backends()]
    assert {b["library"] for b in described} >= {"numpy", "torch", "jax", "dask"}


def test_a_library_the_notebook_imported_is_described_by_the_kernel(tmp_path):
    """What the notebook imported (and may have configured) is the kernel's own view:
    here JAX with two CPU devices, set before its import; a process that only shares
    the kernel's environment at the start would see one."""
    pytest.importorskip("jax")
    path = notebook(
        tmp_path / "jax2.ipynb",
        "import os\nos.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=2'\n"
        "import jax\nn = len(jax.devices('cpu'))",
    )
    out = tmp_path / "jax2.json"
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    result = porter("run", str(path), "-b", "numpy", "-o", str(out), env=env)
    assert result.returncode == 0, result.stderr
    described = json.loads(out.read_text())["environment"]["backends"]
    assert {b["spec"] for b in described if b["library"] == "jax" and b["available"]} >= {
        "jax",
        "jax:cpu:1",
    }


def test_the_workers_start_with_the_kernel_before_the_first_cell(tmp_path):
    """Issue 29 (time): the session's workers start when `porter run` tells the kernel
    its backends, so that they boot while the first cells run rather than after them.
    In a fresh interpreter: the sync makes its shell's session headless for good (a
    headless run records every cell), which a shared shell would keep for later tests."""
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from porter_ext.headless import kernel_sync\n"
        "from porter_ext.replay.workers import shared_pool, shutdown_workers\n"
        "ip = InteractiveShell.instance()\nip.run_line_magic('load_ext', 'porter_ext')\n"
        "try:\n"
        f"    kernel_sync(ip, {str(tmp_path / 'sync.json')!r}, None, 0, backends='numpy,strict')\n"
        "    workers = shared_pool().workers.values()\n"
        "    print(sorted(str(w.spec) for w in workers if getattr(w, 'km', None) is not None))\n"
        "finally:\n"
        "    shutdown_workers()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip().splitlines()[-1] == "['numpy', 'strict']", out.stdout
