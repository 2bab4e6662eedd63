"""Rewriting a cell's source into the standard: the table's rewrites applied as a libcst
codemod, so comments, formatting and every line porter does not change stay as written.

Which entry applies at a call is decided by the same static analysis as ``porter lint``
(`porter_ext.fix.checks`): a call whose entry depends on values is left alone with that
reason, as is one whose rewrite would drop an argument (`porter_ext.spec.rewrites`).
Where a rewrite uses ``xp`` and the scope has none, ``xp = array_namespace(...)`` is
introduced (at the top of a function, from the parameters it uses as arrays; in a cell,
before the first rewritten statement, from that call's array). The rewrite is a proposal:
``%%port --fix`` and ``porter fix`` accept it only once replays verify it.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from porter_ext.fix.cellscope import (
    ReplaceFirst,
    binds_xp,
    binds_xp_at_top,
    ended,
    first_line_using,
    is_docstring,
    is_import,
    names_bound,
    names_read,
    names_read_text,
    site_libraries,
)
from porter_ext.fix.checks import Analyzer, Site
from porter_ext.fix.static import collect_imports
from porter_ext.record.positions import LINE_BREAK, in_characters
from porter_ext.spec.rewrites import NoRewrite, SourceCall, render_rewrite
from porter_ext.spec.standard import DEFAULT_VERSION, standard

__all__ = ["CellRewrite", "RewriteSite", "rewrite_source"]

_HELPER_IMPORT = "from array_api_compat import array_namespace"
_EXTRA_IMPORT = "import array_api_extra as xpx"


@dataclass(frozen=True)
class RewriteSite:
    """One call porter looked at: rewritten (``replacement`` set) or not (``reason``)."""

    line: int
    col: int
    name: str
    original: str
    replacement: str | None
    reason: str | None = None


@dataclass
class CellRewrite:
    """The rewritten source of a cell and what happened at each finding."""

    original: str
    source: str
    sites: list[RewriteSite] = field(default_factory=list)

    @property
    def applied(self) -> list[RewriteSite]:
        return [s for s in self.sites if s.replacement is not None]

    @property
    def refused(self) -> list[RewriteSite]:
        return [s for s in self.sites if s.replacement is None]

    @property
    def changed(self) -> bool:
        return self.source != self.original

    def diff(self, name: str = "cell", context: int = 3) -> str:
        """A unified diff; each side ends its last line, so no line of it runs into the next."""
        return "".join(
            difflib.unified_diff(
                ended(self.original).splitlines(keepends=True),
                ended(self.source).splitlines(keepends=True),
                f"{name} (original)",
                f"{name} (portable)",
                n=context,
            )
        )


def _key(line: int, col: int, end_line: int, end_col: int) -> tuple[int, int, int, int]:
    return (line, col, end_line, end_col)


class _Rewriter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(
        self,
        sites: dict[tuple[int, int, int, int], Site],
        module: cst.Module,
        only: Collection[tuple[int, int, str]] | None = None,
        operators: Mapping[tuple[int, int, str], tuple[str, str]] | None = None,
        arrays: Mapping[str, str] | None = None,
        names: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.sites = sites
        self.operators = dict(operators or {})
        self.only = None if only is None else set(only)
        self.module = module
        self.results: list[RewriteSite] = []
        self.statement_calls: set[cst.Call] = set()
        #: function nesting: (node, names needing xp) per def; the cell is the outermost
        self.scopes: list[dict] = [{"uses": False, "arrays": [], "first": None}]
        self.needs_extra = False
        #: the cell-level statement being visited, and the one whose first-evaluated array
        #: is split off into its own assignment (`_hoist`): statement → (name, receiver)
        self.statement: cst.SimpleStatementLine | None = None
        self.depth = 0
        self.hoists: dict[cst.SimpleStatementLine, tuple[str, cst.BaseExpression]] = {}
        #: the cell binds xp itself at its top level (then no xp line is added)
        self.binds_xp = binds_xp_at_top(module)
        #: arrays of earlier cells (name → library), for an xp taken from one of them
        self.arrays = dict(arrays or {})
        #: local name → module, as the cell and earlier cells import them
        self.names = dict(names or {})
        self.site_libraries: tuple[str, ...] = ()

    def _code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    def _operand(self, node: cst.BaseExpression) -> str:
        """An operand's source without its own parentheses: the template adds them back
        where its context needs them."""
        if getattr(node, "lpar", None):
            node = node.with_changes(lpar=[], rpar=[])
        return self._code(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if self.depth == 0:
            self.statement = node
        for small in node.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                self.statement_calls.add(small.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append({"uses": False, "arrays": [], "first": None})

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.depth += 1

    def leave_IndentedBlock(
        self, original: cst.IndentedBlock, updated: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        self.depth -= 1
        return updated

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        """A statement whose array was split off (`_hoist`): ``x = lib.f(...)`` first, then
        the rest of the statement on ``x`` (``xp`` is bound between the two)."""
        hoist = self.hoists.pop(original, None)
        if hoist is None:
            return updated
        name, receiver = hoist
        first = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(name))], receiver)],
            leading_lines=updated.leading_lines,
        )
        rest = updated.visit(ReplaceFirst(receiver, cst.Name(name)))
        return cst.FlattenSentinel([first, rest.with_changes(leading_lines=[])])

    def _site(self, original: cst.CSTNode) -> Site | None:
        where = self.get_metadata(PositionProvider, original)
        key = _key(where.start.line, where.start.column, where.end.line, where.end.column)
        return self.sites.get(key)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        site = self._site(original)
        if site is None:
            return updated
        text = self._code(updated)
        if self.only is not None and (site.line, site.col, site.name) not in self.only:
            why = "left out: the rewrite did not verify with it"
            self.results.append(RewriteSite(site.line, site.col, site.name, text, None, why))
            return updated
        if site.entry is None:
            why = "the table has no rewrite for this call"
            if site.undecided:
                why = "which rewrite applies depends on values: a run decides"
            self.results.append(RewriteSite(site.line, site.col, site.name, text, None, why))
            return updated
        call = self._source_call(site, updated, original in self.statement_calls)
        try:
            replacement = render_rewrite(site.entry, call)
        except NoRewrite as exc:
            self.results.append(RewriteSite(site.line, site.col, site.name, text, None, str(exc)))
            return updated
        self.site_libraries = site_libraries(site)
        unbound = self._unbound_xp(replacement, call, original, updated)
        if unbound is not None:
            self.results.append(RewriteSite(site.line, site.col, site.name, text, None, unbound))
            return updated
        self.results.append(RewriteSite(site.line, site.col, site.name, text, replacement))
        self._note_uses(replacement, call)
        if call.statement and "=" in replacement.split("(", 1)[0]:
            return _StatementMarker(replacement, updated)
        return cst.parse_expression(replacement)

    def leave_BinaryOperation(
        self, original: cst.BinaryOperation, updated: cst.BinaryOperation
    ) -> cst.BaseExpression:
        """An operator a run showed to mix bool with a number (``(x > 0) * r``): the bool
        operand converted explicitly (``xp.astype(x > 0, xp.float32) * r``)."""
        where = self.get_metadata(PositionProvider, original)
        op = _OPERATOR_NAMES.get(type(updated.operator).__name__)
        hit = next(
            ((name, kinds) for (line, col, name), kinds in self.operators.items()
             if (line, col) == (where.start.line, where.start.column)
             and name.rpartition(".")[2].replace("__r", "__") == op),
            None,
        )  # fmt: skip
        if hit is None:
            return updated
        name, (left, right) = hit
        if "bool" not in (left, right) or left == right:
            return updated
        text = self._code(updated)
        if self.only is not None and (where.start.line, where.start.column, name) not in self.only:
            why = "left out: the rewrite did not verify with it"
            self.results.append(RewriteSite(where.start.line, where.start.column, name, text,
                                            None, why))  # fmt: skip
            return updated
        side, other = ("left", right) if left == "bool" else ("right", left)
        operand = getattr(updated, side)
        wrapped = cst.parse_expression(f"xp.astype({self._operand(operand)}, xp.{other})")
        new = updated.with_changes(**{side: wrapped})
        replacement = self._code(new)
        self.results.append(RewriteSite(where.start.line, where.start.column, name, text,
                                        replacement))  # fmt: skip
        scope = self.scopes[-1]
        scope["uses"] = True
        partner = getattr(updated, "right" if side == "left" else "left")
        if isinstance(partner, cst.Name) and partner.value not in scope["arrays"]:
            scope["arrays"].append(partner.value)
        return new

    def _source_call(self, site: Site, node: cst.Call, statement: bool) -> SourceCall:
        args = tuple(self._operand(a.value) for a in node.args if a.keyword is None)
        kwargs = {a.keyword.value: self._operand(a.value) for a in node.args if a.keyword}
        library = site.entry.library if site.entry is not None else None
        if site.entry is not None and site.entry.kind == "method":
            receiver = self._operand(node.func.value)  # type: ignore[attr-defined]
            named = [n for n, d in self.names.items() if d == library]
            lib = library if library in named else next(iter(named), None)
            return SourceCall("method", receiver, args, kwargs, statement, lib)
        callee, suffix = self._code(node.func), f".{site.entry.name}" if site.entry else ""
        lib = callee[: -len(suffix)] if suffix and callee.endswith(suffix) else None
        return SourceCall("function", None, args, kwargs, statement, lib)

    def _unbound_xp(self, replacement: str, call: SourceCall, original: cst.Call,
                    updated: cst.Call) -> str | None:  # fmt: skip
        """Why ``xp`` could not be bound for this rewrite at the cell's level (None: it can).

        The first use of ``xp`` in a cell needs an array to take the namespace from. When
        the call's array is not a name (``x = lib.linspace(...).reshape(3, 4)``), the array
        is split off into the statement's own target (`_hoist`), which the creation call
        in the library's own namespace (the legitimate entry point) binds first."""
        scope = self.scopes[-1]
        if len(self.scopes) > 1 or "xp." not in replacement or self.binds_xp:
            return None
        array = call.receiver if call.kind == "method" else (call.args or (None,))[0]
        if scope["arrays"] or (array is not None and array.isidentifier()):
            return None
        receiver = original.func.value if call.kind == "method" else (
            original.args[0].value if original.args else None)  # fmt: skip
        name = self._hoist(receiver)
        if name is None:
            earlier = self._earlier_array(self.site_libraries)
            if earlier is not None:
                scope["arrays"].append(earlier)
                return None
            return ("no array is bound to a name before it to take xp from: assign the "
                    "array to a name first")  # fmt: skip
        moved = updated.func.value if call.kind == "method" else updated.args[0].value  # type: ignore[attr-defined]
        self.hoists[self.statement] = (name, moved)  # type: ignore[index]
        scope["arrays"].append(name)
        return None

    def _earlier_array(self, libraries: Collection[str]) -> str | None:
        """An array of the site's library that an earlier cell bound (the run's
        ``arrays``) and this cell does not rebind: there before the cell's first line."""
        bound = names_bound(self.module)
        return next(
            (n for n, lib in self.arrays.items() if lib in libraries and n not in bound), None
        )

    def _hoist(self, receiver: cst.BaseExpression | None) -> str | None:
        """The name the statement assigns, when its array can be split off: a cell-level
        ``NAME = ...`` whose value evaluates ``receiver`` first and does not read NAME."""
        statement = self.statement
        if receiver is None or statement is None or self.depth or len(statement.body) != 1:
            return None
        assign = statement.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        if not isinstance(target, cst.Name) or statement in self.hoists:
            return None
        node = assign.value
        while node is not receiver:  # the spine evaluated first: callee, value, base
            if isinstance(node, cst.Call):
                node = node.func
            elif isinstance(node, cst.Attribute | cst.Subscript):
                node = node.value
            else:
                return None
        reads = names_read(assign.value)
        return target.value if target.value not in reads else None

    def _note_uses(self, replacement: str, call: SourceCall) -> None:
        scope = self.scopes[-1]
        if "xp." in replacement:
            scope["uses"] = True
            array = call.receiver if call.kind == "method" else (call.args or (None,))[0]
            if array is not None and array.isidentifier() and array not in scope["arrays"]:
                scope["arrays"].append(array)
            elif array is not None:  # ``(x * x).sum(1)``: its names, for a function's xp
                scope.setdefault("mentions", []).extend(names_read_text(array))
        if "xpx." in replacement:
            self.needs_extra = True

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr) -> cst.BaseSmallStatement:
        if isinstance(updated.value, _StatementMarker):
            return cst.parse_statement(updated.value.replacement).body[0]  # type: ignore[attr-defined]
        return updated

    def leave_FunctionDef(
        self, original: cst.FunctionDef, updated: cst.FunctionDef
    ) -> cst.FunctionDef:
        scope = self.scopes.pop()
        if not scope["uses"] or binds_xp(original):
            return updated
        params = [p.name.value for p in original.params.params]
        arrays = [a for a in scope["arrays"] if a in params] or scope["arrays"]
        if not arrays:  # only expressions: the parameters they read
            arrays = list(dict.fromkeys(a for a in scope.get("mentions", []) if a in params))[:1]
        if not arrays:
            return updated
        line = cst.parse_statement(f"xp = array_namespace({', '.join(arrays)})")
        body = list(updated.body.body)  # type: ignore[attr-defined]
        at = 1 if body and is_docstring(body[0]) else 0
        return updated.with_changes(
            body=updated.body.with_changes(body=[*body[:at], line, *body[at:]])
        )


