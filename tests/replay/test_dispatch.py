"""Clear reasons at the door: a spec whose place does not answer (a Dask scheduler, a
gateway, a connection file) is skipped with its reason, within the replay's time limit,
and is not a plan item (attacks/56 as a test); on real worker kernels."""

from __future__ import annotations

import socket

import pytest

from porter_ext.model.plan import build_plan
from tests.replay.isolation import replays, run

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow


def closed_port() -> int:
    """A local port nothing listens on (bound once, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("place", "reason"),
    [
        ("dask@tcp://127.0.0.1:{port}", "no Dask scheduler answers at tcp://127.0.0.1:{port}"),
        ("numpy@http://127.0.0.1:{port}", "the gateway at http://127.0.0.1:{port} does not answer"),
        ("numpy@{tmp}/kernel-gone.json", "no kernel connection file at {tmp}/kernel-gone.json"),
    ],
    ids=["dask-scheduler", "gateway", "connection-file"],
)
def test_a_place_that_does_not_answer_is_skipped_with_its_reason(
    port_shell, tmp_path, place, reason
):
    port = closed_port()
    spec = place.format(port=port, tmp=tmp_path)
    run(port_shell, "import numpy as np\nx = np.arange(4.0)")
    result = run(port_shell, f"%%port -b {spec} --timeout 10\ny = x * 2")
    assert result.success, result.output
    assert port_shell.user_ns["y"].tolist() == [0.0, 2.0, 4.0, 6.0]
    ported = port_shell.user_ns["_port"]
    target = replays(ported)[spec]
    assert target.status == "skipped", (target.error, target.reason)
    assert target.error is None
    assert reason.format(port=port, tmp=tmp_path) in target.reason
    assert build_plan([ported.entry]) == []  # a place that is not there is nothing to fix
    assert "plan:" not in result.output
    assert replays(ported, "control")["numpy"].status == "ok"


def test_a_place_that_answers_but_is_no_scheduler_is_skipped(port_shell):
    """Something listens, but it is not a Dask scheduler: the worker's client fails to
    start, and the replay is skipped with what it said, not a replay failure."""
    import threading

    server = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            connection.sendall(b"HTTP/1.0 200 OK\r\n\r\nnot a scheduler" * 100)
            connection.close()

    threading.Thread(target=answer, daemon=True).start()
    spec = f"dask@tcp://127.0.0.1:{server.getsockname()[1]}"
    try:
        run(port_shell, "import numpy as np\nx = np.arange(4.0)")
        run(port_shell, f"%%port -b {spec} --timeout 60 --quiet\ny = x * 2")
    finally:
        server.close()
    replay = replays(port_shell.user_ns["_port"])[spec]
    assert replay.status == "skipped"
    assert replay.reason.startswith(f"dask at {spec.partition('@')[2]} cannot run it: ")
    assert build_plan([port_shell.user_ns["_port"].entry]) == []
