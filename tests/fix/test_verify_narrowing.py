"""``%%port --fix`` narrowing a rewrite that does not verify whole (`FixRun._narrow`): each
site tried alone, the ones that verify kept together, and the one that does not left as
written with the reason its own round gave."""

from __future__ import annotations

import pytest

from tests.fix.test_chains import _has
from tests.fix.test_fix_idioms import _fix

SETUP = (
    "import torch\ni = torch.arange(1, 7)\nj = torch.full((6,), 4)\n"
    "X = torch.linspace(-1, 1, 6).reshape(2, 3)\n"
)
#: torch.div(..., rounding_mode='trunc') of integer tensors: the table's rewrite
#: (xp.trunc(xp.divide(...))) gives floats, so that site changes the result; the others verify
BODY = "q = torch.div(i, j, rounding_mode='trunc')\nb = X.sum(1)\nc = X.abs().mean()\n"


def test_the_sites_that_verify_alone_are_kept_together_and_the_other_says_why(port_shell):
    torch = pytest.importorskip("torch")
    rewrite = _fix(port_shell, SETUP, BODY, "--in-process -b numpy,strict")
    assert rewrite.status == "partial", rewrite.reason
    assert rewrite.reason.startswith("1 site(s) left as written"), rewrite.reason
    _has(
        rewrite.source,
        "q = torch.div(i, j, rounding_mode='trunc')\n",
        "b = xp.sum(X, axis=1)\n",
        "c = xp.mean(xp.abs(X))\n",
    )
    sites = {s.name: s for s in rewrite.sites}
    assert [s.applied for s in rewrite.sites] == [False, True, True, True]
    # the reason is the one its own round gave (tried alone), not the whole rewrite's
    assert sites["torch.div"].reason.startswith(
        "left out: alone, it changes the result on torch (q: dtype_changed"
    ), sites["torch.div"].reason
    assert all(s.reason is None for s in rewrite.sites if s.applied)
    # the call left as written is torch's own: the rest is verified where the cell runs
    assert rewrite.verified_on == ["torch"] and "not verified on numpy" in rewrite.reason
    ported: dict = {"i": torch.arange(1, 7), "j": torch.full((6,), 4), "torch": torch}
    ported["X"] = torch.linspace(-1, 1, 6).reshape(2, 3)
    exec(rewrite.source, ported)
    for name in ("q", "b", "c"):
        assert torch.equal(ported[name], port_shell.user_ns[name]), name


def test_xp_is_taken_from_an_array_there_before_the_loop_whose_body_binds_the_sites_array(
    port_shell,
):
    """makemore's training loop: the site tried alone (``emb.view``) reads ``emb``, which
    the loop's body binds; ``xp = array_namespace(emb)`` before the loop raised NameError
    (emb is not there yet, and a replay never sends it: it is the cell's output), so the
    site was left out as "does not run on torch". xp comes from an array there before."""
    torch = pytest.importorskip("torch")
    setup = "import torch\nC = torch.linspace(-1, 1, 12).reshape(4, 3)\n"
    body = "for k in range(3):\n    emb = C * k\n    h = emb.view(-1)\n"
    rewrite = _fix(port_shell, setup, body, "--in-process -b numpy,strict")
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.source.startswith(
        "from array_api_compat import array_namespace\n\nxp = array_namespace(C)\nfor k"
    ), rewrite.source
    assert "    h = xp.reshape(emb, (-1,))\n" in rewrite.source
    ported: dict = {"C": port_shell.user_ns["C"]}
    exec(rewrite.source, ported)
    assert torch.equal(ported["h"], port_shell.user_ns["h"])
