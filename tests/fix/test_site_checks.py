"""A training cell's rewritten sites verified at their calls (issue 29 item 4): the cell
keeps ``loss.backward()`` (autograd is outside the standard), so it runs on torch only,
yet each rewritten expression is evaluated again on the other libraries with the values
it read in the replay, and compared there. Real torch, numpy and array-api-strict, in
real workers, through ``%%port --fix`` in a real IPython shell."""

from __future__ import annotations

import pytest

from tests.fix.test_verify_backend import _fix

pytestmark = pytest.mark.slow

SETUP = (
    "import torch\ng = torch.Generator().manual_seed(1)\n"
    "W = torch.randn(4, 3, generator=g, requires_grad=True)\nX = torch.randn(8, 4, generator=g)"
)
BODY = (
    "h = X @ W\n"
    "hmean = h.mean(0, keepdim=True)\n"
    "hstd = h.std(0, keepdim=True)\n"
    "positive = (h > 0).sum()\n"
    "loss = ((h - hmean) / hstd).pow(2).mean()\n"
    "first = h[0]\n"
    "count = h.nelement()\n"
    "loss.backward()\n"
)


def _site(rewrite, name: str, line: int):
    return next(s for s in rewrite.sites if s.name == name and s.line == line)


def test_a_training_cells_sites_are_verified_at_their_calls_on_the_other_libraries(port_shell):
    pytest.importorskip("torch")
    pytest.importorskip("array_api_strict")
    entry = _fix(port_shell, SETUP, BODY, "-b numpy,strict")
    rewrite = entry.rewrite
    assert rewrite.status == "partial", rewrite.reason
    assert rewrite.verified_on == ["torch"]
    mean, std = _site(rewrite, "Tensor.mean", 2), _site(rewrite, "Tensor.std", 3)
    for site in (mean, std):
        assert site.applied and site.checked_on == ["numpy", "strict"], site
        assert site.check.startswith("verified at 1 call(s) on numpy, strict"), site.check
    # strict sums no bool array: the site is checked and says where it fails
    counted = _site(rewrite, "Tensor.sum", 4)
    assert counted.applied and counted.checked_on == ["numpy"], counted
    assert "not on strict:" in counted.check
    # an index read (``h[0, ...]``) and Python's own math on a shape are checked too
    for name, line in (("Tensor.__getitem__", 6), ("Tensor.nelement", 7)):
        site = _site(rewrite, name, line)
        assert site.applied and site.checked_on == ["numpy", "strict"], site
    assert "verified at their calls on numpy, strict" in rewrite.reason
    # what kept the whole cell on torch is said too
    assert "backward" in rewrite.reason


LAYER = (
    "class Masked(torch.nn.Module):\n"
    "    def __init__(self, n):\n"
    "        super().__init__()\n"
    "        self.proj = torch.nn.Linear(n, n)\n"
    "        self.register_buffer('mask', torch.ones(n, n) > 1.5)\n"
    "\n"
    "    def forward(self, x):\n"
    "        scores = self.proj(x) @ x.transpose(0, 1)\n"
    "        scores.masked_fill_(self.mask.bool(), -torch.inf)\n"
    "        return torch.softmax(scores, dim=-1)\n"
    "\n"
    "torch.manual_seed(0)\n"
    "out = Masked(4)(X[:4])\n"
)


def test_a_layers_sites_read_its_attributes_and_its_writes_are_checked_by_their_value(
    port_shell,
):
    """LLMs-from-scratch ch03's attention: the cell is torch-only (``torch.nn.Linear``);
    ``self.mask`` is read as the replay reads it, and the value ``masked_fill_``'s rewrite
    writes (``scores[...] = xp.where(...)``) is what is checked of it."""
    pytest.importorskip("torch")
    pytest.importorskip("array_api_strict")
    entry = _fix(port_shell, SETUP, LAYER, "-b numpy,strict")
    rewrite = entry.rewrite
    assert rewrite.status == "partial", rewrite.reason
    filled = _site(rewrite, "Tensor.masked_fill_", 9)
    assert filled.applied and filled.replacement.startswith("scores[...] = xp.where("), filled
    assert filled.checked_on == ["numpy", "strict"], filled
    assert _site(rewrite, "Tensor.bool", 9).checked_on == ["numpy", "strict"]
    assert _site(rewrite, "torch.softmax", 10).checked_on == ["numpy", "strict"]


