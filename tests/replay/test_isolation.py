"""Nothing a replay does reaches the person's session: each reproducer of issue 8 as a test
(adv_01-10, adv_25, adv_26, nb_01, nb_02, nb_05, nb_06, nb_14), on real worker kernels.

Every test runs the same cells plainly and through ``%%port``, and checks the person's
namespace (names, identities, values) and the next draws of their generators."""

from __future__ import annotations

import pytest

from tests.replay.isolation import replays, run, same_as_plain, shell

pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("array_api_strict")

pytestmark = pytest.mark.slow
ALL = "-b numpy,torch,jax,strict --quiet"


@pytest.fixture(scope="module")
def ip():
    return shell()


def test_object_attribute_array_changed_once(ip):  # adv_01
    setup = (
        "import numpy as np\nfrom dataclasses import dataclass\n@dataclass\nclass P:\n"
        "    w: object\np = P(np.zeros(3))"
    )
    port = same_as_plain(ip, setup, "p.w += 1", ALL, "p.w.tolist()")
    assert ip.user_ns["p"].w.tolist() == [1.0, 1.0, 1.0]
    assert {r.status for r in replays(port).values()} <= {"ok", "error"}


def test_method_of_the_persons_object_runs_once(ip):  # adv_02
    setup = (
        "import numpy as np\nclass M:\n    def __init__(self):\n        self.w = np.zeros(2)\n"
        "        self.steps = 0\n    def step(self):\n        self.w += 1\n        self.steps += 1\nm = M()"
    )
    same_as_plain(ip, setup, "m.step()", ALL, "(m.steps, m.w.tolist())")
    assert ip.user_ns["m"].steps == 1


def test_optimizer_step_runs_once(ip):  # adv_03
    setup = (
        "import torch\ntorch.manual_seed(0)\nlin = torch.nn.Linear(3, 1)\n"
        "opt = torch.optim.SGD(lin.parameters(), lr=0.1)\nX = torch.randn(4, 3)"
    )
    cell = "opt.zero_grad()\nl = lin(X).pow(2).mean()\nl.backward()\nopt.step()"
    port = same_as_plain(
        ip,
        setup,
        cell,
        "-b torch,numpy --quiet",
        "(lin.weight.tolist(), torch.rand(2).tolist())",
        assigned=("l",),
    )
    torch_replay = replays(port)["torch"]
    assert torch_replay.status == "ok", torch_replay.error
    assert {o.name: o.within_tolerance is not False for o in torch_replay.outputs} == {
        "l": True,
        "_": True,
    }


def test_random_generators_are_not_advanced(ip):  # adv_04, nb_02
    setup = "import numpy as np, torch, random\nrng = np.random.default_rng(0)\ntorch.manual_seed(0)\nnp.random.seed(1)\nrandom.seed(2)"
    cell = "a = rng.random(3)\nt = torch.randn(2)\nb = np.random.rand(2)\nc = random.random()"
    probe = "(rng.random(3).tolist(), torch.randn(2).tolist(), np.random.rand(2).tolist(), random.random())"
    port = same_as_plain(ip, setup, cell, "-b numpy,torch,strict --quiet", probe)
    numpy_replay = replays(port)["numpy"]
    assert numpy_replay.status == "ok"
    # the replay draws what the original drew: no false mismatch, even on NumPy itself
    assert {o.name: o.within_tolerance for o in numpy_replay.outputs} == {
        "a": True,
        "t": True,
        "b": True,
        "c": True,
    }


def test_file_append_is_not_repeated(ip, person_folder):  # adv_05
    path = person_folder / "log.txt"
    setup = f"path = {str(path)!r}"
    cell = "with open(path, 'a') as f:\n    f.write('line\\n')"
    path.write_text("")
    ip.reset(new_session=False)
    run(ip, setup)
    run(ip, f"%%port {ALL}\n{cell}")
    assert path.read_text().count("line") == 1
    for replay in replays(ip.user_ns["_port"]).values():
        assert replay.status == "error"
        assert replay.error.message == (
            f"replay tried to write {path}; porter does not repeat side effects outside the replay"
        )
    # reading files is allowed
    run(ip, "%%port -b numpy --quiet\nwith open(path) as f:\n    n = f.read().count('line')")
    assert replays(ip.user_ns["_port"])["numpy"].status == "ok"


