"""The AST rewrite that routes a cell's calls through the recorder.

``f(a, k=b)`` becomes ``__porter_call__((cell, line, col, "f"), f, a, k=b)`` and a few array
attributes (``x.T``, ``x.device``…) become ``__porter_attr__((cell, line, col, None), x, "T")``.
The site is a constant tuple, so marking a call costs nothing at run time. Calls that use
their caller's frame (``super()``, ``locals()``…) and IPython's own calls
(``get_ipython().run_line_magic(...)``) are left alone, so that ``%time x = ...`` and
``!cmd`` lines keep working.
"""

from __future__ import annotations

import ast

CALL_HOOK = "__porter_call__"
ATTR_HOOK = "__porter_attr__"

#: builtins that look at the calling frame: routing them through a hook would change them
_FRAME_CALLS = frozenset(
    {"super", "locals", "vars", "globals", "dir", "eval", "exec", "breakpoint", "get_ipython"}
)
#: array attributes worth recording (placement, shape semantics, vendor-specific flags)
RECORDED_ATTRIBUTES = frozenset(
    {"T", "mT", "H", "mH", "device", "is_cuda", "real", "imag", "flat", "data"}
)


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


class CallSiteTransformer(ast.NodeTransformer):
    """Rewrites the calls of one cell; ``cell`` identifies the cell in every site tuple."""

    def __init__(self, cell: int | str, *, attributes: bool = True):
        self.cell = cell
        self.attributes = attributes
        self.sites = 0

    def generic_visit(self, node: ast.AST) -> ast.AST:
        # ast.NodeTransformer's own walk costs ~5 us a node: this one visits only what can
        # hold a call, and replaces nodes in place (the rewrite never deletes a node)
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST) and item._fields:
                        value[i] = self.visit(item)
            elif isinstance(value, ast.AST) and value._fields:
                setattr(node, field, self.visit(value))
        return node

    def visit(self, node: ast.AST) -> ast.AST:
        kind = type(node)
        if kind is ast.Call:
            return self.visit_Call(node)
        if kind is ast.Attribute:
            return self.visit_Attribute(node)
        return self.generic_visit(node)

    def _site(self, node: ast.AST, spelled: str | None = None) -> ast.Constant:
        self.sites += 1
        return _at(ast.Constant((self.cell, node.lineno, node.col_offset, spelled)), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if _root_name(func) == "get_ipython" or (
            isinstance(func, ast.Name) and func.id in _FRAME_CALLS
        ):
            # leave IPython's own calls as they are, but still record calls in their arguments
            # only when they are not magics (whose arguments are source text)
            if _root_name(func) == "get_ipython":
                return node
            self.generic_visit(node)
            return node
        self.generic_visit(node)
        new = ast.Call(
            func=_at(ast.Name(CALL_HOOK, ast.Load()), node),
            args=[self._site(node, _spelled(func)), node.func, *node.args],
            keywords=node.keywords,
        )
        return _at(new, node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if (
            not self.attributes
            or node.attr not in RECORDED_ATTRIBUTES
            or not isinstance(node.ctx, ast.Load)
        ):
            return node
        new = ast.Call(
            func=_at(ast.Name(ATTR_HOOK, ast.Load()), node),
            args=[self._site(node), node.value, _at(ast.Constant(node.attr), node)],
            keywords=[],
        )
        return _at(new, node)


def transform(tree: ast.Module, cell: int | str) -> ast.Module:
    """Rewrite ``tree`` in place for recording (every new node is located where the call
    was, so no pass over the whole tree is needed to fix locations)."""
    return CallSiteTransformer(cell).visit(tree)
