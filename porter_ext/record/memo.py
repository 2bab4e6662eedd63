"""What the recorder learnt of a site in an earlier run of its cell, for the next run.

A cell is run again and again (a notebook re-run, a benchmark, ``%timeit``); every run
gets a new recorder, and every site's first call would take the careful path again
(resolve the callee, classify it, build its guard: tens of microseconds a site). A site
whose guard holds library facts only (array and Python types, dtypes, literals, the
library's own function) is remembered by its slot, the number the rewrite gave it, which
the copies of a cell run again share: the next run's first call that its guard accepts
is recorded at once, with the remembered callee and verdict.

Nothing of the person's is kept here (a guard that holds the person's class, or an
object a verdict compared by identity, is not remembered), so memory the person frees is
freed. `clear` forgets everything (``porter_ext.clear_caches``).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from porter_ext.backends import all_backends, backend_of_module
from porter_ext.backends.base import Backend

_LIMIT = 20_000
_CALLS: dict[tuple, tuple] = {}
_OPS: dict[tuple, tuple] = {}
_LITERALS = frozenset({int, float, complex, bool, str, bytes, type(None)})


def _library_module(module: Any) -> bool:
    if not isinstance(module, str):
        return False
    root = module.partition(".")[0]
    if root == "builtins" or backend_of_module(module) is not None:
        return True
    return any(
        ns.module.partition(".")[0] == root
        for backend in all_backends()
        for ns in backend.namespaces
    )


def library_fact(value: Any) -> bool:
    """Whether ``value`` is a fact of Python or of an array library, never an object the
    person made: a literal, a tuple of them, an adapter, a type or function of a
    library's modules, or a library's dtype or device object (a library's other objects,
    a model or a scalar the person made, are the person's)."""
    t = type(value)
    if t in _LITERALS or isinstance(value, Backend):
        return True
    if t is tuple:
        return all(library_fact(v) for v in value)
    if isinstance(value, type):
        return _library_module(value.__module__)
    if isinstance(value, types.FunctionType | types.BuiltinFunctionType):
        return _library_module(getattr(value, "__module__", None))
    name = t.__name__.lower()
    if ("dtype" in name or name == "device") and _library_module(t.__module__):
        return True
    # a library's own callable object (NumPy's ufuncs): its module binds it by its name
    module = getattr(value, "__module__", None)
    return (
        callable(value)
        and _library_module(module)
        and getattr(sys.modules.get(module), getattr(value, "__name__", ""), None) is value
    )


def _remember(store: dict, key: tuple, entry: tuple) -> None:
    if len(store) >= _LIMIT:
        store.clear()
    store[key] = entry


def recall_call(key: tuple) -> tuple | None:
    return _CALLS.get(key)


def remember_call(key: tuple, entry: tuple) -> None:
    """Keep a call site's (target, method name, guard, callee, verdict, keywords)."""
    _remember(_CALLS, key, entry)


def recall_operation(key: tuple) -> tuple | None:
    return _OPS.get(key)


def remember_operation(key: tuple, entry: tuple) -> None:
    """Keep an operator site's (guard, callee, verdict, runner template, boxed)."""
    _remember(_OPS, key, entry)


def clear() -> None:
    _CALLS.clear()
    _OPS.clear()
