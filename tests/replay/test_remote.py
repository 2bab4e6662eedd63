"""Replays on kernels that already run: by connection file, and through a real Jupyter
Kernel Gateway started on 127.0.0.1 by the test; unreachable ones are skipped in time."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.replay.isolation import replays, run, same_as_plain, shell

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ip():
    return shell()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """A plain kernel someone started, and its connection file."""
    from jupyter_client.manager import KernelManager

    folder = tmp_path_factory.mktemp("kernel")
    km = KernelManager(kernel_name="python3", connection_file=str(folder / "kernel-123.json"))
    km.start_kernel(env={**os.environ, "PYTHONPATH": os.getcwd()})
    yield km.connection_file
    km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def gateway():
    pytest.importorskip("kernel_gateway")
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "kernelgateway",
            "--KernelGatewayApp.ip=127.0.0.1",
            f"--KernelGatewayApp.port={port}",
        ],
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api", timeout=1).read()
            break
        except OSError:
            time.sleep(0.2)
    yield url
    process.terminate()
    process.wait(10)


SETUP = "import numpy as np\nx = np.arange(6.0).reshape(2, 3)\nrng = np.random.default_rng(3)"
CELL = "y = np.tanh(x).sum(axis=0)\nz = rng.random(2)"
PROBE = "(y.tolist(), rng.random())"


def test_replay_on_a_kernel_by_its_connection_file(ip, kernel):
    spec = f"numpy@{kernel}"
    port = same_as_plain(ip, SETUP, CELL, f"-b {spec} --quiet", PROBE)
    replay = replays(port)[spec]
    assert replay.status == "ok", (replay.error, replay.reason)
    assert replay.worker == f"kernel {kernel}"
    assert {o.name: o.within_tolerance for o in replay.outputs} == {"y": True, "z": True}


def test_replay_through_a_kernel_gateway(ip, gateway):
    spec = f"torch@{gateway}"
    pytest.importorskip("torch")
    port = same_as_plain(ip, SETUP, CELL, f"-b {spec} --quiet", PROBE)
    replay = replays(port)[spec]
    assert replay.status == "ok", (replay.error, replay.reason)
    assert replay.worker == f"gateway kernel {gateway}"
    assert {o.name: o.within_tolerance for o in replay.outputs} == {"y": True, "z": True}
    # a second cell reuses the gateway's kernel
    run(ip, f"%%port -b {spec} --quiet\nw = x * 2")
    assert replays(ip.user_ns["_port"])[spec].status == "ok"


def test_a_gateway_that_does_not_answer_is_skipped_in_time(ip):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts connections, never answers
    spec = f"numpy@http://127.0.0.1:{silent.getsockname()[1]}"
    try:  # it never answers: that the cell returns at all shows the limit held
        run(ip, f"%%port -b {spec} --timeout 2 --quiet\nimport numpy as np\ny = np.ones(2)")
    finally:
        silent.close()
    replay = replays(ip.user_ns["_port"])[spec]
    assert replay.status == "skipped"
    assert "gateway" in replay.reason and "does not answer" in replay.reason
