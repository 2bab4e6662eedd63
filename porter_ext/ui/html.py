"""One cell's entry of the report as HTML fragments: the calls, numerics and devices
tables, the detail of one call and one backend's column of the side-by-side view.

Both the widget (`porter_ext.ui.widget`) and the plain ``text/html`` fallback (nbconvert,
GitHub) are built from these, so the two never disagree. Every piece of text the person
wrote goes through `_t`. Nothing here imports ipywidgets, pandas or matplotlib.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from html import escape
from typing import TYPE_CHECKING

from porter_ext.report.text import cell_notes, visible

if TYPE_CHECKING:
    from porter_ext.model.calls import CallRecord
    from porter_ext.model.cells import CellEntry
    from porter_ext.model.comparison import OutputComparison
    from porter_ext.model.entries import ReplayEntry

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # where Python numbers lines, unlike splitlines
_COLOURS = {"ok": "46,125,50", "bad": "198,40,40", "na": "128,128,128"}
# every other call status is a finding, shown as "bad"
_STATUS_CLASS = {"standard": "ok", "acknowledged": "na", "host_sync": "na"}
_REPLAY_CLASS = {"ok": "ok", "skipped": "na"}  # error and timeout: "bad"
_TABLE = 'style="border-collapse:collapse;font-size:12px;margin:4px 0"'
_CELL = "padding:2px 8px;border-bottom:1px solid rgba(128,128,128,.3);text-align:left"
_MISSING = "—"
_YES_NO = {None: _MISSING, True: "yes", False: "no"}


def verdict(entry: CellEntry) -> str:
    """One line saying how portable the cell is: the entry's headline, derived once in
    the model (`porter_ext.model.headline`) so that every view shows the same words."""
    return entry.headline.text


# --- small HTML helpers: every argument that can hold person text goes through `_t` ---


def _t(value: object) -> str:
    """Person text as HTML text (quotes too, so it is safe inside attributes)."""
    return escape(visible("" if value is None else str(value)), quote=True)


def _num(value: float | None) -> str:
    if value is None:
        return _MISSING
    return "nan" if math.isnan(value) else f"{value:.3g}"


def _badge(text: str, cls: str) -> str:
    rgb = _COLOURS[cls]
    return (
        f'<span style="color:rgb({rgb});background:rgba({rgb},.12);padding:0 4px;'
        f'border-radius:3px;font-weight:600">{_t(text)}</span>'
    )


def _cell(html: str, cls: str | None = None) -> str:
    shade = f";background:rgba({_COLOURS[cls]},.14)" if cls else ""
    return f'<td style="{_CELL}{shade}">{html}</td>'


def _table(header: Iterable[str], rows: Iterable[str]) -> str:
    head = "".join(f'<th style="{_CELL}">{h}</th>' for h in header)
    return f"<table {_TABLE}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _note(text: str) -> str:
    return f'<p style="opacity:.75;margin:4px 0">{text}</p>'


def _ok_class(value: bool | None) -> str:
    return {None: "na", True: "ok", False: "bad"}[value]


# --- what the tabs say, as HTML --------------------------------------------------------


def source_line(source: str, line: int | None) -> str | None:
    """Line `line` (1-based, as Python numbers it) of a cell source, or None."""
    lines = _LINE_BREAK.split(source)
    return lines[line - 1] if line is not None and 1 <= line <= len(lines) else None


def _caret(text: str, col: int) -> str:
    """What goes before a caret under character `col` of `text` (``col`` counts
    characters) as the line is shown: invisible characters as their escapes, tabs kept,
    wide East Asian characters (and emoji) two cells, combining marks none."""
    return "".join(
        "\t"
        if ch == "\t"
        else ""
        if unicodedata.combining(ch)
        else "  "
        if unicodedata.east_asian_width(ch) in "WF"
        else " "
        for ch in visible(text[:col])
    )


def call_label(call: CallRecord) -> str:
    """One row of the calls list (plain text: a `Select` shows its options as text)."""
    tip = f"  → {call.suggestion}" if call.suggestion else ""
    count = f"  ×{call.count}" if call.count > 1 else ""
    at = f"{call.line}:{call.col}"
    if call.origin is not None:  # written in another cell: where it is written
        at = f"{call.origin.label} {call.origin.line}:{call.origin.col}"
    return visible(f"{at}  {call.name}  [{call.status}]{tip}{count}")


def call_detail_html(entry: CellEntry, call: CallRecord) -> str:
    """What a click on a call shows: where it is in the source and what to write instead."""
    cls = _STATUS_CLASS.get(call.status, "bad")
    parts = [
        f"<p><code>{_t(call.name)}</code> {_badge(call.status, cls)} line {call.line}, "
        f"column {call.col}{f', ran {call.count} times' if call.count > 1 else ''}</p>"
    ]
    if call.origin is not None:
        o = call.origin
        parts.append(
            _note(
                f"in code written in {_t(o.label)}, line {o.line}, column {o.col}: "
                "this cell called it here"
            )
        )
    text = source_line(entry.source, call.line)
    if text is not None:
        gutter = f"{call.line} | "
        caret = " " * len(gutter) + _caret(text, call.col) + "^"
        parts.append(f'<pre style="margin:4px 0">{_t(gutter + text)}\n{caret}</pre>')
    if call.suggestion:
        parts.append(f"<p>Use instead: <code>{_t(call.suggestion)}</code></p>")
    elif call.standard_name and call.status != "standard":
        parts.append(f"<p>Standard name: <code>{_t(call.standard_name)}</code></p>")
    if call.message:
        parts.append(f"<p>{_t(call.message)}</p>")
    devices = ", ".join(dict.fromkeys(call.devices_in)) or _MISSING
    parts.append(_note(f"devices: {_t(devices)} → {_t(call.device_out or _MISSING)}"))
    return "".join(parts)


def header_html(entry: CellEntry) -> str:
    parts = [f"<b>{_t(entry.headline.text)}</b> <small>({_t(entry.label)})</small>"]
    if entry.error is not None:
        where = f" at {entry.error.where}" if entry.error.where else ""
        parts.append(
            f"<br>{_badge('raised', 'bad')} <code>{_t(entry.error.type)}</code>{where}: "
            f"{_t(entry.error.message)}"
        )
    for _, note in cell_notes(entry):
        parts.append(f"<br>{_badge('note', 'bad')} {_t(note)}")
    return "".join(parts)


def output_grid(entry: CellEntry) -> tuple[list[str], list[ReplayEntry]]:
    """Output names (in order of first appearance) and the replays: the two table axes."""
    names = list(dict.fromkeys(o.name for r in entry.replays for o in r.outputs))
    return names, list(entry.replays)


def find_output(replay: ReplayEntry, name: str) -> OutputComparison | None:
    return next((o for o in replay.outputs if o.name == name), None)


def _matrix_html(entry: CellEntry, cell: Callable[[OutputComparison], tuple[str, str]]) -> str:
    """An outputs × backends table; `cell` gives each output's HTML and its highlight."""
    names, replays = output_grid(entry)
    header = ["output"] + [
        f"<code>{_t(r.backend)}</code>"
        + ("" if r.status == "ok" else f" {_badge(r.status, _REPLAY_CLASS.get(r.status, 'bad'))}")
        for r in replays
    ]
    rows = []
    for name in names:
        cells = [_cell(f"<code>{_t(name)}</code>")]
        for replay in replays:
            out = find_output(replay, name)
            cells.append(_cell(_MISSING, "na") if out is None else _cell(*cell(out)))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return _table(header, rows)


