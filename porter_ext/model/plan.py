"""The port plan: what to change first, as distinct fixes ranked by what they unblock.

A report that lists calls by how often they ran puts a loop's ``Tensor.view`` first and
the replay that cannot run at all last. The plan lists each distinct fix once: replay
failures first (nothing else about a cell can be judged while its replay fails), with
the line that failed and why; then non-standard calls grouped by their replacement, with
the cells they occur in; then device findings. Within a kind, the fix that touches the
most cells comes first. Each says whether a verified rewrite already covers it.

Derived once: each `CellEntry` carries its own plan, the `Report` the plan of all its
cells (the cell entry imports this module; this one names `CellEntry` for types only).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from porter_ext.model.cells import CellEntry
    from porter_ext.model.entries import RewriteEntry

__all__ = [
    "PLAN_KINDS",
    "PLAN_KIND_WORDS",
    "PLAN_STATES",
    "PlanItem",
    "PlanSite",
    "build_plan",
    "plan_line",
]

#: the kinds of fix, in the order the plan lists them
PLAN_KINDS: tuple[str, ...] = ("replay_failure", "non_standard", "device")
#: each kind of fix in the words every view shows
PLAN_KIND_WORDS: dict[str, str] = {
    "replay_failure": "replay failure",
    "non_standard": "outside the standard",
    "device": "device",
}
_NON_STANDARD = frozenset({"non_standard", "non_standard_usage"})
#: what became of a fix (CONTRACT.md ``plan[].state``): ``applied`` (a rewrite made it
#: and was put in the cell), ``verified`` (a verified rewrite covers it: Apply is
#: offered), ``partial`` (a rewrite covers it, but the cell's rewrite is not verified as
#: a whole: no Apply), ``refused`` (porter tried and refused it, with the reason),
#: ``needs_you`` (no rewrite: the person makes it)
PLAN_STATES: tuple[str, ...] = ("applied", "verified", "partial", "refused", "needs_you")
#: each state in the words every view shows (a reason follows partial and refused)
STATE_WORDS: dict[str, str] = {
    "applied": "applied",
    "verified": "verified rewrite (Apply offered)",
    "partial": "rewritten in a partial rewrite, not offered",
    "refused": "rewrite refused",
    "needs_you": "needs you",
}
_MAX_MESSAGE = 240


@dataclass(frozen=True)
class PlanSite:
    """Where a fix applies: a cell (its label) and a line of it (None: the whole cell)."""

    cell: str
    line: int | None = None


@dataclass
class PlanItem:
    """One distinct fix, with its ``state`` (`PLAN_STATES`) and ``state_text``, the state
    in words with its reason. ``automatic``: a verified (or applied) rewrite covers every
    site of it."""

    kind: str
    title: str
    cells: list[str] = field(default_factory=list)
    sites: list[PlanSite] = field(default_factory=list)
    automatic: bool = False
    #: why, in a sentence (the error of a failed replay, the replacement of a call)
    detail: str | None = None
    state: str = "needs_you"
    state_text: str = STATE_WORDS["needs_you"]

    @property
    def verdict(self) -> str:
        return self.state_text

    @property
    def kind_text(self) -> str:
        """The kind of fix in words (`PLAN_KIND_WORDS`)."""
        return PLAN_KIND_WORDS.get(self.kind, self.kind)


def plan_line(item: PlanItem) -> str:
    """The item as one line of text (``porter run``'s summary, the widget's plain text)."""
    where = ", ".join(item.cells[:6]) + (
        f" and {len(item.cells) - 6} more" if len(item.cells) > 6 else ""
    )
    return f"[{item.state_text}] {item.title} ({where})"


def _one_line(text: str | None, limit: int = _MAX_MESSAGE) -> str:
    value = " ".join(str(text or "").split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _source_line(cell: CellEntry, line: int | None) -> str:
    if line is None:
        return ""
    lines = str(cell.source).splitlines()
    return lines[line - 1].strip() if 1 <= line <= len(lines) else ""


class _Groups:
    """Items of one kind, keyed by what makes two findings the same fix."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.items: dict[Any, PlanItem] = {}
        self.first: dict[Any, int] = {}
        #: per item, per site: its state and the reason for it
        self.covered: dict[Any, list[tuple[str, str | None]]] = {}
        #: per item, its cells and sites so far (membership in constant time: a cell of
        #: 25 000 call sites of one function made this quadratic, turn4/attacks/87)
        self.seen: dict[Any, set[Any]] = {}

    def add(
        self,
        key: Any,
        title: str,
        detail: str | None,
        site: PlanSite,
        position: int,
        covered: tuple[str, str | None],
    ) -> None:
        item = self.items.get(key)
        if item is None:
            item = self.items[key] = PlanItem(self.kind, title, detail=detail)
            self.first[key] = position
            self.covered[key] = []
            self.seen[key] = set()
        seen = self.seen[key]
        if ("cell", site.cell) not in seen:
            seen.add(("cell", site.cell))
            item.cells.append(site.cell)
        if site not in seen:
            seen.add(site)
            item.sites.append(site)
            self.covered[key].append(covered)

    def ranked(self) -> list[PlanItem]:
        for key, item in self.items.items():
            item.state, reason = _item_state(self.covered[key])
            item.automatic = item.state in ("applied", "verified")
            words = STATE_WORDS[item.state]
            item.state_text = f"{words}: {_one_line(reason, 160)}" if reason else words
        order = sorted(
            self.items,
            key=lambda k: (
                -len(self.items[k].cells),
                -len(self.items[k].sites),
                self.first[k],
            ),
        )
        return [self.items[k] for k in order]


