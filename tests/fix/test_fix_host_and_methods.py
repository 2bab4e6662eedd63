"""``%%port --fix`` on what makemore-style notebooks write beside the standard's calls
(issue 19): a tensor's ``.numpy()`` ported so that the ported cell runs on every backend,
and ``x.exp2()`` the method as ``np.exp2`` the function is."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fix.test_chains import _has
from tests.fix.test_fix_idioms import BACKENDS, _fix

TORCH = "import numpy as np\nimport torch\nX = torch.linspace(-1, 1, 6).reshape(2, 3)\n"


def test_numpy_of_a_tensor_is_verified_on_numpy_jax_and_strict(port_shell):
    """makemore's ``host = small.numpy()`` with ``np`` imported by an earlier cell: the
    rewrite was ``np.from_dlpack(x, device='cpu')``, and a replay, which binds ``np`` to
    its library's namespace, failed on jax and array-api-strict ('cpu' is no device
    there). Without ``device=`` the host array stays where it is on every backend."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    pytest.importorskip("array_api_strict")
    body = "s = X.sum(0)\nhost = s.numpy()\n"
    rewrite = _fix(port_shell, TORCH, body, f"--in-process -b {BACKENDS}")
    assert rewrite.status == "verified", rewrite.reason
    assert rewrite.verified_on == ["torch", "numpy", "jax", "strict"]
    _has(rewrite.source, "s = xp.sum(X, axis=0)\n", "host = np.from_dlpack(s)\n")
    ported: dict = {"X": torch.linspace(-1, 1, 6).reshape(2, 3), "np": np}
    exec(rewrite.source, ported)
    assert isinstance(ported["host"], np.ndarray)
    np.testing.assert_array_equal(ported["host"], port_shell.user_ns["host"])


def test_exp2_the_method_is_two_to_the_power_of_x(port_shell):
    """``x.exp2()`` on a float tensor was left as written (only ``np.exp2`` the function
    had a rewrite); on an integer tensor it stays, with the reason and the cast to write."""
    torch = pytest.importorskip("torch")
    body = "y = X.exp2()\n"
    rewrite = _fix(port_shell, TORCH, body, f"--in-process -b {BACKENDS}")
    assert rewrite.status == "verified", rewrite.reason
    _has(rewrite.source, "y = 2.0 ** X\n")
    ported: dict = {"X": torch.linspace(-1, 1, 6).reshape(2, 3)}
    exec(rewrite.source, ported)
    assert torch.equal(ported["y"], port_shell.user_ns["y"])
    refused = _fix(port_shell, "i = torch.arange(4)\n", "z = i.exp2()\n", "--in-process -b numpy")
    assert refused.status == "refused" and "y = 2.0" not in refused.source
    (site,) = refused.sites
    assert "2.0 ** xp.astype(x, xp.float64)" in site.reason, site.reason
