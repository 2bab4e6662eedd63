"""Values made ready to compare: on the host, containers of arrays rebuilt as plain ones,
containers of plain data as one value, dtypes by name (`to_host`); the leaves of two such
values side by side (`paired`); the precision Python floats computed from arrays are
judged in (`working_dtype`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from porter_ext.backends import backend_for, backend_of_module, dtype_name, is_array
from porter_ext.compare.leaves import DtypeName, Keyed, Plain, PythonNumbers

_NUMBERS = (bool, int, float, complex)
_FLOAT_RANK = {
    "float16": 0,
    "bfloat16": 0,
    "float32": 1,
    "complex64": 1,
    "float64": 2,
    "complex128": 2,
}
_FLOAT_OF_RANK = {0: "float16", 1: "float32"}


class NotOnHost:
    """Stands in for a value that could not be moved to the host, with the reason."""

    def __init__(self, reason: str):
        self.reason = reason


def _holds_arrays(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` holds something to compare on its own: an array, a dtype, or an
    object that is not plain data (then each leaf is compared, or left out, by itself)."""
    if is_array(value) or dtype_object(value) is not None:
        return True
    if depth > 8:
        return False
    items = value.values() if isinstance(value, Mapping) else value
    if isinstance(value, Mapping | list | tuple):
        return any(_holds_arrays(v, depth + 1) for v in items)
    return not isinstance(value, _PLAIN_DATA)


#: what a container compared as one value may hold
_PLAIN_DATA = (bool, int, float, complex, str, bytes, type(None))


def dtype_object(value: Any) -> str | None:
    """The name of the dtype ``value`` is, when it is an array library's dtype object
    (``numpy.dtype('float32')``, ``torch.float32``, ``array_api_strict.float32``,
    ``jax.numpy.float32``); None for anything else."""
    if isinstance(value, _PLAIN_DATA) or is_array(value):
        return None
    owner = value if isinstance(value, type) else type(value)
    module = getattr(owner, "__module__", None)
    if not isinstance(module, str) or backend_of_module(module) is None:
        return None
    if isinstance(value, type) and not hasattr(value, "dtype"):
        return None  # a class of the library, but not a scalar type
    for candidate in (
        getattr(value, "name", None),
        getattr(value, "__name__", None) if isinstance(value, type) else None,
        str(value).rpartition(".")[2],
    ):
        if isinstance(candidate, str) and candidate in _dtype_names():
            return candidate
    return None


@functools.cache
def _dtype_names() -> frozenset[str]:
    from porter_ext.spec import standard

    return standard().dtypes | {"float16", "bfloat16"}


def _as_one_value(value: Any) -> Any:
    """A container without arrays as one value: numbers as one array, else by equality."""
    if isinstance(value, Mapping):
        values = list(value.values())
        if values and all(type(v) in _NUMBERS for v in values):
            array = _numbers(values)
            if array is not None:
                return Keyed(tuple(value), array)
        return Plain(value)
    array = _numbers(value)
    return array if array is not None else Plain(value)


def _numbers(value: Any) -> Any:
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):  # ragged, or not numbers
        return None
    if array.dtype.kind not in "biufc" or not array.size:
        return None
    if array.dtype.kind in "fc" and _python_numbers(value):
        return array.view(PythonNumbers)
    return array


def _python_numbers(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` (a list or tuple, however nested) holds Python numbers only, not
    NumPy's scalars (``np.float64`` is a float64 value, not one read from an array)."""
    if type(value) in _NUMBERS:
        return True
    if isinstance(value, list | tuple) and depth < 8:
        return all(_python_numbers(v, depth + 1) for v in value)
    return False


def to_host(value: Any, path: str, errors: dict[str, str]) -> Any:
    """``value`` ready to compare: arrays moved to host NumPy, containers of arrays rebuilt
    as plain ones, containers without arrays as one value (see `_as_one_value`)."""
    if is_array(value):
        backend = backend_for(value)
        if backend is None:
            return value
        try:
            return backend.to_host(value)
        except Exception as error:
            errors[path] = f"could not move to the host: {type(error).__name__}: {error}"
            return NotOnHost(errors[path])
    dtype = dtype_object(value)
    if dtype is not None:
        return DtypeName(dtype)
    if isinstance(value, Mapping | list | tuple):
        if not _holds_arrays(value):
            return _as_one_value(value)
        if isinstance(value, Mapping):
            return {k: to_host(v, f"{path}[{k!r}]", errors) for k, v in value.items()}
        items = [to_host(v, f"{path}[{i}]", errors) for i, v in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    return value


def paired(o: Any, r: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """Leaves of two host values of the same structure, side by side."""
    if isinstance(o, Mapping) and isinstance(r, Mapping):
        for k in o:
            if k in r:
                yield from paired(o[k], r[k], f"{path}[{k!r}]")
    elif isinstance(o, list | tuple) and isinstance(r, list | tuple):
        for i, (x, y) in enumerate(zip(o, r, strict=False)):
            yield from paired(x, y, f"{path}[{i}]")
    elif isinstance(o, Keyed) and isinstance(r, Keyed):
        if o.keys == r.keys:
            yield path, o.values, r.values
    else:
        yield path, o, r


def working_dtype(values: Iterable[Any]) -> str | None:
    """The narrowest floating precision among the arrays in ``values`` when it is below
    float64 (``"float32"``), else None: Python floats computed from them are judged in it."""
    rank = 2
    for value in values:
        for leaf in _array_leaves(value, 0):
            rank = min(rank, _FLOAT_RANK.get(dtype_name(leaf), 2))
    return _FLOAT_OF_RANK.get(rank)


def _array_leaves(value: Any, depth: int) -> Iterator[Any]:
    if is_array(value):
        yield value
    elif depth < 3 and isinstance(value, list | tuple | Mapping):
        items = list(value.values() if isinstance(value, Mapping) else value)[:64]
        for v in items:
            yield from _array_leaves(v, depth + 1)


def narrower(a: str | None, b: str | None) -> str | None:
    """The narrower of two working dtypes (None: float64)."""
    rank = min(_FLOAT_RANK.get(a or "float64", 2), _FLOAT_RANK.get(b or "float64", 2))
    return _FLOAT_OF_RANK.get(rank)
