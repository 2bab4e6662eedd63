"""Operators and indexing on arrays, judged by the standard.

The standard's operators take arrays of one namespace and Python scalars of the array's
kind; its indexing takes integers, slices, ``...``, ``None``, a boolean mask, and (from
2024.12) integer arrays that index every axis. What falls outside (a Python list as an
operand or index, arrays of two libraries, a float scalar with an integer array, an
in-place operation that would change the dtype) is ``non_standard_usage`` with what to
write instead. Verdicts depend only on the kinds of the operands (`operand_kind`), so the
recorder caches them by those.
"""

from __future__ import annotations

from typing import Any

from porter_ext.backends import Backend, all_backends, dtype_name
from porter_ext.record.classify import Verdict
from porter_ext.spec.dtype_categories import dtype_kind, scalar_issue
from porter_ext.spec.indexing import (
    EVERY_AXIS,
    LENGTH,
    RANGE_PARTS,
    ROW_BUILTINS,
    ROWS,
    TAKE_ALONG,
    TAKE_LIST,
    ZIP_ROWS,
    length_rewrite,
    take_rewrite,
    take_template,
)
from porter_ext.spec.standard import Standard

#: the operand an operator reflects to when the array is on the right (``2 - x``)
REFLECTED = {
    "__add__": "__radd__",
    "__sub__": "__rsub__",
    "__mul__": "__rmul__",
    "__truediv__": "__rtruediv__",
    "__floordiv__": "__rfloordiv__",
    "__mod__": "__rmod__",
    "__pow__": "__rpow__",
    "__matmul__": "__rmatmul__",
    "__and__": "__rand__",
    "__or__": "__ror__",
    "__xor__": "__rxor__",
    "__lshift__": "__rlshift__",
    "__rshift__": "__rrshift__",
    "__lt__": "__gt__",
    "__gt__": "__lt__",
    "__le__": "__ge__",
    "__ge__": "__le__",
    "__eq__": "__eq__",
    "__ne__": "__ne__",
}
_SYMBOL = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "pow": "**",
    "matmul": "@",
    "and": "&",
    "or": "|",
    "xor": "^",
    "lshift": "<<",
    "rshift": ">>",
    "lt": "<",
    "gt": ">",
    "le": "<=",
    "ge": ">=",
    "eq": "==",
    "ne": "!=",
    "neg": "-",
    "pos": "+",
    "invert": "~",
}
_KIND_ORDER = {"bool": 0, "int": 1, "float": 2, "complex": 3}
_SCALARS = {bool: "bool", int: "int", float: "float", complex: "complex"}
_DATA_DEPENDENT = (
    "boolean-mask indexing is standard, but the output's shape depends on the data: it "
    "fails under jax.jit and on lazy backends (xp.where keeps the shape)"
)


def _bits(name: str) -> int:
    digits = "".join(c for c in name if c.isdigit())
    return int(digits) if digits else 0


def operand_kind(v: Any, backend_of) -> tuple:
    """What a verdict on an operand may depend on: library and dtype of an array, the
    kind of a Python scalar, or the type of anything else."""
    t = type(v)
    scalar = _SCALARS.get(t)
    if scalar is not None:
        return ("scalar", scalar)
    backend = backend_of(v)
    if backend is not None:
        try:
            dtype = dtype_name(v)
        except Exception:  # a dtype porter cannot name: judged by library only
            dtype = "?"
        return ("array", backend.name, dtype, getattr(v, "ndim", None))
    if t is slice:
        step = v.step
        return ("slice", type(step) is int and step < 0)
    if t is tuple:
        return ("tuple", tuple(operand_kind(e, backend_of) for e in v[:8]), len(v))
    if t is list:  # (its length, whether it is a flat list of ints: an index take reads)
        return ("list", len(v), 0 < len(v) <= _LIST_INDEX_LIMIT and all(type(e) is int for e in v))
    if v is Ellipsis:
        return ("marker", "...")
    if v is None:
        return ("marker", None)
    return ("other", t.__name__)


