"""MIME bundles for one cell's result: what every front end without widgets shows.

The same output carries ``text/plain`` (terminals, logs), ``text/html`` (nbconvert,
GitHub, classic front ends) and ``application/vnd.porter.cell+json`` (the cell entry of
the report, for the JupyterLab extension and for tools).
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from porter_ext.report.model import CellEntry

MIME_TYPE = "application/vnd.porter.cell+json"

_STATUS_COLOURS = {
    "standard": "#2e7d32",
    "acknowledged": "#6a1b9a",
    "non_standard": "#c62828",
    "non_standard_usage": "#ef6c00",
    "device_specific": "#ad1457",
    "host_sync": "#1565c0",
}


def verdict(entry: CellEntry) -> str:
    """One line saying how portable the cell is."""
    findings = [c for c in entry.calls if c.status != "standard"]
    n_calls = sum(c.count for c in entry.calls)
    failed = [r for r in entry.replays if r.status in ("error", "timeout")]
    mismatched = [
        r
        for r in entry.replays
        for o in r.outputs
        if o.within_tolerance is False or o.device_ok is False
    ]
    parts = []
    if not entry.calls:
        parts.append("no array calls recorded")
    elif not findings:
        parts.append(f"{n_calls} array call{'s' * (n_calls != 1)}, all inside the standard")
    else:
        parts.append(
            f"{len(findings)} finding{'s' * (len(findings) != 1)} in {n_calls} array call"
            f"{'s' * (n_calls != 1)}"
        )
    if entry.device_findings:
        parts.append(f"{len(entry.device_findings)} device finding(s)")
    if entry.replays:
        ok = sum(1 for r in entry.replays if r.status == "ok")
        parts.append(f"{ok}/{len(entry.replays)} replays ok")
    if failed:
        parts.append(f"failed on {', '.join(r.backend for r in failed)}")
    if mismatched:
        parts.append(f"differs on {', '.join(sorted({r.backend for r in mismatched}))}")
    if entry.error is not None:
        parts.append(f"the cell raised {entry.error.type}")
    return "porter: " + "; ".join(parts)


def cell_text(entry: CellEntry) -> str:
    lines = [verdict(entry)]
    for call in entry.calls:
        if call.status == "standard":
            continue
        tip = f" -> {call.suggestion}" if call.suggestion else ""
        count = f" (x{call.count})" if call.count > 1 else ""
        lines.append(f"  line {call.line}: {call.name} [{call.status}]{tip}{count}")
    for finding in entry.device_findings:
        where = f" on {finding.backend}" if finding.backend else ""
        line = f"line {finding.line}" if finding.line is not None else "output"
        lines.append(f"  {line}: {finding.name} [{finding.kind}{where}] {finding.message}")
    for replay in entry.replays:
        if replay.status != "ok":
            why = replay.error.message if replay.error else (replay.reason or "")
            lines.append(f"  replay {replay.backend}: {replay.status} {why}".rstrip())
    return "\n".join(lines)


def _calls_html(entry: CellEntry) -> str:
    rows = []
    for call in entry.calls:
        colour = _STATUS_COLOURS.get(call.status, "#333")
        devices = ", ".join(call.devices_in)
        rows.append(
            "<tr>"
            f"<td>{call.line}</td>"
            f"<td><code>{escape(call.name)}</code></td>"
            f'<td style="color:{colour};font-weight:600">{escape(call.status)}</td>'
            f"<td><code>{escape(call.suggestion or '')}</code></td>"
            f"<td>{escape(devices)} &rarr; {escape(call.device_out or '')}</td>"
            f"<td>{call.count}</td>"
            f"<td>{escape(call.message)}</td>"
            "</tr>"
        )
    if not rows:
        return "<p>No array calls recorded.</p>"
    head = "".join(
        f"<th>{h}</th>"
        for h in ("line", "call", "status", "standard spelling", "devices", "n", "why")
    )
    return (
        '<table class="porter-calls"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def cell_html(entry: CellEntry) -> str:
    """A readable HTML view of the cell's findings (every piece of user text escaped)."""
    parts = [
        '<div class="porter-cell">',
        f"<p><strong>{escape(verdict(entry))}</strong></p>",
        _calls_html(entry),
    ]
    if entry.device_findings:
        items = "".join(
            f"<li>line {f.line}: <code>{escape(f.name)}</code> <em>{escape(f.kind)}</em> "
            f"{escape(f.message)}</li>"
            for f in entry.device_findings
        )
        parts.append(f"<p>Device findings:</p><ul>{items}</ul>")
    if entry.replays:
        from porter_ext.report.tables import devices_frame, numerics_frame

        parts.append("<p>Numerics:</p>" + numerics_frame(entry).to_html(index=False, na_rep=""))
        parts.append("<p>Devices:</p>" + devices_frame(entry).to_html(index=False, na_rep=""))
        for replay in entry.replays:
            if replay.status != "ok":
                why = replay.error.message if replay.error else (replay.reason or "")
                line = f" (line {replay.error.line})" if replay.error and replay.error.line else ""
                parts.append(
                    f"<p>replay <code>{escape(replay.backend)}</code>: "
                    f"{escape(replay.status)}{line}: {escape(why)}</p>"
                )
    parts.append("</div>")
    return "".join(parts)


def cell_bundle(entry: CellEntry) -> dict[str, Any]:
    """The MIME bundle for one cell's result."""
    data = entry.to_dict()
    return {
        "text/plain": cell_text(entry),
        "text/html": cell_html(entry),
        MIME_TYPE: json.loads(json.dumps(data, allow_nan=False, default=str)),
    }
