"""Rewrites of usages that are no call of the table: an integer-array index into the first
axis of an array of two or more axes (``emb = C[X]``) and ``len()`` of an array, written
with the person's expressions.

NumPy and torch give ``C[X]`` the shape ``X.shape + C.shape[1:]``; the standard indexes
with integer arrays only when every axis gets one (2024.12), and its ``take`` takes a 1-D
index along one axis. A 1-D ``X`` is ``xp.take(C, X, axis=0)``; any other rank goes
through a flat index and back to that shape. ``len(x)`` is ``x.shape[0]``: the standard's
arrays have no ``__len__``.
"""

from __future__ import annotations

import ast

__all__ = [
    "EVERY_AXIS",
    "INDEX_EXAMPLES",
    "LENGTH",
    "RANGE_PARTS",
    "ROWS",
    "ROW_BUILTINS",
    "TAKE_FLAT",
    "TAKE_ROWS",
    "TAKE_ALONG",
    "TAKE_LIST",
    "TAKE_TEMPLATES",
    "ZIP_ROWS",
    "length_rewrite",
    "read_twice",
    "take_rewrite",
    "take_template",
    "usage_from_source",
]

#: ``C[X]`` with a 1-D integer array ``X``
TAKE_ROWS = "xp.take({x}, {idx}, axis=0)"
#: ``C[X]`` with an integer array ``X`` of any other rank (0-d included)
TAKE_FLAT = (
    "xp.reshape(xp.take({x}, xp.reshape({idx}, (-1,)), axis=0), "
    "(*{idx_atom}.shape, *{x_atom}.shape[1:]))"
)
#: the templates of ``C[X]``, by the rank of ``X``
#: ``x[[3, 7, 4]]``: a Python list of integers indexing the first axis
TAKE_LIST = "xp.take({x}, xp.asarray({idx}), axis=0)"
#: ``X[1:, [2, 0, 1]]``: one list of integers among integers and slices, taken along its
#: axis from the array the other parts index (``xp.take(X[1:, :, ...], xp.asarray([2, 0,
#: 1]), axis=1)``); the axis counts the parts before the list that keep theirs (slices)
TAKE_ALONG = "xp.take({x}[{rest}], xp.asarray({idx}), axis={axis})"
#: ``logprobs[range(n), Yb]``: a ``range`` among integer arrays and integers, every axis
#: indexed: the standard indexes with integer arrays there (2024.12), not with a range;
#: ``xp.arange`` gives the same integers as an array
RANGE_PARTS = "{x}[{parts}]"
TAKE_TEMPLATES = (TAKE_ROWS, TAKE_FLAT, TAKE_LIST, TAKE_ALONG, RANGE_PARTS)
#: ``len(x)``
LENGTH = "{x_atom}.shape[0]"
#: ``enumerate(x)``, ``list(x)``, ``tuple(x)``, ``iter(x)`` of an array: over its rows,
#: which the standard's arrays give through ``xp.unstack`` (they are not iterable)
ROWS = "{name}(xp.unstack({x}))"
#: the builtins whose one argument `ROWS` takes the rows of
ROW_BUILTINS = ("enumerate", "list", "tuple", "iter")
#: ``zip(X, Y)`` of arrays: the rows of each (``for x, y in zip(Xtr[:20], Ytr[:20])``)
ZIP_ROWS = "zip({rows})"
#: ``x2[0]`` of a 2-D ``x2``: an index of fewer axes than the array has, ended with ``...``
#: (NumPy and torch fill the rest with ``:``, the standard asks for ``...``)
EVERY_AXIS = "{x}[{parts}, ...]"
#: the examples each template is verified on, on every installed backend: (array, index)
#: as data, ``x[i]`` on NumPy the expected result
INDEX_EXAMPLES = (
    ([[0.5, 1.0], [2.0, -3.0], [4.0, 5.5]], [2, 0, 2]),
    ([[0.5, 1.0], [2.0, -3.0], [4.0, 5.5]], [[2, 0], [1, 1], [0, 2]]),
    ([[[0.5, 1.0], [2.0, -3.0]], [[4.0, 5.5], [6.0, 7.0]]], [[[1], [0]]]),
    ([[0.5, 1.0], [2.0, -3.0], [4.0, 5.5]], 1),
    ([[0.5, 1.0], [2.0, -3.0], [4.0, 5.5]], [-1, 0]),
)


