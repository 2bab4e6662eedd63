"""One recorded cell as every view sees it (`CellEntry`), and what is derived from it
once, when the entry is made: its headline (the counts and the one line) and its plan.

Every view (text, HTML, Markdown, the widget, the JupyterLab renderer) reads these
objects or their JSON form (`porter_ext.report.codec`, which round-trips them exactly).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from porter_ext.model.calls import CallRecord, ErrorInfo, cell_label
from porter_ext.model.comparison import DeviceFinding
from porter_ext.model.diagnostics import ROW_KINDS, Diagnostic, diagnostics_of
from porter_ext.model.entries import DefinitionVerdict, FileVerdict, ReplayEntry, RewriteEntry
from porter_ext.model.headline import Headline, HeadlineCounts
from porter_ext.model.plan import PlanItem, build_plan

#: what a view says of a cell whose source is no longer the one recorded (CONTRACT.md,
#: ``source_states``): the applied rewrite (its findings are gone with the code they
#: were about), or a source changed otherwise (its findings may have moved or gone)
SOURCE_STATES: dict[str, str] = {
    "applied": "rewrite applied; run the cell to check it again",
    "stale": "the cell changed since porter ran it; run it again to check it",
}


@dataclass(frozen=True)
class CellEntry:
    """One recorded cell: its source, what the original run called and raised, its replays."""

    index: int | None
    execution_count: int | None
    source: str
    error: ErrorInfo | None = None
    calls: list[CallRecord] = field(default_factory=list)
    device_findings: list[DeviceFinding] = field(default_factory=list)
    replays: list[ReplayEntry] = field(default_factory=list)
    #: what porter noted about the cell beyond its findings (e.g. a ``%port clear`` a
    #: headless run ignored); written only when there is one
    notes: list[str] = field(default_factory=list)
    #: the proposed rewrite into the standard (``--fix``), or None
    rewrite: RewriteEntry | None = None
    #: verdicts on earlier cells' definitions this cell called (``porter fix``); written
    #: only when there is one
    definition_verdicts: list[DefinitionVerdict] = field(default_factory=list)
    #: ``porter fix``: what this cell's replays said of the rewrite of each Python file of
    #: the person's it called into
    file_verdicts: list[FileVerdict] = field(default_factory=list)
    #: the editor line of the source's first line: 2 below a ``%%port`` line (the cell's
    #: line 1), 1 for a cell recorded whole; every line a view shows counts from it
    first_line: int = 1
    #: the rows the Porting panel and the editor marks show (`diagnostics_of`), derived
    #: once like the headline, which counts exactly these
    diagnostics: list[Diagnostic] = field(init=False, repr=False, compare=False)
    #: the counts and the one line every view shows (`headline_of`): derived here, once
    #: per entry, so no view counts; `dataclasses.replace` derives it again for the
    #: changed entry
    headline: Headline = field(init=False, repr=False, compare=False)
    #: the cell's own port plan (`porter_ext.model.plan`), derived once like the
    #: headline: the widget, the text and HTML views and the JSON show this one
    plan: list[PlanItem] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "diagnostics", diagnostics_of(self))
        object.__setattr__(self, "headline", headline_of(self))
        object.__setattr__(self, "plan", build_plan([self]))

    @property
    def label(self) -> str:
        """How views name the cell (`cell_label`): ``cell 3 · In [7]``."""
        return cell_label(self.index, self.execution_count)

    @property
    def error_text(self) -> str | None:
        """What the cell raised, in one line as every view says it (`ErrorInfo.text_in`,
        lines as the editor counts them); None where it raised nothing."""
        return None if self.error is None else self.error.text_in(self.first_line)

    def line(self, line: int | None) -> int | None:
        """A line of the recorded source as the editor counts it (`first_line`)."""
        return None if line is None else line + self.first_line - 1

    @property
    def title(self) -> str:
        """The label as a heading: ``Cell 3 · In [7]``."""
        label = self.label
        return label[:1].upper() + label[1:]


def headline_of(cell: CellEntry) -> Headline:
    """The cell's headline, counted once (by `CellEntry` as it is made) over exactly its
    diagnostics rows; replays are target replays only, since the control and the
    reference check the original itself."""
    targets = [r for r in cell.replays if r.role == "target"]
    rows = cell.diagnostics
    kinds = {k: sum(1 for r in rows if r.kind == k and r.finding) for k in ROW_KINDS}
    noted = {k: sum(1 for r in rows if r.kind == k and not r.finding) for k in ROW_KINDS}
    changed = {}  # backend → the dtype changes seen on it
    for replay in targets:
        for out in replay.outputs:
            if out.verdict == "dtype_changed" and replay.backend not in changed:
                pair = f" ({out.expected_dtype} → {out.dtype})" if out.expected_dtype else ""
                changed[replay.backend] = f"{replay.backend}{pair}"
    counts = HeadlineCounts(
        calls=sum(c.count for c in cell.calls),
        findings=sum(1 for r in rows if r.finding),
        device_findings=kinds["device"],
        replays=len(targets),
        replays_ok=sum(1 for r in targets if r.status == "ok"),
        failed_on=tuple(r.backend for r in targets if r.status in ("error", "timeout")),
        differs_on=tuple(sorted({r.backend for r in rows if r.kind == "mismatch" and r.backend})),
        error=None if cell.error is None else cell.error.type,
        notes=sum(noted.values()),
        kinds={k: n for k, n in kinds.items() if n},
        noted={k: n for k, n in noted.items() if n},
        dtype_changed_on=tuple(changed[b] for b in sorted(changed)),
    )
    return Headline.of(counts)
