"""A function's rewrite verified at every call (``porter fix``, issue 28 item 3).

A rewritten function is verified where it is first called (in its own cell, or at a
later cell's call: `porter_ext.fix.deferred`) and then put in effect, so that the cells
after are verified with it. One call proves little for the next: ``xp.cumulative_sum(a)``
agrees with ``np.cumsum(a)`` on a 1-D ``a`` and raises on a 2-D one. So every later cell
runs the person's own function (the namespace holds it for the cell's run: the person's
session computes what the original notebook computes), and a cell that called it is
replayed with the portable function put before it on the original backend: when that
replay disagrees with the cell's run, the function's rewrite is refused there (it stays
as written in the ported notebook, `porter_ext.fix.settle`) and the cells after run and
verify with the person's function. The portable function is what the namespace holds
between cells, so the ordinary replays of later cells run the notebook as ported.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from porter_ext.fix.deferred import Deferred, definitions_only, judge_calls
from porter_ext.fix.verify_rounds import Judge, Round, judged
from porter_ext.model.entries import DefinitionVerdict

if TYPE_CHECKING:
    from porter_ext.fix.verify import FixRun
    from porter_ext.fix.verify_rounds import Verification
    from porter_ext.model.cells import CellEntry

__all__ = [
    "InEffect",
    "brought_helpers",
    "in_effect",
    "originals_for_the_run",
    "ported_back",
    "register",
    "verify_calls",
]


@dataclass
class InEffect:
    """A rewritten function put in effect: its rewrite (a `Deferred`: the defining cell,
    the portable definition's code, where its calls are recorded), the function the
    person's code made, and the portable one."""

    definition: Deferred
    original: Any
    ported: Any

    @property
    def name(self) -> str:
        return self.definition.name


#: per session, the rewritten functions in effect, in the order they were put in effect
_IN_EFFECT: weakref.WeakKeyDictionary[object, list[InEffect]] = weakref.WeakKeyDictionary()


#: per session, the helpers (``array_namespace``, ``xpx``) that only a rewrite put in
#: effect imported into the person's namespace: a later rewrite imports them itself
_BROUGHT: weakref.WeakKeyDictionary[object, set[str]] = weakref.WeakKeyDictionary()


def brought_helpers(session: object) -> set[str]:
    """The session's helpers that only rewrites in effect imported (a set the caller may
    change)."""
    return _BROUGHT.setdefault(session, set())


def in_effect(session: object) -> list[InEffect]:
    """The session's functions in effect (a list the caller may change)."""
    return _IN_EFFECT.setdefault(session, [])


def register(
    session: object,
    definitions: list[Deferred],
    namespace: Mapping[str, Any],
    before: Mapping[str, Any],
) -> None:
    """Remember the functions ``put_in_effect`` just bound (``before``: what their names
    held, the person's functions), so that every later call of them is verified."""
    registry = in_effect(session)
    for definition in definitions:
        original, ported = before.get(definition.name), namespace.get(definition.name)
        if not callable(original) or not callable(ported) or original is ported:
            continue
        registry[:] = [e for e in registry if e.name != definition.name]
        registry.append(InEffect(definition, original, ported))


def defined_in(
    cell: int, code: str, record_cell: int | str, spans: Mapping[str, tuple[int, int]]
) -> list[Deferred]:
    """The functions of a verified cell's rewrite (``code``, plain Python) that it
    changed (``spans``: name → lines), as `Deferred` records of their portable code."""
    return [
        Deferred(cell, name, definitions_only(code, name), record_cell, span)
        for name, span in spans.items()
    ]


def originals_for_the_run(session: object, namespace: MutableMapping[str, Any]) -> list[InEffect]:
    """Before a cell's run: each function in effect gives its name back to the person's
    function, which the cell's run calls (the portable one is verified in a replay);
    returns those in effect. A name the person bound to something else since is no
    longer verified here."""
    registry = in_effect(session)
    kept = []
    for entry in list(registry):
        value = namespace.get(entry.name)
        if value is entry.ported or value is entry.original:
            namespace[entry.name] = entry.original
            kept.append(entry)
        else:
            registry.remove(entry)
    return kept


def ported_back(session: object, namespace: MutableMapping[str, Any]) -> None:
    """After the cell: the functions still in effect are the portable ones again (unless
    the cell bound their names to something else)."""
    for entry in in_effect(session):
        if namespace.get(entry.name) is entry.original:
            namespace[entry.name] = entry.ported


def verify_calls(fix: FixRun, entry: CellEntry, ctx: Verification) -> list[DefinitionVerdict]:
    """The verdicts on the functions in effect that the cell of ``fix`` (a `FixRun`)
    called: its replay on the original backend with their portable definitions put
    before it, judged against its run (which called the person's functions). A refused
    one is no longer in effect; the accepted ones are put before the cell's own rounds
    (``fix.prefix``)."""
    from porter_ext.fix.rewrite import CellRewrite

    called = [e for e in fix.ported if e.definition.ran_in(fix.source, entry.calls)]
    if not called or fix.plan is None or not ctx.specs:
        return []
    if ctx.run.exception is not None:  # nothing to compare with: kept, as before the call
        fix.prefix += "".join(e.definition.code for e in called)
        return []
    original = dataclasses.replace(ctx, specs=list(ctx.specs[:1]))
    same = CellRewrite(fix.source, fix.source, [])

    def replayed(group: list[Deferred]) -> Round:
        prefix = "".join(d.code for d in group)
        result = fix.replay(same, frozenset(), original, prefix=prefix, judge=Judge({}, dtypes))
        fix.rounds.remove(result)  # the cell's own rewrite is judged on its own rounds
        if result.accepted or not group or result.skipped:
            return result
        # a cell whose replay differs from its run as written too (random draws it does
        # not replay alike): judged against that replay, as the cell's own rounds are
        control = replayed([])
        if control.accepted or not control.entries:
            return result
        judge = Judge({control.entries[0].backend: control.entries[0]}, dtypes)
        return judged(frozenset(), fix.source, result.entries, judge, original, prefix.count("\n"))

    dtypes = fix.judge.dtypes
    verdicts = judge_calls(fix.source, [e.definition for e in called], replayed, ctx.namespace)
    registry = in_effect(fix.session)
    for item, given in zip(called, verdicts, strict=True):
        if given.accepted:
            fix.prefix += item.definition.code
        elif item in registry:
            registry.remove(item)  # the person's function stays, for this cell and after
    return verdicts
