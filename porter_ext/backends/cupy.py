"""CuPy: NVIDIA (or ROCm) GPUs only, devices spelled ``cuda:N``, namespace through compat.

CuPy is available only when it imports *and* sees a device
(``cupy.cuda.runtime.getDeviceCount()``), so a CPU machine with CuPy installed reports
it unavailable with the reason instead of failing later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Backend, DeviceUnavailable, Namespace, indexed_device_error, loaded
from .dlpack import DL_GPU, REFUSED, dlpack_device, host_view, why
from .numpy import NumpyBackend

if TYPE_CHECKING:
    import numpy


class CupyBackend(Backend):
    name = "cupy"
    title = "CuPy"
    module = "cupy"
    distribution = "cupy"
    extra = "cupy"
    aliases = ("cp",)
    roots = ("cupy", "cupyx")
    qualname_prefix = "cupy"
    array_type_name = "ndarray"
    namespaces = (
        Namespace("cupy"),
        Namespace("cupy.linalg", "linalg."),
        Namespace("cupy.fft", "fft."),
        Namespace("cupy.cuda", "cuda."),
        Namespace("array_api_compat.cupy"),
        Namespace("array_api_compat.cupy.linalg", "linalg."),
        Namespace("array_api_compat.cupy.fft", "fft."),
    )
    api_modules = frozenset({"array_api_compat.cupy"})
    # cupy.asnumpy, x.get(); copy_to_host is numba's spelling of x.get(), met in CuPy code
    moving_calls = frozenset({"asnumpy", "get", "copy_to_host", "item", "tolist"})
    creation_calls = NumpyBackend.creation_calls
    creation_from_array = NumpyBackend.creation_from_array

    def is_device(self, obj: object) -> bool:
        return type(obj).__name__ == "Device"  # cupy.cuda.Device

    def device_type(self, obj: object) -> str | None:
        kind = type(obj)
        return "cuda" if kind.__module__.startswith("cupy") and kind.__name__ == "Device" else None

    def version(self) -> str | None:
        module = loaded("cupy")
        if module is not None:
            return module.__version__
        import importlib.metadata

        for distribution in ("cupy", "cupy-cuda12x", "cupy-cuda11x", "cupy-rocm-5-0"):
            try:
                return importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                continue
        return None

    def _device_count(self) -> tuple[int, str | None]:
        import cupy

        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as error:  # CUDARuntimeError without a driver
            return 0, f"cupy sees no GPU (getDeviceCount() raised {type(error).__name__}: {error})"
        if count == 0:
            return 0, "cupy sees no GPU (cupy.cuda.runtime.getDeviceCount() is 0)"
        return count, None

    def available(self) -> tuple[bool, str | None]:
        ok, reason = super().available()
        if not ok:
            return ok, reason
        count, reason = self._device_count()
        return count > 0, reason

    def devices(self) -> list[str]:
        if not self.available()[0]:
            return []
        import cupy

        current = cupy.cuda.runtime.getDevice()
        count, _ = self._device_count()
        return [f"cuda:{current}"] + [f"cuda:{i}" for i in range(count) if i != current]

    def namespace(self) -> Any:
        self.lib()
        import array_api_compat.cupy

        return array_api_compat.cupy

    def array_types(self) -> tuple[type, ...]:
        cupy = loaded("cupy")
        return (cupy.ndarray,) if cupy is not None else ()

    def copy(self, x: Any) -> Any:
        return x.copy()

    def import_array(self, x: Any, source: Backend, device: Any, trail: Any) -> Any:
        cupy = self.lib()
        with device:
            if source is self:
                if x.device.id == device.id:
                    return x
                trail.copied(f"moved cuda:{x.device.id} → cuda:{device.id} (peer copy)")
                return cupy.array(x, copy=True)
            ready = source.dlpack_ready(x, trail)
            dl_device = dlpack_device(ready)
            if dl_device is not None and dl_device[0] in DL_GPU and dl_device[1] == device.id:
                try:
                    return cupy.from_dlpack(ready)  # CuPy passes its current stream
                except REFUSED as error:
                    trail.copied(f"DLPack import into CuPy failed ({why(error)})")
            host = host_view(x, source, trail)
            trail.copied(f"copied from {source.device_of(x)} to cuda:{device.id}")
            return cupy.asarray(host)

    def device_of(self, x: Any) -> str:
        return f"cuda:{x.device.id}"

    def misspelled_device(self, device: str) -> str | None:
        return indexed_device_error("cupy", device, "cuda:0", ("cuda", "gpu"))

    def resolve_device(self, device: str | None) -> Any:
        cupy = self.lib()
        if device is None:
            return cupy.cuda.Device()
        misspelled = self.misspelled_device(device)
        if misspelled is not None:
            raise DeviceUnavailable(misspelled)
        index = device.partition(":")[2]
        count, _ = self._device_count()
        number = int(index or 0)
        if number >= count:
            raise DeviceUnavailable(f"cupy sees {count} GPU(s); there is no cuda:{number}")
        return cupy.cuda.Device(number)

    def to_host(self, x: Any) -> numpy.ndarray:
        return x.get()

    def host_copy(self, x: Any) -> numpy.ndarray:
        return x.get()
