"""The codemod on the idioms people write (issue 19): method chains rewritten link by link,
tuple results read one field at a time, casts and copies, and what a run tells the source
cannot. Each rewrite is run against the original, on real arrays."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from array_api_compat import array_namespace

from porter_ext.fix.rewrite import RunKnowledge, rewrite_source


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
#: Python Data Science Handbook 02.03's loop, which a port writes with xpx.at
RECIPROCALS = (
    "def compute_reciprocals(values):\n"
    "    output = np.empty(len(values))\n"
    "    for i in range(len(values)):\n"
    "        output[i] = 1.0 / values[i]\n"
    "    return output\n"
    "r = compute_reciprocals(values)\n"
)


def test_every_link_of_a_chain_on_a_call_the_source_cannot_type_is_rewritten():
    """``p = torch.sigmoid(X)``: what sigmoid returns the source does not say, a run does;
    every link of ``-(p.clamp(...).log()).mean()`` is rewritten on what the links before
    it became."""
    cell = "p = torch.sigmoid(X)\nloss = -(p.clamp(1e-6, 1 - 1e-6).log()).mean()\n"
    alone = rewrite_source(cell, imports={"torch": "torch"}, arrays={"X": "torch"})
    assert "loss = -(p.clamp(1e-6, 1 - 1e-6).log()).mean()" in alone.source
    # the run: torch.sigmoid at line 1, column 4 returned a torch array
    run = {(1, 4, "torch.sigmoid"): "torch"}
    result = rewrite_source(
        cell, imports={"torch": "torch"}, arrays={"X": "torch"}, run=RunKnowledge(results=run)
    )
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
    result = rewrite_source(
        cell, imports={"torch": "torch"}, arrays={"X": "torch"}, run=RunKnowledge(results=run)
    )
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
    result = rewrite_source(
        cell, imports={"np": "numpy"}, arrays={"x": "numpy"}, run=RunKnowledge(receivers=run)
    )
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
        # x holds floats, which may hold NaNs that np.unique joins: left as written
        "u, c = np.unique(xp.round(x), return_counts=True)\n",
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
    # the cell reads x: its creations follow x's library (on another one, they must be
    # that one's arrays)
    assert "xp = array_namespace(x)\na = xp.reshape(xp.arange(3), (3, 1))\n" in result.source
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


def test_a_functions_xp_comes_from_an_earlier_cells_array_it_reads():
    """makemore's ``split_loss(split)``: its parameter is a string, and its arrays come
    from the notebook's (``C``, ``W1``): every site was left as written ("its rewrites
    read no parameter"). The first earlier array it reads and does not bind gives xp."""
    cell = textwrap.dedent(
        """\
        def loss_of(split):
            x = {"train": Xtr}[split]
            emb = C * x.sum()
            h = torch.tanh(emb.view(-1) @ W1)
            return h.mean()
        out = loss_of("train")
        """
    )
    arrays = {"Xtr": "torch", "C": "torch", "W1": "torch", "unread": "torch"}
    result = rewrite_source(cell, imports={"torch": "torch"}, arrays=arrays)
    assert "def loss_of(split):\n    xp = array_namespace(Xtr)\n" in result.source
    assert "h = xp.tanh(xp.reshape(emb, (-1,)) @ W1)" in result.source
    setup = (
        "import torch\nfrom array_api_compat import array_namespace\n"
        "Xtr = torch.arange(3.0)\nC = torch.ones(2, 3)\nW1 = torch.linspace(0, 1, 12).reshape(6, 2)\n"
    )
    _same(cell, result.source, ["out"], setup)
    # a global it binds itself (``global C``-less assignment makes C local) is not one
    own = "def f(n):\n    C = torch.ones(n, 2)\n    return C.sum(1)\n"
    kept = rewrite_source(own, imports={"torch": "torch"}, arrays={"C": "torch"})
    assert kept.source == own


