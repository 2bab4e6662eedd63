"""What a cell's source binds and reads, as the cell rewrite (`porter_ext.fix.rewrite`)
needs it: where ``xp`` is bound and which names an expression reads, both from libcst's
``ScopeProvider``; the cell's docstring, and the library a site belongs to.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.metadata import Assignment, GlobalScope, MetadataWrapper, Scope, ScopeProvider

from porter_ext.fix.checks import FROM_SIZES, Site


def ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


class ReplaceFirst(cst.CSTTransformer):
    """Replaces the first node (in source order) equal to ``old`` by ``new``, the two
    compared without their own parentheses (a rewrite writes ``(a + b).view(6)``'s
    receiver as the operand ``a + b``)."""

    def __init__(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
        super().__init__()
        self.old, self.new, self.done = bare(old), new, False

    def on_visit(self, node: cst.CSTNode) -> bool:
        return not self.done

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
        if not self.done and bare(original).deep_equals(self.old):
            self.done = True
            return self.new
        return updated


def bare(node: Any) -> Any:
    """``node`` without its own parentheses (a generator's and a tuple's are theirs): as
    an assignment's value, or compared with an operand a rewrite wrote."""
    if getattr(node, "lpar", None) and not isinstance(node, cst.GeneratorExp | cst.Tuple):
        return node.with_changes(lpar=[], rpar=[])
    return node


def site_libraries(site: Site) -> tuple[str, ...]:
    """The libraries a site's call may belong to: its entry's, or those whose arrays or
    modules its name starts with (``Tensor.reshape``: torch; ``ndarray.sum``: numpy, cupy)."""
    from porter_ext.backends import LIBRARIES, get_backend

    if site.entry is not None and site.entry.library != "*":
        return (site.entry.library,)
    head = site.name.partition(".")[0]
    return tuple(lib for lib in LIBRARIES if head in (get_backend(lib).array_type_name, lib))


def within(scope: Scope, scopes: Iterable[Scope]) -> list[Scope]:
    """``scope`` and those of ``scopes`` inside it (its functions, classes and
    comprehensions, however deep)."""

    def inside(other: Scope) -> bool:
        while other is not scope:
            if other.parent is other:  # the builtins: the top of every chain
                return False
            other = other.parent
        return True

    return [s for s in scopes if inside(s)]


def names_assigned(scopes: Iterable[Scope]) -> set[str]:
    """The names ``scopes`` assign to (``x = ...``, ``for x in``, ``with ... as x``): not
    those an import, a definition or a parameter binds."""
    return {
        a.name
        for scope in scopes
        for a in scope.assignments
        if isinstance(a, Assignment) and isinstance(a.node, cst.Name)
    }


def names_bound(scopes: Iterable[Scope]) -> set[str]:
    """Every name ``scopes`` bind: assigned, imported, defined or taken as a parameter."""
    return {a.name for scope in scopes for a in scope.assignments}


def binds_xp(scopes: Iterable[Scope]) -> bool:
    """Whether ``scopes`` assign ``xp`` or take it as a parameter."""
    return any(
        isinstance(a.node, cst.Name | cst.Param)
        for scope in scopes
        for a in scope.assignments["xp"]
    )


def names_read(*expressions: cst.BaseExpression) -> list[str]:
    """The names ``expressions`` read, in source order: the accesses libcst's
    ``ScopeProvider`` finds, so neither an attribute (``x.T``) nor a keyword (``axis=``)."""
    if not expressions:
        return []
    value = cst.Tuple(
        [cst.Element(e) for e in expressions], lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
    )
    wrapper = MetadataWrapper(cst.Module([cst.SimpleStatementLine([cst.Expr(value)])]))
    scopes = {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}
    read = set()
    for scope in scopes:
        for access in scope.accesses:
            node = access.node
            while isinstance(node, cst.Attribute):  # a dotted import's name (``os.path``)
                node = node.value
            read.add(node)
    return [n.value for n in m.findall(wrapper.module, m.Name()) if n in read]


def names_read_text(code: str) -> list[str]:
    """The names an expression's source reads, in order (`names_read`)."""
    try:
        expression = cst.parse_expression(f"({code})")
    except cst.ParserSyntaxError:
        return []
    return names_read(expression)


def operand_names_text(code: str, passed: bool = False) -> list[str]:
    """The names an array expression's source reads as its operands (`names_read_text`),
    not those it passes to a call, indexes with or takes an attribute of (but ``.T``):
    ``(x * x).sum(1)`` reads x; ``torch.ones(n, n)``, ``self.mask`` and ``a[i]`` read no
    operand but ``a``. ``passed``: a call's arguments too (``self.W_key(x)`` reads x), but
    for the sizes a creation takes (``torch.ones(n, n)`` reads no array)."""
    try:
        expression = cst.parse_expression(f"({code})")
    except cst.ParserSyntaxError:
        return []
    return operand_names(expression, passed)


def operand_names(expression: cst.BaseExpression, passed: bool = False) -> list[str]:
    """`operand_names_text` of an expression already parsed."""
    aside: set[int] = set()
    for call in m.findall(expression, m.Call()):
        func = call.func  # type: ignore[attr-defined]
        aside.add(id(func))
        last = func.attr if isinstance(func, cst.Attribute) else func
        if passed and not (isinstance(last, cst.Name) and last.value in FROM_SIZES):
            continue
        for arg in call.args:  # type: ignore[attr-defined]
            aside.update(id(n) for n in m.findall(arg, m.Name()))
    for node in m.findall(expression, m.Subscript()):
        for element in node.slice:  # type: ignore[attr-defined]
            aside.update(id(n) for n in m.findall(element, m.Name()))
    for node in m.findall(expression, m.Attribute(value=m.Name())):
        if node.attr.value not in ("T", "mT"):  # type: ignore[attr-defined]
            aside.add(id(node.value))  # type: ignore[attr-defined]
    operands = [n for n in m.findall(expression, m.Name()) if id(n) not in aside]
    read = set(names_read(expression))
    return list(dict.fromkeys(n.value for n in operands if n.value in read))  # type: ignore[attr-defined]


def first_line_using(module: cst.Module) -> int:
    """Index of the first top-level statement that calls through ``xp`` (where ``xp`` must
    exist; a replay shows when the array it is taken from is not bound yet)."""
    for index, statement in enumerate(module.body):
        if "xp." in module.code_for_node(statement):
            return index
    return len(module.body)


def assigned_in(statements: Sequence[cst.BaseStatement]) -> set[str]:
    """The names top-level ``statements`` of a cell assign (`names_assigned`), at the
    cell's level: bound once they ran."""
    wrapper = MetadataWrapper(cst.Module(list(statements)))
    scopes = wrapper.resolve(ScopeProvider).values()
    top = next((s for s in scopes if isinstance(s, GlobalScope)), None)
    return names_assigned([top]) if top is not None else set()