def take_template(index_ndim: int | None) -> str:
    """The template for ``C[X]`` with an integer array ``X`` of ``index_ndim`` axes."""
    return TAKE_ROWS if index_ndim == 1 else TAKE_FLAT


def _atom(text: str) -> str:
    """``text`` as an operand that an attribute read may follow (``(a + b).shape``)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return f"({text.strip()})"
    atoms = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Tuple)
    if isinstance(node, atoms) and not (isinstance(node, ast.Constant) and text.strip()[:1] == "-"):
        return text.strip()
    return f"({text.strip()})"


def take_rewrite(template: str, x: str, idx: str) -> str:
    """``template`` (`TAKE_ROWS`, `TAKE_FLAT`, `TAKE_LIST`) over the array ``x`` and the index ``idx`` as
    written."""
    x, idx = x.strip(), idx.strip()
    return template.format(x=x, idx=idx, x_atom=_atom(x), idx_atom=_atom(idx))


def length_rewrite(x: str) -> str:
    """``len(x)`` as ``x.shape[0]``, ``x`` as written."""
    return LENGTH.format(x_atom=_atom(x))


def read_twice(template: str, text: str) -> str | None:
    """The operand of ``text`` (``C[X]``) that ``template`` evaluates twice and that calls
    something (``C[torch.randint(...)]``: two calls would draw twice), or None: the flat
    form reads the index and the array again for their shapes. A creation from data of
    what calls nothing (``C[torch.tensor([context])]``) gives the same array twice."""
    if template != TAKE_FLAT:
        return None
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Subscript):
        return None
    for part in (node.value, node.slice):
        if _from_data(part):
            continue
        if any(isinstance(n, ast.Call | ast.NamedExpr | ast.Lambda) for n in ast.walk(part)):
            return ast.get_source_segment(text.strip(), part)
    return None


#: the creations from data whose second call gives the same array as the first
#: (``C[torch.tensor([context])]``, makemore's sampling loop)
FROM_DATA = frozenset({"tensor", "asarray", "array", "as_tensor"})


def _from_data(part: ast.expr) -> bool:
    """Whether ``part`` is one creation from data (`FROM_DATA`, called on a module) whose
    arguments call nothing: read twice, it is the same array twice."""
    if not (isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute)):
        return False
    if part.func.attr not in FROM_DATA or not isinstance(part.func.value, ast.Name):
        return False
    inner = [*part.args, *(k.value for k in part.keywords)]
    return not any(
        isinstance(n, ast.Call | ast.NamedExpr | ast.Lambda | ast.Starred)
        for arg in inner
        for n in ast.walk(arg)
    )


def usage_from_source(template: str, text: str) -> str | None:
    """``template`` (`TAKE_ROWS`, `TAKE_FLAT`, `LENGTH`, `ROWS`, `EVERY_AXIS`) over the
    expression ``text`` as written (``C[X]``, ``len(X)``, ``enumerate(X)``, ``x2[0]``), or
    None when ``text`` is not that usage."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    source = text.strip()

    def segment(part: ast.AST) -> str:
        return ast.get_source_segment(source, part) or ""

    if template == TAKE_ALONG:
        return _take_along(node, segment)
    if template == RANGE_PARTS:
        return _range_parts(node, segment)
    if template in TAKE_TEMPLATES:
        if not isinstance(node, ast.Subscript) or isinstance(node.slice, ast.Slice | ast.Tuple):
            return None
        if isinstance(node.slice, ast.Starred):
            return None
        return take_rewrite(template, segment(node.value), segment(node.slice))
    if template == EVERY_AXIS:
        if not isinstance(node, ast.Subscript):
            return None
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not parts or any(
            isinstance(p, ast.Starred) or (isinstance(p, ast.Constant) and p.value is Ellipsis)
            for p in parts
        ):
            return None
        parts_text = ", ".join(map(segment, parts))
        return EVERY_AXIS.format(x=_atom(segment(node.value)), parts=parts_text)
    if template == ROWS:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return None
        if node.func.id not in ROW_BUILTINS or node.keywords or len(node.args) != 1:
            return None
        if isinstance(node.args[0], ast.Starred):
            return None
        return ROWS.format(name=node.func.id, x=segment(node.args[0]))
    if template == ZIP_ROWS:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return None
        if node.func.id != "zip" or node.keywords or not node.args:
            return None
        if any(isinstance(a, ast.Starred) for a in node.args):
            return None
        return ZIP_ROWS.format(rows=", ".join(f"xp.unstack({segment(a)})" for a in node.args))
    if template == LENGTH:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return None
        if node.func.id != "len" or node.keywords or len(node.args) != 1:
            return None
        if isinstance(node.args[0], ast.Starred):
            return None
        return length_rewrite(segment(node.args[0]))
    return None