def _item_state(sites: list[tuple[str, str | None]]) -> tuple[str, str | None]:
    """An item's state from its sites': theirs where they agree; ``partial`` where a
    rewrite covers some; else ``needs_you`` where any is left to the person."""
    states = {state for state, _ in sites}
    reason = next((why for _, why in sites if why), None)
    if len(states) == 1:
        return states.pop(), reason
    if states & {"applied", "verified", "partial"}:
        return "partial", reason
    return ("needs_you" if "needs_you" in states else "refused"), reason


def _site_state(
    cell: CellEntry, covered: bool, site_reason: str | None = None
) -> tuple[str, str | None]:
    """A site's state: covered by the cell's rewrite (verified, or partial with the
    rewrite's reason), refused (the rewrite's, or the site's own reason), else needs you."""
    rewrite = cell.rewrite
    if rewrite is None:
        return "needs_you", None
    if covered:
        if rewrite.applied:
            return "applied", None
        if rewrite.status == "verified":
            return "verified", None
        return "partial", rewrite.reason
    if rewrite.status == "refused":
        return "refused", rewrite.reason or site_reason
    if site_reason:
        return "refused", site_reason
    return "needs_you", None


def _site_reasons(cell: CellEntry) -> dict[tuple[int, str], str]:
    """(line, name) → why the rewrite left that site as written."""
    rewrite = cell.rewrite
    if rewrite is None:
        return {}
    return {(s.line, s.name): s.reason for s in rewrite.sites if not s.applied and s.reason}


def _verified(cell: CellEntry) -> RewriteEntry | None:
    rewrite = cell.rewrite
    if rewrite is None or rewrite.status not in ("verified", "partial"):
        return None
    return rewrite


def _rewritten(cell: CellEntry) -> set[tuple[int, str]]:
    """(line, name) of every call a verified rewrite replaced."""
    rewrite = _verified(cell)
    return set() if rewrite is None else {(s.line, s.name) for s in rewrite.sites if s.applied}


def _replay_failures(cells: Sequence[CellEntry], groups: _Groups) -> None:
    for position, cell in enumerate(cells):
        rewrite = _verified(cell)
        failed: dict[tuple[str, str, int | None, str | None, int | None], list[str]] = {}
        for replay in cell.replays:
            if replay.role != "target" or replay.status not in ("error", "timeout"):
                continue
            error = replay.error
            kind = error.type if error is not None else replay.status
            message = _one_line(error.message if error is not None else replay.reason)
            line = error.line if error is not None else None
            file = error.file if error is not None else None
            file_line = error.file_line if error is not None else None
            failed.setdefault((kind, message, line, file, file_line), []).append(replay.backend)
        # one error message is one fix, wherever it struck (the first site names the line)
        for (kind, message, line, file, file_line), backends in failed.items():
            text = _source_line(cell, line)
            shown = cell.line(line)
            at = (
                f"line {shown} `{_one_line(text, 80)}`"
                if text
                else (f"line {shown}" if line else "the cell")
            )
            if file is not None:  # raised in the person's file the cell called: there first
                at = f"{file} line {file_line}, called from {at}"
            title = f"replay on {', '.join(backends)} fails at {at}: {kind}: {message}"
            covered = rewrite is not None and set(backends) <= set(rewrite.verified_on)
            detail = f"{kind}: {message}"
            groups.add(
                (kind, message),
                title,
                detail,
                PlanSite(cell.label, cell.line(line)),
                position,
                _site_state(cell, covered),
            )


def _calls(cells: Sequence[CellEntry], calls: _Groups, device: _Groups) -> None:
    for position, cell in enumerate(cells):
        done = _rewritten(cell)
        reasons = _site_reasons(cell)
        for call in cell.calls:
            if call.status in _NON_STANDARD:
                groups = calls
            elif call.status == "device_specific":
                groups = device
            else:
                continue
            origin = call.origin  # the site is where the code is written
            if origin is None:
                site = PlanSite(cell.label, cell.line(call.line))
            else:
                site = PlanSite(origin.label, origin.editor_line)
            fix = (
                call.suggestion
                or "no standard replacement: keep it behind xp.backend or rewrite it"
            )
            title = f"{call.name} → {call.suggestion}" if call.suggestion else f"{call.name}: {fix}"
            if call.status == "non_standard_usage" and call.suggestion is None:
                title = (
                    f"{call.name}: {_one_line(call.message, 120) or 'a usage outside the standard'}"
                )
            covered = origin is None and (call.line, call.name) in done
            # one replacement, whatever the arguments it was spelled with at each site
            fix_key = call.standard_name or call.suggestion
            groups.add(
                (call.name, fix_key, call.status),
                title,
                _one_line(call.message) or None,
                site,
                position,
                _site_state(cell, covered, reasons.get((call.line, call.name))),
            )


def _device_findings(cells: Sequence[CellEntry], groups: _Groups) -> None:
    for position, cell in enumerate(cells):
        lines = {line for line, _ in _rewritten(cell)}
        for finding in cell.device_findings:
            if finding.kind == "host_sync":
                continue  # a call the calls table already names (status host_sync)
            title = f"{finding.kind.replace('_', ' ')}: {finding.name}"
            covered = finding.line in lines
            groups.add(
                (finding.kind, finding.name),
                title,
                _one_line(finding.message) or None,
                PlanSite(cell.label, cell.line(finding.line)),
                position,
                _site_state(cell, covered),
            )


def build_plan(cells: Iterable[CellEntry]) -> list[PlanItem]:
    """The plan of cell entries (see the module doc)."""
    cells = list(cells)
    failures, calls = _Groups("replay_failure"), _Groups("non_standard")
    device = _Groups("device")
    _replay_failures(cells, failures)
    _calls(cells, calls, device)
    _device_findings(cells, device)
    return [*failures.ranked(), *calls.ranked(), *device.ranked()]
