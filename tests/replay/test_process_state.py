"""A replay starts from the person's process as it is when the cell starts (issue 20,
``attacks/19-21``): variables set, import path entries added and library settings changed
after the worker started are taken, and what an earlier replay changed is undone."""

from __future__ import annotations

import os

import pytest

from tests.replay.isolation import replays, run, shell

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ip():
    ip = shell()
    run(ip, "import numpy as np, os, sys\nx = np.arange(4.0)")
    run(ip, "%%port -b numpy --quiet\ny0 = x + 1")  # the worker starts with today's state
    return ip


def _numpy_replay(ip, body: str, spec: str = "numpy"):
    result = run(ip, f"%%port -b {spec} --quiet\n{body}")
    assert result.error_in_exec is None, result.output
    replay = replays(ip.user_ns["_port"])[spec]
    assert replay.status == "ok", (replay.error, replay.reason)
    return replay


def test_a_variable_set_after_the_worker_started(ip):
    run(ip, "os.environ['PORTER_TEST_SCALE'] = '3'")
    try:
        replay = _numpy_replay(ip, "y = x * float(os.environ.get('PORTER_TEST_SCALE', '1'))")
        assert {o.name: o.within_tolerance for o in replay.outputs} == {"y": True}
    finally:
        run(ip, "del os.environ['PORTER_TEST_SCALE']")
    # and a variable the person removed is gone from the worker too
    replay = _numpy_replay(ip, "y = x * float(os.environ.get('PORTER_TEST_SCALE', '1'))")
    assert {o.name: o.within_tolerance for o in replay.outputs} == {"y": True}


def test_a_module_on_a_path_added_after_the_worker_started(ip, tmp_path):
    (tmp_path / "porter_test_mod21.py").write_text("def f(x):\n    return x * 2\n")
    run(ip, f"sys.path.insert(0, {str(tmp_path)!r})\nimport porter_test_mod21")
    try:
        _numpy_replay(ip, "y = porter_test_mod21.f(x)")
    finally:
        run(ip, f"sys.path.remove({str(tmp_path)!r})")


def test_an_error_state_an_earlier_replay_set_is_undone(ip):
    _numpy_replay(ip, "old = np.seterr(all='raise')\ny1 = x + 1")
    run(ip, "np.seterr(**old)")  # the person restores NumPy's error state
    quiet_log = "import warnings\nwith warnings.catch_warnings():\n"
    quiet_log += "    warnings.simplefilter('ignore')\n    y = np.log(x)"
    replay = _numpy_replay(ip, quiet_log)
    assert replay.error is None


def test_the_persons_error_state_is_taken(ip):
    run(ip, "old = np.seterr(divide='raise')")
    try:
        cell = "try:\n    y = np.log(x)\n    raised = False\nexcept FloatingPointError:\n"
        result = run(ip, f"%%port -b numpy --quiet\n{cell}    raised = True")
        assert result.error_in_exec is None
        assert ip.user_ns["raised"] is True
        replay = replays(ip.user_ns["_port"])["numpy"]
        assert {o.name: o.within_tolerance for o in replay.outputs}["raised"] is True
    finally:
        run(ip, "np.seterr(**old)")


def test_torch_default_dtype_follows_the_person(ip):
    pytest.importorskip("torch")
    run(ip, "import torch\ntorch.set_default_dtype(torch.float64)")
    try:
        replay = _numpy_replay(ip, "d = str(torch.ones(1).dtype)", "torch")
        assert {o.name: o.within_tolerance for o in replay.outputs} == {"d": True}
    finally:
        run(ip, "torch.set_default_dtype(torch.float32)")
    replay = _numpy_replay(ip, "d = str(torch.ones(1).dtype)", "torch")
    assert {o.name: o.within_tolerance for o in replay.outputs} == {"d": True}


