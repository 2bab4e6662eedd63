"""What an expression may alias and which names a call may write to, read from the AST.

A replay runs on inputs that may share memory with the person's arrays (a zero-copy
DLPack view), so it must know which inputs the cell could write to, also through another
name (``y = x[1:]; y[0] = 0`` writes into ``x``). These rules err on the side of "may":
a wrong "may alias" costs one copy of an input, a wrong "cannot" corrupts the person's
data.
"""

from __future__ import annotations

import ast

#: methods that modify their receiver (NumPy, PyTorch, CuPy, and Python containers, whose
#: in-place change would reach the person's own list or dict through a shared object)
INPLACE_METHODS = frozenset(
    {
        "fill",
        "sort",
        "resize",
        "put",
        "itemset",
        "setflags",
        "partition",
        "byteswap",
        "setfield",
        "__setitem__",
        "__delitem__",
        "__iadd__",
        "__isub__",
        "__imul__",
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
        "popitem",
        "reverse",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
    }
)
#: functions that write into their first argument (``np.copyto(dst, src)``, ``np.add.at``)
INPLACE_FUNCTIONS = frozenset(
    {
        "copyto",
        "put",
        "place",
        "putmask",
        "fill_diagonal",
        "shuffle",
        "at",
        "put_along_axis",
        "setattr",
        "delattr",
    }
)
#: in-place methods that are also namespace functions: positional arguments of the method
_NAMESPACE_TWINS = {"add": 1, "sort": 0}
#: keywords naming an output buffer
OUT_KEYWORDS = frozenset({"out"})

#: calls whose result is a new array that shares nothing with the arguments; anything
#: else (``reshape``, ``asarray``, ``astype(copy=False)``, ``x.to(...)``, a user
#: function) may return a view of, or the very object, it was given
FRESH_CALLS = frozenset(
    {
        "abs",
        "acos",
        "acosh",
        "add",
        "all",
        "any",
        "arange",
        "argmax",
        "argmin",
        "argsort",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "bitwise_and",
        "bitwise_invert",
        "bitwise_left_shift",
        "bitwise_or",
        "bitwise_right_shift",
        "bitwise_xor",
        "concat",
        "concatenate",
        "copysign",
        "cos",
        "cosh",
        "count_nonzero",
        "cumulative_prod",
        "cumulative_sum",
        "cumsum",
        "cumprod",
        "diff",
        "divide",
        "empty",
        "empty_like",
        "equal",
        "exp",
        "expm1",
        "eye",
        "full",
        "full_like",
        "greater",
        "greater_equal",
        "hypot",
        "isfinite",
        "isinf",
        "isnan",
        "less",
        "less_equal",
        "linspace",
        "log",
        "log10",
        "log1p",
        "log2",
        "logaddexp",
        "logical_and",
        "logical_not",
        "logical_or",
        "logical_xor",
        "matmul",
        "max",
        "maximum",
        "mean",
        "min",
        "minimum",
        "multiply",
        "negative",
        "nextafter",
        "nonzero",
        "not_equal",
        "ones",
        "ones_like",
        "outer",
        "pow",
        "prod",
        "reciprocal",
        "remainder",
        "repeat",
        "roll",
        "searchsorted",
        "sign",
        "signbit",
        "sin",
        "sinh",
        "sort",
        "sqrt",
        "square",
        "stack",
        "std",
        "subtract",
        "sum",
        "take",
        "take_along_axis",
        "tan",
        "tanh",
        "tensordot",
        "tile",
        "tril",
        "triu",
        "unique_all",
        "unique_counts",
        "unique_inverse",
        "unique_values",
        "var",
        "vecdot",
        "where",
        "zeros",
        "zeros_like",
        "dot",
        "einsum",
        "norm",
        "vector_norm",
        "matrix_norm",
        "inv",
        "solve",
        "det",
        "svd",
        "qr",
        "eigh",
        "cholesky",
        "clone",
        "array",
        "tensor",
        "item",
        "tolist",
        "len",
        "float",
        "int",
        "bool",
        "complex",
        "str",
        "repr",
        "isinstance",
        "print",
        "range",
        "type",
        "rand",
        "randn",
        "random",
        "normal",
        "uniform",
    }
)


#: how a name's object relates to another's: "same" (the object or a view of it),
#: "element" (something inside it: ``x[0]``, ``x.attr``, a row), "held" (a container
#: that holds it: ``[x]``). Merging keeps the kind that reaches the most.
Kind = str
_RANK = {"held": 0, "same": 1, "element": 2}
Roots = dict[str, Kind]


def merge(into: Roots, other: Roots) -> Roots:
    for name, kind in other.items():
        if name not in into or _RANK[kind] > _RANK[into[name]]:
            into[name] = kind
    return into


