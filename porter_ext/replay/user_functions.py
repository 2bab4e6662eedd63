"""The person's own functions: which globals they read and whether they may write in place.

A function defined in the person's namespace reads its globals from there. Re-created
over the replay namespace, it reads the replay's instead, so the replay must hold every
global it (and the functions it calls) reads, converted like the cell's own inputs; and
those globals must be copied first when the function may modify something in place.
The bytecode tells: stores into items or attributes, in-place operators, ``out=``,
in-place methods (``fill``, ``add_``), all seen without running anything.
"""

from __future__ import annotations

import dis
import functools
import types
from collections.abc import Iterable, Mapping
from typing import Any

from porter_ext.replay.aliasing import INPLACE_FUNCTIONS, INPLACE_METHODS, OUT_KEYWORDS

_STORES = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_ATTR", "DELETE_ATTR"})
_COMPARISONS = frozenset({"==", "!=", "<=", ">="})


def user_functions(ns: Mapping[str, Any]) -> dict[str, types.FunctionType]:
    """Plain Python functions defined in ``ns`` (their globals are ``ns`` itself, or the
    namespace ``ns`` stands for: a pre-run copy names it ``ns.person``)."""
    home = getattr(ns, "person", ns)
    return {
        k: v
        for k, v in ns.items()
        if isinstance(v, types.FunctionType) and (v.__globals__ is ns or v.__globals__ is home)
    }


def user_callables(ns: Mapping[str, Any]) -> set[str]:
    """Names of the functions and classes the person defined in ``ns``."""
    module = ns.get("__name__", "__main__")
    classes = {k for k, v in ns.items() if isinstance(v, type) and v.__module__ == module}
    return set(user_functions(ns)) | classes


@functools.lru_cache(maxsize=4096)
def code_names(code: types.CodeType) -> frozenset[str]:
    """Global (and attribute) names a code object and the code nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return frozenset(names)


def user_globals(
    roots: Iterable[str], ns: Mapping[str, Any], functions: Mapping[str, types.FunctionType]
) -> dict[str, list[str]]:
    """For each function reachable from ``roots``: the names of ``ns`` it reads."""
    found: dict[str, list[str]] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in found or name not in functions:
            continue
        found[name] = sorted(n for n in code_names(functions[name].__code__) if n in ns)
        todo.extend(found[name])
    return found


@functools.lru_cache(maxsize=4096)
def code_may_mutate(code: types.CodeType) -> bool:
    """Whether a code object may write into an object it did not create."""
    names = set(code.co_names)
    if names & (INPLACE_METHODS | INPLACE_FUNCTIONS) or any(
        n.endswith("_") and not n.startswith("_") for n in names
    ):
        return True
    if any(isinstance(c, tuple) and OUT_KEYWORDS & set(c) for c in code.co_consts):
        return True  # keyword names of a call, as 3.11+ stores them
    for ins in dis.get_instructions(code):
        if ins.opname in _STORES or ins.opname.startswith("INPLACE_"):
            return True
        if (
            ins.opname == "BINARY_OP"
            and ins.argrepr.endswith("=")
            and ins.argrepr not in _COMPARISONS
        ):
            return True
    return any(isinstance(c, types.CodeType) and code_may_mutate(c) for c in code.co_consts)


def may_mutate(f: types.FunctionType, functions: Mapping[str, types.FunctionType]) -> bool:
    """Whether ``f``, or a function of the person's that it calls, may write in place."""
    seen: set[str] = set()
    todo = [f]
    while todo:
        g = todo.pop()
        if code_may_mutate(g.__code__):
            return True
        for name in code_names(g.__code__):
            if name in functions and name not in seen:
                seen.add(name)
                todo.append(functions[name])
    return False
