"""The reproducers of ../shared/repro/turn3/notebooks/ (issue 19) that no other test ran
as the person meets them: each a cell of a public notebook run under ``%%port`` in a real
IPython shell with porter loaded, replayed and verified in real worker kernels, and what
porter wrote run again plainly on the real library."""

from __future__ import annotations

import types

import numpy as np
import pytest

from tests.replay.isolation import run

pytestmark = pytest.mark.slow


def _entry(shell, setup: str, cell: str):
    assert run(shell, setup).success
    result = run(shell, cell)
    assert result.success, result.output
    return shell.user_ns["_port"].entry


def _plain(setup: str, source: str) -> dict:
    """``source`` run after ``setup`` in a fresh namespace, without porter."""
    namespace: dict = {}
    exec(setup, namespace)
    exec(source, namespace)
    return namespace


def test_add_at_suggestion_changes_result(port_shell):
    """add_at_suggestion_changes_result.py: ``np.add.at(x, i, 1)`` with repeated indices was
    told to become ``xpx.at(x, idx).add(value)``, which adds once per distinct index. The
    suggestion keeps NumPy's accumulation through the escape hatch, and says why."""
    entry = _entry(
        port_shell,
        "import numpy as np\ni = [2, 3, 3, 4, 4, 4]\n",
        "%%port --no-replay --quiet\nx = np.zeros(10)\nnp.add.at(x, i, 1)\n",
    )
    (call,) = [c for c in entry.calls if c.name == "numpy.add.at"]
    assert call.status == "non_standard" and "xpx.at" not in call.suggestion
    assert "repeated index" in call.message
    # the suggestion followed, with the escape hatch reaching the real library
    followed = {"xp": types.SimpleNamespace(backend=np), "x": np.zeros(10), "value": 1}
    followed["idx"] = np.asarray(port_shell.user_ns["i"])
    eval(call.suggestion, followed)
    assert followed["x"].tolist() == port_shell.user_ns["x"].tolist()
    assert port_shell.user_ns["x"][2:5].tolist() == [1.0, 2.0, 3.0]


def test_fix_reshape_tuple_unpacked(port_shell):
    """fix_reshape_tuple_unpacked.py: ``np.arange(3).reshape((3, 1))`` became
    ``xp.reshape(np.arange(3), 3, 1)`` and ``torch.stack((a, b), dim=0)`` lost its tuple;
    a shape or a tuple of arrays stays one argument, and the rewrite verifies."""
    setup = "import numpy as np\n"
    body = "a = np.arange(3).reshape((3, 1))\nb = np.arange(6).reshape((2, 3))\n"
    entry = _entry(port_shell, setup, "%%port --fix --quiet\n" + body)
    rewrite = entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert [s.replacement for s in rewrite.sites] == [
        "xp.reshape(np.arange(3), (3, 1))",
        "xp.reshape(np.arange(6), (2, 3))",
    ]
    assert [c.suggestion for c in entry.calls if c.status != "standard"] == [
        "xp.reshape(np.arange(3), (3, 1))",
        "xp.reshape(np.arange(6), (2, 3))",
    ]
    ported = _plain(setup, rewrite.source)
    for name in ("a", "b"):
        np.testing.assert_array_equal(ported[name], port_shell.user_ns[name])

    torch = pytest.importorskip("torch")
    setup = "import torch\ninputs = torch.ones(6, 3)\n"
    body = "batch = torch.stack((inputs, inputs), dim=0)\n"
    rewrite = _entry(port_shell, setup, "%%port --fix --quiet\n" + body).rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert [s.replacement for s in rewrite.sites] == ["xp.stack((inputs, inputs), axis=0)"]
    batch = _plain(setup, rewrite.source)["batch"]
    assert torch.equal(batch, port_shell.user_ns["batch"])


NORMSHOW = """from ipywidgets import interact
def normshow(x0):
  g = torch.Generator().manual_seed(2147483647+1)
  x = torch.randn(5, generator=g) * 5
  x[0] = x0
  mu = x.mean()
  sig = x.std()
  return float(mu), float(sig)
interact(normshow, x0=(-30, 30, 0.5));
"""


def test_fix_verified_rewrite_breaks_function(port_shell):
    """fix_verified_rewrite_breaks_function.py: makemore part 3's ``normshow``, called only
    through ``ipywidgets.interact`` (which swallows its errors), got ``xp =
    array_namespace(x)`` before ``x`` is bound and was called verified. What porter keeps
    of a rewrite runs when the function is called directly; what it cannot bind it leaves
    as written, saying why."""
    pytest.importorskip("torch")
    pytest.importorskip("ipywidgets")
    setup = "import torch\nimport matplotlib\nmatplotlib.use('Agg')\n"
    rewrite = _entry(port_shell, setup, "%%port --fix --quiet\n" + NORMSHOW).rewrite
    expected = port_shell.user_ns["normshow"](0.0)
    if rewrite.status in ("verified", "partial"):
        ported = _plain(setup, rewrite.source.replace("interact(normshow", "# interact(normshow"))
        assert ported["normshow"](0.0) == pytest.approx(expected)
    else:
        assert rewrite.source == NORMSHOW
    inside = [s for s in rewrite.sites if 3 <= s.line <= 8 and s.replacement is None]
    assert inside and all(s.reason for s in inside), rewrite.sites


GEN = """def gen(logits_fn, idx, n):
    for _ in range(n):
        logits = logits_fn(idx)[:, -1, :]
        probas = torch.softmax(logits, dim=-1)
        idx_next = torch.argmax(probas, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
out = gen(lambda i: torch.ones(i.shape[0], i.shape[1], 5), torch.zeros(1, 2, dtype=torch.int64), 3)
"""


def test_fix_xp_bound_before_its_array(port_shell):
    """fix_xp_bound_before_its_array.py: LLMs-from-scratch ch04's ``generate_text_simple``
    got ``xp = array_namespace(probas)`` as its first line (``probas`` is bound in the
    loop) and ``xp.concat(idx, idx_next, axis=1)``. ``xp`` comes from the parameter
    ``idx``; the ported function gives the original's tokens."""
    torch = pytest.importorskip("torch")
    setup = "import torch\n"
    rewrite = _entry(port_shell, setup, "%%port --fix --quiet\n" + GEN).rewrite
    assert rewrite.status in ("verified", "partial"), rewrite.reason
    assert "torch" in rewrite.verified_on
    assert "    xp = array_namespace(idx)\n    for _ in range(n):\n" in rewrite.source
    sites = {s.name: s for s in rewrite.sites}
    assert sites["torch.cat"].replacement == "xp.concat((idx, idx_next), axis=1)"
    assert sites["torch.cat"].applied
    out = _plain(setup, rewrite.source)["out"]
    assert torch.equal(out, port_shell.user_ns["out"])
