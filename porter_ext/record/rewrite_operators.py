"""The rewrite of operators, indexing, item and augmented assignment, and recorded
attributes (see `porter_ext.record.transformer` for the guarded forms): each visitor
takes the walker, which owns the sites, the slots and the names known plain.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from porter_ext.record.hooks_importlib_bootstrap import (
    ATTR_HOOK,
    AUGITEM_HOOK,
    GETITEM_HOOK,
    IOP_HOOK,
    OP_HOOK,
    SETITEM_HOOK,
)
from porter_ext.record.rewrite_nodes import (
    as_value,
    copy_node,
    guard,
    hook_call,
    locate_new,
    plain_types,
    simple_index,
    simple_operand,
)

if TYPE_CHECKING:
    from porter_ext.record.transformer import CallSiteTransformer

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


def _operation(
    walker: CallSiteTransformer, node: ast.expr, name: str, operands: list[ast.expr]
) -> ast.expr:
    if all(isinstance(o, ast.Constant) or walker.is_plain(o) for o in operands):
        return node  # literals and Python values only: never an array
    if all(simple_operand(o) for o in operands):
        site, slots = walker.op_site(node, name, operands)
        hooked = hook_call(OP_HOOK, [site, ast.Constant(name), *map(copy_node, operands)])
        new = ast.IfExp(guard(plain_types(operands, slots)), node, hooked)
        return locate_new(new, node)
    site, _ = walker.op_site(node, name)
    hooked = hook_call(OP_HOOK, [site, ast.Constant(name), *operands])
    return locate_new(hooked, node)


def visit_binop(walker: CallSiteTransformer, node: ast.BinOp) -> ast.AST:
    walker.generic_visit(node)
    name = _BINOPS.get(type(node.op))
    if name is None:
        return node
    return _operation(walker, node, name, [node.left, node.right])


def visit_unaryop(walker: CallSiteTransformer, node: ast.UnaryOp) -> ast.AST:
    walker.generic_visit(node)
    name = _UNARY.get(type(node.op))
    if name is None or isinstance(node.operand, ast.Constant):
        return node
    return _operation(walker, node, name, [node.operand])


def visit_compare(walker: CallSiteTransformer, node: ast.Compare) -> ast.AST:
    walker.generic_visit(node)
    if len(node.ops) != 1:
        return node
    name = _COMPARE.get(type(node.ops[0]))
    if name is None:
        return node
    return _operation(walker, node, name, [node.left, node.comparators[0]])


def visit_subscript(walker: CallSiteTransformer, node: ast.Subscript) -> ast.AST:
    simple = isinstance(node.value, ast.Name) and simple_index(node.slice)
    walker.generic_visit(node)
    if not isinstance(node.ctx, ast.Load) or walker.is_plain(node.value):
        return node
    if simple:
        site, slots = walker.op_site(node, "__getitem__", [node.value])
        value = copy_node(node.value)
        hooked = hook_call(GETITEM_HOOK, [site, value, as_value(copy_node(node.slice))])
        new = ast.IfExp(guard(plain_types([node.value], slots)), node, hooked)
        return locate_new(new, node)
    site, _ = walker.op_site(node, "__getitem__")
    return locate_new(hook_call(GETITEM_HOOK, [site, node.value, as_value(node.slice)]), node)


def visit_assign(walker: CallSiteTransformer, node: ast.Assign) -> ast.AST | list:
    walker.generic_visit(node)
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
        return node
    target = node.targets[0]
    if not isinstance(target.value, ast.Name) or walker.is_plain(target.value):
        return node
    site, slots = walker.op_site(target, "__setitem__", [target.value])
    # Python evaluates the value first, then the object, then the index
    hooked = ast.Expr(
        hook_call(
            SETITEM_HOOK,
            [
                site,
                copy_node(node.value),
                copy_node(target.value),
                as_value(copy_node(target.slice)),
            ],
        )
    )
    new = ast.If(guard(plain_types([target.value], slots)), [node], [hooked])
    locate_new(new, node)
    return new


def visit_augassign(walker: CallSiteTransformer, node: ast.AugAssign) -> ast.AST:
    target = node.target
    item = (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and not walker.is_plain(target.value)
        and simple_index(target.slice)
    )
    through_attribute = (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and not walker.is_plain(target.value)
        and not any(isinstance(n, ast.NamedExpr) for n in ast.walk(node.value))
    )
    walker.generic_visit(node)
    name = _BINOPS.get(type(node.op))
    if name is None:
        return node
    iname = "__i" + name[2:]
    if item:
        # x[i] += v: the read by the getitem hook, then v, then the in-place operator
        # and the write (in Python's order; x and i, names and simple expressions,
        # are read again for the read, before v can rebind them)
        site, slots = walker.op_site(node, iname, [target.value])
        read_site, _ = walker.op_site(node, "__getitem__")
        key = as_value(copy_node(target.slice))
        read = hook_call(GETITEM_HOOK, [read_site, copy_node(target.value), copy_node(key)])
        args = [site, ast.Constant(iname), copy_node(target.value), key, read]
        hooked = ast.Expr(hook_call(AUGITEM_HOOK, [*args, copy_node(node.value)]))
        new = ast.If(guard(plain_types([target.value], slots)), [node], [hooked])
        return locate_new(new, node)
    if through_attribute:
        return _augmented_attribute(walker, node, target, iname)
    if isinstance(target, ast.Name):
        load = ast.Name(target.id, ast.Load())
        checked = [load, node.value] if isinstance(node.value, ast.Name) else [load]
        site, slots = walker.op_site(node, iname, checked)
        hooked = ast.Assign(
            [ast.Name(target.id, ast.Store())],
            hook_call(
                IOP_HOOK, [site, ast.Constant(iname), copy_node(load), copy_node(node.value)]
            ),
        )
        new = ast.If(guard(plain_types(checked, slots)), [node], [hooked])
        return locate_new(new, node)
    return node


def _augmented_attribute(
    walker: CallSiteTransformer, node: ast.AugAssign, target: ast.Attribute, iname: str
) -> ast.AST:
    """``p.data += v`` as ``p.data = iop(p.data, v)``, Python's own order (the read of
    ``p.data``, then ``v``, the in-place operator, the write): the read recorded as an
    attribute (when it is one porter records) and the operator as itself. ``p`` is a
    name, read again for the write; a value that could rebind it (``:=``) is left
    alone. No slot guard: the hooks settle a plain object's attribute themselves."""
    read: ast.expr = ast.Attribute(copy_node(target.value), target.attr, ast.Load())
    if walker.attributes and target.attr in RECORDED_ATTRIBUTES:
        read_site, _ = walker.op_site(target, target.attr)
        read = hook_call(ATTR_HOOK, [read_site, copy_node(target.value), ast.Constant(target.attr)])
    site, _ = walker.op_site(node, iname)
    write = ast.Attribute(copy_node(target.value), target.attr, ast.Store())
    hooked = ast.Assign(
        [write], hook_call(IOP_HOOK, [site, ast.Constant(iname), read, copy_node(node.value)])
    )
    return locate_new(hooked, node)


def visit_attribute(walker: CallSiteTransformer, node: ast.Attribute) -> ast.AST:
    walker.generic_visit(node)
    if (
        not walker.attributes
        or node.attr not in RECORDED_ATTRIBUTES
        or not isinstance(node.ctx, ast.Load)
        or walker.is_plain(node.value)
    ):
        return node
    site, slots = walker.op_site(node, node.attr, [node.value])
    hooked = hook_call(ATTR_HOOK, [site, copy_node(node.value), ast.Constant(node.attr)])
    if slots:
        new = ast.IfExp(guard(plain_types([node.value], slots)), node, hooked)
        return locate_new(new, node)
    return locate_new(hooked, node)
