"""The static checks of ``porter lint``: one pass over a module's syntax tree.

Calls are judged by the recorder's classifier (`porter_ext.record.classify.classify`) on
the arguments as the source tells them (`porter_ext.fix.static`). A call whose verdict is
the same whatever its unknown arguments turn out to be is a finding (or clean); one whose
verdict changes with them (``torch.max(a, b)``: two arrays, or an array and an axis?)
"needs a run". Methods and attributes are judged only on expressions the source shows to
be arrays, so ``list.sort()`` is never a finding.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from porter_ext.backends import LIBRARIES, get_backend
from porter_ext.compare.devices import CREATION, FROM_ARRAY
from porter_ext.fix.static import (
    PYTHON_TYPES,
    UNKNOWN,
    VARIANTS,
    ArrayValue,
    DeviceValue,
    NamedValue,
    callee_of,
    concretize,
    for_display,
    is_helper,
    is_uncertain,
)
from porter_ext.record.classify import Verdict, classify
from porter_ext.record.resolve import Callee
from porter_ext.spec.replacements import Replacement, choose, find, render_suggestion
from porter_ext.spec.standard import Standard

#: finding code → what it means; ``# porter: ignore[CODE]`` takes a code or its name
CODES: dict[str, str] = {
    "PA001": "non_standard",
    "PA002": "non_standard_usage",
    "PA003": "device_specific",
    "PA004": "host_sync",
    "PA005": "default_device_creation",
    "PA100": "needs_run",
}
CODE_OF = {name: code for code, name in CODES.items()}

#: standard functions whose result is not one array (tuples, dtypes, booleans, info)
_NOT_ONE_ARRAY = frozenset(
    {
        "isdtype", "result_type", "can_cast", "finfo", "iinfo", "broadcast_shapes",
        "__array_namespace_info__", "unstack", "broadcast_arrays", "meshgrid", "nonzero",
        "unique_all", "unique_counts", "unique_inverse", "frexp", "linalg.svd", "linalg.eigh",
        "linalg.eig", "linalg.qr", "linalg.slogdet",
    }
)  # fmt: skip
#: attributes of an array that are arrays of the same library
_ARRAY_ATTRIBUTES = frozenset({"T", "mT"})
#: attributes of a parameter that show it is used as an array
_ARRAY_USES = frozenset({"shape", "dtype", "device", "ndim", "T", "mT", "size"})
#: standard parameters that take one array
_ARRAY_PARAMS = frozenset({"x", "x1", "x2"})
_HOST_MESSAGE = "{name}(x) on an array copies to the host and waits for pending device work"


class _Namespace:
    """The value of ``xp = array_namespace(...)`` (or a parameter named ``xp``)."""


NAMESPACE = _Namespace()


@dataclass(frozen=True)
class Site:
    """One finding in one piece of source (the path and cell are added by the caller)."""

    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    name: str
    message: str
    suggestion: str | None
    needs_run: bool = False
    #: the table entry the source decides on (None: no entry, or it depends on values)
    entry: Replacement | None = None
    #: which entry applies depends on values (the finding itself may still be certain)
    undecided: bool = False

    @property
    def kind(self) -> str:
        return CODES[self.code]


def _scope_nodes(body: list[ast.stmt]):
    """The nodes of a scope, not descending into nested functions, lambdas or classes."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _targets(node: ast.AST) -> list[tuple[str, ast.expr | None]]:
    """(name, value it is bound to, None when the value is not the whole expression)."""
    if isinstance(node, ast.Assign):
        out = []
        for target in node.targets:
            if isinstance(target, ast.Name):
                out.append((target.id, node.value))
            else:
                out += [(n.id, None) for n in ast.walk(target) if isinstance(n, ast.Name)]
        return out
    if isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
        return [(node.target.id, node.value)]
    if isinstance(node, ast.NamedExpr):
        return [(node.target.id, node.value)]
    if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
        return [(n.id, None) for n in ast.walk(node.target) if isinstance(n, ast.Name)]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [(n.id, None) for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name)]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [(node.name, None)]
    return []


