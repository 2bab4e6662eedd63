"""The whole report (CONTRACT.md, schema ``porter.report/1``): where the cells came from,
the environment the run could see, the cells, and what is derived from them once, when
the report is built: the summary (from the cells' headlines) and the port plan.

Its JSON form (`porter_ext.report.codec`) and reading a report back with validation are
the report stage's (`porter_ext.report`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from porter_ext.model.calls import FINDING_STATUSES
from porter_ext.model.cells import CellEntry
from porter_ext.model.environment import BackendEntry, Environment
from porter_ext.model.plan import PlanItem, build_plan

__all__ = [
    "NON_STANDARD_STATUSES",
    "SCHEMA",
    "BackendEntry",
    "Environment",
    "Report",
    "Source",
    "Summary",
]


SCHEMA = "porter.report/1"

#: Call statuses that make code non-portable and are counted in `Summary.non_standard`.
#: `acknowledged` is a deliberate deviation through the escape hatch, and `host_sync` is a
#: performance matter (`float(x)` is standard), so neither counts.
NON_STANDARD_STATUSES = FINDING_STATUSES


@dataclass(frozen=True)
class Summary:
    """Counts over all cells, for a headline and for `porter run --fail-on`.

    - `calls`: sum of `count` over the original run's calls (identical calls merged at a
      site still count each time they ran); replay calls are not counted.
    - `non_standard`: the same sum over calls whose status is in `NON_STANDARD_STATUSES`.
    - `device_findings`, `replays_ok`, `replays_failed`: the sums of the cells' headline
      counts (`CellEntry.headline`), so the summary says what the cells say: device
      findings and target outputs on the wrong device without one; target replays ok;
      target replays that raised or timed out (skipped replays are neither).
    - `mismatches`: outputs of ok target replays whose verdict is ``mismatch``.
      A wrong device is a device finding, not a mismatch.
    """

    cells: int = 0
    calls: int = 0
    non_standard: int = 0
    device_findings: int = 0
    replays_ok: int = 0
    replays_failed: int = 0
    mismatches: int = 0

    @property
    def text(self) -> str:
        """The counts in one line, as every view of a whole report says them (CONTRACT.md,
        ``summary.text``)."""
        return (
            f"{self.cells} cell(s), {self.calls} array call(s), {self.non_standard} outside "
            f"the standard, {self.device_findings} device finding(s), {self.replays_ok} "
            f"replay(s) ok, {self.replays_failed} failed, {self.mismatches} numeric "
            "mismatch(es)"
        )

    @classmethod
    def of(cls, cells: Iterable[CellEntry]) -> Summary:
        counts = dict.fromkeys((f.name for f in fields(cls)), 0)
        for cell in cells:
            headline = cell.headline.counts
            counts["cells"] += 1
            counts["calls"] += headline.calls
            counts["device_findings"] += headline.device_findings
            counts["replays_ok"] += headline.replays_ok
            counts["replays_failed"] += len(headline.failed_on)
            counts["non_standard"] += sum(
                c.count for c in cell.calls if c.status in NON_STANDARD_STATUSES
            )
            counts["mismatches"] += sum(
                1
                for replay in cell.replays
                if replay.role == "target" and replay.status == "ok"
                for o in replay.outputs
                if o.verdict == "mismatch"
            )
        return cls(**counts)


@dataclass(frozen=True)
class Source:
    """Where the cells came from: a notebook name, or None for a live session."""

    notebook: str | None = None


@dataclass(frozen=True, kw_only=True)
class Report:
    """The whole report. Build one with `Report.build` so that the summary matches the cells."""

    porter_version: str
    array_api_version: str
    source: Source
    environment: Environment
    cells: list[CellEntry]
    summary: Summary
    schema: str = SCHEMA
    #: the port plan (`porter_ext.model.plan`): distinct fixes, what blocks the port first
    plan: list[PlanItem] = field(default_factory=list)

    @property
    def environment_text(self) -> str:
        """What the report was made with, in one line as every view of it says it
        (CONTRACT.md, ``environment.text``): ``porter 0.4 · array API standard 2024.12 ·
        Python 3.12.3``."""
        return (
            f"porter {self.porter_version} · array API standard {self.array_api_version} · "
            f"Python {self.environment.python}"
        )

    @classmethod
    def build(
        cls,
        cells: Iterable[CellEntry],
        environment: Environment,
        *,
        array_api_version: str,
        notebook: str | None = None,
        porter_version: str | None = None,
    ) -> Report:
        if porter_version is None:
            from porter_ext._version import __version__ as porter_version
        cells = list(cells)
        return cls(
            porter_version=porter_version,
            array_api_version=array_api_version,
            source=Source(notebook),
            environment=environment,
            cells=cells,
            summary=Summary.of(cells),
            plan=build_plan(cells),
        )
