"""Names a cell binds only to Python values, so that their uses need no recording.

``rows = []``, ``seen = {}``, ``total = 0`` and ``for i in range(n)`` bind names to a
list, a dict, an int: a Python-heavy cell spends its time in ``rows.append(i)``,
``seen[i]`` and ``i - 1``, none of which can touch an array while the name still holds
that value. A name qualifies when every binding the cell makes of it (at module level)
is such a literal or a ``range`` loop, and the cell cannot rebind it behind the
analysis' back (no ``global`` of it, no ``exec``/``globals()``/``locals()``/``vars()``).
A literal-bound name is plain in the top-level statements after its first top-level
binding (before it, it may still hold an earlier cell's array); a ``range`` loop's
variable inside that loop's body. Inside functions, lambdas, classes and generator
expressions (which run later, or in another scope) nothing is assumed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

_LITERALS = (
    ast.List,
    ast.Dict,
    ast.Set,
    ast.Tuple,
    ast.Constant,
    ast.ListComp,
    ast.DictComp,
    ast.SetComp,
    ast.JoinedStr,
)
_REBINDING_CALLS = frozenset({"exec", "eval", "globals", "locals", "vars", "setattr"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass
class PlainNames:
    """``literal[name]``: index of the first top-level statement binding ``name`` to a
    literal; ``loops``: ids of the ``for`` statements whose variable is plain in their body."""

    literal: dict[str, int] = field(default_factory=dict)
    loops: dict[int, str] = field(default_factory=dict)

    def at(self, index: int) -> frozenset[str]:
        """The names plain in top-level statement ``index``."""
        return frozenset(n for n, first in self.literal.items() if first < index)


def _is_range(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and not node.keywords
    )


class _Scan:
    def __init__(self) -> None:
        self.kinds: dict[str, set[str]] = {}
        self.first: dict[str, int] = {}
        self.loops: dict[int, str] = {}
        self.unsafe = False

    def bind(self, name: str, kind: str) -> None:
        self.kinds.setdefault(name, set()).add(kind)

    def statement(self, node: ast.stmt, top: int | None) -> None:
        """A module-level statement (``top``: its index when it is a top-level one)."""
        if isinstance(node, ast.Assign) and isinstance(node.value, _LITERALS):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.bind(target.id, "literal")
                    if top is not None:
                        self.first.setdefault(target.id, top)
                    target.porter_plain = True  # type: ignore[attr-defined]
        elif (
            isinstance(node, ast.For) and isinstance(node.target, ast.Name) and _is_range(node.iter)
        ):
            self.bind(node.target.id, "range")
            self.loops[id(node)] = node.target.id
            node.target.porter_plain = True  # type: ignore[attr-defined]
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and not isinstance(child, _SCOPES):
                self.statement(child, None)

    def walk(self, node: ast.AST, module_scope: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = module_scope and not isinstance(child, (*_SCOPES, *_COMPREHENSIONS))
            if isinstance(child, ast.Global | ast.Nonlocal):
                for name in child.names:
                    self.bind(name, "other")
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                if child.func.id in _REBINDING_CALLS:
                    self.unsafe = True
            elif isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name):
                self.bind(child.target.id, "other")  # binds at module level from anywhere
            if module_scope:
                self._binding(child)
            self.walk(child, inner)

    def _binding(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            if not getattr(node, "porter_plain", False) or isinstance(node.ctx, ast.Del):
                self.bind(node.id, "other")
        elif isinstance(node, ast.alias):
            self.bind((node.asname or node.name).partition(".")[0], "other")
        elif (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            or isinstance(node, ast.ExceptHandler)
            and node.name
            or isinstance(node, ast.MatchAs | ast.MatchStar)
            and node.name
        ):
            self.bind(node.name, "other")
        elif isinstance(node, ast.MatchMapping) and node.rest:
            self.bind(node.rest, "other")


def plain_names(tree: ast.Module, range_is_builtin: bool) -> PlainNames:
    """The names of ``tree`` (a cell) that hold Python values where the rewrite meets
    them (see the module doc); ``range_is_builtin``: the cell's ``range`` is Python's."""
    scan = _Scan()
    for index, node in enumerate(tree.body):
        if not isinstance(node, _SCOPES):
            scan.statement(node, index)
    scan.walk(tree, True)
    if scan.unsafe:
        return PlainNames()
    ok = {name for name, kinds in scan.kinds.items() if kinds <= {"literal", "range"}}
    if not range_is_builtin or "range" in scan.kinds:
        loops: dict[int, str] = {}
    else:
        loops = {i: n for i, n in scan.loops.items() if n in ok}
    literal = {n: first for n, first in scan.first.items() if n in ok}
    return PlainNames(literal, loops)
