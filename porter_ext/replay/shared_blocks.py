"""Blocks of shared memory for replay inputs, kept for reuse on both sides.

A fresh block's pages fault in on first touch, which costs as much as copying into them;
a block kept from an earlier cell has its pages already, so capturing inputs into it is a
plain memory copy, and a worker that keeps the block mapped reads it without faults. The
sender keeps a few free blocks (bounded in bytes) and unlinks the rest; a worker keeps
its most recent mappings. Blocks are unlinked by the process that made them, at the
latest when it exits; a block's name carries the process that is to unlink it, so that
blocks of a process that was killed are swept by the next one.
"""

from __future__ import annotations

import atexit
import contextlib
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


def _name(owner: int) -> str:
    """A block's name says which process is to unlink it (see `_sweep`)."""
    return f"porter_{owner}_{secrets.token_hex(6)}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_swept = False


def _sweep() -> None:
    """Unlink the blocks of porter processes that ended without doing it (killed)."""
    global _swept
    if _swept or not os.path.isdir(_SHM):
        return
    _swept = True
    for name in os.listdir(_SHM):
        parts = name.split("_")
        ours = len(parts) == 3 and parts[0] == "porter" and parts[1].isdigit()
        if ours and not _alive(int(parts[1])):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(_SHM, name))


def take(size: int) -> shared_memory.SharedMemory:
    """A block of at least ``size`` bytes: a kept one that fits, else a new one."""
    size = max(size, 1)
    _sweep()
    with _lock:
        fits = [b for b in _free if size <= b.size <= 2 * size + (1 << 20)]
        if fits:
            block = min(fits, key=lambda b: b.size)
            _free.remove(block)
            return block
    block = _untracked(shared_memory.SharedMemory(name=_name(os.getpid()), create=True, size=size))
    with _lock:
        _mine[block.name] = block
    return block


def fresh(size: int) -> shared_memory.SharedMemory:
    """A new block whose receiver, this process's parent, unlinks it once read (a
    replay's outputs)."""
    name = _name(os.getppid())
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


def close_unused() -> None:
    """Close the mappings let go of whose arrays are gone."""
    with _lock:
        pending = list(_closing)
    for block in pending:
        try:
            block.close()
        except BufferError:
            continue
        with _lock:
            _closing.remove(block)


@atexit.register
def _unlink_all() -> None:
    with _lock:
        blocks = list(_mine.values())
        _mine.clear()
        _free.clear()
    for block in blocks:
        _unlink(block)
