"""NumPy: always there, one device (``cpu``), namespace ``array_api_compat.numpy``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Backend, DeviceUnavailable, loaded

if TYPE_CHECKING:
    import numpy


class NumpyBackend(Backend):
    name = "numpy"
    title = "NumPy"
    module = "numpy"
    distribution = "numpy"
    extra = "all"

    def devices(self) -> list[str]:
        return ["cpu"]

    def namespace(self) -> Any:
        import array_api_compat.numpy

        return array_api_compat.numpy

    def owns(self, x: object) -> bool:
        np = loaded("numpy")
        return np is not None and isinstance(x, np.ndarray | np.generic)

    def device_of(self, x: Any) -> str:
        return "cpu"

    def resolve_device(self, device: str | None) -> str:
        if device is None or device.lower() == "cpu":
            return "cpu"
        raise DeviceUnavailable(f"numpy has only the 'cpu' device, not {device!r}")

    def to_host(self, x: Any) -> numpy.ndarray:
        import numpy as np

        return np.asarray(x)

    def host_copy(self, x: Any) -> numpy.ndarray:
        import numpy as np

        x = np.asarray(x)
        # native byte order: DLPack and the other libraries accept nothing else
        return np.array(x, dtype=x.dtype.newbyteorder("="), copy=True, order="C")


def aligned_empty(shape: tuple[int, ...], dtype: Any, alignment: int = 64) -> numpy.ndarray:
    """An uninitialised NumPy array whose buffer starts on an ``alignment``-byte boundary.

    JAX imports a CPU buffer through DLPack without a copy only when it is 64-byte
    aligned; NumPy guarantees 16.
    """
    import numpy as np

    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(max(nbytes, dtype.itemsize) + alignment, dtype=np.uint8)
    offset = -raw.ctypes.data % alignment
    # slice a non-empty range first: an empty slice keeps the unaligned start pointer
    start = raw[offset : offset + max(nbytes, dtype.itemsize)]
    return start[:nbytes].view(dtype).reshape(shape)


def aligned_copy(x: Any, alignment: int = 64) -> numpy.ndarray:
    """A C-contiguous copy of ``x`` in an ``alignment``-byte aligned buffer."""
    import numpy as np

    x = np.asarray(x)
    out = aligned_empty(x.shape, x.dtype, alignment)
    out[...] = x
    return out


def is_aligned(x: numpy.ndarray, alignment: int = 64) -> bool:
    return x.ctypes.data % alignment == 0
