"""The report as GitHub-flavoured Markdown, for pull-request comments and CI summaries.

A pull request wants the findings, not a transcript: the summary, the findings grouped
by call, then only the cells that have something to say, and within them only the calls
outside the standard. Every piece of person-written text is escaped so that a `|` cannot
break a table, a backtick cannot open code, and `<script>` stays text.
"""

from __future__ import annotations

import re

from porter_ext.model.cells import CellEntry
from porter_ext.model.report import Report
from porter_ext.report.findings import group_findings
from porter_ext.report.placement import PlacedCall, calls_by_cell, calls_by_file
from porter_ext.report.text import cell_notes, visible

MAX_CELL_TEXT = 300  #: characters of one table cell (an exception may print an array)
MAX_GROUP_CELLS = 8

_INLINE = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "|": "\\|",
        "`": "&#96;",
        "\\": "\\\\",
        "*": "\\*",
        "_": "\\_",
        "[": "\\[",
        "]": "\\]",
        "~": "\\~",
        "@": "&#64;",  # no accidental @mentions in a pull request
    }
)


def md_text(text: object, limit: int = MAX_CELL_TEXT) -> str:
    """Person-written text as one line of Markdown that renders literally, also inside a
    table cell: HTML and Markdown syntax escaped, newlines turned into `<br>`."""
    value = visible("" if text is None else str(text))
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    value = value.translate(_INLINE)
    return "<br>".join(part.strip("\r") for part in value.split("\n"))


def md_code(text: object) -> str:
    """Inline code is avoided for person text (escaping does not work inside it); this
    wraps already-escaped text in `<code>`, which GitHub renders the same."""
    return f"<code>{md_text(text)}</code>"


def fenced(source: str, language: str = "python") -> str:
    """A fenced code block whose fence is longer than any backtick run in `source`."""
    source = visible(source)
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{source.rstrip()}\n{fence}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A GFM table; cells must already be escaped."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _has_news(cell: CellEntry, calls: list[PlacedCall]) -> bool:
    """Whether a cell has anything a reviewer should look at (``calls``: those written
    in it, `placement.calls_by_cell`)."""
    # a row of code written elsewhere is shown there (the writing cell, the file)
    return (
        any(r.origin is None for r in cell.diagnostics)
        or bool(cell_notes(cell))
        or any(p.call.flagged for p in calls)
    )


def _cell_section(cell: CellEntry, calls: list[PlacedCall]) -> list[str]:
    title = md_text(cell.title)
    out = [f"### {title}", "", md_text(cell.headline.text), "", fenced(cell.source), ""]
    notes = cell_notes(cell)
    if notes:
        for _, text in notes:
            out += [f"> **Note:** {md_text(text)}", ""]
    if cell.error_text is not None:
        out += [f"**{md_text(cell.error_text)}**", ""]
    flagged = [p for p in calls if p.call.flagged]
    if flagged:
        rows = [
            [
                f"{p.line}:{p.col}",
                md_code(p.call.name) + (f" ({md_text(p.note)})" if p.note else ""),
                md_text(p.call.status),
                str(p.call.count),
                md_text(p.call.suggestion or ""),
            ]
            for p in flagged
        ]
        out += [table(["line", "call", "status", "count", "suggestion"], rows)]
        standard = len(calls) - len(flagged)
        out += [f"\n{standard} standard call site(s) not shown." if standard else "", ""]
    if cell.device_findings:
        rows = [
            [
                str(cell.line(f.line) or "—"),
                md_code(f.name),
                md_text(f.kind),
                md_code(f.backend or "—"),
                md_text(f.message),
            ]
            for f in cell.device_findings
        ]
        out += [
            "**Device findings**",
            "",
            table(["line", "call", "kind", "backend", "message"], rows),
            "",
        ]
    outputs = [(r.backend, o) for r in cell.replays for o in r.outputs]
    if outputs:
        rows = [
            [
                md_code(o.name),
                md_code(backend),
                _num(o.max_abs_err),
                _num(o.max_rel_err),
                "—" if o.mismatched is None else str(o.mismatched),
                {None: "—", True: "✅", False: "❌"}[o.within_tolerance],
                md_text(o.device or "—"),
                md_text(o.expected_device or "—"),
                {None: "—", True: "✅", False: "❌"}[o.device_ok],
            ]
            for backend, o in outputs
        ]
        header = [
            "output",
            "backend",
            "max abs",
            "max rel",
            "mismatched",
            "within tol",
            "device",
            "expected",
            "device ok",
        ]
        out += ["**Replays: numbers and devices**", "", table(header, rows), ""]
    troubled = [r for r in cell.replays if r.status != "ok"]
    if troubled:
        rows = []
        for r in troubled:
            if r.error is not None:
                detail = md_text(r.error.text_in(cell.first_line))
            else:
                detail = md_text(r.reason or "")
            rows.append([md_code(r.backend), md_text(r.status), detail])
        out += [
            "**Replays that did not run**",
            "",
            table(["backend", "status", "detail"], rows),
            "",
        ]
    return out