def test_a_standard_creation_alone_in_a_function_never_takes_xp_from_its_size():
    """LLMs-from-scratch ch04's ``LayerNorm.__init__(self, emb_dim)``: the standard call
    ``torch.ones(emb_dim)`` moved through ``xp`` bound ``xp = array_namespace(emb_dim)``,
    an int, which raised in every replay (and refused the class with it). A creation's
    arguments are sizes; with no array in the function, the call stays the library's."""
    for cell in (
        "def make(n):\n    return torch.ones(n)\n",
        "class Norm:\n    def __init__(self, n):\n        self.scale = torch.ones(n)\n",
    ):
        result = rewrite_source(cell, imports={"torch": "torch"})
        assert "array_namespace" not in result.source, result.source
        assert result.source == cell


def test_a_methods_xp_is_never_a_shape_argument_nor_self():
    """LLMs-from-scratch ch03: ``xp = array_namespace(context_length)`` (an int, read in
    ``torch.ones(context_length, context_length)``) and ``array_namespace(self)`` (from
    ``self.mask.bool()``) raised in every replay. Call arguments, indices and attribute
    bases are not the array; ``x``, whose ``.shape`` the method reads, is."""
    cell = textwrap.dedent(
        """\
        class Attention:
            def __init__(self, context_length):
                self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)

            def forward(self, x):
                b, n, d = x.shape
                scores = (x @ x.transpose(1, 2)) * self.mask.bool()[:n, :n]
                return torch.softmax(scores, dim=-1)
        out = Attention(3).forward(torch.linspace(-1, 1, 18).reshape(2, 3, 3))
        """
    )
    result = rewrite_source(cell, imports={"torch": "torch"})
    assert "array_namespace(context_length)" not in result.source
    assert "array_namespace(self)" not in result.source
    assert "    def forward(self, x):\n        xp = array_namespace(x)\n" in result.source
    (triu,) = [s for s in result.sites if s.name == "torch.triu"]
    assert triu.replacement is None and "the rest of __init__" in triu.reason
    torch = pytest.importorskip("torch")
    before: dict = {"torch": torch}
    after: dict = {"torch": torch, "array_namespace": array_namespace}
    exec(cell, before)
    exec(result.source, after)
    torch.testing.assert_close(after["out"], before["out"])  # softmax: within float32 ulps


def test_a_creations_sizes_never_give_xp_and_a_methods_comes_from_its_input(port_shell):
    """LLMs-from-scratch ch03: in ``__init__(self, n)``, the run's site ``torch.ones(n, n)``
    named ``n`` as an array the library's calls take, and ``xp = array_namespace(n)`` raised
    in every replay ("requires at least one non-scalar array input"); ``forward``'s arrays
    are computed from its parameter ``x``, which gives its xp."""
    from tests.fix.test_fix_idioms import _fix

    pytest.importorskip("torch")
    setup = "import torch\nscores = torch.linspace(-1, 1, 9).reshape(3, 3)\nn = 3\n"
    body = (
        "class Masked:\n"
        "    def __init__(self, n):\n"
        "        self.mask = torch.triu(torch.ones(n, n), diagonal=1)\n"
        "    def forward(self, x):\n"
        "        keys = x @ x\n"
        "        return torch.softmax(keys, dim=-1)\n"
        "out = Masked(n).forward(scores)\n"
        "mask = torch.triu(torch.ones(n, n), diagonal=1)\n"
        "masked = scores.masked_fill(mask.bool(), -torch.inf)\n"
    )
    rewrite = _fix(port_shell, setup, body, "--in-process -b numpy,strict")
    assert "array_namespace(n)" not in rewrite.source, rewrite.source
    # forward's xp: keys is computed from the parameter x
    assert "    def forward(self, x):\n        xp = array_namespace(x)\n" in rewrite.source
    # at the cell's level, the ones go through xp: the sizes n are no array to take it
    # from ("n is not an array" left them torch's, and strict failed on xp.triu of them)
    assert "mask = xp.triu(xp.ones((n, n)), k=1)\n" in rewrite.source
    assert rewrite.verified_on == ["torch", "numpy", "strict"], rewrite.reason


