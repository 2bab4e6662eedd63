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
        "fill", "sort", "resize", "put", "itemset", "setflags", "partition", "byteswap",
        "setfield", "__setitem__", "__delitem__", "__iadd__", "__isub__", "__imul__",
        "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
        "add", "discard", "popitem", "reverse", "difference_update", "intersection_update",
        "symmetric_difference_update",
    }
)  # fmt: skip
#: functions that write into their first argument (``np.copyto(dst, src)``, ``np.add.at``)
INPLACE_FUNCTIONS = frozenset(
    {"copyto", "put", "place", "putmask", "fill_diagonal", "shuffle", "at", "put_along_axis"}
)
#: keywords naming an output buffer
OUT_KEYWORDS = frozenset({"out"})

#: calls whose result is a new array that shares nothing with the arguments; anything
#: else (``reshape``, ``asarray``, ``astype(copy=False)``, ``x.to(...)``, a user
#: function) may return a view of, or the very object, it was given
FRESH_CALLS = frozenset(
    {
        "abs", "acos", "acosh", "add", "all", "any", "arange", "argmax", "argmin",
        "argsort", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
        "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
        "bitwise_xor", "concat", "concatenate", "copysign", "cos", "cosh",
        "count_nonzero", "cumulative_prod", "cumulative_sum", "cumsum", "cumprod", "diff",
        "divide", "empty", "empty_like", "equal", "exp", "expm1", "eye", "full",
        "full_like", "greater", "greater_equal", "hypot", "isfinite", "isinf", "isnan",
        "less", "less_equal", "linspace", "log", "log10", "log1p", "log2", "logaddexp",
        "logical_and", "logical_not", "logical_or", "logical_xor", "matmul", "max",
        "maximum", "mean", "min", "minimum", "multiply", "negative", "nextafter",
        "nonzero", "not_equal", "ones", "ones_like", "outer", "pow", "prod",
        "reciprocal", "remainder", "repeat", "roll", "searchsorted", "sign", "signbit",
        "sin", "sinh", "sort", "sqrt", "square", "stack", "std", "subtract", "sum",
        "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "tril", "triu",
        "unique_all", "unique_counts", "unique_inverse", "unique_values", "var",
        "vecdot", "where", "zeros", "zeros_like", "dot", "einsum", "norm",
        "vector_norm", "matrix_norm", "inv", "solve", "det", "svd", "qr", "eigh",
        "cholesky", "clone", "array", "tensor", "item", "tolist", "len",
        "float", "int", "bool", "complex", "str", "repr", "isinstance", "print",
        "range", "type", "rand", "randn", "random", "normal", "uniform",
    }
)  # fmt: skip


def names_in(node: ast.AST) -> set[str]:
    """Every name an expression reads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def roots(node: ast.AST | None) -> set[str]:
    """Names whose object the value of ``node`` may be, contain, or be a view of."""
    if node is None:
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute | ast.Subscript | ast.Starred):
        return roots(node.value)
    if isinstance(node, ast.NamedExpr):
        return roots(node.value) | {node.target.id}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(roots(e) for e in node.elts))
    if isinstance(node, ast.Dict):
        return set().union(*(roots(v) for v in node.values))
    if isinstance(node, ast.IfExp):
        return roots(node.body) | roots(node.orelse)
    if isinstance(node, ast.BoolOp):
        return set().union(*(roots(v) for v in node.values))
    if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Compare | ast.Constant | ast.JoinedStr):
        return set()  # operators make new arrays; in-place operators are statements
    if isinstance(node, ast.Lambda):
        return set()
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        return set().union(*(roots(g.iter) for g in node.generators))  # rows are views
    if isinstance(node, ast.Call):
        name = callee_name(node.func)
        if name in FRESH_CALLS:
            return set()
        found = roots(node.func.value) if isinstance(node.func, ast.Attribute) else set()
        for arg in node.args:
            found |= roots(arg)
        for kw in node.keywords:
            found |= roots(kw.value)
        return found
    return set().union(*(roots(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)))


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


def call_writes(call: ast.Call) -> set[str]:
    """Names that a call may write into: its ``out=`` buffers, the receiver of an in-place
    method, the first argument of an in-place function."""
    written: set[str] = set()
    for kw in call.keywords:
        if kw.arg in OUT_KEYWORDS:
            written |= roots(kw.value)
    func, name = call.func, callee_name(call.func)
    if name is None:
        return written
    in_place_name = _trailing_underscore(name)
    # ``s.add(item)`` fills a set; ``xp.add(a, b)`` is the elementwise function
    method = name in INPLACE_METHODS and not (name == "add" and len(call.args) != 1)
    if isinstance(func, ast.Attribute) and (in_place_name or method):
        written |= roots(func.value)
    if (in_place_name or name in INPLACE_FUNCTIONS) and call.args:
        written |= roots(call.args[0])
    return written


def passed_names(call: ast.Call) -> set[str]:
    """Names whose objects a call hands to its callee (which may then modify them)."""
    found: set[str] = set()
    for arg in call.args:
        found |= roots(arg)
    for kw in call.keywords:
        found |= roots(kw.value)
    return found


def close(names: set[str], aliases: dict[str, set[str]]) -> set[str]:
    """``names`` with every name they may alias, transitively."""
    done, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in done:
            done.add(name)
            todo.extend(aliases.get(name, ()))
    return done
