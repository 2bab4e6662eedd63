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
from porter_ext.fix.source import NAMESPACE, SourceModel
from porter_ext.fix.static import (
    PYTHON_TYPES,
    UNKNOWN,
    VARIANTS,
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


class Analyzer(SourceModel, ast.NodeVisitor):
    """Walks one module (or notebook cell) and collects its `Site`s."""

    def __init__(
        self, imports: dict[str, str], std: Standard, arrays: dict[str, str] | None = None
    ) -> None:
        super().__init__(imports, std, arrays)
        self.sites: list[Site] = []

    # -- scopes ----------------------------------------------------------------------
    def run(self, tree: ast.Module) -> list[Site]:
        self._bind(tree.body, self.scopes[-1])
        for stmt in tree.body:
            self.visit(stmt)
        return self.sites

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
