"""NumPy: always there, one device (``cpu``), namespace ``array_api_compat.numpy``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Backend, DeviceUnavailable, Namespace, loaded
from .dlpack import host_view

if TYPE_CHECKING:
    import numpy


class NumpyBackend(Backend):
    name = "numpy"
    title = "NumPy"
    module = "numpy"
    distribution = "numpy"
    extra = "all"
    aliases = ("np",)
    roots = ("numpy",)
    qualname_prefix = "numpy"
    array_type_name = "ndarray"
    fixed_device = "cpu"
    elides_temporaries = True
    host_only = True
    moving_calls = frozenset({"item", "tolist"})
    creation_calls = frozenset(
        {"array", "logspace", "identity", "tri", "rand", "randn", "randint", "normal", "uniform"}
    )
    creation_from_array = frozenset({"array"})
    # numpy.allclose / numpy.isclose by default, the same for every dtype
    testing_tolerances = dict.fromkeys(("float16", "bfloat16", "float32", "float64"), (1e-5, 1e-8))
    namespaces = (
        Namespace("numpy"),
        Namespace("numpy.linalg", "linalg."),
        Namespace("numpy.fft", "fft."),
        Namespace("numpy.random", "random."),
        Namespace("array_api_compat.numpy"),
        Namespace("array_api_compat.numpy.linalg", "linalg."),
        Namespace("array_api_compat.numpy.fft", "fft."),
    )
    api_modules = frozenset({"array_api_compat.numpy"})

    initial_process_state = {
        "errors": {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
    }

    def process_state(self) -> dict[str, Any] | None:
        np = loaded("numpy")
        return None if np is None else {"errors": np.geterr()}

    def set_process_state(self, state: dict[str, Any]) -> None:
        self.lib().seterr(**state["errors"])

    def random_state(self) -> Any:
        np = loaded("numpy")  # the legacy global generator behind np.random.*
        return None if np is None else np.random.get_state()

    def set_random_state(self, state: Any) -> None:
        self.lib().random.set_state(state)

    def own_semantics(self, x: Any) -> str | None:
        np = loaded("numpy")
        if np is None:
            return None
        for klass, name in (
            (np.ma.MaskedArray, "numpy.ma.MaskedArray (its mask)"),
            (np.matrix, "numpy.matrix (`*` is its matrix product)"),
            (np.recarray, "numpy.recarray (its fields as attributes)"),
            (np.char.chararray, "numpy.char.chararray (its string operations)"),
        ):
            if isinstance(x, klass):
                return name
        return None

    def is_namespace(self, module_name: str) -> bool:
        if module_name == "numpy":  # NumPy 2 implements the standard in its main namespace
            np = loaded("numpy")
            return np is not None and int(np.__version__.split(".")[0]) >= 2
        return super().is_namespace(module_name)

    def devices(self) -> list[str]:
        return ["cpu"]

    def namespace(self) -> Any:
        import array_api_compat.numpy

        return array_api_compat.numpy

    def array_types(self) -> tuple[type, ...]:
        np = loaded("numpy")
        return (np.ndarray, np.generic) if np is not None else ()

    def scalar_types(self) -> tuple[type, ...]:
        np = loaded("numpy")
        return (np.generic,) if np is not None else ()

    def device_of(self, x: Any) -> str:
        return "cpu"

    def copy(self, x: Any) -> Any:
        import numpy as np

        return np.array(x, copy=True)

    def export_ready(self, x: Any, trail: Any) -> Any:
        import numpy as np

        if isinstance(x, np.generic):
            trail.copied("a NumPy scalar has no buffer to share: made a 0-d array")
            return aligned_copy(np.asarray(x))
        return x

    def data_pointer(self, x: Any) -> int | None:
        return x.ctypes.data

    def import_array(self, x: Any, source: Backend, device: Any, trail: Any) -> Any:
        return host_view(x, source, trail)

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