def test_iterators_travel_as_state_and_generators_are_named(ip):  # adv_06
    setup = "import itertools\nit = iter(range(100))\nc = itertools.count()"
    same_as_plain(ip, setup, "first = next(it)\nk = next(c)", ALL, "(next(it), next(c))")
    port = same_as_plain(ip, "g = (i for i in range(9))", "h = next(g)", ALL, "next(g)")
    for replay in replays(port).values():
        assert replay.status == "skipped"
        assert "'g'" in replay.reason and "generator" in replay.reason


def test_global_state_of_the_process_is_untouched(ip):  # adv_07
    setup = (
        "import os, sys\nclass K:\n    count = 0\nos.environ['PORTER_T'] = '0'\nn0 = len(sys.path)\n"
        "L = []\napp = L.append\ndef f(x, acc=[]):\n    acc.append(x)\n    return len(acc)"
    )
    cell = (
        "K.count += 1\nos.environ['PORTER_T'] = str(int(os.environ['PORTER_T']) + 1)\n"
        "sys.path.append('extra-path')\napp(1)\nn = f(1)"
    )
    probe = "(K.count, os.environ['PORTER_T'], len(sys.path) - n0, len(L), f(2))"
    try:
        same_as_plain(ip, setup, cell, ALL, probe)
    finally:
        import sys

        while "extra-path" in sys.path:
            sys.path.remove("extra-path")


def test_deeply_nested_array_is_changed_once(ip):  # adv_08
    setup = "import numpy as np\nD = [[[[[np.zeros(2)]]]]]"
    port = same_as_plain(ip, setup, "D[0][0][0][0][0] += 1", ALL, "D[0][0][0][0][0].tolist()")
    assert replays(port)["torch"].status == "ok"


def test_writes_the_analysis_cannot_see(ip):  # adv_09, adv_25
    setup = (
        "import numpy as np, functools, operator, contextlib\na = np.zeros(2)\n"
        "bump = functools.partial(np.add, out=a)\narrs = [np.zeros(2)]\n"
        "b, c, e, f = (np.zeros(2) for _ in range(4))\nclass Op:\n    def apply(self, x):\n"
        "        x += 1\nop = Op()\ninc = c.__iadd__\n@contextlib.contextmanager\n"
        "def bumped(x):\n    x += 1\n    yield x"
    )
    cell = (
        "bump(a, 1)\nlist(map(lambda v: v.__iadd__(1), arrs))\nop.apply(b)\nnp.add(e, 1, e)\n"
        "inc(1)\noperator.iadd(f, 1)\nwith bumped(f):\n    pass"
    )
    probe = "[v.tolist() for v in (a, arrs[0], b, c, e, f)]"
    same_as_plain(ip, setup, cell, ALL, probe)
    port = same_as_plain(
        ip,
        "import numpy as np\nq = np.zeros(2)\nm = memoryview(q)",
        "m[0] = m[0] + 1\nz = m[0]",
        "-b numpy --quiet",
        "q.tolist()",
    )
    assert replays(port)["numpy"].status == "ok"


@pytest.mark.parametrize(
    "line",
    ["%timeit -n1 -r1 f(values)", "%time y = f(values)", "%timeit -n1 -r1 values.sum()"],
)
def test_ipython_lines_stay_in_the_worker(ip, line):  # adv_10, nb_01, nb_01b, nb_01c
    setup = (
        "import numpy as np\ndef f(v):\n    out = np.empty(len(v))\n    for i in range(len(v)):\n"
        "        out[i] = 1.0 / v[i]\n    return out\nvalues = np.arange(1.0, 6.0)"
    )
    same_as_plain(
        ip,
        setup,
        line,
        "-b jax,strict --quiet",
        "(np.__name__, type(values).__module__, f.__globals__ is get_ipython().user_ns)",
    )


def test_timeit_in_process_leaves_nothing(ip):  # adv_10 with --in-process
    setup = "import numpy as np\na = np.arange(3.0)"
    run(ip, "")
    port = same_as_plain(
        ip,
        setup,
        "%timeit -n1 -r1 a.sum()\nz = 1",
        "-b strict --in-process --quiet",
        "(type(a).__module__, np.__name__)",
    )
    assert replays(port)["strict"].worker == "in-process"
    (warning,) = [w for w in port.warnings if "--in-process" in w]
    assert "cannot keep what they do" in warning and "\n" not in warning