def test_a_functions_xp_comes_from_the_parameter_its_arrays_are_computed_from(port_shell):
    """``s = x * 2; t = s[0]; return torch.exp(t) + t.abs()``: the site's array is local, so the function was
    left as written; ``t`` is computed from ``s``, and ``s`` from the parameter ``x``,
    which gives xp."""
    from tests.fix.test_fix_idioms import _fix

    torch = pytest.importorskip("torch")
    body = "def f(x):\n    s = x * 2\n    t = s[0]\n    return torch.exp(t) + t.abs()\nout = f(X)\n"
    rewrite = _fix(port_shell, TORCH, body, "--in-process -b numpy,strict")
    assert rewrite.status == "verified", rewrite.reason
    assert "def f(x):\n    xp = array_namespace(x)\n" in rewrite.source
    # torch.exp is the standard's name: the run saw it make a torch array of the local
    # t, which the source cannot type, so it goes through xp too (it failed on numpy)
    assert "return xp.exp(t) + xp.abs(t)" in rewrite.source
    ported: dict = {"X": port_shell.user_ns["X"], "torch": torch}
    exec(rewrite.source, ported)
    assert torch.equal(ported["out"], port_shell.user_ns["out"])


def test_a_functions_creations_follow_the_parameter_it_reads_through_its_elements(port_shell):
    """Python Data Science Handbook 02.03: ``compute_reciprocals(values)`` reads its
    parameter only as ``len(values)`` and ``values[i]`` (in ``1.0 / values[i]``, cast to
    float), so it was left as written ("its rewrites read no parameter") and failed on
    jax and strict; its ``np.empty`` stayed NumPy's inside a function, so a write of a
    jax value into it mixed libraries. Now xp is the parameter's, and the creation
    follows it."""
    from tests.fix.test_fix_idioms import _fix

    setup = "import numpy as np\nvalues = np.arange(1, 6)\n"
    body = RECIPROCALS
    rewrite = _fix(port_shell, setup, body, "--in-process -b jax,strict")
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["numpy", "jax", "strict"], rewrite.reason
    _has(
        rewrite.source,
        "def compute_reciprocals(values):\n    xp = array_namespace(values)\n",
        "    output = xp.empty(values.shape[0])\n",
        "        output = xpx.at(output)[i].set(1.0 / xp.astype(values[i], xp.float64))\n",
    )
    _same(
        body,
        rewrite.source,
        ["r"],
        setup + "from array_api_compat import array_namespace\nimport array_api_extra as xpx\n",
    )


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
    result = rewrite_source(cell, imports=imports, arrays=arrays, run=RunKnowledge(decided=decided))
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
    result = rewrite_source(cell, imports={"torch": "torch"}, run=RunKnowledge(decided=run))
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
    result = rewrite_source(cell, imports={"np": "numpy"}, run=RunKnowledge(others=["x"]))
    assert not result.changed
    (site,) = result.refused
    assert site.reason.startswith("x is not an array")


def test_an_earlier_cells_array_does_not_make_a_call_on_a_list_portable():
    """Handbook 02.03, where an earlier cell bound ``values``: ``xp`` was taken from it, so
    the rewrite read a name the cell's replay was never given ("it does not run on numpy,
    the original backend (NameError: name 'values' is not defined)"), and ``xp.asin(x)``
    of a list runs on NumPy alone whichever array ``xp`` comes from."""
    cell = "x = [-1, 0, 1]\ny = np.arcsin(x)\n"
    knowledge = RunKnowledge(others=["x"])
    result = rewrite_source(
        cell, imports={"np": "numpy"}, arrays={"values": "numpy"}, run=knowledge
    )
    assert not result.changed
    (site,) = result.refused
    assert site.reason.startswith("x is not an array"), site.reason


NUMPY = "import numpy as np\nx = np.arange(6.0).reshape(2, 3)\nv = np.arange(4.0)\n"


