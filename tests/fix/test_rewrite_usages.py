"""``%%port --fix`` of usages that are no call of the table (issue 29 item 2): an
integer-array index into a first axis (``emb = C[X]``, the largest group of unported
sites on the public corpus) → the standard's ``take``, and ``len(x)`` → ``x.shape[0]``,
each written with the person's expressions and verified by replays like any rewrite."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fix.test_chains import _has
from tests.fix.test_fix_idioms import BACKENDS, _fix, porter_fix
from tests.test_cli_run import notebook

MAKEMORE = (
    "import torch\n"
    "C = torch.linspace(-1, 1, 54).reshape(27, 2)\n"
    "X = torch.tensor([[0, 5, 13], [5, 13, 13], [13, 13, 1], [26, 0, 2]])\n"
    "W1 = torch.linspace(-0.5, 0.5, 24).reshape(6, 4)\n"
    "b1 = torch.linspace(0, 1, 4)\n"
)


def test_an_embedding_lookup_is_ported_and_verified_on_every_backend(port_shell):
    """``C[X]`` with a 2-D ``X``: the flat take, back to ``X.shape + C.shape[1:]``; on
    main no rewrite was proposed and strict failed at that line."""
    torch = pytest.importorskip("torch")
    body = "emb = C[X]\nh = torch.tanh(emb.view(-1, 6) @ W1 + b1)\nn = len(X)\n"
    rewrite = _fix(port_shell, MAKEMORE, body, f"--in-process -b {BACKENDS}")
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "jax", "strict"]
    _has(
        rewrite.source,
        "emb = xp.reshape(xp.take(C, xp.reshape(X, (-1,)), axis=0), (*X.shape, *C.shape[1:]))\n",
        "n = X.shape[0]\n",
    )
    ported: dict = {name: port_shell.user_ns[name] for name in ("C", "X", "W1", "b1")}
    exec(rewrite.source, ported)
    assert torch.equal(ported["emb"], port_shell.user_ns["emb"])
    assert torch.equal(ported["h"], port_shell.user_ns["h"])
    assert ported["n"] == 4


def test_a_range_among_index_arrays_is_ported_and_verified_on_every_backend(port_shell):
    """makemore part 4's loss, ``-logprobs[range(n), Yb].mean()``: the range is no index
    of the standard (jax and strict raise at that line); ``xp.arange(n)`` is."""
    pytest.importorskip("torch")
    setup = (
        "import torch\nlogprobs = torch.linspace(-3, 0, 12).reshape(4, 3)\n"
        "Yb = torch.tensor([2, 0, 1, 1])\nn = 4\n"
    )
    rewrite = _fix(port_shell, setup, "loss = -logprobs[range(n), Yb].mean()\n", f"-b {BACKENDS}")
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "jax", "strict"]
    _has(rewrite.source, "loss = -xp.mean(logprobs[xp.arange(n), Yb])\n")


def test_a_one_dimensional_index_is_one_take_written_as_the_person_wrote_it(port_shell):
    setup = "import numpy as np\nA = np.arange(12.0).reshape(4, 3)\nix = np.array([3, 0, 3])\n"
    body = "rows = A[ix % 4]\nmean = np.sum(rows, axis=0) / len(rows)\n"
    rewrite = _fix(port_shell, setup, body, "--in-process -b torch,jax,strict")
    assert rewrite.status == "verified", rewrite.reason
    assert set(rewrite.verified_on) == {"numpy", "torch", "jax", "strict"}
    _has(
        rewrite.source,
        "rows = xp.take(A, ix % 4, axis=0)\n",
        "mean = xp.sum(rows, axis=0) / rows.shape[0]\n",
    )
    ported = {"A": port_shell.user_ns["A"], "ix": port_shell.user_ns["ix"]}
    exec(rewrite.source, ported)
    np.testing.assert_array_equal(ported["mean"], port_shell.user_ns["mean"])


def test_an_index_read_twice_for_its_shape_that_calls_something_is_left_as_written(port_shell):
    """The flat form reads the index again (its shape): an index that calls a function
    would be computed twice (a draw, twice), so that site says to name it first."""
    pytest.importorskip("torch")
    body = "emb = C[torch.arange(6).reshape(2, 3)]\ns = emb.sum(1)\n"
    rewrite = _fix(port_shell, MAKEMORE, body, "--in-process -b numpy")
    site = next(s for s in rewrite.sites if s.name == "Tensor.__getitem__")
    assert not site.applied
    assert site.reason == (
        "its form reads torch.arange(6).reshape(2, 3) twice (for its shape): assign it to a "
        "name first"
    )


def test_an_index_made_from_data_is_read_twice_and_verified_on_every_backend(port_shell):
    """makemore's sampling loop, ``emb = C[torch.tensor([context])]``: the flat form reads
    the index again for its shape; a creation from data of what calls nothing gives the
    same array twice, so the site is ported (it was left as written: "reads ... twice")."""
    pytest.importorskip("torch")
    body = (
        "context = [0, 5, 13]\nemb = C[torch.tensor([context])]\n"
        "h = torch.tanh(emb.view(1, -1) @ W1 + b1)\n"
    )
    rewrite = _fix(port_shell, MAKEMORE, body, f"-b {BACKENDS}")
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "jax", "strict"]
    site = next(s for s in rewrite.sites if s.name == "Tensor.__getitem__")
    assert site.applied and site.replacement.startswith("xp.reshape(xp.take(C, "), site


def test_a_zip_over_arrays_is_ported_and_verified_on_every_backend(port_shell):
    """makemore part 5, ``for x, y in zip(Xtr[:20], Ytr[:20])``: array-api-strict does
    not iterate over an array of two axes; ``zip(xp.unstack(...), xp.unstack(...))``
    does (no rewrite was proposed, and the cell stayed partial on strict)."""
    pytest.importorskip("torch")
    setup = "import torch\nXtr = torch.arange(60).reshape(20, 3)\nYtr = torch.arange(20)"
    body = "total = 0\nfor x, y in zip(Xtr[:5], Ytr[:5]):\n    total += int(x.sum()) * int(y)\n"
    rewrite = _fix(port_shell, setup, body, f"-b {BACKENDS}")
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "jax", "strict"]
    _has(rewrite.source, "for x, y in zip(xp.unstack(Xtr[:5, ...]), xp.unstack(Ytr[:5])):\n")


def test_a_cells_xp_comes_from_an_earlier_array_it_reads_before_one_it_does_not(port_shell):
    """makemore part 5: ``zip(Xtr[:20], Ytr[:20])`` reads no array by name, so ``xp``
    came from the first earlier array of its library, ``Ydev``, which the cell does not
    read: its replays do not have it (NameError on torch), and the rewrite was left out.
    An array the cell reads gives it now."""
    pytest.importorskip("torch")
    setup = (
        "import torch\nYdev = torch.arange(4)\n"
        "Xtr = torch.arange(60).reshape(20, 3)\nYtr = torch.arange(20)"
    )
    body = "total = 0\nfor x, y in zip(Xtr[:5], Ytr[:5]):\n    total += int(x.sum()) * int(y)\n"
    rewrite = _fix(port_shell, setup, body, f"-b {BACKENDS}")
    assert rewrite.status == "verified", rewrite.reason
    assert "array_namespace(Ydev)" not in rewrite.source
    assert "xp = array_namespace(Xtr)\n" in rewrite.source or (
        "xp = array_namespace(Ytr)\n" in rewrite.source
    )


@pytest.mark.slow
def test_porter_fix_ports_an_embedding_lookup_in_a_notebook(tmp_path):
    pytest.importorskip("torch")
    source = notebook(
        tmp_path / "nb.ipynb",
        MAKEMORE,
        "emb = C[X]\nh = torch.tanh(emb.view(-1, 6) @ W1 + b1)\n",
        "print(h.shape, len(emb))",
    )
    cells, report = porter_fix(source, BACKENDS)
    assert "emb = xp.reshape(xp.take(C, xp.reshape(X, (-1,)), axis=0)" in cells[1], cells[1]
    rewrite = report["cells"][1]["rewrite"]
    assert rewrite["status"] == "verified", rewrite["reason"]
    assert "print(h.shape, emb.shape[0])" in cells[2], cells[2]
