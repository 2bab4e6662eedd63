"""Where a rewritten cell binds ``xp``: the part of the codemod (`porter_ext.fix.codemod`)
that keeps track of the arrays each scope's rewrites read, so that
``xp = array_namespace(...)`` is taken from an array that exists where ``xp`` is first
used.

- In a function, from a parameter the rewrites read as an array (or one the function
  passes to the library's own calls, or an array of the cell that the function does not
  bind itself), at the top of its body; a function whose
  rewrites read only arrays it makes itself is left as written, with that reason, since an
  ``xp`` at its top would read a name not bound yet.
- In a cell, before the first rewritten statement, from that site's array; where it is
  not a name (``x = lib.linspace(...).reshape(3, 4)``), the creation call is split off
  into the statement's own target (``_hoist``), or an earlier cell's array of the same
  library gives ``xp``.
- Nowhere for a scope whose rewrites through ``xp`` read arrays of two libraries (NumPy
  arrays beside torch tensors, as the run showed them): one ``xp`` serves one library, and
  replays, which move every input to one backend, never run such a cell mixed. Those
  sites are named in ``mixed``, with that reason, and the cell is rewritten again with
  them left as written (`porter_ext.fix.rewrite.rewrite_source`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

import libcst as cst
import libcst.matchers as m
from libcst.metadata import CodeRange, PositionProvider, Scope, ScopeProvider

from porter_ext.backends import LIBRARIES
from porter_ext.fix.cellscope import (
    ReplaceFirst,
    bare,
    binds_xp,
    is_docstring,
    names_assigned,
    names_bound,
    names_read,
    names_read_text,
    operand_names,
    operand_names_text,
    within,
)
from porter_ext.fix.source import ARRAY_USES
from porter_ext.spec.rewrites import SourceCall

__all__ = ["XpBinding"]

#: where a run saw a call: ``(line, col, name)``, as the recorder gives it
_Key = tuple[int, int, str]

_NO_PARAMETER = (
    "left as written with the rest of {name}: its rewrites read no parameter and no array "
    "of an earlier cell (only arrays it makes itself), so xp = array_namespace(...) at its "
    "top would read a name not bound yet"
)
_MIXED = (
    "left as written: {scope} mixes {libraries} arrays{names}, and one "
    "xp = array_namespace(...) serves only one library; port one library's arrays first"
)


class XpBinding(cst.CSTTransformer):
    """The scopes of a cell (the cell, then each function) and the arrays their rewrites
    read; subclasses record results in ``self.results`` (the report's
    `porter_ext.model.entries.RewriteSiteEntry`). What the cell binds is libcst's
    ``ScopeProvider``'s, over the cell as written."""

    METADATA_DEPENDENCIES = (ScopeProvider, PositionProvider)

    def __init__(
        self,
        module: cst.Module,
        arrays: dict[str, str],
        others: Collection[str] = (),
        seen: Mapping[_Key, str] | None = None,
    ) -> None:
        """``seen``: the library of each call the run saw (`RunKnowledge`'s ``results``
        and ``receivers``); those of array libraries tell what a site's array is."""
        super().__init__()
        self.module = module
        self.results: list = []
        #: function nesting: one dict per scope; the cell is the outermost
        self.scopes: list[dict] = [_scope(None)]
        #: the cell-level statement being visited, and the one whose first-evaluated array
        #: is split off into its own assignment (`_hoist`): statement → (name, receiver)
        self.statement: cst.SimpleStatementLine | None = None
        self.depth = 0
        self.hoists: dict[cst.SimpleStatementLine, tuple[str, cst.BaseExpression]] = {}
        #: the cell binds xp itself at its top level (then no xp line is added), and the
        #: names it assigns anywhere; both read when the cell is visited (`visit_Module`)
        self.binds_xp = False
        self.assigned: set[str] = set()
        #: the names the cell reads at its top level (an earlier array among them is the
        #: one ``xp`` is taken from first)
        self.cell_reads: set[str] = set()
        #: every scope of the cell, as libcst's ScopeProvider finds them
        self.cell_scopes: list[Scope] = []
        #: arrays of earlier cells (name → library), for an xp taken from one of them
        self.arrays = arrays
        #: the libraries of the earlier cells' arrays the cell reads (its array inputs)
        self.input_libraries: set[str] = set()
        #: the cell's names the run showed to hold something other than an array
        self.others = frozenset(others)
        self.site_libraries: tuple[str, ...] = ()
        #: the array library the run saw at each call, by ``(line, col, last name)`` (not
        #: a builtin's ``abs(x)``, whose array is any library's)
        self.seen = {
            (line, col, name.rpartition(".")[2]): lib
            for (line, col, name), lib in (seen or {}).items()
            if lib in LIBRARIES
        }
        #: the sites through ``xp`` of scopes that mix libraries, or of functions with no
        #: array to take ``xp`` from → why they stay as written
        self.mixed: dict[_Key, str] = {}
        #: names the rewrites give as a sequence of arrays (``xp.stack(batch)``): ``xp``
        #: is taken from their elements (``array_namespace(*batch)``), not from the list
        self.sequences: set[str] = set()
        #: the cell's ``xp`` is taken from an earlier cell's array it does not read
        #: (no array of its own is at hand where its first rewrite needs one)
        self.xp_from_earlier = False

    # -- statements and scopes -----------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        scopes = self.metadata[ScopeProvider].values()
        self.cell_scopes = list(dict.fromkeys(s for s in scopes if s is not None))
        top = self.get_metadata(ScopeProvider, node)
        self.binds_xp = binds_xp([top])
        self.assigned = names_assigned(self.cell_scopes)
        read = {a.node.value for a in top.accesses if isinstance(a.node, cst.Name)}
        self.cell_reads = read
        self.input_libraries = {
            self.arrays[n] for n in read if n in self.arrays and n not in self.assigned
        }

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if self.depth == 0:
            self.statement = node

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.depth += 1

    def leave_IndentedBlock(
        self, original: cst.IndentedBlock, updated: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        self.depth -= 1
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = _scope(len(self.results))
        inner = within(self.get_metadata(ScopeProvider, node.body), self.cell_scopes)
        scope["local"] = names_bound(inner)
        self.scopes.append(scope)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        self._mixes(self.scopes[0], "this cell")
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
            [cst.Assign([cst.AssignTarget(cst.Name(name))], bare(receiver))],
            leading_lines=updated.leading_lines,
        )
        rest = updated.visit(ReplaceFirst(receiver, cst.Name(name)))
        return cst.FlattenSentinel([first, rest.with_changes(leading_lines=[])])

    def leave_FunctionDef(
        self, original: cst.FunctionDef, updated: cst.FunctionDef
    ) -> cst.FunctionDef:
        scope = self.scopes.pop()
        if not scope["uses"] or self._mixes(scope, original.name.value):
            return updated
        inner = within(self.get_metadata(ScopeProvider, original.body), self.cell_scopes)
        if binds_xp(inner):  # the function's own, or one inside it
            return updated
        params = [p.name.value for p in original.params.params]
        params += [p.name.value for p in original.params.posonly_params]
        params += [p.name.value for p in original.params.kwonly_params]
        arrays = [a for a in scope["arrays"] if a in params]
        if not arrays:  # only expressions: the parameters they read
            arrays = list(dict.fromkeys(a for a in scope.get("mentions", []) if a in params))
        if not arrays:  # the parameters its other array calls take (``torch.softmax(z)``)
            arrays = [a for a in scope.get("seen", []) if a in params]
        if not arrays:  # a parameter whose shape, dtype, ... it reads (``b, n = x.shape``)
            arrays = _attributes_read(original.body, params)
        if not arrays:  # a parameter its arrays are computed from (``s = x * 2``)
            read = [*scope["arrays"], *scope.get("mentions", []), *scope.get("seen", [])]
            arrays = _computed_from(original.body, read, params)
        if not arrays:  # the cell's arrays, which the function does not bind itself
            local = names_assigned(inner)
            arrays = [a for a in scope["arrays"] if a not in local]
        if not arrays:  # an earlier cell's array the function reads (a global: ``C[x]``)
            arrays = self._globals_read(inner, scope, names_bound(inner) | set(params))
        if not arrays:  # a parameter passed to the calls its arrays come from
            # (``keys = self.W_key(x)``, ``torch.cat([head(x) for head in self.heads])``):
            # a guess the replays judge (one that is no array fails on the original)
            read = [*scope["arrays"], *scope.get("mentions", []), *scope.get("reads", [])]
            arrays = _computed_from(original.body, read, params, through_calls=True)
        if not arrays:
            self._leave_as_written(scope["first"], original.name.value)
            return original
        line = cst.parse_statement(f"xp = array_namespace({self.xp_argument(arrays[0])})")
        body = list(updated.body.body)  # type: ignore[attr-defined]
        at = 1 if body and is_docstring(body[0]) else 0
        return updated.with_changes(
            body=updated.body.with_changes(body=[*body[:at], line, *body[at:]])
        )

    def _globals_read(self, inner: list[Scope], scope: dict, bound: set[str]) -> list:
        """The earlier cells' arrays (`arrays`) that a function (its scopes ``inner``)
        reads and does not bind (``bound``), of its rewrites' library where the run told
        it: there whenever it is called, as the notebook's names are (a later rebinding
        is verified at that call)."""
        libraries = set(scope["libraries"]) or set(self.arrays.values())
        read = sorted(
            (a.node for s in inner for a in s.accesses if isinstance(a.node, cst.Name)),
            key=lambda n: _start(self.get_metadata(PositionProvider, n)),
        )
        names = (n.value for n in read)
        return list(
            dict.fromkeys(n for n in names if n not in bound and self.arrays.get(n) in libraries)
        )

    def _leave_as_written(self, first: int, name: str) -> None:
        """The function is kept as written: its sites' rewrites are not applied. Those
        through ``xp`` are named in ``mixed``, so that a second pass writes the others
        (``torch.ones(n, n)`` → ``torch.ones((n, n))``)."""
        why = _NO_PARAMETER.format(name=name)
        for index in range(first, len(self.results)):
            site = self.results[index]
            if site.replacement is not None:
                self.results[index] = replace(site, replacement=None, reason=why)
                if "xp." in site.replacement:
                    self.mixed[(site.line, site.col, site.name)] = why

    # -- scopes of two libraries -----------------------------------------------------
    def _note_libraries(self, names: list[str]) -> None:
        """The libraries the site just recorded (the last of ``self.results``, a rewrite
        through ``xp``) reads, of its array's ``names``: the one the run saw at the call,
        or where the run saw none, those of the cell's names the run showed to be arrays
        (not a function's own: its parameter or local ``r`` is not the cell's ``r``)."""
        site = self.results[-1]
        scope = self.scopes[-1]
        scope["sites"].append(len(self.results) - 1)
        libraries = scope["libraries"]
        seen = self.seen.get((site.line, site.col, site.name.rpartition(".")[2]))
        if seen is not None:
            libraries.setdefault(seen, [])
        local = set().union(*(s["local"] for s in self.scopes))
        for name in names:
            library = seen or (self.arrays.get(name) if name not in local else None)
            if library is not None and name not in libraries.setdefault(library, []):
                libraries[library].append(name)

    def _mixes(self, scope: dict, name: str) -> bool:
        """Whether the scope's rewrites through ``xp`` read arrays of more than one
        library; then its sites through ``xp`` are named in ``mixed``, with why."""
        libraries = scope["libraries"]
        if len(libraries) < 2:
            return False
        *most, last = libraries
        names = list(dict.fromkeys(n for found in libraries.values() for n in found))
        why = _MIXED.format(
            scope=name,
            libraries=f"{', '.join(most)} and {last}",
            names=f" ({', '.join(names)})" if names else "",
        )
        for index in scope["sites"]:
            site = self.results[index]
            self.mixed[(site.line, site.col, site.name)] = why
        return True

    # -- the cell's xp -------------------------------------------------------------------
    def unbound_xp(
        self, replacement: str, call: SourceCall, original: cst.CSTNode, updated: cst.CSTNode
    ) -> str | None:
        """Why ``xp`` could not be bound for this rewrite at the cell's level (None: it can).

        The first use of ``xp`` in a cell needs an array to take the namespace from. When
        the call's array is not a name (``x = lib.linspace(...).reshape(3, 4)``), the array
        is split off into the statement's own target (`_hoist`), which the creation call
        in the library's own namespace (the legitimate entry point) binds first."""
        scope = self.scopes[-1]
        if len(self.scopes) > 1 or "xp." not in replacement or self.binds_xp:
            return None
        array = _array_text(call)
        if scope["arrays"] or self._named_array(array):
            return None
        name = self._hoist(_array_node(call, original))
        if name is None:
            # a list's call through xp (``xp.asin(x)`` of ``x = [-1, 0, 1]``) runs on
            # NumPy alone, whichever array xp came from: no earlier array makes it portable
            if array in self.others:
                return (
                    f"{array} is not an array (the run saw another object), so xp cannot be "
                    f"taken from it: make it one first (np.asarray({array}) or its library's)"
                )
            earlier = self.earlier_array(self.site_libraries)
            if earlier is not None:
                scope["arrays"].append(earlier)
                self.xp_from_earlier = True
                return None
            return (
                "no array is bound to a name before it to take xp from: assign the "
                "array to a name first"
            )
        self.hoists[self.statement] = (name, _array_node(call, updated))  # type: ignore[index]
        scope["arrays"].append(name)
        return None

    def _named_array(self, text: str | None) -> bool:
        """A name xp can be taken from: not one the run showed to hold something else
        (``x = [-1, 0, 1]; np.arcsin(x)``: array_namespace(x) raises on a list)."""
        if text is None or not text.isidentifier():
            return False
        return len(self.scopes) > 1 or text not in self.others

    def earlier_array(self, libraries: Collection[str]) -> str | None:
        """An array of the site's library that an earlier cell bound (the run's
        ``arrays``) and this cell does not rebind: there before the cell's first line.
        One the cell reads first (``zip(Xtr[:20], Ytr[:20])``: Xtr), which its replays
        have."""
        found = [n for n, lib in self.arrays.items() if lib in libraries and n not in self.assigned]
        return next((n for n in found if n in self.cell_reads), found[0] if found else None)

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

    def note_array(self, call: SourceCall) -> None:
        """A site's array, whether its call is rewritten or not: a parameter passed to
        the library's own calls is one ``xp`` can be taken from."""
        array = _array_text(call)
        if array is not None and array.isidentifier():
            self.scopes[-1].setdefault("seen", []).append(array)

    def xp_argument(self, name: str) -> str:
        """What ``array_namespace`` is given for the array ``name``: its elements where the
        rewrites give it as a sequence of arrays."""
        return f"*{name}" if name in self.sequences else name

    def note_uses(self, replacement: str, call: SourceCall) -> None:
        scope = self.scopes[-1]
        if "xp." not in replacement:
            return
        scope["uses"] = True
        array = _array_text(call)
        if replacement.startswith(_OF_SEQUENCES) and array is not None and array.isidentifier():
            self.sequences.add(array)
        if self._named_array(array) and array not in scope["arrays"]:
            scope["arrays"].append(array)
        elif array is not None:  # ``(x * x).sum(1)``: its names, for a function's xp
            scope.setdefault("mentions", []).extend(operand_names_text(array))
            scope.setdefault("reads", []).extend(operand_names_text(array, passed=True))
        self._note_libraries(self._array_names(array))

    def _array_names(self, array: str | None) -> list[str]:
        """The names of a site's array: itself where it is a name (a function's parameter
        too), else those it reads that the run showed to be arrays (``(a * 2).sum(0)``)."""
        if array is None or array.isidentifier():
            return [array] if array else []
        return [n for n in names_read_text(array) if n in self.arrays]

    def note_casts(self, operands: list[str], expressions: Sequence[str] = ()) -> None:
        """A converted operand (``xp.astype(x > 0, xp.float32) * r``), the site just
        recorded: ``operands`` are the arrays beside it, names ``xp`` can be taken from;
        ``expressions`` the operands that are no names (``1.0 / values[i]``), whose names
        a function's ``xp`` can be taken from (its parameter ``values``)."""
        scope = self.scopes[-1]
        scope["uses"] = True
        for operand in operands:
            if operand not in scope["arrays"]:
                scope["arrays"].append(operand)
        for expression in expressions:
            scope.setdefault("mentions", []).extend(operand_names_text(expression))
        self._note_libraries(operands)


