"""The scope walker behind `analyse`: names read, bound, written into and handed on.

Each scope of a cell (the module, a class body, a function or lambda, a comprehension)
gets a `Scope`. Ordered scopes (module, class body) run top to bottom once, so they
track which names are surely bound at each point; a function body runs later, so what it
reads from outside counts as read where it was defined.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from porter_ext.replay.aliasing import (
    Roots,
    add_seeds,
    as_kind,
    call_writes,
    merge,
    passed_names,
    reach,
    roots,
    seeds,
)
from porter_ext.replay.ipython_lines import magic_code


class Scope:
    """One scope of the cell: the module, a class body, a function or lambda, a comprehension."""

    def __init__(self, kind: str):
        self.kind = kind
        self.ordered = kind in ("module", "class")  # runs top to bottom, once
        self.definite: set[str] = set()  # surely bound at this point (ordered scopes)
        self.reads: dict[str, None] = {}  # read while maybe unbound (ordered) / read at all
        self.bound: dict[str, set[str]] = {}  # name -> kinds of binding: value, import, def
        self.declared: set[str] = set()  # global / nonlocal
        self.aliases: dict[str, Roots] = {}  # name -> what its object may be related to
        self.writes: dict[str, bool] = {}  # names written into (-> deeply)
        self.passed: dict[str, set[str]] = {}
        self.callables: set[str] = set()  # defs, classes and lambdas bound here
        self.params: set[str] = set()
        #: def name -> (writes into its parameters, callees it hands them to)
        self.functions: dict[str, tuple[bool, set[str]]] = {}
        self.nested_free: set[str] = set()
        self.walrus: dict[str, Roots] = {}  # comprehension: binds in the enclosing scope
        self.deferred: list[tuple[set[str], frozenset[str]]] = []
        self.star_import = False

    def read(self, name: str) -> None:
        if not (self.ordered and name in self.definite):
            self.reads.setdefault(name)

    def bind(self, name: str, kind: str = "value", alias: Roots | None = None) -> None:
        self.definite.add(name)
        self.bound.setdefault(name, set()).add(kind)
        if kind in ("def", "lambda"):
            self.callables.add(name)
        self.relate(name, alias or {})

    def relate(self, name: str, alias: Roots) -> None:
        alias = {k: v for k, v in alias.items() if k != name}
        if alias:
            merge(self.aliases.setdefault(name, {}), alias)

    def unbind(self, name: str) -> None:
        self.definite.discard(name)
        self.bound.get(name, set()).discard("value")

    def free(self) -> set[str]:
        """Names this scope reads from outside itself."""
        if self.ordered:
            return set(self.reads) | self.nested_free
        local = set(self.bound) - self.declared
        return (set(self.reads) | self.nested_free) - local


class Walker:
    """Walks statements and expressions in evaluation order, filling `Scope` s."""

    # -- statements ---------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt], s: Scope) -> None:
        for stmt in stmts:
            self.stmt(stmt, s)

    def stmt(self, node: ast.stmt, s: Scope) -> None:
        """Dispatch to ``visit_<NodeType>``; statements without one only evaluate their
        expressions (Expr, Return, Raise, Assert, Pass, Break, Continue)."""
        _STATEMENTS.get(type(node), Walker.visit_other)(self, node, s)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef, s: Scope) -> None:
        self.exprs([*node.decorator_list, *node.args.defaults, *node.args.kw_defaults], s)
        self.exprs([a.annotation for a in _params(node.args)] + [node.returns], s)
        child = self.function(node.args, s)
        self.body(node.body, child)
        s.functions[node.name] = self.finish(child, s)
        s.bind(node.name, "def")

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef, s: Scope) -> None:
        self.exprs([*node.decorator_list, *node.bases, *(k.value for k in node.keywords)], s)
        child = Scope("class")
        self.body(node.body, child)
        self.finish(child, s)
        s.bind(node.name, "def")

    def visit_Assign(self, node: ast.Assign, s: Scope) -> None:
        self.expr(node.value, s)
        alias = roots(node.value)
        for target in node.targets:
            self.target(target, s, alias)
        (first, *more) = node.targets
        if isinstance(node.value, ast.Lambda) and not more and isinstance(first, ast.Name):
            s.bind(first.id, "lambda")

    def visit_AugAssign(self, node: ast.AugAssign, s: Scope) -> None:
        self.expr(node.value, s)
        if isinstance(node.target, ast.Name):
            s.read(node.target.id)  # x += 1 reads x, and modifies an array in place
            add_seeds(s.writes, {node.target.id: False})
            s.bind(node.target.id, "value", as_kind(roots(node.value), "held"))
        else:
            self.target(node.target, s, roots(node.value))

    def visit_AnnAssign(self, node: ast.AnnAssign, s: Scope) -> None:
        self.exprs([node.annotation, node.value], s)
        if node.value is not None or not isinstance(node.target, ast.Name):
            self.target(node.target, s, roots(node.value))

    def visit_Delete(self, node: ast.Delete, s: Scope) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                s.read(target.id)
                s.unbind(target.id)
            else:
                self.target(target, s, {})

    def visit_For(self, node: ast.For | ast.AsyncFor, s: Scope) -> None:
        self.expr(node.iter, s)
        before = set(s.definite)
        self.target(node.target, s, as_kind(roots(node.iter), "element"))
        self.body(node.body + node.orelse, s)
        s.definite = before  # the loop may not run at all

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While, s: Scope) -> None:
        self.expr(node.test, s)
        before = set(s.definite)
        self.body(node.body + node.orelse, s)
        s.definite = before

    def visit_If(self, node: ast.If, s: Scope) -> None:
        self.expr(node.test, s)
        self.branches(s, [node.body, node.orelse])

    def visit_With(self, node: ast.With | ast.AsyncWith, s: Scope) -> None:
        for item in node.items:
            self.expr(item.context_expr, s)
            if item.optional_vars is not None:
                self.target(item.optional_vars, s, roots(item.context_expr))
        self.body(node.body, s)

    visit_AsyncWith = visit_With

    def visit_Try(self, node: ast.Try, s: Scope) -> None:
        self.try_(node, s)

    visit_TryStar = visit_Try

    def visit_Match(self, node: ast.Match, s: Scope) -> None:
        self.expr(node.subject, s)
        self.match(node, s, as_kind(roots(node.subject), "element"))

    def visit_Import(self, node: ast.Import | ast.ImportFrom, s: Scope) -> None:
        for alias in node.names:
            if alias.name == "*":
                s.star_import = True
            else:
                s.bind(alias.asname or alias.name.partition(".")[0], "import")

    visit_ImportFrom = visit_Import

    def visit_Global(self, node: ast.Global | ast.Nonlocal, s: Scope) -> None:
        s.declared.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_other(self, node: ast.stmt, s: Scope) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child, s)

    def branches(self, s: Scope, bodies: list[list[ast.stmt]]) -> None:
        """Run alternative bodies; afterwards only what every one of them bound is sure."""
        before, after = set(s.definite), None
        for stmts in bodies:
            s.definite = set(before)
            self.body(stmts, s)
            after = s.definite if after is None else after & s.definite
        s.definite = before | (after or set())

    def try_(self, node: ast.Try, s: Scope) -> None:
        before = set(s.definite)
        self.body(node.body + node.orelse, s)
        ends = [s.definite]
        for handler in node.handlers:
            s.definite = set(before)
            self.expr(handler.type, s)
            if handler.name:
                s.bind(handler.name, "except")
            self.body(handler.body, s)
            ends.append(s.definite)
        s.definite = set.intersection(*ends)
        self.body(node.finalbody, s)

    def match(self, node: ast.Match, s: Scope, alias: Roots) -> None:
        before = set(s.definite)
        for case in node.cases:
            s.definite = set(before)
            for sub in ast.walk(case.pattern):
                if isinstance(sub, ast.MatchValue):
                    self.expr(sub.value, s)
                elif isinstance(sub, ast.MatchClass):
                    self.expr(sub.cls, s)
                name = getattr(sub, "name", None) or getattr(sub, "rest", None)
                if isinstance(name, str):
                    s.bind(name, "value", alias)
            self.expr(case.guard, s)
            self.body(case.body, s)
        s.definite = before

    def target(self, node: ast.expr, s: Scope, alias: Roots) -> None:
        """A store: binds a name, or writes into an object (``x[0] = v``, ``x.a = v``)."""
        if isinstance(node, ast.Name):
            s.bind(node.id, "value", alias)
        elif isinstance(node, ast.Tuple | ast.List):
            for elt in node.elts:  # unpacked: each is a part of the value
                self.target(elt, s, as_kind(alias, "element"))
        elif isinstance(node, ast.Starred):
            self.target(node.value, s, alias)
        elif isinstance(node, ast.Subscript | ast.Attribute):
            self.expr(node.value, s)
            if isinstance(node, ast.Subscript):
                self.expr(node.slice, s)
            add_seeds(s.writes, seeds(node.value))
            for name in roots(node.value):  # the container now holds the value too
                s.relate(name, as_kind(alias, "held"))

    # -- expressions --------------------------------------------------------------------
    def exprs(self, nodes: Iterable[ast.expr | None], s: Scope) -> None:
        for node in nodes:
            self.expr(node, s)

    def expr(self, node: ast.expr | None, s: Scope) -> None:
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Load:  # type: ignore[union-attr]
                s.read(node.id)  # type: ignore[union-attr]
        elif kind is ast.Attribute:
            self.expr(node.value, s)  # type: ignore[union-attr]
        elif kind is ast.Constant or node is None:
            return
        elif kind is ast.BinOp:
            self.exprs([node.left, node.right], s)  # type: ignore[union-attr]
        elif isinstance(node, ast.NamedExpr):
            self.expr(node.value, s)
            if s.kind == "comprehension":
                merge(s.walrus.setdefault(node.target.id, {}), roots(node.value))
            else:
                s.bind(node.target.id, "value", roots(node.value))
        elif isinstance(node, ast.Lambda):
            self.exprs([*node.args.defaults, *node.args.kw_defaults], s)
            child = self.function(node.args, s)
            self.expr(node.body, child)
            self.finish(child, s)
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            self.comprehension(node, s)
        elif isinstance(node, ast.Call):
            self.expr(node.func, s)
            self.exprs(node.args, s)
            self.exprs([k.value for k in node.keywords], s)
            add_seeds(s.writes, call_writes(node))
            if isinstance(node.func, ast.Name):
                s.passed.setdefault(node.func.id, set()).update(passed_names(node))
            found = magic_code(node)
            if found is not None and found[1]:
                self.body(found[0], s)
            elif found is not None:
                # %timeit runs its code now, top to bottom, in a namespace of its own that
                # reads the cell's: as a class body does
                child = Scope("class")
                self.body(found[0], child)
                self.finish(child, s)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.expr(child, s)

    def comprehension(self, node: ast.expr, s: Scope) -> None:
        gens = node.generators  # type: ignore[attr-defined]
        self.expr(gens[0].iter, s)  # the first iterable is evaluated outside
        child = Scope("comprehension")
        for i, gen in enumerate(gens):
            if i:
                self.expr(gen.iter, child)
            self.target(gen.target, child, as_kind(roots(gen.iter), "element"))
            self.exprs(gen.ifs, child)
        if isinstance(node, ast.DictComp):
            self.exprs([node.key, node.value], child)
        else:
            self.expr(node.elt, child)  # type: ignore[attr-defined]
        self.finish(child, s)

    def function(self, args: ast.arguments, parent: Scope) -> Scope:
        child = Scope("function")
        for arg in _params(args):
            child.bind(arg.arg, "param")
            child.params.add(arg.arg)
        return child

    def finish(self, child: Scope, parent: Scope) -> tuple[bool, set[str]]:
        """Hand what a nested scope reads, writes and passes on to its parent. For a
        function: whether it writes into its parameters, and whom it hands them to."""
        for callee, names in child.passed.items():
            if callee in child.callables:  # a function defined in there may modify them
                add_seeds(child.writes, dict.fromkeys(names, True))
        free = child.free()
        reached = reach(child.writes, child.aliases)
        local = set(child.bound) - child.declared  # a row of `rows` is not local: rows is
        add_seeds(parent.writes, {n: deep for n, deep in reached.items() if n not in local})
        hands: set[str] = set()
        writes_params = bool(child.params & set(reached))
        for callee, names in child.passed.items():
            handed = set(reach(dict.fromkeys(names, True), child.aliases))
            if handed & child.params:
                hands.add(callee)
                # a callee that is itself a parameter or a local value is unknown here
                writes_params |= callee in local and callee not in child.callables
            if handed - local and callee in free:
                parent.passed.setdefault(callee, set()).update(handed - local)
        # a function body runs later: what it reads counts as read where it was defined;
        # a class body or a comprehension runs here and now, its functions later
        now = set() if child.kind == "function" else free & set(child.reads)
        later = free if child.kind == "function" else free & child.nested_free
        for name in sorted(now):
            parent.read(name)
        if parent.kind == "module":
            parent.deferred.append((later, frozenset(parent.definite)))
        else:
            parent.nested_free |= later
        for name, alias in child.walrus.items():
            if parent.kind == "comprehension":
                merge(parent.walrus.setdefault(name, {}), alias)
            else:
                parent.bind(name, "value", alias)
        return writes_params, hands


def _params(args: ast.arguments) -> list[ast.arg]:
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return found + [a for a in (args.vararg, args.kwarg) if a is not None]


#: statement type → its visitor (looked up once per statement, not through getattr)
_STATEMENTS = {
    getattr(ast, name[len("visit_") :]): method
    for name, method in vars(Walker).items()
    if name.startswith("visit_") and hasattr(ast, name[len("visit_") :])
}
