"""One cell as the one template of a cell (templates/cell.html.j2) draws it, in the HTML
report's cell sections and in the static ``text/html`` of a ``%%port`` cell's output
(`porter_ext.report.templating.cell_html`: what nbconvert and GitHub show): its
headline, its port plan with each item's state, its numbered source with what happened
on each line, its rewrite and diff, its diagnostics rows, calls, replays, outputs with
their verdicts, device placement and figures (`cell_view`). Every word and count is the
model's. Sizes are capped per cell (`MAX_SOURCE_LINES`, `MAX_CALL_ROWS`, `MAX_TEXT`) and
figures per report (`PlotBudget`).
"""

from __future__ import annotations

import functools
import importlib.util
import math
import re
from dataclasses import dataclass, field
from typing import Any

from porter_ext.guard import internal_error
from porter_ext.model.calls import CallRecord
from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import OutputEntry, ReplayEntry
from porter_ext.model.plan import PlanItem
from porter_ext.report.placement import PlacedCall
from porter_ext.report.text import cell_notes

MAX_SOURCE_LINES = 400  #: source lines shown per cell
MAX_LINE_CHARS = 300  #: characters shown per source line
MAX_CALL_ROWS = 400  #: call rows, and output rows, shown per cell
MAX_TEXT = 1000  #: characters shown of one message (exceptions can print whole arrays)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def clip(text: str | None, limit: int = MAX_TEXT) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    if math.isnan(value):
        return "nan"
    return f"{value:.3g}"


def _sort_value(value: float | None) -> str:
    """`data-v` for sorting where the shown text does not sort right ("—", "inf", "nan");
    "" where it does."""
    if value is None or math.isnan(value):
        return "-1"
    return ("1e999" if value > 0 else "-1e999") if math.isinf(value) else ""


@dataclass
class _Line:
    no: int
    text: str
    cls: str = ""
    notes: list[tuple[str, bool]] = field(default_factory=list)


@dataclass
class CellView:
    anchor: str | None
    title: str
    #: what the cell raised, in the model's words (`CellEntry.error_text`), or ""
    error: str
    lines: list[_Line]
    lines_hidden: int
    calls: list[dict[str, Any]]
    calls_hidden: int
    replays: list[dict[str, Any]]
    numerics: list[dict[str, Any]]
    devices: list[dict[str, Any]]
    plots: list[tuple[str, str]] = field(default_factory=list)
    plots_omitted: int = 0
    plots_reason: str = ""
    #: no array call, no error, no replay: shown as one line
    quiet: bool = False
    rewrite: dict[str, Any] | None = None
    #: the cell's headline (`CellEntry.headline`): the words every view shows
    headline: str = ""
    #: the cell's own port plan: each item with its state and the state in words
    plan: list[dict[str, Any]] = field(default_factory=list)
    #: the cell's diagnostics rows (`CellEntry.diagnostics`), as the panel lists them
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    diagnostics_hidden: int = 0
    #: what the cell's run called in code other cells wrote (shown under those cells)
    elsewhere: str = ""
    #: whether the tables show unfolded (a notebook output's) or folded (the report's)
    open: bool = False


def _call_note(placed: PlacedCall) -> str:
    call = placed.call
    note = f"col {placed.col}: {call.name} — {call.status}"
    if call.suggestion:
        note += f" → {call.suggestion}"
    if placed.note:
        note += f" ({placed.note})"
    return clip(note, 400)


def _source_lines(cell: CellEntry, calls: list[PlacedCall]) -> tuple[list[_Line], int]:
    """Numbered source lines, each flagged line carrying what happened there."""
    # Python numbers lines at \n, \r\n and \r only; str.splitlines would also split at
    # \f, \x85 or \u2028 and shift every later line away from the recorded line numbers.
    raw = _LINE_BREAK.split(cell.source.removesuffix("\n").removesuffix("\r"))
    # numbered as the cell's editor numbers them (the %%port line above is line 1)
    first = cell.first_line
    lines = [_Line(i, clip(t, MAX_LINE_CHARS)) for i, t in enumerate(raw, start=first)]

    seen: dict[tuple[int, str], int] = {}  # (line, note) → times seen, to merge repeats

    def mark(line: int | None, note: str, cls: str, is_error: bool = False) -> None:
        """Mark the editor's ``line`` (`cell.line` of a line of the source)."""
        if line is None or not first <= line < first + len(lines):
            return
        entry = lines[line - first]
        entry.cls = "e" if "e" in (cls, entry.cls) else cls
        times = seen[line, note] = seen.get((line, note), 0) + 1
        if times == 1:
            entry.notes.append((note, is_error))
        else:
            entry.notes = [
                (f"{note} (×{times})" if n in (note, f"{note} (×{times - 1})") else n, e)
                for n, e in entry.notes
            ]

    for placed in calls:
        if placed.call.flagged and placed.written_in is None:
            mark(placed.line, _call_note(placed), "f")
    for finding in cell.device_findings:
        where = f" on {finding.backend}" if finding.backend else ""
        text = clip(f"device: {finding.kind}{where}: {finding.message}", 400)
        mark(cell.line(finding.line), text, "f")
    if cell.error is not None:
        note = f"raised {cell.error.type}: {clip(cell.error.message, 400)}"
        mark(cell.line(cell.error.line), note, "e", True)
    for replay in cell.replays:
        if replay.error is not None:
            note = f"on {replay.backend}: {replay.error.type}: {clip(replay.error.message, 400)}"
            mark(cell.line(replay.error.line), note, "e", True)
    for line, note in cell_notes(cell):  # invisible characters; what a headless run ignored
        mark(cell.line(line or 1), clip(note, 400), "e", True)
    hidden = max(0, len(lines) - MAX_SOURCE_LINES)
    return lines[:MAX_SOURCE_LINES], hidden


