"""Finding adapters: by library name, by the array or module in hand, and all of them for
``porter backends``. This is what the other stages ask instead of naming a library.

The type of an object is looked up once and cached (its library cannot change: an array
type belongs to a library that was already imported), so that reading the device of a
call's arguments, on the recorder's hot path, is a dictionary lookup and an attribute read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from porter_ext.guard import internal_error

from .base import Backend, BackendInfo, Namespace, loaded
from .cupy import CupyBackend
from .dask import DaskBackend
from .jax import JaxBackend
from .numpy import NumpyBackend
from .spec import BackendSpec, SpecError, parse_spec_with, parse_specs_with
from .strict import StrictBackend
from .torch import TorchBackend

_BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        NumpyBackend(),
        TorchBackend(),
        JaxBackend(),
        CupyBackend(),
        StrictBackend(),
        DaskBackend(),
    )
}
#: the libraries a spec may name, in the order ``porter backends`` lists them
LIBRARIES: tuple[str, ...] = tuple(_BACKENDS)
#: other spellings people type for a library
ALIASES: dict[str, str] = {
    alias: b.name for b in _BACKENDS.values() for alias in (b.module, *b.aliases)
}

#: the library of porter's host arrays: what comparisons read, and where a float64
#: reference runs when the original's library has no float64
HOST_LIBRARY = NumpyBackend.name

#: the array API helpers porter's recorder also resolves (``array_namespace``, ``device``)
HELPERS = "array_api_compat"
HELPER_NAMESPACES = (Namespace(HELPERS, "", HELPERS),)

#: top-level module → the adapter whose functions and types live there
_ROOTS: dict[str, Backend] = {root: b for b in _BACKENDS.values() for root in b.roots}
_MISSING = object()
#: type → its adapter, or None for a type that is not an array of any library; the
#: recorder's hot path reads it directly (read-only outside this module)
BY_TYPE: dict[type, Backend | None] = {}


def all_backends() -> tuple[Backend, ...]:
    """Every adapter, in the order ``porter backends`` lists them."""
    return tuple(_BACKENDS.values())


def parse_spec(text: str) -> BackendSpec:
    """Parse one ``LIB[:DEVICE][@WHERE]``; raises SpecError naming the valid libraries."""
    return parse_spec_with(text, LIBRARIES, ALIASES)


def parse_specs(text: str) -> list[BackendSpec]:
    """Parse comma-separated specs; blanks are ignored and duplicates dropped, order kept."""
    return parse_specs_with(text, LIBRARIES, ALIASES)


def get_backend(library: str) -> Backend:
    """The adapter for ``library`` (a spec name such as ``"jax"``, or an alias)."""
    name = ALIASES.get(library.lower(), library.lower())
    try:
        return _BACKENDS[name]
    except KeyError:
        raise SpecError(
            f"unknown library {library!r}; expected one of {', '.join(LIBRARIES)}"
        ) from None


def forget_foreign_types() -> None:
    """Drop the cached types no library owns (the person's classes, found not to be
    arrays), so that the cache keeps none of them alive (the recorder calls this when a
    cell ends). Python's and the libraries' own types stay."""
    for t in [t for t, backend in BY_TYPE.items() if backend is None]:
        module = getattr(t, "__module__", None)
        root = module.partition(".")[0] if isinstance(module, str) else None
        if root != "builtins" and root not in _ROOTS:
            BY_TYPE.pop(t, None)


def backend_of_module(module_name: str) -> Backend | None:
    """The adapter whose library the module ``module_name`` belongs to (``jaxlib.x`` → jax)."""
    return _ROOTS.get(module_name.partition(".")[0])


def _backend_of_type(t: type) -> Backend | None:
    root = _ROOTS.get(t.__module__.partition(".")[0]) if isinstance(t.__module__, str) else None
    for backend in (root,) if root is not None else _BACKENDS.values():
        types = backend.array_types()
        if types and issubclass(t, types):
            return backend
    return None


def backend_for(x: object) -> Backend | None:
    """Which library owns the array ``x`` (None for anything else); imports nothing."""
    t = type(x)
    backend = BY_TYPE.get(t, _MISSING)
    if backend is _MISSING:
        backend = BY_TYPE[t] = _backend_of_type(t)
    return backend  # type: ignore[return-value]


def library_of(x: object) -> str | None:
    """The spec name of the library ``x`` is an array of (``"torch"``), else None."""
    backend = backend_for(x)
    return backend.name if backend is not None else None


def own_semantics(x: object) -> str | None:
    """The class of ``x`` (with what sets it apart) when it is an array subclass whose
    operations differ from its library's plain array (`Backend.own_semantics`), else None."""
    backend = backend_for(x)
    return backend.own_semantics(x) if backend is not None else None


