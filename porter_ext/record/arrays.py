"""Which library an object's type belongs to, and the device an array lives on, fast.

Recording reads the device of every array argument of every call, so this is on the hot
path: the library of a type is decided once and cached, and each library has a small
device reader. Nothing here imports an array library; a type can only belong to a library
that is already in ``sys.modules``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

#: library name → top-level module names whose types may be its arrays
_ROOTS = {
    "numpy": "numpy",
    "torch": "torch",
    "jax": "jax",
    "jaxlib": "jax",
    "cupy": "cupy",
    "array_api_strict": "array_api_strict",
}

TRACED = "traced"
_MISSING = object()


def _numpy_base() -> tuple[type, ...]:
    np = sys.modules.get("numpy")
    return (np.ndarray, np.generic) if np is not None else ()


def _torch_base() -> tuple[type, ...]:
    torch = sys.modules.get("torch")
    return (torch.Tensor,) if torch is not None else ()


def _jax_base() -> tuple[type, ...]:
    jax = sys.modules.get("jax")
    if jax is None or not hasattr(jax, "Array"):
        return ()
    core = sys.modules.get("jax._src.core")
    tracer = (core.Tracer,) if core is not None else ()
    return (jax.Array, *tracer)


def _cupy_base() -> tuple[type, ...]:
    cp = sys.modules.get("cupy")
    return (cp.ndarray,) if cp is not None else ()


def _strict_base() -> tuple[type, ...]:
    mod = sys.modules.get("array_api_strict._array_object")
    return (mod.Array,) if mod is not None else ()


_BASES: dict[str, Callable[[], tuple[type, ...]]] = {
    "numpy": _numpy_base,
    "torch": _torch_base,
    "jax": _jax_base,
    "cupy": _cupy_base,
    "array_api_strict": _strict_base,
}

#: type → library name, or None for a type that is not an array of any library
_type_library: dict[type, str | None] = {}


def _library_of_type(t: type) -> str | None:
    root = _ROOTS.get(t.__module__.partition(".")[0])
    candidates = [root] if root is not None else list(_BASES)
    for lib in candidates:
        bases = _BASES[lib]()
        if bases and issubclass(t, bases):
            return lib
    return None


def library_of(x: object) -> str | None:
    """The array library ``x`` is an array of (``"torch"``, ``"numpy"``, …), else None."""
    t = type(x)
    lib = _type_library.get(t, _MISSING)
    if lib is _MISSING:
        # a type's library cannot change: its module (or its base's) is already imported
        lib = _type_library[t] = _library_of_type(t)
    return lib


def is_array(x: object) -> bool:
    return library_of(x) is not None


# --- devices ---------------------------------------------------------------------------

_torch_devices: dict[object, str] = {}


def _torch_device(x) -> str:
    if x.is_cpu:
        return "cpu"
    d = x.device
    s = _torch_devices.get(d)
    if s is None:
        s = d.type if d.index is None else f"{d.type}:{d.index}"
        _torch_devices[d] = s
    return s


_jax_devices: dict[object, str] = {}


def _jax_device_name(d) -> str:
    s = _jax_devices.get(d)
    if s is None:
        s = f"{d.platform}:{d.id}"
        _jax_devices[d] = s
    return s


def _jax_device(x) -> str:
    core = sys.modules.get("jax._src.core")
    if core is not None and isinstance(x, core.Tracer):
        return TRACED
    try:
        return _jax_device_name(x.device)
    except Exception:  # sharded over several devices, or deleted
        try:
            return ",".join(sorted(_jax_device_name(d) for d in x.devices()))
        except Exception:
            return "unknown"


def _strict_device(x) -> str:
    d = x.device
    return getattr(d, "_device", None) or str(d)


def _cupy_device(x) -> str:
    return f"cuda:{x.device.id}"


def _numpy_device(x) -> str:
    return "cpu"


_DEVICE_READERS: dict[str, Callable[[object], str]] = {
    "numpy": _numpy_device,
    "torch": _torch_device,
    "jax": _jax_device,
    "cupy": _cupy_device,
    "array_api_strict": _strict_device,
}


def device_of(x: object) -> str | None:
    """The device ``x`` lives on, spelled as in backend specs; ``"traced"`` for a JAX tracer;
    None when ``x`` is not an array. Never raises. (On the recorder's hot path.)"""
    lib = _type_library.get(type(x), _MISSING)
    if lib is _MISSING:
        lib = library_of(x)
    if lib is None:
        return None
    try:
        return _DEVICE_READERS[lib](x)
    except Exception:
        return "unknown"
