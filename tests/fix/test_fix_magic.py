"""``%%port --fix``: the codemod's rewrite, accepted only once replays prove it."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from porter_ext.model.plan import build_plan
from porter_ext.session import get_session
from tests.fix.test_rewrite import FOO

pytest.importorskip("torch")


@pytest.fixture
def shell():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "porter_ext")
    get_session(shell).cells.clear()
    shell.run_cell(
        "import torch\nfrom array_api_compat import array_namespace\n"
        "x = torch.linspace(-1, 1, 12).reshape(3, 4)\ni = torch.arange(1, 7)\n"
    )
    yield shell
    for name in ("x", "i", "q", "y", "z", "foo", "original", "_port"):
        shell.user_ns.pop(name, None)


def _fix(shell, body: str, flags: str = "--in-process -b numpy,jax"):
    result = shell.run_cell(f"%%port --fix {flags}\n{body}")
    assert result.error_in_exec is None and result.error_before_exec is None
    return shell.user_ns["_port"]


def test_fix_rewrites_foo_and_verifies_it_on_the_original_and_every_requested_backend(shell):
    port = _fix(shell, FOO)
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "jax"]
    assert "xp = array_namespace(x)" in port.rewrite
    # the rewrite brings its own import: a replay has only the names the cell reads
    assert port.rewrite.startswith("from array_api_compat import array_namespace\n")
    assert "r = xp.tanh(xp.sum(x * x, axis=1))" in port.rewrite
    assert "r = xp.maximum(r, -r)" in port.rewrite
    # the bool times float the run saw is converted explicitly, as the standard needs
    assert "return xp.astype(xp.max(x) > 0, xp.float32) * r" in port.rewrite
    assert [s.name for s in rewrite.sites if s.applied] == [
        "Tensor.sum",
        "Tensor.tanh",
        "torch.max",
        "Tensor.__mul__",
        "Tensor.max",
    ]
    # the output shows the diff, in every front end
    bundle = port._repr_mimebundle_()
    assert "+    r = xp.maximum(r, -r)" in bundle["text/plain"]
    html = bundle["text/html"]
    assert '<details class="rewrite" open>' in html and '<span class="ok">verified</span>' in html
    assert '<div class="add">+    r = xp.maximum(r, -r)</div>' in html
    assert bundle["application/vnd.porter.cell+json"]["rewrite"]["status"] == "verified"
    # the original run is the person's: the cell itself was not replaced
    assert shell.user_ns["foo"].__code__.co_names.count("torch")


#: torch.div(..., rounding_mode='trunc') of integer tensors: the table's rewrite
#: (xp.trunc(xp.divide(...))) gives floats, so it changes the result
TRUNC = "q = torch.div(i, 4, rounding_mode='trunc')\n"


def test_a_rewrite_that_changes_results_is_refused_with_the_reason(shell):
    port = _fix(shell, TRUNC, "--in-process")
    rewrite = port.entry.rewrite
    assert rewrite.status == "refused"
    assert rewrite.reason.startswith("it changes the result on torch (q: dtype_changed")
    assert port.rewrite is None and rewrite.source == TRUNC
    assert [s.applied for s in rewrite.sites] == [False]


def test_an_in_place_method_is_rewritten_in_place_so_its_aliases_see_it(shell):
    """``y`` is ``x``: in place, ``y`` sees the +1. The rewrite used to rebind ``x``
    (``x = xp.add(x, 1)``), which the replays refused; it writes into ``x`` now."""
    port = _fix(shell, "y = x\nx.add_(1)\nz = y * 2\n", "--in-process -b numpy")
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert "\nx[...] = xp.add(x, 1)\nz = y * 2\n" in rewrite.source


def test_a_rewrite_is_narrowed_to_the_sites_that_verify(shell):
    port = _fix(shell, TRUNC + "z = x.sum(1)\n", "--in-process -b numpy")
    rewrite = port.entry.rewrite
    assert rewrite.status == "partial", rewrite.reason
    assert "z = xp.sum(x, axis=1)" in rewrite.source and TRUNC in rewrite.source
    left = next(s for s in rewrite.sites if s.name == "torch.div")
    assert not left.applied and "changes the result on torch" in left.reason
    assert rewrite.reason.startswith("1 site(s) left as written")


def test_nothing_to_rewrite_and_ipython_syntax(shell):
    port = _fix(shell, "y = x + 1\n", "--in-process")
    assert port.entry.rewrite is None and port.rewrite is None
    # a %time line stays the magic, its statement rewritten (tests/fix/test_fix_magic_lines.py)
    port = _fix(shell, "%time y = x.sum(1)\nz = x.sum(0)\n", "--in-process")
    assert port.entry.rewrite.status == "verified", port.entry.rewrite.reason
    assert port.rewrite.endswith(
        "xp = array_namespace(x)\n%time y = xp.sum(x, axis=1)\nz = xp.sum(x, axis=0)\n"
    )
    # any other line magic stays as written, the lines around it rewritten and verified
    port = _fix(shell, "%pwd\nz = x.sum(0)\n", "--in-process")
    assert port.entry.rewrite.status == "verified", port.entry.rewrite.reason
    assert port.rewrite.endswith("%pwd\nxp = array_namespace(x)\nz = xp.sum(x, axis=0)\n")
    port = _fix(shell, "%%time\ny = x.sum(1)\n", "--in-process")
    assert port.entry.rewrite.status == "refused"
    assert "IPython syntax" in port.entry.rewrite.reason


def test_fix_in_the_usage_and_without_it_no_rewrite(shell):
    port = _fix(shell, "y = x.sum(1)\n", "--in-process --no-replay")
    assert port.entry.rewrite.status == "verified"  # on the original backend only
    assert port.entry.rewrite.verified_on == ["torch"]
    shell.run_cell("%%port --in-process --no-replay\ny = x.sum(1)\n")
    assert shell.user_ns["_port"].entry.rewrite is None


@pytest.mark.slow
def test_fix_in_worker_kernels_on_numpy_torch_jax_and_strict(shell):
    port = _fix(shell, FOO, "-b numpy,jax,strict")
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "jax", "strict"]
    # the original fails on every other backend; the rewrite runs on all of them
    assert {r.backend: r.status for r in port.entry.replays if r.role == "target"} == {
        "numpy": "error",
        "jax": "error",
        "strict": "error",
    }
    plan = [item for item in build_plan([port.entry]) if item.kind == "non_standard"]
    assert plan and all(item.automatic for item in plan)


def test_apply_offers_the_rewrite_as_the_cells_next_input(shell):
    port = _fix(shell, "y = x.sum(1)\n", "--in-process --no-replay")
    shell.rl_next_input = None
    assert port.apply("%%port -b numpy") is True
    assert shell.rl_next_input == f"%%port -b numpy\n{port.rewrite}"
    refused = _fix(shell, TRUNC, "--in-process")
    assert refused.apply() is False


def test_a_definition_that_nothing_calls_is_refused_with_the_reason(shell):
    port = _fix(shell, "def f(x):\n    return x.sum(1)\n", "--in-process -b numpy")
    assert port.entry.rewrite.status == "refused"
    assert port.entry.rewrite.reason.startswith("nothing it defines ran in this cell")


def test_a_definition_nothing_calls_is_refused_even_beside_other_array_calls(shell):
    """The cell's own replay runs ``y = x + 1`` but never ``f``: it cannot verify f's rewrite
    (before, the round passed without running it)."""
    port = _fix(shell, "def f(x):\n    return x.sum(1)\n\ny = x + 1\n", "--in-process -b numpy")
    assert port.entry.rewrite.status == "refused"
    assert port.entry.rewrite.reason.startswith("nothing it defines ran in this cell")
    # called in the cell, the same definition verifies
    port = _fix(shell, "def f(x):\n    return x.sum(1)\n\ny = f(x)\n", "--in-process -b numpy")
    assert port.entry.rewrite.status == "verified", port.entry.rewrite.reason


def test_torch_cuda_runtime_calls_are_fixed_into_torch_accelerator(shell):
    port = _fix(
        shell,
        "n = torch.cuda.device_count()\nok = torch.cuda.is_available()\n",
        "--in-process -b numpy",
    )
    assert port.entry.rewrite.status == "verified", port.entry.rewrite.reason
    assert port.rewrite == (
        "n = torch.accelerator.device_count()\nok = torch.accelerator.is_available()\n"
    )


def test_a_partial_rewrite_is_never_fixed_automatically_and_lines_count_as_the_editor(shell):
    """Issue 27: over ``x.cumsum(1) + torch.as_tensor(w).float()`` the plan said "fixed
    automatically" for a rewrite nobody could apply, and the reason said "line 1" for the
    line the editor (and the panel) call line 2, below the ``%%port`` line."""
    shell.run_cell("import numpy as np\nx = torch.ones(3, 4)\nw = np.ones(4)")
    shell.run_cell("%%port --fix -b numpy\ny = x.cumsum(1) + torch.as_tensor(w).float()")
    entry = get_session(shell).cells[-1]
    assert entry.first_line == 2
    assert entry.rewrite is not None and entry.rewrite.status == "partial"
    assert "line 2 `y = x.cumsum(1)" in entry.rewrite.reason
    states = {item.title.split(" ")[0]: item.state for item in entry.plan}
    assert states["Tensor.cumsum"] == "partial" and states["Tensor.float"] == "partial"
    assert not any(item.automatic for item in entry.plan)
    assert all("fixed automatically" not in item.state_text for item in entry.plan)
    assert {row.line for row in entry.diagnostics if row.line is not None} == {2}
