"""The float64 reference of a cell: the cell run again with its floating inputs promoted
to float64 (complex128), so that every backend's result, and the original's, can be
measured against something more accurate than any of them.

The reference runs on the original's own backend (its array namespace, its
conversions) where that backend has float64, and on NumPy where it does not (JAX without
x64, accelerators without doubles). A cell that draws random numbers or casts back to a
lower precision still gives a "reference", but one the original does not agree with:
the compare stage checks that before trusting it (`compare.tolerance.ReferenceRule`).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping
from typing import Any

from porter_ext.backends import HOST_LIBRARY, Backend, backend_for, dtype_name
from porter_ext.replay.analysis import CellIO
from porter_ext.replay.run import ReplayResult, ReplaySettings, replay_cell

#: dtype name -> the dtype the reference computes it in
PROMOTED = {
    "float16": "float64",
    "bfloat16": "float64",
    "float32": "float64",
    "complex64": "complex128",
}
MAX_DEPTH = 3


class ReferenceNamespace(dict):
    """The person's namespace with the cell's floating inputs promoted; ``person`` is the
    real one (the replay tells the person's own functions by their globals)."""

    def __init__(self, person: Mapping[str, Any], promoted: Mapping[str, Any]):
        super().__init__(person)
        self.update(promoted)
        self.person = getattr(person, "person", person)


def lacks_float64(backend: Backend) -> bool:
    """Whether ``backend`` would narrow float64 (JAX without x64)."""
    return backend.narrows("float64") is not None


def _promote_array(x: Any, backend: Backend, on_host: bool) -> Any:
    target = PROMOTED.get(dtype_name(x))
    if target is None:
        return x
    if on_host:  # NumPy: the host copy, widened
        return backend.host_copy(x).astype(target)
    xp = backend.namespace()
    promoted = xp.astype(x, getattr(xp, target))
    if dtype_name(promoted) != target:
        raise TypeError(f"{backend.name} gave {dtype_name(promoted)} for {target}")
    return promoted


def _walk(value: Any, on_host: bool, depth: int, changed: list[bool]) -> Any:
    backend = backend_for(value)
    if backend is not None:
        promoted = _promote_array(value, backend, on_host)
        if promoted is not value:
            changed.append(True)
        elif on_host:
            return backend.host_copy(value)
        return promoted
    if depth < MAX_DEPTH and type(value) in (list, tuple):
        return type(value)(_walk(v, on_host, depth + 1, changed) for v in value)
    if depth < MAX_DEPTH and type(value) is dict:
        return {k: _walk(v, on_host, depth + 1, changed) for k, v in value.items()}
    return value


def original_backend(values: Mapping[str, Any]) -> Backend | None:
    """The backend of the first floating array among ``values`` (lists and dicts looked
    into), where there is one that the reference would promote."""
    for value in values.values():
        for leaf in _leaves(value, 0):
            backend = backend_for(leaf)
            if backend is not None and dtype_name(leaf) in PROMOTED:
                return backend
    return None


def _leaves(value: Any, depth: int) -> list[Any]:
    if backend_for(value) is not None:
        return [value]
    if depth < MAX_DEPTH and type(value) in (list, tuple):
        return [leaf for v in value for leaf in _leaves(v, depth + 1)]
    if depth < MAX_DEPTH and type(value) is dict:
        return [leaf for v in value.values() for leaf in _leaves(v, depth + 1)]
    return []


def promote_inputs(inputs: Mapping[str, Any]) -> tuple[dict[str, Any], str] | None:
    """The inputs with every float16/bfloat16/float32 array (complex64) as float64
    (complex128), and the backend spec to run the reference on; None when no input is
    below float64 (the original then is its own reference)."""
    backend = original_backend(inputs)
    if backend is None:
        return None
    on_host = lacks_float64(backend)
    changed: list[bool] = []
    promoted = {name: _walk(v, on_host, 0, changed) for name, v in inputs.items()}
    if not changed:
        return None
    return promoted, HOST_LIBRARY if on_host else backend.name


def _skipped(spec: str, error: Exception) -> ReplayResult:
    return ReplayResult(spec, "skipped", reason=f"no float64 reference: {error}", role="reference")


def _promoted(inputs: Mapping[str, Any]) -> tuple[dict[str, Any], str] | ReplayResult | None:
    """`promote_inputs`, or a skipped reference saying why the inputs could not widen."""
    try:
        return promote_inputs(inputs)
    except (TypeError, ValueError) as error:  # a backend that cannot widen: no reference
        return _skipped(HOST_LIBRARY, error)


def reference_replay(
    source: str,
    namespace: Mapping[str, Any],
    inputs: Mapping[str, Any],
    settings: ReplaySettings | None = None,
    *,
    io_: CellIO | None = None,
) -> ReplayResult | None:
    """Run the cell in this process with its floating ``inputs`` promoted (see
    `promote_inputs`), on the original's backend; None when nothing is below float64.

    Like ``--in-process`` replays, on a copy of the inputs: printed output is held back
    and the process-wide random states are put back afterwards, so the person's
    generators are not advanced by it.
    """
    from porter_ext.replay import rng

    found = _promoted(inputs)
    if not isinstance(found, tuple):
        return found
    promoted, spec = found
    states = rng.capture()
    held = io.StringIO()
    try:
        with contextlib.redirect_stdout(held), contextlib.redirect_stderr(held):
            result = replay_cell(
                source, ReferenceNamespace(namespace, promoted), spec, settings, io=io_
            )
    finally:
        rng.restore(states)
    result.role = "reference"
    result.worker = "in-process"
    return result
