"""Blocks of shared memory for replay inputs, kept for reuse on both sides.

A fresh block's pages fault in on first touch, which costs as much as copying into them;
a block kept from an earlier cell has its pages already, so capturing inputs into it is a
plain memory copy, and a worker that keeps the block mapped reads it without faults. The
sender keeps a few free blocks (bounded in bytes) and unlinks the rest; a worker keeps
its most recent mappings. Blocks are unlinked by the process that made them, at the
latest when it exits; a block's name carries the process that is to unlink it, so that
blocks of a session that was killed are swept by the next one, whatever became of its pid.
"""

from __future__ import annotations

import atexit
import contextlib
import mmap
import os
import secrets
import threading
from multiprocessing import resource_tracker, shared_memory

#: free blocks the sender keeps for later cells, in bytes at most
KEPT_BYTES = 1 << 30
#: mappings a receiver keeps open
KEPT_MAPPINGS = 4
_SHM = "/dev/shm"

_lock = threading.Lock()
_free: list[shared_memory.SharedMemory] = []
_mine: dict[str, shared_memory.SharedMemory] = {}
_mapped: dict[str, shared_memory.SharedMemory] = {}
_closing: list[shared_memory.SharedMemory] = []


def _untracked(block: shared_memory.SharedMemory) -> shared_memory.SharedMemory:
    # porter unlinks its blocks itself: Python 3.11's tracker would unlink them under a
    # receiver that is still reading, or warn about blocks it did not see unlinked
    resource_tracker.unregister(block._name, "shared_memory")  # type: ignore[attr-defined]
    return block


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
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(_SHM, name))


def take(size: int) -> shared_memory.SharedMemory:
    """A block of at least ``size`` bytes: a kept one that fits, else a new one."""
    size = max(size, 1)
    sweep()
    with _lock:
        fits = [b for b in _free if size <= b.size <= 2 * size + (1 << 20)]
        if fits:
            block = min(fits, key=lambda b: b.size)
            _free.remove(block)
            return block
    block = _untracked(shared_memory.SharedMemory(name=_name(owner()), create=True, size=size))
    with _lock:
        _mine[block.name] = block
    return block


def fresh(size: int) -> shared_memory.SharedMemory:
    """A new block whose receiver, the session that started this worker, unlinks it once
    read (a replay's outputs)."""
    name = _name(owner())
    return _untracked(shared_memory.SharedMemory(name=name, create=True, size=max(size, 1)))


def give_back(block: shared_memory.SharedMemory) -> None:
    """A block no receiver reads any more: kept for a later cell, or unlinked."""
    with _lock:
        if sum(b.size for b in _free) + block.size <= KEPT_BYTES:
            _free.append(block)
            return
        _mine.pop(block.name, None)
    _unlink(block)


def _unlink(block: shared_memory.SharedMemory) -> None:
    try:
        block.close()
    except BufferError:  # an array still views it: the name goes, the mapping later
        _closing.append(block)
    with contextlib.suppress(FileNotFoundError):  # unlinked already
        shared_memory._posixshmem.shm_unlink(block._name)  # type: ignore[attr-defined]


def mapped(name: str) -> shared_memory.SharedMemory:
    """The block ``name`` made by another process, mapped here (kept open for its next use)."""
    with _lock:
        block = _mapped.pop(name, None)
    if block is None:
        block = _untracked(shared_memory.SharedMemory(name=name, create=False))
    with _lock:
        _mapped[name] = block
        old = list(_mapped)[:-KEPT_MAPPINGS]
        for stale in old:
            _closing.append(_mapped.pop(stale))
    close_unused()
    return block


def close_later(block: shared_memory.SharedMemory) -> None:
    """Close ``block`` now, or once the arrays that still view it are gone."""
    try:
        block.close()
    except BufferError:
        with _lock:
            _closing.append(block)


def maps_privately(name: str | None) -> bool:
    """Whether the block ``name`` can be mapped copy-on-write here (see
    `mapped_privately`): where shared memory is a file (Linux)."""
    return name is not None and os.path.exists(os.path.join(_SHM, name.lstrip("/")))


def mapped_privately(name: str) -> mmap.mmap:
    """The block ``name`` mapped copy-on-write for one reader: writes copy the pages they
    touch, in this process only, so several workers read one block without a copy each.
    Never kept (a later cell's data in a reused block must not meet pages copied here);
    unmapped when the last array viewing it goes."""
    fd = os.open(os.path.join(_SHM, name.lstrip("/")), os.O_RDONLY)
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
    if OWNER_VARIABLE not in os.environ and os.path.isdir(_SHM):
        # the session itself (not one of its workers): every block named after it is its
        # to unlink, answers of its workers that it never read included
        prefix = f"porter_{session_owner()}x"
        for name in os.listdir(_SHM):
            if name.startswith(prefix):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(_SHM, name))