def test_a_cell_that_makes_its_own_arrays_is_checked_where_its_rounds_moved_its_draws(
    port_shell,
):
    """makemore part 3's statistics cell draws every array through torch's generator:
    its plain replays never touch numpy (not exercised there), but its rounds move the
    person's draws there, and say the rewrite is not verified on numpy. Its sites are
    checked at their calls there too."""
    pytest.importorskip("torch")
    pytest.importorskip("array_api_strict")
    body = (
        "g = torch.Generator().manual_seed(1)\n"
        "a = torch.randn((10, 1), requires_grad=True, generator=g)\n"
        "b = torch.randn((10, 10), requires_grad=True, generator=g)\n"
        "c = b @ a\n"
        "loss = torch.randn(10, generator=g) @ c\n"
        "c.retain_grad()\n"
        "loss.backward()\n"
        "spread = a.std()\n"
    )
    entry = _fix(port_shell, "import torch", body, "-b numpy,strict")
    rewrite = entry.rewrite
    assert rewrite.status == "partial", rewrite.reason
    spread = _site(rewrite, "Tensor.std", 8)
    assert spread.applied and spread.checked_on == ["numpy", "strict"], spread


ATTENTION = (
    "class Attention(torch.nn.Module):\n"
    "    def __init__(self, d_in, d_out, n):\n"
    "        super().__init__()\n"
    "        self.W_key = torch.nn.Linear(d_in, d_out)\n"
    "        self.W_query = torch.nn.Linear(d_in, d_out)\n"
    "        self.register_buffer('mask', torch.triu(torch.ones(n, n), diagonal=1))\n"
    "\n"
    "    def forward(self, x):\n"
    "        keys = self.W_key(x)\n"
    "        scores = self.W_query(x) @ keys.transpose(0, 1)\n"
    "        scores.masked_fill_(self.mask.bool(), -torch.inf)\n"
    "        return torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)\n"
    "\n"
    "torch.manual_seed(0)\n"
    "out = Attention(3, 2, 4)(X[:4, :3])\n"
)


def test_a_modules_forward_takes_xp_from_the_input_its_layers_read(port_shell):
    """LLMs-from-scratch ch03's attention classes: ``__init__`` reads sizes only
    (``nn.Linear(d_in, d_out)``, ``torch.ones(n, n)``), and ``forward`` reads ``x`` only
    through its layers (``self.W_key(x)``). ``xp = array_namespace(d_in)`` at the top of
    ``__init__`` failed on torch and took every site of the class with it; ``forward``'s
    were left as written ("its rewrites read no parameter"). Now ``__init__``'s sites
    through xp stay as written with that reason, its shape written as one tuple is kept,
    and ``forward`` takes xp from ``x``: its sites are checked at their calls."""
    pytest.importorskip("torch")
    pytest.importorskip("array_api_strict")
    entry = _fix(port_shell, SETUP, ATTENTION, "-b numpy,strict")
    rewrite = entry.rewrite
    assert "array_namespace(d_in)" not in rewrite.source
    assert "    def forward(self, x):\n        xp = array_namespace(x)\n" in rewrite.source
    triu = _site(rewrite, "torch.triu", 6)
    assert not triu.applied and "left as written with the rest of __init__" in triu.reason
    ones = _site(rewrite, "torch.ones", 6)
    assert ones.applied and ones.replacement == "torch.ones((n, n))", ones
    for name, line in (
        ("Tensor.transpose", 10),
        ("Tensor.masked_fill_", 11),
        ("torch.softmax", 12),
    ):
        site = _site(rewrite, name, line)
        assert site.applied and site.checked_on == ["numpy", "strict"], site