#: the longest list of ints an index is looked through for (``x[[3, 7, 4]]`` → ``take``)
_LIST_INDEX_LIMIT = 4096


def _symbol(name: str) -> str:
    return _SYMBOL.get(name.strip("_").removeprefix("r").removeprefix("i"), name)


def classify_operation(
    std: Standard, backend: Backend, name: str, x: tuple, other: tuple | None
) -> Verdict:
    """An operator ``name`` on an array of kind ``x`` (see `operand_kind`) and ``other``."""
    if name not in std.array_methods:
        return Verdict("non_standard", None, None, f"{name} is not an operator of the standard")
    if other is None:
        return Verdict("standard", name)
    symbol = _symbol(name)
    xkind = dtype_kind(x[2])
    if other[0] in ("list", "tuple"):
        return Verdict(
            "non_standard_usage",
            name,
            f"x {symbol} xp.asarray(...)",
            f"a Python {other[0]} as an operand of {symbol}: the standard's operators take "
            "arrays and Python scalars only",
        )
    if other[0] == "array" and other[1] != x[1]:
        return Verdict(
            "non_standard_usage",
            name,
            "xp.asarray(y) (or xp.from_dlpack(y)) first",
            f"{symbol} mixes arrays of two libraries ({x[1]} and {other[1]}): the standard "
            "leaves mixing namespaces unspecified",
        )
    division = _true_division(name, x, other)
    if division is not None:
        return division
    if other[0] == "scalar":
        issue = scalar_issue(x[2], other[1], std.version)
        if issue is None:
            return Verdict("standard", name)
        reason, cast = issue
        suggestion = f"xp.astype(x, xp.{cast}) {symbol} ..." if cast else f"x {symbol} {xkind}(...)"
        return Verdict("non_standard_usage", name, suggestion, reason)
    if other[0] == "array":
        okind = dtype_kind(other[2])
        if xkind != okind and "other" not in (xkind, okind):
            return Verdict(
                "non_standard_usage",
                name,
                f"xp.astype(..., xp.{other[2] if _KIND_ORDER[okind] > _KIND_ORDER[xkind] else x[2]})",
                f"{symbol} mixes {x[2]} and {other[2]}: the standard does not promote across "
                "kinds of dtype",
            )
        if name.startswith("__i") and _bits(other[2]) > _bits(x[2]):
            return Verdict(
                "non_standard_usage",
                name,
                f"x = x {symbol} y",
                f"in-place {symbol}= would change x's dtype from {x[2]} to {other[2]}: the "
                "standard requires in-place operations to keep the dtype",
            )
        return Verdict("standard", name)
    return Verdict(
        "non_standard_usage",
        name,
        None,
        f"a {other[-1] if other[0] == 'other' else other[0]} as an operand of {symbol}: the "
        "standard's operators take arrays and Python scalars only",
    )


#: true division, as the array is on its left, on its right, or its target
_TRUE_DIVISION = {"__truediv__": "left", "__rtruediv__": "right", "__itruediv__": "left"}


def _true_division(name: str, x: tuple, other: tuple) -> Verdict | None:
    """``/`` of integer (or boolean) arrays and scalars: the standard's ``__truediv__``
    takes floating-point arrays (integer inputs are implementation-defined; NumPy and
    torch give float64 or float32, array-api-strict raises). A float operand is judged
    by the kind rules instead (a float scalar or array with an integer array)."""
    side = _TRUE_DIVISION.get(name)
    if side is None or dtype_kind(x[2]) not in ("int", "bool"):
        return None
    okind = (
        other[1] if other[0] == "scalar" else dtype_kind(other[2]) if other[0] == "array" else None
    )
    if okind not in ("int", "bool"):
        return None
    cast = "xp.astype(x, xp.float64)"
    if other[0] == "array":
        suggestion = f"{cast} / xp.astype(y, xp.float64)"
    elif side == "left":
        suggestion = f"{cast} / ..." if name == "__truediv__" else f"x = {cast} / ..."
    else:
        suggestion = f"... / {cast}"
    operand = other[2] if other[0] == "array" else "int"
    return Verdict(
        "non_standard_usage",
        name,
        suggestion,
        f"/ mixes {x[2]} and {operand}: true division of {x[2]}"
        + (f" by {other[2]}" if other[0] == "array" else " by a Python int")
        + ": the standard's / takes floating-point arrays (integer inputs are "
        "implementation-defined; array-api-strict refuses them)",
    )


