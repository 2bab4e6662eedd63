"""What a replay inside a worker must never do, and what it does instead.

An audit hook refuses, while a replay runs, every attempt to open a file for writing, to
create, delete, rename or truncate one, change its times, owner, mode or extended
attributes, or bind a Unix socket outside the worker's scratch directory (reading is
allowed): the replay reports the refusal as its error even when the cell catches it. In
a worker without the network the hook also notes the addresses a replay tried to reach,
so that its failure says why.
``!cmd`` lines are not run again (they are side effects) and the replay says so. IPython
magics (``%timeit``, ``%time``, ``%%time``) run in the replay's own namespace; plots,
prints and displays are discarded and counted.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
#: audit events that change the file system, and which of their arguments are paths
_PATH_EVENTS = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.truncate": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.chmod": (0,),
    "shutil.rmtree": (0,),
    "shutil.move": (1,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
    "os.utime": (0,),
    "os.chown": (0,),
    "os.chflags": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
}
#: file operations Python raises no audit event for: wrapped in the worker (see `install`)
_UNAUDITED = ("mkfifo", "mknod")
#: audit events of a replay reaching out to the network, and the argument that says where
_NETWORK_EVENTS = {"socket.connect": 1, "socket.sendto": 1, "socket.getaddrinfo": 0}


class SideEffectRefused(PermissionError):
    """A replay tried to change a file outside the worker's scratch directory."""


