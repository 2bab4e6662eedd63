"""Which sites make a ported cell non-portable, and why, one line each (issue 29 item 4).

An accepted rewrite that does not verify on a backend fails there (or gives another
result there) at some line of the cell. Where that line is left as written (a call the
table has no rewrite for, a site left out), the call there is what keeps the cell from
that backend, not the rewritten sites: ``line 1 `emb = C[X]`: left as written (no rewrite
proposed); fails on strict: IndexError: ...``. The replays' lines are the rewritten
source's (imports and ``xp = ...`` added); they are placed in the cell by a line diff.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from porter_ext.fix.cellscope import ended
from porter_ext.model.entries import RewriteSiteEntry
from porter_ext.spec.replacements import find

if TYPE_CHECKING:
    from porter_ext.fix.verify_rounds import Round
    from porter_ext.model.calls import CallRecord
    from porter_ext.model.entries import ReplayEntry

__all__ = ["Blocker", "blockers", "blocked_sites", "cell_line", "every_finding_sited"]

#: how much of a replay's error message a one-line reason keeps
_MESSAGE_CHARS = 160
_NO_REWRITE = "no rewrite proposed"
#: how alike a rewritten line and the cell's line it comes from read, at the least
_ALIKE = 0.5


@dataclass
class Blocker:
    """A line of the cell that a replay of the accepted rewrite failed at (or whose
    output differs there as in the original cell's replay): its text, whether the
    rewrite changed it, and what happened on each backend."""

    line: int
    text: str
    changed: bool
    #: backend → what happened there ("IndexError: ...")
    on: dict[str, str] = field(default_factory=dict)


def cell_line(original: str, rewritten: str, line: int) -> tuple[int, bool] | None:
    """The cell's line that line ``line`` of ``rewritten`` comes from, and whether the
    rewrite changed it; None for a line the rewrite added (an import, ``xp = ...``)."""
    before = ended(original).splitlines()
    after = ended(rewritten).splitlines()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if not j1 < line <= j2:
            continue
        if tag == "equal":
            return i1 + line - j1, False
        if tag != "replace":
            return None
        # the cell's line in the block that the rewritten one reads most like (a block
        # holds added lines too: an import, ``xp = array_namespace(...)``)
        text = after[line - 1]
        likeness = {
            i: difflib.SequenceMatcher(None, before[i], text, autojunk=False).ratio()
            for i in range(i1, i2)
        }
        best = max(likeness, key=lambda i: likeness[i], default=None)
        if best is None or likeness[best] < _ALIKE:
            return None
        return best + 1, True
    return None


def _assigned_line(source: str, name: str) -> int | None:
    """The last line of the cell's top level that binds ``name`` (an output's variable)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = None
    for node in tree.body:
        if any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
            for n in ast.walk(node)
        ):
            found = node.lineno
    return found


