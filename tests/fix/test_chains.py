"""The codemod on the idioms people write (issue 19): method chains rewritten link by link,
tuple results read one field at a time, casts and copies, and what a run tells the source
cannot. Each rewrite is run against the original, on real arrays."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from porter_ext.fix.rewrite import rewrite_source


def _same(original: str, ported: str, names: list[str], setup: str = "") -> None:
    """Both sources run after ``setup``; every name in ``names`` holds the same value."""
    torch = pytest.importorskip("torch") if "torch" in setup + original else None
    before: dict = {}
    after: dict = {}
    for source, namespace in ((original, before), (ported, after)):
        exec(setup, namespace)
        exec(source, namespace)
    for name in names:
        a, b = before[name], after[name]
        if torch is not None and isinstance(a, torch.Tensor):
            assert isinstance(b, torch.Tensor) and a.dtype == b.dtype, name
            a, b = a.numpy(), b.numpy()
        if isinstance(a, tuple):
            assert len(a) == len(b), name
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)
            continue
        assert np.asarray(a).dtype == np.asarray(b).dtype, name
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)


def _has(source: str, *lines: str) -> None:
    for line in lines:
        assert line in source, source


TORCH = "import torch\nX = torch.linspace(-1, 1, 12).reshape(3, 4)\n"


def test_every_link_of_a_chain_on_a_call_the_source_cannot_type_is_rewritten():
    """``p = torch.sigmoid(X)``: what sigmoid returns the source does not say, a run does;
    every link of ``-(p.clamp(...).log()).mean()`` is rewritten on what the links before
    it became."""
    cell = "p = torch.sigmoid(X)\nloss = -(p.clamp(1e-6, 1 - 1e-6).log()).mean()\n"
    alone = rewrite_source(cell, imports={"torch": "torch"}, arrays={"X": "torch"})
    assert "loss = -(p.clamp(1e-6, 1 - 1e-6).log()).mean()" in alone.source
    # the run: torch.sigmoid at line 1, column 4 returned a torch array
    run = {(1, 4, "torch.sigmoid"): "torch"}
    result = rewrite_source(cell, imports={"torch": "torch"}, arrays={"X": "torch"}, results=run)
    assert "loss = -xp.mean(xp.log(xp.clip(p, min=1e-6, max=1 - 1e-6)))\n" in result.source
    assert [s.name for s in result.applied] == [
        "torch.sigmoid",
        "Tensor.mean",
        "Tensor.clamp",
        "Tensor.log",
    ]
    _same(cell, result.source, ["loss"], TORCH + "from array_api_compat import array_namespace\n")


def test_a_chain_in_a_function_on_an_untyped_local_is_rewritten_with_the_run():
    cell = textwrap.dedent(
        """\
        def nll(z):
            p = torch.softmax(z, dim=1)
            return -(p.clamp(1e-6, 1).log()).sum(1).mean()
        loss = nll(X)
        """
    )
    run = {(2, 8, "torch.softmax"): "torch"}
    result = rewrite_source(cell, imports={"torch": "torch"}, arrays={"X": "torch"}, results=run)
    assert "    return -xp.mean(xp.sum(xp.log(xp.clip(p, min=1e-6, max=1)), axis=1))\n" in (
        result.source
    )
    assert "    xp = array_namespace(z)\n" in result.source
    _same(cell, result.source, ["loss"], TORCH)


def test_methods_the_run_saw_on_a_parameter_are_rewritten():
    """``a`` is a parameter: the source cannot tell it is an array, the run's calls on it can."""
    cell = "def g(a):\n    b = a.flatten()\n    b[0] = 99.0\n    return b.sum(0)\nt = g(x)\n"
    assert not rewrite_source(cell, imports={"np": "numpy"}, arrays={"x": "numpy"}).changed
    run = {(2, 8, "ndarray.flatten"): "numpy", (4, 11, "ndarray.sum"): "numpy"}
    result = rewrite_source(cell, imports={"np": "numpy"}, arrays={"x": "numpy"}, receivers=run)
    assert "    xp = array_namespace(a)\n    b = xp.reshape(xp.asarray(a, copy=True), (-1,))\n" in (
        result.source
    )
    assert "    return xp.sum(b, axis=0)\n" in result.source
    _same(cell, result.source, ["t", "x"], NUMPY + "from array_api_compat import array_namespace\n")


