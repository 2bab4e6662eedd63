"""The report's JSON codec (CONTRACT.md, schema ``porter.report/1``): each type of the
cell model encoded to its JSON form and decoded back, exactly (``x_from_dict(x_to_dict(v))
== v``), with the keys in the order the contract lists them.

The model (`porter_ext.model`) holds the data and what is derived from it; this module
only spells it as JSON. Decoding reads the derived fields a report carries (a cell's
``headline`` and ``plan``, the report's ``summary`` and ``plan``) as written, never
recounting them; a dict given to a decoder has passed validation
(`porter_ext.report.load`), and keys it does not know (a newer writer) are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from porter_ext.model.cells import SOURCE_STATES, CellEntry
from porter_ext.model.entries import (
    DefinitionVerdict,
    FileVerdict,
    ReplayEntry,
    RewriteEntry,
    RewriteSiteEntry,
)
from porter_ext.model.headline import Headline, HeadlineCounts
from porter_ext.model.plan import PlanItem, PlanSite
from porter_ext.model.report import BackendEntry, Environment, Report, Source, Summary
from porter_ext.report.codec_records import (
    call_from_dict,
    call_to_dict,
    diagnostic_from_dict,
    diagnostic_to_dict,
    error_from_dict,
    error_to_dict,
    finding_from_dict,
    finding_to_dict,
    float_in,
    float_out,
    known,
    output_from_dict,
    output_to_dict,
    record_dict,
)

__all__ = [
    "cell_from_dict",
    "cell_to_dict",
    "dump_json",
    "environment_from_dict",
    "environment_to_dict",
    "headline_from_dict",
    "headline_to_dict",
    "plan_item_from_dict",
    "plan_item_to_dict",
    "replay_from_dict",
    "replay_to_dict",
    "report_from_dict",
    "report_to_dict",
    "report_to_json",
    "rewrite_from_dict",
    "rewrite_to_dict",
    "verdict_from_dict",
    "verdict_to_dict",
]


def replay_to_dict(replay: ReplayEntry, first_line: int = 1) -> dict[str, Any]:
    """``calls`` only where the replay recorded (absent: not recorded; []: no calls);
    its error's lines counted from ``first_line`` (its cell's `CellEntry.first_line`)."""
    data: dict[str, Any] = {
        "backend": replay.backend,
        "status": replay.status,
        "seconds": float_out(replay.seconds),
        "error": error_to_dict(replay.error, first_line),
        "reason": replay.reason,
        "outputs": [output_to_dict(o) for o in replay.outputs],
        "worker": replay.worker,
        "role": replay.role,
        "isolation": replay.isolation,
    }
    if replay.calls is not None:
        data["calls"] = [call_to_dict(c) for c in replay.calls]
    return data


def replay_from_dict(data: Mapping[str, Any]) -> ReplayEntry:
    calls = data.get("calls")
    return ReplayEntry(
        backend=data["backend"],
        status=data["status"],
        seconds=float_in(data.get("seconds")),
        error=error_from_dict(data.get("error")),
        reason=data.get("reason"),
        outputs=[output_from_dict(o) for o in data.get("outputs", [])],
        calls=None if calls is None else [call_from_dict(c) for c in calls],
        worker=data.get("worker"),
        role=data.get("role", "target"),
        isolation=data.get("isolation"),
    )


def rewrite_to_dict(rewrite: RewriteEntry | FileVerdict) -> dict[str, Any]:
    """A rewrite (a cell's, or a file's verdict) with its specs and sites as lists."""
    data = record_dict(rewrite)
    data["verified_on"] = list(rewrite.verified_on)
    data["sites"] = [record_dict(s) for s in rewrite.sites]
    if isinstance(rewrite, FileVerdict):
        data["summary"] = rewrite.summary
        data["applied_text"] = rewrite.applied_text
    elif rewrite.verified_text is not None:
        data["verified_text"] = rewrite.verified_text
    return data


def _rewrite_values(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    values = known(cls, data)
    values["verified_on"] = [str(s) for s in data.get("verified_on", [])]
    values["sites"] = [
        RewriteSiteEntry(**known(RewriteSiteEntry, s)) for s in data.get("sites", [])
    ]
    return values


def rewrite_from_dict(data: Mapping[str, Any]) -> RewriteEntry:
    return RewriteEntry(**_rewrite_values(RewriteEntry, data))


def file_verdict_from_dict(data: Mapping[str, Any]) -> FileVerdict:
    return FileVerdict(**_rewrite_values(FileVerdict, data))


def verdict_to_dict(verdict: DefinitionVerdict) -> dict[str, Any]:
    return {**record_dict(verdict), "verified_on": list(verdict.verified_on)}


def verdict_from_dict(data: Mapping[str, Any]) -> DefinitionVerdict:
    return DefinitionVerdict(**known(DefinitionVerdict, data))


def headline_to_dict(headline: Headline) -> dict[str, Any]:
    counts = headline.counts
    return {
        "text": headline.text,
        "counts": {
            "calls": counts.calls,
            "findings": counts.findings,
            "device_findings": counts.device_findings,
            "replays": counts.replays,
            "replays_ok": counts.replays_ok,
            "failed_on": list(counts.failed_on),
            "differs_on": list(counts.differs_on),
            "error": counts.error,
            "notes": counts.notes,
            "kinds": dict(counts.kinds),
            "noted": dict(counts.noted),
            "dtype_changed_on": list(counts.dtype_changed_on),
        },
        "sum_format": headline.sum_format,
    }


def headline_from_dict(data: Mapping[str, Any]) -> Headline:
    """The headline a report was written with: read back, never recounted."""
    raw = data.get("counts") or {}
    counts = HeadlineCounts(
        calls=int(raw.get("calls", 0)),
        findings=int(raw.get("findings", 0)),
        device_findings=int(raw.get("device_findings", 0)),
        replays=int(raw.get("replays", 0)),
        replays_ok=int(raw.get("replays_ok", 0)),
        failed_on=tuple(str(b) for b in raw.get("failed_on", ())),
        differs_on=tuple(str(b) for b in raw.get("differs_on", ())),
        error=raw.get("error"),
        notes=int(raw.get("notes", 0)),
        kinds={str(k): int(n) for k, n in (raw.get("kinds") or {}).items()},
        noted={str(k): int(n) for k, n in (raw.get("noted") or {}).items()},
        dtype_changed_on=tuple(str(b) for b in raw.get("dtype_changed_on", ())),
    )
    return Headline(counts, str(data["text"]))


def plan_item_to_dict(item: PlanItem) -> dict[str, Any]:
    return {
        "kind": item.kind,
        "title": item.title,
        "cells": list(item.cells),
        "sites": [{"cell": s.cell, "line": s.line} for s in item.sites],
        "automatic": item.automatic,
        "detail": item.detail,
        "state": item.state,
        "state_text": item.state_text,
        "kind_text": item.kind_text,
    }


def plan_item_from_dict(data: Mapping[str, Any]) -> PlanItem:
    return PlanItem(
        kind=data["kind"],
        title=data["title"],
        cells=[str(c) for c in data.get("cells", [])],
        sites=[PlanSite(str(s["cell"]), s.get("line")) for s in data.get("sites", [])],
        automatic=bool(data.get("automatic", False)),
        detail=data.get("detail"),
        # a report older than states: its `automatic` said verified or needs you
        state=str(data.get("state") or ("verified" if data.get("automatic") else "needs_you")),
        state_text=str(
            data.get("state_text")
            or ("fixed automatically" if data.get("automatic") else "needs you")
        ),
    )


def cell_to_dict(cell: CellEntry) -> dict[str, Any]:
    """The cell entry of the report; ``notes``, ``definition_verdicts`` and
    ``file_verdicts`` only where there are some."""
    data = {
        "index": cell.index,
        "execution_count": cell.execution_count,
        "source": cell.source,
        "error": error_to_dict(cell.error, cell.first_line),
        "calls": [call_to_dict(c) for c in cell.calls],
        "device_findings": [finding_to_dict(f) for f in cell.device_findings],
        "replays": [replay_to_dict(r, cell.first_line) for r in cell.replays],
        "headline": headline_to_dict(cell.headline),
        "plan": [plan_item_to_dict(item) for item in cell.plan],
        "rewrite": None if cell.rewrite is None else rewrite_to_dict(cell.rewrite),
        # extensions: the editor's numbering, and the rows every view shows
        "first_line": cell.first_line,
        "label": cell.label,
        "diagnostics": [diagnostic_to_dict(row) for row in cell.diagnostics],
        "source_states": dict(SOURCE_STATES),
    }
    if cell.notes:
        data["notes"] = list(cell.notes)
    if cell.definition_verdicts:
        data["definition_verdicts"] = [verdict_to_dict(v) for v in cell.definition_verdicts]
    if cell.file_verdicts:
        data["file_verdicts"] = [rewrite_to_dict(v) for v in cell.file_verdicts]
    return data


def cell_from_dict(data: Mapping[str, Any]) -> CellEntry:
    """The entry as written; its headline and plan read back where the report carries
    them (a report older than those has them derived as the entry is made)."""
    rewrite = data.get("rewrite")
    entry = CellEntry(
        index=data.get("index"),
        execution_count=data.get("execution_count"),
        source=data["source"],
        error=error_from_dict(data.get("error")),
        calls=[call_from_dict(c) for c in data.get("calls", [])],
        device_findings=[finding_from_dict(f) for f in data.get("device_findings", [])],
        replays=[replay_from_dict(r) for r in data.get("replays", [])],
        notes=[str(n) for n in data.get("notes", [])],
        rewrite=rewrite_from_dict(rewrite) if rewrite else None,
        definition_verdicts=[verdict_from_dict(v) for v in data.get("definition_verdicts", [])],
        file_verdicts=[file_verdict_from_dict(v) for v in data.get("file_verdicts", [])],
        first_line=int(data.get("first_line", 1)),
    )
    # the derived fields are not arguments of a frozen entry: set them as written
    if data.get("headline"):
        object.__setattr__(entry, "headline", headline_from_dict(data["headline"]))
    if "diagnostics" in data:
        rows = [diagnostic_from_dict(row) for row in data["diagnostics"]]
        object.__setattr__(entry, "diagnostics", rows)
    if "plan" in data:
        object.__setattr__(entry, "plan", [plan_item_from_dict(item) for item in data["plan"]])
    return entry


def environment_to_dict(environment: Environment) -> dict[str, Any]:
    return {
        "python": environment.python,
        "backends": [{**record_dict(b), "devices": list(b.devices)} for b in environment.backends],
    }


def environment_from_dict(data: Mapping[str, Any]) -> Environment:
    return Environment(
        python=data["python"],
        backends=[BackendEntry(**known(BackendEntry, b)) for b in data.get("backends", [])],
    )


def report_to_dict(report: Report) -> dict[str, Any]:
    return {
        "schema": report.schema,
        "porter_version": report.porter_version,
        "array_api_version": report.array_api_version,
        "source": record_dict(report.source),
        "environment": {**environment_to_dict(report.environment), "text": report.environment_text},
        "plan": [plan_item_to_dict(item) for item in report.plan],
        "cells": [cell_to_dict(c) for c in report.cells],
        "summary": {**record_dict(report.summary), "text": report.summary.text},
    }


def report_to_json(report: Report, *, indent: int | None = 1) -> str:
    """The report as JSON text (UTF-8 as it is, not escaped)."""
    return dump_json(report_to_dict(report), indent=indent)


def dump_json(data: Mapping[str, Any], *, indent: int | None = 1) -> str:
    """An encoded report (or entry) as JSON text, as porter writes it."""
    # allow_nan=False: non-finite floats are encoded as strings by the codec, and any
    # that slipped through must fail here rather than produce JSON a browser rejects
    return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)


def report_from_dict(data: Mapping[str, Any]) -> Report:
    """The report from a dict that already passed validation (`porter_ext.report.load`)."""
    return Report(
        schema=data["schema"],
        porter_version=data["porter_version"],
        array_api_version=data["array_api_version"],
        source=Source(**known(Source, data.get("source") or {})),
        environment=environment_from_dict(data["environment"]),
        cells=[cell_from_dict(c) for c in data["cells"]],
        summary=Summary(**known(Summary, data["summary"])),
        plan=[plan_item_from_dict(item) for item in data.get("plan", [])],
    )
