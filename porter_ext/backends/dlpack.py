"""The DLPack rules every adapter shares: what a conversion did, and host views.

Streams: for a CUDA/ROCm producer the consumer's ``from_dlpack`` (torch, CuPy, JAX)
passes its own current stream to ``__dlpack__`` (1 for CUDA's legacy default stream);
porter never calls ``__dlpack__`` itself on a GPU producer, so it never passes a stream
to a CPU producer and never asks for ``-1`` (no synchronisation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Backend, Conversion, dtype_name

if TYPE_CHECKING:
    import numpy

DL_CPU = 1
DL_GPU = {2: "CUDA", 10: "ROCm"}  # kDLCUDA, kDLROCM
#: what DLPack importers raise when they refuse an array
REFUSED = (BufferError, RuntimeError, TypeError, ValueError)


class Trail:
    """What a conversion did: the copies it made (with reasons) and its notes."""

    def __init__(self) -> None:
        self.copies: list[str] = []
        self.notes: list[str] = []

    def copied(self, reason: str) -> None:
        self.copies.append(reason)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def result(self, value: object) -> Conversion:
        if self.copies:
            return Conversion(value, "copy", "; ".join(self.copies), False, tuple(self.notes))
        return Conversion(value, "zero_copy", None, True, tuple(self.notes))


def why(error: BaseException, limit: int = 160) -> str:
    """An exception's first line, short enough for a report cell."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dlpack_device(x: Any) -> tuple[int, int] | None:
    """The producer's ``__dlpack_device__()``, or None when it has none or refuses."""
    try:
        kind, index = x.__dlpack_device__()
    except (AttributeError, *REFUSED):
        return None
    return int(kind), int(index)


def host_view(x: Any, source: Backend, trail: Trail) -> numpy.ndarray:
    """``x`` as a host NumPy array: a DLPack view when it is on the CPU, else a copy."""
    import numpy as np

    if isinstance(x, np.ndarray):
        return x
    x = source.dlpack_ready(x, trail)
    if dtype_name(x) == "bfloat16":
        trail.copied("DLPack cannot carry bfloat16 into NumPy")
        return host_copy(x, source, trail)
    device = dlpack_device(x)
    if device is None or device[0] != DL_CPU:
        trail.copied(f"the {source.name} array is on {source.device_of(x)}; NumPy is host-only")
        return host_copy(x, source, trail)
    try:
        host = np.from_dlpack(x)
    except REFUSED as error:
        trail.copied(f"DLPack export to NumPy failed ({why(error)}); copied through the host")
        return host_copy(x, source, trail)
    if not host.flags.writeable:
        trail.note(f"read-only: a NumPy view of an immutable {source.title} buffer")
    return host


def host_copy(x: Any, source: Backend, trail: Trail) -> numpy.ndarray:
    """The source adapter's host copy, noting a dtype NumPy lacks (bfloat16 → float32)."""
    host = source.host_copy(x)
    before, after = dtype_name(x), dtype_name(host)
    if before != after:
        trail.note(f"{before} became {after}: NumPy has no {before}")
    return host