def _plan_section(report: Report) -> list[str]:
    """The port plan first: distinct fixes, what blocks the port first."""
    if not report.plan:
        return ["## Port plan", "", "Nothing to change.", ""]
    rows = []
    for number, item in enumerate(report.plan, start=1):
        cells = ", ".join(item.cells[:MAX_GROUP_CELLS])
        if len(item.cells) > MAX_GROUP_CELLS:
            cells += f" and {len(item.cells) - MAX_GROUP_CELLS} more"
        state = md_text(item.state_text)  # its reason may quote the person's text
        verdict = f"✅ {state}" if item.automatic else state
        rows.append(
            [
                str(number),
                md_text(item.kind_text),
                md_text(item.title),
                md_text(cells),
                verdict,
            ]
        )
    return ["## Port plan", "", table(["#", "kind", "fix", "cells", ""], rows), ""]


def _files_section(report: Report) -> list[str]:
    """The findings in the person's Python files, each site once with its callers."""
    files = calls_by_file(report.cells)
    if not files:
        return []
    out = ["## Your files", ""]
    for file, found in files.items():
        rows = [
            [
                str(f.line),
                md_code(f.call.name),
                md_text(f.call.status),
                md_code(f.call.suggestion) if f.call.suggestion else "",
                md_text(", ".join(f.callers)),
            ]
            for f in found
        ]
        out += [f"### {md_text(file)}", ""]
        out += [table(["line", "call", "status", "suggestion", "called from"], rows), ""]
    return out


def render_markdown(report: Report, *, max_cells: int | None = None) -> str:
    """The report as GitHub-flavoured Markdown text.

    `max_cells` limits the cells shown in detail (a pull-request comment holds some 65 000
    characters); the summary and the top findings always cover every cell.
    """
    s = report.summary
    name = f": {md_code(report.source.notebook)}" if report.source.notebook else ""
    out = [
        f"# porter report{name}",
        "",
        md_text(report.environment_text),
        "",
        *_plan_section(report),
        "## Summary",
        "",
        md_text(s.text),
        "",
        table(
            [
                "cells",
                "calls",
                "outside the standard",
                "device findings",
                "replays ok",
                "replays failed",
                "numeric mismatches",
            ],
            [
                [
                    str(v)
                    for v in (
                        s.cells,
                        s.calls,
                        s.non_standard,
                        s.device_findings,
                        s.replays_ok,
                        s.replays_failed,
                        s.mismatches,
                    )
                ]
            ],
        ),
        "",
    ]
    groups = group_findings(report)
    if groups:
        rows = []
        for g in groups:
            cells = ", ".join(g.cells[:MAX_GROUP_CELLS])
            if len(g.cells) > MAX_GROUP_CELLS:
                cells += f" and {len(g.cells) - MAX_GROUP_CELLS} more"
            rows.append(
                [
                    md_code(g.name),
                    md_text(g.status),
                    str(g.count),
                    md_text(cells),
                    md_text(g.suggestion or ""),
                ]
            )
        out += [
            "## Top findings",
            "",
            table(["call", "status", "count", "cells", "suggestion"], rows),
            "",
        ]
    if report.environment.backends:
        rows = [
            [
                md_code(b.spec),
                md_text(b.version or "—"),
                "yes" if b.available else "no",
                md_text(", ".join(b.devices)),
                md_text(b.reason or ""),
            ]
            for b in report.environment.backends
        ]
        out += [
            "## Environment",
            "",
            table(["backend", "version", "available", "devices", "reason"], rows),
            "",
        ]
    out += _files_section(report)
    written = {id(c): p for c, p in zip(report.cells, calls_by_cell(report.cells), strict=True)}
    newsworthy = [c for c in report.cells if _has_news(c, written[id(c)])]
    quiet = [c for c in report.cells if not _has_news(c, written[id(c)])]
    out += ["## Cells", ""]
    if not report.cells:
        out += ["No cells were recorded.", ""]
    shown = newsworthy if max_cells is None else newsworthy[: max(0, max_cells)]
    for cell in shown:
        out += _cell_section(cell, written[id(cell)])
    if len(shown) < len(newsworthy):
        rest = newsworthy[len(shown) :]
        out += [
            f"{len(rest)} more cell(s) with findings are in the full report: "
            + ", ".join(md_text(c.label) for c in rest[:50])
            + (" …" if len(rest) > 50 else "")
            + ".",
            "",
        ]
    if quiet:
        labels = ", ".join(md_text(c.label) for c in quiet)
        out += [f"Nothing to report in {len(quiet)} cell(s): {labels}.", ""]
    return "\n".join(out).rstrip() + "\n"