def _call_row(call: CallRecord, placed: PlacedCall | None = None) -> dict[str, Any]:
    devices_in = ", ".join(dict.fromkeys(call.devices_in)) or "—"
    return {
        "line": call.line if placed is None else placed.line,
        "col": call.col if placed is None else placed.col,
        "where": "" if placed is None else placed.note,
        "name": call.name,
        "kind": call.kind,
        "status": call.status,
        "count": call.count,
        "devices": f"{devices_in} → {call.device_out or '—'}",
        "suggestion": clip(call.suggestion or ""),
        "message": clip(call.message),
    }


def _replay_view(replay: ReplayEntry, first_line: int) -> dict[str, Any]:
    if replay.error is not None:
        detail = clip(replay.error.text_in(first_line))
    else:
        detail = clip(replay.reason or "")
    cls = {"ok": "ok", "skipped": "na"}.get(replay.status, "bad")
    calls = [_call_row(c) for c in replay.calls or [] if c.flagged][:MAX_CALL_ROWS]
    seconds = "—" if replay.seconds is None else f"{replay.seconds:.3f}"
    return {
        "backend": replay.backend,
        "status": replay.status,
        "cls": cls,
        "seconds": seconds,
        "detail": detail,
        "calls": calls,
    }


def _output_rows(cell: CellEntry) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of the numerics and devices tables: one per output × backend."""
    numerics, devices = [], []
    for replay in cell.replays:
        for out in replay.outputs:
            shape = "—" if out.shape is None else str(tuple(out.shape))
            numerics.append(
                {
                    "name": out.name,
                    "backend": replay.backend,
                    "shape": shape,
                    "dtype": out.dtype or "—",
                    "abs": _num(out.max_abs_err),
                    "abs_v": _sort_value(out.max_abs_err),
                    "rel": _num(out.max_rel_err),
                    "rel_v": _sort_value(out.max_rel_err),
                    "mismatched": "—" if out.mismatched is None else out.mismatched,
                    "nan": {None: "—", True: "differs", False: "same"}[out.nan_mismatch],
                    "tol": f"{_num(out.rtol)} / {_num(out.atol)}",
                    "verdict_text": clip(out.verdict_text, 300),
                    "cls": _VERDICT_CLASS.get(out.verdict, "na"),
                }
            )
            ok = out.device_ok
            devices.append(
                {
                    "name": out.name,
                    "backend": replay.backend,
                    "device": out.device or "—",
                    "expected": out.expected_device or "—",
                    "ok": {None: "—", True: "ok", False: "wrong"}[ok],
                    "cls": {None: "na", True: "ok", False: "bad"}[ok],
                    "conversion": clip(out.conversion or "—", 300),
                }
            )
    return numerics[:MAX_CALL_ROWS], devices[:MAX_CALL_ROWS]


#: how a verdict (`OutputComparison.verdict`) and a plan state (`PlanItem.state`) are
#: coloured: the model decides them, the view only picks a colour
_VERDICT_CLASS = {"match": "ok", "order_only": "ok", "sign_only": "ok", "mismatch": "bad"}
_STATE_CLASS = {"applied": "ok", "verified": "ok", "partial": "na"}


def plan_row(item: PlanItem) -> dict[str, Any]:
    """A plan item as the template's `plan_item` draws it (the report's plan, a cell's)."""
    return {
        "kind": item.kind_text,
        "title": clip(item.title, 400),
        "state": item.state,
        "state_text": clip(item.state_text, 400),
        "cls": _STATE_CLASS.get(item.state, "bad"),
    }


def _diagnostic_rows(cell: CellEntry) -> list[dict[str, Any]]:
    return [
        {
            "severity": row.severity,
            "place": row.place or "cell",
            "message": clip(row.message),
        }
        for row in cell.diagnostics[:MAX_CALL_ROWS]
    ]


