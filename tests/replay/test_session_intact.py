"""The person's objects, classes and functions are as a plain run leaves them after
``%%port`` cells with replays (issue 20: ``hooks_vanish_after_replay.py``,
``instrumented_function_left_in_session.py``, ``replay_reason_internal_buffererror.py``
of ../shared/repro/turn3/notebooks/), on real worker kernels."""

from __future__ import annotations

import os

import cloudpickle
import pytest

from porter_ext.replay import shared_blocks
from tests.replay.isolation import replays, run

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.slow

GELU = """class GELU(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.scale * 0.5 * x * (1 + torch.tanh(x))

    @staticmethod
    def shifted(v):
        return v + 1
"""

SA = """class SA(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.rand(3, 2))
    def forward(self, x):
        return x @ self.W
torch.manual_seed(123)
"""


def _plain_twin(ip, source: str, name: str) -> type:
    """The class ``name`` of ``source`` defined by a plain cell, under another name."""
    result = run(ip, source.replace(f"class {name}(", f"class Plain{name}("))
    assert result.success, result.output
    return ip.user_ns[f"Plain{name}"]


def _same_code(ported: type, plain: type, names: tuple[str, ...]) -> None:
    for name in names:
        a = ported.__dict__[name]
        b = plain.__dict__[name]
        a, b = getattr(a, "__func__", a).__code__, getattr(b, "__func__", b).__code__
        assert a.co_names == b.co_names, name
        assert a.co_code == b.co_code and a.co_consts == b.co_consts, name


def test_a_replay_leaves_the_persons_class_as_it_is(port_shell):
    # hooks_vanish_after_replay.py: the replay's outputs (an instance of the person's
    # class, sent back by value) were read back into the class itself
    ip = port_shell
    run(ip, "import torch\nimport torch.nn as nn\n")
    assert run(ip, f"%%port -b numpy --quiet\n{GELU}").success
    klass = ip.user_ns["GELU"]
    before = dict(vars(klass))
    result = run(
        ip, "%%port -b numpy --quiet\ngelu = GELU()\ny = gelu(torch.linspace(-3, 3, 10))\n"
    )
    assert result.success, result.output
    [replay] = replays(ip.user_ns["_port"]).values()
    assert replay.status != "skipped" and "read back" not in str(replay.reason), replay.reason
    assert ip.user_ns["GELU"] is klass
    assert {k: v for k, v in vars(klass).items() if k in before} == before
    assert set(vars(klass)) == set(before)
    assert klass.forward.__code__.co_filename == before["forward"].__code__.co_filename
    plain = run(ip, "z = GELU()(torch.ones(3))\n")
    assert plain.success, plain.output


def test_functions_a_port_cell_defines_keep_the_code_as_written(port_shell):
    # instrumented_function_left_in_session.py
    ip = port_shell
    run(ip, "import numpy as np\nimport functools\n")
    source = (
        "def f(x):\n    return np.sum(x * x, axis=0)\n"
        "g = lambda v: np.exp(v) + 1\n"
        "@functools.lru_cache\ndef h(n):\n    return np.ones(n).sum()\n"
        "class K:\n    def m(self, x):\n        return np.abs(x) - 1\n"
        "    @property\n    def p(self):\n        return np.zeros(2) + 1\n"
    )
    plain = run(ip, source)
    assert plain.success
    twins = {n: ip.user_ns[n] for n in ("f", "g", "h", "K")}
    result = run(ip, f"%%port --no-replay --quiet\n{source}y = f(np.ones(3)) + g(1.0) + h(2)\n")
    assert result.success, result.output
    # the calls inside them were recorded while the cell ran
    assert {"numpy.sum", "numpy.exp", "numpy.ones"} <= set(ip.user_ns["_port"].calls["name"])
    ns = ip.user_ns
    codes = {
        "f": (ns["f"].__code__, twins["f"].__code__),
        "g": (ns["g"].__code__, twins["g"].__code__),
        "h": (ns["h"].__wrapped__.__code__, twins["h"].__wrapped__.__code__),
        "K.m": (ns["K"].m.__code__, twins["K"].m.__code__),
        "K.p": (ns["K"].p.fget.__code__, twins["K"].p.fget.__code__),
    }
    for name, (ported, written) in codes.items():
        assert ported.co_names == written.co_names, name
        assert ported.co_code == written.co_code, name
        assert ported.co_filename == ns["f"].__code__.co_filename, name
    # sent by value (joblib, dask), it takes nothing of porter along
    assert b"porter" not in cloudpickle.dumps(ns["f"])
    assert b"porter" not in cloudpickle.dumps(ns["K"])


def test_later_port_cells_still_record_the_calls_inside_them(port_shell):
    ip = port_shell
    run(ip, "%%port --no-replay --quiet\nimport numpy as np\ndef f(x):\n    return np.exp(x)\n")
    plain_names = ip.user_ns["f"].__code__.co_names
    result = run(ip, "%%port -b numpy --quiet\ny = f(np.ones(2))\n")
    assert result.success, result.output
    port = ip.user_ns["_port"]
    [inside] = [c for c in port.entry.calls if c.name == "numpy.exp"]
    assert inside.origin is not None and inside.origin.line == 3
    assert "numpy.exp" in {c.name for c in replays(port)["numpy"].calls}
    assert ip.user_ns["f"].__code__.co_names == plain_names == ("np", "exp")
    # a plain cell calling it records nothing, and its traceback is the person's code
    failing = run(ip, "f('text')\n")
    assert isinstance(failing.error_in_exec, TypeError)
    assert "__porter" not in failing.output


