"""Naming what a cell called: which library, which kind of call, and its name there.

A callee is resolved once per function object (or per array type and method name) and
cached, so that the recorder's per-call cost is a dictionary lookup. Namespaces are
indexed only for libraries the person already imported.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
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
#: builtins that use an array as a Python sequence (its length, iterating over it)
PROTOCOL_BUILTINS = {
    len: "len",
    iter: "iter",
    enumerate: "enumerate",
    list: "list",
    tuple: "tuple",
    zip: "zip",
}


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
    own = vars(mod)
    for attr in dir(mod):
        if attr.startswith("_") or attr in skip:
            continue
        if attr not in own and _is_submodule(mod, attr):
            continue  # a module's lazy submodule (numpy.f2py): a module, never a callee
        try:
            obj = getattr(mod, attr)
        except Exception:  # a lazy attribute that fails to load: not a callee
            continue
        if isinstance(obj, types.ModuleType) or not callable(obj) or id(obj) in _index:
            continue
        name = ns.prefix + attr
        _index[id(obj)] = (obj, Callee(library, "function", name, f"{qualname}.{name}"))


def _is_submodule(mod: types.ModuleType, attr: str) -> bool:
    """Whether ``attr`` names a submodule of package ``mod`` (found, not imported:
    getting it would import numpy.f2py, numpy.testing and the rest, seconds in every
    process on a loaded machine, for names that are modules anyway)."""
    import importlib.util

    if not hasattr(mod, "__path__"):
        return False
    try:
        return importlib.util.find_spec(f"{mod.__name__}.{attr}") is not None
    except (ImportError, ValueError):
        return False


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


#: top-level modules that are never another library's: Python's own, the person's, porter's
_NOT_LIBRARIES = frozenset(sys.stdlib_module_names) | {
    "builtins",
    "__main__",
    "porter_ext",
    "IPython",
    "ipykernel",
    "ipywidgets",
    "_pytest",
    "pytest",
    "pluggy",
    "traitlets",
    "zmq",
    "tornado",
    "jupyter_client",
    "jupyter_core",
}
#: id(object) → (object, "module.path") for library objects whose public home was found
#: (library objects: they live in their modules anyway, so keeping them costs nothing)
_homes: dict[int, tuple[object, str]] = {}


def _no_module_is_persons(name: str) -> bool:
    return False


#: whether a loaded module is the person's own code (`person_code` sets it): the
#: person's modules are never a library whose functions are judged as one
persons_module: Callable[[str], bool] = _no_module_is_persons


def foreign_library(module: str) -> str | None:
    """The top-level name of ``module`` when it belongs to a library that is not an array
    library porter knows (``scipy``, ``sklearn``), else None."""
    root = module.partition(".")[0]
    if not root or root in _NOT_LIBRARIES or root.startswith("_") or root == HELPERS:
        return None
    if backend_of_module(root) is not None or root not in sys.modules:
        return None
    if persons_module(root):  # the person's own module: not a library
        return None
    return root


def public_home(f: object, name: str, root: str | None = None) -> str | None:
    """The shortest public module path that binds ``f`` as ``name`` (``numpy.emath`` for
    ``np.emath.sqrt``, ``scipy.special`` for ``gamma``), searched within ``root`` first,
    then among every loaded module; None when no module binds it."""
    hit = _homes.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    best: str | None = None
    for scope in (root, None) if root is not None else (None,):
        for module_name, module in list(sys.modules.items()):
            if (
                scope is not None
                and module_name != scope
                and not module_name.startswith(scope + ".")
            ):
                continue
            if module is None or any(part.startswith("_") for part in module_name.split(".")):
                continue
            try:
                bound = vars(module).get(name)
            except TypeError:  # a module object without a __dict__
                continue
            if bound is f and (best is None or len(module_name) < len(best)):
                best = module_name
        if scope is not None:
            top = sys.modules.get(scope)  # submodules reached as attributes (np.emath)
            for attr, value in vars(top).items() if top is not None else ():
                public = isinstance(value, types.ModuleType) and not attr.startswith("_")
                if public and vars(value).get(name) is f:
                    candidate = f"{scope}.{attr}"
                    if best is None or len(candidate) < len(best):
                        best = candidate
        if best is not None:
            break
    if best is not None:
        _homes[id(f)] = (f, best)
    return best


def _relative(home: str, root: str) -> str:
    return home[len(root) + 1 :] + "." if home.startswith(root + ".") else ""


def resolve_function(f: object) -> Callee | None:
    """What ``f`` is, named by the module that defines it: an array-library function, a
    transformation (``jax.jit``), another library's function (``scipy.special.gamma``),
    or None for anything else (user functions, ``print``, IPython's own calls)."""
    hit = _index.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    module = getattr(f, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(f), "__module__", "") or ""
        if not isinstance(module, str):
            return None
    backend = backend_of_module(module)
    if backend is None and module.partition(".")[0] != HELPERS:
        return _foreign_function(f, module)
    _refresh_index()
    hit = _index.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    if backend is None:
        return None  # compat internals; its public helpers are indexed
    name = getattr(f, "__name__", None)
    if not isinstance(name, str) or name.startswith("_"):
        return None
    root = backend.roots[0]
    home = public_home(f, name, root)
    if name in backend.transformations:
        return Callee(backend.name, "transformation", name, f"{home or root}.{name}")
    if name in backend.not_array_calls:
        return None
    if home is not None and home.partition(".")[0] not in backend.roots:
        return Callee(home.partition(".")[0], "function", name, f"{home}.{name}")
    if home is None:
        return Callee(backend.name, "function", name, f"{module}.{name}")
    return Callee(backend.name, "function", _relative(home, root) + name, f"{home}.{name}")


def indexed_callee(f: object) -> Callee | None:
    """The callee of ``f`` when an array namespace binds that very object (never a name
    guessed from its module): NumPy's ``np.random.choice`` is a method of its global
    ``RandomState``, bound once in ``numpy.random``, where a method of the person's
    object (a model's ``forward``) is not."""
    _refresh_index()
    hit = _index.get(id(f))
    return hit[1] if hit is not None and hit[0] is f else None


def _foreign_function(f: object, module: str) -> Callee | None:
    root = foreign_library(module)
    name = getattr(f, "__name__", None)
    if root is None or not isinstance(name, str) or name.startswith("_"):
        return None
    home = public_home(f, name, root) or module
    return Callee(root, "function", _relative(home, root) + name, f"{home}.{name}")


def ufunc_method_callee(owner: Callee, f: object) -> Callee:
    """``np.add.reduce``: a method of a namespace function, named after both."""
    method = getattr(f, "__name__", "?")
    return Callee(owner.library, "function", f"{owner.name}.{method}", f"{owner.qualname}.{method}")


def library_method_callee(self_obj: object, f: object) -> Callee | None:
    """A method of another library's object (``LinearDiscriminantAnalysis.fit``)."""
    t = type(self_obj)
    module = getattr(t, "__module__", None)
    root = foreign_library(module) if isinstance(module, str) else None
    if root is None:
        return None
    name = f"{t.__name__}.{getattr(f, '__name__', '?')}"
    return Callee(root, "method", name, name)


_method_names: dict[type, dict[int, str]] = {}


def clear_caches() -> None:
    """Forget the namespace index and every library object's home (re-read on demand)."""
    _indexed.clear()
    _index.clear()
    _homes.clear()
    _method_names.clear()


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