#: libcst's operator classes by the dunder a recorded operator call names
_OPERATOR_NAMES = {
    "Add": "__add__", "Subtract": "__sub__", "Multiply": "__mul__", "Divide": "__truediv__",
    "FloorDivide": "__floordiv__", "Modulo": "__mod__", "Power": "__pow__",
}  # fmt: skip


class _StatementMarker(cst.Name):
    """Carries an assigning rewrite from the call up to its expression statement."""

    def __init__(self, replacement: str, call: cst.Call) -> None:
        super().__init__("__porter_statement__")
        object.__setattr__(self, "replacement", replacement)


def _with_preamble(module: cst.Module, rewriter: _Rewriter, tree: ast.Module,
                   provided: Collection[str] = ()) -> cst.Module:  # fmt: skip
    """Imports of the helpers the rewrites use (unless the cell or, through ``provided``,
    an earlier cell imports them), and ``xp`` for the cell's own level."""
    top = rewriter.scopes[0]
    names = {**collect_imports(tree), **dict.fromkeys(provided, "")}
    lines: list[str] = []
    any_xp = top["uses"] or "xp = array_namespace(" in module.code
    if any_xp and "array_namespace" not in names:
        lines.append(_HELPER_IMPORT)
    if rewriter.needs_extra and "xpx" not in names:
        lines.append(_EXTRA_IMPORT)
    body = list(module.body)
    if top["uses"] and top["arrays"] and not rewriter.binds_xp:
        first = first_line_using(module)
        xp_line = cst.parse_statement(f"xp = array_namespace({top['arrays'][0]})")
        body.insert(first, xp_line)
    at = 1 if body and is_docstring(body[0]) else 0
    while at < len(body) and is_import(body[at]):
        at += 1
    imports = [cst.parse_statement(line) for line in lines]
    rest = body[at:]
    if imports and rest and not is_import(rest[0]) and not rest[0].leading_lines:
        rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=[*body[:at], *imports, *rest])


