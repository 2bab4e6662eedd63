"""Definitions whose rewrite is verified where a later cell calls them (``porter fix``).

A cell that only defines functions runs none of them, so no replay of it can verify their
rewrite. Under ``porter fix`` such a rewrite waits (the cell's entry says "never called in
this notebook", true until a later cell calls one): the first later cell that reads one
of the functions is replayed, from its own pre-run inputs, with the rewritten definitions
put before it; when that replay agrees with the cell's original run, the definitions'
rewrite is accepted (and put in effect for the cells after), otherwise refused with the
call site. Every later call verifies it again (`porter_ext.fix.every_call`). The later
cells' entries carry the verdicts (`DefinitionVerdict`, in their JSON), which
`porter_ext.fix.settle` (on porter's side, once the notebook ran) turns into the earlier
cell's ``rewrite``.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from porter_ext.fix.verify_support import (
    own_semantics_arrays,
    own_semantics_reason,
    site_entries,
    site_key,
)
from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import DefinitionVerdict, RewriteEntry
from porter_ext.record.magic_lines import mask_magics

__all__ = [
    "NEVER_CALLED",
    "Deferred",
    "array_parameters",
    "adopt_line",
    "called_deferred",
    "defer",
    "hunks",
    "idle_functions",
    "judge_calls",
    "pending",
    "settle_at_call",
    "unexercised_defs",
    "verdict",
]

NEVER_CALLED = "never called in this notebook"
WAITING = "deferred: verified where a later cell calls it"

#: the top-level statements whose rewrite can wait for a later cell's call
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

#: per session, the definitions waiting for a call (in the kernel)
_PENDING: weakref.WeakKeyDictionary[object, list[Deferred]] = weakref.WeakKeyDictionary()


@dataclass
class Deferred:
    """One function's or class's rewritten definition, waiting for a later cell to call
    it."""

    cell: int  # the notebook index of the defining cell
    name: str
    #: the cell's rewritten imports and this definition, plain Python (run before the
    #: calling cell in its replay)
    code: str
    #: the recorder's number of the defining cell (calls in its definitions name it)
    record_cell: int | str = "fix"
    #: the lines of the definition in the defining cell (where its recorded calls are)
    span: tuple[int, int] = (0, 0)
    #: a class: the lines of its rewritten sites, each of which a calling cell must run
    #: (a class named, or made, runs none of its methods)
    class_sites: tuple[int, ...] | None = None

    def ran_in(self, source: str, calls: Any) -> bool:
        """Whether a cell's run called it. A function: the cell's own statements name it
        (not only a function the cell defines), or a call inside it was recorded, from
        its cell. A class: a call was recorded at every rewritten site of its methods."""
        first, last = self.span
        inside = {
            c.origin.line
            for c in calls
            if c.origin is not None
            and c.origin_cell == self.record_cell
            and first <= c.origin.line <= last
        }
        if self.class_sites is not None:
            return bool(inside) and inside.issuperset(self.class_sites)
        return self.name in earlier_reads(source) or bool(inside)

    @property
    def names(self) -> frozenset[str]:
        return frozenset({self.name})


def verdict(deferred: Deferred, accepted: bool, where: str, detail: list[str] | str):
    """The calling cell's verdict on ``deferred``: the specs it verified on, or why not."""
    if accepted:
        return DefinitionVerdict(deferred.cell, deferred.name, True, where, list(detail))
    return DefinitionVerdict(deferred.cell, deferred.name, False, where, reason=str(detail))


def pending(session: object) -> list[Deferred]:
    """The session's deferred definitions (a list the caller may change). ``session`` is
    only their owner's key (weakly held): the fix stage reads nothing of it."""
    return _PENDING.setdefault(session, [])


def definitions_only(code: str, name: str) -> str:
    """The imports of a cell's (transformed) code and its function or class ``name``,
    every other line blank (so the definition keeps its line numbers); empty when it
    defines no such function or class."""
    tree = ast.parse(code)
    kept = [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        or (isinstance(node, _DEFINITIONS) and node.name == name)
    ]
    if not any(isinstance(node, _DEFINITIONS) for node in kept):
        return ""
    lines = code.split("\n")
    keep = set()
    for node in kept:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        keep.update(range(first, (node.end_lineno or node.lineno) + 1))
    return "\n".join(line if n in keep else "" for n, line in enumerate(lines, 1)).rstrip() + "\n"


