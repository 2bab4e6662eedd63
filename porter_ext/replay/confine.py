"""Workers that cannot reach the person: not their files (whatever writes: Python, a
subprocess, a C library), not their processes, not their network, and without the
privileges to undo any of it.

On Linux a local worker kernel starts in namespaces of its own: a mount namespace where
every file system is read-only except the worker's scratch directory, with a private
``/dev/shm`` (in which only the session's own folder of shared blocks is the person's:
they carry inputs and outputs) and the person's Jupyter runtime folder (kernel
connection files) hidden; a PID namespace with its own ``/proc``, so that processes a
replay starts end with the worker (see `end_strays`); an IPC namespace; a network
namespace with only a loopback of its own (the worker's Jupyter channels are ZeroMQ
``ipc`` sockets in its scratch, so that it needs no port of the person's); and a user
namespace in which the worker is ``nobody`` with no capability, so that it can neither
unmount nor remount nor mount. As root, ``unshare`` makes the mount, PID, IPC and
network namespaces and the program `walls`, run inside them, seals them and then enters
the user namespace before it becomes the kernel; for anyone else, and for root
where asked, bubblewrap (``bwrap``) does the same with the same options. Inside, once
the kernel is up, a seccomp filter refuses new Unix sockets (`walls.refuse_unix_sockets`): a
socket file of the person's can be connected to whatever the mounts say. Where none of
this works (another OS, namespaces forbidden), the worker keeps the audit hook of
`sandbox` alone, which sees Python's own operations only; every replay says which
protection applied (``isolation``), and an audit-hook replay says what it leaves open.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from porter_ext.replay import walls as walls_program
from porter_ext.replay.walls import (
    ISOLATION_VARIABLE,
    NAMESPACE,
    NETWORK_VARIABLE,
    UNPRIVILEGED,
    Walls,
)

AUDIT_HOOK = "audit-hook"
#: names the protection to use: "unshare", "bubblewrap" (either if it works, else the
#: fallback) or "audit-hook" (no namespaces, on purpose); unset: the best that works
CHOICE_VARIABLE = "PORTER_ISOLATION"
TOOLS = ("unshare", "bubblewrap")
#: what an audit-hook replay leaves open, said in every such replay's notes
AUDIT_HOOK_OPEN = (
    "isolation audit-hook: weaker than namespaces; a subprocess or a C library can write "
    "your files, a replay reaches your network, kernels and processes, and Python code "
    "in the cell can switch the hook off"
)


@dataclass(frozen=True)
class Confinement:
    """How this machine's local workers are kept from the person."""

    isolation: str  # NAMESPACE | AUDIT_HOOK
    #: in words: the tool that makes the namespaces, or why there are none
    how: str
    #: the command the kernel's own command line is prefixed with (empty: none)
    prefix: tuple[str, ...] = ()

    def argv(self, argv: list[str], walls: Walls | str) -> list[str]:
        """The kernel's command line, started inside the confinement."""
        if isinstance(walls, str):
            walls = Walls(walls)
        if not self.prefix:
            return list(argv)
        if self.how == "bubblewrap":
            return [*self.prefix, *_bwrap_walls(walls), "--", *argv]
        # unshare's outer process ends its child when it ends, and the watch ends it with
        # the person's process (a killed session leaves no worker behind)
        watch = (sys.executable, "-S", os.path.abspath(walls_program.__file__), "watch", "--")
        net = ("--net",) if walls.own_network else ()
        seal_args = ["seal", walls.scratch, walls.shared or "-", str(int(walls.own_network))]
        return [
            *watch,
            *self.prefix[:1],
            *net,
            *self.prefix[1:],
            *seal_args,
            *walls.hidden,
            "--",
            *argv,
        ]


def _unshare_prefix() -> tuple[str, ...]:
    tool = shutil.which("unshare")
    if tool is None:
        return ()
    return (
        tool,
        "--mount",
        "--propagation",
        "private",
        "--pid",
        "--ipc",
        "--fork",
        "--kill-child",
        "--mount-proc",
        sys.executable,
        "-S",
        os.path.abspath(walls_program.__file__),
    )


def _bwrap_prefix() -> tuple[str, ...]:
    tool = shutil.which("bwrap")
    if tool is None:
        return ()
    # the same options whoever runs it, root included: a user namespace where the worker
    # is nobody with no capability; the root read-only and recursively so; /dev as it is
    # (ptys, GPUs) but a private /dev/shm; a fresh /proc for the PID namespace; the
    # kernel dies with the process that started it and is the namespace's first process
    # (its own parent is then none, which ipykernel's parent poller does not take for a
    # dead parent)
    return (
        tool,
        "--unshare-user",
        "--uid",
        str(UNPRIVILEGED),
        "--gid",
        str(UNPRIVILEGED),
        "--cap-drop",
        "ALL",
        "--unshare-pid",
        "--unshare-ipc",
        "--ro-bind",
        "/",
        "/",
        "--dev-bind",
        "/dev",
        "/dev",
        "--tmpfs",
        "/dev/shm",
        "--proc",
        "/proc",
        "--die-with-parent",
        "--as-pid-1",
        "--setenv",
        ISOLATION_VARIABLE,
        NAMESPACE,
    )


