"""What a ported cell does beyond the table's entries (`porter_ext.fix.codemod` mixes it
in): a standard call made through a library's module goes through ``xp`` (``torch.abs(t)``
→ ``xp.abs(t)``), a write into an array goes through array-api-extra's ``at``
(``h[0] = v`` → ``h = xpx.at(h)[0].set(v)``, in place where the library can, an updated
copy on JAX), both results of a two-result call unpacked into names are two standard
calls (`every_part`), and a rewrite through NumPy finds it as ``np``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import libcst as cst
from libcst.metadata import PositionProvider

from porter_ext.backends import HOST_LIBRARY, backend_of_module
from porter_ext.fix.cellscope import names_read
from porter_ext.fix.xpbind import XpBinding
from porter_ext.spec.indexing import read_twice, usage_from_source
from porter_ext.spec.replacement import Replacement
from porter_ext.spec.rewrites import NoRewrite, SourceCall, render_rewrite
from porter_ext.spec.sections import evaluates_nothing

if TYPE_CHECKING:
    from porter_ext.fix.codemod import CellAnalysis

__all__ = ["PortableMoves", "every_part"]

#: the name of a write into an array among the sites (the recorder's index writes)
_WRITE = "__setitem__"


class PortableMoves(XpBinding):
    """The codemod's moves that are no table entry; the subclass gives ``_code``,
    ``_operand``, ``only``, ``names``, ``analysis`` (where the standard calls through a
    library's module and the writes into arrays are), ``usages`` (`RunKnowledge.usages`),
    ``_propose`` (a site and why it is left as written) and ``_moved`` (a site applied or
    left out)."""

    analysis: CellAnalysis
    #: `RunKnowledge.usages`
    usages: Mapping[tuple[int, int, str], tuple[str, str]]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        #: the subscripts written to (``C[X] += 1``): no usage rewrite reads them
        self.targets: set[cst.CSTNode] = set()
        #: calls that are an operand (an argument, an index, a side of an operator), where
        #: a creation from sizes goes through ``xp`` (`_through_xp`)
        self.operands: set[cst.BaseExpression] = set()
        #: a rewrite reads NumPy as ``np`` and the cell does not bind that name
        self.needs_numpy = False

    # -- operands, where a creation from sizes goes through xp ------------------------
    def visit_Arg(self, node: cst.Arg) -> None:
        self.operands.add(node.value)

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if isinstance(node.slice, cst.Index):
            self.operands.add(node.slice.value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.operands.update((node.left, node.right))

    def _numpy(self, replacement: str) -> str | None:
        """Why a rewrite through NumPy (``np.from_dlpack``) cannot read it as ``np`` here
        (None: it can, imported by the preamble where nothing binds ``np``)."""
        if "np." not in replacement or self.names.get("np") == HOST_LIBRARY:
            return None
        if "np" in self.names or "np" in self.assigned:
            return "np is not NumPy here: the rewrite reads NumPy as np"
        self.needs_numpy = True
        return None

    # -- standard calls through the library's module ---------------------------------
    def _through_xp(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``torch.abs(neg)`` → ``xp.abs(neg)``: a standard call, with the arguments as
        written, through the namespace of the array it is given. Left as written where an
        argument still names a library (``dtype=torch.int32``) or no ``xp`` can be bound.
        A creation from sizes goes through ``xp`` at the cell's level as an operand
        (``probs[torch.arange(6), y]``), or where the cell computes on earlier cells'
        arrays of its library (``attn = torch.zeros(n)`` filled from ``inputs``: on another
        library it must be that library's array), and in a function, whose ``xp`` is its
        parameters' (``output = np.empty(len(values))``); in a cell that reads none,
        ``X = torch.linspace(...)`` and the receiver of a chain are where the notebook's
        arrays come from, and stay."""
        where = self.get_metadata(PositionProvider, original)
        start, end = where.start, where.end
        found = self.analysis.through_library.get((start.line, start.column, end.line, end.column))
        if found is None:
            return updated
        name, qualname, creation = found
        library = qualname.partition(".")[0]
        if (
            creation
            and len(self.scopes) == 1
            and original not in self.operands
            and library not in self.input_libraries
        ):
            return updated
        modules = {n for n, m in self.names.items() if backend_of_module(m) is not None}
        if modules & set(names_read(*(a.value for a in updated.args))):
            return updated
        if self.only is not None and (start.line, start.column, qualname) not in self.only:
            self._moved((start.line, start.column, qualname), self._code(updated), None)
            return updated
        new = updated.with_changes(func=cst.parse_expression(f"xp.{name}"))
        if name == "sum" and updated.args and _boolean(updated.args[0].value):
            new = new.with_changes(args=[_counted(updated.args[0]), *updated.args[1:]])
        replacement = self._code(new)
        # a creation's arguments are sizes (``torch.ones(n)``), none an array to take xp from
        operands = (
            ()
            if creation
            else tuple(self._operand(a.value) for a in updated.args if a.keyword is None)
        )
        call = SourceCall("function", None, operands, {}, False)
        self.site_libraries = (library,)
        if self.unbound_xp(replacement, call, original, updated) is not None:
            return updated
        self._moved((start.line, start.column, qualname), self._code(updated), replacement)
        self.note_uses(replacement, call)
        return new

    # -- usages that are no call of the table ---------------------------------------
    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets.add(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.targets.add(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self.targets.add(node.target)

    def _usage(
        self, original: cst.CSTNode, updated: cst.BaseExpression, templates: tuple[str, ...]
    ) -> cst.BaseExpression:
        """``emb = C[X]`` → ``xp.take(C, X, axis=0)`` (the flat form for another rank of
        ``X``), ``len(x)`` → ``x.shape[0]``, ``enumerate(x)`` → ``enumerate(xp.unstack(x))``:
        where the run recorded the usage here, the
        template that wrote its suggestion (`porter_ext.spec.indexing`) over the
        expressions as written (inner sites already rewritten)."""
        if original in self.targets or not self.usages:
            return updated
        where = self.get_metadata(PositionProvider, original).start
        key = next((k for k in self.usages if (k[0], k[1]) == (where.line, where.column)), None)
        if key is None:
            return updated
        said, library = self.usages[key]
        written = self._code(original)
        template = next((t for t in templates if usage_from_source(t, written) == said), None)
        text = self._code(updated)
        replacement = usage_from_source(template, text) if template is not None else None
        if replacement is None:
            return updated
        twice = read_twice(template, written)  # type: ignore[arg-type]
        if twice is not None:
            why = f"its form reads {twice} twice (for its shape): assign it to a name first"
            self._propose(key, text, None, why)  # type: ignore[attr-defined]
            return updated
        if self.only is not None and key not in self.only:
            self._moved(key, text, None)
            return updated
        array = None
        if isinstance(updated, cst.Subscript):
            array = self._operand(updated.value)
        elif isinstance(updated, cst.Call) and updated.args:  # enumerate(x), zip(x, y)
            array = self._operand(updated.args[0].value)
        call = SourceCall("function", None, (array,) if array else (), {}, False)
        self.site_libraries = (library,)
        unbound = self.unbound_xp(replacement, call, original, updated)
        if unbound is not None:
            self._propose(key, text, None, unbound)  # type: ignore[attr-defined]
            return updated
        self._moved(key, text, replacement)
        self.note_uses(replacement, call)
        return cst.parse_expression(replacement)

    # -- writes into arrays ---------------------------------------------------------
    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        return self._at_update(original, updated, updated.targets[0].target, updated.value)

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        return self._at_update(original, updated, updated.target, updated.value)

    def _at_update(
        self,
        original: cst.CSTNode,
        updated: Any,
        target: cst.BaseExpression,
        value: cst.BaseExpression,
    ) -> Any:
        """``h[0] = v`` → ``h = xpx.at(h)[0].set(v)`` (``+=`` → ``.add``, ...): the same
        array updated in place where the library can, an updated copy where it cannot."""
        where = self.get_metadata(PositionProvider, original).start
        method = self.analysis.array_writes.get((where.line, where.column))
        if method is None or not isinstance(target, cst.Subscript):
            return updated
        name = self._code(target.value)
        text = self._code(updated)
        index = self._code(target)[len(name) :]
        replacement = f"{name} = xpx.at({name}){index}.{method}({self._operand(value)})"
        if self.only is not None and (where.line, where.column, _WRITE) not in self.only:
            self._moved((where.line, where.column, _WRITE), text, None)
            return updated
        self._moved((where.line, where.column, _WRITE), text, replacement)
        self.needs_extra = True
        return cst.parse_statement(replacement).body[0]  # type: ignore[attr-defined]


def every_part(entry: Replacement, call: SourceCall) -> str:
    """``a, b = x.max(dim=1)``: every field's call, in order (``xp.max(...), xp.argmax(...)``),
    each reading the arguments again, so only where they are names or constants."""
    for operand in (call.receiver, *call.args, *call.kwargs.values()):
        if operand is not None and not evaluates_nothing(operand):
            raise NoRewrite(
                f"its {len(entry.parts)} results are {len(entry.parts)} standard calls, which "
                f"would evaluate {operand} twice: assign it to a name first"
            )
    return ", ".join(render_rewrite(entry, call, i) for i in range(len(entry.parts)))


def _boolean(node: cst.BaseExpression) -> bool:
    """Whether an expression is a boolean array by its form alone: a comparison, a
    ``not``, or ``~``, ``&``, ``|``, ``^`` of such forms (``(x > 1) & (x < 5)``)."""
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Not) or (
            isinstance(node.operator, cst.BitInvert) and _boolean(node.expression)
        )
    if isinstance(node, cst.BinaryOperation) and isinstance(
        node.operator, cst.BitAnd | cst.BitOr | cst.BitXor
    ):
        return _boolean(node.left) and _boolean(node.right)
    return False


def _counted(arg: cst.Arg) -> cst.Arg:
    """``np.sum(x < 6)`` counts: the standard's sum takes numbers only (array-api-strict
    refuses booleans), so the booleans become the integers NumPy's sum counts them in
    (``xp.sum(xp.astype(x < 6, xp.int64))``, an ``int64`` as NumPy's and PyTorch's are)."""
    value = arg.value.with_changes(lpar=[], rpar=[])
    cast = cst.Call(
        cst.parse_expression("xp.astype"),
        [cst.Arg(value), cst.Arg(cst.parse_expression("xp.int64"))],
    )
    return arg.with_changes(value=cast)