def _take_along(node: ast.expr, segment) -> str | None:
    """`TAKE_ALONG` over ``X[1:, [2, 0, 1]]`` as written: the one list part (of integer
    literals) replaced by ``:`` in the rest of the index, taken along the axis it
    indexes of what the rest leaves (integers before it drop theirs); None for any other
    index (two lists, an array, ``None``, ``...``, a step that is no literal)."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple):
        return None
    parts = node.slice.elts
    lists = [i for i, p in enumerate(parts) if isinstance(p, ast.List)]
    if len(lists) != 1:
        return None
    at = lists[0]
    chosen = parts[at]
    if not chosen.elts or not all(_int_literal(e) for e in chosen.elts):  # type: ignore[attr-defined]
        return None
    ints = [i for i, p in enumerate(parts) if i != at and not isinstance(p, ast.Slice)]
    between = [i for i, p in enumerate(parts) if isinstance(p, ast.Slice)]
    if any(min(i, at) < s < max(i, at) for i in ints for s in between):
        return None  # NumPy moves the broadcast axis first where a slice parts them
    kept = 0
    rest = []
    for i, part in enumerate(parts):
        if i == at:
            rest.append(":")
        elif isinstance(part, ast.Slice):
            rest.append(segment(part))
            kept += i < at
        elif isinstance(part, ast.Constant | ast.UnaryOp) and _int_literal(part):
            rest.append(segment(part))
        else:
            return None  # a name may hold an array or None: the run's other forms say
    return TAKE_ALONG.format(
        x=_atom(segment(node.value)), rest=", ".join([*rest, "..."]), idx=segment(chosen), axis=kept
    )


def _range_parts(node: ast.expr, segment) -> str | None:
    """`RANGE_PARTS` over ``logprobs[range(n), Yb]`` as written: each ``range(...)`` part
    of the index (positional arguments only) as ``xp.arange(...)``; None where no part
    is one."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple):
        return None
    parts, found = [], False
    for part in node.slice.elts:
        if (
            isinstance(part, ast.Call)
            and isinstance(part.func, ast.Name)
            and part.func.id == "range"
            and not part.keywords
            and 1 <= len(part.args) <= 3
            and not any(isinstance(a, ast.Starred) for a in part.args)
        ):
            parts.append(f"xp.arange({', '.join(segment(a) for a in part.args)})")
            found = True
        else:
            parts.append(segment(part))
    if not found:
        return None
    return RANGE_PARTS.format(x=_atom(segment(node.value)), parts=", ".join(parts))


def _int_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int
