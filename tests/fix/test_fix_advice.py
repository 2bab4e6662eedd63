"""``%%port --fix`` on the calls that public notebooks make most and that porter only
advised on before (issue 29 items 2 and 3): softmax, two axes exchanged, torch.dot,
masked_fill, nelement, one_hot, and the NumPy functions array-api-extra has. Each is
rewritten, verified on numpy, jax and strict, and the rewrite computes what the cell did.
"""

from __future__ import annotations

import numpy as np
import pytest

BACKENDS = "numpy,jax,strict"

TORCH_SETUP = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "q = torch.linspace(-2, 2, 24).reshape(2, 3, 4)\n"
    "k = torch.linspace(1, -1, 24).reshape(2, 3, 4)\n"
    "a = torch.linspace(-1, 2, 5)\n"
    "ix = torch.tensor([0, 3, 1, 2])\n"
)
NUMPY_SETUP = (
    "import numpy as np\n"
    "A = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]])\n"
    "u = np.array([1, 4, 2, 7, 4])\n"
    "w = np.array([4, 5, 7])\n"
)

#: (setup, cell, what the rewrite writes, the names whose values it must keep)
CASES = {
    "softmax": (
        TORCH_SETUP,
        "p = torch.softmax(q, dim=-1)\nr = F.softmax(k, dim=1)\n",
        [
            "p = xp.exp(q - xp.max(q, axis=-1, keepdims=True)) / xp.sum(xp.exp(q - xp.max(q, "
            "axis=-1, keepdims=True)), axis=-1, keepdims=True)\n"
        ],
        ("p", "r"),
    ),
    "transpose": (
        TORCH_SETUP,
        "s = q @ k.transpose(-2, -1)\n",
        ["s = q @ xp.moveaxis(k, (-2, -1), (-1, -2))\n"],
        ("s",),
    ),
    "dot": (TORCH_SETUP, "d = torch.dot(a, a)\n", ["d = xp.matmul(a, a)\n"], ("d",)),
    "masked_fill": (
        TORCH_SETUP,
        "m = q.masked_fill(k > 0, float('-inf'))\n",
        ["m = xp.where(k > 0, xp.asarray(float('-inf'), dtype=q.dtype, device=q.device), q)\n"],
        ("m",),
    ),
    "nelement": (
        TORCH_SETUP,
        "n = sum(t.nelement() for t in [q, k])\n",
        ["import math\n", "n = sum(math.prod(t.shape) for t in [q, k])\n"],
        ("n",),
    ),
    "one_hot": (
        TORCH_SETUP,
        "h = F.one_hot(ix, num_classes=5)\n",
        ["h = xpx.one_hot(ix, 5, dtype=ix.dtype)\n"],
        ("h",),
    ),
    "cross_entropy": (
        TORCH_SETUP + "logits = q[0, ...]\n",
        "loss = F.cross_entropy(logits, ix[:3])\n",
        [
            "loss = -xp.mean(xp.take_along_axis(logits - xp.max(logits, axis=1, keepdims=True) - "
            "xp.log(xp.sum(xp.exp(logits - xp.max(logits, axis=1, keepdims=True)), axis=1, "
            "keepdims=True)), xp.reshape(ix[:3], (-1, 1)), axis=1))\n"
        ],
        ("loss",),
    ),
    "array-api-extra": (
        NUMPY_SETUP,
        "mu = np.nanmean(A, axis=0)\nhit = np.isin(u, w)\nonly = np.setdiff1d(u, w)\n"
        "padded = np.pad(w, 1)\nkr = np.kron(w, w)\nrow = np.hstack([u, w])\n"
        "wide = np.hstack((A, A))\n",
        [
            "import array_api_extra as xpx\n",
            "mu = xpx.nanmean(A, axis=0)\n",
            "hit = xp.isin(u, w)\n",  # the 2025.12 standard has isin
            "only = xpx.setdiff1d(u, w)\n",
            "padded = xpx.pad(w, 1)\n",
            "kr = xpx.kron(w, w)\n",
            "row = xp.concat([u, w], axis=0 if [u, w][0].ndim == 1 else 1)\n",
            "wide = xp.concat((A, A), axis=0 if (A, A)[0].ndim == 1 else 1)\n",
        ],
        ("mu", "hit", "only", "padded", "kr", "row", "wide"),
    ),
}


def _values(value):
    if hasattr(value, "detach"):
        return value.detach().numpy()
    return np.asarray(value)


@pytest.mark.parametrize("case", CASES)
def test_advice_of_before_is_a_verified_rewrite(port_shell, case):
    setup, body, expected, names = CASES[case]
    if "torch" in setup:
        pytest.importorskip("torch")
    port_shell.run_cell(setup)
    result = port_shell.run_cell(f"%%port --fix --quiet --in-process -b {BACKENDS}\n{body}")
    assert result.error_in_exec is None and result.error_before_exec is None
    rewrite = port_shell.user_ns["_port"].entry.rewrite
    assert rewrite.status == "verified", (rewrite.reason, [s.reason for s in rewrite.sites])
    assert set(rewrite.verified_on) >= {"numpy", "jax", "strict"}, rewrite.verified_on
    for line in expected:
        assert line in rewrite.source, rewrite.source
    # the rewrite, run on the cell's inputs, computes what the cell computed
    ported = {k: v for k, v in port_shell.user_ns.items() if not k.startswith("_")}
    ported = {k: v for k, v in ported.items() if k not in names}
    exec(rewrite.source, ported)
    for name in names:
        np.testing.assert_allclose(
            _values(ported[name]), _values(port_shell.user_ns[name]), rtol=1e-6, err_msg=name
        )


def test_masked_fill_in_place_writes_into_the_tensor_its_views_see(port_shell):
    """``masked_fill_`` had no table entry ("the table has no rewrite"): its rewrite writes
    into the tensor, so a view taken before sees the fill as it did."""
    pytest.importorskip("torch")
    port_shell.run_cell(TORCH_SETUP + "att = q.clone()\nview = att[0]\n")
    body = "att.masked_fill_(k > 0, -1.0)\ns = float(view.sum())\n"
    result = port_shell.run_cell(f"%%port --fix --quiet --in-process -b numpy,strict\n{body}")
    assert result.error_in_exec is None
    rewrite = port_shell.user_ns["_port"].entry.rewrite
    assert rewrite.status == "verified", (rewrite.reason, [s.reason for s in rewrite.sites])
    assert (
        "att[...] = xp.where(k > 0, xp.asarray(-1.0, dtype=att.dtype, device=att.device), att)\n"
        in rewrite.source
    ), rewrite.source
    torch = pytest.importorskip("torch")
    att = torch.linspace(-2, 2, 24).reshape(2, 3, 4)
    ported = {"k": port_shell.user_ns["k"], "att": att, "view": att[0]}
    exec(rewrite.source, ported)
    assert ported["att"] is att and ported["s"] == port_shell.user_ns["s"]
