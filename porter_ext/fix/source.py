"""What the source says a module's names are: the scopes, the imports, which
expressions are arrays (and of which library) and which argument values are known.

`porter_ext.fix.checks` judges calls on top of this model; ``porter lint`` and the cell
codemod (`porter_ext.fix.rewrite`) share it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from types import MappingProxyType

from porter_ext.fix.static import (
    PYTHON_TYPES,
    UNKNOWN,
    ArrayValue,
    DeviceValue,
    NamedValue,
    callee_of,
    is_helper,
)
from porter_ext.spec.replacements import find
from porter_ext.spec.standard import Standard

#: standard functions whose result is not one array (tuples, dtypes, booleans, info)
_NOT_ONE_ARRAY = frozenset(
    {
        "isdtype",
        "result_type",
        "can_cast",
        "finfo",
        "iinfo",
        "broadcast_shapes",
        "__array_namespace_info__",
        "unstack",
        "broadcast_arrays",
        "meshgrid",
        "nonzero",
        "unique_all",
        "unique_counts",
        "unique_inverse",
        "frexp",
        "linalg.svd",
        "linalg.eigh",
        "linalg.eig",
        "linalg.qr",
        "linalg.slogdet",
    }
)
#: attributes of an array that are arrays of the same library
_ARRAY_ATTRIBUTES = frozenset({"T", "mT"})
#: attributes of a parameter that show it is used as an array
ARRAY_USES = frozenset({"shape", "dtype", "device", "ndim", "T", "mT", "size"})
#: standard parameters that take one array
_ARRAY_PARAMS = frozenset({"x", "x1", "x2"})


class _Namespace:
    """The value of ``xp = array_namespace(...)`` (or a parameter named ``xp``)."""


NAMESPACE = _Namespace()


class SourceModel:
    """The names of one module, scope by scope, as the source binds them."""

    #: calls a run showed to return an array, by where they are written: (line, column
    #: as ast counts it, the callee's last name) → library; what the source cannot tell
    #: (``torch.sigmoid(x)``, ``model(x)``) so that the calls on them are judged too
    results: Mapping[tuple[int, int, str], str] = MappingProxyType({})
    #: method calls a run saw on arrays, keyed alike: their receivers are arrays
    #: (``a.flatten()`` on a parameter ``a``)
    receivers: Mapping[tuple[int, int, str], str] = MappingProxyType({})

    def __init__(
        self, imports: dict[str, str], std: Standard, arrays: dict[str, str] | None = None
    ) -> None:
        """``arrays`` names what a run showed to be arrays (name → library): parameters and
        names from other cells that the source alone cannot type."""
        self.imports = imports
        self.std = std
        self.hints = {name: ArrayValue(lib) for name, lib in (arrays or {}).items()}
        self.scopes: list[dict[str, object]] = [dict(self.hints), {}]
        #: lines of the source before the tree's first: a big file's piece is parsed on its
        #: own (numbered from 1), and its line n is line ``n + line_offset`` of the file
        self.line_offset = 0

    def lookup(self, name: str) -> object:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _array_positions(self, func: ast.expr) -> frozenset[int] | range:
        """The positions where a call takes arrays: every one for the helpers
        (``array_namespace(a, b)``), the standard's ``x``/``x1``/``x2`` otherwise."""
        dotted = self.dotted_of(func)
        if dotted is not None and is_helper(dotted):
            return range(64)
        name = self.namespace_name(func) if dotted is None else None
        if dotted is not None:
            callee = callee_of(dotted)
            name = callee.name if callee is not None else None
        spec = self.std.functions.get(name) if name is not None else None
        if spec is None:
            return frozenset()
        positional = [p.name for p in spec.params if p.kind.startswith("positional")]
        return frozenset(i for i, p in enumerate(positional) if p in _ARRAY_PARAMS)

    # -- what expressions are ---------------------------------------------------------
    def dotted_of(self, node: ast.expr) -> str | None:
        """The fully qualified name an imported name (or attribute of one) stands for."""
        if isinstance(node, ast.Name):
            if self.lookup(node.id) is not None:
                return None  # a local binding shadows the import
            return self.imports.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted_of(node.value)
            return f"{base}.{node.attr}" if base is not None else None
        return None

    def namespace_name(self, func: ast.expr) -> str | None:
        """``"linalg.norm"`` for ``xp.linalg.norm`` where ``xp`` is an array namespace."""
        parts: list[str] = []
        node = func
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not parts or not isinstance(node, ast.Name) or self.lookup(node.id) is not NAMESPACE:
            return None
        return ".".join(reversed(parts))

    def _returns_array(self, library: str, kind: str, name: str) -> bool:
        if name in self.std.functions:
            return name not in _NOT_ONE_ARRAY
        if kind == "method" and name in self.std.array_methods:
            return True
        for entry in find(library, kind, name):
            std_name = entry.standard_name
            if std_name in self.std.functions and std_name not in _NOT_ONE_ARRAY:
                return True
            if entry.suggestion.startswith("xp.asarray(") or entry.suggestion == "x":
                return True  # a conversion, or the same array (``x.contiguous()``)
        return False

    def array_of(self, node: ast.expr | None) -> object:
        """An `ArrayValue`, `NAMESPACE`, or None: what the source shows ``node`` to be."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            value = self.lookup(node.id)
            return value if isinstance(value, ArrayValue) or value is NAMESPACE else None
        if isinstance(node, ast.Call):
            return self._call_result(node)
        if isinstance(node, ast.BinOp):
            return self._array(node.left) or self._array(node.right)
        if isinstance(node, ast.UnaryOp):
            return self._array(node.operand)
        if isinstance(node, ast.Compare):  # an array compared: an array of bools
            return next(filter(None, map(self._array, [node.left, *node.comparators])), None)
        if isinstance(node, ast.Subscript):
            return self._array(node.value)
        if isinstance(node, ast.IfExp):
            return self._array(node.body) or self._array(node.orelse)
        if isinstance(node, ast.Attribute) and node.attr in _ARRAY_ATTRIBUTES:
            return self._array(node.value)
        return None

    def _array(self, node: ast.expr) -> ArrayValue | None:
        value = self.array_of(node)
        return value if isinstance(value, ArrayValue) else None

    def _call_result(self, node: ast.Call) -> object:
        func = node.func
        dotted = self.dotted_of(func)
        if dotted is not None:
            if is_helper(dotted):
                return NAMESPACE if dotted.rpartition(".")[2] == "array_namespace" else None
            callee = callee_of(dotted)
            if callee is not None and self._returns_array(callee.library, "function", callee.name):
                return ArrayValue(callee.library)
            return self._recorded_result(node)
        name = self.namespace_name(func)
        if name is not None and self._returns_array("*", "function", name):
            return ArrayValue("*")
        if isinstance(func, ast.Attribute):
            receiver = self._array(func.value) or self.recorded_receiver(node)
            if receiver is not None and self._returns_array(receiver.library, "method", func.attr):
                return receiver
        return self._recorded_result(node)

    def recorded_receiver(self, node: ast.Call) -> ArrayValue | None:
        """The receiver of a method call a run saw on an array of a library."""
        if not self.receivers or not isinstance(node.func, ast.Attribute):
            return None
        where = (node.lineno + self.line_offset, node.col_offset, node.func.attr)
        library = self.receivers.get(where)
        return ArrayValue(library) if library is not None else None

    def _recorded_result(self, node: ast.Call) -> ArrayValue | None:
        if not self.results:
            return None
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        library = self.results.get((node.lineno + self.line_offset, node.col_offset, name or ""))
        return ArrayValue(library) if library is not None else None

    def value_of(self, node: ast.expr) -> object:
        """A call argument as far as the source tells it."""
        if isinstance(node, ast.Constant) and node.value is not Ellipsis:
            return node.value
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub | ast.UAdd)
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, int | float)
        ):
            value = node.operand.value
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Tuple):
            return tuple(self.value_of(e) for e in node.elts)
        if isinstance(node, ast.List):
            return [self.value_of(e) for e in node.elts]
        if isinstance(node, ast.Name) and node.id in PYTHON_TYPES and self.lookup(node.id) is None:
            return PYTHON_TYPES[node.id]
        array = self._array(node)
        if array is not None:
            return array
        dotted = self.dotted_of(node)
        if dotted is not None:
            return NamedValue(dotted.rpartition(".")[2])
        if isinstance(node, ast.Attribute) and self.namespace_name(node) is not None:
            return NamedValue(node.attr)  # xp.float32
        if isinstance(node, ast.Attribute) and node.attr == "dtype":
            return NamedValue("float64")  # an array's own dtype: one of the standard's
        if isinstance(node, ast.Call) and node.args and not node.keywords:
            callee = self.dotted_of(node.func)
            first = node.args[0]
            is_device = callee is not None and callee.rpartition(".")[2] == "device"
            if is_device and isinstance(first, ast.Constant) and isinstance(first.value, str):
                kind, _, index = first.value.partition(":")
                return DeviceValue(kind.strip(), int(index) if index.isdigit() else None)
        return UNKNOWN
