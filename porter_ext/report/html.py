"""The report as one self-contained HTML file.

Self-contained because reports are CI artifacts and e-mail attachments: the file loads
nothing (a Content-Security-Policy says so to the browser too), reads fine without
JavaScript, and escapes everything the person wrote, because cell sources, error
messages and even device strings are arbitrary text. Sizes are capped so that a notebook
of thousands of cells still gives a file a browser opens quickly (the cells: html_cells.py);
the JSON report keeps everything.
"""

from __future__ import annotations

import json
from typing import Any

from porter_ext.model.calls import STATUSES
from porter_ext.model.report import Report
from porter_ext.report.findings import group_findings
from porter_ext.report.html_cells import PlotBudget, cell_view, plan_row
from porter_ext.report.placement import calls_by_cell, calls_by_file
from porter_ext.report.templating import asset, environment

MAX_PLOTS = 16  #: figures per report: each costs ~0.1 s and 10-35 kB
MAX_GROUP_CELLS = 8  #: cells named per finding group


def _plan_view(report: Report) -> list[dict[str, Any]]:
    """The port plan's items, with links to the cells they name."""
    anchors = {cell.label: f"cell-{i}" for i, cell in reversed(list(enumerate(report.cells)))}
    items = []
    for item in report.plan:
        cells = [(label, anchors.get(label)) for label in item.cells[:MAX_GROUP_CELLS]]
        items.append(
            {
                **plan_row(item),
                "cells": cells,
                "more": max(0, len(item.cells) - MAX_GROUP_CELLS),
                "sites": len(item.sites),
            }
        )
    return items


def script_json(data: Any) -> str:
    """JSON safe inside a `<script>` element: `<`, `>` and `&` become `\\u003c`-style
    escapes, so neither `</script>` nor `<!--` can appear, and the JSON still parses;
    ASCII only, so no bidi control or invisible character reaches the page raw."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_html(report: Report, *, max_plots: int = MAX_PLOTS) -> str:
    """The report as one HTML document (a `str`), with no external resources."""
    from markupsafe import Markup

    summary = report.summary
    stats = [
        ("cells", summary.cells, False),
        ("array calls", summary.calls, False),
        ("outside the standard", summary.non_standard, summary.non_standard > 0),
        ("device findings", summary.device_findings, summary.device_findings > 0),
        ("replays ok", summary.replays_ok, False),
        ("replays failed", summary.replays_failed, summary.replays_failed > 0),
        ("numeric mismatches", summary.mismatches, summary.mismatches > 0),
    ]
    groups = []
    for group in group_findings(report):
        shown = ", ".join(group.cells[:MAX_GROUP_CELLS])
        more = len(group.cells) - MAX_GROUP_CELLS
        groups.append(
            {**vars(group), "cells_text": shown + (f" and {more} more" if more > 0 else "")}
        )
    meta = {
        "schema": report.schema,
        "porter_version": report.porter_version,
        "source": {"notebook": report.source.notebook},
        "summary": vars(summary),
    }
    budget = PlotBudget(max_plots)
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            r=report,
            css=Markup(asset("report.css") + asset("cell.css")),
            js=asset("report.js"),
            meta_json=Markup(script_json(meta)),
            stats=stats,
            plan=_plan_view(report),
            files=calls_by_file(report.cells),
            groups=groups,
            statuses=STATUSES,
            cells=[
                cell_view(f"cell-{i}", cell, budget, placed)
                for i, (cell, placed) in enumerate(
                    zip(report.cells, calls_by_cell(report.cells), strict=True)
                )
            ],
        )
    )
