"""Nothing left behind (issue 20, ``attacks/35, 36, 65``): a session's workers end with
it, killed or not; its scratch folders and shared-memory blocks are removed when it ends,
and swept by the next porter session when it was killed, whatever became of its pid."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from tests.snippets import ROOT

pytestmark = pytest.mark.slow

PERSON = """
import json, os, sys, tempfile
from tests.replay.isolation import run, shell
from porter_ext.replay import shared_blocks
ip = shell()
run(ip, "import numpy as np, os, tempfile\\nx = np.ones(100_000)")
# a replay that writes into its scratch (the sandbox allows it)
run(ip, "%%port -b numpy --quiet\\nopen(os.path.join(tempfile.gettempdir(), 'junk'), 'wb').write(b'0' * 1000)\\ny = x + 1")
if sys.argv[1] == "unread":  # an answer a worker made for this session, never read
    shared_blocks.fresh(4096)
print(json.dumps({"owner": shared_blocks.session_owner(), "pid": os.getpid()}), flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), 9)
"""


def _person(how: str) -> tuple[dict, subprocess.CompletedProcess]:
    env = {**os.environ, "PORTER_DEBUG": "1", "JAX_PLATFORMS": "cpu"}
    command = [sys.executable, "-c", PERSON, how]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    return json.loads(done.stdout.splitlines()[-1]), done


def _left(owner: str) -> dict[str, list[str]]:
    top = tempfile.gettempdir()
    return {
        "scratch": glob.glob(os.path.join(top, f"porter-workers-{owner}-*")),
        # the session's folder of blocks (and blocks named after it, as older porters made)
        "blocks": glob.glob(f"/dev/shm/porter_{owner}*"),
    }


def _workers_of(scratch: list[str]) -> list[str]:
    table = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [line for line in table.splitlines() if any(s in line for s in scratch)]


@pytest.mark.parametrize("how", ["exit", "unread"])
def test_a_session_that_exits_leaves_nothing(how):
    seen, done = _person(how)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _left(seen["owner"]) == {"scratch": [], "blocks": []}


def test_a_killed_session_is_swept_by_the_next_one():
    seen, done = _person("kill")
    assert done.returncode == -signal.SIGKILL
    left = _left(seen["owner"])
    assert left["scratch"], "the killed session's scratch folder is there to sweep"
    deadline = time.monotonic() + 60  # its workers end with it (not at once: a poll)
    while _workers_of(left["scratch"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _workers_of(left["scratch"]) == []
    following, done = _person("exit")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _left(seen["owner"]) == {"scratch": [], "blocks": []}


def test_porter_run_leaves_no_blocks_of_its_kernel(tmp_path):  # attacks/73, 74
    import nbformat

    from porter_ext.replay.shared_blocks import owner_alive

    notebook = tmp_path / "nb.ipynb"
    nb = nbformat.v4.new_notebook()
    cells = ["import numpy as np\nx = np.arange(4.0)", "y = x * 2"]
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, notebook)
    before = set(glob.glob("/dev/shm/porter_*"))
    porter = [sys.executable, "-m", "porter_ext.cli"]
    for command in (
        ["run", str(notebook), "-o", str(tmp_path / "r.json")],
        ["fix", str(notebook), "-o", str(tmp_path / "ported.ipynb")],
    ):
        argv = [*porter, *command, "-b", "numpy"]
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        new = set(glob.glob("/dev/shm/porter_*")) - before
        orphans = []
        for path in new:
            _, pid, rest = os.path.basename(path).split("_")
            if not owner_alive(pid, rest.partition("x")[0]):
                orphans.append(path)
        assert orphans == [], command[0]
