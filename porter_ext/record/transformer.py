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

Sites are constant tuples ``(cell, line, col, spelled, slot, shape, end_line, end_col)``,
columns in characters of the line (`porter_ext.record.positions`: converted here, once
per site; the end is what a view marks); calls that use their
caller's frame (``super()``, ``locals()``…) and IPython's own calls
(``get_ipython().run_line_magic(...)``) are left alone, so that ``%time x = ...`` and
``!cmd`` lines keep working.
"""

from __future__ import annotations

import ast

from porter_ext.record.hooks_importlib_bootstrap import (
    ATTR_HOOK,
    AUGITEM_HOOK,
    CALL_HOOK,
    GETITEM_HOOK,
    IOP_HOOK,
    ITER_NAME,
    OP_HOOK,
    PRE_HOOK,
    SETITEM_HOOK,
    SLICE_NAME,
    SLOTS,
    SLOTS_NAME,
    TYPE_NAME,
)
from porter_ext.record.plain_names import PlainNames, plain_names
from porter_ext.record.positions import Columns

#: builtins that look at the calling frame: routing them through a hook would change them
_FRAME_CALLS = frozenset(
    {"super", "locals", "vars", "globals", "dir", "eval", "exec", "breakpoint", "get_ipython"}
)
#: array attributes worth recording (placement, shape semantics, vendor-specific flags,
#: memory layout and autograd state the standard does not have)
RECORDED_ATTRIBUTES = frozenset(
    {
        "T",
        "mT",
        "H",
        "mH",
        "device",
        "is_cuda",
        "real",
        "imag",
        "flat",
        "data",
        "itemsize",
        "nbytes",
        "strides",
        "grad",
    }
)

_BINOPS = {
    ast.Add: "__add__",
    ast.Sub: "__sub__",
    ast.Mult: "__mul__",
    ast.Div: "__truediv__",
    ast.FloorDiv: "__floordiv__",
    ast.Mod: "__mod__",
    ast.Pow: "__pow__",
    ast.MatMult: "__matmul__",
    ast.BitAnd: "__and__",
    ast.BitOr: "__or__",
    ast.BitXor: "__xor__",
    ast.LShift: "__lshift__",
    ast.RShift: "__rshift__",
}
_UNARY = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}
_COMPARE = {
    ast.Lt: "__lt__",
    ast.LtE: "__le__",
    ast.Gt: "__gt__",
    ast.GtE: "__ge__",
    ast.Eq: "__eq__",
    ast.NotEq: "__ne__",
}

#: the shape of a call's callee, which decides what its slot holds
NAME_SITE, METHOD_SITE, OTHER_SITE = 0, 1, 2


def _root_name(node: ast.expr) -> str | None:
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return None


def _at(new: ast.AST, node: ast.AST) -> ast.AST:
    new.lineno, new.col_offset = node.lineno, node.col_offset
    new.end_lineno, new.end_col_offset = node.end_lineno, node.end_col_offset
    return new


def _spelled(func: ast.expr) -> str | None:
    """The name a call spelled its callee with (``concatenate`` in ``np.concatenate(...)``):
    aliases such as NumPy's ``concatenate``/``concat`` are one object at run time."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _simple(node: ast.expr) -> bool:
    """An operand that can be read twice with no effect: a name or a literal."""
    return isinstance(node, ast.Name | ast.Constant)


_INDEX_NODES = (
    ast.Name,
    ast.Constant,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.UnaryOp,
    ast.BinOp,
    ast.Compare,
    ast.BoolOp,
    ast.Attribute,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
    ast.boolop,
    ast.expr_context,
)


def _simple_arguments(node: ast.Call) -> bool:
    """A call whose arguments are names, literals and attributes of names (``f(a, 1)``,
    ``x.sum(axis=0)``, ``g(*args, **kw)``): they can be written on both paths."""
    values = [a.value if isinstance(a, ast.Starred) else a for a in node.args]
    values += [k.value for k in node.keywords]
    for v in values:
        if isinstance(v, ast.Attribute):
            v = v.value
        if not isinstance(v, ast.Name | ast.Constant):
            return False
    return True


