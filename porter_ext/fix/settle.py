"""The verdicts of later calls given to the cells that define the functions (``porter
fix``, porter's side, once the notebook ran).

A function's rewrite is judged at every call a later cell made of it
(`porter_ext.fix.deferred` for the first call of a function only defined,
`porter_ext.fix.every_call` for every call after it is in effect); each calling cell's
entry carries its verdicts (`DefinitionVerdict`). A function every call agreed with is
applied; one a call refused is left as written in the defining cell, with that call
site and why: a deferred rewrite is settled function by function, and a rewrite
verified in its own cell loses the refused functions' part (the rest of it stays).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from porter_ext.fix.deferred import NEVER_CALLED, WAITING, def_spans, patched
from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import DefinitionVerdict, RewriteEntry

__all__ = ["settle"]

#: the verdicts on one function, in the order of the calling cells (verdict, cell index)
_Calls = list[tuple[DefinitionVerdict, int | None]]


def _function_of(line: int, spans: dict[str, tuple[int, int]]) -> str | None:
    return next((name for name, (a, b) in spans.items() if a <= line <= b), None)


def settle(cells: list[CellEntry]) -> list[CellEntry]:
    """The cells with each function's rewrite given the verdicts of its calls: applied
    where every later call verified it, left as written (with the call site that
    refused it, or "never called") otherwise."""
    verdicts: dict[tuple[int, str], _Calls] = {}
    for cell in cells:
        for given in cell.definition_verdicts:
            verdicts.setdefault((given.cell, given.name), []).append((given, cell.index))
    return [_reverted(_settled(cell, verdicts), verdicts) for cell in cells]


def _refusal(name: str, calls: _Calls) -> str | None:
    """Why the first call that refused ``name`` did (None: none did)."""
    for given, later in calls:
        if not given.accepted:
            return f"refused {name} at its call in cell {later} ({given.where}): {given.reason}"
    return None


def _verified(name: str, calls: _Calls) -> str:
    if len(calls) == 1:
        given, later = calls[0]
        return f"verified {name} at its call in cell {later} ({given.where})"
    cells = ", ".join(dict.fromkeys(str(later) for _, later in calls))
    return f"verified {name} at its calls in cells {cells}"


def _settled(cell: CellEntry, verdicts: dict[tuple[int, str], _Calls]) -> CellEntry:
    """A deferred rewrite (definitions nothing in their cell called) settled function by
    function."""
    rewrite = cell.rewrite
    if (
        rewrite is None
        or cell.index is None
        or rewrite.reason != NEVER_CALLED
        or not any(s.reason == WAITING for s in rewrite.sites)
    ):
        return cell
    spans = def_spans(cell.source)
    waiting = {_function_of(s.line, spans) for s in rewrite.sites if s.reason == WAITING}
    accepted: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for name in sorted(n for n in waiting if n is not None):
        calls = verdicts.get((cell.index, name), [])
        refused = _refusal(name, calls)
        if not calls:
            reasons[name] = f"{name}: {NEVER_CALLED}"
        elif refused is not None:
            reasons[name] = refused
        else:  # the first call verified it on every backend; the later ones on the original's
            accepted[name] = list(calls[0][0].verified_on)
            reasons[name] = _verified(name, calls)

    def site(s: Any) -> Any:
        if s.reason != WAITING:
            return s
        name = _function_of(s.line, spans)
        if name in accepted:
            return dataclasses.replace(s, applied=True, reason=None)
        return dataclasses.replace(s, reason=f"left out: {reasons.get(name, NEVER_CALLED)}")

    sites = [site(s) for s in rewrite.sites]
    reason = "; ".join(reasons.values()) or NEVER_CALLED
    if not accepted:
        return dataclasses.replace(
            cell, rewrite=dataclasses.replace(rewrite, sites=sites, reason=reason)
        )
    keep = set(accepted) | {None}  # None: lines outside any function (the imports)
    source = patched(cell.source, rewrite.diff, lambda line: _function_of(line, spans) in keep)
    specs = list(accepted.values())
    on = [spec for spec in specs[0] if all(spec in other for other in specs)]
    status = "verified" if all(s.applied for s in sites) else "partial"
    new = RewriteEntry(
        source=source,
        status=status,
        verified_on=on,
        sites=sites,
        reason=reason,
        diff=_diff(cell.source, source),
    )
    return dataclasses.replace(cell, rewrite=new)


def _reverted(cell: CellEntry, verdicts: dict[tuple[int, str], _Calls]) -> CellEntry:
    """An applied rewrite without the functions a later call refused: their lines as
    written, their sites left out with that call's reason (all of it as written when
    nothing else is left)."""
    rewrite = cell.rewrite
    if rewrite is None or cell.index is None or rewrite.status not in ("verified", "partial"):
        return cell
    spans = def_spans(cell.source)
    refused = {
        name: why
        for name in spans
        if (why := _refusal(name, verdicts.get((cell.index, name), []))) is not None
    }
    if not refused:
        return cell

    def site(s: Any) -> Any:
        name = _function_of(s.line, spans)
        if not s.applied or name not in refused:
            return s
        return dataclasses.replace(s, applied=False, reason=f"left out: {refused[name]}")

    sites = [site(s) for s in rewrite.sites]
    reason = "; ".join([*([rewrite.reason] if rewrite.reason else []), *refused.values()])
    if not any(s.applied for s in sites):
        new = RewriteEntry(cell.source, "refused", [], sites, reason, "")
        return dataclasses.replace(cell, rewrite=new)
    hunks = _diff(cell.source, rewrite.source, context=0)
    source = patched(cell.source, hunks, lambda line: _function_of(line, spans) not in refused)
    new = dataclasses.replace(
        rewrite,
        source=source,
        status="partial",
        sites=sites,
        reason=reason,
        diff=_diff(cell.source, source),
    )
    return dataclasses.replace(cell, rewrite=new)


def _diff(original: str, source: str, context: int = 3) -> str:
    from porter_ext.fix.rewrite import CellRewrite

    return CellRewrite(original, source).diff(context=context)