def def_spans(source: str) -> dict[str, tuple[int, int]]:
    """The cell's top-level functions and classes: name → (first line, last line)."""

    tree = ast.parse(mask_magics(source)[0])
    return {
        node.name: (node.lineno, node.end_lineno or node.lineno)
        for node in tree.body
        if isinstance(node, _DEFINITIONS)
    }


def class_names(source: str) -> set[str]:
    """The cell's top-level classes."""
    tree = ast.parse(mask_magics(source)[0])
    return {node.name for node in tree.body if isinstance(node, ast.ClassDef)}


def top_level_reads(source: str) -> set[str]:
    """The names the cell's own statements read (not its function or class bodies)."""

    tree = ast.parse(mask_magics(source)[0])
    return {
        n.id
        for node in tree.body
        if not isinstance(node, _DEFINITIONS)
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def earlier_reads(source: str) -> set[str]:
    """The names the cell's own statements read before a statement of its own binds them
    (not in its function or class bodies): what an earlier cell bound. makemore part 3
    defines ``split_loss`` again and calls it: those calls are the new function's, not
    the earlier cell's (whose rewrite they refused, "more findings than the original")."""
    tree = ast.parse(mask_magics(source)[0])
    bound: set[str] = set()
    read: set[str] = set()
    for node in tree.body:
        if not isinstance(node, _DEFINITIONS):
            read |= {
                n.id
                for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound
            }
        bound |= _bound_at_top(node)
    return read


def _bound_at_top(node: ast.stmt) -> set[str]:
    """The names one top-level statement binds in the cell's namespace (not those of the
    scopes it makes: a function's, a lambda's, a comprehension's)."""
    names: set[str] = set()
    stack: list[ast.AST] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, _DEFINITIONS):
            names.add(n.name)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).partition(".")[0] for a in n.names}
        elif not isinstance(n, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
            if not isinstance(n, ast.GeneratorExp):
                stack.extend(ast.iter_child_nodes(n))
    return names


def unexercised_defs(source: str, calls: Any) -> dict[str, tuple[int, int]]:
    """The cell's top-level functions and classes that its run did not call: not read by
    its other statements, and no recorded call of this cell inside them (name → line
    range)."""
    defs = def_spans(source)
    read = top_level_reads(source)
    ran = [c.line for c in calls if c.origin is None]
    return {
        name: span
        for name, span in defs.items()
        if name not in read and not any(span[0] < line <= span[1] for line in ran)
    }


def array_parameters(source: str, idle: Mapping[str, Any], library: str) -> dict[str, str]:
    """The parameters of the cell's ``idle`` functions (nothing in the cell calls them)
    that their bodies use as arrays of ``library``: an attribute only arrays have
    (``a.shape``, ``a.T``) or a method of its arrays the table names (``a.sum(0)``). The
    source alone cannot type a parameter: this is a guess, which the replay at the
    function's first call verifies or refuses (name → library). A class's methods are
    read alike, past their object (``self``)."""
    found: dict[str, str] = {}
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for top in ast.parse(mask_magics(source)[0]).body:
        if not isinstance(top, _DEFINITIONS) or top.name not in idle:
            continue
        if not isinstance(top, ast.ClassDef):
            found.update(_array_parameters_of(top, library, method=False))
            continue
        for node in top.body:
            if isinstance(node, functions):
                found.update(_array_parameters_of(node, library, method=True))
    return found


def _array_parameters_of(node: Any, library: str, method: bool) -> dict[str, str]:
    """`array_parameters` of one function; of a method (``method``), past its object."""
    from porter_ext.fix.source import ARRAY_USES
    from porter_ext.spec.replacements import find

    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    bound = method and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
    )
    params = {a.arg for a in [*positional[1 if bound else 0 :], *arguments.kwonlyargs]}
    found: dict[str, str] = {}
    for sub in ast.walk(node):
        if not (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id in params
        ):
            continue
        if sub.attr in ARRAY_USES or find(library, "method", sub.attr):
            found[sub.value.id] = library
    return found


