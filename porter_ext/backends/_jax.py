"""JAX: devices from ``jax.devices()`` spelled ``platform:id`` (``cpu:0``, ``cpu:1``, ``gpu:0``).

A second CPU device exists when ``XLA_FLAGS=--xla_force_host_platform_device_count=2``
is set before JAX starts. Traced values (inside ``jit``, ``grad``, ``vmap``) have no
device: they are reported as ``traced``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Backend, ConversionError, DeviceUnavailable, dtype_name, loaded

if TYPE_CHECKING:
    import numpy

#: what JAX makes of 64-bit dtypes while ``jax_enable_x64`` is off
NARROWED = {"float64": "float32", "int64": "int32", "uint64": "uint32", "complex128": "complex64"}


def spell(device: Any) -> str:
    """A JAX device as a spec device string."""
    return f"{device.platform}:{device.id}"


def is_tracer(x: object) -> bool:
    jax = loaded("jax")
    if jax is None:
        return False
    tracer = getattr(jax.core, "Tracer", None)
    return tracer is not None and isinstance(x, tracer)


class JaxBackend(Backend):
    name = "jax"
    title = "JAX"
    module = "jax"
    distribution = "jax"
    extra = "jax"

    def devices(self) -> list[str]:
        if not self.available()[0]:
            return []
        jax = self.lib()
        found = [spell(d) for d in jax.devices()]
        if not found or not found[0].startswith("cpu"):
            found += [spell(d) for d in jax.devices("cpu")]
        default = spell(self.resolve_device(None))
        return [default] + [d for d in found if d != default]

    def unavailable_kinds(self) -> list[tuple[str, str]]:
        if not self.available()[0]:
            return []
        jax = self.lib()
        platforms = {d.platform for d in jax.devices()}
        if "gpu" in platforms or "tpu" in platforms:
            return []
        try:
            jax.devices("gpu")
        except RuntimeError:
            present = ", ".join(sorted(platforms))
            return [("jax:gpu", f"no GPU platform in this jaxlib (platforms present: {present})")]
        return []

    def namespace(self) -> Any:
        self.lib()
        import jax.numpy

        return jax.numpy

    def owns(self, x: object) -> bool:
        jax = loaded("jax")
        return jax is not None and isinstance(x, jax.Array)

    def device_of(self, x: Any) -> str:
        if is_tracer(x):
            return "traced"
        devices = x.devices()
        return ",".join(sorted(spell(d) for d in devices))

    def resolve_device(self, device: str | None) -> Any:
        jax = self.lib()
        if device is None:
            # the person may have set jax.config.update("jax_default_device", ...)
            default = jax.config.jax_default_device
            if default is None:
                return jax.devices()[0]
            return jax.devices(default)[0] if isinstance(default, str) else default
        platform, _, index = device.lower().partition(":")
        try:
            candidates = jax.devices(platform)
        except RuntimeError:
            raise DeviceUnavailable(
                f"jax has no {platform!r} platform (devices: {', '.join(self.devices())})"
            ) from None
        if not index:
            return candidates[0]
        for candidate in candidates:
            if str(candidate.id) == index:
                return candidate
        hint = (
            "; more CPU devices need XLA_FLAGS=--xla_force_host_platform_device_count=N"
            " set before jax is imported"
            if platform == "cpu"
            else ""
        )
        raise DeviceUnavailable(
            f"jax has no device {device!r} (devices: {', '.join(self.devices())}){hint}"
        )

    def narrows(self, dtype: str) -> str | None:
        """What JAX will turn ``dtype`` into, when it changes it (x64 disabled)."""
        jax = self.lib()
        if jax.config.jax_enable_x64:
            return None
        return NARROWED.get(dtype)

    def _check_concrete(self, x: Any) -> None:
        if is_tracer(x):
            raise ConversionError(
                "a traced JAX value (inside jit, grad or vmap) has no data to convert"
            )

    def to_host(self, x: Any) -> numpy.ndarray:
        import numpy as np

        self._check_concrete(x)
        if dtype_name(x) == "bfloat16":
            return np.asarray(x.astype("float32"))
        return np.asarray(x)

    def host_copy(self, x: Any) -> numpy.ndarray:
        import numpy as np

        self._check_concrete(x)
        if dtype_name(x) == "bfloat16":
            x = x.astype("float32")
        return np.array(x, copy=True)
