"""The report model: dataclasses that mirror the JSON report of CONTRACT.md, one to one.

Every view (HTML, Markdown, the widget, the JupyterLab renderer) reads these objects or
their JSON form, so `to_dict` / `from_dict` must round-trip exactly. Records produced by
the earlier stages (`CallRecord`, `ErrorInfo`, `DeviceFinding`, `OutputComparison`) are
used as they are; the report adds only what a report needs on top of them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from porter_ext.compare.model import DeviceFinding, ErrorHistogram, OutputComparison
from porter_ext.fix.plan import PlanItem, build_plan
from porter_ext.record.model import CallOrigin, CallRecord, ErrorInfo, cell_label
from porter_ext.report.headline import Headline, HeadlineCounts
from porter_ext.report.validation import ReportError, parse_report_json

SCHEMA = "porter.report/1"

ReplayStatus = Literal["ok", "error", "skipped", "timeout", "not_exercised"]
REPLAY_STATUSES: tuple[str, ...] = ("ok", "error", "skipped", "timeout", "not_exercised")
#: why a replay ran: a backend to port to, the original backend again (the control, for
#: determinism), or the float64 reference
REPLAY_ROLES: tuple[str, ...] = ("target", "control", "reference")

#: Call statuses that make code non-portable and are counted in `Summary.non_standard`.
#: `acknowledged` is a deliberate deviation through the escape hatch, and `host_sync` is a
#: performance matter (`float(x)` is standard), so neither counts.
NON_STANDARD_STATUSES = frozenset({"non_standard", "non_standard_usage", "device_specific"})

#: Float fields that may legitimately be infinite or NaN (an output with an inf where the
#: original had a finite number). JSON has no such numbers, so they travel as strings.
_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _float_out(value: float | None) -> float | str | None:
    if value is None or math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def _float_in(value: float | int | str | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        return _NONFINITE[value]
    return float(value)


def _record_dict(obj: Any) -> dict[str, Any]:
    """All dataclass fields of a record, so fields added by an earlier stage travel too."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def _known(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of `data` that are fields of `cls`: unknown keys (a newer writer) are ignored."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def _error_in(data: Mapping[str, Any] | None) -> ErrorInfo | None:
    return None if data is None else ErrorInfo(**_known(ErrorInfo, data))


def _error_out(error: ErrorInfo | None) -> dict[str, Any] | None:
    return None if error is None else _record_dict(error)


def call_to_dict(call: CallRecord) -> dict[str, Any]:
    data = _record_dict(call)
    data["devices_in"] = list(call.devices_in)
    data["origin"] = None if call.origin is None else _record_dict(call.origin)
    del data["origin_cell"]  # the recorder's label: `origin` says it for readers
    return data


def call_from_dict(data: Mapping[str, Any]) -> CallRecord:
    known = _known(CallRecord, data)
    origin = known.get("origin")
    if origin is not None:
        known["origin"] = CallOrigin(**_known(CallOrigin, origin))
    return CallRecord(**known)


def finding_to_dict(finding: DeviceFinding) -> dict[str, Any]:
    return _record_dict(finding)


def finding_from_dict(data: Mapping[str, Any]) -> DeviceFinding:
    return DeviceFinding(**_known(DeviceFinding, data))


# --- outputs -------------------------------------------------------------------------


#: the float fields of an output entry that may be infinite or NaN
_FLOAT_OUTPUT_FIELDS = (
    "max_abs_err",
    "max_rel_err",
    "rtol",
    "atol",
    "reference_err",
    "original_reference_err",
)

#: an output comparison is the report's output entry as it is: the compare stage's one
#: pass already carries the error summaries the views plot (`error_histogram`, `error_map`)
OutputEntry = OutputComparison


def output_to_dict(output: OutputComparison) -> dict[str, Any]:
    """The contract's keys, with the error summaries (null where the output matched)."""
    data = {f.name: getattr(output, f.name) for f in fields(OutputComparison)}
    for key in _FLOAT_OUTPUT_FIELDS:
        data[key] = _float_out(data[key])
    if data["shape"] is not None:
        data["shape"] = list(data["shape"])
    hist = output.error_histogram
    data["error_histogram"] = None if hist is None else _record_dict(hist)
    return data


def output_from_dict(data: Mapping[str, Any]) -> OutputComparison:
    values = _known(OutputComparison, data)
    for key in _FLOAT_OUTPUT_FIELDS:
        if key in values:
            values[key] = _float_in(values[key])
    hist = values.get("error_histogram")
    if isinstance(hist, Mapping):
        values["error_histogram"] = ErrorHistogram(**_known(ErrorHistogram, hist))
    return OutputComparison(**values)


