"""What a worker runs is the replay stage's own program or one its user hands it
(`worker_kernel.use_program`; the session's adds device findings), and porter's own
failure inside a worker fails the person's cell under PORTER_DEBUG as it would in the
person's process."""

from __future__ import annotations

import pytest

from porter_ext.guard import PorterInternalError
from porter_ext.replay import worker_kernel
from porter_ext.session.session import WORKER_PROGRAM

pytest.importorskip("jax")


@pytest.fixture
def shell(port_shell):
    port_shell.run_cell(
        "import numpy as np\nfrom array_api_compat import array_namespace\nx = np.ones(3)\n"
    )
    # the session's pool exists (it names the session's program when it is made)
    port_shell.run_cell("%%port -b numpy --quiet\nz = x + 1\n")
    yield port_shell
    worker_kernel.use_program(WORKER_PROGRAM)


def _replays(shell) -> dict:
    return {r.backend: r for r in shell.user_ns["_port"].entry.replays}


#: on jax:cpu:1 the inputs are on cpu:1 and `zeros` without a device makes one on cpu:0
CELL = "%%port -b jax:cpu:1 --quiet\nxp = array_namespace(x)\ny = x + xp.zeros(3)\n"


def _findings(shell) -> list:
    return [f for f in shell.user_ns["_port"].entry.device_findings if f.backend == "jax:cpu:1"]


def test_the_replay_stage_runs_replays_with_its_own_program(shell):
    shell.run_cell(CELL)
    assert _findings(shell)  # the session's program judged the replay's placement
    worker_kernel.use_program("porter_ext.replay.worker_side")
    shell.run_cell(CELL)
    assert _replays(shell)["jax:cpu:1"].status == "ok"
    assert not _findings(shell)  # no later stage ran in the worker


def test_porters_failure_in_a_worker_fails_the_cell_under_debug(shell):
    worker_kernel.use_program("tests.replay.failing_program")
    result = shell.run_cell("%%port -b numpy --quiet\ny = x + 2\n")
    assert isinstance(result.error_in_exec, PorterInternalError)
    assert "a finisher that has a bug" in str(result.error_in_exec)