class Analyzer(ast.NodeVisitor):
    """Walks one module (or notebook cell) and collects its `Site`s."""

    def __init__(
        self, imports: dict[str, str], std: Standard, arrays: dict[str, str] | None = None
    ) -> None:
        """``arrays`` names what a run showed to be arrays (name → library): parameters and
        names from other cells that the source alone cannot type."""
        self.imports = imports
        self.std = std
        self.sites: list[Site] = []
        self.hints = {name: ArrayValue(lib) for name, lib in (arrays or {}).items()}
        self.scopes: list[dict[str, object]] = [dict(self.hints), {}]
        self.array_params: list[set[str]] = [set()]

    # -- scopes ----------------------------------------------------------------------
    def run(self, tree: ast.Module) -> list[Site]:
        self._bind(tree.body, self.scopes[-1])
        for stmt in tree.body:
            self.visit(stmt)
        return self.sites

    def _bind(self, body: list[ast.stmt], scope: dict[str, object]) -> None:
        bindings = [b for node in _scope_nodes(body) for b in _targets(node)]
        for _ in range(2):  # twice: y = x + 1 before x = np.ones(3) in source order
            for name, value in bindings:
                known = self.array_of(value) if value is not None else None
                if known is not None:
                    scope[name] = known
                else:
                    scope.setdefault(name, UNKNOWN)

    def lookup(self, name: str) -> object:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.visit(default)
        args = node.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        scope: dict[str, object] = {
            p: NAMESPACE if p == "xp" else self.hints.get(p, UNKNOWN) for p in params
        }
        self.scopes.append(scope)
        self.array_params.append(self._array_params(node.body, set(params) - {"self", "cls"}))
        self._bind(node.body, scope)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self.array_params.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def _array_params(self, body: list[ast.stmt], params: set[str]) -> set[str]:
        """The parameters the body uses as arrays (``p.shape``, ``np.sum(p)``, ``array_namespace(p)``)."""
        used: set[str] = set()
        for node in _scope_nodes(body):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id in params and node.attr in _ARRAY_USES:
                    used.add(node.value.id)
            elif isinstance(node, ast.Call):
                taking = self._array_positions(node.func)
                for position, arg in enumerate(node.args):
                    if position in taking and isinstance(arg, ast.Name) and arg.id in params:
                        used.add(arg.id)
        return used

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
            if entry.suggestion.startswith("xp.asarray("):
                return True
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
            return None
        name = self.namespace_name(func)
        if name is not None:
            return ArrayValue("*") if self._returns_array("*", "function", name) else None
        if isinstance(func, ast.Attribute):
            receiver = self._array(func.value)
            if receiver is not None and self._returns_array(receiver.library, "method", func.attr):
                return receiver
        return None

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

    # -- visiting ---------------------------------------------------------------------
    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.scopes.append({a.arg: UNKNOWN for a in node.args.args})
        self.visit(node.body)
        self.scopes.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        """Attribute reads of arrays (``x.T`` on an array that may not be 2-D, ``x.real``)."""
        receiver = self._array(node.value)
        if receiver is not None and find(receiver.library, "attribute", node.attr):
            self.check(
                node, self._callee(receiver.library, "attribute", node.attr), (), {}, receiver
            )
        self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        dotted = self.dotted_of(func)
        name = self.namespace_name(func) if dotted is None else None
        receiver = self._array(func.value) if isinstance(func, ast.Attribute) else None
        if dotted is not None:
            callee = callee_of(dotted)
            if callee is not None and not _is_class_name(callee, self.std):
                self.check_call(node, callee, None)
                self.check_creation(node, callee.name, callee.qualname)
        elif name is not None:
            if not name.startswith("backend."):  # the escape hatch: acknowledged
                self.check_call(node, _portable(name), None)
                self.check_creation(node, name, f"xp.{name}")
        elif receiver is not None and isinstance(func, ast.Attribute):
            self.check_call(node, self._callee(receiver.library, "method", func.attr), receiver)
        elif (
            isinstance(func, ast.Name)
            and func.id in PYTHON_TYPES
            and len(node.args) == 1
            and self.lookup(func.id) is None
            and self._array(node.args[0]) is not None
        ):
            message = _HOST_MESSAGE.format(name=func.id)
            self.add(node, "PA004", func.id, message, None)
        self.visit(func.value if isinstance(func, ast.Attribute) else func)
        for arg in node.args:
            self.visit(arg)
        for keyword in node.keywords:
            self.visit(keyword.value)

    @staticmethod
    def _callee(library: str, kind: str, name: str) -> Callee:
        type_name = get_backend(library).array_type_name if library != "*" else "array"
        return Callee(library, kind, name, f"{type_name}.{name}")

    # -- checks -----------------------------------------------------------------------
    def add(self, node: ast.AST, code: str, name: str, message: str, suggestion: str | None,
            needs_run: bool = False, entry: Replacement | None = None,
            undecided: bool = False) -> None:  # fmt: skip
        self.sites.append(
            Site(
                node.lineno,
                node.col_offset,
                getattr(node, "end_lineno", None) or node.lineno,
                getattr(node, "end_col_offset", None) or node.col_offset,
                code,
                name,
                message,
                suggestion,
                needs_run,
                entry,
                undecided,
            )
        )

    def check_call(self, node: ast.Call, callee: Callee, receiver: object) -> None:
        spread = any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        )
        args = tuple(UNKNOWN if isinstance(a, ast.Starred) else self.value_of(a) for a in node.args)
        kwargs = {k.arg: self.value_of(k.value) for k in node.keywords if k.arg is not None}
        self.check(node, callee, args, kwargs, receiver, spread)

    def check(self, node: ast.AST, callee: Callee, args: tuple, kwargs: dict, receiver: object,
              spread: bool = False) -> None:  # fmt: skip
        """Classify the call as the recorder would, once per way its unknowns may turn out."""
        if isinstance(callee, _PortableCallee):  # xp.NAME: the library-independent entries
            entries = find("*", callee.kind, callee.name)
        else:
            entries = find(callee.library, callee.kind, callee.name)
        uncertain = is_uncertain((args, tuple(kwargs.values()), receiver))
        judged: list[tuple[Verdict, object]] = []
        for variant in range(VARIANTS if uncertain else 1):
            a = concretize(args, variant)
            k = {n: concretize(v, variant) for n, v in kwargs.items()}
            s = concretize(receiver, variant) if receiver is not None else None
            entry = choose(entries, a, k, s) if entries else None
            judged.append((classify(callee, a, k, s, self.std, entries), entry))
        first = judged[0][0]
        statuses = {v.status for v, _ in judged}
        keys = {(v.status, id(e)) for v, e in judged}
        if spread and first.status == "non_standard_usage":
            statuses.add("standard")  # the spread arguments may make it standard
        if len(keys) == 1 and len(statuses) == 1:
            if first.status != "standard":
                self.add(node, CODE_OF[first.status], callee.qualname, first.message,
                         first.suggestion, entry=judged[0][1])  # fmt: skip
            return
        shown = (
            for_display(args),
            {n: for_display(v) for n, v in kwargs.items()},
            for_display(receiver) if receiver is not None else None,
        )
        suggestions = [
            render_suggestion(e, *shown) for e in dict.fromkeys(e for _, e in judged if e)
        ]
        if "standard" in statuses:
            self.add(node, "PA100", callee.qualname,
                     f"whether {callee.qualname} is used as the standard says depends on values "
                     "the source does not show (argument kinds, array ranks): needs a run "
                     "(%%port or porter run)", " or ".join(suggestions) or None,
                     needs_run=True, undecided=True)  # fmt: skip
            return
        # outside the standard whatever the values: a finding; only the fix depends on them
        verdict = next(v for v, _ in judged if v.status != "standard")
        self.add(node, CODE_OF[verdict.status], callee.qualname,
                 f"{verdict.message}; which replacement fits depends on values the source "
                 "does not show (a run with %%port or porter run tells)",
                 " or ".join(suggestions) or verdict.suggestion, undecided=True)  # fmt: skip

    def check_creation(self, node: ast.Call, name: str, qualname: str) -> None:
        """A creation call without ``device=`` in a function that takes arrays."""
        base = name.rpartition(".")[2]
        if base not in CREATION or not self.array_params[-1]:
            return
        if any(k.arg in ("device", None) for k in node.keywords):
            return
        if base in FROM_ARRAY:
            first = node.args[0] if node.args else None
            if not isinstance(first, ast.List | ast.Tuple | ast.Constant):
                return  # from an array: it keeps that array's device
        params = ", ".join(sorted(self.array_params[-1]))
        self.add(node, "PA005", qualname,
                 f"{qualname} without device= puts its result on the default device, not "
                 f"where the function's arrays ({params}) live: pass device=x.device",
                 None)  # fmt: skip


class _PortableCallee(Callee):
    """A call through an array namespace (``xp.sum``): whichever library ``xp`` turns out to
    be, so it is judged with the table's library-independent entries only."""


def _portable(name: str) -> Callee:
    return _PortableCallee(LIBRARIES[0], "function", name, f"xp.{name}")


def _is_class_name(callee: Callee, std: Standard) -> bool:
    """Classes and dtypes called (``torch.Generator()``, ``np.float32(1)``) are not array
    calls unless the table names them (``torch.cuda.Stream``)."""
    base = callee.name.rpartition(".")[2]
    if find(callee.library, callee.kind, callee.name):
        return False
    return base[:1].isupper() or base in std.dtypes