# --- replays, cells ------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayEntry:
    """A cell run again on one backend spec. `calls` is what was recorded on that backend,
    when the replay recorded at all (None: not recorded, as opposed to [] no calls)."""

    backend: str
    status: ReplayStatus
    seconds: float | None = None
    error: ErrorInfo | None = None
    reason: str | None = None
    outputs: list[OutputComparison] = field(default_factory=list)
    calls: list[CallRecord] | None = None
    #: where it ran: "local worker (pid N)", a remote kernel, "in-process"
    worker: str | None = None
    #: one of REPLAY_ROLES; "control" replays are not counted as replays to port to
    role: str = "target"
    #: what kept the replay off the person's files: "namespace", "audit-hook", "in-process"
    isolation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "backend": self.backend,
            "status": self.status,
            "seconds": _float_out(self.seconds),
            "error": _error_out(self.error),
            "reason": self.reason,
            "outputs": [output_to_dict(o) for o in self.outputs],
            "worker": self.worker,
            "role": self.role,
            "isolation": self.isolation,
        }
        if self.calls is not None:
            data["calls"] = [call_to_dict(c) for c in self.calls]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReplayEntry:
        calls = data.get("calls")
        return cls(
            backend=data["backend"],
            status=data["status"],
            seconds=_float_in(data.get("seconds")),
            error=_error_in(data.get("error")),
            reason=data.get("reason"),
            outputs=[output_from_dict(o) for o in data.get("outputs", [])],
            calls=None if calls is None else [call_from_dict(c) for c in calls],
            worker=data.get("worker"),
            role=data.get("role", "target"),
            isolation=data.get("isolation"),
        )


#: what became of a cell's proposed rewrite (``--fix``, ``porter fix``)
REWRITE_STATUSES: tuple[str, ...] = ("verified", "partial", "refused")


@dataclass(frozen=True)
class RewriteSiteEntry:
    """One call of a rewrite: applied (``replacement`` set, ``applied``) or not, and why."""

    line: int
    col: int
    name: str
    original: str
    replacement: str | None = None
    applied: bool = False
    reason: str | None = None


@dataclass(frozen=True)
class RewriteEntry:
    """A cell's rewrite into the standard and what the replays said of it: ``verified``
    (every site, on every spec in ``verified_on``), ``partial`` (narrowed to the sites
    that verify) or ``refused`` (``source`` is then the cell as it was)."""

    source: str
    status: str
    verified_on: list[str] = field(default_factory=list)
    sites: list[RewriteSiteEntry] = field(default_factory=list)
    reason: str | None = None
    diff: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = _record_dict(self)
        data["verified_on"] = list(self.verified_on)
        data["sites"] = [_record_dict(s) for s in self.sites]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RewriteEntry:
        values = _known(cls, data)
        values["verified_on"] = [str(s) for s in data.get("verified_on", [])]
        values["sites"] = [
            RewriteSiteEntry(**_known(RewriteSiteEntry, s)) for s in data.get("sites", [])
        ]
        return cls(**values)


