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
        """The accelerator kind this build was made for (``cuda`` when it says nothing)."""
        torch = self.lib()
        xpu = getattr(torch, "xpu", None)
        if xpu is not None and getattr(xpu, "_is_compiled", lambda: False)():
            return "xpu"
        if torch.backends.mps.is_built():
            return "mps"
        return "cuda"

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
        torch = self.lib()
        x = self._exportable(x)
        if x.dtype == torch.bfloat16:
            x = x.float()
        return x.numpy()

    def host_copy(self, x: Any) -> numpy.ndarray:
        torch = self.lib()
        host = self._exportable(x)
        if host.dtype == torch.bfloat16:
            return host.float().numpy()
        if host.data_ptr() != x.data_ptr() or host.device != x.device:
            return host.numpy()  # already a fresh buffer
        return host.numpy().copy()