def _simple_index(node: ast.expr) -> bool:
    """An index with no call, subscript or binding in it (``i % 7``, ``..., ::-1``,
    ``x > 2``): it is written on both paths of the guard (one runs) at little cost."""
    nodes = list(ast.walk(node))
    return len(nodes) <= 40 and all(isinstance(n, _INDEX_NODES) for n in nodes)


def _as_value(node: ast.expr) -> ast.expr:
    """An index as a value: ``a:b`` slices become ``slice(a, b)``."""
    if isinstance(node, ast.Slice):
        parts = [
            p if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)
        ]
        return ast.Call(ast.Name(SLICE_NAME, ast.Load()), parts, [])
    if isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts):
        return ast.Tuple([_as_value(e) for e in node.elts], ast.Load())
    return node


def _slots(index: int | None = None) -> ast.expr:
    name = ast.Name(SLOTS_NAME, ast.Load())
    return name if index is None else ast.Subscript(name, ast.Constant(index), ast.Load())


def _new_slot() -> int:
    SLOTS.append(None)
    return len(SLOTS) - 1


def _plain_types(operands: list[ast.expr], slots: tuple) -> ast.expr | None:
    """``T(a) is S[i] and T(b) is S[j]``: each operand's type is one its site has only
    seen as plain Python (an identity check: a type's own ``__hash__`` never runs)."""
    checks = [
        ast.Compare(
            ast.Call(ast.Name(TYPE_NAME, ast.Load()), [_copy(op)], []),
            [ast.Is()],
            [_slots(slot)],
        )
        for op, slot in zip(operands, slots, strict=True)
        if slot is not None
    ]
    if not checks:
        return None
    return checks[0] if len(checks) == 1 else ast.BoolOp(ast.And(), checks)


def _guard(extra: ast.expr | None) -> ast.expr:
    """``plain-check or S[0]``: the check first, as it decides while recording."""
    off = _slots(0)
    return off if extra is None else ast.BoolOp(ast.Or(), [extra, off])


