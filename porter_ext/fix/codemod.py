"""The libcst transformer behind `porter_ext.fix.rewrite.rewrite_source`: each site the
analysis found is replaced by its table entry's rewrite, inside out, so every link of a
chain (``p.clamp(0, 1).log().mean()``) is rewritten on what the links before it became.

- A call whose result is a tuple read one field at a time (``x.max(dim=1).values``,
  ``torch.sort(t)[0]``) is rewritten with that field's template, the field read included.
- An attribute read (``x.T`` where ``x`` may not be 2-D) is rewritten like a call.
- Where the source alone cannot tell which entry applies, the run can: ``decided`` gives
  the verdict the run recorded at that site, and the entry it names is used.
- A site is written from the person's expressions (the arguments as written), never from
  values a run saw.

Every place is libcst's (``PositionProvider``: lines from 1, columns in characters), as
the recorder's and the editor's: the static analysis, which reads ``ast``'s byte columns,
is handed over in characters (`CellAnalysis`). What the codemod did at each site is the
report's `porter_ext.model.entries.RewriteSiteEntry`, proposed (``applied`` is the
verification's to set).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from porter_ext.backends import backend_of_module
from porter_ext.fix.cellscope import site_libraries
from porter_ext.fix.checks import FROM_SIZES, Site
from porter_ext.fix.portable import PortableMoves, every_part
from porter_ext.model.entries import RewriteSiteEntry
from porter_ext.spec.indexing import EVERY_AXIS, LENGTH, ROWS, TAKE_TEMPLATES, ZIP_ROWS
from porter_ext.spec.replacement import Replacement
from porter_ext.spec.replacements import find
from porter_ext.spec.rewrites import (
    NoRewrite,
    SourceCall,
    render_rewrite,
    rewrite_from_template,
)
from porter_ext.spec.table.nn import MODULE_REASON

__all__ = ["CellAnalysis", "CellCodemod", "RunKnowledge"]

_LEFT_OUT = "left out: the rewrite did not verify with it"
#: the fields of the tuples the table's entries rewrite field by field
_FIELDS = frozenset({"values", "indices"})

#: where a run saw a call or an operator: ``(line, col, name)``, as the recorder gives it
RunKey = tuple[int, int, str]
#: where a node is written: ``(line, col, end_line, end_col)``, as libcst places it
Span = tuple[int, int, int, int]


@dataclass(frozen=True)
class RunKnowledge:
    """What a run of the cell showed that its source cannot tell, by where the recorder saw
    it (`RunKey`).

    ``results``: the calls that returned an array (→ library), so that the calls on their
    results are rewritten too (``torch.sigmoid(z).clamp(0, 1).log()``); ``receivers``: the
    method calls on arrays (``a.flatten()`` on a parameter ``a``); ``decided``: the verdict
    (``(status, standard_name)``) where the source leaves the entry to values (``x.T``: is
    x 2-D?); ``operators``: the operators that mixed dtype kinds (→ the operands' dtypes,
    ``("bool", "float32")``), whose operand is converted; ``others``: the names that held
    something other than an array (a list), which ``xp`` is never taken from; ``usages``:
    the integer-array indices and ``len()`` calls the run saw (`porter_ext.spec.indexing`);
    ``rewrites``: where the values chose the rewrite (a dtype conditions it), that one."""

    results: Mapping[RunKey, str] = field(default_factory=dict)
    receivers: Mapping[RunKey, str] = field(default_factory=dict)
    decided: Mapping[RunKey, tuple[str, str | None]] = field(default_factory=dict)
    operators: Mapping[RunKey, tuple[str, str]] = field(default_factory=dict)
    others: Collection[str] = ()
    #: usages that are no call of the table (``C[X]``, ``len(x)``), by where the run saw
    #: them → (the suggestion it wrote with the person's expressions, the array's library)
    usages: Mapping[RunKey, tuple[str, str]] = field(default_factory=dict)
    #: the rewrites the run's values chose (``np.log(i)`` of integers:
    #: ``xp.log(xp.astype({arg0}, xp.float64))``), by where it saw them → the template
    #: over the call's source (`porter_ext.model.CallRecord.rewrite`)
    rewrites: Mapping[RunKey, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CellAnalysis:
    """What the static analysis (`porter_ext.fix.checks.Analyzer`, ``porter lint``'s) found
    in a cell, placed as libcst places the cell's nodes (`Span`, columns in characters)."""

    #: the findings, by the span of their call or attribute read
    sites: Mapping[Span, Site]
    #: standard calls through a library's module, by span → (standard name, qualified
    #: name, a creation from sizes): `Analyzer.through_library`
    through_library: Mapping[Span, tuple[str, str, bool]]
    #: writes into arrays, by where their statement starts → the ``xpx.at`` method
    array_writes: Mapping[tuple[int, int], str]


class CellCodemod(PortableMoves):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(
        self,
        module: cst.Module,
        analysis: CellAnalysis,
        names: Mapping[str, str],
        arrays: Mapping[str, str],
        run: RunKnowledge,
        only: Collection[RunKey] | None = None,
        refused: Mapping[RunKey, str] | None = None,
    ) -> None:
        """``names``: local name → module, as the cell and earlier cells import them;
        ``arrays``: the earlier cells' arrays (name → library); ``only``: the sites to
        rewrite, the others left out (None: every one); ``refused``: why some of those
        others are left as written, where that is not verification (`XpBinding.mixed`)."""
        super().__init__(module, dict(arrays), run.others, {**run.results, **run.receivers})
        self.usages = run.usages
        self.analysis = analysis
        self.operators = run.operators
        self.only = None if only is None else set(only)
        self.refused = refused or {}
        #: the run's verdict (status, standard name) at sites the source leaves undecided
        self.decided = run.decided
        self.chosen = run.rewrites
        self.statement_calls: set[cst.Call] = set()
        #: statements that replaced an in-place method's → the array it returned
        self.shown_by: dict[cst.CSTNode, str] = {}
        self.needs_extra = False
        #: a rewrite reads Python's math module (``math.prod(x.shape)``)
        self.needs_math = False
        #: a creation stayed with its library for want of an array of the cell's own
        #: (`_portable`); with ``through_earlier``, the cell's ``xp`` is taken from an
        #: earlier cell's array anyway, and its creations go through it too
        self.kept_with_library = False
        self.through_earlier = False
        self.names = names
        #: calls whose tuple result is read one field at a time: call → field
        self.fields: dict[cst.Call, str | int] = {}
        #: those rewritten with their field, whose reading of it goes with them
        self.taken: set[cst.Call] = set()
        #: calls whose tuple result is unpacked into names: call → how many
        self.unpacked: dict[cst.Call, int] = {}

    def _code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        """Every replacement, in parentheses where its place binds tighter than it
        (`_bracketed`): ``F.softmax(x, 1)[0]`` → ``(xp.exp(...) / xp.sum(...))[0]``."""
        left = super().on_leave(original_node, updated_node)
        if left is updated_node or not isinstance(original_node, cst.BaseExpression):
            return left
        parent = self.get_metadata(ParentNodeProvider, original_node, None)
        return _bracketed(left, original_node, parent)

    def _operand(self, node: cst.BaseExpression) -> str:
        """An operand's source without its own parentheses (the template adds them back
        where its context needs them); a tuple's and a generator's are its own."""
        if isinstance(node, cst.GeneratorExp) and not node.lpar:
            return f"({self._code(node)})"
        if getattr(node, "lpar", None) and not isinstance(node, cst.Tuple | cst.GeneratorExp):
            node = node.with_changes(lpar=[], rpar=[])
        return self._code(node)

    def _site(self, original: cst.CSTNode) -> Site | None:
        where = self.get_metadata(PositionProvider, original)
        start, end = where.start, where.end
        return self.analysis.sites.get((start.line, start.column, end.line, end.column))

    def _propose(
        self, where: RunKey, text: str, replacement: str | None, why: str | None = None
    ) -> None:
        line, col, name = where
        self.results.append(RewriteSiteEntry(line, col, name, text, replacement, reason=why))

    def _record(self, site: Site, text: str, replacement: str | None, why: str | None = None):
        self._propose((site.line, site.col, site.name), text, replacement, why)

    def _moved(self, where: RunKey, text: str, replacement: str | None) -> None:
        """A site of `PortableMoves`: applied, or left out by ``only`` (None)."""
        why = None if replacement is not None else self._why(where)
        self._propose(where, text, replacement, why)

    def _why(self, where: RunKey) -> str:
        """Why a site ``only`` leaves out stays as written: its scope mixes libraries
        (``refused``), or the rewrite did not verify with it."""
        return self.refused.get(where, _LEFT_OUT)

    # -- what is read from a call's tuple result --------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        super().visit_SimpleStatementLine(node)
        for small in node.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                self.statement_calls.add(small.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if (
            isinstance(target, cst.Tuple)
            and isinstance(node.value, cst.Call)
            and all(isinstance(e, cst.Element) for e in target.elements)
        ):
            self.unpacked[node.value] = len(target.elements)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Call) and node.attr.value in _FIELDS:
            self.fields[node.value] = node.attr.value

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if not isinstance(node.value, cst.Call) or len(node.slice) != 1:
            return
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
            self.fields[node.value] = int(index.value.value)

    def _without_field(self, original: cst.Attribute | cst.Subscript, updated):
        """``<rewritten call>.values`` → the rewritten call: its template read the field."""
        if original.value not in self.taken:
            return None
        return updated.value.with_changes(lpar=updated.lpar, rpar=updated.rpar)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        taken = self._without_field(original, updated)
        if taken is not None:
            return taken
        return self._usage(original, updated, (*TAKE_TEMPLATES, EVERY_AXIS))

    # -- sites ----------------------------------------------------------------------------
    def _entry(self, site: Site) -> Replacement:
        """The site's entry: the source's, or where values decide, the run's."""
        if site.entry is not None:
            return site.entry
        verdict = self.decided.get((site.line, site.col, site.name))
        if site.undecided and verdict is not None and verdict[0] == "standard":
            raise _AsTheStandardSays  # ``P.T`` on a 2-D P: nothing to rewrite
        if site.undecided and verdict is not None:
            options = _matching(site.options, verdict)
            if not options and site.options:  # values the stand-ins did not try (mixed
                # ranks, a tensor autograd tracks): the entries of the site's library too
                first = site.options[0]
                for library in (*site_libraries(site), first.library):
                    options = _matching(find(library, first.kind, first.name), verdict)
                    if options:
                        break
            if len({(e.rewrite, e.parts, e.no_rewrite) for e in options}) == 1:
                return options[0]
        if site.undecided:
            raise NoRewrite("which rewrite applies depends on values: a run decides")
        raise NoRewrite("the table has no rewrite for this call")

    def _rewrite(
        self, site: Site, original: cst.CSTNode, updated: cst.CSTNode, call_node: cst.Call | None
    ) -> cst.BaseExpression | None:
        """The replacement of one site (None: left as written, with the reason recorded)."""
        field = self.fields.get(original) if isinstance(original, cst.Call) else None
        text = self._code(updated)
        try:
            entry = self._entry(site)
            if field is not None and entry.parts:
                text += f".{field}" if isinstance(field, str) else f"[{field}]"
            else:
                field = None
            statement = call_node is not None and original in self.statement_calls
            call = self._source_call(entry, updated, statement)
            # a creation's arguments are sizes, a module's its configuration
            # (``nn.Linear(d_in, d_out)``), not arrays: none is one xp is taken from
            sized = entry.kind == "function" and (
                entry.name.rpartition(".")[2] in FROM_SIZES
                or entry.no_rewrite == MODULE_REASON
                # data made an array through the xp of an earlier array (`through_earlier`)
                or (self.through_earlier and entry.standard_name == "asarray")
            )
            arrays_of = replace(call, args=()) if sized else call
            self.note_array(arrays_of)
            unpacks = field is None and isinstance(original, cst.Call)
            count = self.unpacked.get(original) if unpacks else None  # type: ignore[arg-type]
            if count is not None and len(entry.parts) == count:
                replacement = every_part(entry, call)
            else:
                replacement = _unpacked(render_rewrite(entry, call, field), count)
        except _AsTheStandardSays:
            return None
        except NoRewrite as exc:
            self._record(site, text, None, str(exc))
            return None
        key = (site.line, site.col, site.name)
        if self.only is not None and key not in self.only:
            self._record(site, text, None, self._why(key))
            return None
        self.site_libraries = site_libraries(site)
        replacement = self._portable(entry, call, field) or replacement
        unbound = (
            self.unbound_xp(replacement, arrays_of, original, updated)
            or self._numpy(replacement)
            or self._math(replacement)
        )
        if unbound is not None:
            self._record(site, text, None, unbound)
            return None
        self._record(site, text, replacement)
        self.note_uses(replacement, arrays_of)
        if "xpx." in replacement:
            self.needs_extra = True
        if "math." in replacement:
            self.needs_math = True
        if field is not None:
            self.taken.add(original)  # type: ignore[arg-type]
        if call.statement and _is_assignment(replacement):
            return _StatementMarker(replacement, _returns_its_array(entry, call))
        return cst.parse_expression(replacement)

    def _portable(self, entry: Replacement, call: SourceCall, field) -> str | None:
        """The entry's rewrite through ``xp`` where the cell has an array to take ``xp``
        from before this site, its own or one of the earlier cells' arrays of the
        library it computes on (None: the library's own rewrite stays). A cell that
        reads no array of that library makes its arrays with it (``example =
        torch.ones((6, 6))`` for a dropout): through an unrelated earlier array's ``xp``
        they would be another library's on every other replay."""
        if entry.portable is None or field is not None or len(self.scopes) > 1:
            return None
        at_hand = self.binds_xp or self.scopes[-1]["arrays"] or self.through_earlier
        if not at_hand and (
            entry.library not in self.input_libraries
            or self.earlier_array(self.site_libraries) is None
        ):
            self.kept_with_library = True
            return None
        try:
            return render_rewrite(replace(entry, rewrite=entry.portable), call)
        except NoRewrite:
            return None  # a dtype the standard does not name: the library's rewrite

    def _math(self, replacement: str) -> str | None:
        """Why a rewrite through Python's ``math`` cannot read it here: the cell binds the
        name to something else (None: it can, imported where the cell lacks it)."""
        if "math." not in replacement or "math" not in self.assigned:
            return None
        return "math is not Python's math module here: the rewrite reads it as math"

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        site = self._site(original)
        chosen = self._chosen(original, updated, site)
        if chosen is not None:
            return chosen
        if site is None:
            moved = self._usage(original, updated, (LENGTH, ROWS, ZIP_ROWS))
            return moved if moved is not updated else self._through_xp(original, updated)
        if site.kind == "host_sync" and site.entry is None and not site.undecided:
            return updated  # float(x): the standard's own way to read a value
        replacement = self._rewrite(site, original, updated, updated)
        return updated if replacement is None else replacement

    def _chosen(
        self, original: cst.Call, updated: cst.Call, site: Site | None
    ) -> cst.BaseExpression | None:
        """The rewrite the run's values chose for this call (``np.log(i)`` of an integer
        array → ``xp.log(xp.astype(i, xp.float64))``, ``np.exp([1, 2])`` →
        ``xp.exp(xp.asarray([1, 2], dtype=xp.float64))``), filled with the call as
        rewritten so far; None where the run chose none (the table's entry decides)."""
        if not self.chosen or not isinstance(updated.func, cst.Attribute | cst.Name):
            return None
        where = self.get_metadata(PositionProvider, original).start
        called = (
            updated.func.attr.value
            if isinstance(updated.func, cst.Attribute)
            else updated.func.value
        )
        key = next(
            (
                k
                for k in self.chosen
                if (k[0], k[1]) == (where.line, where.column) and k[2].rpartition(".")[2] == called
            ),
            None,
        )
        if key is None:
            return None
        template = self.chosen[key]
        entry = site.entry if site is not None else None
        kind = "method" if entry is not None and entry.kind == "method" else "function"
        args = tuple(self._operand(a.value) for a in updated.args if a.keyword is None)
        kwargs = {a.keyword.value: self._operand(a.value) for a in updated.args if a.keyword}
        receiver = self._operand(updated.func.value) if kind == "method" else None  # type: ignore[union-attr]
        call = SourceCall(kind, receiver, args, kwargs, False)
        text = self._code(updated)
        try:
            replacement = rewrite_from_template(template, call, entry)
        except NoRewrite as exc:
            self._propose(key, text, None, str(exc))
            return updated
        if self.only is not None and key not in self.only:
            self._propose(key, text, None, self._why(key))
            return updated
        self.site_libraries = (key[2].partition(".")[0],) if site is None else site_libraries(site)
        unbound = self.unbound_xp(replacement, call, original, updated)
        module = self._module_called(updated) if unbound is not None else None
        if module is not None:  # no array to take xp from: the library's own namespace
            replacement = _XP.sub(f"{module}.", replacement)
        elif unbound is not None:
            self._propose(key, text, None, unbound)
            return updated
        self._propose(key, text, replacement)
        self.note_uses(replacement, call)
        return cst.parse_expression(replacement)

    def _module_called(self, call: cst.Call) -> str | None:
        """The library module a function call names (``np`` in ``np.log(x)``), or None."""
        func = call.func
        named = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
        module = func.value.value if named else ""  # type: ignore[union-attr]
        return module if named and backend_of_module(self.names.get(module, "")) else None

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        taken = self._without_field(original, updated)
        if taken is not None:
            return taken
        site = self._site(original)
        if site is None:
            return updated
        replacement = self._rewrite(site, original, updated, None)
        return updated if replacement is None else replacement

    def _source_call(self, entry: Replacement, node: cst.CSTNode, statement: bool) -> SourceCall:
        library = entry.library
        if isinstance(node, cst.Attribute):  # an attribute read: x.T
            return SourceCall("attribute", self._operand(node.value), (), {}, statement)
        args = tuple(self._operand(a.value) for a in node.args if a.keyword is None)  # type: ignore[attr-defined]
        kwargs = {a.keyword.value: self._operand(a.value) for a in node.args if a.keyword}  # type: ignore[attr-defined]
        if entry.kind == "method":
            receiver = self._operand(node.func.value)  # type: ignore[attr-defined]
            named = [n for n, d in self.names.items() if d == library]
            lib = library if library in named else next(iter(named), None)
            return SourceCall("method", receiver, args, kwargs, statement, lib)
        callee, suffix = self._code(node.func), f".{entry.name}"  # type: ignore[attr-defined]
        lib = callee[: -len(suffix)] if callee.endswith(suffix) else None
        return SourceCall("function", None, args, kwargs, statement, lib)

    # -- operators --------------------------------------------------------------------
    def leave_BinaryOperation(
        self, original: cst.BinaryOperation, updated: cst.BinaryOperation
    ) -> cst.BaseExpression:
        """An operator a run showed to mix kinds of dtype: the bool operand converted
        explicitly (``(x > 0) * r`` → ``xp.astype(x > 0, xp.float32) * r``), and the
        integer arrays of a true division made float64 (``i / 4`` →
        ``xp.astype(i, xp.float64) / 4``: the standard's ``/`` takes floating arrays), an
        integer array mixed with a Python float made float (``1.0 / i`` →
        ``1.0 / xp.astype(i, xp.float64)``: the standard mixes a scalar with its own kind)."""
        where = self.get_metadata(PositionProvider, original)
        line, col = where.start.line, where.start.column
        op = _OPERATOR_NAMES.get(type(updated.operator).__name__)
        hit = next(
            (
                (name, kinds)
                for (at_line, at_col, name), kinds in self.operators.items()
                if (at_line, at_col) == (line, col)
                and name.rpartition(".")[2].replace("__r", "__") == op
            ),
            None,
        )
        if hit is None:
            return updated
        name, (left, right) = hit
        # the record's operands name the array first; a Python int is "int"
        array_side = "right" if name.rpartition(".")[2].startswith("__r") else "left"
        other_side = "left" if array_side == "right" else "right"
        if op == "__truediv__" and {_kind(left), _kind(right)} <= {"int", "bool"}:
            # the dtype of the original's result: torch's default float for a Tensor
            cast = "float32" if name.startswith("Tensor.") else "float64"
            sides = {array_side: cast} | ({other_side: cast} if right != "int" else {})
            arrays = tuple(sides)
        elif right in _PYTHON_FLOATING and _kind(left) in ("int", "bool"):
            # ``1.0 / i``: the integer array cast to the dtype the original gave the result
            tensor = name.startswith("Tensor.")
            floating = "float32" if tensor else "float64"
            cast = (
                floating if right == "python float" else ("complex64" if tensor else "complex128")
            )
            sides, arrays = {array_side: cast}, (array_side,)
        elif {_kind(left), _kind(right)} == {"int", "float"} and right != "int":
            # two arrays, a float and an integer one: the integer one cast to the float's
            floating, integral = (left, right) if _kind(left) == "float" else (right, left)
            sides = {array_side if left == integral else other_side: floating}
            arrays = (array_side if left == floating else other_side,)
        elif "bool" in (left, right) and left != right:
            sides = {"left": right} if left == "bool" else {"right": left}
            arrays = ("right",) if left == "bool" else ("left",)
        else:
            return updated
        text = self._code(updated)
        if self.only is not None and (line, col, name) not in self.only:
            self._propose((line, col, name), text, None, self._why((line, col, name)))
            return updated
        casts = {
            side: cst.parse_expression(
                f"xp.astype({self._operand(getattr(updated, side))}, xp.{dtype})"
            )
            for side, dtype in sides.items()
        }
        new = updated.with_changes(**casts)
        self._propose((line, col, name), text, self._code(new))
        operands = [getattr(updated, side) for side in arrays]  # where xp can be taken from
        self.note_casts(
            [o.value for o in operands if isinstance(o, cst.Name)],
            [self._code(o) for o in operands if not isinstance(o, cst.Name)],
        )
        return new

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr) -> cst.BaseSmallStatement:
        if isinstance(updated.value, _StatementMarker):
            marker = updated.value
            statement = cst.parse_statement(marker.replacement).body[0]  # type: ignore[attr-defined]
            if marker.shows is not None and isinstance(updated.semicolon, cst.MaybeSentinel):
                self.shown_by[statement] = marker.shows
            return statement
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        """A cell whose last line was an in-place method showing its array (``r.mul_(3.0)``
        shows ``r``) shows it after the statement that replaced it (``r[...] = ...``)."""
        updated = super().leave_Module(original, updated)
        last = updated.body[-1] if updated.body else None
        if isinstance(last, cst.SimpleStatementLine) and last.body[-1] in self.shown_by:
            shown = cst.parse_statement(self.shown_by[last.body[-1]])
            return updated.with_changes(body=[*updated.body, shown])
        return updated


