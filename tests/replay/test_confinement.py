"""A replay cannot write the person's files, whatever writes: each attack of issue 20
(``repro/turn3/attacks/01-18, 62, 65``) run in a ``%%port -b numpy,strict`` cell on real
worker kernels. The person's run makes its one effect; the replays make none.

The workers here run in namespaces (as root: ``unshare``); the same attacks run once more
under bubblewrap, and the audit-hook fallback says what it is."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from porter_ext.replay import confine
from tests.replay.isolation import replays, run, shell
from tests.snippets import ROOT

pytest.importorskip("array_api_strict")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        confine.confinement().isolation != confine.NAMESPACE,
        reason=f"no namespaces for workers here: {confine.confinement().how}",
    ),
]
SPECS = "-b numpy,strict --quiet"


@pytest.fixture(scope="module")
def ip():
    ip = shell()
    run(ip, "import numpy as np, os, uuid, subprocess\nx = np.arange(4.0)")
    return ip


@pytest.fixture
def victim(ip, person_folder):
    """The person's own folder, and a file in it with one line."""
    path = person_folder / "log.txt"
    path.write_text("")
    ip.user_ns.update(D=str(person_folder), P=str(path))
    return person_folder


def _port(ip, body: str):
    result = run(ip, f"%%port {SPECS}\n{body}\ny = x * 2")
    assert result.error_in_exec is None, result.output
    port = ip.user_ns["_port"]
    entries = replays(port)
    assert set(entries) == {"numpy", "strict"}
    for entry in entries.values():
        assert entry.isolation == confine.NAMESPACE
    return port


def _lines(path) -> int:
    return len(path.read_text().splitlines())


APPENDS = {
    "os.system": "os.system(f'echo hi >> {P}')",
    "subprocess": "subprocess.run(['sh', '-c', f'echo hi >> {P}'])",
    "posix_spawn": (
        "_pid = os.posix_spawn('/bin/sh', ['sh', '-c', f'echo hi >> {P}'], os.environ)\n"
        "os.waitpid(_pid, 0)"
    ),
    "system_raw": "get_ipython().system_raw(f'echo hi >> {P}')",
    "%%bash": "get_ipython().run_cell_magic('bash', '', f'echo hi >> {P}\\n')",
    "%system": "%system echo hi >> $P",
    "%sx": "_o = %sx echo hi >> $P",
    "os.popen": "os.popen(f'echo hi >> {P}').read()",
    "hard link": (
        "import tempfile\n_hl = os.path.join(tempfile.mkdtemp(), 'hl')\nos.link(P, _hl)\n"
        "with open(_hl, 'a') as _f:\n    _f.write('hi\\n')\nos.unlink(_hl)"
    ),
}


@pytest.mark.parametrize("attack", sorted(APPENDS))
def test_an_append_to_the_persons_file_happens_once(ip, victim, attack):
    _port(ip, APPENDS[attack])
    assert _lines(victim / "log.txt") == 1


CREATIONS = {
    "torch.save": (
        "import torch\ntorch.save(torch.arange(3), os.path.join(D, uuid.uuid4().hex + '.pt'))"
    ),
    "ctypes fopen": (
        "import ctypes\n_libc = ctypes.CDLL(None)\n_libc.fopen.restype = ctypes.c_void_p\n"
        "_fp = _libc.fopen(os.path.join(D, uuid.uuid4().hex).encode(), b'w')\n"
        "if _fp:\n    _libc.fclose(ctypes.c_void_p(_fp))"
    ),
    "dir_fd": (
        "_dfd = os.open(D, os.O_RDONLY)\n"
        "_fd = os.open(uuid.uuid4().hex, os.O_CREAT | os.O_WRONLY, dir_fd=_dfd)\n"
        "os.write(_fd, b'x')\nos.close(_fd)\nos.close(_dfd)"
    ),
    "mkfifo": "os.mkfifo(os.path.join(D, uuid.uuid4().hex))",
}


@pytest.mark.parametrize("attack", sorted(CREATIONS))
def test_a_file_made_in_the_persons_folder_is_made_once(ip, victim, attack):
    if attack == "torch.save":
        pytest.importorskip("torch")
    _port(ip, CREATIONS[attack])
    assert len(os.listdir(victim)) == 2  # log.txt and the person's own new file


def test_file_times_change_once(ip, victim):
    path = victim / "log.txt"
    before = path.stat().st_mtime
    _port(ip, "os.utime(P, (os.stat(P).st_atime, os.stat(P).st_mtime + 1000))")
    assert path.stat().st_mtime == pytest.approx(before + 1000)


