"""The nodes the call-site rewrite builds, and what it asks of the person's nodes.

Building: every new node is located where the person's node was (`locate_new`), copied
where it appears on both paths of a guard (`copy_node`), and tested against the site's
slots (`slot_ref`, `plain_types`, `guard`). Asking: whether an operand, an index or a
call's arguments can be written twice with no effect (`simple_operand`, `simple_index`,
`simple_arguments`).
"""

from __future__ import annotations

import ast

from porter_ext.record.hooks_importlib_bootstrap import SLICE_NAME, SLOTS, SLOTS_NAME, TYPE_NAME


def root_name(node: ast.expr) -> str | None:
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


def located(new: ast.AST, node: ast.AST) -> ast.AST:
    new.lineno, new.col_offset = node.lineno, node.col_offset
    new.end_lineno, new.end_col_offset = node.end_lineno, node.end_col_offset
    return new


def spelled_name(func: ast.expr) -> str | None:
    """The name a call spelled its callee with (``concatenate`` in ``np.concatenate(...)``):
    aliases such as NumPy's ``concatenate``/``concat`` are one object at run time."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def simple_operand(node: ast.expr) -> bool:
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


def simple_arguments(node: ast.Call) -> bool:
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


def simple_index(node: ast.expr) -> bool:
    """An index with no call, subscript or binding in it (``i % 7``, ``..., ::-1``,
    ``x > 2``): it is written on both paths of the guard (one runs) at little cost."""
    nodes = list(ast.walk(node))
    return len(nodes) <= 40 and all(isinstance(n, _INDEX_NODES) for n in nodes)


def as_value(node: ast.expr) -> ast.expr:
    """An index as a value: ``a:b`` slices become ``slice(a, b)``."""
    if isinstance(node, ast.Slice):
        parts = [
            p if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)
        ]
        return ast.Call(ast.Name(SLICE_NAME, ast.Load()), parts, [])
    if isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts):
        return ast.Tuple([as_value(e) for e in node.elts], ast.Load())
    return node


def slot_ref(index: int | None = None) -> ast.expr:
    name = ast.Name(SLOTS_NAME, ast.Load())
    return name if index is None else ast.Subscript(name, ast.Constant(index), ast.Load())


def new_slot() -> int:
    SLOTS.append(None)
    return len(SLOTS) - 1


def plain_types(operands: list[ast.expr], slots: tuple) -> ast.expr | None:
    """``T(a) is S[i] and T(b) is S[j]``: each operand's type is one its site has only
    seen as plain Python (an identity check: a type's own ``__hash__`` never runs)."""
    checks = [
        ast.Compare(
            ast.Call(ast.Name(TYPE_NAME, ast.Load()), [copy_node(op)], []),
            [ast.Is()],
            [slot_ref(slot)],
        )
        for op, slot in zip(operands, slots, strict=True)
        if slot is not None
    ]
    if not checks:
        return None
    return checks[0] if len(checks) == 1 else ast.BoolOp(ast.And(), checks)


def guard(extra: ast.expr | None) -> ast.expr:
    """``plain-check or S[0]``: the check first, as it decides while recording."""
    off = slot_ref(0)
    return off if extra is None else ast.BoolOp(ast.Or(), [extra, off])


def hook_call(name: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), args, [])


def bound_names(node: ast.AST) -> frozenset[str]:
    """The names ``node`` binds (a comprehension's targets, its ``:=``)."""
    return frozenset(
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )


def flat(items: list) -> list:
    out: list = []
    for item in items:
        out.extend(item) if type(item) is list else out.append(item)
    return out


def copy_node(node: ast.AST) -> ast.AST:
    """A structural copy of an already rewritten subtree (it appears on both paths; only
    one runs). Constants are shared: site tuples stay the same objects."""
    if isinstance(node, ast.Constant):
        return node
    new = type(node)()
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list:
            value = [copy_node(v) if isinstance(v, ast.AST) else v for v in value]
        elif isinstance(value, ast.AST):
            value = copy_node(value) if not isinstance(value, ast.expr_context) else value
        setattr(new, field, value)
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    return new


def locate_new(tree: ast.AST, node: ast.AST) -> ast.AST:
    """Locate the new nodes of ``tree`` at ``node``, keeping the locations the person's
    own subtrees already have (so that nested calls keep their columns)."""
    stack = [tree]
    while stack:
        child = stack.pop()
        if isinstance(child, ast.expr | ast.stmt):
            if getattr(child, "lineno", None) is not None and hasattr(child, "end_lineno"):
                continue  # an existing, located node: its subtree is located too
            located(child, node)
        stack.extend(ast.iter_child_nodes(child))
    return tree