def _numeric_cell(out: OutputComparison) -> tuple[str, str]:
    mismatched = "" if out.mismatched is None else f"<br>{out.mismatched} mismatched"
    nan = "<br>NaN pattern differs" if out.nan_mismatch else ""
    note = f"<br><small>{_t(out.note)}</small>" if out.note else ""
    if out.reference_err is not None:  # both errors against the float64 reference
        nan += (
            f"<br><small>vs float64: {_num(out.reference_err)} (original "
            f"{_num(out.original_reference_err)})</small>"
        )
    html = (
        f"abs {_num(out.max_abs_err)} · rel {_num(out.max_rel_err)}{mismatched}{nan}"
        f"<br><small>rtol {_num(out.rtol)} · atol {_num(out.atol)}</small>{note}"
    )
    return html, _ok_class(out.within_tolerance)


def _device_cell(out: OutputComparison) -> tuple[str, str]:
    word = {None: "unknown", True: "ok", False: "wrong"}[out.device_ok]
    html = (
        f"<code>{_t(out.device or _MISSING)}</code> ({word})"
        f"<br><small>expected <code>{_t(out.expected_device or _MISSING)}</code></small>"
    )
    return html, _ok_class(out.device_ok)


def _replays_html(entry: CellEntry) -> str:
    rows = []
    for r in entry.replays:
        if r.error is not None:
            where = f" at {r.error.where}" if r.error.where else ""
            detail = f"<code>{_t(r.error.type)}</code>{where}: {_t(r.error.message)}"
        else:
            detail = _t(r.reason or "")
        cls = _REPLAY_CLASS.get(r.status, "bad")
        seconds = _MISSING if r.seconds is None else f"{r.seconds:.3f}"
        rows.append(
            f"<tr>{_cell(f'<code>{_t(r.backend)}</code>')}{_cell(_t(r.status), cls)}"
            f"{_cell(seconds)}{_cell(detail)}</tr>"
        )
    return _table(["replay", "status", "seconds", "detail"], rows)