def _on_torch(cell: str):
    """The cell rewritten where ``torch`` is imported and ``X`` holds a tensor."""
    return rewrite_source(cell, imports={"torch": "torch"}, arrays={"X": "torch"})


def test_item_is_written_as_the_python_type_of_the_dtype_the_run_saw():
    """``.item()`` is ``float(x)``, ``int(x)``, ``bool(x)`` by the array's dtype, which only
    a run knows; without one the site says so, with one it is written so."""
    cell = "s = X.sum().item()\nn = (X > 0).sum().item()\n"
    imports, arrays = {"torch": "torch"}, {"X": "torch"}
    alone = rewrite_source(cell, imports=imports, arrays=arrays)
    assert {s.name: s.reason for s in alone.refused}["Tensor.item"].startswith("which rewrite")
    decided = {
        (1, 4, "Tensor.item"): ("host_sync", "__float__"),
        (2, 4, "Tensor.item"): ("host_sync", "__int__"),
    }
    result = rewrite_source(cell, imports=imports, arrays=arrays, run=RunKnowledge(decided=decided))
    _has(result.source, "s = float(xp.sum(X))\n", "n = int(xp.sum(X > 0))\n")
    _same(cell, result.source, ["s", "n"], TORCH + "from array_api_compat import array_namespace\n")


def test_literals_become_copies_made_by_asarray_in_the_same_library():
    """``torch.tensor(data)`` and ``np.array(data)`` always copy: ``asarray(..., copy=True)``
    in the library that made them (no array here gives ``xp``, and none is needed)."""
    cell = textwrap.dedent(
        """\
        xs = torch.tensor([1, 2, 3])
        ys = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
        a = np.array([4, 5])
        w = torch.tensor([1.0], requires_grad=True)
        """
    )
    result = rewrite_source(cell, imports={"torch": "torch", "np": "numpy"})
    _has(
        result.source,
        "xs = torch.asarray([1, 2, 3], copy=True)\n",
        "ys = torch.asarray([[1.0, 2.0]], dtype=torch.float64, copy=True)\n",
        "a = np.asarray([4, 5], copy=True)\n",
        "w = torch.tensor([1.0], requires_grad=True)\n",
    )
    assert (
        "drop requires_grad=True"
        in {s.original: s.reason for s in result.refused}["torch.tensor([1.0], requires_grad=True)"]
    )
    _same(cell, result.source, ["xs", "ys", "a"], TORCH + "import numpy as np\n")


def test_a_python_type_given_as_dtype_is_written_as_the_librarys_own_dtype():
    """Python Data Science Handbook 02.06: ``np.array([1, 0, 1], dtype=bool)`` became
    ``np.asarray(..., dtype=bool, copy=True)``, which array-api-strict refuses ("dtype
    must be one of the supported dtypes, got <class 'bool'>"): a Python type is NumPy's
    and PyTorch's reading of it, not the standard's."""
    strict = pytest.importorskip("array_api_strict")
    cell = textwrap.dedent(
        """\
        A = np.array([1, 0, 1], dtype=bool)
        B = np.array([1, 2], dtype=float)
        C = torch.tensor([1, 2], dtype=int)
        """
    )
    result = rewrite_source(cell, imports={"torch": "torch", "np": "numpy"})
    _has(
        result.source,
        "A = np.asarray([1, 0, 1], dtype=np.bool, copy=True)\n",
        "B = np.asarray([1, 2], dtype=np.float64, copy=True)\n",
        "C = torch.asarray([1, 2], dtype=torch.int64, copy=True)\n",
    )
    _same(cell, result.source, ["A", "B", "C"], TORCH + "import numpy as np\n")
    replayed: dict = {"np": strict}  # a replay on strict reads np as its namespace
    exec(result.source.splitlines()[0], replayed)
    assert replayed["A"].dtype == strict.bool


