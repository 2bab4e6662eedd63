"""Non-standard spellings of array code and the standard spelling to use instead.

The recorder resolves every call it sees to ``(library, kind, name)`` and asks
:func:`find` for the entries of that callee; :func:`choose` picks the entry whose
condition holds for the actual call (``torch.max(a, b)`` and ``torch.max(x, 1)`` are
different findings), and :func:`render_suggestion` fills the entry's code template from
the call (``x.sum(1)`` -> ``xp.sum(x, axis=1)``).

Conventions for the call seen by conditions and templates:

- ``args``/``kwargs`` are what the call passed; for a method or attribute ``self_obj`` is
  the array it belongs to and ``args`` excludes it; for a function ``self_obj`` is None.
- The *operands* of a call are ``(self_obj, *args)`` for a method and ``args`` for a
  function, so operand 0 is the array in both ``x.sum(1)`` and ``np.sum(x, 1)``.

Everything here is duck-typed (an array is anything with ``shape`` and ``dtype``; a
device object is what a library's adapter recognises by its attributes), so no array
library is imported; the table itself lives in the package ``porter_ext.spec.table``,
one module per chapter, and is indexed on the first lookup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from porter_ext.guard import internal_error

__all__ = [
    "CONDITIONS",
    "KINDS",
    "LIBRARIES",
    "PLACEHOLDERS",
    "STANDARD_DTYPES",
    "STATUSES",
    "Replacement",
    "all_entries",
    "choose",
    "find",
    "render_suggestion",
]

from porter_ext.spec.conditions import (
    ALL_DTYPES,
    AXIS_KEYWORDS,
    CONDITIONS,
    STANDARD_DTYPES,
    dtype_name,
    is_axis,
    is_int,
)
from porter_ext.spec.replacement import KINDS, LIBRARIES, STATUSES, Replacement

# --- lookup ------------------------------------------------------------------------------

_Key = tuple[str, str, str]
_INDEX: dict[_Key, tuple[Replacement, ...]] | None = None


def all_entries() -> tuple[Replacement, ...]:
    """Every entry of the table, in table order."""
    from porter_ext.spec.table import ENTRIES

    return ENTRIES


def _index() -> dict[_Key, tuple[Replacement, ...]]:
    global _INDEX
    if _INDEX is None:
        grouped: dict[_Key, list[Replacement]] = {}
        for entry in all_entries():
            grouped.setdefault((entry.library, entry.kind, entry.name), []).append(entry)
        _INDEX = {key: tuple(entries) for key, entries in grouped.items()}
    return _INDEX


@lru_cache(maxsize=4096)
def find(library: str, kind: str, name: str) -> tuple[Replacement, ...]:
    """Entries for this callee, library-specific ones first, then ``"*"`` ones."""
    index = _index()
    star = index.get(("*", kind, name), ())
    if library == "*":
        return star
    return index.get((library, kind, name), ()) + star


def choose(
    entries: Iterable[Replacement], args: tuple, kwargs: dict, self_obj: object = None
) -> Replacement | None:
    """The first entry whose condition holds for this call (``when=None`` holds always).

    A condition that raises or is unknown does not hold: a strange argument must never
    break the person's cell.
    """
    for entry in entries:
        if entry.when is None:
            return entry
        condition = CONDITIONS.get(entry.when)
        if condition is None:
            continue
        try:
            if condition(args, kwargs, self_obj):
                return entry
        except Exception as error:  # a condition's bug must fail a test, not hide a finding
            internal_error(f"the condition {entry.when!r} of a replacement", error)
    return None


# --- suggestions -------------------------------------------------------------------------

_ELLIPSIS = "..."
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
# ", name={placeholder}": dropped whole when the call did not pass that value
_OPTIONAL_KEYWORD = re.compile(r",\s*\w+=\{(\w+)\}")
_ARG = re.compile(r"arg(\d)")


def _literal(obj: object) -> str:
    """repr of a simple literal (int, float, bool, None, str, tuple/list of ints), else '...'."""
    if obj is None or isinstance(obj, bool | int | float | str):
        return repr(obj)
    if isinstance(obj, tuple | list) and all(is_int(i) for i in obj):
        return repr(tuple(obj))
    return _ELLIPSIS


def _as_tuple(values: tuple) -> str | None:
    """A shape/axes argument as one tuple: ``view(2, 3)`` and ``view((2, 3))`` -> '(2, 3)'."""
    if not values:
        return None
    if len(values) == 1 and isinstance(values[0], tuple | list):
        values = tuple(values[0])
    if all(is_int(v) for v in values):
        return repr(tuple(values))
    return _ELLIPSIS


class _CallValues:
    """The placeholder values of one call, computed on demand; None means 'not passed'."""

    def __init__(self, kind: str, args: tuple, kwargs: dict, self_obj: object) -> None:
        self.args = args
        self.kwargs = kwargs
        self.self_obj = self_obj
        # operands: index 0 is the array in both x.sum(1) and np.sum(x, 1)
        self.ops: tuple = (self_obj, *args) if kind != "function" else args

    def _keyword_or_operand(self, keywords: tuple[str, ...], position: int | None) -> object:
        for key in keywords:
            if key in self.kwargs:
                return self.kwargs[key]
        if position is not None and len(self.ops) > position:
            return self.ops[position]
        return None

    def get(self, name: str) -> str | None:
        match = _ARG.fullmatch(name)
        if match:
            i = int(match.group(1))
            return _literal(self.args[i]) if i < len(self.args) else None
        method = getattr(self, f"_{name}", None)
        return method() if method is not None else None

    def _axis(self) -> str | None:
        value = self._keyword_or_operand(AXIS_KEYWORDS, 1)
        if value is None:
            return None
        return _literal(value) if is_axis(value) else _ELLIPSIS

    def _axis_kw(self) -> str | None:
        """The axis only when passed by keyword (where operand 1 is something else)."""
        value = self._keyword_or_operand(AXIS_KEYWORDS, None)
        if value is None:
            return None
        return _literal(value) if is_axis(value) else _ELLIPSIS

    def _keepdims(self) -> str | None:
        value = self._keyword_or_operand(("keepdims", "keepdim"), None)
        return None if value is None else _literal(value)

    def _correction(self) -> str | None:
        if "unbiased" in self.kwargs:
            return "1" if self.kwargs["unbiased"] else "0"
        value = self._keyword_or_operand(("correction", "ddof"), None)
        return None if value is None else _literal(value)

    def _dtype(self) -> str | None:
        candidates = [self.kwargs["dtype"]] if self.kwargs.get("dtype") is not None else []
        candidates += [a for a in self.args if not isinstance(a, str) or a in ALL_DTYPES]
        for value in candidates:
            name = dtype_name(value)
            if name is not None:
                return f"xp.{name}" if name in STANDARD_DTYPES else _ELLIPSIS
        return None

    def _shape(self) -> str | None:
        if "shape" in self.kwargs:
            return _as_tuple((self.kwargs["shape"],))
        return _as_tuple(self.ops[1:])

    def _axes(self) -> str | None:
        for key in ("axes", "dims"):
            if key in self.kwargs:
                return _as_tuple((self.kwargs[key],))
        return _as_tuple(self.ops[1:])

    def _sizes(self) -> str | None:
        return _as_tuple(self.args)

    def _decimals(self) -> str | None:
        value = self._keyword_or_operand(("decimals",), 1)
        return None if value is None else _literal(value)

    def _k(self) -> str | None:
        """A diagonal's offset: ``k=`` (NumPy), ``diagonal=`` (torch) or operand 1."""
        value = self._keyword_or_operand(("k", "offset", "diagonal"), 1)
        return None if value is None else _literal(value)

    def _num_classes(self) -> str | None:
        """one_hot's number of classes: ``num_classes=`` or operand 1."""
        value = self._keyword_or_operand(("num_classes",), 1)
        return None if value is None else _literal(value)

    def _min(self) -> str | None:
        value = self._keyword_or_operand(("min", "a_min"), 1)
        return None if value is None else _literal(value)

    def _max(self) -> str | None:
        value = self._keyword_or_operand(("max", "a_max"), 2)
        return None if value is None else _literal(value)

    def _reversed_axes(self) -> str | None:
        ndim = getattr(self.self_obj, "ndim", None)
        if not is_int(ndim):
            return None
        return repr(tuple(range(ndim - 1, -1, -1)))


