"""Reading array calls from source alone: which library a name is, which values are known.

``porter lint`` never runs code, so it rebuilds from the syntax what the recorder sees at
run time: the callee (``np.sum`` is numpy's ``sum`` because of ``import numpy as np``;
which library a module belongs to is the backends registry's answer), and the arguments
as far as the source tells them: literals are themselves, expressions known to be arrays
are array stand-ins, everything else is *unknown*. The recorder's own classifier then
judges the call; a verdict that changes with what the unknowns turn out to be "needs a
run" (`porter_ext.fix.lint`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from porter_ext.backends import HELPERS, Backend, Namespace, all_backends
from porter_ext.record.resolve import Callee
from porter_ext.spec.replacements import find

#: builtins a person may pass as a dtype (``dtype=float``) or call on an array (host sync)
PYTHON_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float, "complex": complex}


class Unknown:
    """A value the source does not tell (a parameter, a call's result, a name from elsewhere)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = Unknown()


@dataclass(frozen=True)
class ArrayValue:
    """An expression the source shows to be an array of ``library`` (its shape unknown)."""

    library: str


@dataclass(frozen=True)
class NamedValue:
    """A library attribute that is not called (``np.float32``, ``torch.int64``): it carries
    its name the way dtype objects do, so the table's dtype test reads it."""

    name: str


@dataclass(frozen=True)
class DeviceValue:
    """``torch.device("cuda:1")`` as the source spells it (``type``/``index`` as torch's)."""

    type: str
    index: int | None = None


class ArrayStub:
    """A duck-typed array of a chosen rank: what an unknown value or an array of unknown
    shape is tried as when deciding whether the verdict depends on it."""

    def __init__(self, ndim: int, dtype: str = "float64") -> None:
        self.ndim = ndim
        self.shape = (2,) * ndim
        self.dtype = NamedValue(dtype)

    def __repr__(self) -> str:
        return f"<array ndim={self.ndim}>"


class Opaque:
    """An unknown tried as a value that is neither an array nor a number."""

    def __repr__(self) -> str:
        return "<object>"


#: how many ways each unknown is tried (an object, a 2-D array, the int 1; arrays of
#: unknown rank and dtype as 2-D float64, 1-D int64 and 3-D bool)
VARIANTS = 3


def concretize(value: object, variant: int) -> object:
    """``value`` with each unknown replaced by its ``variant``-th stand-in."""
    if value is UNKNOWN:
        return (Opaque(), ArrayStub(2), 1)[variant]
    if isinstance(value, ArrayValue):
        return ArrayStub((2, 1, 3)[variant], ("float64", "int64", "bool")[variant])
    if isinstance(value, tuple):
        return tuple(concretize(v, variant) for v in value)
    if isinstance(value, list):
        return [concretize(v, variant) for v in value]
    return value


class RanklessStub(ArrayStub):
    """An array of unknown rank, for showing a suggestion: rank-dependent parts read ``...``."""

    def __init__(self) -> None:
        self.ndim = None  # type: ignore[assignment]
        self.shape = None  # type: ignore[assignment]
        self.dtype = NamedValue("float64")


def for_display(value: object) -> object:
    """``value`` with unknowns that render as ``...`` in a suggestion."""
    if value is UNKNOWN:
        return Opaque()
    if isinstance(value, ArrayValue):
        return RanklessStub()
    if isinstance(value, tuple):
        return tuple(for_display(v) for v in value)
    if isinstance(value, list):
        return [for_display(v) for v in value]
    return value


def is_uncertain(value: object) -> bool:
    if value is UNKNOWN or isinstance(value, ArrayValue):
        return True
    if isinstance(value, tuple | list):
        return any(is_uncertain(v) for v in value)
    return False


# --- modules and namespaces ---------------------------------------------------------------


@lru_cache(maxsize=1)
def _namespace_table() -> dict[str, tuple[Backend, Namespace]]:
    """Every namespace module the recorder indexes → its adapter (the first one wins)."""
    table: dict[str, tuple[Backend, Namespace]] = {}
    for backend in all_backends():
        for ns in backend.namespaces:
            table.setdefault(ns.module, (backend, ns))
    return table


@lru_cache(maxsize=8192)
def callee_of(dotted: str) -> Callee | None:
    """The callee a fully qualified name is (``"numpy.linalg.norm"`` → numpy's
    ``linalg.norm``), from the longest namespace module it lies in; None for anything
    that is no array library's, and for the functions a library uses to build functions
    (``jax.jit``)."""
    table = _namespace_table()
    module, _, rest = dotted.rpartition(".")
    parts = [rest]
    while module:
        hit = table.get(module)
        if hit is not None:
            backend, ns = hit
            name = ns.prefix + ".".join(reversed(parts))
            if parts[-1] in backend.not_array_calls:
                return None
            if len(parts) > 1 and not find(backend.name, "function", name):
                return None  # a submodule the recorder does not index (torch.nn.Linear)
            qualname = ns.qualname or backend.qualname_prefix
            return Callee(backend.name, "function", name, f"{qualname}.{name}")
        module, _, last = module.rpartition(".")
        parts.append(last)
    return None


def is_helper(dotted: str) -> bool:
    """A name of the array API helpers (``array_api_compat.array_namespace``)."""
    return dotted.partition(".")[0] == HELPERS


def is_library_module(dotted: str) -> bool:
    """Whether a module belongs to an array library or to the helpers (import worth keeping)."""
    from porter_ext.backends import backend_of_module

    return backend_of_module(dotted) is not None or is_helper(dotted)


def collect_imports(tree: ast.AST, into: dict[str, str] | None = None) -> dict[str, str]:
    """Local name → the dotted module or object it is bound to, for the array libraries
    and helpers only (``import numpy as np`` → ``{"np": "numpy"}``; ``from torch import
    cuda`` → ``{"cuda": "torch.cuda"}``). Flow-insensitive: every import in the tree."""
    names = {} if into is None else into
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not is_library_module(alias.name):
                    continue
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    root = alias.name.partition(".")[0]
                    names[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if not is_library_module(node.module):
                continue
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names
