"""Finding adapters: by library name, by the array in hand, and all of them for ``porter backends``."""

from __future__ import annotations

from typing import Any

from ._cupy import CupyBackend
from ._jax import JaxBackend
from ._numpy import NumpyBackend
from ._strict import StrictBackend
from ._torch import TorchBackend
from .base import Backend, BackendInfo
from .spec import ALIASES, LIBRARIES, BackendSpec, SpecError

_BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (NumpyBackend(), TorchBackend(), JaxBackend(), CupyBackend(), StrictBackend())
}


def get_backend(library: str) -> Backend:
    """The adapter for ``library`` (a spec name such as ``"jax"``, or an alias)."""
    name = ALIASES.get(library.lower(), library.lower())
    try:
        return _BACKENDS[name]
    except KeyError:
        raise SpecError(
            f"unknown library {library!r}; expected one of {', '.join(LIBRARIES)}"
        ) from None


def backend_for(x: object) -> Backend | None:
    """Which library owns the array ``x`` (None for anything else); imports nothing."""
    for backend in _BACKENDS.values():
        if backend.owns(x):
            return backend
    return None


def device_of(x: Any) -> str | None:
    """The device of any supported array in spec spelling; None when ``x`` is not one."""
    backend = backend_for(x)
    return backend.device_of(x) if backend is not None else None


def list_backends() -> list[BackendInfo]:
    """Every library × device this process can see, then the missing ones with the reason.

    The library's default device is listed under the bare library name (``jax``), every
    other device under its full spec (``jax:cpu:1``).
    """
    found: list[BackendInfo] = []
    for name in LIBRARIES:
        backend = _BACKENDS[name]
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