#: the standard's functions that take a sequence of arrays as their first argument
_OF_SEQUENCES = ("xp.stack(", "xp.concat(")


def _scope(first: int | None) -> dict:
    """A scope's record: whether its rewrites use ``xp`` and the arrays they read (names
    ``xp`` can be taken from); ``first``, the index of its first site in ``results``;
    ``sites``, those of its sites that go through ``xp``; ``libraries``, the libraries those
    read (→ their arrays' names); ``local``, the names a function binds itself."""
    return {
        "uses": False,
        "arrays": [],
        "first": first,
        "sites": [],
        "libraries": {},
        "local": set(),
    }


def _attributes_read(body: cst.BaseSuite, params: list[str]) -> list[str]:
    """The ``params`` whose attributes only arrays have (`ARRAY_USES`: ``x.shape``,
    ``x.dtype``) the function's ``body`` reads, in order."""
    found = m.findall(body, m.Attribute(value=m.Name(), attr=m.Name()))
    return list(
        dict.fromkeys(
            a.value.value  # type: ignore[attr-defined]
            for a in found
            if a.value.value in params and a.attr.value in ARRAY_USES  # type: ignore[attr-defined]
        )
    )


def _computed_from(
    body: cst.BaseSuite, arrays: list[str], params: list[str], through_calls: bool = False
) -> list[str]:
    """The ``params`` that the function's local ``arrays`` are computed from, through
    its plain assignments (``s = x * 2``; ``t = s.sum(0)``): the operands of each value
    (every name it reads, a call's arguments too, ``through_calls``), followed back a
    few assignments."""
    sources: dict[str, list[str]] = {}
    for assign in m.findall(body, m.Assign(targets=[m.AssignTarget(target=m.Name())])):
        name = assign.targets[0].target.value  # type: ignore[attr-defined]
        read = operand_names(assign.value, passed=through_calls)  # type: ignore[attr-defined]
        sources.setdefault(name, []).extend(read)
    found: list[str] = []
    todo, seen = list(arrays), set()
    while todo and len(seen) < 64:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in params:
            found.append(name)
        todo.extend(sources.get(name, []))
    return list(dict.fromkeys(found))


def _start(where: CodeRange) -> tuple[int, int]:
    return (where.start.line, where.start.column)


def _array_text(call: SourceCall) -> str | None:
    """The source of the call's array: a method's or attribute's receiver, operand 0."""
    return call.receiver if call.kind != "function" else (call.args or (None,))[0]


def _array_node(call: SourceCall, node: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(node, cst.Attribute):
        return node.value
    if not isinstance(node, cst.Call):
        return None
    if call.kind == "method":
        return node.func.value  # type: ignore[attr-defined]
    return node.args[0].value if node.args else None