_PYTHON_CAST = {"int": "int", "bool": "bool", "float": "float"}


def _assigned_kind(name: str, x: tuple, value: tuple) -> Verdict | None:
    """``x[key] = v`` with ``v`` of a higher kind of dtype than ``x`` (a Python float or a
    float array into an integer array): NumPy and torch cast it silently (truncating),
    array-api-strict raises; the standard assigns only what promotes to ``x``'s dtype."""
    xkind = dtype_kind(x[2])
    if xkind not in _KIND_ORDER:
        return None
    if value[0] == "scalar":
        vkind, what = value[1], f"a Python {value[1]}"
        cast = _PYTHON_CAST.get(xkind)
        suggestion = f"x[key] = {cast}(value)" if cast and vkind != "complex" else None
    elif value[0] == "array":
        vkind, what = dtype_kind(value[2]), f"a {value[2]} array"
        suggestion = f"x[key] = xp.astype(value, xp.{x[2]})"
    else:
        return None
    if vkind not in _KIND_ORDER or _KIND_ORDER[vkind] <= _KIND_ORDER[xkind]:
        return None
    return Verdict(
        "non_standard_usage",
        name,
        suggestion,
        f"assigns {what} into an array of {x[2]}: the standard does not cast across kinds of "
        "dtype on assignment (NumPy and torch truncate silently, array-api-strict raises)",
    )


#: how a suggestion spells an index part of each kind (`operand_kind`)
_PART_TEXT = {"scalar": "i", "slice": "a:b", "array": "idx", "marker": "None"}


def _partial_index(x: tuple, parts: tuple) -> tuple[str, int] | None:
    """The suggestion (``x[i, ...]``) and the axes indexed when an index without ``...`` covers fewer axes than
    the array has (``x[1]`` on a 2-D array): NumPy and torch fill the rest with ``:``,
    the standard leaves it unspecified. A boolean mask covers as many axes as it has."""
    ndim = x[3]
    if type(ndim) is not int or ("marker", "...") in parts:
        return None
    covered = 0
    for p in parts:
        if p[0] == "marker":
            continue  # None adds an axis and indexes none
        if p[0] == "array" and dtype_kind(p[2]) == "bool":
            covered += p[3] if type(p[3]) is int else 1
        else:
            covered += 1
    if covered >= ndim:
        return None
    return "x[" + ", ".join([*(_PART_TEXT.get(p[0], "i") for p in parts), "..."]) + "]", covered


def _lacking_negative_steps() -> str:
    return ", ".join(b.title for b in all_backends() if not b.negative_step_slices)


def _list_along(parts: tuple) -> int | None:
    """The axis of what the rest of the index leaves that its one list of integers
    indexes (``X[1:, [2, 0, 1]]``: 1), where the other parts are integers and slices and
    no slice parts the list from an integer (NumPy would move the axis first); None
    otherwise (`porter_ext.spec.indexing.TAKE_ALONG`)."""
    lists = [i for i, p in enumerate(parts) if p[0] == "list"]
    if len(lists) != 1 or not parts[lists[0]][2]:
        return None
    at = lists[0]
    if any(p[0] not in ("list", "slice", "scalar") or p[1:2] == ("bool",) for p in parts):
        return None  # an array, None or ..., or a bool (an axis NumPy adds)
    ints = [i for i, p in enumerate(parts) if p[0] == "scalar"]
    slices = [i for i, p in enumerate(parts) if p[0] == "slice"]
    if any(p[0] == "scalar" and p[1] != "int" for p in parts):
        return None
    if any(min(i, at) < j < max(i, at) for i in ints for j in slices):
        return None
    return sum(1 for j in slices if j < at)


