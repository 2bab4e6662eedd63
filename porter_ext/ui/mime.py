"""The MIME bundle of one cell's result: what a ``%%port`` cell's output holds.

One output, three views of the same entry: ``text/plain`` (terminals, logs),
``text/html`` (nbconvert, GitHub, front ends without porter's extension: the report's
one cell template, `porter_ext.report.templating.cell_html`) and
``application/vnd.porter.cell+json`` (the cell entry of the report), which porter's
JupyterLab extension draws, live and after a reload alike, in JupyterLab and Notebook 7.
A whole report travels as ``application/vnd.porter.report+json`` (`REPORT_MIME_TYPE`,
see ui/report.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from porter_ext.report.templating import cell_html
from porter_ext.report.text import visible

if TYPE_CHECKING:
    from porter_ext.model.cells import CellEntry

__all__ = ["MIME_TYPE", "REPORT_MIME_TYPE", "cell_bundle", "cell_html", "cell_text", "verdict"]

MIME_TYPE = "application/vnd.porter.cell+json"
#: the whole report (its JSON, as CONTRACT.md describes it), rendered by porter's
#: JupyterLab extension; other front ends show the Markdown or JSON beside it
REPORT_MIME_TYPE = "application/vnd.porter.report+json"


def cell_text(entry: CellEntry) -> str:
    from porter_ext.model.plan import plan_line

    lines = [entry.headline.text]
    lines += [f"  plan: {plan_line(item)}" for item in entry.plan]
    if entry.rewrite is not None:
        rewrite = entry.rewrite
        on = f", {rewrite.verified_text}" if rewrite.verified_text else ""
        why = f": {rewrite.reason}" if rewrite.reason else ""
        lines.append(f"  rewrite: {rewrite.status}{on}{why}")
        lines += [f"    {line}" for line in rewrite.diff.splitlines()]
    # the cell's diagnostics rows, as every view lists them
    for row in entry.diagnostics:
        where = f"{row.place}: " if row.place else ""
        called = f" ({row.called_from_text})" if row.called_from_text else ""
        count = f" (x{row.count})" if row.count > 1 else ""
        lines.append(f"  {where}[{row.severity}] {row.message}{called}{count}")
    for replay in entry.replays:
        if replay.status == "skipped":
            lines.append(f"  replay {replay.backend}: skipped {replay.reason or ''}".rstrip())
    # every view shows bidi controls and invisible characters as their escapes
    return visible("\n".join(lines))


def verdict(entry: CellEntry) -> str:
    """One line saying how portable the cell is: the entry's headline, derived once in
    the model (`porter_ext.model.headline`) so that every view shows the same words."""
    return entry.headline.text


def cell_bundle(entry: CellEntry) -> dict[str, Any]:
    """The MIME bundle for one cell's result."""
    from porter_ext.report.codec import cell_to_dict

    data = cell_to_dict(entry)
    return {
        "text/plain": cell_text(entry),
        "text/html": cell_html(entry),
        MIME_TYPE: json.loads(json.dumps(data, allow_nan=False, default=str)),
    }
