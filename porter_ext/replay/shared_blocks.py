"""Blocks of shared memory for replay inputs, kept for reuse on both sides.

A fresh block's pages fault in on first touch, which costs as much as copying into them;
a block kept from an earlier cell has its pages already, so capturing inputs into it is a
plain memory copy, and a worker that keeps the block mapped reads it without faults. The
sender keeps a few free blocks (bounded in bytes) and unlinks the rest; a worker keeps
its most recent mappings. Blocks are unlinked by the process that made them, at the
latest when it exits; a block's name carries the process that is to unlink it, so that
blocks of a session that was killed are swept by the next one, whatever became of its pid.

A session's blocks are files in one folder of its own in ``/dev/shm`` (`directory`):
a sealed worker has a private ``/dev/shm`` in which this folder alone is the person's
(see `confine`), so that a replay reaches no other shared-memory file of the person's
and leaves none behind.
"""

from __future__ import annotations

import atexit
import contextlib
import mmap
import os
import secrets
import shutil
import tempfile
import threading

#: free blocks the sender keeps for later cells, in bytes at most
KEPT_BYTES = 1 << 30
#: mappings a receiver keeps open
KEPT_MAPPINGS = 4
_SHM = "/dev/shm"


class Block:
    """A block of shared memory: a file in the session's folder (`directory`), mapped
    (``buf``). Closing it fails with BufferError while arrays still view it."""

    def __init__(self, name: str, create: bool = False, size: int = 0):
        path = os.path.join(directory(create=create), name)
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        fd = os.open(path, flags, 0o600)
        try:
            if create:
                os.ftruncate(fd, size)
            else:
                size = os.fstat(fd).st_size
            self._mmap = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        self.name, self.size, self.path = name, size, path
        self.buf: memoryview | None = memoryview(self._mmap)

    def close(self) -> None:
        if self.buf is not None:
            self.buf.release()
            self.buf = None
        self._mmap.close()

    def unlink(self) -> None:
        with contextlib.suppress(FileNotFoundError):  # unlinked already
            os.unlink(self.path)


_lock = threading.Lock()
_free: list[Block] = []
_mine: dict[str, Block] = {}
_mapped: dict[str, Block] = {}
_closing: list[Block] = []


#: the variable that tells a worker which session owns the blocks it makes
OWNER_VARIABLE = "PORTER_SESSION_OWNER"


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def session_owner(pid: int | None = None) -> str:
    """The name of a porter session: its process and when that started, so that another
    process given the same pid later is not taken for it."""
    pid = os.getpid() if pid is None else pid
    started = _started(pid)
    return f"{pid}_{started}" if started is not None else f"{pid}_"


def owner() -> str:
    """The session whose blocks this process makes: a worker's is the person's process
    that started it (handed over in its environment), else this process."""
    return os.environ.get(OWNER_VARIABLE) or session_owner()


#: the variable that tells a worker where the session's blocks are
FOLDER_VARIABLE = "PORTER_SESSION_BLOCKS"


def directory(create: bool = False) -> str:
    """The folder of the session's blocks, ``/dev/shm/porter_PID_START`` (a worker
    is told it); ``create``: made if missing."""
    folder = os.environ.get(FOLDER_VARIABLE)
    if not folder:
        top = _SHM if os.path.isdir(_SHM) else tempfile.gettempdir()
        folder = os.path.join(top, f"porter_{owner()}")
    if create:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def _name(owner: str) -> str:
    """A block's name says which session is to unlink it (see `sweep`):
    ``porter_PID_STARTxTOKEN``."""
    return f"porter_{owner}x{secrets.token_hex(6)}"


def owner_alive(pid: str, started: str) -> bool:
    """Whether the session of process ``pid`` that started at ``started`` (as
    `session_owner` writes them; an empty ``started``: any) still runs."""
    if not pid.isdigit():
        return True
    if not started.isdigit():  # a name of an older porter: the pid alone tells
        started = ""
    if not os.path.isdir("/proc"):
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    now = _started(int(pid))
    return now is not None and (not started or now == started)


