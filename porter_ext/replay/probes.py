"""Marked expressions of a replayed cell, evaluated again on other libraries where the
replay reaches them (the fix stage's check of a rewritten site at its calls:
`porter_ext.fix.site_checks`).

A cell the fix stage instruments reads ``__porter_probe__(MARK, EXPRESSION)`` where it
wrote ``EXPRESSION``: the probe hands the value back unchanged and, at the first calls of
each mark whose inputs differ in kind, shape or dtype (at most `MAX_CALLS`), evaluates the
expression's text again on each library asked for, with the names it reads as the
replay's frame holds them, moved there (an array namespace becomes that library's). What
comes back is host copies of both values, or why the expression could not be evaluated
there: the comparison is the later stages' (`Probed`). This runs inside the replay, so
the sandbox that keeps the replay off the person's files keeps the evaluation off too.
"""

from __future__ import annotations

import ast
import builtins
import copy
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the name the instrumented code calls
PROBE = "__porter_probe__"
#: the calls of one mark evaluated again (each with inputs of another kind/shape/dtype)
MAX_CALLS = 3
#: inputs larger than this (bytes, all names together) are not moved to other libraries
MAX_INPUT_BYTES = 256 * 2**20
#: values larger than this are not sent back
MAX_VALUE_BYTES = 32 * 2**20

_PORTER = str(Path(__file__).resolve().parent.parent)
#: modules an expression reads as they are on every library (array-api-extra takes the
#: namespace from its arrays; Python's own on Python numbers: ``math.prod(p.shape)``)
_KEPT_MODULES = frozenset({"array_api_extra", "math", "operator"})


@dataclass
class Probed:
    """One call of one mark: the value the replay's library gave (a host copy), and per
    library asked for, the value the expression gives there (a host copy) or why it gave
    none (a `str` with what stopped it)."""

    mark: int
    value: Any
    others: dict[str, Any] = field(default_factory=dict)


@dataclass
class HostArray:
    """An array as it came back: its host copy, its library and its own dtype."""

    array: Any
    library: str
    dtype: str


@dataclass
class Failure:
    """Why an expression gave no value on a library."""

    why: str


class Probe:
    """The callable the instrumented cell calls (see the module doc)."""

    def __init__(self, marks: tuple[tuple[int, str], ...], specs: tuple[str, ...]) -> None:
        self.trees = {mark: ast.parse(text, mode="eval") for mark, text in marks}
        self.specs = specs
        self.taken: list[Probed] = []
        self._seen: dict[int, set] = {}

    def __call__(self, mark: int, value: Any) -> Any:
        seen = self._seen.setdefault(mark, set())
        if len(seen) < MAX_CALLS:
            try:
                self._take(mark, value, seen)
            except Exception as error:  # what cannot be checked says so; the replay goes on
                self.taken.append(
                    Probed(mark, None, dict.fromkeys(self.specs, Failure(_said(error))))
                )
                seen.add(("failed", len(seen)))
        return value

    def _take(self, mark: int, value: Any, seen: set) -> None:
        reader = _Reader(_callers_frame())
        tree = ast.fix_missing_locations(reader.visit(copy.deepcopy(self.trees[mark])))
        if reader.missing:
            return  # a name the frame does not hold (a comprehension's own): not checked
        found = reader.found
        signature = tuple((n, _signature(v)) for n, v in found.items())
        if signature in seen:
            return
        seen.add(signature)
        probed = Probed(mark, _host(value))
        self.taken.append(probed)
        if reader.unmovable:
            why = Failure(f"not checked: it reads {reader.unmovable[0]}, which is no array")
            probed.others = dict.fromkeys(self.specs, why)
            return
        size = sum(_nbytes(v) for v in found.values())
        if size > MAX_INPUT_BYTES:
            why = Failure(f"its inputs ({size / 2**20:.0f} MiB) are too large to check at the call")
            probed.others = dict.fromkeys(self.specs, why)
            return
        code = compile(tree, "<porter-site>", "eval")
        for spec in self.specs:
            try:
                moved = {n: _moved(v, spec) for n, v in found.items()}
                probed.others[spec] = _host(eval(code, {"__builtins__": builtins}, moved))
            except Exception as error:
                probed.others[spec] = Failure(_said(error))


