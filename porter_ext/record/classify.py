"""Deciding, for one call, whether it is inside the standard: by name and by usage.

The name decides first (is ``max`` a standard function? is ``sum`` an array method?), then
the usage: the actual arguments are bound to the standard signature (a positional
``axis``, a two-array ``max``, a keyword the standard lacks all fail to bind), and the
replacement table names what to write instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from porter_ext.backends import HELPERS, LIBRARIES, backend_for, dtype_name, get_backend
from porter_ext.record.resolve import Callee
from porter_ext.spec.dtype_categories import (
    BINARY,
    CATEGORY,
    KINDS,
    SCALAR_OPERANDS,
    complex_of,
    dtype_kind,
    scalar_issue,
)
from porter_ext.spec.replacement import Replacement
from porter_ext.spec.replacements import choose, find, render_suggestion
from porter_ext.spec.standard import FunctionSpec, Standard

#: the array libraries: the replacement table's entries (its "*" ones included) apply to
#: their callees only, not to the array API helpers
_TABLE_LIBRARIES = frozenset(LIBRARIES)


@dataclass(frozen=True, eq=False)  # identity: verdicts are cached, hashing must be cheap
class Verdict:
    status: str
    standard_name: str | None = None
    #: rendered from the call's values (the records write it from its source where they
    #: can: ``template``)
    suggestion: str | None = None
    message: str = ""
    #: the suggestion's template over the call's source (`spec.rewrites.suggestion_from_source`)
    #: and the table entry it comes from, or None
    template: str | None = None
    entry: Replacement | None = None
    #: where the values chose how to rewrite the call (a list made an array, an integer
    #: array cast to the floating dtype the function takes): a template over the call's
    #: source that replaces it whole (`spec.rewrites.rewrite_from_template`), which the
    #: fix stage fills with the call as it rewrote it; None where the table's entry is
    #: the rewrite (or there is none)
    rewrite: str | None = None


STANDARD_HELPER = Verdict("standard", None, None, "array-api-compat helper")
#: parameters of standard functions that take an array (``x1``/``x2`` also a Python scalar)
_ARRAY_PARAMS = frozenset({"x", "x1", "x2", "condition"})
#: standard functions whose ``x`` must have a numeric dtype (a sum of booleans is not one)
NUMERIC_ONLY = frozenset({"sum", "prod", "mean", "std", "var", "cumulative_sum", "cumulative_prod"})
_POSITIONAL = ("positional_only", "positional_or_keyword")
_KIND_ORDER = {"bool": 0, "int": 1, "float": 2, "complex": 3}
_PYTHON_DTYPES = {int: "int64", float: "float64", complex: "complex128", bool: "bool"}


def value_sensitive(callee: Callee, args: tuple, kwargs: dict) -> bool:
    """Whether the verdict on this call depends on argument values, not only on the
    shape of the call: a list where an array goes, a dtype, a reduction's input dtype."""
    if callee.kind != "function":
        return False
    name = callee.name
    if name in NUMERIC_ONLY or name in CATEGORY or name in SCALAR_OPERANDS or "dtype" in kwargs:
        return True
    for a in args:
        if type(a) is list or type(a) is tuple:
            return True
    return any(type(v) is list or type(v) is tuple for v in kwargs.values())


def _dtype_issue(value: Any, std: Standard) -> tuple[str, str] | None:
    if value is None:
        return None
    python = _PYTHON_DTYPES.get(value) if isinstance(value, type) else None
    if python is not None:
        return (
            f"dtype={value.__name__} is a Python type, not one of the standard's dtypes",
            f"dtype=xp.{python}",
        )
    if isinstance(value, str):
        return (
            f"dtype={value!r}: the standard's dtypes are objects, not strings",
            "dtype=xp.float64",
        )
    name = getattr(value, "name", None) if not isinstance(value, type) else value.__name__
    if not isinstance(name, str):
        name = str(value).rpartition(".")[2]
    if name not in std.dtypes:
        return (f"dtype {name} is not one of the standard's dtypes", None)
    return None


