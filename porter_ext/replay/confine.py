"""Workers that cannot write the person's files, whatever writes: Python, a subprocess, a
C library.

On Linux a local worker kernel starts in namespaces of its own: a mount namespace where
every file system is read-only except the worker's scratch directory and shared memory
(``/dev/shm``, which carries inputs and outputs), and a PID namespace, so that processes
a replay starts end with the worker (and the worker ends them after each replay, see
`end_strays`). As root, ``unshare`` makes the namespaces and this file, run as a
program inside them, remounts what it finds read-only before it becomes the kernel; for
a person who is not root, bubblewrap (``bwrap``) does the same through a user
namespace. Where neither works (another OS, namespaces forbidden), the worker keeps the
audit hook of `sandbox` alone, which sees Python's own file operations only; every
replay says which protection applied (``isolation``).

This module is also a program (``python confine.py SCRATCH -- ARGV...``) and imports
nothing but the standard library, so that it starts fast before the kernel.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

NAMESPACE = "namespace"
AUDIT_HOOK = "audit-hook"
#: the environment variable a confined worker finds its protection in
ISOLATION_VARIABLE = "PORTER_WORKER_ISOLATION"
#: names the protection to use: "unshare", "bubblewrap" (either if it works, else the
#: fallback) or "audit-hook" (no namespaces, on purpose); unset: the best that works
CHOICE_VARIABLE = "PORTER_ISOLATION"
TOOLS = ("unshare", "bubblewrap")
#: mounts that stay writable: shared memory carries a replay's inputs and outputs
_WRITABLE = ("/dev/shm", "/dev/pts", "/dev/mqueue")
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC = 32, 4096, 16384
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_PR_SET_PDEATHSIG = 1
_KEPT_FLAGS = {
    "nosuid": _MS_NOSUID,
    "nodev": _MS_NODEV,
    "noexec": _MS_NOEXEC,
    "noatime": _MS_NOATIME,
    "nodiratime": _MS_NODIRATIME,
    "relatime": _MS_RELATIME,
}


@dataclass(frozen=True)
class Confinement:
    """How this machine's local workers are kept from the person's files."""

    isolation: str  # NAMESPACE | AUDIT_HOOK
    #: in words: the tool that makes the namespaces, or why there are none
    how: str
    #: the command the kernel's own command line is prefixed with (empty: none)
    prefix: tuple[str, ...] = ()

    def argv(self, argv: list[str], scratch: str) -> list[str]:
        """The kernel's command line, started inside the confinement."""
        if not self.prefix:
            return list(argv)
        if self.how == "bubblewrap":
            return [*self.prefix, "--bind", scratch, scratch, "--", *argv]
        # unshare's outer process ends its child when it ends, and the watch ends it with
        # the person's process (a killed session leaves no worker behind)
        watch = (sys.executable, "-S", os.path.abspath(__file__), "watch", "--")
        return [*watch, *self.prefix, "seal", scratch, "--", *argv]


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
        "--fork",
        "--kill-child",
        "--mount-proc",
        sys.executable,
        "-S",
        os.path.abspath(__file__),
    )


def _bwrap_prefix() -> tuple[str, ...]:
    tool = shutil.which("bwrap")
    if tool is None:
        return ()
    # the root read-only and recursively so; /dev as it is (shared memory, ptys); a
    # fresh /proc for the PID namespace; the kernel dies with the process that started it
    # and is the namespace's first process (its own parent is then none, which
    # ipykernel's parent poller does not take for a dead parent)
    return (
        tool,
        "--ro-bind",
        "/",
        "/",
        "--dev-bind",
        "/dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-pid",
        "--die-with-parent",
        "--as-pid-1",
        "--setenv",
        ISOLATION_VARIABLE,
        NAMESPACE,
    )


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
            "system except their scratch directory; processes they start end with them"
        )
    return (
        f"isolation audit-hook ({confined.how}): Python's own writes are refused, but a "
        "subprocess or a C library can still write your files"
    )


# -- inside the worker -------------------------------------------------------------------
@functools.cache
def current_isolation() -> str:
    """The protection this process (a worker kernel) runs under, as it started (read
    once: a replay takes the person's environment, which does not say)."""
    return os.environ.get(ISOLATION_VARIABLE, AUDIT_HOOK)


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
    _reap()
    return len(strays)


def _reap() -> None:
    """Collect exited children (a namespace's first process inherits every orphan)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# -- the program run inside fresh namespaces (as root, after ``unshare``) ----------------
def _mount_points() -> list[tuple[str, set[str]]]:
    """Every mount point of this namespace and its per-mount options."""
    found = []
    with open("/proc/self/mountinfo") as lines:
        for line in lines:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")
            found.append((point, set(fields[5].split(","))))
    return found


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _mount(libc: ctypes.CDLL, source: str | None, target: str, flags: int) -> None:
    if libc.mount(source and source.encode(), target.encode(), None, flags, None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def seal(scratch: str) -> None:
    """Make every file system of this mount namespace read-only but ``scratch`` and
    shared memory."""
    libc = ctypes.CDLL(None, use_errno=True)
    scratch = os.path.realpath(scratch)
    _mount(libc, scratch, scratch, _MS_BIND | _MS_REC)
    for point, options in _mount_points():
        if _under(point, scratch) or any(_under(point, kept) for kept in _WRITABLE):
            continue
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        for option in options & set(_KEPT_FLAGS):
            flags |= _KEPT_FLAGS[option]
        _mount(libc, None, point, flags)


def watch_parent() -> None:
    """Be killed when the process that started this one ends (kept across ``exec``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getppid()
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if parent == 1 or os.getppid() != parent:  # it ended before the watch began
        raise SystemExit("the process that started the worker has ended")


def main(args: list[str]) -> None:
    """``confine.py watch -- ARGV...``: end with the parent, then become ARGV;
    ``confine.py seal SCRATCH -- ARGV...``: seal this namespace, then become ARGV."""
    usage = "usage: confine.py watch -- ARGV... | confine.py seal SCRATCH -- ARGV..."
    if args[:2] == ["watch", "--"] and args[2:]:
        watch_parent()
        argv = args[2:]
    elif len(args) > 3 and args[0] == "seal" and args[2] == "--":
        seal(args[1])
        os.environ[ISOLATION_VARIABLE] = NAMESPACE
        argv = args[3:]
    else:
        raise SystemExit(usage)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