@dataclass(frozen=True)
class DefinitionVerdict:
    """What a cell's replay said of a function an earlier cell defined, whose rewrite
    waited for a call (``porter fix``: a cell that only defines functions runs none of
    them). Carried by the calling cell's entry; porter's side gives the defining cell
    its verdict from it once the notebook ran."""

    cell: int  # the defining cell's notebook index
    name: str
    accepted: bool
    where: str  # the call site in the calling cell: ``line L: `text```
    verified_on: list[str] = field(default_factory=list)
    reason: str | None = None  # why not, when refused

    def note(self) -> str:
        """The verdict in words, as the calling cell's notes show it."""
        kind = "verified" if self.accepted else "refused"
        text = f"porter fix: {kind} {self.name} of cell {self.cell} at its call here ({self.where})"
        return (
            f"{text} on {', '.join(self.verified_on)}"
            if self.accepted
            else f"{text}: {self.reason}"
        )


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
    #: the counts and the one line every view shows (`porter_ext.report.headline`):
    #: derived here, once per entry, so no view counts; `dataclasses.replace` derives it
    #: again for the changed entry
    headline: Headline = field(init=False, repr=False, compare=False)
    #: the cell's own port plan (`porter_ext.fix.plan`), derived once like the headline:
    #: the widget, the text and HTML views and the JSON show this one
    plan: list[PlanItem] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headline", headline_of(self))
        object.__setattr__(self, "plan", build_plan([self]))

    def to_dict(self) -> dict[str, Any]:
        data = {
            "index": self.index,
            "execution_count": self.execution_count,
            "source": self.source,
            "error": _error_out(self.error),
            "calls": [call_to_dict(c) for c in self.calls],
            "device_findings": [finding_to_dict(f) for f in self.device_findings],
            "replays": [r.to_dict() for r in self.replays],
            "headline": self.headline.to_dict(),
            "plan": [item.to_dict() for item in self.plan],
            "rewrite": None if self.rewrite is None else self.rewrite.to_dict(),
        }
        if self.notes:
            data["notes"] = list(self.notes)
        if self.definition_verdicts:
            data["definition_verdicts"] = [
                {**_record_dict(v), "verified_on": list(v.verified_on)}
                for v in self.definition_verdicts
            ]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CellEntry:
        """The entry as written; its headline and plan read back where the report carries
        them (a report older than those has them derived here, once)."""
        entry = cls(
            index=data.get("index"),
            execution_count=data.get("execution_count"),
            source=data["source"],
            error=_error_in(data.get("error")),
            calls=[call_from_dict(c) for c in data.get("calls", [])],
            device_findings=[finding_from_dict(f) for f in data.get("device_findings", [])],
            replays=[ReplayEntry.from_dict(r) for r in data.get("replays", [])],
            notes=[str(n) for n in data.get("notes", [])],
            rewrite=None if not data.get("rewrite") else RewriteEntry.from_dict(data["rewrite"]),
            definition_verdicts=[
                DefinitionVerdict(**_known(DefinitionVerdict, v))
                for v in data.get("definition_verdicts", [])
            ],
        )
        if data.get("headline"):
            object.__setattr__(entry, "headline", Headline.from_dict(data["headline"]))
        if "plan" in data:
            plan = [PlanItem.from_dict(item) for item in data["plan"]]
            object.__setattr__(entry, "plan", plan)
        return entry

    @property
    def label(self) -> str:
        """How views name the cell: its notebook index, else its execution count."""
        return cell_label(self.index, self.execution_count)


# --- environment, summary, report ----------------------------------------------------


@dataclass(frozen=True)
class BackendEntry:
    """A backend spec the run could see, or could not (then `reason` says why)."""

    spec: str
    library: str
    version: str | None
    available: bool
    devices: list[str] = field(default_factory=list)
    reason: str | None = None


@dataclass(frozen=True)
class Environment:
    python: str
    backends: list[BackendEntry] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "backends": [{**_record_dict(b), "devices": list(b.devices)} for b in self.backends],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Environment:
        return cls(
            python=data["python"],
            backends=[BackendEntry(**_known(BackendEntry, b)) for b in data.get("backends", [])],
        )


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
    - `mismatches`: numeric only: outputs of ok replays whose `within_tolerance` is False.
      A wrong device is a device finding, not a mismatch.
    """

    cells: int = 0
    calls: int = 0
    non_standard: int = 0
    device_findings: int = 0
    replays_ok: int = 0
    replays_failed: int = 0
    mismatches: int = 0

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
                if o.within_tolerance is False
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
    #: the port plan (`porter_ext.fix.plan`): distinct fixes, what blocks the port first
    plan: list[PlanItem] = field(default_factory=list)

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "porter_version": self.porter_version,
            "array_api_version": self.array_api_version,
            "source": _record_dict(self.source),
            "environment": self.environment.to_dict(),
            "plan": [item.to_dict() for item in self.plan],
            "cells": [c.to_dict() for c in self.cells],
            "summary": _record_dict(self.summary),
        }

    def to_json(self, *, indent: int | None = 1) -> str:
        # allow_nan=False: non-finite floats are encoded as strings by to_dict, and any
        # that slipped through must fail here rather than produce JSON a browser rejects.
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        """Build from a dict that already passed `validate` (see `load_report`)."""
        return cls(
            schema=data["schema"],
            porter_version=data["porter_version"],
            array_api_version=data["array_api_version"],
            source=Source(**_known(Source, data.get("source") or {})),
            environment=Environment.from_dict(data["environment"]),
            cells=[CellEntry.from_dict(c) for c in data["cells"]],
            summary=Summary(**_known(Summary, data["summary"])),
            plan=[PlanItem.from_dict(item) for item in data.get("plan", [])],
        )

    @classmethod
    def from_json(cls, text: str) -> Report:
        """Parse and validate JSON text; `ReportError` names what is wrong."""
        return cls.from_dict(parse_report_json(text))


def load_report(path: str | PathLike[str]) -> Report:
    """Read a JSON report from disk; `ReportError` says why it cannot be used."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot read the report: {exc}") from None
    return Report.from_dict(parse_report_json(text, origin=str(path)))
