"""``%%port --fix`` of cells that draw random numbers (issue 29 item 1): the person's draws
stay as written; on the original library the rewrite's replay draws the same numbers and
is judged as any rewrite; on another library a host generator's draws are the same
numbers moved, and what depends on a library's own generator is judged by shape, dtype
and finiteness only, which the verdict says."""

from __future__ import annotations

import pytest

from tests.fix import test_fix_magic

pytest.importorskip("torch")
pytest.importorskip("array_api_strict")

#: the shell of `test_fix_magic` (torch, ``x``)
shell = test_fix_magic.shell

TORCH_DRAWS = (
    "g = torch.Generator().manual_seed(1)\nW = torch.randn((3, 4), generator=g)\ny = W.sum(1)\n"
)
NOTE = "compared by shape, dtype and finiteness only: drawn by torch's generator"


@pytest.fixture
def drawing(shell):
    """`test_fix_magic`'s shell (torch, ``x``) with NumPy imported."""
    shell.run_cell("import numpy as np\n")
    yield shell
    for name in ("g", "W", "rng", "a", "m", "b", "s"):
        shell.user_ns.pop(name, None)


def _fix(shell, body: str, flags: str = "-b numpy,strict"):
    result = shell.run_cell(f"%%port --fix {flags}\n{body}")
    assert result.error_in_exec is None and result.error_before_exec is None
    return shell.user_ns["_port"]


def _outputs(port, backend: str) -> dict:
    replay = next(r for r in port.entry.replays if r.backend == backend and r.role == "target")
    return {o.name: o for o in replay.outputs}


def test_a_torch_draw_is_verified_on_torch_and_checked_by_structure_elsewhere(drawing):
    """It was "partial": the draw "left as written", and numpy and strict "not
    applicable" (the replays there drew with torch and never touched them)."""
    port = _fix(drawing, TORCH_DRAWS)
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "strict"]
    assert "y = xp.sum(W, axis=1)" in port.rewrite
    assert "W = torch.randn((3, 4), generator=g)" in port.rewrite  # the draw as written
    assert rewrite.reason == f"on numpy, strict, W, y {NOTE}"
    draw = next(s for s in rewrite.sites if s.name == "torch.randn")
    assert not draw.applied and draw.reason.startswith("random draws")


def test_only_what_depends_on_the_draws_is_judged_by_structure(drawing):
    """``z`` reads ``x`` only: judged by value on every backend; ``W`` and ``y`` by
    structure where torch's generator is not."""
    port = _fix(drawing, TORCH_DRAWS + "z = x.sum(0)\n")
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert "z = xp.sum(x, axis=0)" in port.rewrite
    assert rewrite.reason == f"on numpy, strict, W, y {NOTE}"


def test_a_host_generator_draws_the_same_numbers_on_every_backend(drawing):
    """It failed on strict: ``np`` rebound there had no ``random``
    (AttributeError: module 'array_api_strict' has no attribute 'random')."""
    body = "rng = np.random.default_rng(0)\na = rng.normal(size=5)\nm = a.mean()\n"
    port = _fix(drawing, body, "-b torch,strict")
    rewrite = port.entry.rewrite
    assert rewrite.verified_on == ["numpy", "torch", "strict"], rewrite.reason
    # ``rng.normal`` is no array method: the generator is none (it was taken for one, a
    # site "left as written" that made the rewrite partial)
    assert rewrite.status == "verified" and [s.name for s in rewrite.sites] == ["ndarray.mean"]
    assert "m = xp.mean(a)" in port.rewrite
    assert "compared by shape" not in (rewrite.reason or "")
    # the same numbers on torch, as the original cell's own replay there shows
    outputs = _outputs(port, "torch")
    assert outputs["a"].max_abs_err == 0.0 and outputs["m"].within_tolerance


def test_a_host_generator_made_in_an_earlier_cell_draws_the_same_numbers(drawing):
    drawing.run_cell("rng = np.random.default_rng(3)\n")
    port = _fix(drawing, "b = rng.standard_normal(4)\ns = b.sum()\n", "-b torch,strict")
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["numpy", "torch", "strict"]
    assert "s = xp.sum(b)" in port.rewrite
    assert _outputs(port, "torch")["b"].max_abs_err == 0.0


def test_a_seeded_global_generator_draws_the_same_numbers_in_every_round(drawing):
    """The seed and the draw are kept as written (neither makes the rewrite partial); the
    rounds start from torch's global generator as it was before the cell."""
    body = "torch.manual_seed(0)\nW = torch.randn(3, 4)\ny = W.sum(1)\n"
    port = _fix(drawing, body)
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "strict"]
    assert "torch.manual_seed(0)\n" in port.rewrite and "y = xp.sum(W, axis=1)" in port.rewrite
    assert rewrite.reason == f"on numpy, strict, W, y {NOTE}"


def test_a_jax_random_draw_is_verified_on_jax_and_checked_by_structure_elsewhere(drawing):
    """``jax.random`` through the person's ``jax``: its draws moved to numpy and strict."""
    pytest.importorskip("jax")
    drawing.run_cell("import jax\n")
    body = "key = jax.random.PRNGKey(0)\nW = jax.random.normal(key, (3, 4))\ny = W.sum(1)\n"
    port = _fix(drawing, body)
    drawing.user_ns.pop("key", None)
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["jax", "numpy", "strict"]
    assert "y = xp.sum(W, axis=1)" in port.rewrite
    assert rewrite.reason == (
        "on numpy, strict, W, y compared by shape, dtype and finiteness only: "
        "drawn by jax's generator"
    )