def _our_blocks() -> set[str]:
    """Shared-memory blocks of this process's session (in its folder)."""
    folder = shared_blocks.directory()
    return set(os.listdir(folder)) if os.path.isdir(folder) else set()


def test_torch_outputs_of_a_replay_are_read_back(port_shell):
    # replay_reason_internal_buffererror.py: a Parameter read back failed, and closing
    # the block it viewed raised BufferError, given to the person as the reason
    from porter_ext.replay import shared_blocks

    ip = port_shell
    run(ip, "import torch\nimport torch.nn as nn\n")
    run(ip, "inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]])\n")
    left = _our_blocks() - set(shared_blocks._mine)
    result = run(ip, f"%%port -b numpy --quiet\n{SA}sa = SA()\nprint(sa(inputs))\n")
    assert result.success, result.output
    numpy_replay = replays(ip.user_ns["_port"])["numpy"]
    assert numpy_replay.status == "error"
    assert (numpy_replay.error.type, numpy_replay.error.line) == ("TypeError", 6)
    assert numpy_replay.reason is None or "exported pointers" not in numpy_replay.reason

    result = run(
        ip,
        f"%%port -b torch --quiet\n{SA}n_rows = inputs.shape[0]\nsa2 = SA()\nout2 = sa2(inputs)\n",
    )
    assert result.success, result.output
    entry = ip.user_ns["_port"].entry
    for replay in entry.replays:
        assert replay.status == "ok" and replay.reason is None, (replay.role, replay.reason)
        outputs = {o.name: o for o in replay.outputs}
        assert outputs["n_rows"].deterministic and outputs["out2"].deterministic, replay.role
        assert outputs["out2"].within_tolerance, replay.role
    assert _our_blocks() - set(shared_blocks._mine) <= left


def test_a_module_defined_bound_replayed_then_called_plainly(port_shell):
    # the notebooks' shape (LLMs-from-scratch ch04): a module class in one cell, bound
    # and replayed in another, called in a plain cell after
    ip = port_shell
    run(ip, "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n")
    assert run(ip, f"%%port -b numpy,torch --quiet\n{GELU}").success
    klass = ip.user_ns["GELU"]
    result = run(
        ip, "%%port -b numpy,torch --quiet\ngelu = GELU()\ny = gelu(torch.linspace(-3, 3, 5))\n"
    )
    assert result.success, result.output
    statuses = {r.backend: r.status for r in replays(ip.user_ns["_port"]).values()}
    assert statuses["torch"] == "ok", statuses
    assert "torch.tanh" in set(ip.user_ns["_port"].calls["name"])  # recorded inside forward
    plain = run(ip, "z = GELU()(torch.ones(3))\nw = gelu.shifted(1)\n")
    assert plain.success, plain.output
    assert ip.user_ns["GELU"] is klass and ip.user_ns["w"] == 2
    assert torch.allclose(
        ip.user_ns["z"], torch.full((3,), 0.5 * (1 + torch.tanh(torch.ones(1)).item()))
    )
    _same_code(klass, _plain_twin(ip, GELU, "GELU"), ("__init__", "forward", "shifted"))


def test_port_on_leaves_the_functions_of_its_cells_as_written(port_shell):
    ip = port_shell
    run(ip, "import numpy as np\n")
    run(ip, "%port on")
    try:
        assert run(ip, "def f(x):\n    return np.exp(x)\ny = f(np.ones(2))\n").success
        assert ip.user_ns["f"].__code__.co_names == ("np", "exp")
        assert run(ip, "z = f(np.ones(2))\n").success
        assert "numpy.exp" in set(ip.user_ns["_port"].calls["name"])
    finally:
        run(ip, "%port off")
    assert ip.user_ns["f"].__code__.co_names == ("np", "exp")


def test_a_late_answer_still_frees_its_block(port_shell, monkeypatch):
    # CI under load: an answer that came after porter stopped waiting for it (or an
    # earlier request's) was skipped unread, and its block of outputs stayed in
    # /dev/shm for the rest of the session, which alone unlinks it
    import dataclasses
    import time

    from porter_ext.replay import capture, shared_blocks, transport
    from porter_ext.replay.worker_kernel import Worker

    ip = port_shell
    run(ip, "import numpy as np\nbig = np.ones(50_000)\n")
    sent = []
    real_send = Worker.send

    def send(worker, request, parcel):
        sent.append((worker, request, parcel))
        return real_send(worker, request, parcel)

    monkeypatch.setattr(Worker, "send", send)
    result = run(ip, "%%port -b numpy --quiet\ntwice = big * 2\n")
    assert result.success, result.output
    monkeypatch.undo()
    worker, request, _parcel = next(s for s in sent if s[1].role == "target")
    left = _our_blocks() - set(shared_blocks._mine)
    # the same replay again, whose answer nobody waits for (its inputs anew: the first
    # parcel's block went back to the pool)
    inputs = transport.pack(capture.cell_inputs(request.io, ip.user_ns), local=True)
    again = dataclasses.replace(request, id="late-answer", inputs=inputs.header())
    with worker.lock:
        worker.send(again, inputs)
    deadline = time.monotonic() + 120
    while _our_blocks() - set(shared_blocks._mine) <= left and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _our_blocks() - set(shared_blocks._mine) > left, "the late answer never came"
    result = run(ip, "%%port -b numpy --quiet\nthrice = big * 3\n")
    assert result.success, result.output
    assert _our_blocks() - set(shared_blocks._mine) <= left
