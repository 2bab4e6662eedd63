"""The report's findings gathered by call, for the "top findings" of both views.

A notebook often repeats one mistake (`torch.max(a, b)` in ten cells); a reader wants it
once, with how often and where, before the cell-by-cell detail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from porter_ext.model.report import Report

#: Order in which statuses are listed: what breaks portability first, deliberate last.
STATUS_ORDER: dict[str, int] = {
    "non_standard": 0,
    "non_standard_usage": 1,
    "device_specific": 2,
    "host_sync": 3,
    "acknowledged": 4,
    "standard": 5,
}


@dataclass
class FindingGroup:
    """All calls of one name with one status: total count, the cells they occur in, and the
    first suggestion given for them."""

    name: str
    status: str
    count: int = 0
    sites: int = 0
    cells: list[str] = field(default_factory=list)
    suggestion: str | None = None


def group_findings(report: Report) -> list[FindingGroup]:
    """Non-standard calls of the original runs, one group per (name, status), most severe
    status first, then most frequent."""
    groups: dict[tuple[str, str], FindingGroup] = {}
    for cell in report.cells:
        for call in cell.calls:
            if not call.flagged:
                continue
            group = groups.setdefault(
                (call.name, call.status), FindingGroup(call.name, call.status)
            )
            group.count += call.count
            group.sites += 1
            if not group.cells or group.cells[-1] != cell.label:
                group.cells.append(cell.label)
            if group.suggestion is None and call.suggestion:
                group.suggestion = call.suggestion
    return sorted(groups.values(), key=lambda g: (STATUS_ORDER.get(g.status, 9), -g.count, g.name))