def _follows(ip, change: str, undo: str, probe: str, spec: str = "numpy") -> None:
    """`probe` replayed on `spec` agrees with the person's run after `change`, and again
    after `undo` (what the earlier replay took is undone too)."""
    run(ip, change)
    name = probe.split("=")[0].strip()
    try:
        replay = _numpy_replay(ip, probe, spec)
        assert {o.name: o.within_tolerance for o in replay.outputs} == {name: True}
    finally:
        run(ip, undo)
    replay = _numpy_replay(ip, probe, spec)
    assert {o.name: o.within_tolerance for o in replay.outputs} == {name: True}


def test_the_working_directory_follows_the_person(ip, tmp_path):
    change = f"_porter_cwd = os.getcwd()\nos.chdir({str(tmp_path)!r})"
    _follows(ip, change, "os.chdir(_porter_cwd)", "here = os.getcwd()")


def test_torch_deterministic_algorithms_follow_the_person(ip):
    pytest.importorskip("torch")
    change = "import torch\ntorch.use_deterministic_algorithms(True, warn_only=True)"
    undo = "torch.use_deterministic_algorithms(False)"
    _follows(ip, change, undo, "on = torch.are_deterministic_algorithms_enabled()", "torch")


def test_jax_x64_follows_the_person(ip):
    pytest.importorskip("jax")
    change = "import jax, jax.numpy as jnp\njax.config.update('jax_enable_x64', True)"
    undo = "jax.config.update('jax_enable_x64', False)"
    _follows(ip, change, undo, "d = str(jnp.ones(1).dtype)", "jax")


def test_the_persons_recursion_limit_is_taken(ip):
    """A limit an earlier replay lowered is the person's again (``attacks/12``), and a
    limit the person raised is the worker's too."""
    deep = "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\nd = depth({})"
    run(ip, "_porter_limit = sys.getrecursionlimit()")
    try:
        _numpy_replay(ip, "sys.setrecursionlimit(260)\ny1 = x * 2")
        run(ip, "sys.setrecursionlimit(_porter_limit)")
        assert _numpy_replay(ip, deep.format(400)).error is None
        run(ip, "sys.setrecursionlimit(max(_porter_limit, 4000))")
        assert _numpy_replay(ip, deep.format(3000)).error is None
    finally:
        run(ip, "sys.setrecursionlimit(_porter_limit)")


def test_the_persons_resource_limits_are_taken(ip):
    """A soft limit an earlier replay lowered is the person's again (``attacks/11``), and
    one the person lowered is the worker's too."""
    run(ip, "import resource\n_porter_nofile = resource.getrlimit(resource.RLIMIT_NOFILE)")
    lower = "resource.setrlimit(resource.RLIMIT_NOFILE, (200, _porter_nofile[1]))"
    try:
        _numpy_replay(ip, f"{lower}\ny1 = x * 2")
        run(ip, "resource.setrlimit(resource.RLIMIT_NOFILE, _porter_nofile)")
        opens = "fs = [open(os.devnull) for _ in range(300)]\nn = len(fs)\nfor f in fs: f.close()"
        assert _numpy_replay(ip, opens).error is None
        probe = "soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]"
        _follows(
            ip, f"{lower}", "resource.setrlimit(resource.RLIMIT_NOFILE, _porter_nofile)", probe
        )
    finally:
        run(ip, "resource.setrlimit(resource.RLIMIT_NOFILE, _porter_nofile)")


def test_a_worker_whose_hard_limit_a_replay_lowered_is_replaced(ip):
    """A replay that lowers a hard limit leaves a worker that cannot take the person's
    soft limit again: the next cell runs in a fresh worker, with the person's limits."""
    person = os.getpid()
    run(ip, "import resource")
    lower = (
        f"if os.getpid() != {person}:\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))\ny1 = x * 2"
    )
    _numpy_replay(ip, lower)
    probe = "soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]"
    replay = _numpy_replay(ip, probe)
    assert {o.name: o.within_tolerance for o in replay.outputs} == {"soft": True}
