"""What ``%%port --fix`` says where it cannot rewrite a call the standard has nothing
for (issue 19): seeding a library's generator, listing a library's devices. The refusal
says what the standard lacks and names the nearest portable form."""

from __future__ import annotations

import pytest

from tests.fix.test_fix_idioms import _fix


def _site(rewrite, name: str):
    assert rewrite.status == "refused", rewrite
    return next(s for s in rewrite.sites if s.name == name)


@pytest.mark.parametrize(
    ("setup", "body", "name"),
    [
        (
            "import torch\nt = torch.arange(3.0)\n",
            "torch.manual_seed(0)\nu = t * 2\n",
            "torch.manual_seed",
        ),
        (
            "import numpy as np\nx = np.arange(3.0)\n",
            "np.random.seed(0)\nw = x * 2\n",
            "numpy.random.seed",
        ),
    ],
)
def test_a_seed_is_refused_as_nothing_the_standard_seeds(port_shell, setup, body, name):
    """It said "random draws: a different generator gives different numbers" of a call
    that draws nothing."""
    pytest.importorskip(name.partition(".")[0])
    site = _site(_fix(port_shell, setup, body, "--in-process -b numpy"), name)
    assert not site.applied
    assert site.reason.startswith("the standard has no random numbers, so nothing to seed")
    assert "rng = np.random.default_rng(seed)" in site.reason
    assert "xp.asarray(..., device=device)" in site.reason


def test_jax_devices_is_refused_naming_the_inspection_api_and_why(port_shell):
    """It said only "no verified rewrite: the suggestion is advice to apply by hand"."""
    pytest.importorskip("jax")
    setup = "import jax, jax.numpy as jnp\nj = jnp.arange(3.0)\n"
    site = _site(
        _fix(port_shell, setup, "d = jax.devices()\nv = j * 2\n", "--in-process -b numpy"),
        "jax.devices",
    )
    assert "xp.__array_namespace_info__().devices()" in site.reason, site.reason
    assert "needs no array" in site.reason and "xp = array_namespace(x)" in site.reason


def test_autograd_modules_and_generators_stay_as_written_with_the_reason(port_shell):
    """LLMs-from-scratch and makemore: ``torch.nn.Linear`` (24 sites of ch04),
    ``nn.Parameter``, ``loss.backward()``, ``p.grad``, ``p.data``, ``torch.Generator()``
    were "no rewrite proposed" (classes and attributes got no site) or "the table has no
    rewrite for this call": each stays as written and says why, and the array code around
    them is still rewritten."""
    pytest.importorskip("torch")
    setup = "import torch\nX = torch.linspace(-1, 1, 12).reshape(3, 4)\n"
    body = (
        "g = torch.Generator().manual_seed(0)\n"
        "torch.manual_seed(0)\n"
        "lin = torch.nn.Linear(4, 2)\n"
        "W = X * 1.0\nW.requires_grad = True\n"
        "loss = (lin(W) ** 2).sum()\nloss.backward()\n"
        "grad = W.grad\ndata = W.data\n"
        "opt = torch.optim.SGD(lin.parameters(), lr=0.1)\n"
    )
    rewrite = _fix(port_shell, setup, body, "--in-process -b numpy")
    sites = {s.name: s for s in rewrite.sites}
    for name in ("torch.nn.Linear", "torch.optim.SGD"):
        assert not sites[name].applied
        assert sites[name].reason.startswith("torch.nn modules and optimizers are PyTorch's")
    for name in ("Tensor.backward", "Tensor.grad", "Tensor.data"):
        assert not sites[name].applied
        assert sites[name].reason.startswith("autograd is outside the standard")
    assert sites["torch.Generator"].reason.startswith("the standard has no random numbers")
    assert sites["Tensor.sum"].applied, sites["Tensor.sum"]
    # the receiver split off is computed once: ``xp`` is taken from it
    assert "loss = lin(W) ** 2\nxp = array_namespace(loss)\nloss = xp.sum(loss)" in rewrite.source