def _bwrap_walls(walls: Walls) -> list[str]:
    args = ["--unshare-net"] if walls.own_network else []
    args += ["--setenv", NETWORK_VARIABLE, "own" if walls.own_network else "shared"]
    if walls.shared:
        args += ["--bind", walls.shared, walls.shared]
    for folder in walls.hidden:
        args += ["--tmpfs", folder, "--remount-ro", folder]
    return [*args, "--bind", walls.scratch, walls.scratch]


@functools.lru_cache(maxsize=1)
def confinement() -> Confinement:
    """The protection local workers get here, found by trying it once (cached)."""
    choice = os.environ.get(CHOICE_VARIABLE) or None
    if choice == AUDIT_HOOK:
        return Confinement(AUDIT_HOOK, f"{CHOICE_VARIABLE}={AUDIT_HOOK} asks for no namespaces")
    if not sys.platform.startswith("linux"):
        return Confinement(AUDIT_HOOK, f"no mount namespaces on {sys.platform}")
    tried = []
    candidates = [("unshare", _unshare_prefix())] if os.geteuid() == 0 else []
    candidates.append(("bubblewrap", _bwrap_prefix()))
    if choice in TOOLS:
        candidates = [c for c in candidates if c[0] == choice] or [(choice, ())]
        if choice == "unshare" and os.geteuid() != 0:
            tried.append("unshare needs root")
            candidates = []
    for name, prefix in candidates:
        if not prefix:
            tried.append(f"{name} is not installed")
            continue
        problem = _try(Confinement(NAMESPACE, name, prefix))
        if problem is None:
            return Confinement(NAMESPACE, name, prefix)
        tried.append(f"{name}: {problem}")
    return Confinement(AUDIT_HOOK, "no namespaces: " + "; ".join(tried))


def _try(confined: Confinement) -> str | None:
    """None when a program started inside ``confined`` cannot write outside its scratch
    but can inside it; else what went wrong."""
    with tempfile.TemporaryDirectory(prefix="porter-confine-") as top:
        scratch = os.path.join(top, "scratch")
        os.mkdir(scratch)
        probe = (
            "import os, sys\n"
            "open(os.path.join(sys.argv[1], 'ok'), 'w').close()\n"
            "try:\n    open(os.path.join(sys.argv[2], 'leak'), 'w').close()\n"
            "except OSError:\n    pass\n"
        )
        argv = confined.argv([sys.executable, "-S", "-c", probe, scratch, top], scratch)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as error:
            return str(error)
        if os.path.exists(os.path.join(top, "leak")):
            return "a write outside the scratch directory got through"
        if not os.path.exists(os.path.join(scratch, "ok")):
            lines = (done.stderr or done.stdout or f"exit status {done.returncode}").strip()
            return lines.splitlines()[-1] if lines else f"exit status {done.returncode}"
    return None


def describe_isolation(confined: Confinement) -> str:
    """One line for people: what keeps local replays off their files."""
    if confined.isolation == NAMESPACE:
        return (
            f"isolation namespace ({confined.how}): local workers see a read-only file "
            "system except their scratch directory, run as nobody with no capability, "
            "without your network, kernels or processes; processes they start end with them"
        )
    return (
        f"isolation audit-hook ({confined.how}): Python's own writes are refused, but a "
        "subprocess or a C library can still write your files, and replays reach your "
        "network, kernels and processes"
    )


# -- inside the worker -------------------------------------------------------------------
@functools.cache
def current_isolation() -> str:
    """The protection this process (a worker kernel) runs under, as it started (read
    once: a replay takes the person's environment, which does not say)."""
    return os.environ.get(ISOLATION_VARIABLE, AUDIT_HOOK)


@functools.cache
def own_network() -> bool:
    """Whether this worker has a network namespace of its own (read once, as above)."""
    return current_isolation() == NAMESPACE and os.environ.get(NETWORK_VARIABLE) == "own"


def in_own_pid_namespace() -> bool:
    """Whether this process is the first of a PID namespace of porter's (every other
    process there was started by a replay)."""
    return current_isolation() == NAMESPACE and os.getpid() <= 2


def processes() -> set[int]:
    """The processes this PID namespace holds, this one included."""
    return {int(n) for n in os.listdir("/proc") if n.isdigit()}


def end_strays(before: set[int]) -> int:
    """End the processes started since ``before`` (a replay's subprocesses and daemons,
    whichever session they made), reap them; how many there were. Only inside porter's
    own PID namespace, where nothing else lives."""
    if not in_own_pid_namespace():
        return 0
    me = os.getpid()
    strays = [pid for pid in processes() - before if pid != me and pid > 2]
    for pid in strays:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    _reap(set(strays))
    return len(strays)


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (it exists, and is no zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[:1] != ["Z"]
    except OSError:
        return False


#: how long `end_strays` waits for the processes it killed to be gone (a loaded machine
#: may take a while to run a SIGKILLed process's exit)
REAP_WAIT = 5.0


def _reap(killed: set[int] = frozenset()) -> None:
    """Collect exited children (a namespace's first process inherits every orphan),
    waiting up to `REAP_WAIT` for the ``killed`` ones: when the replay is said to have
    ended them, they are gone."""
    end = time.monotonic() + REAP_WAIT
    left = set(killed)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        left.discard(pid)
        left = {p for p in left if _running(p)}
        if pid == 0:
            if not left or time.monotonic() > end:
                return
            time.sleep(0.005)