def test_a_python_write_names_the_refused_file(ip, victim):
    port = _port(ip, "with open(os.path.join(D, 'results.csv'), 'w') as f:\n    f.write('1')")
    for entry in replays(port).values():
        assert entry.status == "error"
        assert entry.error.message.startswith(f"replay tried to write {victim}/results.csv")
    assert sorted(os.listdir(victim)) == ["log.txt", "results.csv"]


def test_the_replay_writes_its_own_scratch(ip):
    port = _port(
        ip,
        "import tempfile\n_p = os.path.join(tempfile.mkdtemp(), 'f')\n"
        "os.system(f'echo hi > {_p}')\nwith open(_p) as _f:\n    got = _f.read()",
    )
    for entry in replays(port).values():
        assert entry.status == "ok", entry.error
        assert [o.name for o in entry.outputs if o.name == "got"] == ["got"]


def test_a_process_a_replay_starts_ends_with_it(ip):
    token = "porter-stray-" + uuid.uuid4().hex[:8]
    body = (
        f"subprocess.Popen(['bash', '-c', 'exec -a {token} sleep 300'], start_new_session=True,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"
    )
    try:
        port = _port(ip, body)
        table = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True)
        left = [line.split()[0] for line in table.stdout.splitlines() if token in line]
        assert len(left) == 1  # the person's own
        for entry in replays(port).values():
            assert "1 process(es) the replay started were ended with it" in entry.reason
    finally:
        subprocess.run(["pkill", "-f", token], check=False)


def test_reading_the_persons_files_works(ip, victim):
    (victim / "data.txt").write_text("3\n")
    port = _port(ip, "with open(os.path.join(D, 'data.txt')) as f:\n    n = int(f.read())")
    for entry in replays(port).values():
        assert entry.status == "ok", entry.error


def _fresh_process(code: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PORTER_DEBUG": "1", "JAX_PLATFORMS": "cpu", **env}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=full,
        timeout=600,
    )


ATTACKS_ELSEWHERE = """
import os, sys, json, tempfile
from tests.replay.isolation import run, shell, replays
d = tempfile.mkdtemp()
ip = shell()
ip.user_ns.update(D=d, P=os.path.join(d, "log.txt"))
run(ip, "import numpy as np, os\\nx = np.arange(4.0)")
run(ip, "%%port -b numpy --quiet\\nos.system(f'echo hi >> {P}')\\ny = x * 2")
print(json.dumps({
    "lines": len(open(os.path.join(d, "log.txt")).read().splitlines()),
    "isolation": [r.isolation for r in replays(ip.user_ns["_port"]).values()],
}))
"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_bubblewrap_seals_workers_too():
    done = _fresh_process(ATTACKS_ELSEWHERE, PORTER_ISOLATION="bubblewrap")
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"lines": 1, "isolation": ["namespace"]}


def test_the_audit_hook_fallback_says_so():
    done = _fresh_process(ATTACKS_ELSEWHERE, PORTER_ISOLATION="audit-hook")
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    # a subprocess gets past the hook: the report says that only the hook applied
    assert seen == {"lines": 2, "isolation": ["audit-hook"]}


def test_porter_backends_says_which_protection_applies():
    porter = [sys.executable, "-m", "porter_ext.cli", "backends"]
    done = subprocess.run(porter, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("replays: isolation namespace (")
    fallback = subprocess.run(
        porter,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PORTER_ISOLATION": "audit-hook"},
    )
    assert "replays: isolation audit-hook (PORTER_ISOLATION=audit-hook" in fallback.stdout
    listed = subprocess.run([*porter, "--json"], capture_output=True, text=True, cwd=ROOT)
    assert {b["isolation"] for b in json.loads(listed.stdout)} == {"namespace"}


def test_workers_outlive_the_thread_that_started_them():
    """A sealed worker ends with the thread that started it (PR_SET_PDEATHSIG): started
    from a cell's thread that then ends, it would die before the next cell."""
    import threading

    from porter_ext.replay.workers import shutdown_workers

    ip = shell()
    shutdown_workers()  # the next cell starts fresh workers, from its own thread
    run(ip, "import numpy as np\nx = np.arange(6.0)")
    cell = threading.Thread(target=run, args=(ip, "%%port -b numpy --quiet\na = x + 1"))
    cell.start()
    cell.join()
    assert replays(ip.user_ns["_port"])["numpy"].status == "ok"
    run(ip, "%%port -b numpy --quiet\nc = x + 2")
    assert replays(ip.user_ns["_port"])["numpy"].status == "ok"


def test_importing_pyplot_is_no_refused_write(ip):  # notebooks/mpl_import_replay_refused
    pytest.importorskip("matplotlib")
    port = _port(ip, "import matplotlib.pyplot as plt")
    for entry in replays(port).values():
        assert entry.status == "ok", entry.error
