"""Deciding, for one call, whether it is inside the standard: by name and by usage.

The name decides first (is ``max`` a standard function? is ``sum`` an array method?), then
the usage: the actual arguments are bound to the standard signature (a positional
``axis``, a two-array ``max``, a keyword the standard lacks all fail to bind), and the
replacement table names what to write instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from porter_ext.backends import LIBRARIES
from porter_ext.record.resolve import Callee
from porter_ext.spec.replacements import choose, find, render_suggestion
from porter_ext.spec.standard import Standard

#: the array libraries: the replacement table's entries (its "*" ones included) apply to
#: their callees only, not to the array API helpers
_TABLE_LIBRARIES = frozenset(LIBRARIES)


@dataclass(frozen=True, eq=False)  # identity: verdicts are cached, hashing must be cheap
class Verdict:
    status: str
    standard_name: str | None = None
    suggestion: str | None = None
    message: str = ""


STANDARD_HELPER = Verdict("standard", None, None, "array-api-compat helper")


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
    if callee.library == "array_api_compat":
        return STANDARD_HELPER
    entry = choose(entries, args, kwargs, self_obj) if entries else None
    suggestion = render_suggestion(entry, args, kwargs, self_obj) if entry is not None else None
    if entry is not None and entry.status in ("device_specific", "host_sync"):
        return Verdict(entry.status, entry.standard_name, suggestion, entry.note)

    name = callee.name
    if callee.kind == "function":
        spec = std.functions.get(name)
    elif callee.kind == "method":
        spec = std.array_methods.get(name)
    else:
        spec = None
        if name in std.array_attributes:
            if entry is not None and entry.status == "non_standard_usage":
                return Verdict("non_standard_usage", entry.standard_name, suggestion, entry.note)
            return Verdict("standard", name)

    if spec is not None:
        nargs = len(args)
        reason = spec.check_call(nargs, tuple(kwargs))
        if reason is None and (entry is None or entry.status != "non_standard_usage"):
            return Verdict("standard", name)
        if entry is not None:
            message = reason or entry.note
            if entry.note and reason:
                message = f"{reason}. {entry.note}"
            return Verdict("non_standard_usage", entry.standard_name or name, suggestion, message)
        return Verdict(
            "non_standard_usage",
            name,
            f"xp.{spec.render()}",
            reason or "this usage is outside the standard",
        )

    # the name itself is outside the standard
    if entry is not None:
        status = "non_standard" if entry.status == "non_standard_usage" else entry.status
        return Verdict(status, entry.standard_name, suggestion, entry.note)
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