def rewrite_source(
    source: str,
    *,
    imports: dict[str, str] | None = None,
    arrays: dict[str, str] | None = None,
    version: str = DEFAULT_VERSION,
    only: Collection[tuple[int, int, str]] | None = None,
    operators: Mapping[tuple[int, int, str], tuple[str, str]] | None = None,
    provided: Collection[str] = (),
) -> CellRewrite:
    """The cell's source with every rewrite the source decides applied (see module doc).

    ``imports`` adds names imported elsewhere (earlier cells: local name → module),
    ``arrays`` names a run showed to be arrays (name → library), for parameters;
    ``only`` narrows the rewrite to those sites (``(line, col, name)``, as in the result),
    the others left as written: how a rewrite that does not verify as a whole is narrowed;
    ``operators`` are the operators a run showed to mix dtype kinds (``(line, col, name)``
    → the operands' dtypes, ``("bool", "float32")``): their bool operand is converted;
    ``provided`` names the helpers (``array_namespace``, ``xpx``) an earlier cell imports,
    whose import is then not repeated."""
    tree = ast.parse(source)
    names = collect_imports(tree, dict(imports or {}))
    # lint's columns are ast's (UTF-8 bytes); libcst's and the recorder's count characters
    lines = LINE_BREAK.split(source)
    sites = in_characters(Analyzer(names, standard(version), arrays).run(tree), lines)
    by_key = {_key(s.line, s.col, s.end_line, s.end_col): s for s in sites}
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module)
    rewriter = _Rewriter(by_key, wrapper.module, only, operators, arrays, names)
    rewritten = wrapper.visit(rewriter)
    rewritten = _with_preamble(rewritten, rewriter, tree, provided)
    results = sorted(rewriter.results, key=lambda r: (r.line, r.col))
    return CellRewrite(source, rewritten.code, results)
