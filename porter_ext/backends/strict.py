"""array-api-strict: the standard and nothing else, on NumPy, with named fake devices.

Devices are spelled by their names as ``array_api_strict.Device`` takes them:
``CPU_DEVICE`` (the default), ``device1``, ``device2`` and whatever else the installed
version lists (``no_float64``, ``no_x64``). ``cpu`` is accepted as an alias of
``CPU_DEVICE``. Every fake device reports DLPack device ``(1, 0)``, so arrays leave or
enter a non-default device only through ``to_device`` / ``asarray(..., device=)``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .base import Backend, ConversionError, DeviceUnavailable, Namespace, loaded
from .dlpack import host_view
from .numpy import NumpyBackend

if TYPE_CHECKING:
    import numpy

DEFAULT = "CPU_DEVICE"


def device_name(device: Any) -> str:
    """The name of an ``array_api_strict.Device`` (``"device1"``)."""
    name = getattr(device, "_device", None)  # a private attribute: repr() when it goes
    if isinstance(name, str):
        return name
    match = re.search(r"Device\('([^']*)'\)", repr(device))
    return match.group(1) if match else str(device)


class StrictBackend(Backend):
    name = "strict"
    title = "array-api-strict"
    module = "array_api_strict"
    distribution = "array-api-strict"
    extra = "strict"
    aliases = ("array-api-strict",)
    roots = ("array_api_strict",)
    qualname_prefix = "array_api_strict"
    array_type_name = "Array"
    namespaces = (
        Namespace("array_api_strict"),
        Namespace("array_api_strict.linalg", "linalg."),
        Namespace("array_api_strict.fft", "fft."),
    )
    api_modules = frozenset({"array_api_strict"})
    host_only = True  # its devices are names for one host

    def devices(self) -> list[str]:
        if not self.available()[0]:
            return []
        xps = self.lib()
        names = [device_name(d) for d in xps.__array_namespace_info__().devices()]
        if DEFAULT in names:
            names.remove(DEFAULT)
        return [DEFAULT, *names]

    def namespace(self) -> Any:
        return self.lib()

    def is_device(self, obj: object) -> bool:
        return type(obj).__name__ == "Device"  # array_api_strict.Device

    def array_types(self) -> tuple[type, ...]:
        # the Array class is not exported at the top level of array_api_strict
        array_class = getattr(loaded("array_api_strict._array_object"), "Array", None)
        return (array_class,) if array_class is not None else ()

    def device_of(self, x: Any) -> str:
        return device_name(x.device)

    def copy(self, x: Any) -> Any:
        return self.lib().asarray(x, copy=True, device=x.device)

    def dlpack_ready(self, x: Any, trail: Any) -> Any:
        """An array on a fake device moved to CPU_DEVICE (a copy): every fake device
        reports DLPack device ``(1, 0)``, so DLPack cannot be trusted with them."""
        if device_name(x.device) == DEFAULT:
            return x
        trail.copied(
            f"array-api-strict arrays leave {device_name(x.device)} only through"
            " to_device, which copies"
        )
        return self.on_default(x)

    def data_pointer(self, x: Any) -> int | None:
        import numpy as np

        return np.from_dlpack(x).ctypes.data

    def import_array(self, x: Any, source: Backend, device: Any, trail: Any) -> Any:
        xps = self.lib()
        name = device_name(device)
        if source is self:
            if device_name(x.device) == name:
                return x
            trail.copied(f"array-api-strict's to_device copies ({source.device_of(x)} → {name})")
            return x.to_device(device)
        host = host_view(x, source, trail)
        if not host.dtype.isnative:
            trail.copied("array-api-strict (and DLPack) take native byte order only")
            host = NumpyBackend().host_copy(host)
        try:
            if name == DEFAULT:
                return xps.from_dlpack(host)
            return xps.asarray(host, device=device)
        except TypeError as error:
            raise ConversionError(f"array-api-strict cannot hold this array: {error}") from None

    def resolve_device(self, device: str | None) -> Any:
        xps = self.lib()
        if device is None or device.lower() in ("cpu", DEFAULT.lower()):
            return xps.Device(DEFAULT)
        if device not in self.devices():
            raise DeviceUnavailable(
                f"array-api-strict has no device {device!r} (devices: {', '.join(self.devices())})"
            )
        return xps.Device(device)

    def on_default(self, x: Any) -> Any:
        """``x`` on ``CPU_DEVICE``: itself when already there, else a ``to_device`` copy."""
        if device_name(x.device) == DEFAULT:
            return x
        return x.to_device(self.resolve_device(DEFAULT))

    def to_host(self, x: Any) -> numpy.ndarray:
        import numpy as np

        return np.from_dlpack(self.on_default(x))

    def host_copy(self, x: Any) -> numpy.ndarray:
        import numpy as np

        on_default = self.on_default(x)  # to_device copies, so only a CPU_DEVICE array shares
        host = np.from_dlpack(on_default)
        return host if on_default is not x else np.array(host, copy=True)
