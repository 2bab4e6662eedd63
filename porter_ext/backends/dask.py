"""Dask: lazy, chunked arrays on the host (device ``cpu``), namespace
``array_api_compat.dask.array``; a spec's WHERE is a distributed scheduler address
(``dask@tcp://127.0.0.1:8786``); a scheduler that does not answer is skipped at the door
(`DaskBackend.place_error`), with its reason.

A replay on Dask builds a graph; whatever the cell itself forces (``float(x)``,
``bool(x)``, ``x.compute()``) is counted, as array-api-extra's ``lazy_xp_function``
counts computes, and the outputs are computed once at the end, inside the replay.
Dask arrays have no DLPack: leaving Dask means computing to NumPy.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .base import Backend, DeviceUnavailable, Namespace, ReplayScope, loaded
from .dlpack import host_view

if TYPE_CHECKING:
    import numpy


#: the port a Dask scheduler listens on when its address names none
SCHEDULER_PORT = 8786


class CountingScheduler:
    """A Dask scheduler that counts how often it is asked to compute, then delegates."""

    def __init__(self, get: Any) -> None:
        self.get, self.count = get, 0

    def __call__(self, dsk: Any, keys: Any, **kwargs: Any) -> Any:
        self.count += 1
        return self.get(dsk, keys, **kwargs)


def _chunks(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Two chunks along every axis that has more than one element: a replay on Dask
    exercises chunked execution, not one block that behaves like NumPy."""
    return tuple(max(1, (n + 1) // 2) for n in shape)


class DaskBackend(Backend):
    name = "dask"
    title = "Dask"
    module = "dask.array"
    distribution = "dask"
    extra = "dask"
    roots = ("dask",)
    qualname_prefix = "dask.array"
    array_type_name = "Array"
    namespaces = (
        Namespace("dask.array"),
        Namespace("dask.array.linalg", "linalg."),
        Namespace("dask.array.fft", "fft."),
        Namespace("array_api_compat.dask.array"),
        Namespace("array_api_compat.dask.array.linalg", "linalg."),
        Namespace("array_api_compat.dask.array.fft", "fft."),
    )
    api_modules = frozenset({"array_api_compat.dask.array"})

    def devices(self) -> list[str]:
        return ["cpu"] if self.available()[0] else []

    def namespace(self) -> Any:
        self.lib()
        import array_api_compat.dask.array

        return array_api_compat.dask.array

    def array_types(self) -> tuple[type, ...]:
        core = loaded("dask.array.core")
        return (core.Array,) if core is not None else ()

    def device_of(self, x: Any) -> str:
        return "cpu"

    def place_error(self, where: str, timeout: float) -> str | None:
        """A scheduler address (``tcp://host:8786``, ``tls://…``; the port defaults to
        Dask's 8786) that nothing answers at; other protocols are left to the client."""
        scheme, sep, rest = where.partition("://")
        scheme, rest = (scheme, rest) if sep else ("tcp", where)
        if scheme not in ("tcp", "tls"):
            return None
        rest = rest.rstrip("/")
        host, colon, port = rest.rpartition(":")
        if not colon or not port.isdigit() or (":" in host and not host.startswith("[")):
            host, port = rest, str(SCHEDULER_PORT)  # no port (or an IPv6 address without [])
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                return None
        except OSError as error:
            why = error.strerror or str(error) or type(error).__name__
            return f"no Dask scheduler answers at {where} ({why})"

    def resolve_device(self, device: str | None) -> str:
        if device is None or device.lower() == "cpu":
            return "cpu"
        raise DeviceUnavailable(f"dask arrays live on the host ('cpu'), not {device!r}")

    def to_host(self, x: Any) -> numpy.ndarray:
        import numpy as np

        return np.asarray(x.compute())

    def host_copy(self, x: Any) -> numpy.ndarray:
        import numpy as np

        return np.array(x.compute(), copy=True)

    def copy(self, x: Any) -> Any:
        return x.copy()

    def dlpack_ready(self, x: Any, trail: Any) -> Any:
        trail.copied("a Dask array has no buffer until it is computed: computed to NumPy")
        return self.to_host(x)

    def import_array(self, x: Any, source: Backend, device: Any, trail: Any) -> Any:
        if source is self:
            return x
        da = self.lib()
        host = host_view(x, source, trail)
        return da.from_array(host, chunks=_chunks(host.shape), asarray=False)

    @contextlib.contextmanager
    def replay_context(self, where: str | None) -> Iterator[ReplayScope]:
        import dask

        scope = _DaskScope(self)
        notes = scope.notes
        with contextlib.ExitStack() as stack:
            if where:
                from distributed import Client

                client = stack.enter_context(Client(where, timeout="10s", set_as_default=False))
                get = client.get
                notes.append(f"ran on the Dask scheduler at {where}")
            else:
                get = dask.get  # synchronous: deterministic and cheap for replays
            counter = scope.counter = CountingScheduler(get)
            stack.enter_context(dask.config.set(scheduler=counter))
            yield scope
            forced = counter.count - scope.finished
            if scope.finished:
                notes.append(f"{scope.finished} lazy output(s) computed once, at the end")
            if forced:
                notes.append(
                    f"the cell computed its Dask graph {forced} time(s) before its end"
                    " (float(), bool(), .compute() or a data-dependent shape); each compute"
                    " runs the graph again"
                )


class _DaskScope(ReplayScope):
    """Computes each lazy output once, at the end, and keeps that apart from the
    computes the cell forced itself."""

    def __init__(self, backend: DaskBackend) -> None:
        super().__init__()
        self.backend, self.finished, self.counter = backend, 0, None

    def finish(self, value: Any) -> Any:
        if not self.backend.owns(value):
            return value
        self.finished += 1
        da = self.backend.lib()
        return da.from_array(self.backend.to_host(value), chunks=value.chunks)
