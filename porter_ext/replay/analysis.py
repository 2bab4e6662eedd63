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
from collections.abc import Iterable
from dataclasses import dataclass, field

from porter_ext.replay._effects import Roots, add_seeds, reach
from porter_ext.replay._walker import Scope, Walker

_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class CellIO:
    """The names a cell exchanges with the namespace it runs in.

    ``passed`` maps each plainly named callee to the names the cell hands it,
    ``writes`` the names the cell writes into (-> whether maybe below the object
    itself), ``aliases`` each name to the names its object may be a view of, a part of,
    or hold: `mutated_given` uses them once it knows which callees are the person's own.
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

    def mutated_given(self, user_functions: Iterable[str]) -> frozenset[str]:
        """`mutated` plus the names passed to ``user_functions`` (which may modify them)."""
        start = dict(self.writes)
        for name in user_functions:
            add_seeds(start, dict.fromkeys(self.passed.get(name, ()), True))
        return frozenset(set(reach(start, self.aliases)) & set(self.inputs))


def analyse(source: str) -> CellIO:
    """The names ``source`` (plain Python: IPython syntax already transformed) exchanges
    with its namespace. Raises SyntaxError as Python would."""
    tree = ast.parse(source)
    module = Scope("module")
    Walker().body(tree.body, module)
    kinds = module.bound
    definitions = [n for n, k in kinds.items() if "def" in k]
    reads = dict(module.reads)
    for names, definite in module.deferred:
        for name in sorted(names):
            if name not in definite and name not in definitions:
                reads.setdefault(name)
    inputs = tuple(n for n in reads if n not in _BUILTINS)
    writes = dict(module.writes)
    for callee in module.callables:  # functions of the cell may modify what they get
        add_seeds(writes, dict.fromkeys(module.passed.get(callee, ()), True))
    return CellIO(
        inputs=inputs,
        outputs=tuple(n for n, k in kinds.items() if k & {"value", "lambda"}),
        imports=tuple(n for n, k in kinds.items() if "import" in k),
        definitions=tuple(definitions),
        has_value=bool(tree.body) and isinstance(tree.body[-1], ast.Expr),
        mutated=frozenset(set(reach(writes, module.aliases)) & set(inputs)),
        builtins=tuple(n for n in reads if n in _BUILTINS),
        star_import=module.star_import,
        passed={k: frozenset(v) for k, v in module.passed.items() if v},
        writes=writes,
        aliases={k: dict(v) for k, v in module.aliases.items() if v},
    )