@dataclass
class Sandbox:
    """The worker's guard: armed only while a replay runs."""

    scratch: str
    #: another folder whose writes stay the worker's (its private /tmp), or None
    own_tmp: str | None = None
    armed: bool = False
    refused: list[str] = field(default_factory=list)
    #: files the replay changed in its own /tmp (not the person's)
    kept_in_tmp: list[str] = field(default_factory=list)
    skipped_commands: list[str] = field(default_factory=list)
    figures: int = 0
    #: what the replay printed (dropped here, never sent) and displayed
    printed: Printed = field(default_factory=lambda: Printed())
    displays: int = 0
    #: where the replay tried to reach the network (noted where the worker has none)
    reached: list[str] = field(default_factory=list)

    def inside(self, path: Any) -> bool:
        if isinstance(path, int):
            return True  # an open descriptor: nothing new is created
        try:
            text = os.fsdecode(path)
        except TypeError:
            return True
        if text == os.devnull:
            return True
        real = os.path.realpath(text)
        if _within(real, self.scratch):
            return True
        if self.own_tmp and _within(real, self.own_tmp):
            if real not in self.kept_in_tmp:
                self.kept_in_tmp.append(real)
            return True
        return False

    def refuse(self, path: Any) -> None:
        shown = os.fsdecode(path) if not isinstance(path, int) else str(path)
        message = (
            f"replay tried to write {shown}; porter does not repeat side effects outside the replay"
        )
        self.refused.append(message)
        raise SideEffectRefused(message)

    def hook(self, event: str, args: tuple) -> None:
        if not self.armed:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags >= 0 and flags & _WRITE_FLAGS
            )
            if writes and path is not None and not self.inside(path):
                self.refuse(path)
        elif event == "os.mkdir" and args[2:3] in ((), (None,), (-1,)) and _exists(args[0]):
            return  # fails with FileExistsError: nothing changes (makedirs(exist_ok=True))
        elif event in _PATH_EVENTS:
            for i in _PATH_EVENTS[event]:
                if i < len(args) and args[i] is not None and not self.inside(args[i]):
                    self.refuse(args[i])
        elif event == "socket.bind" and len(args) > 1 and isinstance(args[1], (str, bytes)):
            address = args[1]  # a Unix socket's path ("\0..." : the abstract namespace)
            if address[:1] not in ("", "\0", b"\0") and not self.inside(address):
                self.refuse(address)
        elif (
            event == "socket.__new__"
            and args[1:2] == (socket.AF_UNIX,)
            and _walled()
            and not _wraps_descriptor()
        ):
            message = (
                "replay tried to open a Unix socket: workers open none, so that a server of "
                "yours never receives what the cell sends once more (--allow-network allows it)"
            )
            self.refused.append(message)
            raise SideEffectRefused(message)
        elif event in _NETWORK_EVENTS and len(args) > _NETWORK_EVENTS[event]:
            where = args[_NETWORK_EVENTS[event]]
            host = where[0] if isinstance(where, tuple) and where else where
            if isinstance(host, bytes):
                host = host.decode(errors="replace")
            port = where[1] if isinstance(where, tuple) and len(where) > 1 else None
            if event == "socket.getaddrinfo" and len(args) > 1:
                port = args[1]
            if isinstance(host, str) and not host.startswith(("/", "\0")):  # not Unix
                shown = host if port in (None, 0, "") else f"{host}:{port}"
                if shown not in self.reached:
                    self.reached.append(shown)
        elif (
            event == "sqlite3.connect"
            and args
            and args[0] not in (":memory:", b":memory:")
            and not self.inside(args[0])
        ):
            self.refuse(args[0])

    @contextlib.contextmanager
    def active(self, namespace: dict) -> Iterator[None]:
        """Guard one replay running in ``namespace``: files, IPython lines, figures, and
        what it prints or displays (counted and dropped in the worker: a replay that
        prints a million lines costs the person's process nothing)."""
        self.refused, self.skipped_commands, self.figures = [], [], 0
        self.kept_in_tmp = []
        self.printed, self.displays, self.reached = Printed(), 0, []
        with _ipython_in(namespace, self), _dropped_output(self):
            self.armed = True
            try:
                yield
            finally:
                self.armed = False
                self.figures = close_figures()

    def output_notes(self) -> list[str]:
        """What the replay printed, displayed and plotted, for its notes."""
        notes = []
        if self.printed.lines or self.printed.characters:
            notes.append(f"the replay printed {self.printed.lines} line(s) (not shown)")
        if self.displays:
            notes.append(f"{self.displays} display(s) of the replay discarded")
        if self.figures:
            notes.append(f"{self.figures} figure(s) of the replay discarded")
        if self.kept_in_tmp:
            shown = ", ".join(self.kept_in_tmp[:3]) + (" ..." if len(self.kept_in_tmp) > 3 else "")
            notes.append(
                f"the replay wrote {shown} in its own {self.own_tmp} (a layer over yours, "
                "gone with the worker): your files there are unchanged"
            )
        return notes + self.protection_notes()

    def protection_notes(self) -> list[str]:
        """What the worker's protection means for this replay: the network it could not
        reach; what the audit hook alone leaves open."""
        from porter_ext.replay import confine

        if confine.current_isolation() != confine.NAMESPACE:
            return [confine.AUDIT_HOOK_OPEN]
        if self.reached and confine.own_network():
            where = ", ".join(self.reached[:3]) + (" …" if len(self.reached) > 3 else "")
            return [
                f"the replay tried to reach the network ({where}): a worker has only a "
                "loopback of its own, so that your servers and kernels are out of its reach "
                "and a replay never repeats what a cell sends; --allow-network lets it reach them"
            ]
        if not confine.own_network():
            return ["the replay shared your network (--allow-network): what it sent was sent again"]
        return []


class Printed(io.TextIOBase):
    """A stream that counts what is written to it and keeps none of it."""

    def __init__(self) -> None:
        super().__init__()
        self.lines = 0
        self.characters = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.characters += len(text)
        self.lines += text.count("\n")
        return len(text)


@contextlib.contextmanager
def _dropped_output(sandbox: Sandbox) -> Iterator[None]:
    shell = _shell()
    publisher = getattr(shell, "display_pub", None)

    def publish(*args: Any, **kw: Any) -> None:
        sandbox.displays += 1

    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = sandbox.printed
    if publisher is not None:
        publisher.publish = publish
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        if publisher is not None:
            del publisher.publish  # the class's own again