def as_kind(found: Roots, kind: Kind) -> Roots:
    return dict.fromkeys(found, kind)


def roots(node: ast.AST | None) -> Roots:
    """Names whose objects the value of ``node`` may be, be inside of, or hold."""
    if node is None:
        return {}
    if isinstance(node, ast.Name):
        return {node.id: "same"}
    if isinstance(node, ast.Attribute | ast.Subscript):
        return as_kind(roots(node.value), "element")
    if isinstance(node, ast.Starred):
        return roots(node.value)
    if isinstance(node, ast.NamedExpr):
        return merge(roots(node.value), {node.target.id: "same"})
    if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
        found: Roots = {}
        for elt in node.values if isinstance(node, ast.Dict) else node.elts:
            merge(found, roots(elt))
        return as_kind(found, "held")
    if isinstance(node, ast.IfExp | ast.BoolOp):
        found = {}
        for part in [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.values:
            merge(found, roots(part))
        return found
    if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Compare | ast.Constant | ast.JoinedStr):
        return {}  # operators make new arrays; in-place operators are statements
    if isinstance(node, ast.Lambda):
        return {}
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        found = {}
        for gen in node.generators:  # the result holds the rows it iterated over
            merge(found, roots(gen.iter))
        return as_kind(found, "held")
    if isinstance(node, ast.Call):
        if callee_name(node.func) in FRESH_CALLS:
            return {}
        found = roots(node.func.value) if isinstance(node.func, ast.Attribute) else {}
        for part in [*node.args, *(k.value for k in node.keywords)]:
            merge(found, roots(part))
        return as_kind(found, "element")  # a view, the argument itself, or a part of it
    found = {}
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            merge(found, roots(child))
    return as_kind(found, "element")


def seeds(node: ast.AST | None) -> dict[str, bool]:
    """Names written into when ``node``'s object is: name -> whether the write may go
    below the name's own object (into something it holds)."""
    return {name: kind != "same" for name, kind in roots(node).items()}


def callee_name(func: ast.expr) -> str | None:
    """The last name of what is called: ``sum`` for ``xp.sum``, ``f`` for ``f``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _trailing_underscore(name: str) -> bool:
    """PyTorch's in-place spelling (``add_``, ``normal_``), not ``_private`` or dunders."""
    return name.endswith("_") and not name.startswith("_") and len(name) > 1


def add_seeds(into: dict[str, bool], more: dict[str, bool]) -> None:
    for name, deep in more.items():
        into[name] = into.get(name, False) or deep


def call_writes(call: ast.Call) -> dict[str, bool]:
    """What a call may write into (as `seeds`): its ``out=`` buffers, the receiver of an
    in-place method, the first argument of an in-place function."""
    written: dict[str, bool] = {}
    for kw in call.keywords:
        if kw.arg in OUT_KEYWORDS:
            value = kw.value  # out=(a, b) names two buffers, each written directly
            for part in value.elts if isinstance(value, ast.Tuple | ast.List) else [value]:
                add_seeds(written, seeds(part))
    func, name = call.func, callee_name(call.func)
    if name is None:
        return written
    in_place_name = _trailing_underscore(name)
    # ``s.add(item)`` fills a set and ``x.sort()`` sorts in place, but ``xp.add(a, b)`` and
    # ``xp.sort(x)`` are the namespace's functions, which make new arrays
    twin = _NAMESPACE_TWINS.get(name)
    method = name in INPLACE_METHODS and (twin is None or len(call.args) == twin)
    if isinstance(func, ast.Attribute) and (in_place_name or method):
        add_seeds(written, seeds(func.value))
    if (in_place_name or name in INPLACE_FUNCTIONS) and call.args:
        add_seeds(written, seeds(call.args[0]))
    return written


def passed_names(call: ast.Call) -> set[str]:
    """Names whose objects a call hands to its callee (which may then modify them)."""
    found: Roots = {}
    for part in [*call.args, *(k.value for k in call.keywords)]:
        merge(found, roots(part))
    return set(found)


def reach(start: dict[str, bool], aliases: dict[str, Roots]) -> dict[str, bool]:
    """Every name a write may reach from ``start`` (name -> deep), following aliases:
    a write into a view reaches its base, one into an element reaches its container
    deeply, and only a deep write into a container reaches what it holds."""
    seen: dict[str, bool] = {}
    todo = list(start.items())
    while todo:
        name, deep = todo.pop()
        if name in seen and (seen[name] or not deep):
            continue
        seen[name] = deep or seen.get(name, False)
        for other, kind in aliases.get(name, {}).items():
            if kind == "same":
                todo.append((other, deep))
            elif kind == "element" or deep:
                todo.append((other, True))
    return seen