def test_norms_and_cumulative_sums_keep_their_axes():
    cell = "n = np.linalg.norm(x)\nc = np.cumsum(x, axis=1)\nk = x.cumsum(0)\nd = np.cumsum(v)\n"
    arrays = {"x": "numpy", "v": "numpy"}
    result = rewrite_source(cell, imports={"np": "numpy"}, arrays=arrays)
    _has(
        result.source,
        "n = xp.linalg.vector_norm(x)\n",
        "c = xp.cumulative_sum(x, axis=1)\n",
        "k = xp.cumulative_sum(x, axis=0)\n",
        "d = xp.cumulative_sum(v)\n",
    )
    _same(cell, result.source, ["n", "c", "k", "d"], NUMPY)
    # where NumPy flattens (more than one axis, none given) the standard's call raises
    # instead of answering otherwise: the replays refuse it
    with pytest.raises(ValueError):
        exec(
            rewrite_source("d = np.cumsum(x)\n", imports={"np": "numpy"}, arrays=arrays).source,
            {"x": np.ones((2, 3))},
        )


def test_a_view_of_one_size_gets_a_shape_tuple():
    cell = "f = X.view(-1)\ng = X.view(2, 6)\nshape = (4, 3)\nh = X.view(shape)\n"
    result = _on_torch(cell)
    _has(
        result.source,
        "f = xp.reshape(X, (-1,))\n",
        "g = xp.reshape(X, (2, 6))\n",
        "h = xp.reshape(X, shape)\n",
    )
    _same(cell, result.source, ["f", "g", "h"], TORCH)


def test_standard_calls_through_the_library_module_go_through_xp():
    """``torch.abs(neg)`` is the standard's ``abs`` but runs on torch alone: a ported cell
    calls ``xp.abs``. Creation from sizes (``torch.arange(3)``) in a cell that computes on
    X follows X's library; calls on Python numbers (``np.sqrt(2.0)``) have no array to
    follow and stay."""
    cell = textwrap.dedent(
        """\
        neg = torch.where(X > 0, X, torch.zeros_like(X))
        pos = torch.abs(neg).sum()
        idx = torch.arange(3)
        """
    )
    result = _on_torch(cell)
    _has(
        result.source,
        "neg = xp.where(X > 0, X, xp.zeros_like(X))\n",
        "pos = xp.sum(xp.abs(neg))\n",
        "idx = xp.arange(3)\n",
    )
    assert {"torch.where", "torch.zeros_like", "torch.abs"} <= {s.name for s in result.applied}
    _same(cell, result.source, ["neg", "pos", "idx"], TORCH)
    cell = "r = np.sqrt(np.square(x))\nc = np.sqrt(2.0)\n"
    result = rewrite_source(cell, imports={"np": "numpy"}, arrays={"x": "numpy"})
    _has(result.source, "r = xp.sqrt(xp.square(x))\n", "c = np.sqrt(2.0)\n")
    _same(cell, result.source, ["r", "c"], NUMPY)


def test_a_parameter_inside_an_array_argument_is_an_array():
    """``np.exp(a - a.max(...))`` (a softmax): ``a`` is taken as an array, so its methods
    are rewritten and ``xp`` comes from it; before, the function was left as written."""
    cell = textwrap.dedent(
        """\
        def softmax(a):
            e = np.exp(a - a.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        p = softmax(x)
        """
    )
    result = rewrite_source(cell, imports={"np": "numpy"}, arrays={"x": "numpy"})
    _has(
        result.source,
        "    xp = array_namespace(a)\n",
        "    e = xp.exp(a - xp.max(a, axis=1, keepdims=True))\n",
        "    return e / xp.sum(e, axis=1, keepdims=True)\n",
    )
    _same(cell, result.source, ["p"], NUMPY + "from array_api_compat import array_namespace\n")


