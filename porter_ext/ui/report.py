"""A whole report as one notebook output: what ``%port report`` shows without ``-o``.

A full HTML report inside a notebook output is heavy (it is stored in the notebook, plots
and all) and its styles would leak into the page, so the default is the Markdown report,
which every front end renders (JupyterLab, nbconvert, GitHub). ``--format html`` puts the
self-contained report in a sandboxed ``<iframe srcdoc>``: its sorting script runs, but it
cannot reach the notebook around it. ``--format json`` is the report itself. Markdown
and JSON bundles also carry the report as ``application/vnd.porter.report+json``, which
porter's JupyterLab extension renders as sortable tables (it is preferred over Markdown).
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

from porter_ext.ui.mime import REPORT_MIME_TYPE

if TYPE_CHECKING:
    from porter_ext.model.report import Report

#: formats `report_bundle` accepts; None means the default, "md"
FORMATS: tuple[str, ...] = ("html", "md", "json")
IFRAME_HEIGHT = "36em"


def report_text(report: Report) -> str:
    """The one-line summary every bundle carries as ``text/plain`` (terminals, logs)."""
    return f"porter report: {report.summary.text}. Write it out with %port report -o report.html"


def report_iframe(html_document: str) -> str:
    """An HTML document embedded as one escaped attribute of a sandboxed iframe: no
    ``allow-same-origin``, so the report's script cannot touch the notebook's page."""
    return (
        f'<iframe srcdoc="{escape(html_document, quote=True)}" sandbox="allow-scripts" '
        f'title="porter report" style="width:100%;height:{IFRAME_HEIGHT};'
        'border:1px solid rgba(128,128,128,.4)"></iframe>'
    )


def report_bundle(report: Report, fmt: str | None = None) -> dict[str, Any]:
    """The MIME bundle of a report in `fmt` (html, md or json; None: md), validated first.

    Display it with ``IPython.display.display(bundle, raw=True)``.
    """
    from porter_ext.report.write import render

    fmt = fmt or "md"
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    text = render(report, fmt)  # type: ignore[arg-type]
    bundle: dict[str, Any] = {"text/plain": report_text(report)}
    if fmt == "json":
        bundle["application/json"] = json.loads(text)
        bundle[REPORT_MIME_TYPE] = bundle["application/json"]
    elif fmt == "md":
        bundle["text/markdown"] = text
        from porter_ext.report.codec import report_to_json

        bundle[REPORT_MIME_TYPE] = json.loads(report_to_json(report, indent=None))
    else:
        bundle["text/html"] = report_iframe(text)
    return bundle