def _hook(name: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), args, [])


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
    ):
        self.cell = cell
        self.columns = Columns(source)
        self.attributes = attributes
        self.range_is_builtin = range_is_builtin
        #: the names holding Python values where the rewrite is now (plain_names.py)
        self.plain: frozenset[str] = frozenset()
        self.names: PlainNames | None = None
        self.sites = 0
        #: every site tuple of the rewrite (compiled.py relabels them for a re-run)
        self.site_values: list[tuple] = []

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
        site = (self.cell, line, col, spelled, _new_slot(), shape, end_line, end_col)
        self.site_values.append(site)
        return _at(ast.Constant(site), node)

    def _op_site(
        self, node: ast.AST, name: str, operands: list[ast.expr] = ()
    ) -> tuple[ast.Constant, tuple]:
        """An operation's site: ``(cell, line, col, name, slots, key, end_line, end_col)``,
        one slot per operand that is read twice (a name; None for a literal or an
        operand read once), and a number of its own (the key of its fast path)."""
        self.sites += 1
        slots = tuple(_new_slot() if isinstance(o, ast.Name) else None for o in operands)
        if all(slot is None for slot in slots):
            slots = ()  # no operand is read twice: the hook settles plain values itself
        line, col, end_line, end_col = self.columns.span(node)
        site = (self.cell, line, col, name, slots, _new_slot(), end_line, end_col)
        self.site_values.append(site)
        return _at(ast.Constant(site), node), slots

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
        name = self.names.loops.get(id(node)) if self.names is not None else None
        if name is None:
            node.target = self.visit(node.target)
            node.iter = self._visit_iterated(node.iter)
            node.body = _flat([self.visit(s) for s in node.body])
            node.orelse = _flat([self.visit(s) for s in node.orelse])
            return node
        node.iter = self.visit(node.iter)
        saved = self.plain
        self.plain = saved | {name}  # an int from range(...) inside the loop's body
        node.body = _flat([self.visit(s) for s in node.body])
        self.plain = saved
        node.orelse = _flat([self.visit(s) for s in node.orelse])
        return node

    def visit_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    ) -> ast.AST:
        """A comprehension's iterables routed through ``iter`` like a ``for`` loop's, each
        in its own generator: the first one is still evaluated in the enclosing scope
        (where its names are known plain), the others and the body in the
        comprehension's scope, where its targets shadow the enclosing names (and a
        generator expression's body runs later: no name is known plain there)."""
        first = node.generators[0]
        first.iter = self._visit_iterated(first.iter, first.is_async)
        saved = self.plain
        if isinstance(node, ast.GeneratorExp):
            self.plain = frozenset()
        elif saved:
            self.plain = saved - _bound_names(node)
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
        return node

    def _visit_iterated(self, value: ast.expr, is_async: bool = False) -> ast.expr:
        """What a loop or a comprehension iterates over, rewritten, and called through
        ``iter`` where it may be an array (a name, attribute or index the cell has not
        made a Python value); a call (``enumerate(x)``, ``range(n)``) is recorded as
        itself."""
        hooked = (
            not is_async
            and isinstance(value, ast.Name | ast.Attribute | ast.Subscript)
            and not self._is_plain(value)
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
        call = _at(ast.Call(_at(ast.Name(ITER_NAME, ast.Load()), value), [value], []), value)
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

    def _is_plain(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.plain

    # -- calls -------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if _root_name(func) == "get_ipython":
            return node  # IPython's own calls: magics' arguments are source text
        if isinstance(func, ast.Name) and func.id in _FRAME_CALLS:
            self.generic_visit(node)
            return node
        simple = _simple_arguments(node)
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and self._is_plain(node.func.value):
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
            [site, _copy(func), *map(_copy, node.args)],
            [_copy(k) for k in node.keywords],
        )
        return _fix_keep(ast.IfExp(_guard(test), node, hooked), node)

    def _callee_site(self, func: ast.expr, node: ast.AST) -> tuple[ast.Constant, ast.expr | None]:
        """A call's site, and the test of its slot: the callee itself for ``f(...)``, the
        receiver's type for ``o.m(...)``, none for anything else."""
        if isinstance(func, ast.Name):
            site = self._site(node, func.id, NAME_SITE)
            return site, ast.Compare(_copy(func), [ast.Is()], [_slots(site.value[4])])
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            site = self._site(node, func.attr, METHOD_SITE)
            receiver_type = ast.Call(ast.Name(TYPE_NAME, ast.Load()), [_copy(func.value)], [])
            return site, ast.Compare(receiver_type, [ast.Is()], [_slots(site.value[4])])
        return self._site(node, _spelled(func), OTHER_SITE), None

    def _callee(self, func: ast.expr, node: ast.AST) -> ast.expr:
        """The callee expression guarded by its site's slot (see the module doc)."""
        site, test = self._callee_site(func, node)
        guarded = ast.IfExp(_guard(test), func, _hook(PRE_HOOK, [site, _copy(func)]))
        return _fix_keep(guarded, func)

    def _decorated(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        """``@jax.jit`` applies a callee too: its decorators are guarded like callees."""
        self.generic_visit(node)
        node.decorator_list = [
            d if isinstance(d, ast.Call) else self._callee(d, d) for d in node.decorator_list
        ]
        return node

    # -- operators ---------------------------------------------------------------------
    def _operation(self, node: ast.expr, name: str, operands: list[ast.expr]) -> ast.expr:
        if all(isinstance(o, ast.Constant) or self._is_plain(o) for o in operands):
            return node  # literals and Python values only: never an array
        if all(_simple(o) for o in operands):
            site, slots = self._op_site(node, name, operands)
            hooked = _hook(OP_HOOK, [site, ast.Constant(name), *map(_copy, operands)])
            new = ast.IfExp(_guard(_plain_types(operands, slots)), node, hooked)
            return _fix_keep(new, node)
        site, _ = self._op_site(node, name)
        hooked = _hook(OP_HOOK, [site, ast.Constant(name), *operands])
        return _fix_keep(hooked, node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        name = _BINOPS.get(type(node.op))
        if name is None:
            return node
        return self._operation(node, name, [node.left, node.right])

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        name = _UNARY.get(type(node.op))
        if name is None or isinstance(node.operand, ast.Constant):
            return node
        return self._operation(node, name, [node.operand])

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node
        name = _COMPARE.get(type(node.ops[0]))
        if name is None:
            return node
        return self._operation(node, name, [node.left, node.comparators[0]])

    # -- indexing ----------------------------------------------------------------------
    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        simple = isinstance(node.value, ast.Name) and _simple_index(node.slice)
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or self._is_plain(node.value):
            return node
        if simple:
            site, slots = self._op_site(node, "__getitem__", [node.value])
            value = _copy(node.value)
            hooked = _hook(GETITEM_HOOK, [site, value, _as_value(_copy(node.slice))])
            new = ast.IfExp(_guard(_plain_types([node.value], slots)), node, hooked)
            return _fix_keep(new, node)
        site, _ = self._op_site(node, "__getitem__")
        return _fix_keep(_hook(GETITEM_HOOK, [site, node.value, _as_value(node.slice)]), node)

    def visit_Assign(self, node: ast.Assign) -> ast.AST | list:
        self.generic_visit(node)
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
            return node
        target = node.targets[0]
        if not isinstance(target.value, ast.Name) or self._is_plain(target.value):
            return node
        site, slots = self._op_site(target, "__setitem__", [target.value])
        # Python evaluates the value first, then the object, then the index
        hooked = ast.Expr(
            _hook(
                SETITEM_HOOK,
                [site, _copy(node.value), _copy(target.value), _as_value(_copy(target.slice))],
            )
        )
        new = ast.If(_guard(_plain_types([target.value], slots)), [node], [hooked])
        _fix_keep(new, node)
        return new

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        target = node.target
        item = (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and not self._is_plain(target.value)
            and _simple_index(target.slice)
        )
        through_attribute = (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and not self._is_plain(target.value)
            and not any(isinstance(n, ast.NamedExpr) for n in ast.walk(node.value))
        )
        self.generic_visit(node)
        name = _BINOPS.get(type(node.op))
        if name is None:
            return node
        iname = "__i" + name[2:]
        if item:
            # x[i] += v: the read by the getitem hook, then v, then the in-place operator
            # and the write (in Python's order; x and i, names and simple expressions,
            # are read again for the read, before v can rebind them)
            site, slots = self._op_site(node, iname, [target.value])
            read_site, _ = self._op_site(node, "__getitem__")
            key = _as_value(_copy(target.slice))
            read = _hook(GETITEM_HOOK, [read_site, _copy(target.value), _copy(key)])
            args = [site, ast.Constant(iname), _copy(target.value), key, read]
            hooked = ast.Expr(_hook(AUGITEM_HOOK, [*args, _copy(node.value)]))
            new = ast.If(_guard(_plain_types([target.value], slots)), [node], [hooked])
            return _fix_keep(new, node)
        if through_attribute:
            return self._augmented_attribute(node, target, iname)
        if isinstance(target, ast.Name):
            load = ast.Name(target.id, ast.Load())
            checked = [load, node.value] if isinstance(node.value, ast.Name) else [load]
            site, slots = self._op_site(node, iname, checked)
            hooked = ast.Assign(
                [ast.Name(target.id, ast.Store())],
                _hook(IOP_HOOK, [site, ast.Constant(iname), _copy(load), _copy(node.value)]),
            )
            new = ast.If(_guard(_plain_types(checked, slots)), [node], [hooked])
            return _fix_keep(new, node)
        return node

    def _augmented_attribute(
        self, node: ast.AugAssign, target: ast.Attribute, iname: str
    ) -> ast.AST:
        """``p.data += v`` as ``p.data = iop(p.data, v)``, Python's own order (the read of
        ``p.data``, then ``v``, the in-place operator, the write): the read recorded as an
        attribute (when it is one porter records) and the operator as itself. ``p`` is a
        name, read again for the write; a value that could rebind it (``:=``) is left
        alone. No slot guard: the hooks settle a plain object's attribute themselves."""
        read: ast.expr = ast.Attribute(_copy(target.value), target.attr, ast.Load())
        if self.attributes and target.attr in RECORDED_ATTRIBUTES:
            read_site, _ = self._op_site(target, target.attr)
            read = _hook(ATTR_HOOK, [read_site, _copy(target.value), ast.Constant(target.attr)])
        site, _ = self._op_site(node, iname)
        write = ast.Attribute(_copy(target.value), target.attr, ast.Store())
        hooked = ast.Assign(
            [write], _hook(IOP_HOOK, [site, ast.Constant(iname), read, _copy(node.value)])
        )
        return _fix_keep(hooked, node)

    # -- attributes --------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if (
            not self.attributes
            or node.attr not in RECORDED_ATTRIBUTES
            or not isinstance(node.ctx, ast.Load)
            or self._is_plain(node.value)
        ):
            return node
        site, slots = self._op_site(node, node.attr, [node.value])
        hooked = _hook(ATTR_HOOK, [site, _copy(node.value), ast.Constant(node.attr)])
        if slots:
            new = ast.IfExp(_guard(_plain_types([node.value], slots)), node, hooked)
            return _fix_keep(new, node)
        return _fix_keep(hooked, node)


#: node type → the method that rewrites it (a dict lookup per node: the walk is hot)
_VISITORS = {
    ast.Call: CallSiteTransformer.visit_Call,
    ast.Attribute: CallSiteTransformer.visit_Attribute,
    ast.BinOp: CallSiteTransformer.visit_BinOp,
    ast.UnaryOp: CallSiteTransformer.visit_UnaryOp,
    ast.Compare: CallSiteTransformer.visit_Compare,
    ast.Subscript: CallSiteTransformer.visit_Subscript,
    ast.Assign: CallSiteTransformer.visit_Assign,
    ast.AugAssign: CallSiteTransformer.visit_AugAssign,
    ast.Module: CallSiteTransformer.visit_Module,
    ast.For: CallSiteTransformer.visit_For,
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


def _bound_names(node: ast.AST) -> frozenset[str]:
    """The names ``node`` binds (a comprehension's targets, its ``:=``)."""
    return frozenset(
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )


def _flat(items: list) -> list:
    out: list = []
    for item in items:
        out.extend(item) if type(item) is list else out.append(item)
    return out


def _copy(node: ast.AST) -> ast.AST:
    """A structural copy of an already rewritten subtree (it appears on both paths; only
    one runs). Constants are shared: site tuples stay the same objects."""
    if isinstance(node, ast.Constant):
        return node
    new = type(node)()
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list:
            value = [_copy(v) if isinstance(v, ast.AST) else v for v in value]
        elif isinstance(value, ast.AST):
            value = _copy(value) if not isinstance(value, ast.expr_context) else value
        setattr(new, field, value)
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    return new


def _fix_keep(tree: ast.AST, node: ast.AST) -> ast.AST:
    """Locate the new nodes of ``tree`` at ``node``, keeping the locations the person's
    own subtrees already have (so that nested calls keep their columns)."""
    stack = [tree]
    while stack:
        child = stack.pop()
        if isinstance(child, ast.expr | ast.stmt):
            if getattr(child, "lineno", None) is not None and hasattr(child, "end_lineno"):
                continue  # an existing, located node: its subtree is located too
            _at(child, node)
        stack.extend(ast.iter_child_nodes(child))
    return tree


def transform(
    tree: ast.Module,
    cell: int | str,
    *,
    range_is_builtin: bool = False,
    source: str | None = None,
) -> ast.Module:
    """Rewrite ``tree`` (parsed from ``source``) in place for recording (every new node
    is located where the call was, so no pass over the whole tree is needed to fix
    locations)."""
    rewriter = CallSiteTransformer(cell, range_is_builtin=range_is_builtin, source=source)
    return rewriter.visit(tree)