def test_both_results_of_a_two_result_call_unpacked_are_two_standard_calls():
    """``mx, arg = C.max(dim=1)``: torch's (values, indices), unpacked, is the standard's
    ``max`` and ``argmax``; the array is named, so writing it twice evaluates nothing twice."""
    cell = textwrap.dedent(
        """\
        mx, arg = X.max(dim=1)
        s, order = torch.sort(X, descending=True)
        a, b = (X + 1).max(dim=0)
        """
    )
    result = _on_torch(cell)
    _has(
        result.source,
        "mx, arg = xp.max(X, axis=1), xp.argmax(X, axis=1)\n",
        "s, order = xp.sort(X, descending=True), xp.argsort(X, descending=True)\n",
        "a, b = (X + 1).max(dim=0)\n",
    )
    assert "twice" in {s.original: s.reason for s in result.refused}["(X + 1).max(dim=0)"]
    _same(cell, result.source, ["mx", "arg", "s", "order", "a", "b"], TORCH)


def test_numpy_of_a_tensor_is_numpys_from_dlpack_on_the_host():
    """``t.numpy()`` gives a NumPy array of a tensor on the CPU: ``np.from_dlpack(t)``
    gives it from any library's array on the CPU (NumPy imported where the cell does not)."""
    cell = "host = X.sum(0).numpy()\n"
    result = _on_torch(cell)
    _has(
        result.source,
        "import numpy as np\n",
        "host = np.from_dlpack(xp.sum(X, axis=0))\n",
    )
    _same(cell, result.source, ["host"], TORCH + "from array_api_compat import array_namespace\n")
    ported: dict = {}
    exec(NUMPY + "import array_api_strict\nX = array_api_strict.asarray(x)\n", ported)
    exec(result.source, ported)
    assert isinstance(ported["host"], np.ndarray) and ported["host"].tolist() == [3.0, 5.0, 7.0]
    # a cell whose np is not NumPy keeps the call, with the reason
    clash = rewrite_source(
        "np = 3\nhost = X.numpy()\n", imports={"torch": "torch"}, arrays={"X": "torch"}
    )
    assert "np" in {s.name: s.reason for s in clash.refused}["Tensor.numpy"]


def test_a_write_into_an_array_is_an_update_every_library_can_make():
    """``h[0] = 0`` and ``N[i, j] += 1`` are the standard's, yet JAX's arrays are
    immutable: ``xpx.at`` (array-api-extra) writes in place where the library can (the same
    array, as before) and makes the updated copy where it cannot. A dict is left alone."""
    cell = textwrap.dedent(
        """\
        h = x.copy()
        h[0] = 0.5
        N = np.zeros((2, 2))
        N[0, 1] += 1
        d = {}
        d[0] = 1
        """
    )
    result = rewrite_source(cell, imports={"np": "numpy"}, arrays={"x": "numpy"})
    _has(
        result.source,
        "import array_api_extra as xpx\n",
        "h = xpx.at(h)[0].set(0.5)\n",
        "N = xpx.at(N)[0, 1].add(1)\n",
        "d[0] = 1\n",
    )
    _same(cell, result.source, ["h", "N", "x"], NUMPY)
    jnp = pytest.importorskip("jax.numpy")
    ported: dict = {"x": jnp.arange(6.0).reshape(2, 3), "np": jnp}
    exec(result.source, ported)
    assert ported["h"].tolist() == [[0.5, 0.5, 0.5], [3.0, 4.0, 5.0]]
    assert ported["N"].tolist() == [[0.0, 1.0], [0.0, 0.0]]


