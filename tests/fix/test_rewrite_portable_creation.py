"""``torch.tensor(data)`` in a cell with an array at hand (makemore part 1:
``xs = torch.tensor([...])`` then ``P[xs, ys]``): rewritten through that array's ``xp``,
so on a replay where ``P`` is a JAX or NumPy array the indices are of P's library too
(``torch.asarray`` kept them torch arrays, and indexing a JAX array with them failed).
Where no array gives ``xp`` the library's own ``torch.asarray(..., copy=True)`` stays."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.fix.rewrite import rewrite_source
from tests.fix.test_chains import _has

CELL = (
    'xs = torch.tensor([stoi[c] for c in ".emma"])\n'
    'ys = torch.tensor([stoi[c] for c in "emma."])\n'
    "nll = -P[xs, ys].log().mean()\n"
)
STOI = {c: k for k, c in enumerate(".abcdefghijklmnopqrstuvwxyz")}


def test_a_tensor_literal_goes_through_the_namespace_of_the_array_at_hand():
    torch = pytest.importorskip("torch")
    jnp = pytest.importorskip("jax.numpy")
    result = rewrite_source(CELL, imports={"torch": "torch"}, arrays={"P": "torch"})
    _has(
        result.source,
        "xp = array_namespace(P)\n",
        'xs = xp.asarray([stoi[c] for c in ".emma"], copy=True)\n',
        "nll = -xp.mean(xp.log(P[xs, ys]))\n",
    )
    weights = np.random.default_rng(0).random((27, 27)) + 0.1
    P = weights / weights.sum(1, keepdims=True)
    original: dict = {"torch": torch, "stoi": STOI, "P": torch.asarray(P)}
    exec(CELL, original)
    for array in (torch.asarray(P), np.asarray(P), jnp.asarray(P, dtype=jnp.float32)):
        ported: dict = {"torch": torch, "stoi": STOI, "P": array}
        exec(result.source, ported)
        assert type(ported["xs"]) is type(array)
        np.testing.assert_allclose(float(ported["nll"]), float(original["nll"]), rtol=1e-6)


def test_without_an_array_at_hand_the_library_rewrite_stays():
    result = rewrite_source("N = torch.tensor([1, 2])\n", imports={"torch": "torch"})
    assert result.source == "N = torch.asarray([1, 2], copy=True)\n"