def is_array(x: object) -> bool:
    return backend_for(x) is not None


def device_of(x: Any) -> str | None:
    """The device of any supported array in spec spelling (``"traced"`` for a traced
    value); None when ``x`` is not one. Never raises: a reader that fails is porter's
    bug, reported through the guard, and the device reads ``"unknown"``."""
    backend = BY_TYPE.get(type(x), _MISSING)
    if backend is _MISSING:
        backend = backend_for(x)
    if backend is None:
        return None
    try:
        return backend.device_of(x)  # type: ignore[union-attr]
    except Exception as error:
        internal_error(f"reading the device of a {type(x).__name__}", error)
        return "unknown"


def namespace_backend(module_name: str) -> Backend | None:
    """The adapter whose array API namespace the module ``module_name`` is, or None."""
    for backend in _BACKENDS.values():
        if backend.is_namespace(module_name):
            return backend
    return None


def namespace_owner(module_name: str) -> Backend | None:
    """The adapter whose library a namespace module is, itself or wrapped
    (``array_api_compat.torch`` is torch's, ``numpy.linalg`` NumPy's), or None."""
    return namespace_backend(module_name) or backend_of_module(module_name)


def is_device(obj: object) -> bool:
    """Whether ``obj`` (neither an array, a string nor a number) is a device object of
    a library (``torch.device``, a JAX ``Device``); imports nothing."""
    return any(backend.is_device(obj) for backend in _BACKENDS.values())


def names_device_type(obj: object, kind: str) -> bool:
    """Whether the device object ``obj`` names a device of the type ``kind`` (``cuda``)
    in some library's spelling."""
    return any(backend.device_type(obj) == kind for backend in _BACKENDS.values())


def generator_reduction(obj: object) -> tuple[Any, tuple] | None:
    """How ``obj`` travels when it is a random generator that pickles only through its
    state (``torch.Generator``), else None."""
    module = type(obj).__module__
    backend = _ROOTS.get(module.partition(".")[0]) if isinstance(module, str) else None
    return backend.generator_reduction(obj) if backend is not None else None


def list_backends(elsewhere: Mapping[str, list[BackendInfo]] | None = None) -> list[BackendInfo]:
    """Every library × device this process can see, then the missing ones with the reason.

    The library's default device is listed under the bare library name (``jax``), every
    other device under its full spec (``jax:cpu:1``). ``elsewhere``: each library's
    entries as another process with this one's environment saw them, taken for the
    libraries this process has not imported (importing torch or jax here only to
    describe it costs seconds, and changes what the process has loaded).
    """
    found: list[BackendInfo] = []
    for name in LIBRARIES:
        backend = _BACKENDS[name]
        if elsewhere is not None and name in elsewhere and loaded(backend.module) is None:
            found.extend(elsewhere[name])
            continue
        version = backend.version()
        ok, reason = backend.available()
        if not ok:
            found.append(BackendInfo(name, name, version, False, [], reason))
            continue
        devices = backend.devices()
        for index, device in enumerate(devices):
            spec = str(BackendSpec(name, None if index == 0 else device))
            found.append(BackendInfo(spec, name, version, True, [device], None))
        for spec, why in backend.unavailable_kinds():
            found.append(BackendInfo(spec, name, version, False, [], why))
    return found