def _ranges_among_integers(std: Standard, x: tuple, parts: tuple) -> bool:
    """Whether the index is ranges, integer arrays and integers, one per axis of ``x``,
    with at least one range and one integer array (`porter_ext.spec.indexing.RANGE_PARTS`)."""
    if std.version < "2024.12" or len(parts) < 2 or type(x[3]) is not int or len(parts) != x[3]:
        return False
    ranges = [p for p in parts if p == ("other", "range")]
    arrays = [p for p in parts if p[0] == "array"]
    others = [p for p in parts if p not in ranges and p not in arrays]
    return (
        bool(ranges)
        and all(dtype_kind(p[2]) == "int" for p in arrays)
        and all(p == ("scalar", "int") for p in others)
    )


def _rows_taken(x: tuple, key: tuple) -> Verdict | None:
    """``C[X]``: one integer array ``X`` indexing the first axis of ``C`` (NumPy and torch
    fill the others with ``:``), as the standard's ``take`` writes it with the person's
    expressions (`porter_ext.spec.indexing`); None for any other index."""
    if key[0] != "array" or dtype_kind(key[2]) != "int" or type(x[3]) is not int:
        return None
    template = take_template(key[3] if type(key[3]) is int else None)
    return Verdict(
        "non_standard_usage",
        "take",
        take_rewrite(template, "x", "idx"),
        "an integer array indexing the first axis of an array of more axes: the standard "
        "indexes with integer arrays only where every axis gets one (2024.12); its take "
        "gathers along one axis",
        template,
    )