def test_a_creation_inside_an_expression_follows_the_cells_arrays():
    """``probs[torch.arange(2), y]``: a torch index into another library's array fails
    there; through ``xp`` it is that library's. So is a creation assigned to a name in a
    cell that computes on X (LLMs-from-scratch ch03: ``attn = torch.zeros(n)`` filled
    from ``inputs`` mixed a torch array into every other library's replay). In a cell
    that reads no earlier array, a creation is where the notebook's arrays come from,
    and stays."""
    cell = "idx = torch.arange(2)\nv = X[torch.arange(2), idx].clamp(0, 1)\n"
    result = _on_torch(cell)
    _has(
        result.source,
        "idx = xp.arange(2)\n",
        "v = xp.clip(X[xp.arange(2), idx], min=0, max=1)\n",
    )
    _same(cell, result.source, ["v"], TORCH + "from array_api_compat import array_namespace\n")
    maker = "Y = torch.linspace(0, 1, 5)\nZ = Y.sum()\n"
    kept = rewrite_source(maker, imports={"torch": "torch"}, arrays={"X": "torch"})
    _has(kept.source, "Y = torch.linspace(0, 1, 5)\n", "Z = xp.sum(Y)\n")
    # nor the portable form of a table's rewrite (ch03: ``example = torch.ones((6, 6))``
    # for a dropout took xp from an unrelated earlier array, and failed elsewhere)
    ones = rewrite_source(
        "E = torch.ones(6, 6)\nZ = E.sum()\n", imports={"torch": "torch"}, arrays={"X": "torch"}
    )
    _has(ones.source, "E = torch.ones((6, 6))\n", "Z = xp.sum(E)\n")


def test_the_fields_of_topk_are_a_sort_and_an_argsort_sliced():
    cell = "best = torch.topk(X.sum(0), 2).indices\ntop = torch.topk(X[0], 3)[0]\n"
    result = _on_torch(cell)
    _has(
        result.source,
        "best = xp.argsort(xp.sum(X, axis=0), axis=-1, descending=True, stable=True)[..., :2]\n",
        "top = xp.sort(X[0], axis=-1, descending=True)[..., :3]\n",
    )
    _same(cell, result.source, ["best", "top"], TORCH)


def test_a_site_the_run_saw_used_as_the_standard_says_is_no_site():
    """``P.T`` on a 2-D ``P`` is the standard's: the run says so, and the cell's rewrite
    is not left partial by a site with nothing to do."""
    cell = "Pt = X.T\ns = X.sum(1)\n"
    result = rewrite_source(
        cell,
        imports={"torch": "torch"},
        arrays={"X": "torch"},
        run=RunKnowledge(decided={(1, 5, "Tensor.T"): ("standard", None)}),
    )
    assert [s.name for s in result.sites] == ["Tensor.sum"] and not result.refused
    assert "Pt = X.T\n" in result.source


def test_a_modules_sizes_give_no_xp_and_its_forward_takes_it_from_what_its_layers_read():
    """``nn.Linear(d_in, d_out)`` takes sizes: ``d_in`` is no array to take xp from (it
    was, and the rewrite failed on torch). ``forward`` reads ``x`` only through a layer
    (``self.W(x)``): xp comes from ``x``, not from ``self``."""
    cell = textwrap.dedent(
        """\
        class Layer(torch.nn.Module):
            def __init__(self, d_in, d_out, n):
                super().__init__()
                self.W = torch.nn.Linear(d_in, d_out)
                self.mask = torch.triu(torch.ones(n, n), diagonal=1)

            def forward(self, x):
                h = self.W(x)
                return torch.softmax(h, dim=-1)
        """
    )
    result = rewrite_source(cell, imports={"torch": "torch"})
    assert "array_namespace(d_in)" not in result.source
    assert "array_namespace(n)" not in result.source
    _has(result.source, "        xp = array_namespace(x)\n        h = self.W(x)\n")
    (triu,) = [s for s in result.sites if s.name == "torch.triu"]
    assert triu.replacement is None and "left as written with the rest of __init__" in triu.reason


