"""The scopes of `porter_ext.fix.flow`'s walk: what each name is on the path walked so
far, how paths join, and what a function walked early assumed.

A name of a scope is an `ArrayValue`, the array namespace or `UNKNOWN`; a name the path
walked has not bound (or has deleted) is left out of the scope, and `UNBOUND` stands for
that absence in the logs and where paths join: a name is what every path that binds it
agrees on, else unknown (`join`). A name that a function reads before binding it is
looked up in the enclosing scopes (Python would raise).
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections.abc import Sequence

from porter_ext.fix.static import UNKNOWN

__all__ = [
    "MISSING",
    "UNBOUND",
    "Frame",
    "Function",
    "Loop",
    "Record",
    "bound_names",
    "join",
    "reparse",
]


class _Unbound:
    """Not bound on this path (the name is left out of its scope)."""

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = _Unbound()
MISSING = object()


def join(a: object, b: object) -> object:
    """What a name is where two paths meet: the same on both, or unknown."""
    if a is UNBOUND or a == b:
        return b
    return a if b is UNBOUND else UNKNOWN


class Loop:
    __slots__ = ("assigned", "reads", "jumps")

    def __init__(self) -> None:
        self.assigned: set[str] = set()  # bound so far in this walk of the body
        self.reads: set[str] = set()  # read before this walk bound them
        self.jumps = False  # a break or continue: any value in the body may leave it


class Frame:
    """One scope: ``module``, ``function``, ``class`` or ``local`` (lambda, comprehension)."""

    __slots__ = ("kind", "parent", "view", "env", "logs", "loops", "history", "deferred", "_joins")

    def __init__(self, kind: str, parent: Frame | None, view: int | None = None) -> None:
        self.kind = kind
        self.parent = parent
        #: a function's enclosing scope as seen from its definition (step number), or
        #: None: as it is now (a module-level function walked where it is defined)
        self.view = view
        self.env: dict[str, object] = {}
        self.logs: list[list[tuple[str, object]]] = []  # (name, value before), to undo
        self.loops: list[Loop] = []
        #: name → (steps, values), kept from the scope's first function definition on
        self.history: dict[str, tuple[list[int], list[object]]] | None = None
        self.deferred: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, int]] = []
        self._joins: dict[str, list[object]] = {}

    def seen_from(self, step: int, name: str) -> object:
        """The name as a function defined at ``step`` sees it: its value there joined
        with every later one (the scope's walk is over); MISSING if never bound."""
        history = self.history.get(name) if self.history is not None else None
        if history is None:
            return MISSING
        joins = self._joins.get(name)
        if joins is None:
            joins = list(history[1])
            for i in range(len(joins) - 2, -1, -1):
                joins[i] = join(joins[i], joins[i + 1])
            self._joins[name] = joins
        return joins[max(bisect_right(history[0], step) - 1, 0)]


class Function:
    """A function being walked: the parameters it takes, those it uses as arrays
    (``p.shape``, ``np.sum(p)``), and its creation calls without ``device=``, judged at
    its end, once every use is known."""

    __slots__ = ("params", "arrays", "creations")

    def __init__(self, params: set[str]) -> None:
        self.params = params
        self.arrays: set[str] = set()
        self.creations: list[tuple[ast.Call, str]] = []


class Record:
    """A module-level function walked where it was defined, and what it assumed there."""

    __slots__ = ("node", "where", "text", "step", "names", "imports", "sites", "start", "end")

    def __init__(
        self, node: ast.stmt, lines: Sequence[str] | None, step: int, sites: list, offset: int = 0
    ) -> None:
        """``lines``: the source's lines as ``lines[n - 1]`` is line n (None: keep the
        tree); ``offset``: lines of the source before the tree's first."""
        first, last = node.lineno + offset, (node.end_lineno or node.lineno) + offset
        self.where = (first, last, node.col_offset)
        self.node = node if lines is None else None  # kept only when it cannot be reparsed
        #: the definition's own lines (a big file's other lines are not kept for it)
        self.text = None if lines is None else "\n".join(lines[first - 1 : last])
        self.step = step
        self.names: dict[str, object] = {}  # module names read → their value then
        self.imports: dict[str, str | None] = {}  # names resolved as imports → the module
        self.sites, self.start, self.end = sites, len(sites), len(sites)


def reparse(text: str, where: tuple[int, int, int]) -> tuple[ast.stmt, int]:
    """A definition parsed again from its own lines (`Record.text`), and the lines of the
    source before its tree's first (the tree is numbered from 1, at no cost per line)."""
    first, _, col = where
    if col:  # indented (a method, or under an if): parsed inside a block that takes it
        return ast.parse("if 1:\n" + text).body[0].body[0], first - 2  # type: ignore[attr-defined]
    return ast.parse(text).body[0], first - 1


def bound_names(node: ast.AST) -> list[str]:
    """The names an assignment target or a ``case`` pattern binds."""
    names = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            names.append(sub.id)
        elif isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name:
            names.append(sub.name)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            names.append(sub.rest)
    return names
