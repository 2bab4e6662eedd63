"""A Python-level loop over array elements (the Python Data Science Handbook's 02.03,
``compute_reciprocals``) replays at its backend's own speed: a replay records each loop
until its iterations record nothing new, then runs it as written (issue 19 item 7;
`turn3/notebooks/recording_overhead_python_loop.py`). The person's run keeps exact
counts. On real worker kernels."""

from __future__ import annotations

import numpy as np
import pytest

from tests.replay.isolation import replays, run, shell

pytestmark = pytest.mark.slow

N = 3000

DEFINE = """%%port --no-replay --quiet
def compute_reciprocals(values):
    output = np.empty(len(values))
    for i in range(len(values)):
        output[i] = 1.0 / values[i]
    return output
"""


@pytest.fixture(scope="module")
def ip():
    ip = shell()
    run(ip, f"import numpy as np\nbig = np.random.default_rng(1701).integers(1, 100, size={N})")
    run(ip, DEFINE)
    return ip


def _counts(calls) -> dict[str, int]:
    return {c.name.rpartition(".")[2]: c.count for c in calls or ()}


@pytest.mark.parametrize("backends", ["numpy", "torch"])
def test_a_replayed_loop_records_its_first_iterations_and_compares_every_output(ip, backends):
    if backends == "torch":
        pytest.importorskip("torch")
    result = run(ip, f"%%port -b {backends} --quiet\nr = compute_reciprocals(big)\n")
    assert result.success, result.output
    entry = ip.user_ns["_port"].entry
    np.testing.assert_array_equal(ip.user_ns["r"], 1.0 / ip.user_ns["big"])
    assert _counts(entry.calls)["__setitem__"] == N  # the person's run: every iteration
    [replay] = replays(ip.user_ns["_port"]).values()
    assert replay.status == "ok", (replay.error, replay.reason)
    seen = _counts(replay.calls)
    assert 0 < seen["__setitem__"] < N and 0 < seen["__getitem__"] < N
    # the replay's notes are its reason (porter's view shows them beside the replay)
    assert "loops ran as written" in replay.reason and "line 3 of cell" in replay.reason
    [output] = replay.outputs
    assert output.name == "r" and output.mismatched == 0, output


def test_a_loop_the_cell_writes_is_sampled_at_its_own_line(ip):
    cell = "%%port -b numpy --quiet\ns = np.zeros(1)\nfor v in big[:2000]:\n    s += v * 0.5\n"
    result = run(ip, cell)
    assert result.success, result.output
    [replay] = replays(ip.user_ns["_port"]).values()
    assert replay.status == "ok"
    assert "(line 2)" in replay.reason, replay.reason  # lines of the body, as the records count
    assert replay.outputs[0].mismatched == 0