def classify_index(
    std: Standard, name: str, x: tuple, key: tuple, value: tuple | None = None
) -> Verdict:
    """``x[key]`` (``name`` ``__getitem__``) or ``x[key] = value`` (``__setitem__``)."""
    parts = key[1] if key[0] == "tuple" else (key,)
    kinds = [p[0] for p in parts]
    setting = name == "__setitem__"
    if value is not None and value[0] in ("list", "tuple"):
        return Verdict(
            "non_standard_usage",
            name,
            "x[key] = xp.asarray(...)",
            f"assigning a Python {value[0]}: the standard assigns arrays and Python scalars",
        )
    if value is not None and value[0] == "array" and value[1] != x[1]:
        return Verdict(
            "non_standard_usage",
            name,
            "x[key] = xp.asarray(y)",
            f"assigns an array of {value[1]} into one of {x[1]}: two namespaces",
        )
    if value is not None:
        kinds_issue = _assigned_kind(name, x, value)
        if kinds_issue is not None:
            return kinds_issue
    if key[0] == "list" and key[2] and not setting and type(x[3]) is int and x[3] >= 1:
        return Verdict(
            "non_standard_usage",
            "take",
            take_rewrite(TAKE_LIST, "x", "[...]"),
            "a Python list as an index: the standard indexes with integers, slices and "
            "arrays, not lists; its take gathers the rows a list of integers names",
            TAKE_LIST,
        )
    along = _list_along(parts) if key[0] == "tuple" and not setting else None
    if along is not None:
        return Verdict(
            "non_standard_usage",
            "take",
            f"xp.take(x[...], xp.asarray([...]), axis={along})",
            "a Python list in an index: the standard indexes with integers, slices and "
            "arrays, not lists; its take gathers along the axis the list indexes",
            TAKE_ALONG,
        )
    if "list" in kinds:
        return Verdict(
            "non_standard_usage",
            name,
            "xp.take(x, xp.asarray([...]), axis=0)" if not setting else "x[xp.asarray(...)]",
            "a Python list as an index: the standard indexes with integers, slices and "
            "arrays, not lists",
        )
    arrays = [p for p in parts if p[0] == "array"]
    for p in arrays:
        if p[1] != x[1]:
            return Verdict(
                "non_standard_usage",
                name,
                "x[xp.asarray(idx)]",
                f"an index array of {p[1]} for an array of {x[1]}: two namespaces",
            )
    if not setting and _ranges_among_integers(std, x, parts):
        return Verdict(
            "non_standard_usage",
            name,
            "x[xp.arange(...), idx]",
            "a range as an index: the standard indexes with integers, slices and arrays; "
            "as xp.arange it is an integer array, and with every axis given an integer "
            "array the index is the standard's (2024.12)",
            RANGE_PARTS,
        )
    if any(k == "other" for k in kinds):
        odd = next(p for p in parts if p[0] == "other")
        return Verdict(
            "non_standard_usage", name, None, f"a {odd[1]} as an index is not in the standard"
        )
    masks = [p for p in arrays if dtype_kind(p[2]) == "bool"]
    integers = [p for p in arrays if dtype_kind(p[2]) == "int"]
    if integers:
        rows = _rows_taken(x, key) if not setting else None
        if rows is not None and (std.version < "2024.12" or x[3] != 1):
            return rows
        if std.version < "2024.12":
            return Verdict(
                "non_standard_usage",
                name,
                "xp.take(x, idx, axis=...)",
                f"integer-array indexing is in the standard from 2024.12 (checked against "
                f"{std.version})",
            )
        if setting:
            return Verdict(
                "non_standard_usage",
                name,
                "xp.where(mask, value, x)",
                "assigning through integer-array indices is not in the standard",
            )
        covered = all(k in ("array", "scalar") for k in kinds) and len(parts) == x[3]
        if not covered or masks:
            return Verdict(
                "non_standard_usage",
                name,
                "xp.take(x, idx, axis=...)",
                "integer-array indexing is standard only when every axis gets an integer or "
                "an integer array (no slices, masks or missing axes)",
            )
    sole_mask = key[0] == "array" and dtype_kind(key[2]) == "bool"
    partial = None if sole_mask else _partial_index(x, parts)
    if partial is not None:
        return Verdict(
            "non_standard_usage",
            name,
            partial[0],
            f"an index of {partial[1]} of the {x[3]} axes, without ...: the standard indexes "
            "every axis or ends the index with ... (NumPy and torch fill in the rest, "
            "array-api-strict raises)",
            EVERY_AXIS,
        )
    if any(p[0] == "slice" and p[1] for p in parts):
        lacking = _lacking_negative_steps()
        if lacking:
            return Verdict(
                "standard",
                name,
                "xp.flip(x, axis=...)",
                f"negative slice steps are standard, but {lacking} lacks them: "
                "xp.flip works everywhere",
            )
    if masks:
        return Verdict("standard", name, None, _DATA_DEPENDENT)
    return Verdict("standard", name)


def classify_protocol(std: Standard, name: str) -> Verdict:
    """``len(x)``, or ``name(x)`` iterating over an array of two or more axes: the
    standard's arrays have no ``__len__`` or ``__iter__``, and Python's fallback,
    ``x[0]``, ``x[1]``, ..., is a partial index of each row (array-api-strict raises)."""
    if name == "len":
        return Verdict(
            "non_standard_usage",
            None,
            length_rewrite("x"),
            "len() of an array: the standard's arrays have no __len__ (array-api-strict "
            "raises); x.shape[0] is the length of the first axis",
            LENGTH,
        )
    unstack = "unstack" in std.functions
    if name == "zip" and unstack:
        return Verdict(
            "non_standard_usage",
            "unstack",
            "zip(xp.unstack(x), xp.unstack(y))",
            "zip() iterates over arrays: the standard's arrays are not iterable, and each "
            "row would be a partial index (array-api-strict raises); xp.unstack gives the "
            "rows of each",
            ZIP_ROWS,
        )
    rows = "xp.unstack(x)" if unstack else "(x[i, ...] for i in range(x.shape[0]))"
    return Verdict(
        "non_standard_usage",
        "unstack" if unstack else None,
        f"{name}({rows})" if name != "iter" else rows,
        f"{name}() iterates over an array: the standard's arrays are not iterable, and each "
        f"row would be a partial index (array-api-strict raises); {rows} gives the rows",
        ROWS if unstack and name in ROW_BUILTINS else None,
    )