def idle_functions(source: str, calls: Any, applied: Any) -> tuple[dict, set]:
    """The cell's top-level functions nothing in it ran (name → lines), and the keys of the
    applied sites inside them: no replay of this cell can verify those."""
    idle = unexercised_defs(mask_magics(source)[0], calls)
    inside = {site_key(s) for s in applied if any(a <= s.line <= b for a, b in idle.values())}
    return idle, inside


def not_run_reason(idle: Mapping[str, tuple[int, int]], line: int) -> str:
    """Why a site inside one of the ``idle`` functions is left out."""
    name = next((n for n, (a, b) in idle.items() if a <= line <= b), "it")
    return f"left out: nothing in this cell calls {name}, so no replay of it can verify the rewrite"


def call_site(source: str, names: frozenset[str]) -> str:
    """Where the cell first reads one of ``names``: ``line L: `text```."""
    for number, line in enumerate(source.split("\n"), start=1):
        if any(re.search(rf"\b{re.escape(n)}\b", line) for n in names):
            return f"line {number}: `{line.strip()[:80]}`"
    return "this cell"


# --- in the kernel, under ``porter fix`` (`porter_ext.fix.verify`) --------------------


def called_deferred(
    session: object, code: str, namespace: Mapping[str, Any] | None = None
) -> list[Deferred]:
    """The deferred definitions (of earlier cells) that ``code`` reads, or whose class
    has instances among what it reads (``logits = model(Xb)``: `adopt_line`), and those
    of the same cells beside them (a class it makes makes others of its cell: the replay
    must build them from their rewritten classes too; `Deferred.ran_in` keeps those it
    ran)."""
    from porter_ext.replay.analysis import analyse
    from porter_ext.replay.instances import made_before

    waiting = pending(session)
    if not waiting:
        return []
    reads = set(analyse(code).inputs)
    values = {n: namespace[n] for n in reads if n in namespace} if namespace else {}
    cells = {
        d.cell
        for d in waiting
        if d.names & reads
        or (d.class_sites is not None and made_before(values, namespace.get(d.name)))
    }
    return [d for d in waiting if d.cell in cells]


def adopt_line(name: str) -> str:
    """The statement, after a rewritten class in a replay's prefix, that gives the
    instances made before the cell the rewritten class (`porter_ext.replay.instances`);
    an expression, which `put_in_effect` does not run in the kernel (where the person's
    class takes the rewritten body instead)."""
    return (
        f'__import__("porter_ext.replay.instances").replay.instances.adopt(globals(), {name!r})\n'
    )


def defer(fix: Any, full: Any, idle: Mapping[str, tuple[int, int]]) -> RewriteEntry | None:
    """The rewrite ``full`` of the definitions nothing in the cell of ``fix`` (a
    `FixRun`) calls, waiting for a later cell's call; None when it cannot wait."""
    diff = full.diff(context=0)
    if patched(fix.source, diff).rstrip("\n") != full.source.rstrip("\n"):
        return None
    code = fix.code_of(full.source)
    classes = class_names(fix.source)
    waiting = []
    for name, (a, b) in idle.items():
        lines = tuple(sorted({s.line for s in full.applied if a <= s.line <= b}))
        if lines:
            sites = lines if name in classes else None
            definition = definitions_only(code, name)
            if definition and name in classes:
                definition += adopt_line(name)
            waiting.append(Deferred(fix.index, name, definition, fix.cell, (a, b), sites))
    if not all(d.code for d in waiting):
        return None
    pending(fix.session).extend(waiting)
    sites = [
        dataclasses.replace(s, reason=WAITING) if s.replacement is not None else s
        for s in site_entries(full.sites, frozenset(), {})
    ]
    return RewriteEntry(
        source=fix.source,
        status="refused",
        verified_on=[],
        sites=sites,
        reason=NEVER_CALLED,
        diff=diff,
    )