def _is_assignment(text: str) -> bool:
    """Whether a rewrite is an assignment (``r = xp.sort(r)``, ``t.view(2, 3)[...] = 0``),
    which replaces its whole statement, rather than an expression."""
    try:
        (statement,) = ast.parse(text).body
    except (SyntaxError, ValueError):
        return False
    return isinstance(statement, ast.Assign | ast.AugAssign)


def _unpacked(replacement: str, count: int | None) -> str:
    """A rewrite that is a list of ``count`` parts (a split's slices), unpacked into as
    many names, without its brackets (``x1, x2 = x[:3, ...], x[3:, ...]``)."""
    if count is None or not replacement.startswith("["):
        return replacement
    try:
        node = ast.parse(replacement, mode="eval").body
    except SyntaxError:
        return replacement
    if isinstance(node, ast.List) and len(node.elts) == count:
        return replacement[1:-1]
    return replacement


def _matching(entries: Iterable[Replacement], verdict: tuple[str, str | None]) -> list:
    """The entries a run's verdict (status, standard name) names."""
    return [e for e in entries if (e.status, e.standard_name) == verdict]


def _kind(dtype: str) -> str:
    """The kind of dtype a recorded operand has ("int" is also a Python int)."""
    if dtype == "bool":
        return "bool"
    if dtype.startswith(("float", "bfloat")):
        return "float"
    return "int" if dtype.startswith(("int", "uint")) else "other"