def _wraps_descriptor() -> bool:
    """Whether the socket being made wraps a descriptor it was handed (one end of a
    ``socketpair``, which reaches nothing outside), as ``socket.socket(..., fileno)``."""
    frame = sys._getframe(1)
    for _ in range(3):
        if frame is None:
            return False
        if frame.f_code.co_name == "__init__" and frame.f_code.co_filename.endswith("socket.py"):
            return frame.f_locals.get("fileno") is not None
        frame = frame.f_back
    return False


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _walled() -> bool:
    """Whether this worker is without the person's network (and Unix sockets)."""
    from porter_ext.replay import confine

    return confine.own_network()


def _exists(path: Any) -> bool:
    try:
        return os.path.lexists(path)
    except (TypeError, ValueError):
        return False


_installed: Sandbox | None = None


def install(scratch: str) -> Sandbox:
    """The worker's sandbox (one audit hook per process: hooks cannot be removed)."""
    global _installed
    if _installed is None:
        from porter_ext.replay import confine, walls

        own_tmp = (
            os.environ.get(walls.TMP_VARIABLE)
            if confine.current_isolation() == walls.NAMESPACE
            else None
        )
        _installed = Sandbox(os.path.realpath(scratch), own_tmp or None)
        sys.addaudithook(_installed.hook)
        for name in _UNAUDITED:
            setattr(os, name, _audited(getattr(os, name), f"os.{name}"))
        if confine.own_network():  # the kernel's channels are up: no Unix socket after
            walls.refuse_unix_sockets()
    return _installed


def _audited(function: Any, event: str) -> Any:
    """``function`` raising the audit event ``event`` with its arguments first."""

    def audited(*args: Any, **kw: Any) -> Any:
        sys.audit(event, *args)
        return function(*args, **kw)

    audited.__name__, audited.__doc__ = function.__name__, function.__doc__
    return audited


@contextlib.contextmanager
def _ipython_in(namespace: dict, sandbox: Sandbox) -> Iterator[None]:
    """While a replay runs, the worker's IPython works on the replay's namespace (so
    ``%timeit``/``%time``/``%%time`` read and bind the replay's names) and does not run
    shell commands."""
    shell = _shell()
    if shell is None:
        yield
        return
    saved_ns, saved_system, saved_getoutput = shell.user_ns, shell.system, shell.getoutput

    def system(cmd: str, *args: Any, **kw: Any) -> None:
        sandbox.skipped_commands.append(cmd)

    def getoutput(cmd: str, *args: Any, **kw: Any) -> Any:
        sandbox.skipped_commands.append(cmd)
        from IPython.utils.text import SList

        return SList()

    shell.user_ns, shell.system, shell.getoutput = namespace, system, getoutput
    try:
        yield
    finally:
        shell.user_ns, shell.system, shell.getoutput = saved_ns, saved_system, saved_getoutput


def _shell() -> InteractiveShell | None:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    from IPython.core.getipython import get_ipython

    return get_ipython()


def close_figures() -> int:
    """Close every open matplotlib figure; how many there were."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return 0
    count = len(pyplot.get_fignums())
    pyplot.close("all")
    return count


def shell_of(namespace: dict) -> InteractiveShell | None:
    """The running IPython shell whose namespace ``namespace`` is, or None."""
    shell = _shell()
    return shell if shell is not None and shell.user_ns is namespace else None


@contextlib.contextmanager
def close_new_figures() -> Iterator[None]:
    """Close the matplotlib figures the block opens (an in-process replay's plots)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    before = set(pyplot.get_fignums()) if pyplot is not None else set()
    try:
        yield
    finally:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            for number in set(pyplot.get_fignums()) - before:
                pyplot.close(number)


@contextlib.contextmanager
def ipython_namespace(shell: InteractiveShell | None, namespace: dict) -> Iterator[None]:
    """The person's shell working on ``namespace`` for a moment (an in-process replay),
    so that ``%timeit`` merging its namespace into the shell's cannot reach the person's."""
    if shell is None:
        yield
        return
    saved = shell.user_ns
    shell.user_ns = namespace
    try:
        yield
    finally:
        shell.user_ns = saved
