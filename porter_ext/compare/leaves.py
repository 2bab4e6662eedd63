"""The leaves an output is compared by: arrays and numbers (`as_array`), dtypes by name
(`DtypeName`), dicts of numbers as one array (`Keyed`), values compared by equality
(`Plain`, strings, bytes, None), and the precision a leaf is judged in
(`judged_dtype`). The host move (`host.to_host`) makes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .tolerance import eps_of

_SCALARS = (bool, int, float, complex, np.generic)
PLAIN_TYPES = (str, bytes, type(None))


class Plain:
    """A value compared by equality as one value (a list of strings, a dict of names)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


class DtypeName:
    """A dtype object of any library (``numpy.dtype('float32')``, ``torch.float32``,
    ``array_api_strict.float32``) as its name: two of them are equal when they name the
    same dtype."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DtypeName) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"DtypeName({self.name!r})"


class Keyed:
    """A dict of numbers, compared as one value: its keys by equality, its values as one
    array (converted once, whatever its length)."""

    __slots__ = ("keys", "values")

    def __init__(self, keys: tuple, values: np.ndarray):
        self.keys, self.values = keys, values


def as_array(x: Any) -> np.ndarray | None:
    """``x`` as a host array when it is one or a number; None for anything else."""
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x) if isinstance(x, _SCALARS) and not isinstance(x, str | bytes) else None


class PythonNumbers(np.ndarray):
    """A list (tuple, nested) of Python numbers compared as one array: floats that
    ``.item()`` or ``float()`` read from arrays (``lossi.append(loss.item())``), judged in
    the working dtype as one such float is (`judged_dtype`)."""


def judged_dtype(value: Any, arr: np.ndarray, working: str | None) -> np.dtype:
    """The precision a value is judged in: a Python float (complex), or a list of them,
    made from arrays of a narrower working dtype is judged in that dtype."""
    python = type(value) in (float, complex) or isinstance(value, PythonNumbers)
    if working is None or not python or arr.dtype.kind not in "fc":
        return arr.dtype
    dt = np.dtype(working) if working != "bfloat16" else np.dtype(np.float32)
    if eps_of(dt) <= eps_of(arr.dtype):
        return arr.dtype
    return np.result_type(dt, np.complex64) if arr.dtype.kind == "c" else dt