#: the namespace a rewrite reads (``xp.log``)
_XP = re.compile(r"\bxp\.")
#: a Python scalar of a floating kind, as a recorded operator's operands name it
_PYTHON_FLOATING = frozenset({"python float", "python complex"})


#: places that take any expression as written (an argument, an assigned value, an
#: element, an index, a statement)
_LOOSE_PLACES = (
    cst.Arg,
    cst.Assign,
    cst.AnnAssign,
    cst.AugAssign,
    cst.Return,
    cst.Expr,
    cst.Element,
    cst.DictElement,
    cst.Index,
    cst.Yield,
)
#: how tightly each operator binds, loosest first (Python's own order)
_BINDING = {
    cst.Or: 2,
    cst.And: 3,
    cst.Not: 4,
    cst.BitOr: 6,
    cst.BitXor: 7,
    cst.BitAnd: 8,
    cst.LeftShift: 9,
    cst.RightShift: 9,
    cst.Add: 10,
    cst.Subtract: 10,
    cst.Multiply: 11,
    cst.Divide: 11,
    cst.FloorDivide: 11,
    cst.Modulo: 11,
    cst.MatrixMultiply: 11,
    cst.Minus: 12,
    cst.Plus: 12,
    cst.BitInvert: 12,
    cst.Power: 13,
}
_ATOM = 15  # a name, a call, an index, an attribute read, a literal, a display


