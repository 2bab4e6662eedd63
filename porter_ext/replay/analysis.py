"""Which names a cell reads, writes and may modify in place, from its source alone.

A replay needs the cell's inputs (to convert them to the target backend), its outputs (to
compare them) and the inputs it may modify in place (to copy them first: a zero-copy
input shares memory with the person's array). Mistakes must fall on the safe side: a
name wrongly taken for an input costs a lookup, one wrongly taken for mutated costs a
copy, but a missed input breaks the replay and a missed mutation corrupts the person's
data. So control flow is followed only as far as "is this name surely bound here?", and
anything a nested function reads from outside counts as read.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from porter_ext.record.syntax import CellSyntax
from porter_ext.replay.aliasing import Roots, add_seeds, reach
from porter_ext.replay.scopes import Scope, Walker

_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class CellIO:
    """The names a cell exchanges with the namespace it runs in.

    ``passed`` maps each plainly named callee to the names the cell hands it,
    ``writes`` the names the cell writes into (-> whether maybe below the object
    itself), ``aliases`` each name to the names its object may be a view of, a part of,
    or hold, ``functions`` each function the cell defines to whether it writes into its
    parameters and the callees it hands them to: `mutated_given` uses them once it knows
    which callees are the person's own functions.
    """

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    imports: tuple[str, ...] = ()
    definitions: tuple[str, ...] = ()
    has_value: bool = False
    mutated: frozenset[str] = frozenset()
    builtins: tuple[str, ...] = ()
    star_import: bool = False
    passed: dict[str, frozenset[str]] = field(default_factory=dict)
    writes: dict[str, bool] = field(default_factory=dict)
    aliases: dict[str, Roots] = field(default_factory=dict)
    functions: dict[str, tuple[bool, frozenset[str]]] = field(default_factory=dict)
    lambdas: tuple[str, ...] = ()

    def mutated_given(self, user_functions: Iterable[str]) -> frozenset[str]:
        """The inputs the cell may write into, given the names of the person's own
        functions and classes (which may modify whatever they are handed)."""
        user = set(user_functions)
        start = dict(self.writes)
        for callee, names in self.passed.items():
            if self._may_modify(callee, user, set()):
                add_seeds(start, dict.fromkeys(names, True))
        return frozenset(set(reach(start, self.aliases)) & set(self.inputs))

    def _may_modify(self, callee: str, user: set[str], seen: set[str]) -> bool:
        """Whether calling ``callee`` may modify its arguments. A function of the cell is
        judged by its body; its classes and lambdas, and the person's functions, may."""
        if callee in self.functions:
            seen.add(callee)
            writes, hands = self.functions[callee]
            return writes or any(self._may_modify(c, user, seen) for c in hands - seen)
        return callee in self.definitions or callee in self.lambdas or callee in user


#: the analyses of the cells seen last, by source (results are read-only)
_ANALYSED: OrderedDict[str, CellIO] = OrderedDict()
_KEPT = 128
_LOCK = threading.Lock()


def analyse(source: str, syntax: CellSyntax | None = None) -> CellIO:
    """The names ``source`` (plain Python: IPython syntax already transformed) exchanges
    with its namespace. Raises SyntaxError as Python would. A cell run again (a loop of
    ``%%port`` runs, ``%timeit``) is analysed once: the result is read-only. ``syntax``:
    the cell's syntax, whose tree the recorder's rewrite then reuses (one parse)."""
    with _LOCK:
        io = _ANALYSED.get(source)
        if io is not None:
            _ANALYSED.move_to_end(source)
            return io
    tree = syntax.tree if syntax is not None and syntax.source == source else ast.parse(source)
    io = _analyse(tree)
    with _LOCK:
        _ANALYSED[source] = io
        while len(_ANALYSED) > _KEPT:
            _ANALYSED.popitem(last=False)
    return io


def _analyse(tree: ast.Module) -> CellIO:
    module = Scope("module")
    Walker().body(tree.body, module)
    kinds = module.bound
    definitions = [n for n, k in kinds.items() if "def" in k]
    reads = dict(module.reads)
    for names, definite in module.deferred:
        for name in sorted(names):
            if name not in definite and name not in definitions:
                reads.setdefault(name)
    io = CellIO(
        inputs=tuple(n for n in reads if n not in _BUILTINS),
        outputs=tuple(n for n, k in kinds.items() if k & {"value", "lambda"}),
        imports=tuple(n for n, k in kinds.items() if "import" in k),
        definitions=tuple(definitions),
        has_value=bool(tree.body) and isinstance(tree.body[-1], ast.Expr),
        builtins=tuple(n for n in reads if n in _BUILTINS),
        star_import=module.star_import,
        passed={k: frozenset(v) for k, v in module.passed.items() if v},
        writes=dict(module.writes),
        aliases={k: dict(v) for k, v in module.aliases.items() if v},
        functions={k: (w, frozenset(h)) for k, (w, h) in module.functions.items()},
        lambdas=tuple(n for n, k in kinds.items() if "lambda" in k),
    )
    return dataclasses.replace(io, mutated=io.mutated_given(()))
