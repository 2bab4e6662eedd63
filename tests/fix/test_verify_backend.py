"""Verification judges the rewrite, not the backend's settings (issue 19 item 2,
``fix_refused_for_backend_default_dtype.py`` and ``fix_refusal_reason_skipped.py`` of
../shared/repro/turn3/notebooks/): a difference the original cell shows on the same
backend too is the backend's, and a refusal says why when the replays were skipped. Real
worker replays on real numpy, jax and torch."""

from __future__ import annotations

import pytest

from porter_ext.fix.verify_rounds import agrees
from porter_ext.model.comparison import OutputComparison
from porter_ext.model.entries import ReplayEntry
from tests.replay.isolation import run

pytestmark = pytest.mark.slow


def _fix(shell, setup: str, body: str, flags: str):
    run(shell, setup)
    result = run(shell, f"%%port --fix --quiet {flags}\n{body}")
    assert result.success, result.output
    return shell.user_ns["_port"].entry


@pytest.mark.parametrize(
    ("setup", "body"),
    [
        # jax's default float32 for a float64 cell: the original on jax changes it too
        ("X = rng.random((10, 3))", "Xmean = X.mean(0)"),
        # an exact integer result whose int64 jax keeps as int32
        ("x = np.array([1, 2, 3])\ny = np.array([3, 2, 1])", "r = np.concatenate([x, y])"),
    ],
)
def test_a_default_dtype_of_the_backend_does_not_refuse_a_rewrite(port_shell, setup, body):
    pytest.importorskip("jax")
    setup = f"import numpy as np\nrng = np.random.default_rng(1701)\n{setup}"
    entry = _fix(port_shell, setup, body, "-b jax")
    [jax] = [r for r in entry.replays if r.role == "target" and r.backend == "jax"]
    assert [o.difference for o in jax.outputs] == ["dtype_changed"]  # the original's own
    assert entry.rewrite.status == "verified", entry.rewrite.reason
    assert "jax" in entry.rewrite.verified_on


def _row(difference, within=True, dtype="float32"):
    return OutputComparison(
        "y",
        [3],
        dtype,
        "cpu",
        "cpu",
        True,
        1e-8,
        1e-8,
        0,
        False,
        within,
        1e-5,
        1e-8,
        None,
        difference=difference,
    )


@pytest.mark.parametrize(
    ("rewrite", "original", "excused"),
    [
        (_row("dtype_changed"), _row("dtype_changed"), True),
        # the original on the backend agreed: the rewrite's change is the rewrite's
        (_row("dtype_changed"), _row(None, dtype="float64"), False),
        # another dtype than the original's there
        (_row("dtype_changed", dtype="float16"), _row("dtype_changed"), False),
        # out of tolerance: never excused, whatever the original did
        (_row("numeric", within=False), _row("numeric", within=False), False),
    ],
)
def test_only_the_backends_own_difference_is_excused(rewrite, original, excused):
    mine = ReplayEntry("jax", "ok", outputs=[rewrite])
    assert agrees(mine, ReplayEntry("jax", "ok", outputs=[original])) is excused
    assert agrees(mine, None) is False  # against the original run alone it differs
    assert agrees(mine, ReplayEntry("jax", "error", outputs=[original])) is False


def test_skipped_replays_refuse_with_their_reason(port_shell):
    pytest.importorskip("torch")
    setup = "import torch\nW = torch.ones(3, 3, requires_grad=True)\nmasked = W * 2"
    # a graph input travels detached (issue 29 item 6); a backward pass that reaches it
    # cannot be replayed: the gradients of what made it exist only in the person's process
    body = (
        "row_sums = masked.sum(dim=-1, keepdim=True)\nnorm = masked / row_sums\n"
        "norm.sum().backward()"
    )
    entry = _fix(port_shell, setup, body, "")
    reason = entry.rewrite.reason
    assert entry.rewrite.status == "refused"
    assert reason.startswith("not verified: the replays were skipped (")
    assert "backward pass reached an input" in reason and "autograd graph" in reason
    assert "does not run on torch" not in reason
