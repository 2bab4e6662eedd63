"""JAX: devices from ``jax.devices()`` spelled ``platform:id`` (``cpu:0``, ``cpu:1``, ``gpu:0``).

A second CPU device exists when ``XLA_FLAGS=--xla_force_host_platform_device_count=2``
is set before JAX starts. Traced values (inside ``jit``, ``grad``, ``vmap``) have no
device: they are reported as ``traced``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .base import (
    TRACED,
    Backend,
    ConversionError,
    DeviceUnavailable,
    Namespace,
    dtype_name,
    indexed_device_error,
    loaded,
)
from .dlpack import DL_CPU, REFUSED, dlpack_device, why

if TYPE_CHECKING:
    import numpy

#: what JAX makes of 64-bit dtypes while ``jax_enable_x64`` is off
#: the most CPU devices a worker is given (``jax:cpu:N`` with N below it): each is a
#: device XLA makes at start, and a count past what an int holds crashes it
MAX_HOST_DEVICES = 256
NARROWED = {"float64": "float32", "int64": "int32", "uint64": "uint32", "complex128": "complex64"}


#: JAX transformations and other calls that build functions rather than compute arrays
TRANSFORMATIONS = frozenset(
    {
        "jit",
        "grad",
        "vmap",
        "pmap",
        "value_and_grad",
        "jacfwd",
        "jacrev",
        "hessian",
        "checkpoint",
        "remat",
        "custom_jvp",
        "custom_vjp",
        "named_call",
        "make_jaxpr",
        "eval_shape",
        "tree_map",
        "tree_util",
        "disable_jit",
        "config",
        "ensure_compile_time_eval",
    }
)
_SPELLED: dict[Any, str] = {}


def spell(device: Any) -> str:
    """A JAX device as a spec device string (``cpu:1``)."""
    spelled = _SPELLED.get(device)
    if spelled is None:
        spelled = _SPELLED[device] = f"{device.platform}:{device.id}"
    return spelled


def tracer_type() -> type | None:
    """JAX's Tracer class: public as ``jax.core.Tracer``; from jax 0.8.2 tracers are no
    longer ``jax.Array`` subclasses, so they are recognised through it."""
    core = loaded("jax._src.core")
    if core is not None:
        return getattr(core, "Tracer", None)
    jax = loaded("jax")
    return getattr(getattr(jax, "core", None), "Tracer", None) if jax is not None else None


def is_tracer(x: object) -> bool:
    tracer = tracer_type()
    return tracer is not None and isinstance(x, tracer)


class JaxBackend(Backend):
    name = "jax"
    title = "JAX"
    module = "jax"
    distribution = "jax"
    extra = "jax"
    aliases = ("jnp", "jax.numpy")
    roots = ("jax", "jaxlib")
    qualname_prefix = "jax.numpy"
    array_type_name = "Array"
    namespaces = (
        Namespace("jax.numpy"),
        Namespace("jax.numpy.linalg", "linalg."),
        Namespace("jax.numpy.fft", "fft."),
        Namespace("jax.random", "random.", "jax"),
        Namespace("jax", "", "jax"),
    )
    api_modules = frozenset({"jax.numpy", "jax.experimental.array_api"})
    not_array_calls = TRANSFORMATIONS
    transformations = frozenset(
        {
            "jit",
            "grad",
            "vmap",
            "pmap",
            "value_and_grad",
            "jacfwd",
            "jacrev",
            "hessian",
            "checkpoint",
            "remat",
            "custom_jvp",
            "custom_vjp",
            "make_jaxpr",
            "eval_shape",
        }
    )
    mutable = False  # x.at[i].set(v) makes a new array
    moving_calls = frozenset({"device_put", "device_get", "item", "tolist"})
    creation_calls = frozenset(
        {"array", "logspace", "identity", "tri", "normal", "uniform", "randint"}
    )
    creation_from_array = frozenset({"array"})

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

    def is_device(self, obj: object) -> bool:
        return hasattr(obj, "platform") and hasattr(obj, "id")  # jax.Device

    def device_type(self, obj: object) -> str | None:
        platform = getattr(obj, "platform", None) if self.is_device(obj) else None
        return platform if isinstance(platform, str) else None  # "cpu", "gpu", "tpu"

    def namespace(self) -> Any:
        self.lib()
        import jax.numpy

        return jax.numpy

    def array_types(self) -> tuple[type, ...]:
        jax = loaded("jax")
        if jax is None or not hasattr(jax, "Array"):
            return ()
        tracer = tracer_type()
        return (jax.Array, tracer) if tracer is not None else (jax.Array,)

    def device_of(self, x: Any) -> str:
        if is_tracer(x):
            return TRACED
        try:
            return spell(x.device)
        except (AttributeError, ValueError, RuntimeError):  # sharded over several devices
            return ",".join(sorted(spell(d) for d in x.devices()))

    def copy(self, x: Any) -> Any:
        return x.copy()

    def export_ready(self, x: Any, trail: Any) -> Any:
        self._check_concrete(x)
        return x

    def import_array(self, x: Any, source: Backend, device: Any, trail: Any) -> Any:
        jax = self.lib()
        if source is not self:
            name = dtype_name(x)
            narrowed = self.narrows(name)
            if narrowed:
                trail.copied(f"JAX stores {name} as {narrowed}")
                trail.note(f"{name} became {narrowed}: JAX runs with jax_enable_x64 off")
            x = _jax_import(x, source, jax, trail, exact=not narrowed)
        current = x.devices()
        if current != {device}:
            where = ",".join(sorted(spell(d) for d in current))
            trail.copied(f"moved {where} → {spell(device)} with jax.device_put")
            x = jax.device_put(x, device)
        return x

    def misspelled_device(self, device: str) -> str | None:
        return indexed_device_error("jax", device, "cpu:1")

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
        hint = ""
        if platform == "cpu" and index.isdigit() and int(index) >= MAX_HOST_DEVICES:
            hint = f"; porter's workers have at most {MAX_HOST_DEVICES} JAX CPU devices"
        elif platform == "cpu":
            hint = (
                "; more CPU devices need XLA_FLAGS=--xla_force_host_platform_device_count=N"
                " set before jax is imported"
            )
        raise DeviceUnavailable(
            f"jax has no device {device!r} (devices: {', '.join(self.devices())}){hint}"
        )

    def worker_environment(self, device: str | None, *, x64: bool = False) -> dict[str, str]:
        env = {}
        platform, _, index = (device or "").lower().partition(":")
        if platform == "cpu" and index.isdigit() and int(index) < MAX_HOST_DEVICES:
            flag = "--xla_force_host_platform_device_count"
            kept = [f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith(flag)]
            env["XLA_FLAGS"] = " ".join([*kept, f"{flag}={int(index) + 1}"])
        if x64:
            env["JAX_ENABLE_X64"] = "1"
        return env

    initial_process_state = {"x64": False}

    def process_state(self) -> dict[str, Any] | None:
        jax = loaded("jax")
        return None if jax is None else {"x64": bool(jax.config.read("jax_enable_x64"))}

    def set_process_state(self, state: dict[str, Any]) -> None:
        # a worker started with float64 for the reference keeps it
        x64 = state["x64"] or os.environ.get("JAX_ENABLE_X64") == "1"
        self.lib().config.update("jax_enable_x64", x64)

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


def _jax_import(x: Any, source: Backend, jax: Any, trail: Any, exact: bool) -> Any:
    """DLPack import onto the producer's device; ``exact``: the dtype is kept, so no cast."""
    ready = source.dlpack_ready(x, trail)
    try:
        if not exact:
            return jax.dlpack.from_dlpack(ready)  # JAX casts, hence copies, anyway
        dl_device = dlpack_device(ready)
        pointer = None
        if dl_device is not None and dl_device[0] == DL_CPU:
            pointer = source.data_pointer(ready)
            if pointer is not None and pointer % 64:
                # JAX imports a host buffer without a copy only when it is 64-byte
                # aligned; aligned_copy() makes one that is.
                trail.copied(f"{source.name} buffer not 64-byte aligned")
                return jax.dlpack.from_dlpack(ready)
        fast = _jax_cpu_import(ready, jax, pointer) if dl_device == (DL_CPU, 0) else None
        return fast if fast is not None else jax.dlpack.from_dlpack(ready, copy=False)
    except REFUSED as error:
        trail.copied(f"DLPack import into JAX failed ({why(error)}); copied through host NumPy")
        return jax.device_put(source.host_copy(x))


def _jax_cpu_import(ready: Any, jax: Any, pointer: int | None) -> Any:
    """Zero-copy import of an aligned host buffer whose dtype JAX keeps, straight through
    jaxlib. ``jax.dlpack.from_dlpack`` spends ~25 us re-checking dtype and placement,
    which is most of the cost of moving an input. A jaxlib without this API, or a copy
    after all, gives None, and the caller takes the public path."""
    if pointer is None:
        return None
    try:
        from jax._src.lib import _jax as jaxlib_ext
        from jax._src.lib import jaxlib_extension_version
    except ImportError:
        return None
    if jaxlib_extension_version < 467:
        return None
    device = jax.devices("cpu")[0]
    try:
        arr = jaxlib_ext.dlpack_managed_tensor_to_buffer(
            ready.__dlpack__(), device, None, False, DL_CPU
        )
    except (*REFUSED, AttributeError):
        return None
    if arr.unsafe_buffer_pointer() != pointer or arr.dtype != jax.dtypes.canonicalize_dtype(
        arr.dtype
    ):
        return None
    return arr
