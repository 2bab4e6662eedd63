"""One recorded cell as every view sees it (`CellEntry`), and what is derived from it
once, when the entry is made: its headline (the counts and the one line) and its plan.

Every view (text, HTML, Markdown, the widget, the JupyterLab renderer) reads these
objects or their JSON form (`porter_ext.report.codec`, which round-trips them exactly).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from porter_ext.model.calls import CallRecord, ErrorInfo, cell_label
from porter_ext.model.comparison import DeviceFinding
from porter_ext.model.entries import DefinitionVerdict, FileVerdict, ReplayEntry, RewriteEntry
from porter_ext.model.headline import Headline, HeadlineCounts
from porter_ext.model.plan import PlanItem, build_plan


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
    #: the counts and the one line every view shows (`headline_of`): derived here, once
    #: per entry, so no view counts; `dataclasses.replace` derives it again for the
    #: changed entry
    headline: Headline = field(init=False, repr=False, compare=False)
    #: the cell's own port plan (`porter_ext.model.plan`), derived once like the
    #: headline: the widget, the text and HTML views and the JSON show this one
    plan: list[PlanItem] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headline", headline_of(self))
        object.__setattr__(self, "plan", build_plan([self]))

    @property
    def label(self) -> str:
        """How views name the cell (`cell_label`): ``cell 3 · In [7]``."""
        return cell_label(self.index, self.execution_count)

    @property
    def title(self) -> str:
        """The label as a heading: ``Cell 3 · In [7]``."""
        label = self.label
        return label[:1].upper() + label[1:]


#: kinds of difference a headline names a backend for (values that differ, or an output
#: whose shape or dtype changed); order and sign only are not differences to act on
DIFFERS = frozenset({"numeric", "dtype_changed", "shape_changed"})


def device_finding_count(cell: CellEntry) -> int:
    """The cell's device findings plus the target outputs whose device is wrong and that
    no finding names: the count the headline, the summary and the tables agree on."""
    named = {(f.backend, f.name) for f in cell.device_findings}
    wrong = {
        (replay.backend, out.name)
        for replay in cell.replays
        if replay.role == "target"
        for out in replay.outputs
        if out.device_ok is False
    }
    return len(cell.device_findings) + len(wrong - named)


def differing_backends(cell: CellEntry) -> list[str]:
    """Target backends on which an output differs in value, dtype or shape (not where it
    only landed on another device: that is a device finding)."""
    return sorted(
        {
            replay.backend
            for replay in cell.replays
            if replay.role == "target"
            for out in replay.outputs
            if out.within_tolerance is False or out.difference in DIFFERS
        }
    )


def headline_of(cell: CellEntry) -> Headline:
    """The cell's headline, counted once (by `CellEntry` as it is made): target replays
    only, since the control and the reference check the original itself."""
    targets = [r for r in cell.replays if r.role == "target"]
    counts = HeadlineCounts(
        calls=sum(c.count for c in cell.calls),
        findings=sum(1 for c in cell.calls if c.is_finding),
        device_findings=device_finding_count(cell),
        replays=len(targets),
        replays_ok=sum(1 for r in targets if r.status == "ok"),
        failed_on=tuple(r.backend for r in targets if r.status in ("error", "timeout")),
        differs_on=tuple(differing_backends(cell)),
        error=None if cell.error is None else cell.error.type,
    )
    return Headline.of(counts)
