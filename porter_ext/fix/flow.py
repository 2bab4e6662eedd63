"""What a name is at each use: the statements walked once, in order, each binding in force
from where it is written on (`porter_ext.fix.checks` judges calls on top of this).

- **Straight-line code** and notebook cells, in order: ``X = []`` then ``X.append(...)``
  then ``X = torch.tensor(X)``: ``X`` is a list where it is appended to.
- **Where paths join** (after ``if``/``else``, ``match``, ``try``, a loop) a name is an
  array only when it is the same array on every path: porter judges what is certainly an
  array and never guesses (a name that may be a list or a tensor is left alone; a run with
  ``%%port`` tells). A path that does not bind the name does not count (using it there
  raises).
- **Loops**: the body sees what the previous iteration left. The body is walked again
  when a name read before the body rebinds it changes over an iteration (at most three
  walks, the last with such names unknown; all second walks together at most as long as
  the first walk, so the cost stays linear).
- **Functions**: parameters are unknown (or what a run showed them to be); a name of an
  enclosing scope is what it is where the function is defined joined with every value it
  is given later (the function may be called at any later point). A module-level
  function is walked where it is defined, assuming nothing it reads changes later; when
  something does (a later assignment or import), the function is parsed again from its
  source lines and walked once more at the end, so a big file never has to be held as one
  syntax tree. Functions nested in functions are walked at the end of the enclosing one.
  A name a function reads before binding it is looked up outside (Python would raise).
- Lambdas and comprehensions are judged where they are written, in the scope around them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from porter_ext.fix.paths import Paths
from porter_ext.fix.scopes import (
    MISSING,
    UNBOUND,
    Frame,
    Function,
    Record,
    bound_names,
    reparse,
)
from porter_ext.fix.source import NAMESPACE, SourceModel
from porter_ext.fix.static import (
    PYTHON_TYPES,
    UNKNOWN,
    ArrayValue,
    NamedValue,
    collect_imports,
)
from porter_ext.spec.standard import Standard

__all__ = ["FlowModel"]

_OPERATORS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


class FlowModel(Paths, SourceModel):
    """`SourceModel` whose names follow the flow of the statements (see the module doc)."""

    def __init__(
        self, imports: dict[str, str], std: Standard, arrays: dict[str, str] | None = None
    ) -> None:
        SourceModel.__init__(self, imports, std, arrays)
        Paths.__init__(self)
        self.module = Frame("module", None)
        self.module.env.update(self.hints)
        self.frame = self.module
        self.sites: list = []
        self.lines: Sequence[str] | None = None
        self.records: list[Record] = []
        self.record: Record | None = None  # the module-level function being walked
        self.functions: list[Function | None] = [None]  # the functions being walked
        self._methods: dict[type, Callable[[ast.AST], None]] = {}

    # -- driving ----------------------------------------------------------------------
    def feed(
        self,
        tree: ast.Module,
        sites: list,
        lines: Sequence[str] | None = None,
        spliced: Sequence[tuple[int, Callable[[], None]]] = (),
    ) -> None:
        """Walk one piece of the module (a cell, a part of a big file) after the earlier
        ones; its findings go to ``sites``. ``lines`` (the source's lines, ``lines[n - 1]``
        its line n, ``line_offset`` lines before the tree's first) let a function be
        parsed again instead of keeping its tree. ``spliced``: module-level statements
        cut out of the tree (`porter_ext.fix.repeated`), each ``(line, walk)`` walked at
        its line of the tree, in order."""
        self.sites, self.lines = sites, lines
        if not spliced:
            self._body(tree.body)
            return
        body = tree.body
        self.walked += len(body) + len(spliced)
        at = 0
        for line, walk in spliced:
            while at < len(body) and body[at].lineno < line:
                self.visit(body[at])
                at += 1
            walk()
        for statement in body[at:]:
            self.visit(statement)

    def run(self, tree: ast.Module) -> list:
        """The findings of one module."""
        sites: list = []
        self.feed(tree, sites)
        self.finish()
        return sites

    def finish(self) -> None:
        """Walk again the module-level functions whose assumptions a later line broke."""
        failed = self.failing()
        dropped: dict[int, tuple[list, set[int]]] = {}
        for record in failed:
            _, indices = dropped.setdefault(id(record.sites), (record.sites, set()))
            indices.update(range(record.start, record.end))
        for sites, indices in dropped.values():
            sites[:] = [site for i, site in enumerate(sites) if i not in indices]
        for record in failed:
            self.rewalk(record, record.sites)

    def failing(self) -> list[Record]:
        """The module-level functions whose assumptions a later line broke, at the end of
        the module (its walk is over: the records are let go)."""
        failed = [record for record in self.records if not self._holds(record)]
        self.records = []
        return failed

    def rewalk(self, record: Record, sites: list) -> None:
        """Walk a failed function again, seeing the module's names as they ended; its
        findings go to ``sites``."""
        if record.node is not None:
            node, offset = record.node, 0
        else:
            node, offset = reparse(record.text or "", record.where)
        saved = self.line_offset
        self.sites, self.frame, self.line_offset = sites, self.module, offset
        try:
            self._walk_function(node, self.module, record.step)  # type: ignore[arg-type]
        finally:
            self.line_offset = saved

    def _holds(self, record: Record) -> bool:
        module = self.module
        for name, value in record.names.items():
            now = module.seen_from(record.step, name)
            if now is MISSING or now is UNBOUND:
                now = None
            if now != value:
                return False
        return all(self.imports.get(name) == m for name, m in record.imports.items())

    # -- names ------------------------------------------------------------------------
    def lookup(self, name: str) -> object:
        frame: Frame | None = self.frame
        step: int | None = None
        crossed = False
        while frame is not None:
            if step is None:
                value = frame.env.get(name, MISSING)
                if crossed and frame.kind == "module" and self.record is not None:
                    self.record.names.setdefault(name, None if value is MISSING else value)
                if value is not MISSING:
                    if frame.loops:
                        self._read(frame, name)
                    return value
            else:
                value = frame.seen_from(step, name)
                if value is not MISSING and value is not UNBOUND:
                    return value
            if frame.kind == "function":
                crossed, step = True, frame.view
            frame = frame.parent
        return None

    def _imported(self, name: str) -> str | None:
        module = self.imports.get(name)
        if self.record is not None:
            self.record.imports.setdefault(name, module)
        return module

    def dotted_of(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            # a local binding shadows the import
            return self._imported(node.id) if self.lookup(node.id) is None else None
        return super().dotted_of(node)

    def value_of(self, node: ast.expr) -> object:
        """As `SourceModel.value_of`, a name looked up once."""
        if not isinstance(node, ast.Name):
            return super().value_of(node)
        value = self.lookup(node.id)
        if value is not None:
            return value if isinstance(value, ArrayValue) else UNKNOWN
        if node.id in PYTHON_TYPES:
            return PYTHON_TYPES[node.id]
        module = self._imported(node.id)
        return UNKNOWN if module is None else NamedValue(module.rpartition(".")[2])

    @staticmethod
    def _read(frame: Frame, name: str) -> None:
        for loop in reversed(frame.loops):
            if name in loop.assigned:
                return
            loop.reads.add(name)

    def _value(self, node: ast.expr) -> object:
        value = self.array_of(node)
        return UNKNOWN if value is None else value

    def _bind_target(self, target: ast.expr, node: ast.expr | None, value: object) -> None:
        """Bind ``target`` to ``value`` (what ``node`` is); tuples element by element."""
        if isinstance(target, ast.Name):
            self.assign(target.id, value)
        elif isinstance(target, ast.Tuple | ast.List):
            elts = node.elts if isinstance(node, ast.Tuple | ast.List) else None
            if (
                elts is not None
                and len(elts) == len(target.elts)
                and not any(isinstance(e, ast.Starred) for e in (*elts, *target.elts))
            ):
                values = [self._value(e) for e in elts]  # all before any binding: a, b = b, a
                for t, e, v in zip(target.elts, elts, values, strict=True):
                    self._bind_target(t, e, v)
            else:
                for t in target.elts:
                    self._bind_target(t, None, UNKNOWN)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None, UNKNOWN)

    # -- walking ----------------------------------------------------------------------
    def visit(self, node: ast.AST) -> None:
        method = self._methods.get(node.__class__)
        if method is None:
            method = getattr(self, "visit_" + node.__class__.__name__, self.generic_visit)
            self._methods[node.__class__] = method
        method(node)

    def generic_visit(self, node: ast.AST) -> None:
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST) and not isinstance(value, _OPERATORS):
                self.visit(value)

    def visit_Name(self, node: ast.Name) -> None:
        """A leaf has nothing below it to walk (a name is looked up where the expression
        holding it is judged); skipping `generic_visit` here keeps the walk linear."""

    visit_Constant = visit_Name

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        value = self._value(node.value)
        for target in node.targets:
            self.visit(target)
            self._bind_target(target, node.value, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.annotation)
        self.visit(node.target)
        if node.value is not None:
            self._bind_target(node.target, node.value, self._value(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self.visit(node.target)
        if isinstance(node.target, ast.Name):
            value = self._array(node.target) or self._array(node.value)
            self.assign(node.target.id, UNKNOWN if value is None else value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.assign(node.target.id, self._value(node.value))

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self.visit(target)
            if isinstance(target, ast.Name):
                self.assign(target.id, UNBOUND)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        collect_imports(node, self.imports)

    visit_ImportFrom = visit_Import

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit(item.optional_vars)
                self._bind_target(item.optional_vars, None, UNKNOWN)
        self._body(node.body)

    visit_AsyncWith = visit_With

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)

        def head() -> None:
            self.visit(node.target)
            self._bind_target(node.target, None, UNKNOWN)

        self._loop(head, node.body)
        self._body(node.orelse)

    visit_AsyncFor = visit_For

    # -- scopes -----------------------------------------------------------------------
    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.visit(default)
        self.assign(node.name, UNKNOWN)
        owner = self.frame
        while owner.kind in ("class", "local"):
            owner = owner.parent  # type: ignore[assignment]
        if owner.history is None:
            self.step += 1
            owner.history = {n: ([self.step], [v]) for n, v in owner.env.items()}
        self.step += 1
        if owner.kind != "module" or self.record is not None:
            owner.deferred.append((node, self.step))
            return
        record = Record(node, self.lines, self.step, self.sites, self.line_offset)
        self.record = record
        saved = self.frame
        try:
            self._walk_function(node, owner, None)
        finally:
            self.record, self.frame = None, saved
        record.end = len(self.sites)
        self.records.append(record)

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def _walk_function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, parent: Frame, view: int | None
    ) -> None:
        args = node.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        frame = Frame("function", parent, view)
        for p in params:
            frame.env[p] = NAMESPACE if p == "xp" else self.hints.get(p, UNKNOWN)
        saved = self.frame
        self.frame = frame
        function = Function(set(params) - {"self", "cls"})
        self.functions.append(function)
        self._body(node.body)
        self.function_walked(function)
        self.functions.pop()
        for nested, step in frame.deferred:
            self._walk_function(nested, frame, step)
        self.frame = saved

    def function_walked(self, function: Function) -> None:
        """Called at the end of each function's body (`porter_ext.fix.checks` judges its
        creation calls there)."""

    def used_as_array(self, name: str) -> None:
        """``name`` is used as an array (``name.shape``, ``np.sum(name)``): a parameter of
        the function being walked so used takes arrays."""
        function = self.functions[-1]
        if function is None or name not in function.params:
            return
        frame = self.frame
        while frame.kind != "function":  # a lambda's or comprehension's own name
            if name in frame.env:
                return
            frame = frame.parent  # type: ignore[assignment]
        function.arrays.add(name)

    def _mark(self) -> tuple[int, ...]:
        function = self.functions[-1]
        return (*super()._mark(), len(function.creations) if function is not None else 0)

    def _rewind(self, mark: tuple[int, ...]) -> None:
        super()._rewind(mark)
        function = self.functions[-1]
        if function is not None:
            del function.creations[mark[3] :]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(expr)
        saved = self.frame
        self.frame = Frame("class", saved)
        self._body(node.body)
        self.frame = saved
        self.assign(node.name, UNKNOWN)

    def _local(self, names: dict[str, object], walk: Callable[[], None]) -> None:
        saved = self.frame
        self.frame = Frame("local", saved)
        self.frame.env.update(names)
        walk()
        self.frame = saved

    def visit_Lambda(self, node: ast.Lambda) -> None:
        args = node.args
        names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        for default in (*args.defaults, *args.kw_defaults):
            if default is not None:
                self.visit(default)
        self._local(dict.fromkeys(names, UNKNOWN), lambda: self.visit(node.body))

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        # the first iterable is evaluated in the enclosing scope, the rest in the comprehension
        self.visit(node.generators[0].iter)

        def walk() -> None:
            for i, generator in enumerate(node.generators):
                if i:
                    self.visit(generator.iter)
                for name in bound_names(generator.target):
                    self.frame.env[name] = UNKNOWN
                for condition in generator.ifs:
                    self.visit(condition)
            if isinstance(node, ast.DictComp):
                self.visit(node.key)
                self.visit(node.value)
            else:
                self.visit(node.elt)

        self._local({}, walk)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension
