"""What the recorder reads of the values a call gets: their library, their devices, and
what a value-dependent verdict was made from.

Every path of the recorder (the hooks' fast paths, the careful slow path) reads devices
through `devices_in`, so one call site never splits into two records by how it was read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from porter_ext.backends import backend_for, dtype_name
from porter_ext.backends.registry import BY_TYPE as _type_backend

if TYPE_CHECKING:
    from porter_ext.backends.base import Backend

_MISSING = object()
#: "no self object" (a function call), distinct from None
NO_SELF = object()
_NO_SELF = NO_SELF


def backend_of(x: Any) -> Backend | None:
    """The adapter of an array, None for anything else, and None for an object whose
    type cannot even be hashed (a metaclass whose ``__hash__`` raises): that is the
    person's type misbehaving, never an array of a library porter knows."""
    try:
        backend = _type_backend.get(type(x), _MISSING)
        return backend_for(x) if backend is _MISSING else backend
    except Exception:  # noqa: BLE001 (see the docstring: not porter's failure)
        return None


def devices_in(args: tuple, kwargs: dict | None, self_obj: Any = _NO_SELF) -> tuple[str, ...]:
    """The devices of a call's array arguments (the first 16 items of a list or tuple
    argument too): the one reading every path of the recorder uses."""
    out: list[str] = []
    if self_obj is not _NO_SELF:
        b = backend_of(self_obj)
        if b is not None:
            out.append(b.device_of(self_obj))
    read_into(args, out)
    if kwargs:
        read_into(kwargs.values(), out)
    return tuple(out)


def read_into(values: Any, out: list[str]) -> None:
    get = _type_backend.get
    for a in values:
        t = type(a)
        if t is list or t is tuple:
            for item in a[:16]:
                bi = backend_of(item)
                if bi is not None:
                    out.append(bi.device_of(item))
            continue
        try:
            b = get(t, _MISSING)
        except Exception:  # noqa: BLE001 (a type whose __hash__ raises: not an array)
            continue
        if b is None:
            continue
        if b is _MISSING:
            b = backend_of(a)
            if b is None:
                continue
        out.append(b.device_of(a))


def device_out(out: Any) -> str | None:
    b = backend_of(out)
    if b is not None:
        return b.device_of(out)
    if type(out) is not list and isinstance(out, tuple) and out:
        b = backend_of(out[0])
        return b.device_of(out[0]) if b is not None else None
    return None


_LITERALS = (int, float, bool, str, complex, type(None))


def value_key(v: Any) -> object:
    """What a value-dependent verdict may depend on: a literal's value, an array's rank
    and dtype, a dtype or type object itself, otherwise the type."""
    t = type(v)
    if t in _LITERALS:
        return (t, v)
    if t is tuple and len(v) <= 8 and all(type(e) is int for e in v):
        return (t, v)
    backend = backend_of(v)
    if backend is not None:
        return (t, getattr(v, "ndim", None), dtype_name(v))
    if t is list or t is tuple:
        return (t, len(v), tuple(type(e) for e in v[:4]))
    if isinstance(v, type) or t.__name__.startswith("dtype") or "dtype" in t.__name__:
        return (t, str(v))
    return t
