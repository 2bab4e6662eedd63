"""What a cell drew through a library's own generator, and which of its outputs depend
on those draws (issue 29 item 1).

A rewrite leaves the person's random calls as they are. Its replay on the original
library draws the same numbers (`porter_ext.replay.rng`), and is judged there as any
rewrite. A replay on another library takes those draws moved there
(`porter_ext.replay.draws`), which no generator of that library would give: the outputs
that depend on them are judged by shape, dtype and finiteness only, and the verdict says
so. Draws through a host generator (NumPy's ``np.random``) are the same numbers on every
library and are judged as any value.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from porter_ext.backends import LIBRARIES, get_backend
from porter_ext.model.calls import CallRecord
from porter_ext.model.entries import RewriteEntry, RewriteSiteEntry
from porter_ext.record.magic_lines import mask_magics
from porter_ext.spec.table.chapter import NO_RANDOM_REWRITE, NO_SEED_REWRITE

#: the outputs of `Drawn.names` when every output may depend on a draw
EVERY = None


@dataclass(frozen=True)
class Drawn:
    """The libraries whose own generators the cell drew from (``torch``), and the names
    its outputs depend on them through (None: every output, as where a function of
    another cell drew)."""

    libraries: tuple[str, ...]
    names: frozenset[str] | None

    def loose(self, library: str) -> frozenset[str] | None:
        """The output names judged by shape, dtype and finiteness only on ``library``
        (empty: none)."""
        return frozenset() if library in self.libraries else self.names

    def note(self, specs: Sequence[str]) -> str | None:
        """What the verdict says of the replays on ``specs`` that judged outputs loosely."""
        where = [s for s in specs if s.partition(":")[0] not in self.libraries]
        if not where:
            return None
        what = "every output" if self.names is None else ", ".join(sorted(self.names))
        by = " and ".join(f"{lib}'s" for lib in self.libraries)
        return (
            f"on {', '.join(where)}, {what} compared by shape, dtype and finiteness only: "
            f"drawn by {by} generator"
        )


def drawn(source: str, calls: Iterable[CallRecord]) -> Drawn | None:
    """What the cell ``source`` (run as ``calls`` recorded) drew through a library's own
    generator; None when it drew nothing so."""
    draws = [c for c in calls if _own_draw(c)]
    if not draws:
        return None
    libraries = tuple(sorted({c.library for c in draws}))
    if any(c.origin is not None for c in draws):
        return Drawn(libraries, EVERY)
    try:
        tree = ast.parse(mask_magics(source)[0])
    except SyntaxError:
        return Drawn(libraries, EVERY)
    return Drawn(libraries, frozenset(_tainted(tree, {c.line for c in draws})))


def _own_draw(call: CallRecord) -> bool:
    if call.library not in LIBRARIES or call.kind != "function":
        return False
    name = call.name.partition(".")[2]
    return name in get_backend(call.library).generator_draws


def _tainted(tree: ast.Module, lines: set[int]) -> set[str]:
    """The names bound from a draw on one of ``lines``, or from such a name, until nothing
    changes (a loop's later iterations read what its earlier ones bound)."""
    statements = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.stmt)
        and (
            not hasattr(n, "body")
            or isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.For | ast.With)
        )
    ]
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for stmt in statements:
            stored, read = _names(stmt)
            drew = any(stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for line in lines)
            if (drew or read & tainted) and not stored <= tainted:
                tainted |= stored
                changed = True
    return tainted


def _names(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    """The names ``stmt`` binds or changes (an expression statement: every name it reads,
    since a method may change its array in place) and the names it reads."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return {stmt.name}, set()
    heads: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets, heads = stmt.targets, [stmt.value]
    elif isinstance(stmt, ast.AugAssign | ast.AnnAssign):
        targets, heads = [stmt.target], [stmt.value] if stmt.value is not None else []
    elif isinstance(stmt, ast.For):
        targets, heads = [stmt.target], [stmt.iter]
    elif isinstance(stmt, ast.With):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
        heads = [i.context_expr for i in stmt.items]
    else:
        targets, heads = [], [stmt]
    read = {n.id for h in heads for n in ast.walk(h) if isinstance(n, ast.Name)}
    if not targets:
        return read, read
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}, read


def with_draws_note(rewrite: RewriteEntry, drew: Drawn | None) -> RewriteEntry:
    """``rewrite`` saying which of its backends judged outputs by structure only."""
    note = drew.note(rewrite.verified_on) if drew is not None else None
    if note is None:
        return rewrite
    reason = f"{rewrite.reason}; {note}" if rewrite.reason else note
    return dataclasses.replace(rewrite, reason=reason)


def kept_draw(site: RewriteSiteEntry) -> bool:
    """A random draw or seed left as written: a rewrite keeps the person's draws and seeds
    (the standard has none), so they do not make the rewrite partial."""
    return not site.applied and site.reason in (NO_RANDOM_REWRITE, NO_SEED_REWRITE)
