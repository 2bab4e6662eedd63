"""PyTorch: ``cpu`` plus accelerators found through the device-agnostic ``torch.accelerator``.

``meta`` tensors carry no data, so ``meta`` is not a replay device. porter never calls
``torch.cuda.*``: CUDA, ROCm (spelled ``cuda``), XPU and MPS all come through
``torch.accelerator``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Backend, ConversionError, DeviceUnavailable, loaded

if TYPE_CHECKING:
    import numpy

NO_ACCELERATOR = "no accelerator (torch.accelerator.is_available() is False)"


class TorchBackend(Backend):
    name = "torch"
    title = "PyTorch"
    module = "torch"
    distribution = "torch"
    extra = "torch"

    def _accelerator(self) -> tuple[str, int] | None:
        """(device type, count) of the accelerator this torch sees, or None."""
        torch = self.lib()
        if not torch.accelerator.is_available():
            return None
        kind = torch.accelerator.current_accelerator()
        count = torch.accelerator.device_count()
        return (kind.type, count) if kind is not None and count > 0 else None

    def devices(self) -> list[str]:
        if not self.available()[0]:
            return []
        torch = self.lib()
        found = ["cpu"]
        accelerator = self._accelerator()
        if accelerator is not None:
            kind, count = accelerator
            found += [f"{kind}:{i}" for i in range(count)]
        default = self._spell(torch.get_default_device())
        if default in found:
            found.remove(default)
            found.insert(0, default)
        return found

    def unavailable_kinds(self) -> list[tuple[str, str]]:
        if not self.available()[0] or self._accelerator() is not None:
            return []
        return [(f"torch:{self._expected_accelerator()}", NO_ACCELERATOR)]

    def _expected_accelerator(self) -> str:
        """The accelerator kind to name in the missing entry: ``mps`` on Apple builds."""
        return "mps" if self.lib().backends.mps.is_built() else "cuda"

    def namespace(self) -> Any:
        self.lib()
        import array_api_compat.torch

        return array_api_compat.torch

    def owns(self, x: object) -> bool:
        torch = loaded("torch")
        return torch is not None and isinstance(x, torch.Tensor)

    def _spell(self, device: Any) -> str:
        torch = self.lib()
        device = torch.device(device)
        if device.type == "cpu":
            return "cpu"
        if device.index is None:
            return f"{device.type}:{torch.accelerator.current_device_index()}"
        return str(device)

    def device_of(self, x: Any) -> str:
        return str(x.device)

    def resolve_device(self, device: str | None) -> Any:
        torch = self.lib()
        if device is None:
            device = self._spell(torch.get_default_device())
        if device == "cpu":
            return torch.device("cpu")
        try:
            target = torch.device(device)
        except (RuntimeError, TypeError, ValueError) as error:
            raise DeviceUnavailable(f"torch does not know the device {device!r}: {error}") from None
        if target.type == "cpu":
            return torch.device("cpu")
        if target.type == "meta":
            raise DeviceUnavailable("torch 'meta' tensors carry no data: not a replay device")
        accelerator = self._accelerator()
        if accelerator is None:
            raise DeviceUnavailable(f"torch:{device}: {NO_ACCELERATOR}")
        kind, count = accelerator
        if target.type != kind:
            raise DeviceUnavailable(f"torch's accelerator is {kind}, not {target.type}")
        index = torch.accelerator.current_device_index() if target.index is None else target.index
        if index >= count:
            raise DeviceUnavailable(
                f"torch sees {count} {kind} device(s); there is no {kind}:{index}"
            )
        return torch.device(kind, index)

    def _exportable(self, x: Any) -> Any:
        """``x`` detached, on the host, with conjugate/negative bits resolved."""
        if x.device.type == "meta":
            raise ConversionError("a torch 'meta' tensor carries no data to convert")
        x = x.detach()
        if x.device.type != "cpu":
            x = x.cpu()
        return x.resolve_conj().resolve_neg()

    def to_host(self, x: Any) -> numpy.ndarray:
        tensor = self._exportable(x)
        try:
            return tensor.numpy()
        except TypeError:  # bfloat16, float8, complex32: NumPy has no such dtype
            return tensor.to(
                self.lib().complex64 if tensor.is_complex() else self.lib().float32
            ).numpy()

    def host_copy(self, x: Any) -> numpy.ndarray:
        host = self.to_host(x)
        if x.device.type == "cpu" and host.ctypes.data == x.data_ptr():
            return host.copy()
        return host  # cast, resolved or moved: already a fresh buffer
