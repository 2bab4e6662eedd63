"""Shared set-up for the benchmarks."""

from __future__ import annotations

import ctypes


def steady_allocator() -> None:
    """Keep freed 4 MB buffers in the heap (glibc only, best effort): otherwise each run
    may get fresh pages from the kernel, and on a loaded machine their page faults cost
    more than the cell's arithmetic, in whichever run happens to get them."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: 4 MB blocks come from the heap
    libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: and stay there once freed