def _as_array(function: str, value: Any) -> str:
    """``xp.asarray({}, dtype=xp.float64)``: the Python sequence ``value`` made an array, of
    a dtype ``function`` takes where its elements are of a kind it does not (a list of ints
    into ``exp``)."""
    category = CATEGORY.get(function)
    kinds = {_SCALAR_KINDS.get(type(v)) for v in value}
    dtype = ""
    if category is not None and None not in kinds and not kinds <= KINDS[category]:
        target = "float64" if "float" in KINDS[category] else None
        dtype = f", dtype=xp.{target}" if target is not None else ""
    return f"xp.asarray({{}}{dtype})"


def _from_entry(entry: Replacement, status: str, suggestion: str | None) -> tuple:
    """A verdict's fields from a table entry (its suggestion rendered from the values)."""
    return status, entry.standard_name, suggestion, entry.note, entry.suggestion, entry


def argument_issue(
    spec: FunctionSpec, args: tuple, kwargs: dict, std: Standard
) -> tuple[str, str | None] | tuple[str, str | None, str] | None:
    """(reason, suggestion[, its template over the call's source]) when an argument's
    kind is outside the standard signature:
    a list or tuple where an array goes, a dtype the standard lacks, a boolean array
    where a numeric one is needed."""
    positional = [p.name for p in spec.params if p.kind in _POSITIONAL]
    bound = list(zip(positional, args, strict=False)) + list(kwargs.items())
    issue = _usage_issue(spec, bound, std)
    if issue is None or len(issue) < 3 or issue[2] is None:
        return issue
    reason, suggestion, spelled = issue
    return reason, suggestion, _call_template(spec.name, positional, args, kwargs, spelled)


def _call_template(
    function: str, positional: list[str], args: tuple, kwargs: dict, spelled: dict[str, str]
) -> str:
    """The whole call over its source, each argument as the call passed it (``{arg0}``
    the first positional one, ``{axis}`` the keyword ``axis=``) and those in ``spelled``
    (parameter → its spelling over ``{parameter}``) written so:
    ``xp.log(xp.astype({arg0}, xp.float64))`` for ``np.log(i)`` of an integer array."""
    slots = {name: f"{{arg{i}}}" for i, name in enumerate(positional[: len(args)])}
    slots.update({k: f"{{{k}}}" for k in kwargs})
    parts = [
        spelled[name].format_map(slots) if name in spelled else slots[name]
        for name in positional[: len(args)]
    ]
    parts += [f"{{arg{i}}}" for i in range(len(positional), len(args))]
    parts += [f"{k}={spelled[k].format_map(slots) if k in spelled else slots[k]}" for k in kwargs]
    return f"xp.{function}({', '.join(parts)})"


def _spelled_with_names(function: str, names: list[str], spelled: dict[str, str]) -> str:
    """A suggestion over the parameters' names (``xp.log(xp.astype(x, xp.float64))``)."""
    slots = {n: n for n in names}
    return f"xp.{function}({', '.join(spelled[n].format_map(slots) if n in spelled else n for n in names)})"


def _usage_issue(spec: FunctionSpec, bound: list, std: Standard) -> tuple | None:
    """(reason, suggestion[, spelled: parameter → its spelling over ``{parameter}`` in a
    whole rewrite, or a ready template]) for `argument_issue`."""
    for name, value in bound:
        if name in _ARRAY_PARAMS and (type(value) is list or type(value) is tuple):
            return (
                f"a Python {type(value).__name__} as {name}: the standard's {spec.name}() "
                "takes an array",
                f"xp.{spec.name}(xp.asarray(...), ...)",
                {name: _as_array(spec.name, value).replace("{}", f"{{{name}}}")},
            )
        if name == "dtype":
            issue = _dtype_issue(value, std)
            if issue is not None:
                return issue
        numeric = name == "x" and spec.name in NUMERIC_ONLY
        if numeric and backend_for(value) is not None and dtype_name(value) == "bool":
            return (
                f"{spec.name}() of a boolean array: the standard needs a numeric dtype",
                f"xp.{spec.name}(xp.astype(x, xp.int64))"
                if spec.name != "sum"
                else "xp.count_nonzero(x)",
            )
    operands = [(n, v) for n, v in bound if n in _ARRAY_PARAMS]
    return _kind_issue(spec.name, operands) or _scalar_issue(spec.name, operands, std.version)