def test_cell_magic_first_line(ip):  # adv_26
    setup = "import numpy as np\na = np.arange(3.0)\ncounter = 0"
    port = same_as_plain(
        ip,
        setup,
        "%%time\ncounter += 1\nb = a + 1",
        "-b numpy,torch --quiet",
        "counter",
        assigned=("counter",),
    )
    assert ip.user_ns["counter"] == 1
    for replay in replays(port).values():
        assert replay.status == "ok", (replay.error, replay.reason)
        assert all(o.within_tolerance is not False for o in replay.outputs), replay.outputs


def test_shell_commands_are_not_run_again(ip, tmp_path):
    marker = tmp_path / "ran"
    setup = f"marker = {str(marker)!r}\nopen(marker, 'w').close()"
    port = same_as_plain(
        ip, setup, f"!echo x >> {marker}\nz = 1", "-b numpy --quiet", "open(marker).read()"
    )
    numpy_replay = replays(port)["numpy"]
    assert numpy_replay.status == "ok"
    assert "did not run !echo" in numpy_replay.reason


def test_torch_code_on_numpy_is_not_exercised(ip):  # nb_05
    port = same_as_plain(
        ip,
        "import torch",
        "x = torch.Tensor([2.0]).double()\ny = torch.tanh(x * 3)",
        "-b numpy,strict,torch --quiet",
        "y.tolist()",
    )
    found = replays(port)
    assert found["numpy"].status == "not_exercised"
    assert found["strict"].status == "not_exercised"
    assert "never touched numpy" in found["numpy"].reason
    assert found["torch"].status == "ok"


def test_autograd_inputs(ip):  # nb_06
    setup = "import torch\nW = torch.ones(3, requires_grad=True)\nloss = (W * 2).sum()"
    cell = "loss.backward()\nW.data += -0.1 * W.grad"
    port = same_as_plain(ip, setup, cell, "-b torch --quiet", "(W.tolist(), W.grad.tolist())")
    torch_replay = replays(port)["torch"]
    # loss travels as its data (its graph cannot), so the backward pass of the replay
    # reaches no W: skipped, saying why, rather than compared
    assert torch_replay.status == "skipped", (torch_replay.error, torch_replay.reason)
    assert "backward pass reached" in torch_replay.reason
    assert "made by SumBackward0" in torch_replay.reason
    # a cell that builds its graph replays on torch with requires_grad and .grad kept
    setup = (
        "import torch\nW = torch.nn.Parameter(torch.ones(3))\nV = torch.ones(2, requires_grad=True)\n"
        "V.grad = torch.full((2,), 5.0)"
    )
    cell = (
        "loss = (W * 2).sum()\nloss.backward()\ng = W.grad.clone()\nh = V.grad * 1\n"
        "kind = isinstance(W, torch.nn.Parameter) and V.requires_grad"
    )
    port = same_as_plain(
        ip,
        setup,
        cell,
        "-b torch --quiet",
        "(W.grad.tolist(), V.grad.tolist())",
        assigned=("loss", "g", "h", "kind"),
    )
    torch_replay = replays(port)["torch"]
    assert torch_replay.status == "ok", torch_replay.error
    assert {o.name: o.within_tolerance for o in torch_replay.outputs} == {
        "loss": True,
        "g": True,
        "h": True,
        "kind": True,
    }


def test_plots_of_replays_are_discarded(ip):  # nb_14
    setup = (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nimport torch\n"
        "C = torch.randn(27, 2)\nplt.close('all')"
    )
    cell = "plt.figure(figsize=(4, 4))\nplt.scatter(C[:, 0], C[:, 1])\nn = 1"
    port = same_as_plain(
        ip, setup, cell, "-b numpy,jax,strict --quiet", "len(plt.get_fignums())", assigned=("n",)
    )
    run(ip, "plt.close('all')")
    assert any(
        "figure(s) of the replay discarded" in (r.reason or "") for r in replays(port).values()
    )


def test_arrays_in_slots_and_attributes_move_to_the_backend(ip):
    setup = (
        "import numpy as np\nfrom dataclasses import dataclass\nclass S:\n    __slots__ = ('w',)\n"
        "@dataclass(frozen=True)\nclass F:\n    v: object\ns = S()\ns.w = np.ones(2)\n"
        "f = F({'deep': [np.zeros(2)]})"
    )
    cell = "lib = type(s.w).__module__.split('.')[0]\ninner = type(f.v['deep'][0]).__module__.split('.')[0]\ny = s.w * 2"
    port = same_as_plain(
        ip, setup, cell, "-b numpy,torch --quiet", "(s.w.tolist(), type(f.v['deep'][0]).__name__)"
    )
    rows = {
        r: {o.name: o.within_tolerance for o in replay.outputs}
        for r, replay in replays(port).items()
    }
    assert rows["numpy"] == {"lib": True, "inner": True, "y": True}
    # on torch the arrays held in __slots__ and in a frozen dataclass's dict became tensors
    assert rows["torch"] == {"lib": False, "inner": False, "y": True}


