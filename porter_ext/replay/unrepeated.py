"""What a replay does not make again: the values of IPython shell lines.

A worker does not run ``!cmd`` or ``%sx cmd`` again (they are side effects, see
`sandbox`): there ``out = !cmd`` is an empty list. So ``out``, and every name the cell
computes from it, would differ from the original run for no fault of the port; the
replay does not compare them and says why. Found from the cell's source (IPython syntax
already transformed: ``get_ipython().getoutput('cmd')``), following the values forward
through the cell: assignments, loops and branches over such a value, methods of the
cell's own names called with it. Mistakes fall on the safe side: a name wrongly found
is only left uncompared.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from types import MappingProxyType

#: the IPython line magics whose value is a shell command's output
_SHELL_MAGICS = frozenset({"sx", "system"})
_COMPOUND = (
    ast.If,
    ast.While,
    ast.For,
    ast.AsyncFor,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def shell_line(node: ast.AST) -> str | None:
    """The IPython line ``node`` is the transformed form of, as typed (``!cmd``,
    ``%sx cmd``), when its value is a shell command's output; else None."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    owner = node.func.value
    if not (
        isinstance(owner, ast.Call)
        and isinstance(owner.func, ast.Name)
        and owner.func.id == "get_ipython"
    ):
        return None
    texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
    if node.func.attr == "getoutput" and texts:
        return f"!{texts[0]}"
    if node.func.attr == "run_line_magic" and len(texts) >= 2 and texts[0] in _SHELL_MAGICS:
        return f"%{texts[0]} {texts[1]}"
    return None


def unrepeated_outputs(source: str) -> Mapping[str, str]:
    """Name → the shell line its value comes from, for the names of ``source`` (``_`` for
    its last expression) that a replay cannot reproduce. Empty for most cells; a cell
    that does not parse has none (its run reports the error)."""
    if "get_ipython" not in source:
        return MappingProxyType({})
    return _unrepeated(source)


@functools.lru_cache(maxsize=128)
def _unrepeated(source: str) -> Mapping[str, str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return MappingProxyType({})
    flow = _Flow(tree.body)
    for _ in range(len(flow.own) + 2):  # a loop can carry a value back up the cell
        if not flow.body(tree.body, None):
            break
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        origin = flow.origin([last])
        if origin is not None:
            flow.found.setdefault("_", origin)
    return MappingProxyType(flow.found)


class _Flow:
    """One pass of the values of shell lines through a cell's statements."""

    def __init__(self, body: list[ast.stmt]):
        self.found: dict[str, str] = {}
        #: the names the cell binds (methods called on them may keep what they are handed)
        self.own = {n for s in body for n in _stored(s)}

    def origin(self, nodes: Iterable[ast.AST]) -> str | None:
        """The shell line the value of ``nodes`` comes from, directly or through a name."""
        for top in nodes:
            for node in ast.walk(top):
                line = shell_line(node)
                if line is not None:
                    return line
                if isinstance(node, ast.Name) and node.id in self.found:
                    return self.found[node.id]
        return None

    def mark(self, names: Iterable[str], origin: str) -> bool:
        changed = False
        for name in names:
            if name not in self.found:
                self.found[name] = origin
                changed = True
        return changed

    def body(self, statements: list[ast.stmt], context: str | None) -> bool:
        """Follow ``statements``; ``context`` is the shell line a branch or loop around
        them depends on. Whether anything new was found."""
        changed = False
        for s in statements:
            if isinstance(s, _COMPOUND):
                changed |= self.compound(s, context)
                continue
            origin = context or self.origin([s])
            if origin is not None:
                changed |= self.mark(self.bound(s), origin)
        return changed

    def compound(self, s: ast.stmt, context: str | None) -> bool:
        head: list[ast.AST] = []
        targets: list[ast.AST] = []
        if isinstance(s, ast.If | ast.While):
            head = [s.test]
        elif isinstance(s, ast.For | ast.AsyncFor):
            head, targets = [s.iter], [s.target]
        elif isinstance(s, ast.With | ast.AsyncWith):
            head = [i.context_expr for i in s.items]
            targets = [i.optional_vars for i in s.items if i.optional_vars is not None]
        elif isinstance(s, ast.Match):
            head = [s.subject]
        origin = context or self.origin(head)
        changed = False
        if origin is not None:
            changed |= self.mark((n for t in targets for n in _stored(t)), origin)
        bodies = [getattr(s, "body", []), getattr(s, "orelse", []), getattr(s, "finalbody", [])]
        bodies += [h.body for h in getattr(s, "handlers", [])]
        bodies += [c.body for c in getattr(s, "cases", [])]
        for body in bodies:
            changed |= self.body(body, origin)
        return changed

    def bound(self, s: ast.stmt) -> set[str]:
        """The names whose values a simple statement (or a definition) may make."""
        if isinstance(s, _DEFINITIONS):
            return {s.name}
        names = set(_stored(s))
        for node in ast.walk(s):
            if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
                node.ctx, ast.Store | ast.Del
            ):
                names.add(_root(node))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                root = _root(node.func.value)
                if root in self.own:
                    names.add(root)
        names.discard("")
        return names


def _stored(node: ast.AST) -> list[str]:
    return [
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]


def _root(node: ast.AST) -> str:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""