#: what a function outside its category means, where a cast would change the result:
#: fftshift of an integer array is a roll by half of each axis (with ``axes=None``)
_KIND_REWRITES = {
    "fft.fftshift": "xp.roll(x, tuple(n // 2 for n in x.shape), axis=tuple(range(x.ndim)))",
    "fft.ifftshift": "xp.roll(x, tuple(-(n // 2) for n in x.shape), axis=tuple(range(x.ndim)))",
}
#: (function, kind of the input outside its category) → what else to write
_KIND_NOTES = {
    ("fft.fft", "float"): "xp.fft.rfft(x) gives its first n // 2 + 1 values (the "
    "non-negative frequencies) from the real array itself",
    ("fft.fftn", "float"): "xp.fft.rfftn(x) gives half of the last axis from the real array itself",
    ("fft.rfft", "complex"): "for a complex input xp.fft.fft transforms it whole (NumPy "
    "refuses it, torch raises)",
    ("fft.rfftn", "complex"): "for a complex input xp.fft.fftn transforms it whole",
    ("fft.ihfft", "complex"): "for a complex input xp.fft.ifft transforms it whole",
}


def _cast_into(allowed: frozenset[str], dtype: str) -> str | None:
    """The dtype to cast an array of ``dtype`` to so that it is of a kind in ``allowed``
    with the same values (a real or integer array into a complex one, an integer array
    into a floating one), or None (a complex array into a real one loses its imaginary
    part: no cast keeps the meaning)."""
    kind = dtype_kind(dtype)
    if "float" in allowed and kind in ("int", "bool"):
        return "float64"
    if "complex" in allowed and kind in ("int", "bool", "float"):
        return complex_of(dtype)
    return None


def _kind_issue(function: str, arrays: list[tuple[str, Any]]) -> tuple | None:
    """(reason, suggestion, spelled: the casts of a whole rewrite, or None) when an array input's dtype is outside the kinds ``function``
    takes (``exp`` of an integer array), or two inputs of an elementwise function mix
    kinds of dtype (``maximum`` of a float and an integer array): the standard leaves
    both implementation-defined, and array-api-strict raises."""
    category = CATEGORY.get(function)
    if category is None:
        return None
    dtypes = {n: dtype_name(v) for n, v in arrays if backend_for(v) is not None}
    kinds = {n: dtype_kind(d) for n, d in dtypes.items()}
    allowed = KINDS[category]
    wrong = [n for n, k in kinds.items() if k != "other" and k not in allowed]
    if wrong:
        casts = {n: _cast_into(allowed, dtypes[n]) for n in wrong}
        spelled = {n: f"xp.astype({{{n}}}, xp.{casts[n]})" for n in wrong}
        names = [n for n, _ in arrays]
        suggestion = None
        if None not in casts.values():
            suggestion = _spelled_with_names(function, names, spelled)
        else:
            spelled = None
        rewrite = _KIND_REWRITES.get(function)
        if rewrite is not None and all(kinds[n] in ("int", "bool") for n in wrong):
            suggestion, spelled = rewrite, None  # the same values, and the array's own dtype
        note = _KIND_NOTES.get((function, kinds[wrong[0]]), "")
        return (
            f"{function}() of {', '.join(dtypes[n] for n in wrong)}: the standard's "
            f"{function} takes {category} arrays" + (f"; {note}" if note else ""),
            suggestion,
            spelled,
        )
    if function in BINARY and len(kinds) == 2 and "other" not in kinds.values():
        (n1, k1), (n2, k2) = kinds.items()
        if k1 != k2:
            low = n1 if _KIND_ORDER[k1] < _KIND_ORDER[k2] else n2
            target = dtypes[n2 if low == n1 else n1]
            spelled = {low: f"xp.astype({{{low}}}, xp.{target})"}
            return (
                f"{function}() mixes {dtypes[n1]} and {dtypes[n2]}: the standard does not "
                "promote across kinds of dtype",
                _spelled_with_names(function, [n for n, _ in arrays], spelled),
                spelled,
            )
    return None


_SCALAR_KINDS = {bool: "bool", int: "int", float: "float", complex: "complex"}