def test_fields_of_tuple_results_are_rewritten_with_the_read_of_the_field():
    cell = textwrap.dedent(
        """\
        m = X.abs().max(dim=1).values
        i = X.max(1)[1]
        n = torch.min(X, dim=0, keepdim=True).indices
        s = torch.sort(X, descending=True)[0]
        r = X.sort(dim=0).indices
        both = X.max(dim=1)
        """
    )
    result = rewrite_source(cell, imports={"torch": "torch"}, arrays={"X": "torch"})
    _has(
        result.source,
        "m = xp.max(xp.abs(X), axis=1)\n",
        "i = xp.argmax(X, axis=1)\n",
        "n = xp.argmin(X, axis=0, keepdims=True)\n",
        "s = xp.sort(X, descending=True)\n",
        "r = xp.argsort(X, axis=0)\n",
        "both = X.max(dim=1)\n",  # the whole tuple: two calls, so left as written
    )
    (whole,) = [s for s in result.refused if s.original == "X.max(dim=1)"]
    assert "(values, indices)" in whole.reason
    _same(cell, result.source, ["m", "i", "n", "s", "r"], TORCH)


def test_casts_copies_and_lengths_are_written_from_the_persons_expressions():
    cell = textwrap.dedent(
        """\
        a = X.clone().float()
        b = X.type(torch.float64)
        c = X.long().to(torch.int32)
        n = X.size(0) + X.size(1)
        d = torch.div(X, 0.3, rounding_mode="floor")
        e = torch.div(X, 0.3, rounding_mode="trunc")
        f = X.flatten()
        k = X.sum(dim=1, keepdim=True)
        q = X.pow(2)
        """
    )
    result = rewrite_source(cell, imports={"torch": "torch"}, arrays={"X": "torch"})
    _has(
        result.source,
        "a = xp.astype(xp.asarray(X, copy=True), xp.float32, copy=False)\n",
        "b = xp.astype(X, xp.float64, copy=False)\n",
        "c = xp.astype(xp.astype(X, xp.int64, copy=False), xp.int32, copy=False)\n",
        "n = X.shape[0] + X.shape[1]\n",
        "d = xp.floor_divide(X, 0.3)\n",
        "e = xp.trunc(xp.divide(X, 0.3))\n",
        "f = xp.reshape(X, (-1,))\n",
        "k = xp.sum(X, axis=1, keepdims=True)\n",
        "q = xp.pow(X, 2)\n",
    )
    assert not result.refused, result.refused
    _same(cell, result.source, list("abcndefkq"), TORCH)


NUMPY = "import numpy as np\nx = np.arange(6.0).reshape(2, 3) - 2.5\n"


def test_numpy_idioms_keep_their_meaning():
    cell = textwrap.dedent(
        """\
        u, c = np.unique(np.round(x), return_counts=True)
        i = x.astype(int)
        g = x.astype("float32").copy()
        w = np.copy(x)
        q = np.clip(x, a_min=-1, a_max=1)
        f = x.flatten()
        f[0] = 99.0
        """
    )
    result = rewrite_source(cell, imports={"np": "numpy"}, arrays={"x": "numpy"})
    _has(
        result.source,
        "u, c = xp.unique_counts(np.round(x))\n",
        "i = xp.astype(x, xp.int64)\n",
        "g = xp.asarray(xp.astype(x, xp.float32), copy=True)\n",
        "w = xp.asarray(x, copy=True)\n",
        "q = xp.clip(x, min=-1, max=1)\n",
        # flatten copies: a write to f must not reach x, as it does not in the original
        "f = xp.reshape(xp.asarray(x, copy=True), (-1,))\n",
    )
    _same(cell, result.source, ["u", "c", "i", "g", "w", "q", "f", "x"], NUMPY)


def test_a_shape_or_a_tuple_of_arrays_stays_one_argument():
    cell = "a = np.arange(3).reshape((3, 1))\nb = np.stack((x, x), axis=0).sum(axis=(0, 1))\n"
    result = rewrite_source(cell, imports={"np": "numpy"}, arrays={"x": "numpy"})
    assert "a = np.arange(3)\nxp = array_namespace(a)\na = xp.reshape(a, (3, 1))\n" in (
        result.source
    )
    assert "b = xp.sum(np.stack((x, x), axis=0), axis=(0, 1))\n" in result.source
    _same(cell, result.source, ["a", "b"], NUMPY)
    torch_cell = "batch = torch.stack((X, X), dim=0)\n"
    ported = rewrite_source(torch_cell, imports={"torch": "torch"}, arrays={"X": "torch"})
    assert "batch = xp.stack((X, X), axis=0)\n" in ported.source
    _same(torch_cell, ported.source, ["batch"], TORCH)