_swept = False


def sweep(force: bool = False) -> None:
    """Unlink the blocks of porter sessions that ended without doing it (killed)."""
    global _swept
    if (_swept and not force) or not os.path.isdir(_SHM):
        return
    _swept = True
    for name in os.listdir(_SHM):
        parts = name.split("_")
        if len(parts) != 3 or parts[0] != "porter":
            continue
        if not owner_alive(parts[1], parts[2].partition("x")[0]):
            path = os.path.join(_SHM, name)
            if os.path.isdir(path) and not os.path.islink(path):  # a session's folder
                shutil.rmtree(path, ignore_errors=True)
                continue
            with contextlib.suppress(OSError):  # a block of an older porter
                os.unlink(path)


def take(size: int) -> Block:
    """A block of at least ``size`` bytes: a kept one that fits, else a new one."""
    size = max(size, 1)
    sweep()
    with _lock:
        fits = [b for b in _free if size <= b.size <= 2 * size + (1 << 20)]
        if fits:
            block = min(fits, key=lambda b: b.size)
            _free.remove(block)
            return block
    block = Block(_name(owner()), create=True, size=size)
    with _lock:
        _mine[block.name] = block
    return block


def fresh(size: int) -> Block:
    """A new block whose receiver, the session that started this worker, unlinks it once
    read (a replay's outputs)."""
    return Block(_name(owner()), create=True, size=max(size, 1))


def give_back(block: Block) -> None:
    """A block no receiver reads any more: kept for a later cell, or unlinked."""
    with _lock:
        if sum(b.size for b in _free) + block.size <= KEPT_BYTES:
            _free.append(block)
            return
        _mine.pop(block.name, None)
    _unlink(block)


def _unlink(block: Block) -> None:
    try:
        block.close()
    except BufferError:  # an array still views it: the name goes, the mapping later
        _closing.append(block)
    block.unlink()


def mapped(name: str) -> Block:
    """The block ``name`` made by another process, mapped here (kept open for its next use)."""
    with _lock:
        block = _mapped.pop(name, None)
    if block is None:
        block = Block(name)
    with _lock:
        _mapped[name] = block
        old = list(_mapped)[:-KEPT_MAPPINGS]
        for stale in old:
            _closing.append(_mapped.pop(stale))
    close_unused()
    return block


def close_later(block: Block) -> None:
    """Close ``block`` now, or once the arrays that still view it are gone."""
    try:
        block.close()
    except BufferError:
        with _lock:
            _closing.append(block)


def maps_privately(name: str | None) -> bool:
    """Whether the block ``name`` can be mapped copy-on-write here (see
    `mapped_privately`): where shared memory is a file (Linux)."""
    return name is not None and os.path.exists(os.path.join(directory(), name))


def mapped_privately(name: str) -> mmap.mmap:
    """The block ``name`` mapped copy-on-write for one reader: writes copy the pages they
    touch, in this process only, so several workers read one block without a copy each.
    Never kept (a later cell's data in a reused block must not meet pages copied here);
    unmapped when the last array viewing it goes."""
    fd = os.open(os.path.join(directory(), name), os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        return mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)


def close_unused() -> None:
    """Close the mappings let go of whose arrays are gone.

    Under the lock: a worker's thread reading an answer and the cell's thread letting
    go of outputs both come here, and a block closed twice closes its file descriptor
    twice, the second time under another block that took the number meanwhile."""
    with _lock:
        for block in list(_closing):
            try:
                block.close()
            except BufferError:
                continue
            _closing.remove(block)


@atexit.register
def _unlink_all() -> None:
    with _lock:
        blocks = list(_mine.values())
        _mine.clear()
        _free.clear()
    for block in blocks:
        _unlink(block)
    if OWNER_VARIABLE not in os.environ:
        # the session itself (not one of its workers): its folder is its to remove,
        # answers of its workers that it never read included
        shutil.rmtree(directory(), ignore_errors=True)
