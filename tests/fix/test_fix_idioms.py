"""``%%port --fix`` and ``porter fix`` on the idioms of real notebooks (issue 19): every
link of a chain, fields of tuple results, what the run tells the codemod, and meaning
that replays cannot see (a copy written through stays a copy)."""

from __future__ import annotations

import json

import nbformat
import numpy as np
import pytest

from porter_ext.model.plan import build_plan
from tests.test_cli_run import notebook, porter

BACKENDS = "numpy,jax,strict"


def porter_fix(source, backends: str) -> tuple[list[str], dict]:
    """``porter fix`` on the notebook ``source`` (a path) on ``backends``: the ported
    notebook's cell sources and the fix report."""
    ported, report = source.with_name("ported.ipynb"), source.with_name("fix.json")
    done = porter(
        "fix",
        str(source),
        "-o",
        str(ported),
        "-b",
        backends,
        "--report",
        str(report),
        "--timeout",
        "120",
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    cells = [c.source for c in nbformat.read(ported, as_version=4).cells]
    return cells, json.loads(report.read_text())


def _fix(shell, setup: str, body: str, flags: str):
    shell.run_cell(setup)
    result = shell.run_cell(f"%%port --fix --quiet {flags}\n{body}")
    assert result.error_in_exec is None and result.error_before_exec is None
    return shell.user_ns["_port"].entry.rewrite


def test_a_chain_on_an_untyped_result_is_ported_and_verified_on_every_backend(port_shell):
    """``p`` comes from ``torch.sigmoid``, which the source cannot type: before, only the
    sigmoid was rewritten and the loss line failed on numpy, jax and strict."""
    torch = pytest.importorskip("torch")
    setup = "import torch\nX = torch.linspace(-1, 1, 6).reshape(2, 3)\n"
    body = (
        "p = torch.sigmoid(X)\n"
        "loss = -(p.clamp(1e-6, 1 - 1e-6).log()).mean()\n"
        "m = X.abs().max(dim=1).values\n"
        "s = torch.sort(X, descending=True)[0]\n"
    )
    rewrite = _fix(port_shell, setup, body, f"--in-process -b {BACKENDS}")
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "jax", "strict"]
    assert "loss = -xp.mean(xp.log(xp.clip(p, min=1e-6, max=1 - 1e-6)))\n" in rewrite.source
    assert "m = xp.max(xp.abs(X), axis=1)\n" in rewrite.source
    assert "s = xp.sort(X, descending=True)\n" in rewrite.source
    ported: dict = {"X": torch.linspace(-1, 1, 6).reshape(2, 3)}
    exec(rewrite.source, ported)
    assert torch.equal(ported["m"], port_shell.user_ns["m"])
    assert torch.allclose(ported["loss"], port_shell.user_ns["loss"])


def test_the_run_decides_an_entry_the_source_leaves_to_values(port_shell):
    """``v.T`` on a 1-D array is outside the standard; whether ``v`` is 2-D only the run
    knows, and its verdict gives the rewrite."""
    setup = "import numpy as np\nx = np.arange(6.0).reshape(2, 3)\n"
    rewrite = _fix(port_shell, setup, "v = x[0, :]\ny = v.T * 2\n", "--in-process -b strict")
    assert rewrite.status == "verified", rewrite.reason
    assert "y = xp.permute_dims(v, tuple(range(v.ndim - 1, -1, -1))) * 2\n" in rewrite.source


def test_flatten_then_a_write_keeps_the_copy(port_shell):
    """attacks/38: ``x.flatten()`` copies; a rewrite into ``xp.reshape(x, (-1,))`` (a view)
    verified, and the ported cell wrote 99.0 into x. The copy is kept."""
    setup = "import numpy as np\nx = np.arange(6.0).reshape(2, 3)\n"
    body = "f = x.flatten()\nf[0] = 99.0\ns = float(f.sum())\n"
    rewrite = _fix(port_shell, setup, body, "--in-process -b strict")
    assert rewrite.status == "verified", rewrite.reason
    assert "f = xp.reshape(xp.asarray(x, copy=True), (-1,))\n" in rewrite.source
    ported: dict = {"x": np.arange(6.0).reshape(2, 3)}
    exec(rewrite.source, ported)
    assert ported["x"][0, 0] == 0.0 and ported["s"] == port_shell.user_ns["s"]


def test_the_host_generator_porter_advises_is_no_finding(port_shell):
    """``rng = np.random.default_rng(seed)``: its suggestion was the line itself, and the
    plan listed it as "needs you"."""
    port_shell.run_cell("import numpy as np\n")
    port_shell.run_cell("%%port --no-replay --quiet\nrng = np.random.default_rng(seed=1701)\n")
    (call,) = [c for c in port_shell.user_ns["_port"].entry.calls if "default_rng" in c.name]
    assert call.status == "outside_namespace", call
    assert "rng = np.random.default_rng" not in (call.suggestion or "")
    assert build_plan([port_shell.user_ns["_port"].entry]) == []


def test_a_diagonal_offset_is_kept_as_k(port_shell):
    """LLMs-from-scratch ch03: ``torch.triu(m, diagonal=1)`` was suggested as k=0."""
    setup = "import torch\nX = torch.ones(4, 4)\n"
    rewrite = _fix(port_shell, setup, "mask = torch.triu(X, diagonal=1)\n", "--in-process -b numpy")
    assert rewrite.status == "verified", rewrite.reason
    assert "mask = xp.triu(X, k=1)\n" in rewrite.source
    (call,) = port_shell.user_ns["_port"].entry.calls
    assert call.suggestion == "xp.triu(X, k=1)"  # the call's own expressions


def test_xp_is_not_taken_from_a_list(port_shell):
    """No array to take ``xp`` from (``x`` is a list): the run's rewrite makes the list
    an array through the library's own module, never ``array_namespace(x)``."""
    rewrite = _fix(
        port_shell,
        "import numpy as np\n",
        "x = [-1, 0, 1]\ny = np.arcsin(x)\n",
        "--in-process -b strict",
    )
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.source == "x = [-1, 0, 1]\ny = np.asin(np.asarray(x, dtype=np.float64))\n"
    assert "array_namespace" not in rewrite.source


@pytest.mark.slow
def test_porter_fix_on_a_notebook_keeps_what_replays_cannot_see(tmp_path):
    """attacks/51: the ported notebook prints what the original prints (a copy written
    through, in a cell and in a function on a parameter the run saw as an array)."""
    source = notebook(
        tmp_path / "nb.ipynb",
        "import numpy as np\nx = np.arange(6.0).reshape(2, 3)",
        "f = x.flatten()\nf[0] = 99.0\ns = float(f.sum())",
        "def g(a):\n    b = a.flatten()\n    b[0] = 99.0\n    return b\nt = g(x)",
        "print(float(x[0, 0]), float(t.sum()))",
    )
    cells, report = porter_fix(source, "numpy,strict")
    assert "f = xp.reshape(xp.asarray(x, copy=True), (-1,))" in cells[1], cells[1]
    assert "b = xp.reshape(xp.asarray(a, copy=True), (-1,))" in cells[2], cells[2]
    statuses = {c["index"]: (c["rewrite"] or {}).get("status") for c in report["cells"]}
    assert statuses[1] == "verified" and statuses[2] == "verified", statuses
    namespace: dict = {}
    for cell in cells[:3]:
        exec(cell, namespace)
    assert namespace["x"][0, 0] == 0.0 and namespace["t"][0] == 99.0