def numerics_html(entry: CellEntry) -> str:
    if not entry.replays:
        return _note("The cell was not replayed on other backends: nothing to compare.")
    names, _ = output_grid(entry)
    table = _matrix_html(entry, _numeric_cell) if names else _note("No outputs were compared.")
    return table + _replays_html(entry)


def devices_html(entry: CellEntry) -> str:
    parts = []
    names, _ = output_grid(entry)
    if names:
        parts.append(_matrix_html(entry, _device_cell))
    elif not entry.replays:
        parts.append(_note("The cell was not replayed: no output placement to check."))
    if entry.device_findings:
        rows = [
            f"<tr>{_cell(_t(f.line or _MISSING))}{_cell(f'<code>{_t(f.name)}</code>')}"
            f"{_cell(_t(f.kind), 'bad')}{_cell(_t(f.backend or _MISSING))}"
            f"{_cell(_t(f.message))}</tr>"
            for f in entry.device_findings
        ]
        parts.append("<p><b>Device findings</b></p>")
        parts.append(_table(["line", "call", "kind", "backend", "message"], rows))
    else:
        parts.append(_note("No device findings."))
    return "".join(parts)


def output_card_html(replay: ReplayEntry, out: OutputComparison) -> str:
    """One backend's column of the side-by-side view, from the OutputComparison fields."""
    shape = _MISSING if out.shape is None else str(tuple(out.shape))
    placement = {None: "", True: " (as expected)", False: " (expected "}[out.device_ok]
    if out.device_ok is False:
        placement += f"<code>{_t(out.expected_device or _MISSING)}</code>)"
    fields = [
        ("shape", _t(shape), None),
        ("dtype", f"<code>{_t(out.dtype or _MISSING)}</code>", None),
        ("device", f"<code>{_t(out.device or _MISSING)}</code>{placement}", None),
        ("conversion", _t(out.conversion or _MISSING), None),
        ("max abs err", _num(out.max_abs_err), None),
        ("max rel err", _num(out.max_rel_err), None),
        ("mismatched", _t(_MISSING if out.mismatched is None else out.mismatched), None),
        ("NaN pattern", {None: _MISSING, True: "differs", False: "same"}[out.nan_mismatch], None),
        ("rtol / atol", f"{_num(out.rtol)} / {_num(out.atol)}", None),
        ("within tolerance", _YES_NO[out.within_tolerance], _ok_class(out.within_tolerance)),
    ]
    if out.note:
        fields.append(("note", _t(out.note), None))
    rows = [
        f'<tr><th style="{_CELL}">{label}</th>{_cell(value, cls)}</tr>'
        for label, value, cls in fields
    ]
    title = f"<b><code>{_t(replay.backend)}</code></b>"
    preview = getattr(out, "preview", None)  # only if the entry carries one
    extra = "" if preview is None else f'<pre style="margin:4px 0">{_t(preview)}</pre>'
    return f"{title}<table {_TABLE}><tbody>{''.join(rows)}</tbody></table>{extra}"