def test_a_functions_xp_comes_from_a_parameter_never_from_a_local_bound_later():
    """LLMs-from-scratch ch04: ``xp = array_namespace(probas)`` at the top of ``gen``
    raised UnboundLocalError; ``idx`` (a parameter) is there from the start."""
    cell = textwrap.dedent(
        """\
        def gen(logits_fn, idx, n):
            for _ in range(n):
                logits = logits_fn(idx)[:, -1, :]
                probas = torch.softmax(logits, dim=-1)
                idx_next = torch.argmax(probas, dim=-1, keepdim=True)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx
        out = gen(lambda i: torch.ones(i.shape[0], i.shape[1], 5), torch.zeros(1, 2, dtype=torch.int64), 3)
        """
    )
    result = rewrite_source(cell, imports={"torch": "torch"})
    assert "    xp = array_namespace(idx)\n    for _ in range(n):\n" in result.source
    assert "xp.concat((idx, idx_next), axis=1)" in result.source
    _same(
        cell, result.source, ["out"], "import torch\nfrom array_api_compat import array_namespace\n"
    )
    # only arrays it makes itself: no xp can be bound at its top, so it stays as written
    maker = "def f(n):\n    a = torch.ones(n, 2)\n    return a.sum(1)\n"
    kept = rewrite_source(maker, imports={"torch": "torch"})
    assert kept.source == maker
    (site,) = [s for s in kept.sites if s.name == "Tensor.sum"]
    assert site.replacement is None and "left as written with the rest of f" in site.reason


def test_the_run_decides_where_the_source_leaves_the_entry_to_values():
    """``v.T`` is the standard's only for a 2-D ``v``, and ``torch.max(a, b)`` of two arrays
    is ``maximum`` (of an array and an axis, ``max``): what the source leaves to values,
    the run's verdict at the site tells."""
    cell = textwrap.dedent(
        """\
        v = x[0]
        y = v.T * 2
        def f(a, b):
            return torch.max(a, b)
        z = f(X, X + 1)
        """
    )
    setup = TORCH + "import numpy as np\nx = np.arange(6.0).reshape(2, 3)\n"
    arrays = {"x": "numpy", "X": "torch"}
    imports = {"np": "numpy", "torch": "torch"}
    alone = rewrite_source(cell, imports=imports, arrays=arrays)
    assert {s.name for s in alone.refused} == {"ndarray.T", "torch.max"}
    assert all("depends on values" in s.reason for s in alone.refused)
    decided = {
        (2, 4, "ndarray.T"): ("non_standard_usage", "permute_dims"),
        (4, 11, "torch.max"): ("non_standard_usage", "maximum"),
    }
    result = rewrite_source(cell, imports=imports, arrays=arrays, decided=decided)
    assert "y = xp.permute_dims(v, tuple(range(v.ndim - 1, -1, -1))) * 2\n" in result.source
    assert "    xp = array_namespace(a)\n    return xp.maximum(a, b)\n" in result.source
    _same(cell, result.source, ["y", "z"], setup)


def test_a_site_without_a_rewrite_keeps_its_own_reason_when_others_are_narrowed():
    cell = "m = X.max(dim=1)\ns = X.sum(1)\n"
    result = rewrite_source(cell, imports={"torch": "torch"}, arrays={"X": "torch"}, only=set())
    reasons = {s.name: s.reason for s in result.sites}
    assert "(values, indices)" in reasons["Tensor.max"]
    assert reasons["Tensor.sum"].startswith("left out")


def test_what_the_standard_does_not_judge_is_no_site():
    """``torch.accelerator.*`` (what porter rewrites ``torch.cuda.*`` into) and NumPy's host
    generator (what porter advises for random draws): analysed again, no site, no error."""
    cell = "ok = torch.accelerator.is_available()\nrng = np.random.default_rng(1)\n"
    result = rewrite_source(cell, imports={"torch": "torch", "np": "numpy"})
    assert result.sites == [] and not result.changed


def test_offsets_and_shapes_are_written_as_the_standard_takes_them():
    cell = textwrap.dedent(
        """\
        n = 4
        m = torch.ones(n, n)
        z = torch.zeros(2, 3, dtype=torch.float64)
        mask = torch.triu(m, diagonal=1)
        low = torch.tril(m, -1)
        """
    )
    run = {(2, 4, "torch.ones"): ("non_standard_usage", "ones")}
    result = rewrite_source(cell, imports={"torch": "torch"}, decided=run)
    _has(
        result.source,
        "m = torch.ones((n, n))\n",
        "z = torch.zeros((2, 3), dtype=torch.float64)\n",
        "mask = xp.triu(m, k=1)\n",
        "low = xp.tril(m, k=-1)\n",
    )
    _same(cell, result.source, ["m", "z", "mask", "low"], TORCH)


def test_xp_is_never_taken_from_a_name_the_run_saw_holding_a_list():
    """PythonDataScienceHandbook 02.03: ``x = [-1, 0, 1]; np.arcsin(x)`` became
    ``xp = array_namespace(x)``, which raises on a list."""
    cell = "x = [-1, 0, 1]\ny = np.arcsin(x)\n"
    result = rewrite_source(cell, imports={"np": "numpy"}, others=["x"])
    assert not result.changed
    (site,) = result.refused
    assert site.reason.startswith("x is not an array")