class _Reader(ast.NodeTransformer):
    """The values an expression reads in ``frame``: its names, and (where a name holds
    no array: ``self``, a module) the attribute reads on it as one value each
    (``self.mask``, ``torch.inf``), which the expression then reads by a name of its own."""

    def __init__(self, frame: types.FrameType) -> None:
        self.frame = frame
        self.found: dict[str, Any] = {}
        self.missing = False
        #: what it reads that is no array, number or namespace (``self.W_key``, a Linear)
        self.unmovable: list[str] = []

    def _lookup(self, name: str) -> tuple[bool, Any]:
        frame = self.frame
        if name in frame.f_locals:
            return True, frame.f_locals[name]
        if name in frame.f_globals:
            return True, frame.f_globals[name]
        return False, None

    def visit_Name(self, node: ast.Name) -> ast.AST:
        held, value = self._lookup(node.id)
        if not held:
            self.missing = not hasattr(builtins, node.id)
            return node
        self.found[node.id] = value
        if not _movable(value):
            self.unmovable.append(f"`{node.id}`, a {type(value).__name__}")
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return self.generic_visit(node)
        held, value = self._lookup(root.id)
        if not held or _movable(value):
            return self.generic_visit(node)
        text = ast.unparse(node)
        chain = eval(  # the same read the cell makes there, at that moment
            compile(ast.Expression(node), "<porter-site>", "eval"),
            self.frame.f_globals,
            dict(self.frame.f_locals),
        )
        name = f"__porter_read_{len(self.found)}"
        self.found[name] = chain
        if not _movable(chain):
            self.unmovable.append(f"`{text}`, a {type(chain).__name__}")
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)


def _callers_frame() -> types.FrameType:
    """The frame of the cell's code that called the probe (the recorder's hook may stand
    between them)."""
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PORTER):
        frame = frame.f_back
    return frame


def _said(error: BaseException) -> str:
    text = (
        f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__
    )
    return text[:240]


def _signature(value: Any) -> str:
    from porter_ext.backends import backend_for

    backend = backend_for(value)
    if backend is not None:
        return f"{backend.name} {getattr(value, 'dtype', '')} {tuple(getattr(value, 'shape', ()))}"
    if isinstance(value, list | tuple):
        return f"{type(value).__name__}[{', '.join(_signature(v) for v in value[:8])}]"
    if isinstance(value, bool | int | float | complex | str | type(None)):
        return type(value).__name__
    return ""


def _nbytes(value: Any) -> int:
    if isinstance(value, list | tuple):
        return sum(_nbytes(v) for v in value)
    return int(getattr(value, "nbytes", 0) or 0)


def _namespace_module(value: Any) -> types.ModuleType | None:
    """The array namespace ``value`` is (the recorder's view of one too), or None."""
    from porter_ext.record.strict import NamespaceView

    if isinstance(value, NamespaceView):
        value = value.__wrapped__
    if isinstance(value, types.ModuleType):
        from porter_ext.backends import backend_of_module

        name = value.__name__
        backend = backend_of_module(name)
        if name.startswith("array_api_compat.") or (
            backend is not None and backend.is_namespace(name)
        ):
            return value
    return None


def _movable(value: Any) -> bool:
    """Whether `_moved` moves ``value`` to another library."""
    from porter_ext.backends import backend_for

    if isinstance(value, bool | int | float | complex | str | slice | type(None)):
        return True
    if value is Ellipsis or backend_for(value) is not None:
        return True
    if isinstance(value, list | tuple):
        return all(_movable(v) for v in value)
    if _namespace_module(value) is not None:
        return True
    if isinstance(value, types.ModuleType) and value.__name__ in _KEPT_MODULES:
        return True
    return getattr(value, "__module__", None) == "array_api_compat.common._helpers"


def _moved(value: Any, spec: str) -> Any:
    """``value`` (`_movable`) as the expression reads it on ``spec``'s library."""
    from porter_ext.backends import backend_for, convert_to, get_backend, parse_spec

    if isinstance(value, list | tuple):
        return type(value)(_moved(v, spec) for v in value)
    if backend_for(value) is not None:
        return convert_to(value, spec).value
    if _namespace_module(value) is not None:
        return get_backend(parse_spec(spec).library).namespace()
    return value


def _host(value: Any) -> Any:
    """A host copy of ``value`` (arrays in containers too) to send back."""
    from porter_ext.backends import backend_for

    if isinstance(value, list | tuple):
        return type(value)(_host(v) for v in value)
    backend = backend_for(value)
    if backend is None:
        if isinstance(value, bool | int | float | complex | type(None)):
            return value
        return Failure(f"it gives a {type(value).__name__}, which is not compared")
    if _nbytes(value) > MAX_VALUE_BYTES:
        return Failure(f"its value ({_nbytes(value) / 2**20:.0f} MiB) is too large to send back")
    return HostArray(backend.host_copy(value), backend.name, str(getattr(value, "dtype", "")))