class PlotBudget:
    """Counts figures across the report so that a notebook full of mismatches stays small,
    and says why a figure is missing (the cap, or no matplotlib installed)."""

    def __init__(self, limit: int, why: str = "to keep the report small") -> None:
        self.left = limit
        self.available = importlib.util.find_spec("matplotlib") is not None
        self.why = why

    def take(self) -> bool:
        self.left -= 1
        return self.available and self.left >= 0

    @property
    def reason(self) -> str:
        if not self.available:
            return "because matplotlib is not installed"
        return self.why


def _plots(cell: CellEntry, budget: PlotBudget) -> tuple[list[tuple[str, str]], int]:
    """Figures for what went wrong in a cell; none at all when nothing did."""
    from porter_ext.report import plots

    wanted: list[tuple[str, Any]] = []
    for replay in cell.replays:
        for out in replay.outputs:
            if (
                isinstance(out, OutputEntry)
                and out.within_tolerance is False
                and (out.error_histogram is not None or out.error_map)
            ):
                caption = (
                    f"{out.name} on {replay.backend}: {out.mismatched} mismatched, "
                    f"max abs err {_num(out.max_abs_err)}"
                )
                wanted.append(
                    (
                        caption,
                        functools.partial(plots.error_figure, out.error_histogram, out.error_map),
                    )
                )
    placement = {(o.name, r.backend): o.device_ok for r in cell.replays for o in r.outputs}
    if any(ok is False for ok in placement.values()):
        names = list(dict.fromkeys(name for name, _ in placement))
        backends = list(dict.fromkeys(b for _, b in placement))
        wanted.append(
            (
                "device placement (green: expected device, red: elsewhere, grey: unknown)",
                functools.partial(plots.device_matrix_figure, names, backends, placement),
            )
        )
    done, omitted = [], 0
    for caption, draw in wanted:
        if not budget.take():
            omitted += 1
            continue
        try:
            uri = draw()
        except Exception as exc:  # a figure is an illustration: never lose the report
            internal_error("drawing a figure of the report", exc)
            omitted += 1
            continue
        if uri:
            done.append((caption, uri))
    return done, omitted


def cell_view(
    anchor: str | None,
    cell: CellEntry,
    budget: PlotBudget,
    calls: list[PlacedCall],
    *,
    open: bool = False,
) -> CellView:
    """The cell as the template shows it; ``calls`` are those written in it
    (`placement.calls_by_cell`); ``anchor`` its id in the page (None: no id)."""
    lines, hidden = _source_lines(cell, calls)
    numerics, devices = _output_rows(cell)
    plots, omitted = _plots(cell, budget)
    title = cell.title
    return CellView(
        anchor=anchor,
        title=title,
        error=clip(cell.error_text or ""),
        lines=lines,
        lines_hidden=hidden,
        calls=[_call_row(p.call, p) for p in calls[:MAX_CALL_ROWS]],
        calls_hidden=max(0, len(calls) - MAX_CALL_ROWS),
        elsewhere=_elsewhere(cell, calls),
        replays=[_replay_view(r, cell.first_line) for r in cell.replays],
        numerics=numerics,
        devices=devices,
        plots=plots,
        plots_omitted=omitted,
        plots_reason=budget.reason,
        quiet=not (
            calls
            or cell.calls
            or cell.error
            or cell.replays
            or cell.device_findings
            or cell.notes
            or cell.rewrite
        ),
        rewrite=_rewrite_view(cell),
        headline=cell.headline.text,
        plan=[plan_row(item) for item in cell.plan],
        diagnostics=_diagnostic_rows(cell),
        diagnostics_hidden=max(0, len(cell.diagnostics) - MAX_CALL_ROWS),
        open=open,
    )


def _elsewhere(cell: CellEntry, calls: list[PlacedCall]) -> str:
    """What the cell's run called in code written in other cells, shown there."""
    shown = {id(p.call) for p in calls}
    away = [c for c in cell.calls if id(c) not in shown]
    if not away:
        return ""
    cells = ", ".join(dict.fromkeys(c.origin.label for c in away if c.origin is not None))
    return f"{len(away)} call site(s) of this run are in code written in {cells}: shown there."


def _rewrite_view(cell: CellEntry) -> dict[str, Any] | None:
    rewrite = cell.rewrite
    if rewrite is None:
        return None
    refused = [s for s in rewrite.sites if not s.applied]
    return {
        "status": rewrite.status,
        "verified_text": rewrite.verified_text,
        "reason": clip(rewrite.reason or ""),
        "diff": [(clip(ln, MAX_LINE_CHARS), ln[:1]) for ln in rewrite.diff.splitlines()][
            :MAX_SOURCE_LINES
        ],
        "refused": [
            f"line {s.line}: {s.name}: {clip(s.reason or 'not applied', 300)}" for s in refused
        ],
    }