def test_torch_generators_travel_as_their_state(ip):
    setup = "import torch\ng = torch.Generator().manual_seed(3)"
    port = same_as_plain(
        ip,
        setup,
        "u = torch.rand(2, generator=g)",
        "-b torch --quiet",
        "torch.rand(3, generator=g).tolist()",
    )
    torch_replay = replays(port)["torch"]
    assert torch_replay.status == "ok", (torch_replay.error, torch_replay.reason)
    assert {o.name: o.within_tolerance for o in torch_replay.outputs} == {"u": True}


def test_a_mapping_that_refuses_item_assignment_reaches_the_workers(ip):
    """A person's frozendict among a cell's inputs: every replay failed in preparation
    ("porter could not prepare the replay: frozendict.__setitem__() …")."""
    setup = (
        "import numpy as np\nclass frozendict(dict):\n    def __setitem__(self, key, value):\n"
        "        raise TypeError(f'frozendict.__setitem__() is not allowed: {key!r}')\n"
        "cfg = frozendict(n=3, w=np.arange(12.0))"
    )
    cell = "y = cfg['w'].reshape(cfg['n'], 4).sum(axis=1)"
    port = same_as_plain(ip, setup, cell, "-b numpy,torch --quiet", "y.tolist()", ("y",))
    found = replays(port)
    assert {b: (r.status, r.error) for b, r in found.items()} == {
        "numpy": ("ok", None),
        "torch": ("ok", None),
    }
    assert all(o.within_tolerance for r in found.values() for o in r.outputs)


def test_tensors_of_an_autograd_graph_travel_detached_and_record_gradients_there(ip):
    """issue 29: a cell reading a tensor made by an operation on a tensor that records
    gradients (makemore's ``logits``) was skipped ("is part of an autograd graph"). Its
    data travels; the worker's tensor records gradients and is made by an operation, so
    in-place updates and gradients within the cell behave as on the original."""
    setup = (
        "import torch\nW = torch.linspace(-1, 1, 6, requires_grad=True)\n"
        "logits = (W * 2).reshape(2, 3)\nlogits.retain_grad()\n"
        "logits.sum().backward(retain_graph=True)"
    )
    cell = (
        "probs = torch.softmax(logits, 1)\nstate = (logits.requires_grad, logits.is_leaf)\n"
        "seen = logits.grad * 1\nd = probs.detach().clone()\nd[0, 0] -= 1\n"
        "h = logits * 1\nh[0, 0] = 5.0\ng = torch.autograd.grad(h.sum(), logits)[0]"
    )
    port = same_as_plain(
        ip,
        setup,
        cell,
        "-b numpy,torch --quiet",
        "(logits.tolist(), W.grad.tolist())",
        assigned=("probs", "state", "seen", "d", "h", "g"),
    )
    found = replays(port)
    torch_replay = found["torch"]
    assert torch_replay.status == "ok", (torch_replay.error, torch_replay.reason)
    assert {o.name: o.within_tolerance for o in torch_replay.outputs} == dict.fromkeys(
        ("probs", "state", "seen", "d", "h", "g"), True
    )
    control = replays(port, "control")
    assert all(r.status == "ok" for r in control.values()), control
    # a portable cell over it replays on numpy too
    cell = (
        "from array_api_compat import array_namespace\nxp = array_namespace(logits)\n"
        "e = xp.exp(logits - xp.max(logits, axis=1, keepdims=True))\n"
        "p = e / xp.sum(e, axis=1, keepdims=True)"
    )
    port = same_as_plain(
        ip, setup, cell, "-b numpy,torch --quiet", "logits.tolist()", assigned=("xp", "e", "p")
    )
    found = replays(port)
    assert {b: r.status for b, r in found.items()} == {"numpy": "ok", "torch": "ok"}, {
        b: (r.error, r.reason) for b, r in found.items()
    }
    assert all(o.within_tolerance for r in found.values() for o in r.outputs if o.name == "p")
