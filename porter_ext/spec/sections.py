"""NumPy's ``split``, ``vsplit`` and ``hsplit`` as the slices they return: the standard
has no split, and a list of slices is what the call makes (views of the array, in a
list), written from the indices as the source gives them.

``np.split(x, [3, 5])`` → ``[x[:3, ...], x[3:5, ...], x[5:, ...]]`` (NumPy cuts with
these very slices, so negative and out-of-range indices cut alike); a number of equal
sections, ``np.split(x, 2)`` → ``[x[:x.shape[0] // 2, ...], x[x.shape[0] // 2:, ...]]``
(NumPy refuses a length that does not divide, so each cut is that many lengths over the
count). The trailing ``...`` keeps every axis after the split one, which the standard's
indexing asks of an array of more axes than the index names.
"""

from __future__ import annotations

import ast

__all__ = ["NotWritten", "evaluates_nothing", "sections_source"]


class NotWritten(ValueError):
    """The call's sections cannot be written as slices; the message says why."""


def evaluates_nothing(source: str) -> bool:
    """A name, an attribute of one, or a constant: reading it twice reads the same."""
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name | ast.Constant)


def _literal_int(source: str) -> int | None:
    try:
        value = ast.literal_eval(source)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _indices(source: str) -> list[int] | None:
    try:
        value = ast.literal_eval(source)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, list | tuple) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return list(value)
    return None


def sections_source(array: str, sections: str, axis: str) -> str:
    """The list of slices ``np.split(array, sections, axis=axis)`` returns, as source;
    raises `NotWritten` where the source does not give them literally."""
    if not evaluates_nothing(array):
        raise NotWritten(
            f"each part slices {array} again, which would evaluate it once per part: "
            "assign it to a name first"
        )
    along = _literal_int(axis)
    if along is None or along < -1:
        raise NotWritten(
            f"the axis {axis} is not written as 0, 1, ... or -1, so the slices cannot name it"
        )
    before = "..., " if along == -1 else ":, " * along
    after = "" if along == -1 else ", ..."
    cuts = _indices(sections)
    if cuts is not None:
        bounds = [""] + [str(c) for c in cuts] + [""]
    else:
        count = _literal_int(sections)
        if count is None or count < 1:
            raise NotWritten(
                f"the sections {sections} are neither a list of indices nor a number "
                "written in the call: the slices need them"
            )
        length = f"{array}.shape[{along}]"
        cut = [(f"{i} * " if i > 1 else "") + f"{length} // {count}" for i in range(1, count)]
        bounds = ["", *cut, ""]
    parts = [
        f"{array}[{before}{lo}:{hi}{after}]" for lo, hi in zip(bounds, bounds[1:], strict=False)
    ]
    return f"[{', '.join(parts)}]"