def _binding(node: cst.CSTNode) -> int:
    """How tightly an expression binds (`_BINDING`; a comparison 5, a conditional 1, a
    lambda 0, anything else an atom)."""
    if isinstance(node, cst.BinaryOperation | cst.UnaryOperation | cst.BooleanOperation):
        return _BINDING[type(node.operator)]
    if isinstance(node, cst.Comparison):
        return 5
    if isinstance(node, cst.IfExp):
        return 1
    if isinstance(node, cst.Lambda | cst.NamedExpr):
        return 0
    return 14 if isinstance(node, cst.Await) else _ATOM


def _bracketed(node: Any, original: cst.CSTNode, parent: cst.CSTNode | None) -> Any:
    """A replacement ``node`` of ``original`` in parentheses where its place (``parent``)
    binds tighter than it does: the value of an index, a call or an attribute read, an
    operand of a tighter operator (the right one of an equal one). A node already in
    parentheses, and one in a place that takes any expression, are as they are."""
    if not isinstance(node, cst.BaseExpression) or node.lpar or parent is None:
        return node
    mine = _binding(node)
    if mine == _ATOM or isinstance(parent, _LOOSE_PLACES):
        return node
    if isinstance(parent, cst.BinaryOperation):
        theirs = _binding(parent)
        needed = mine < theirs or (mine == theirs and parent.right is original)
    elif isinstance(parent, cst.UnaryOperation | cst.BooleanOperation):
        needed = mine <= _binding(parent)
    elif isinstance(parent, cst.Comparison | cst.ComparisonTarget):
        needed = mine <= 5
    else:  # an index's or a call's value, an attribute read, a conditional's part
        needed = True
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if needed else node


class _AsTheStandardSays(Exception):
    """The run saw the site used as the standard says: no site at all."""


#: libcst's operator classes by the dunder a recorded operator call names
_OPERATOR_NAMES = {
    "Add": "__add__",
    "Subtract": "__sub__",
    "Multiply": "__mul__",
    "Divide": "__truediv__",
    "FloorDivide": "__floordiv__",
    "Modulo": "__mod__",
    "Power": "__pow__",
}


class _StatementMarker(cst.Name):
    """Carries an assigning rewrite from the call up to its expression statement, and
    the array the call returned (``shows``: what the cell shows when it is its last line)."""

    def __init__(self, replacement: str, shows: str | None = None) -> None:
        super().__init__("__porter_statement__")
        object.__setattr__(self, "replacement", replacement)
        object.__setattr__(self, "shows", shows)


def _returns_its_array(entry: Replacement, call: SourceCall) -> str | None:
    """The array an in-place method returns, as written (PyTorch's ``mul_``, ``zero_``
    return the tensor they changed), or None (NumPy's ``sort``, ``fill`` return None)."""
    name = entry.name.rpartition(".")[2]
    if call.kind == "method" and name.endswith("_") and not name.startswith("_"):
        return call.receiver
    return None