def _clip(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else text
    return first if len(first) <= _MESSAGE_CHARS else first[: _MESSAGE_CHARS - 1] + "…"


def blockers(
    original: str, rewritten: str, best: Round, missing: Iterable[str]
) -> dict[int, Blocker]:
    """The cell's lines that keep the accepted rewrite (round ``best``, source
    ``rewritten``) from verifying on the ``missing`` backends, by line."""
    lines = ended(original).splitlines()
    found: dict[int, Blocker] = {}
    replays: Mapping[str, ReplayEntry] = {e.backend: e for e in best.entries}

    def note(line: int | None, spec: str, what: str, placed: bool = False) -> None:
        if line is None:
            return
        if placed:  # a line of the cell already (an output's assignment)
            where: tuple[int, bool] | None = (line, _changed(original, rewritten, line))
        else:
            where = cell_line(original, rewritten, line - best.shift)
        if where is None or not 0 < where[0] <= len(lines):
            return
        at, changed = where
        blocker = found.setdefault(at, Blocker(at, lines[at - 1].strip(), changed))
        blocker.on.setdefault(spec, what)

    for spec in missing:
        replay = replays.get(spec)
        if replay is None:
            continue
        error = replay.error
        if replay.status == "error" and error is not None and error.line is not None:
            note(error.line, spec, f"fails on {spec}: {error.type}: {_clip(error.message)}")
        for name in best.inherited.get(spec, []):
            variable = name.split("[", 1)[0].split(".", 1)[0]
            what = f"gives another {name} on {spec}, as the original cell does there"
            note(_assigned_line(original, variable), spec, what, placed=True)
    return found


def _changed(original: str, rewritten: str, line: int) -> bool:
    """Whether the rewrite changed line ``line`` of the cell."""
    text = ended(original).splitlines()[line - 1]
    return text not in ended(rewritten).splitlines()


def blocked_sites(
    sites: Sequence[RewriteSiteEntry],
    found: Mapping[int, Blocker],
    calls: Iterable[CallRecord],
    source: str,
    first_line: int = 1,
) -> tuple[list[RewriteSiteEntry], list[tuple[list[str], str]]]:
    """``sites`` with a one-line reason on each site left as written that blocks the
    cell (a recorded finding the rewrite has no site for gets one), and those lines, each
    with the backends it keeps the cell from; lines said as the cell's editor counts
    them (``first_line``: the editor line of the source's first line)."""
    applied = {(s.line, s.col) for s in sites if s.applied}
    by_place = {(s.line, s.col, s.name): s for s in sites}
    out = list(sites)
    said: list[tuple[list[str], str]] = []
    for line, blocker in sorted(found.items()):
        shown = line + first_line - 1
        where = "; ".join(blocker.on.values())
        specs = list(blocker.on)
        held = [
            c
            for c in calls
            if c.origin is None and c.flagged and c.line == line and (c.line, c.col) not in applied
        ]
        if not held:
            how = "as rewritten" if blocker.changed else "as written"
            said.append((specs, f"line {shown} `{blocker.text}` {how}: {where}"))
            continue
        for call in _distinct(held):
            site = by_place.get((call.line, call.col, call.name)) or _by_position(sites, call)
            why = site.reason if site is not None and site.reason else _no_rewrite(call)
            # a site left out keeps its own reason first ("left out: alone, ...")
            text = (
                f"{why}; {where}" if why.startswith("left") else f"left as written ({why}); {where}"
            )
            said.append((specs, f"line {shown} `{blocker.text}`: {text}"))
            if site is not None:
                out[out.index(site)] = RewriteSiteEntry(
                    site.line, site.col, site.name, site.original, site.replacement, False, text
                )
            else:
                out.append(
                    RewriteSiteEntry(
                        call.line, call.col, call.name, _span(source, call), None, False, text
                    )
                )
    out.sort(key=lambda s: (s.line, s.col))
    return out, said


def every_finding_sited(
    sites: Sequence[RewriteSiteEntry], calls: Iterable[CallRecord], source: str
) -> list[RewriteSiteEntry]:
    """``sites`` and one more for each finding of the cell's own run that the codemod has
    no site for (a write's target, ``p.data += ...``; an attribute of a loop's variable,
    ``p.grad``): left as written, saying why as the table does (`_no_rewrite`), so that
    every finding the run recorded has its reason in the rewrite."""
    by_place = {(s.line, s.col, s.name) for s in sites}
    unsited = [
        c
        for c in _distinct([c for c in calls if c.origin is None and c.finding])
        if (c.line, c.col, c.name) not in by_place and _by_position(sites, c) is None
    ]
    if not unsited:
        return list(sites)
    more = [
        RewriteSiteEntry(c.line, c.col, c.name, _span(source, c), None, False, _no_rewrite(c))
        for c in unsited
    ]
    return sorted([*sites, *more], key=lambda s: (s.line, s.col))


def _no_rewrite(call: CallRecord) -> str:
    """Why a finding has no rewrite: the reason its table entries give (autograd,
    ``torch.nn``), where they all give one; else that no rewrite was proposed."""
    # the table names a method by its last name, a function without its library's
    name = call.name.rpartition(".")[2] if call.kind in ("method", "attribute") else None
    name = name or call.name.partition(".")[2]
    reasons = {e.no_rewrite for e in find(call.library, call.kind, name)}
    if len(reasons) == 1 and "" not in reasons:
        return reasons.pop()
    return _NO_REWRITE


def _distinct(calls: list[CallRecord]) -> list[CallRecord]:
    seen: dict[tuple[int, int, str], CallRecord] = {}
    for call in calls:
        seen.setdefault((call.line, call.col, call.name), call)
    return list(seen.values())


def _by_position(sites: Sequence[RewriteSiteEntry], call: CallRecord) -> RewriteSiteEntry | None:
    """The site at the call's place, named as the codemod names it (``array.max`` for the
    run's ``ndarray.max``)."""
    last = call.name.rpartition(".")[2]
    return next(
        (
            s
            for s in sites
            if (s.line, s.col) == (call.line, call.col) and s.name.rpartition(".")[2] == last
        ),
        None,
    )


def _span(source: str, call: CallRecord) -> str:
    """The call's text in the cell (its line where its span is not known)."""
    lines = ended(source).splitlines()
    end_line, end_col = call.end_line, call.end_col
    if end_line == call.line and end_col is not None and 0 < call.line <= len(lines):
        return lines[call.line - 1][call.col : end_col]
    return lines[call.line - 1].strip() if 0 < call.line <= len(lines) else call.name
