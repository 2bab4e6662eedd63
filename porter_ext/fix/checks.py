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
from functools import lru_cache

from porter_ext.backends import LIBRARIES, get_backend
from porter_ext.compare.devices import CREATION, FROM_ARRAY
from porter_ext.fix.flow import FlowModel
from porter_ext.fix.scopes import Function
from porter_ext.fix.source import ARRAY_USES
from porter_ext.fix.static import (
    PYTHON_TYPES,
    UNKNOWN,
    VARIANTS,
    ArrayValue,
    callee_of,
    concretize,
    for_display,
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

_HOST_MESSAGE = "{name}(x) on an array copies to the host and waits for pending device work"


@dataclass(frozen=True, slots=True)
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
    #: where it is undecided, the entries the values may choose (a run tells which)
    options: tuple[Replacement, ...] = ()

    @property
    def kind(self) -> str:
        return CODES[self.code]


class Analyzer(FlowModel):
    """Walks one module (or notebook cells, in order) and collects its `Site`s; names
    are what they are where they are used (`porter_ext.fix.flow`)."""

    def __init__(
        self, imports: dict[str, str], std: Standard, arrays: dict[str, str] | None = None
    ) -> None:
        super().__init__(imports, std, arrays)
        self.sites: list[Site] = []
        #: standard calls made through a library's module (``torch.abs(x)``,
        #: ``torch.arange(n)``): no finding, but a ported cell makes them through ``xp``;
        #: ``(line, col, end_line, end_col)`` (columns in bytes) → (standard name,
        #: qualname, whether it creates from sizes alone)
        self.through_library: dict[tuple[int, int, int, int], tuple[str, str, bool]] = {}
        #: statements writing into an array (``h[0] = 0``, ``N[i] += 1``): (line, col) →
        #: the ``xpx.at`` method that makes the same update where arrays are immutable
        self.array_writes: dict[tuple[int, int], str] = {}

    # -- visiting ---------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        """Attribute reads of arrays (``x.T`` on an array that may not be 2-D, ``x.real``)."""
        if isinstance(node.value, ast.Name) and node.attr in ARRAY_USES:
            self.used_as_array(node.value.id)
        receiver = self._array(node.value)
        if receiver is not None and find(receiver.library, "attribute", node.attr):
            self.check(node, _callee(receiver.library, "attribute", node.attr), (), {}, receiver)
        self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        self._parameter_uses(node)
        dotted = self.dotted_of(func)
        name = self.namespace_name(func) if dotted is None else None
        receiver = None
        if dotted is None and name is None and isinstance(func, ast.Attribute):
            receiver = self._array(func.value) or self.recorded_receiver(node)
        if dotted is not None:
            callee = callee_of(dotted)
            if callee is not None and not _is_class_name(callee, self.std):
                found = len(self.sites)
                self.check_call(node, callee, None)
                if len(self.sites) == found:
                    self._note_through_library(node, callee)
                self.check_creation(node, callee.name, callee.qualname)
        elif name is not None:
            if not name.startswith("backend."):  # the escape hatch: acknowledged
                self.check_call(node, _portable(name), None)
                self.check_creation(node, name, f"xp.{name}")
        elif receiver is not None and isinstance(func, ast.Attribute):
            self.check_call(node, _callee(receiver.library, "method", func.attr), receiver)
        elif (
            isinstance(func, ast.Name)
            and func.id in PYTHON_TYPES
            and len(node.args) == 1
            and self.lookup(func.id) is None
            and self._array(node.args[0]) is not None
        ):
            message = _HOST_MESSAGE.format(name=func.id)
            self.add(node, ("PA004", func.id, message, None, False, None, False))
        self.visit(func.value if isinstance(func, ast.Attribute) else func)
        for arg in node.args:
            self.visit(arg)
        for keyword in node.keywords:
            self.visit(keyword.value)

    def _note_through_library(self, node: ast.Call, callee: Callee) -> None:
        """A standard call through the library's module with an array among its operands,
        or a creation from sizes (``torch.arange(6)``); conversions stay, their library is
        their point."""
        if callee.name not in self.std.functions or callee.name in _CONVERSIONS:
            return
        operands = [a for a in node.args if not isinstance(a, ast.Starred)]
        arrays = any(self._array(a) is not None for a in operands)
        if not arrays and callee.name not in FROM_SIZES:  # the run saw it make an array
            recorded = self._recorded_result(node)  # (``torch.exp(t)`` of a local ``t``)
            arrays = recorded is not None and recorded.library == callee.library
        if arrays or callee.name in FROM_SIZES:
            line = node.lineno + self.line_offset
            end_line = (node.end_lineno or node.lineno) + self.line_offset
            where = (line, node.col_offset, end_line, node.end_col_offset or node.col_offset)
            self.through_library[where] = (callee.name, callee.qualname, not arrays)

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1:
            self._note_write(node, node.targets[0], "set")
        super().visit_Assign(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        method = _AT_METHODS.get(type(node.op))
        if method is not None:
            self._note_write(node, node.target, method)
        super().visit_AugAssign(node)

    def _note_write(self, statement: ast.stmt, target: ast.expr, method: str) -> None:
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and self._array(target.value) is not None
        ):
            where = (statement.lineno + self.line_offset, statement.col_offset)
            self.array_writes[where] = method

    # -- checks -----------------------------------------------------------------------
    def add(self, node: ast.expr, judged: _Judged) -> None:
        line, col = node.lineno, node.col_offset
        end_line, end_col = node.end_lineno or line, node.end_col_offset or col
        offset = self.line_offset
        self.sites.append(Site(line + offset, col, end_line + offset, end_col, *judged))

    def check_call(self, node: ast.Call, callee: Callee, receiver: object) -> None:
        spread = False
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                spread = True
                args.append(UNKNOWN)
            else:
                args.append(self.value_of(arg))
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                spread = True
            else:
                kwargs[keyword.arg] = self.value_of(keyword.value)
        self.check(node, callee, tuple(args), kwargs, receiver, spread)

    def check(
        self,
        node: ast.AST,
        callee: Callee,
        args: tuple,
        kwargs: dict,
        receiver: object,
        spread: bool = False,
    ) -> None:
        """Judge the call; the same call (callee and what the source shows of its
        arguments) is judged once and remembered, as most calls of a file repeat."""
        try:
            named = tuple((name, _key(value)) for name, value in kwargs.items())
            key = (
                self.std,
                type(callee),
                callee.qualname,
                callee.library,
                callee.kind,
                callee.name,
                _key(args),
                named,
                _key(receiver),
                spread,
            )
            judged = _JUDGED.get(key, _MISSING)
        except (_Unkeyed, TypeError):
            key, judged = None, _MISSING
        if judged is _MISSING:
            judged = _judge(callee, args, kwargs, receiver, spread, self.std)
            if key is not None:
                if len(_JUDGED) >= _JUDGED_MAX:
                    _JUDGED.clear()
                _JUDGED[key] = judged
        if judged is not None:
            self.add(node, judged)  # type: ignore[arg-type]

    def check_creation(self, node: ast.Call, name: str, qualname: str) -> None:
        """A creation call without ``device=`` in a function that takes arrays (judged
        at the end of the function, when its uses of its parameters are known)."""
        function = self.functions[-1]
        if function is None or name.rpartition(".")[2] not in CREATION:
            return
        if any(k.arg in ("device", None) for k in node.keywords):
            return
        if name.rpartition(".")[2] in FROM_ARRAY:
            first = node.args[0] if node.args else None
            if not isinstance(first, ast.List | ast.Tuple | ast.Constant):
                return  # from an array: it keeps that array's device
        function.creations.append((node, qualname))

    def function_walked(self, function: Function) -> None:
        if not function.arrays:
            return
        params = ", ".join(sorted(function.arrays))
        for node, qualname in function.creations:
            message = (
                f"{qualname} without device= puts its result on the default device, not "
                f"where the function's arrays ({params}) live: pass device=x.device"
            )
            self.add(node, ("PA005", qualname, message, None, False, None, False))

    def _parameter_uses(self, node: ast.Call) -> None:
        """Parameters passed where the callee takes an array."""
        function = self.functions[-1]
        if function is None or len(function.arrays) == len(function.params) or not node.args:
            return
        taking = self._array_positions(node.func)
        dotted = self.dotted_of(node.func)
        callee = callee_of(dotted) if dotted is not None else None
        for position, arg in enumerate(node.args):
            if position not in taking:
                continue
            for name in _arithmetic_names(arg):  # ``np.exp(a - a.max(axis=1))``: a
                self.used_as_array(name)
                if callee is not None:
                    self._assume_array(name, callee.library)

    def _assume_array(self, name: str, library: str) -> None:
        """A parameter a library's function takes as an array is one of that library from
        here on, so its methods are judged (the rewrite is verified where it is called)."""
        function = self.functions[-1]
        if (
            self.frame.kind == "function"
            and function is not None
            and name in function.params
            and self.lookup(name) is UNKNOWN
        ):
            self.assign(name, ArrayValue(library))


def _arithmetic_names(node: ast.expr) -> list[str]:
    """The names an operand is arithmetic on (``a - a.max(1)``: ``a``; not a call's
    arguments, nor an index)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.BinOp):
        return _arithmetic_names(node.left) + _arithmetic_names(node.right)
    if isinstance(node, ast.UnaryOp):
        return _arithmetic_names(node.operand)
    return []


#: augmented assignments into an array, as array-api-extra's ``at`` updates
_AT_METHODS = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "divide",
    ast.Pow: "power",
}

#: standard functions whose library is the point of the call (``np.asarray(t)`` makes a
#: NumPy array of a tensor): never moved to ``xp``
_CONVERSIONS = frozenset({"asarray", "from_dlpack"})
#: the standard's creation functions from sizes and values alone
#: creations whose arguments are sizes, not arrays (``torch.ones(n, n)``: n is no array)
FROM_SIZES = frozenset({"arange", "empty", "eye", "full", "linspace", "ones", "zeros"})


@lru_cache(maxsize=1024)
def _callee(library: str, kind: str, name: str) -> Callee:
    """An array method or attribute of ``library`` (``Tensor.sum``; ``array.sum`` for xp)."""
    type_name = get_backend(library).array_type_name if library != "*" else "array"
    return Callee(library, kind, name, f"{type_name}.{name}")


class _PortableCallee(Callee):
    """A call through an array namespace (``xp.sum``): whichever library ``xp`` turns out to
    be, so it is judged with the table's library-independent entries only."""


def _portable(name: str) -> Callee:
    return _PortableCallee(LIBRARIES[0], "function", name, f"xp.{name}")


@lru_cache(maxsize=4096)
def _is_class_name(callee: Callee, std: Standard) -> bool:
    """Classes and dtypes called (``torch.Generator()``, ``np.float32(1)``) are not array
    calls unless the table names them (``torch.cuda.Stream``)."""
    base = callee.name.rpartition(".")[2]
    if find(callee.library, callee.kind, callee.name):
        return False
    return base[:1].isupper() or base in std.dtypes


#: (code, name, message, suggestion, needs_run, entry, undecided[, options]): a `Site`
#: without its place
_Judged = (
    tuple[str, str, str, "str | None", bool, "Replacement | None", bool]
    | tuple[str, str, str, "str | None", bool, "Replacement | None", bool, tuple]
)
#: judgements of calls by what the source shows of them (cleared when it grows past the max)
_JUDGED: dict[tuple, _Judged | None] = {}
_JUDGED_MAX = 8192
_MISSING = object()


class _Unkeyed(Exception):
    """An argument not worth remembering a judgement by (a long string)."""


def _key(value: object) -> object:
    """A key telling apart what the classifier tells apart (1, 1.0 and True differ)."""
    if isinstance(value, tuple | list):
        return (type(value), *map(_key, value))
    if isinstance(value, str | bytes) and len(value) > 64:
        raise _Unkeyed
    if isinstance(value, float | complex):
        return (type(value), repr(value))
    return (type(value), value)


#: a call the standard does not judge (``torch.accelerator.*``), as a finding sees it
_NOT_JUDGED = Verdict("standard")


def _judge(
    callee: Callee, args: tuple, kwargs: dict, receiver: object, spread: bool, std: Standard
) -> _Judged | None:
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
        verdict = classify(callee, a, k, s, std, entries)
        if verdict.status == "outside_namespace":  # not judged by the standard: no finding
            verdict = _NOT_JUDGED
        judged.append((verdict, entry))
    first = judged[0][0]
    statuses = {v.status for v, _ in judged}
    keys = {(v.status, id(e)) for v, e in judged}
    if spread and first.status == "non_standard_usage":
        statuses.add("standard")  # the spread arguments may make it standard
    name = callee.qualname
    if len(keys) == 1 and len(statuses) == 1:
        if first.status == "standard":
            return None
        code = CODE_OF[first.status]
        return (code, name, first.message, first.suggestion, False, judged[0][1], False)  # type: ignore[return-value]
    shown = (
        for_display(args),
        {n: for_display(v) for n, v in kwargs.items()},
        for_display(receiver) if receiver is not None else None,
    )
    options = dict.fromkeys(e for _, e in judged if e)
    suggestions = " or ".join(render_suggestion(e, *shown) for e in options)  # type: ignore[arg-type]
    if "standard" in statuses:
        message = (
            f"whether {name} is used as the standard says depends on values the source "
            "does not show (argument kinds, array ranks): needs a run (%%port or porter run)"
        )
        return ("PA100", name, message, suggestions or None, True, None, True, tuple(options))
    # outside the standard whatever the values: a finding; only the fix depends on them
    verdict = next(v for v, _ in judged if v.status != "standard")
    message = (
        f"{verdict.message}; which replacement fits depends on values the source does not "
        "show (a run with %%port or porter run tells)"
    )
    suggestion = suggestions or verdict.suggestion
    return (CODE_OF[verdict.status], name, message, suggestion, False, None, True, tuple(options))