def test_xp_of_a_list_of_arrays_is_taken_from_its_elements():
    """LLMs-from-scratch ch04: ``batch = torch.stack(batch, dim=0)`` of a list of tensors
    bound ``xp = array_namespace(batch)``, which raises on a list ("list is not a
    supported array type"): the rewrite was left out. ``xp`` comes from its elements."""
    cell = textwrap.dedent(
        """\
        batch = []
        batch.append(torch.tensor([1, 2]))
        batch.append(torch.tensor([3, 4]))
        batch = torch.stack(batch, dim=0)
        """
    )
    result = rewrite_source(cell, imports={"torch": "torch"})
    assert "xp = array_namespace(*batch)\nbatch = xp.stack(batch, axis=0)" in result.source
    _same(
        cell,
        result.source,
        ["batch"],
        "import torch\nfrom array_api_compat import array_namespace\n",
    )
    joined = "def f(parts):\n    return torch.cat(parts, dim=1)\n"
    result = rewrite_source(joined, imports={"torch": "torch"})
    assert "    xp = array_namespace(*parts)\n    return xp.concat(parts, axis=1)" in result.source


@pytest.mark.parametrize(
    ("line", "bracketed"),
    [
        ("a = F.softmax(logits, 1)[0]", "a = (xp.exp("),
        ("a = 1.0 / F.softmax(logits, 1)", "a = 1.0 / (xp.exp("),
        ("a = F.softmax(logits, 1) ** 2", "a = (xp.exp("),
        ("a = -F.softmax(logits, 1)", "a = -(xp.exp("),
    ],
    ids=["indexed", "divisor", "power", "negated"],
)
def test_a_rewrite_that_is_no_atom_goes_in_parentheses_where_its_place_binds_tighter(
    line, bracketed
):
    """makemore part 4: ``F.softmax(logits, 1)[0]`` became ``xp.exp(...) / xp.sum(...)[0]``,
    the index read off the sum (its replays said "shape_changed" and refused it). The
    formula goes in parentheses where it is an operand or indexed; as an assigned value it
    stays bare."""
    torch = pytest.importorskip("torch")
    setup = "import torch\nimport torch.nn.functional as F\nlogits = torch.linspace(-2, 3, 12).reshape(3, 4)\n"
    ported = rewrite_source(setup + line, arrays={"logits": "torch"}).source
    assert bracketed in ported, ported
    bare = rewrite_source(setup + "b = F.softmax(logits, 1)", arrays={"logits": "torch"}).source
    assert "b = xp.exp(" in bare, bare
    before: dict = {}
    after: dict = {}
    exec(setup + line, before)
    exec(ported, after)
    assert before["a"].shape == after["a"].shape
    torch.testing.assert_close(before["a"], after["a"])


def test_contiguous_is_dropped_and_what_reads_it_next_is_rewritten_too():
    """LLMs ch03: ``context_vec.transpose(1, 2).contiguous().view(b, n, d)``: memory layout
    is not the standard's, and ``.contiguous()`` was advice only, so the ``.view`` after it
    (on what the source did not know was an array) stayed as written. ``.contiguous()``
    is the same array: dropped, and the view becomes ``xp.reshape``, which copies where it
    must."""
    source = "y = a.transpose(0, 1).contiguous().view(6)\nw = a.detach().view(6)\n"
    ported = rewrite_source(source, imports={"torch": "torch"}, arrays={"a": "torch"}).source
    _has(
        ported,
        "y = xp.reshape(xp.moveaxis(a, (0, 1), (1, 0)), (6,))",
        "w = xp.reshape(a.detach(), (6,))",
    )
    _same(source, ported, ["y", "w"], setup="import torch\na = torch.arange(6.0).reshape(2, 3)\n")


def test_an_operation_split_off_is_computed_once():
    """``y = (a + b).view(6)``: the receiver split off into ``y`` (``xp`` is taken from
    it) was computed again in the rest of the statement (``xp.reshape(a + b, (6,))``), its
    parentheses making it another node than the rewrite's operand. The rest reads ``y``."""
    source = "y = (a + b).view(6)\n"
    ported = rewrite_source(source, imports={"torch": "torch"}, arrays={"a": "torch"}).source
    _has(ported, "y = a + b\n", "y = xp.reshape(y, (6,))")
    _same(source, ported, ["y"], setup="import torch\na = torch.arange(6.0)\nb = a * 2\n")
