"""Naming what a cell called: which library, which kind of call, and its name there.

A callee is resolved once per function object (or per array type and method name) and
cached, so that the recorder's per-call cost is a dictionary lookup. Namespaces are
indexed only for libraries the person already imported.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

from porter_ext.backends import (
    HELPER_NAMESPACES,
    HELPERS,
    Backend,
    Namespace,
    all_backends,
    backend_for,
    backend_of_module,
)

#: builtins that force an array to the host when given one
HOST_BUILTINS = {float: "float", int: "int", bool: "bool", complex: "complex"}


@dataclass(frozen=True, eq=False)  # identity: callees are cached, hashing must be cheap
class Callee:
    """A resolved callee: ``library`` as in reports, ``kind``, ``name`` relative to the
    library's array namespace (``"max"``, ``"linalg.norm"``, method ``"sum"``) and the
    qualified ``qualname`` shown to people (``"torch.max"``, ``"Tensor.sum"``)."""

    library: str
    kind: str
    name: str
    qualname: str


#: namespace modules already indexed
_indexed: set[str] = set()
_index: dict[int, tuple[object, Callee]] = {}


def _index_module(ns: Namespace, library: str, default_qualname: str, skip: frozenset) -> None:
    mod = sys.modules.get(ns.module)
    if mod is None:
        return
    _indexed.add(ns.module)
    qualname = ns.qualname or default_qualname
    for attr in dir(mod):
        if attr.startswith("_") or attr in skip:
            continue
        try:
            obj = getattr(mod, attr)
        except Exception:  # a lazy attribute that fails to load: not a callee
            continue
        if isinstance(obj, types.ModuleType) or not callable(obj) or id(obj) in _index:
            continue
        name = ns.prefix + attr
        _index[id(obj)] = (obj, Callee(library, "function", name, f"{qualname}.{name}"))


def _namespaces() -> list[tuple[Namespace, str, str, frozenset]]:
    """(namespace, library, qualname prefix, names to skip) for every library, in order
    of precedence (the first place an object is found names it), helpers last."""
    found = [
        (ns, b.name, b.qualname_prefix, b.not_array_calls if ns.qualname else frozenset())
        for b in all_backends()
        for ns in b.namespaces
    ]
    return found + [(ns, HELPERS, HELPERS, frozenset()) for ns in HELPER_NAMESPACES]


def _refresh_index() -> None:
    """Index the namespaces imported since the last look (in order of precedence)."""
    for ns, library, qualname, skip in _namespaces():
        if ns.module not in _indexed and ns.module in sys.modules:
            _index_module(ns, library, qualname, skip)


def resolve_function(f: object) -> Callee | None:
    """The array-library function ``f`` is, or None for anything else (user functions,
    ``print``, IPython's own calls)."""
    hit = _index.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    module = getattr(f, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(f), "__module__", "") or ""
    backend = backend_of_module(module)
    if backend is None and module.partition(".")[0] != HELPERS:
        return None
    _refresh_index()
    hit = _index.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    if backend is None:
        return None  # compat internals; its public helpers are indexed
    name = getattr(f, "__name__", None)
    if not isinstance(name, str) or name.startswith("_") or name in backend.not_array_calls:
        return None
    return Callee(backend.name, "function", name, f"{module}.{name}")


_method_names: dict[type, dict[int, str]] = {}


def method_name(t: type, f: object) -> str:
    """The attribute name a bound method was looked up by (JAX names its methods ``_sum``)."""
    name = getattr(f, "__name__", "?")
    func = getattr(f, "__func__", None)
    if func is None:
        return name
    names = _method_names.get(t)
    if names is None:
        names = {}
        for klass in reversed(t.__mro__):
            for attr, value in vars(klass).items():
                names[id(value)] = attr
        _method_names[t] = names
    return names.get(id(func), name.lstrip("_") or name)


def method_callee(self_obj: object, f: object) -> Callee | None:
    backend: Backend | None = backend_for(self_obj)
    if backend is None:
        return None
    name = method_name(type(self_obj), f)
    return Callee(backend.name, "method", name, f"{backend.array_type_name}.{name}")


def attribute_callee(obj: object, attr: str) -> Callee | None:
    backend: Backend | None = backend_for(obj)
    if backend is None:
        return None
    return Callee(backend.name, "attribute", attr, f"{backend.array_type_name}.{attr}")
