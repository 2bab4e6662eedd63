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

from .base import Backend, DeviceUnavailable, loaded

if TYPE_CHECKING:
    import numpy

DEFAULT = "CPU_DEVICE"


def device_name(device: Any) -> str:
    """The name of an ``array_api_strict.Device`` (``"device1"``)."""
    name = getattr(device, "_device", None)
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

    def owns(self, x: object) -> bool:
        if loaded("array_api_strict") is None:
            return False
        # the Array class is not exported at the top level of array_api_strict
        array_class = getattr(loaded("array_api_strict._array_object"), "Array", None)
        if array_class is not None:
            return isinstance(x, array_class)
        return type(x).__module__.startswith("array_api_strict.")

    def device_of(self, x: Any) -> str:
        return device_name(x.device)

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