#: the placeholders a suggestion may contain (arg0 … arg9 are the raw positional args)
PLACEHOLDERS: frozenset[str] = frozenset(
    {f"arg{i}" for i in range(10)}
    | {
        "axis",
        "axis_kw",
        "keepdims",
        "correction",
        "dtype",
        "shape",
        "axes",
        "sizes",
        "decimals",
        "k",
        "min",
        "max",
        "reversed_axes",
        "num_classes",
    }
)


def render_suggestion(
    entry: Replacement, args: tuple, kwargs: dict, self_obj: object = None
) -> str:
    """The entry's suggestion with its placeholders filled from the call.

    ``{axis}`` is the axis the call passed (``x.sum(1)``, ``np.sum(x, 1)``, ``dim=``,
    ``axis=``), ``{arg0}``, ``{arg1}``… the positional args as simple literals, and a
    value that is not a simple literal shows as ``...``. A keyword segment such as
    ``, axis={axis}`` disappears when the call did not pass that value, so ``x.sum()``
    renders as ``xp.sum(x)``; a bare placeholder without a value shows as ``...``.
    """
    values = _CallValues(entry.kind, args, kwargs, self_obj)

    def value(name: str) -> str | None:
        try:
            return values.get(name)
        except Exception as error:
            internal_error(f"rendering {{{name}}} of a suggestion", error)
            return _ELLIPSIS

    def keep_or_drop(match: re.Match[str]) -> str:
        return match.group(0) if value(match.group(1)) is not None else ""

    text = _OPTIONAL_KEYWORD.sub(keep_or_drop, entry.suggestion)
    return _PLACEHOLDER.sub(lambda m: value(m.group(1)) or _ELLIPSIS, text)