def calls_html(entry: CellEntry) -> str:
    """The calls table of the cell, findings highlighted."""
    if not entry.calls:
        return _note("No array calls were recorded in this cell.")
    rows = []
    for c in entry.calls:
        devices = ", ".join(dict.fromkeys(c.devices_in)) or _MISSING
        rows.append(
            f"<tr>{_cell(_t(c.line if c.origin is None else c.where))}"
            f"{_cell(f'<code>{_t(c.name)}</code>')}"
            f"{_cell(_t(c.status), _STATUS_CLASS.get(c.status, 'bad'))}"
            f"{_cell(f'<code>{_t(c.suggestion or _MISSING)}</code>')}"
            f"{_cell(_t(devices) + ' → ' + _t(c.device_out or _MISSING))}"
            f"{_cell(_t(c.count))}{_cell(_t(c.message))}</tr>"
        )
    header = ["line", "call", "status", "standard spelling", "devices", "n", "why"]
    return _table(header, rows)


# --- the cell's port plan and its rewrite ---------------------------------------------


def plan_html(entry: CellEntry) -> str:
    """The cell's port plan (`porter_ext.model.plan`) as a numbered list, first thing under
    the header: what to change, what blocks the port first; "" when nothing is to do."""
    items = entry.plan
    if not items:
        return ""
    rows = []
    for item in items:
        badge = _badge(item.verdict, "ok" if item.automatic else "bad")
        kind = _t(item.kind.replace("_", " "))
        rows.append(f'<li>{badge} <span style="opacity:.7">{kind}</span> {_t(item.title)}</li>')
    return (
        '<div class="porter-plan"><b>Port plan</b>'
        f'<ol style="margin:2px 0 6px 0;padding-left:22px">{"".join(rows)}</ol></div>'
    )


def rewrite_html(entry: CellEntry) -> str:
    """The proposed rewrite (``--fix``): its verdict, the diff, and the sites left alone."""
    rewrite = entry.rewrite
    if rewrite is None:
        return ""
    cls = {"verified": "ok", "partial": "na"}.get(rewrite.status, "bad")
    where = f" on {_t(', '.join(rewrite.verified_on))}" if rewrite.verified_on else ""
    head = f"<b>Rewrite</b> {_badge(rewrite.status, cls)}{where}"
    reason = _note(_t(rewrite.reason)) if rewrite.reason else ""
    lines = []
    for line in rewrite.diff.splitlines():
        shade = {"+": "ok", "-": "bad"}.get(line[:1])
        style = (
            f"background:rgba({_COLOURS[shade]},.14)"
            if shade and line[:3] not in ("+++", "---")
            else ""
        )
        lines.append(f'<div style="{style}">{_t(line) or "&nbsp;"}</div>')
    diff = (
        '<div style="font-family:monospace;white-space:pre;font-size:12px;overflow-x:auto">'
        f"{''.join(lines)}</div>"
        if lines
        else ""
    )
    left = [s for s in rewrite.sites if not s.applied]
    notes = "".join(f"<li>line {s.line}: {_t(s.name)}: {_t(s.reason)}</li>" for s in left)
    return (
        f'<div class="porter-rewrite">{head}{reason}{diff}'
        f"{f'<ul>{notes}</ul>' if notes else ''}</div>"
    )