def settle_at_call(fix: Any, entry: CellEntry, ctx: Any) -> list[DefinitionVerdict]:
    """Replay the cell of ``fix`` (a `FixRun`) with the earlier cells' rewritten
    definitions it calls before it, judged as its own rounds are (``ctx``, a
    `Verification`): they are accepted (and put in effect) when it agrees with the
    cell's original run; a refused one is left as the namespace holds it."""
    from porter_ext.fix.rewrite import CellRewrite

    called = [d for d in fix.deferred if d.ran_in(fix.source, entry.calls)]
    if ctx.run.exception is not None or not ctx.specs or fix.plan is None or not called:
        return []  # nothing to verify against here (or it read them, never ran them)
    fix.deferred = called
    same = CellRewrite(fix.source, fix.source, [])

    def replayed(group: list[Deferred]) -> Any:
        prefix = fix.files_prefix + "".join(d.code for d in group)  # (verified files first)
        result = fix.replay(same, frozenset(), ctx, prefix=prefix)
        fix.rounds.remove(result)  # the cell's own rewrite is judged on its own rounds
        return result

    waiting = pending(fix.session)
    verdicts = judge_calls(fix.source, called, replayed, ctx.namespace)
    for deferred, given in zip(called, verdicts, strict=True):
        if deferred in waiting:
            waiting.remove(deferred)
        if given.accepted:
            fix.prefix += deferred.code
            fix.take_effect(deferred.code, [deferred], ctx.namespace, deferred.record_cell)
    return verdicts


def judge_calls(
    source: str,
    called: list[Deferred],
    replayed: Callable[[list[Deferred]], Any],
    namespace: Mapping[str, Any],
) -> list[DefinitionVerdict]:
    """The calling cell's (``source``) verdict on each of ``called``, in order, from
    ``replayed`` (its replay with the given definitions before it, a `Round`): all
    together, and each alone where together they do not agree. A cell that reads an
    array subclass of its own semantics (a masked array) refuses them unreplayed: its
    replays would move it as a plain array."""
    held = own_semantics_reason(own_semantics_arrays(namespace, mask_magics(source)[0]))
    if held is not None:
        return [verdict(d, False, call_site(source, d.names), held) for d in called]
    together = replayed(called)
    results = {id(d): together for d in called}
    if not together.accepted and len(called) > 1:  # which one: each alone
        results = {id(d): replayed([d]) for d in called}
    verdicts = []
    for deferred in called:
        result = results[id(deferred)]
        where = call_site(source, deferred.names)
        detail = list(result.verified_on) if result.accepted else (result.why or "")
        verdicts.append(verdict(deferred, result.accepted, where, detail))
    return verdicts


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def hunks(diff: str) -> dict[int, tuple[int, int]]:
    """The hunks of a unified ``diff`` made without context, by the line `patched` gives
    its ``chosen`` (the hunk's first line in the original): the original lines each
    replaces, first and last (an insertion replaces none: last is first - 1)."""
    out = {}
    for line in diff.splitlines():
        hunk = _HUNK.match(line)
        if hunk:
            count = 1 if hunk[2] is None else int(hunk[2])
            first = int(hunk[1]) if count else int(hunk[1]) + 1
            out[int(hunk[1])] = (first, first + count - 1)
    return out


def patched(original: str, diff: str, chosen: Any = None) -> str:
    """``original`` with the hunks of the unified ``diff`` (made from it without context,
    `CellRewrite.diff`) applied; with ``chosen``, only the hunks at the original lines
    for which ``chosen(line)`` is true."""
    old = (original if original.endswith("\n") else original + "\n").splitlines(keepends=True)
    out: list[str] = []
    at, take, started = 0, True, False
    for line in diff.splitlines(keepends=True):
        hunk = _HUNK.match(line)
        if hunk:
            count = 1 if hunk[2] is None else int(hunk[2])
            start = int(hunk[1]) - (0 if count == 0 else 1)
            out.extend(old[at:start])
            at = start
            take, started = chosen is None or chosen(int(hunk[1])), True
        elif not started or line.startswith("\\"):
            continue  # the file header; "no newline at end of file"
        elif line.startswith("-"):
            if not take:
                out.append(old[at])
            at += 1
        elif line.startswith("+") and take:
            out.append(line[1:])
        elif line.startswith(" "):
            out.append(old[at])
            at += 1
    out.extend(old[at:])
    return "".join(out)
