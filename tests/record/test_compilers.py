"""Compiled and transformed code computes and raises what it does without porter
(compilers.py): each case runs in a real shell with porter recording (``%%port``, ``%port
on``, the definition and the call in one recorded cell or in two) and as plain Python,
and the two must agree, values and exceptions alike."""

from __future__ import annotations

import json
import linecache
import uuid

import numpy as np
import pytest

PORT = "%%port --no-replay\n"


def _plain(cells: list[str]) -> dict:
    """The cells run as plain Python, one after another, in a fresh namespace."""
    namespace: dict = {"__name__": "__main__"}
    outcome: dict = {"error": None}
    for index, source in enumerate(cells):
        source = source.removeprefix(PORT)
        filename = f"<plain-{uuid.uuid4().hex}-{index}>"  # its source known, as IPython's
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            exec(compile(source, filename, "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 (what the comparison is about)
            outcome["error"] = exc
            break
    outcome["y"] = namespace.get("y")
    return outcome


def _recorded(shell, cells: list[str]) -> dict:
    """The cells run in ``shell`` (porter loaded) as written there (``%%port`` cells,
    cells under ``%port on``); the calls of the last recorded cell."""
    outcome: dict = {"error": None, "calls": []}
    for source in cells:
        shell.user_ns.pop("_port", None)
        result = shell.run_cell(source)
        assert result.error_before_exec is None, result.error_before_exec
        port = shell.user_ns.get("_port")
        if port is not None:
            outcome["calls"] = json.loads(port.to_json())["calls"]
        if result.error_in_exec is not None:
            outcome["error"] = result.error_in_exec
            break
    outcome["y"] = shell.user_ns.get("y")
    return outcome


def _values(y) -> list:
    items = y if isinstance(y, tuple) else (y,)
    return [np.asarray(v.detach() if hasattr(v, "detach") else v) for v in items]


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else ""


def assert_same(recorded: dict, plain: dict) -> None:
    """What the person gets under porter is what plain Python gave."""
    if plain["error"] is not None:
        assert recorded["error"] is not None, f"plain raised {plain['error']!r}, recorded did not"
        assert type(recorded["error"]) is type(plain["error"])
        assert _first_line(recorded["error"]) == _first_line(plain["error"])
        return
    assert recorded["error"] is None, repr(recorded["error"])
    got, want = _values(recorded["y"]), _values(plain["y"])
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def compiled_calls(calls: list[dict], prefix: str) -> list[dict]:
    """The records of the calls of compiled callables named ``prefix(...)``: each one
    call, with the note that the calls inside it are not recorded."""
    found = [c for c in calls if c["name"].startswith(prefix + "(")]
    assert found, [c["name"] for c in calls]
    for call in found:
        assert call["kind"] == "transformation" and call["status"] == "outside_namespace"
        assert "does not record the calls inside it" in call["message"]
    return found


# -- torch.compile (dynamo) ------------------------------------------------------------

TORCH = "import torch\nx = torch.arange(12.0).reshape(3, 4)\n"
G = "def g(x):\n    return torch.sin(x).sum(1)\n"
COMPILE = "cg = torch.compile(g, backend='eager')\n"
RAISES = (
    "def g(x):\n    if x.shape[0] > 2:\n        raise ValueError('too many rows')\n"
    "    return torch.sin(x)\n"
)

TORCH_COMPILE_CASES = {
    "one cell": [TORCH, PORT + G + COMPILE + "y = cg(x)\n"],
    "defined in one recorded cell, called in the next": [
        TORCH,
        PORT + G + COMPILE,
        PORT + "y = cg(x)\n",
    ],
    "called twice across cells": [
        TORCH,
        PORT + G + COMPILE + "y = cg(x)\n",
        PORT + "y = cg(x + 1)\n",
    ],
    "defined in a plain cell, called in a recorded one": [
        TORCH + G + COMPILE,
        PORT + "y = cg(x)\n",
    ],
    "a plain cell's helper inside": [
        TORCH + "def h(v):\n    return torch.cos(v) * 2\n",
        PORT + "def g(x):\n    return h(x).sum(1)\n" + COMPILE + "y = (h(x), cg(x), h(x))\n",
    ],
    "decorator": [TORCH, PORT + "@torch.compile(backend='eager')\n" + G + "y = g(x)\n"],
    "a helper of an earlier recorded cell inside": [
        TORCH,
        PORT + "def h(v):\n    return torch.cos(v) * 2\n",
        PORT + "def g(x):\n    return h(x).sum(1)\n" + COMPILE + "y = cg(x)\n",
        PORT + "y = (cg(x), h(x))\n",
    ],
    "a module": [
        TORCH,
        PORT
        + "class M(torch.nn.Module):\n    def forward(self, v):\n        return torch.sin(v).sum(0)\n"
        + "m = torch.compile(M(), backend='eager')\ny = m(x)\n",
    ],
    "an exception inside": [TORCH, PORT + RAISES + COMPILE + "y = cg(x)\n"],
    "an exception inside, called in a later cell": [
        TORCH,
        PORT + RAISES + COMPILE,
        PORT + "y = cg(x)\n",
    ],
}


def test_torch_compile_under_port_on(port_shell):
    pytest.importorskip("torch")
    cells = [TORCH, "%port on", G + COMPILE, "y = cg(x)\n", "%port off"]
    recorded = _recorded(port_shell, cells)
    assert_same(recorded, _plain([TORCH, G + COMPILE, "y = cg(x)\n"]))
    compiled_calls(recorded["calls"], "torch.compile")


def test_the_function_keeps_recording_its_calls_around_the_compiled_call(port_shell):
    """Recording steps aside for the compiled call only: the same function called as
    itself in the same cell, before and after, records its calls; after the cell it has
    its code as written."""
    pytest.importorskip("torch")
    cells = [TORCH, PORT + G + COMPILE + "a = g(x)\ny = cg(x)\nb = g(x)\n"]
    recorded = _recorded(port_shell, cells)
    assert_same(recorded, _plain(cells))
    sums = [c for c in recorded["calls"] if c["name"] == "Tensor.sum"]
    assert sums and sums[0]["count"] == 2  # a and b, not the compiled call
    g = port_shell.user_ns["g"]
    assert not any(name.startswith("__porter") for name in g.__code__.co_names)


# -- TorchScript -----------------------------------------------------------------------

SCRIPT_RAISES = (
    "def s(x: torch.Tensor) -> torch.Tensor:\n    if x.shape[0] > 2:\n"
    "        raise ValueError('too many rows')\n    return torch.sin(x)\n"
)
TORCHSCRIPT_CASES = {
    "script": [TORCH, PORT + G + "ts = torch.jit.script(g)\ny = ts(x)\n"],
    "script, called in a later cell": [
        TORCH,
        PORT + G + "ts = torch.jit.script(g)\n",
        PORT + "y = ts(x)\n",
    ],
    "trace": [TORCH, PORT + G + "tt = torch.jit.trace(g, (x,))\ny = tt(x + 1)\n"],
    "trace of a function of an earlier cell": [
        TORCH,
        PORT + G,
        PORT + "tt = torch.jit.trace(g, (x,))\ny = tt(x)\n",
    ],
    "an exception inside": [TORCH, PORT + SCRIPT_RAISES + "ts = torch.jit.script(s)\ny = ts(x)\n"],
}


# -- JAX transformations ---------------------------------------------------------------

JAX = (
    "import jax\nimport jax.numpy as jnp\nv = jnp.arange(4.0)\nm = jnp.arange(12.0).reshape(3, 4)\n"
)
F = "def f(u):\n    return jnp.sin(u).sum()\n"
JAX_CASES = {
    "jit, vmap and grad": [JAX, PORT + F + "y = (jax.jit(f)(v), jax.vmap(f)(m), jax.grad(f)(v))\n"],
    "defined in one recorded cell, transformed in the next": [
        JAX,
        PORT + F + "jf = jax.jit(f)\n",
        PORT + "y = (jf(v), jax.vmap(f)(m), jax.grad(f)(v))\n",
    ],
    "an exception inside": [
        JAX,
        PORT + "def bad(u):\n    return u + jnp.ones(5)\n" + "y = jax.jit(bad)(v)\n",
    ],
}


@pytest.mark.parametrize("case", list(JAX_CASES))
def test_jax_transformations_compute_and_raise_as_without_porter(port_shell, case):
    pytest.importorskip("jax")
    cells = JAX_CASES[case]
    recorded = _recorded(port_shell, cells)
    assert_same(recorded, _plain(cells))
    if recorded["error"] is None:  # jax traces through the hooks: the calls inside are traced
        sins = [c for c in recorded["calls"] if c["name"] == "jax.numpy.sin"]
        assert sins and any(c["device_out"] == "traced" for c in sins)


# -- numba -----------------------------------------------------------------------------

NUMBA = "import numba\nimport numpy as np\na = np.arange(6.0)\n"
NB = "@numba.njit\ndef nb(u):\n    return np.sin(u).sum()\n"
NUMBA_CASES = {
    "one cell": [NUMBA, PORT + NB + "y = nb(a)\n"],
    "defined in a plain cell, first called in a recorded one": [NUMBA + NB, PORT + "y = nb(a)\n"],
    "defined in one recorded cell, first called in the next": [
        NUMBA,
        PORT + NB,
        PORT + "y = nb(a)\n",
    ],
    "calling a compiled function of an earlier cell": [
        NUMBA,
        PORT + NB,
        PORT + "@numba.njit\ndef twice(u):\n    return 2 * nb(u)\ny = (twice(a), nb(a))\n",
    ],
    "compiled when the signature is given": [
        NUMBA,
        PORT + "def sq(u):\n    return u * u\n",
        PORT + "fast = numba.njit('float64(float64)')(sq)\ny = fast(3.0)\n",
    ],
    "an exception inside": [
        NUMBA,
        PORT
        + "@numba.njit\ndef neg(u):\n    if u.sum() > 0:\n        raise ValueError('positive')\n"
        "    return u\ny = neg(a)\n",
    ],
}


#: every case of compiled code: (the library it needs, its cells, how its call is named)
COMPILED_CASES = {
    **{
        f"torch.compile, {k}": ("torch", c, "torch.compile") for k, c in TORCH_COMPILE_CASES.items()
    },
    **{f"TorchScript, {k}": ("torch", c, "torch.jit") for k, c in TORCHSCRIPT_CASES.items()},
    **{f"numba, {k}": ("numba", c, "numba.jit") for k, c in NUMBA_CASES.items()},
}


@pytest.mark.parametrize("case", list(COMPILED_CASES))
def test_compiled_code_computes_and_raises_as_without_porter(port_shell, case):
    """The compiled call is one call with its note; values and exceptions as plain."""
    library, cells, named = COMPILED_CASES[case]
    pytest.importorskip(library)
    recorded = _recorded(port_shell, cells)
    assert_same(recorded, _plain(cells))
    if recorded["error"] is None:
        compiled_calls(recorded["calls"], named)


def test_a_replay_of_a_compiled_function_of_an_earlier_cell_runs_its_plain_code(port_shell):
    """The function arrives in the worker by value with its rewritten code (armed for the
    cell); the worker gets its plain code too, which the compiler traces there, so the
    replay on torch runs and agrees (it raised ``KeyError: CallSite``)."""
    pytest.importorskip("torch")
    cells = [TORCH, PORT + G, "%%port -b torch --quiet\n" + COMPILE + "y = cg(x)\n"]
    recorded = _recorded(port_shell, cells)
    assert_same(recorded, _plain([TORCH, G, COMPILE + "y = cg(x)\n"]))
    replays = json.loads(port_shell.user_ns["_port"].to_json())["replays"]
    torch_replays = [r for r in replays if r["backend"] == "torch"]
    assert torch_replays and all(r["status"] == "ok" for r in torch_replays), torch_replays
    assert all(o["within_tolerance"] for r in torch_replays for o in r["outputs"])
