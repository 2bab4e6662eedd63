"""The AST rewrite that routes a cell's calls, operators and indexing through the recorder.

Every rewritten node keeps the plain operation on a path that costs a type check:

- a call ``f(a)`` becomes ``(f if f is S[k] or S[0] else __porter_pre__(site, f))(a)``:
  ``S[0]`` is true while nothing records, slot ``S[k]`` holds the callee (or, for
  ``o.m(a)``, the receiver's type) the site has only ever seen as a non-array call, and
  ``__porter_pre__`` hands back the callee itself for anything that is not an array call.
  The person's call therefore runs in their own frame (warnings, ``namedtuple``, recursion
  depth, tracebacks as without porter); only array calls go through a recording wrapper.
- ``a + b``, ``-a``, ``a < b`` on names and constants become
  ``(a + b) if (T(a) is S[i] and T(b) is S[j]) or S[0] else __porter_op__(site, ...)``
  (slots holding the operand types the site has seen as plain Python), so ``int + int``
  in a loop costs two type checks; other operands go through ``__porter_op__``, which
  settles plain values with one dictionary lookup.
- ``x[i]``, ``x[i] = v``, ``x += v`` and ``x.T`` likewise, with the index or value
  evaluated exactly once on either path.

Sites are constants, written as plain tuples and named in the compiled code
(`porter_ext.record.sites`: `CallSite`, `OperationSite`, `LoopSite`), columns in
characters of the line (`porter_ext.record.positions`: converted here, once per site; the
end is what a view marks); calls that use their
caller's frame (``super()``, ``locals()``…) and IPython's own calls
(``get_ipython().run_line_magic(...)``) are left alone, so that ``%time x = ...`` and
``!cmd`` lines keep working.
"""

from __future__ import annotations

import ast

from porter_ext.record import rewrite_operators as operators
from porter_ext.record.hooks_importlib_bootstrap import (
    CALL_HOOK,
    ITER_NAME,
    LOOP_HOOK,
    PRE_HOOK,
    SITES,
    SITES_NAME,
    TYPE_NAME,
)
from porter_ext.record.plain_names import PlainNames, plain_names
from porter_ext.record.positions import Columns
from porter_ext.record.rewrite_nodes import (
    bound_names,
    copy_node,
    flat,
    guard,
    hook_call,
    locate_new,
    located,
    new_slot,
    root_name,
    simple_arguments,
    slot_ref,
    spelled_name,
)
from porter_ext.record.sites import CallSite, LoopSite, OperationSite, Site

#: builtins that look at the calling frame: routing them through a hook would change them
_FRAME_CALLS = frozenset(
    {"super", "locals", "vars", "globals", "dir", "eval", "exec", "breakpoint", "get_ipython"}
)

#: what a loop may not hold to get a plain copy of its body (see `_sampled`): a function or
#: class the copy defined would record nothing when called later; ``global`` and
#: ``nonlocal`` may be declared once only
_NOT_COPIED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.Global,
    ast.Nonlocal,
)

#: the shape of a call's callee, which decides what its slot holds
NAME_SITE, METHOD_SITE, OTHER_SITE = 0, 1, 2