def _scalar_issue(function: str, operands: list[tuple[str, Any]], version: str) -> tuple | None:
    """(reason, suggestion, spelled) when a Python scalar operand of ``function`` (``x1``/``x2`` of
    an elementwise function or ``where``) is outside the standard: before 2024.12 these
    take arrays only; from 2024.12 a scalar mixes with an array of its own kind of dtype
    only (`scalar_issue`, as for operators: ``xp.multiply(i, 0.5)`` on an integer array
    is implementation-defined)."""
    if function not in SCALAR_OPERANDS:
        return None
    scalars = [(n, _SCALAR_KINDS[type(v)]) for n, v in operands if type(v) in _SCALAR_KINDS]
    arrays = [(n, v) for n, v in operands if n != "condition" and backend_for(v) is not None]
    if not scalars or len(arrays) != 1:
        return None
    names = [n for n, _ in operands]
    array, dtype = arrays[0][0], dtype_name(arrays[0][1])
    for scalar, kind in scalars:
        issue = scalar_issue(dtype, kind, version)
        reason, cast = issue if issue is not None else ("", None)
        spelled = {}
        if cast is not None:
            spelled[array] = f"xp.astype({{{array}}}, xp.{cast})"
        elif issue is not None:  # a bool with numbers: the scalar in the array's kind
            spelled[scalar] = f"{dtype_kind(dtype)}({{{scalar}}})"
        if version < "2024.12":
            target = f"xp.{cast}" if cast is not None else f"{{{array}}}.dtype"
            given = spelled.get(scalar, f"{{{scalar}}}")
            spelled[scalar] = f"xp.asarray({given}, dtype={target})"
            reason = (
                f"a Python {kind} as {scalar}: the standard's {function}() takes arrays "
                f"(Python scalars from 2024.12; checked against {version})"
            )
        elif issue is None:
            continue
        else:
            reason = f"{function}(): {reason}"
        return reason, _spelled_with_names(function, names, spelled), spelled
    return None


def _receiver_cast(entry: Replacement, self_obj: object) -> str | None:
    """The dtype a method's array must be cast to for the standard function its entry
    rewrites it to (``i.mean()`` of an integer array: float64, as NumPy's mean gives),
    or None where its dtype is of a kind that function takes (or no cast keeps it)."""
    category = CATEGORY.get(entry.standard_name or "")
    if category is None or entry.rewrite is None or backend_for(self_obj) is None:
        return None
    dtype = dtype_name(self_obj)
    if dtype_kind(dtype) in KINDS[category] or dtype_kind(dtype) == "other":
        return None
    return _cast_into(KINDS[category], dtype)


def _cast_receiver(
    entry: Replacement, status: str, cast: str, args: tuple, kwargs: dict, self_obj: object
) -> Verdict:
    """The verdict on ``i.mean()`` of an integer array: the entry's rewrite with the array
    cast first (``xp.mean(xp.astype({x}, xp.float64))``), since the standard function
    takes a kind of dtype the array is not."""
    rewrite = _BARE_X_SLOT.sub(f"xp.astype({{x}}, xp.{cast})", entry.rewrite or "")
    advice = _BARE_X_WORD.sub(f"xp.astype(x, xp.{cast})", entry.suggestion)
    cast_entry = replace(entry, suggestion=advice, rewrite=rewrite)
    name = entry.standard_name
    return Verdict(
        status,
        name,
        render_suggestion(cast_entry, args, kwargs, self_obj),
        f"{entry.note}; {name}() of {dtype_name(self_obj)}: the standard's {name} takes "
        f"{CATEGORY[name or '']} arrays, so the array is cast first",
        rewrite,
        cast_entry,
        rewrite=rewrite,
    )


#: the array in a rewrite's template (``{x}``) and in a suggestion (a bare ``x``)
_BARE_X_SLOT = re.compile(r"\{x\}")
_BARE_X_WORD = re.compile(r"(?<![\w.{])x(?![\w}])")


def table_entries(callee: Callee) -> tuple:
    if callee.library not in _TABLE_LIBRARIES:
        return ()
    return find(callee.library, callee.kind, callee.name)


def is_conditional(entries: tuple) -> bool:
    return any(e.when is not None for e in entries) or any("{" in e.suggestion for e in entries)


