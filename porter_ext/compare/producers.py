"""Which call made an output, where that changes how it is compared: partitions.

A cell's top-level statements are read in order (the syntax of the cell, as recorded);
an output made by a partition call (``p = np.partition(x, 3)``, ``x.partition(3)`` in
place, a last expression ``np.argpartition(x, 3)``) and not rebound or changed after it
is named with the call's ``kth`` and ``axis`` as the cell spells them. The recorded
calls confirm that the call was an array library's (``s.partition(",")`` on a string is
no partition). What a name in ``kth`` or ``axis`` holds is read by the compare stage,
which also checks that the original output is a valid partition before relying on it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from dataclasses import dataclass, replace

from porter_ext.model.calls import CallRecord
from porter_ext.replay.aliasing import call_writes, roots
from porter_ext.spec.partitions import Partitioning, partitioning

__all__ = ["PartitionCall", "partition_outputs"]


@dataclass(frozen=True)
class PartitionCall:
    """A partition call that made an output, with its arguments as the cell wrote them.

    ``kth`` and ``axis`` are literal values, or the name the cell passed (a string) for
    the compare stage to read; ``axis`` None flattens. ``array`` is the name of the array
    partitioned (None: not a plain name, or rebound after the call), which
    ``argpartition``'s indices are compared through.
    """

    indices: bool
    kth: tuple[int, ...] | str
    axis: int | None | str
    array: str | None
    line: int


_NOT_LITERAL = object()


def partition_outputs(code: str, calls: Iterable[CallRecord]) -> dict[str, PartitionCall]:
    """Output name (``_`` for the cell's value) -> the partition call that made it."""
    candidates = _candidates(code)
    if not candidates:
        return {}
    recorded = {
        (c.line, c.name.rpartition(".")[2], c.kind == "method")
        for c in calls
        if c.origin is None and partitioning(c.name) is not None
    }
    found = {}
    for name, readings in candidates.items():
        for method, (call, base) in readings.items():
            if (call.line, base, method) in recorded:
                found[name] = call
    return found


#: output name -> {method form?: (the call, its last name)}: ``x.partition(3, 0)`` reads
#: as a method of ``x`` or as a module's function of ``x``; the recorded call says which
_Readings = dict[str, dict[bool, tuple[PartitionCall, str]]]


@functools.lru_cache(maxsize=128)
def _candidates(code: str) -> _Readings:
    if "partition" not in code:  # no partition call: the cell is not parsed again for it
        return {}
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    found: _Readings = {}
    for index, stmt in enumerate(tree.body):
        changed = _changed(stmt)
        for name in changed:
            found.pop(name, None)
        for readings in found.values():  # the partitioned array rebound: no data for it
            for method, (call, base) in list(readings.items()):
                if call.array in changed:
                    readings[method] = (replace(call, array=None), base)
        last = index == len(tree.body) - 1
        for method in (False, True):
            made = _made(stmt, method, last)
            if made is not None:
                found.setdefault(made[0], {})[method] = made[1]
    return found


def _made(stmt: ast.stmt, method: bool, last: bool) -> tuple[str, tuple[PartitionCall, str]] | None:
    """(output name, (call, its last name)) when ``stmt`` makes an output by a partition
    call, the call read as a method (``method``) or as a module's function."""
    value = stmt.value if isinstance(stmt, ast.Assign | ast.Expr) else None
    if not isinstance(value, ast.Call):
        return None
    read = _partition_call(value, method)
    if read is None:
        return None
    call, spelling, base = read
    if isinstance(stmt, ast.Assign):
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        if not isinstance(target, ast.Name) or method and spelling.in_place_method:
            return None  # a tuple target, or the None an in-place method returns
        return target.id, (call, base)
    if method and spelling.in_place_method:  # x.partition(k): x is the partition
        return (call.array, (call, base)) if call.array is not None else None
    return ("_", (call, base)) if last else None


def _partition_call(node: ast.Call, method: bool) -> tuple[PartitionCall, Partitioning, str] | None:
    """The call read as a method or a function: a `PartitionCall`, its spelling and its
    last name; None when it is no partition call with arguments porter can read."""
    func = node.func
    base = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    spelling = partitioning(base) if isinstance(base, str) else None
    if spelling is None or (method and not isinstance(func, ast.Attribute)):
        return None
    if any(k.arg is None for k in node.keywords) or any(
        isinstance(a, ast.Starred) for a in node.args
    ):
        return None
    keywords = {k.arg: k.value for k in node.keywords}
    if "order" in keywords:  # fields of a structured array: not numbers to compare
        return None
    if method:
        args, array_node = node.args, func.value  # type: ignore[union-attr]
    else:
        args, array_node = node.args[1:], node.args[0] if node.args else keywords.get("a")
    kth_node = args[0] if args else keywords.get("kth")
    axis_node = args[1] if len(args) > 1 else keywords.get("axis")
    if kth_node is None:
        return None
    kth = _argument(kth_node, ints=True)
    axis = spelling.axis if axis_node is None else _argument(axis_node, ints=False)
    if kth is _NOT_LITERAL or axis is _NOT_LITERAL:
        return None
    array = array_node.id if isinstance(array_node, ast.Name) else None
    made = PartitionCall(spelling.indices, kth, axis, array, node.lineno)  # type: ignore[arg-type]
    return made, spelling, base


def _argument(node: ast.expr, *, ints: bool) -> object:
    if isinstance(node, ast.Name):
        return node.id
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL
    if ints:
        if isinstance(value, int) and not isinstance(value, bool):
            return (value,)
        if (
            isinstance(value, tuple | list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            return tuple(value)
        return _NOT_LITERAL
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return _NOT_LITERAL


def _changed(stmt: ast.stmt) -> set[str]:
    """Names ``stmt`` may rebind or change: bound or deleted anywhere in it, the root of
    an assigned item or attribute, or what a call writes into (`call_writes`)."""
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
            node.ctx, ast.Store | ast.Del
        ):
            names.update(roots(node))
        elif isinstance(node, ast.AugAssign):
            names.update(roots(node.target))
        elif isinstance(node, ast.Call):
            names.update(call_writes(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return names