class CallSiteTransformer(ast.NodeTransformer):
    """Rewrites the calls, operators and indexing of one cell; ``cell`` identifies the
    cell in every site tuple, ``source`` is the text the tree was parsed from (its
    columns count characters in the site tuples; None: the tree's byte columns, right
    for an ASCII source)."""

    def __init__(
        self,
        cell: int | str,
        *,
        attributes: bool = True,
        range_is_builtin: bool = False,
        source: str | None = None,
        compiled_elsewhere: bool = False,
    ):
        self.cell = cell
        #: the tree is compiled by another (IPython): its sites are read from `SITES`
        self.compiled_elsewhere = compiled_elsewhere
        self.columns = Columns(source)
        self.attributes = attributes
        self.range_is_builtin = range_is_builtin
        #: the names holding Python values where the rewrite is now (plain_names.py)
        self.plain: frozenset[str] = frozenset()
        self.names: PlainNames | None = None
        self.sites = 0
        #: every site of the rewrite (compiled.py names them in the compiled code)
        self.site_values: list[Site] = []

    def generic_visit(self, node: ast.AST) -> ast.AST:
        # ast.NodeTransformer's own walk costs ~5 us a node: this one visits only what can
        # hold a call, and replaces nodes in place (statements may become a few)
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                out: list = []
                for item in value:
                    if isinstance(item, ast.AST) and item._fields:
                        new = self.visit(item)
                        if type(new) is list:
                            out.extend(new)
                        else:
                            out.append(new)
                    else:
                        out.append(item)
                value[:] = out
            elif isinstance(value, ast.AST) and value._fields:
                setattr(node, field, self.visit(value))
        return node

    def visit(self, node: ast.AST) -> ast.AST:
        visitor = _VISITORS.get(type(node))
        if visitor is None:
            return self.generic_visit(node)
        return visitor(self, node)

    def _site(self, node: ast.AST, spelled: str | None = None, shape: int = OTHER_SITE):
        self.sites += 1
        line, col, end_line, end_col = self.columns.span(node)
        site = CallSite(self.cell, line, col, spelled, new_slot(), shape, end_line, end_col)
        return site, self._constant(site, node)

    def _constant(self, site: Site, node: ast.AST | None = None) -> ast.expr:
        """``site`` as the rewrite passes it to its hook: a plain tuple constant, named
        in the compiled code (see `porter_ext.record.sites`), or for a tree compiled
        elsewhere ``__porter_sites__[k]``."""
        self.site_values.append(site)
        if self.compiled_elsewhere:
            SITES.append(site)
            table = ast.Name(SITES_NAME, ast.Load())
            expr = ast.Subscript(table, ast.Constant(len(SITES) - 1), ast.Load())
        else:
            expr = ast.Constant(tuple(site))
        return locate_new(expr, node) if node is not None else expr

    def op_site(
        self, node: ast.AST, name: str, operands: list[ast.expr] = ()
    ) -> tuple[ast.expr, tuple]:
        """An operation's site (`OperationSite`), with one slot per operand that is read
        twice (a name; None for a literal or an operand read once), and a number of its
        own (the key of its fast path)."""
        self.sites += 1
        slots = tuple(new_slot() if isinstance(o, ast.Name) else None for o in operands)
        if all(slot is None for slot in slots):
            slots = ()  # no operand is read twice: the hook settles plain values itself
        line, col, end_line, end_col = self.columns.span(node)
        site = OperationSite(self.cell, line, col, name, slots, new_slot(), end_line, end_col)
        return self._constant(site, node), slots

    # -- scopes ------------------------------------------------------------------------
    def visit_Module(self, node: ast.Module) -> ast.Module:
        self.names = plain_names(node, self.range_is_builtin)
        body: list = []
        for index, statement in enumerate(node.body):
            self.plain = self.names.at(index)
            new = self.visit(statement)
            body.extend(new) if type(new) is list else body.append(new)
        self.plain = frozenset()
        node.body = body
        return node

    def visit_For(self, node: ast.For) -> ast.AST:
        plain = _plain_copy(node.body)
        name = self.names.loops.get(id(node)) if self.names is not None else None
        if name is None:
            node.target = self.visit(node.target)
            node.iter = self._visit_iterated(node.iter)
            before = self.sites
            node.body = flat([self.visit(s) for s in node.body])
        else:
            node.iter = self.visit(node.iter)
            saved = self.plain
            self.plain = saved | {name}  # an int from range(...) inside the loop's body
            before = self.sites
            node.body = flat([self.visit(s) for s in node.body])
            self.plain = saved
        self._sampled(node, plain, self.sites != before)
        node.orelse = flat([self.visit(s) for s in node.orelse])
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        plain = _plain_copy([node.test, *node.body])
        before = self.sites
        node.test = self.visit(node.test)
        node.body = flat([self.visit(s) for s in node.body])
        slot = self._sampled(node, plain and plain[1:], self.sites != before)
        if slot is not None:
            node.test = locate_new(ast.IfExp(guard(slot_ref(slot)), plain[0], node.test), node.test)
        node.orelse = flat([self.visit(s) for s in node.orelse])
        return node

    def _sampled(self, node: ast.For | ast.While, plain: list | None, hooked: bool) -> int | None:
        """A loop whose body records something gets a plain copy of it, which its
        iterations run once its slot is filled (`Recorder.iteration`: a replay's loop
        after its first iterations recorded nothing new) or while nothing records:
        ``if S[k] or S[0]: <body as written> else: __porter_loop__(site); <rewrite>``.
        The slot, or None for a loop left as it is."""
        if plain is None or not hooked or not node.body:
            return None
        slot = new_slot()
        site = self._constant(LoopSite(self.cell, self.columns.span(node)[0], slot))
        count = ast.Expr(hook_call(LOOP_HOOK, [site]))
        switch = ast.If(guard(slot_ref(slot)), plain, [count, *node.body])
        node.body = [locate_new(switch, node.body[0])]
        return slot

    def visit_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    ) -> ast.AST:
        """A comprehension's iterables routed through ``iter`` like a ``for`` loop's, each
        in its own generator: the first one is still evaluated in the enclosing scope
        (where its names are known plain), the others and the body in the
        comprehension's scope, where its targets shadow the enclosing names (and a
        generator expression's body runs later: no name is known plain there)."""
        plain = self._comprehension_copy(node)
        first = node.generators[0]
        first.iter = self._visit_iterated(first.iter, first.is_async)
        before = self.sites
        saved = self.plain
        if isinstance(node, ast.GeneratorExp):
            self.plain = frozenset()
        elif saved:
            self.plain = saved - bound_names(node)
        try:
            for generator in node.generators:
                generator.target = self.visit(generator.target)
                if generator is not first:
                    generator.iter = self._visit_iterated(generator.iter, generator.is_async)
                generator.ifs = [self.visit(test) for test in generator.ifs]
            if isinstance(node, ast.DictComp):
                node.key, node.value = self.visit(node.key), self.visit(node.value)
            else:
                node.elt = self.visit(node.elt)
        finally:
            self.plain = saved
        if plain is not None and self.sites != before:
            self._sampled_comprehension(node, plain)
        return node

    @staticmethod
    def _comprehension_copy(node: ast.AST) -> list | None:
        """The expressions of a comprehension that run per element, copied as written: its
        tests, then its element (a dict's key and value), or None (see `_plain_copy`)."""
        tests = [test for generator in node.generators for test in generator.ifs]
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        if any(g.is_async for g in node.generators):
            return None
        return _plain_copy([*tests, *parts])

    def _sampled_comprehension(self, node: ast.AST, plain: list) -> None:
        """A comprehension's loop as `_sampled`'s: each per-element expression becomes
        ``(as written) if S[k] or S[0] else (its rewrite)``, the first one counting the
        iteration (``(__porter_loop__(site), rewrite)[1]``)."""
        slot = new_slot()
        site = self._constant(LoopSite(self.cell, self.columns.span(node)[0], slot))
        holders = [(g.ifs, i) for g in node.generators for i in range(len(g.ifs))]
        keys = ("key", "value") if isinstance(node, ast.DictComp) else ("elt",)
        counted = False
        for (where, index), written in zip(holders, plain, strict=False):
            where[index] = self._switch(slot, site, written, where[index], not counted)
            counted = True
        for key, written in zip(keys, plain[len(holders) :], strict=True):
            setattr(node, key, self._switch(slot, site, written, getattr(node, key), not counted))
            counted = True

    @staticmethod
    def _switch(slot: int, site: ast.expr, written: ast.expr, rewritten: ast.expr, count: bool):
        if count:
            counter = hook_call(LOOP_HOOK, [copy_node(site)])
            rewritten = ast.Subscript(
                ast.Tuple([counter, rewritten], ast.Load()), ast.Constant(1), ast.Load()
            )
        return locate_new(ast.IfExp(guard(slot_ref(slot)), written, rewritten), written)

    def _visit_iterated(self, value: ast.expr, is_async: bool = False) -> ast.expr:
        """What a loop or a comprehension iterates over, rewritten, and called through
        ``iter`` where it may be an array (a name, attribute or index the cell has not
        made a Python value); a call (``enumerate(x)``, ``range(n)``) is recorded as
        itself."""
        hooked = (
            not is_async
            and isinstance(value, ast.Name | ast.Attribute | ast.Subscript)
            and not self.is_plain(value)
        )
        simple = isinstance(value, ast.Name) or (
            isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
        )
        value = self.visit(value)
        return self._iterated(value, simple) if hooked else value

    def _iterated(self, value: ast.expr, simple: bool) -> ast.expr:
        """``for v in x`` as ``for v in iter(x)`` through the call hook (the loop calls
        ``iter`` itself, and ``iter`` of an iterator is that iterator): iterating over an
        array is recorded as ``iter``, a list or a dict stays plain Python. ``value`` is
        already rewritten (``simple``: it can be written on both paths of the guard)."""
        call = located(
            ast.Call(located(ast.Name(ITER_NAME, ast.Load()), value), [value], []), value
        )
        if simple:
            return self._direct(call)
        call.func = self._callee(call.func, call)
        return call

    def _elsewhere(self, node: ast.AST) -> ast.AST:
        """A body that runs later or in its own scope: no name is known plain there."""
        saved, self.plain = self.plain, frozenset()
        try:
            return _VISITORS_BY_SCOPE[type(node)](self, node)
        finally:
            self.plain = saved

    def is_plain(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.plain

    # -- calls -------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if root_name(func) == "get_ipython":
            return node  # IPython's own calls: magics' arguments are source text
        if isinstance(func, ast.Name) and func.id in _FRAME_CALLS:
            self.generic_visit(node)
            return node
        simple = simple_arguments(node)
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and self.is_plain(node.func.value):
            return node  # a method of a list, dict, str... the cell made: plain Python
        if simple and isinstance(node.func, ast.Name | ast.Attribute):
            return self._direct(node)
        node.func = self._callee(node.func, node)
        return node

    def _direct(self, node: ast.Call) -> ast.expr:
        """``f(a, k=b)`` with arguments that can be written twice (only one path runs):
        ``f(a, k=b) if f is S[k] or S[0] else __porter_call__(site, f, a, k=b)``, one
        hook frame for an array call instead of two."""
        func = node.func
        site, test = self._callee_site(func, node)
        hooked = ast.Call(
            ast.Name(CALL_HOOK, ast.Load()),
            [site, copy_node(func), *map(copy_node, node.args)],
            [copy_node(k) for k in node.keywords],
        )
        return locate_new(ast.IfExp(guard(test), node, hooked), node)

    def _callee_site(self, func: ast.expr, node: ast.AST) -> tuple[ast.expr, ast.expr | None]:
        """A call's site, and the test of its slot: the callee itself for ``f(...)``, the
        receiver's type for ``o.m(...)``, none for anything else."""
        if isinstance(func, ast.Name):
            site, constant = self._site(node, func.id, NAME_SITE)
            return constant, ast.Compare(copy_node(func), [ast.Is()], [slot_ref(site.slot)])
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            site, constant = self._site(node, func.attr, METHOD_SITE)
            receiver_type = ast.Call(ast.Name(TYPE_NAME, ast.Load()), [copy_node(func.value)], [])
            return constant, ast.Compare(receiver_type, [ast.Is()], [slot_ref(site.slot)])
        return self._site(node, spelled_name(func), OTHER_SITE)[1], None

    def _callee(self, func: ast.expr, node: ast.AST) -> ast.expr:
        """The callee expression guarded by its site's slot (see the module doc)."""
        site, test = self._callee_site(func, node)
        guarded = ast.IfExp(guard(test), func, hook_call(PRE_HOOK, [site, copy_node(func)]))
        return locate_new(guarded, func)

    def _decorated(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        """``@jax.jit`` applies a callee too: its decorators are guarded like callees."""
        self.generic_visit(node)
        node.decorator_list = [
            d if isinstance(d, ast.Call) else self._callee(d, d) for d in node.decorator_list
        ]
        return node


#: node type → the method that rewrites it (a dict lookup per node: the walk is hot)
_VISITORS = {
    ast.Call: CallSiteTransformer.visit_Call,
    ast.Attribute: operators.visit_attribute,
    ast.BinOp: operators.visit_binop,
    ast.UnaryOp: operators.visit_unaryop,
    ast.Compare: operators.visit_compare,
    ast.Subscript: operators.visit_subscript,
    ast.Assign: operators.visit_assign,
    ast.AugAssign: operators.visit_augassign,
    ast.Module: CallSiteTransformer.visit_Module,
    ast.For: CallSiteTransformer.visit_For,
    ast.While: CallSiteTransformer.visit_While,
    ast.FunctionDef: CallSiteTransformer._elsewhere,
    ast.AsyncFunctionDef: CallSiteTransformer._elsewhere,
    ast.ClassDef: CallSiteTransformer._elsewhere,
    ast.Lambda: CallSiteTransformer._elsewhere,
    ast.ListComp: CallSiteTransformer.visit_comprehension,
    ast.SetComp: CallSiteTransformer.visit_comprehension,
    ast.DictComp: CallSiteTransformer.visit_comprehension,
    ast.GeneratorExp: CallSiteTransformer.visit_comprehension,
}
_VISITORS_BY_SCOPE = {
    ast.FunctionDef: CallSiteTransformer._decorated,
    ast.AsyncFunctionDef: CallSiteTransformer._decorated,
    ast.ClassDef: CallSiteTransformer._decorated,
    ast.Lambda: CallSiteTransformer.generic_visit,
}


def _plain_copy(nodes: list[ast.AST]) -> list | None:
    """A copy of a loop's statements as written (before the rewrite changes them), or None
    where one of them must not be copied (`_NOT_COPIED`)."""
    for statement in nodes:
        for node in ast.walk(statement):
            if isinstance(node, _NOT_COPIED):
                return None
    return [copy_node(s) for s in nodes]


def transform(
    tree: ast.Module,
    cell: int | str,
    *,
    range_is_builtin: bool = False,
    source: str | None = None,
) -> ast.Module:
    """Rewrite ``tree`` (parsed from ``source``) in place for recording (every new node
    is located where the call was, so no pass over the whole tree is needed to fix
    locations), for a caller that compiles it: its code reads its sites from `SITES`."""
    rewriter = CallSiteTransformer(
        cell, range_is_builtin=range_is_builtin, source=source, compiled_elsewhere=True
    )
    return rewriter.visit(tree)