def classify(
    callee: Callee,
    args: tuple,
    kwargs: dict,
    self_obj: object,
    std: Standard,
    entries: tuple,
) -> Verdict:
    """The verdict on one call of ``callee`` with these arguments under standard ``std``."""
    if callee.library == HELPERS:
        return STANDARD_HELPER
    if callee.kind == "transformation":
        return Verdict(
            "outside_namespace",
            None,
            None,
            f"{callee.qualname} transforms functions (not in the standard); calls made while "
            "it traces have device_out 'traced'",
        )
    if callee.library not in _TABLE_LIBRARIES:
        return Verdict(
            "outside_namespace",
            None,
            None,
            f"{callee.qualname} belongs to {callee.library}, not to an array namespace: not "
            "checked against the standard",
        )
    if callee.kind == "function" and callee.name.startswith(
        get_backend(callee.library).runtime_api
    ):
        return Verdict(
            "outside_namespace",
            None,
            None,
            f"{callee.qualname} is {callee.library}'s device-agnostic runtime API: not in the "
            "standard, and the portable way to reach a device in this library",
        )
    entry = choose(entries, args, kwargs, self_obj) if entries else None
    suggestion = render_suggestion(entry, args, kwargs, self_obj) if entry is not None else None
    if entry is not None and entry.status in ("device_specific", "host_sync"):
        return Verdict(*_from_entry(entry, entry.status, suggestion))

    name = callee.name
    if callee.kind == "function":
        spec = std.functions.get(name)
    elif callee.kind == "method":
        spec = std.array_methods.get(name)
    else:
        spec = None
        if name in std.array_attributes:
            if entry is not None and entry.status == "non_standard_usage":
                return Verdict(*_from_entry(entry, "non_standard_usage", suggestion))
            return Verdict("standard", name)

    if spec is not None:
        nargs = len(args)
        reason = spec.check_call(nargs, tuple(kwargs))
        if reason is None and (entry is None or entry.status != "non_standard_usage"):
            issue = argument_issue(spec, args, kwargs, std)
            if issue is not None:
                template = issue[2] if len(issue) > 2 else None
                return Verdict(
                    "non_standard_usage", name, issue[1], issue[0], template, rewrite=template
                )
            return Verdict("standard", name)
        if entry is not None:
            message = reason or entry.note
            if entry.note and reason:
                message = f"{reason}. {entry.note}"
            return Verdict(
                "non_standard_usage",
                entry.standard_name or name,
                suggestion,
                message,
                entry.suggestion,
                entry,
            )
        return Verdict(
            "non_standard_usage",
            name,
            f"xp.{spec.render()}",
            reason or "this usage is outside the standard",
        )

    # the name itself is outside the standard
    if entry is not None:
        status = "non_standard" if entry.status == "non_standard_usage" else entry.status
        if callee.kind == "method":
            cast = _receiver_cast(entry, self_obj)
            if cast is not None:
                return _cast_receiver(entry, status, cast, args, kwargs, self_obj)
        renamed = std.functions.get(entry.standard_name or "") if entry.rewrite else None
        if callee.kind == "function" and renamed is not None and status == "non_standard":
            # ``np.arctan([-1, 0, 1])``: the standard's name, and its usage too
            issue = argument_issue(renamed, args, kwargs, std)
            if issue is not None and len(issue) > 2:
                reason, advice, template = issue
                message = f"{entry.note}; {reason}"
                return Verdict(status, renamed.name, advice, message, template, rewrite=template)
        return Verdict(*_from_entry(entry, status, suggestion))
    if callee.kind == "method" and name in std.functions:
        return Verdict(
            "non_standard",
            name,
            f"xp.{name}(x, ...)",
            "array methods other than operators are not in the standard: call the "
            "namespace function",
        )
    base = name.rpartition(".")[2]
    if callee.kind == "function":
        return Verdict(
            "non_standard",
            None,
            f"xp.backend.{base}(...)",
            f"{base} is not in the array API standard ({std.version}); if there is no "
            "portable way, mark it as deliberate with the backend escape hatch",
        )
    return Verdict(
        "non_standard",
        None,
        None,
        f"{callee.kind} {name} is not in the array API standard ({std.version})",
    )
